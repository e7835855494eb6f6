/*
 * cmd_trace_convert.c: `clustersim trace convert` — any format to the native one, with
 * filters and load scaling (study/trace_tools.h).
 */
#include "cli/cli.h"

#include "cli/trace_cmds.h"
#include "base/alloc.h"
#include "traces/cluster.h"

#include <stdio.h>
#include <string.h>

int cli_trace_convert(int argc, char **argv)
{
    trace_src src = {0};
    trace_filters f = {.max_gpus = UINT64_MAX};
    const char *out = NULL, *cluster = NULL, *cluster_type = NULL, *tenants_arg = NULL;
    double load_pct = 0;
    uint64_t seed = 1;
    bool seed_given = false;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace convert --trace FILE [--format NAME] [--trace-opt "
                   "K=V]...\n"
                   "       --out FILE[.gz] [--from T] [--to T] [--tenants A,B,...]\n"
                   "       [--min-gpus N] [--max-gpus N] [--first N]\n"
                   "       [--load PCT --cluster FILE|SPEC [--cluster-gpu-type T] [--seed N]]\n"
                   "       [--skip-bad-rows] [--catalog FILE]\n"
                   "Writes the native format (gzip when the name ends in .gz). Filters apply in\n"
                   "this order: window of submit times [from, to), tenants, GPU count range,\n"
                   "first N. --load PCT draws the kept jobs with replacement (seeded) until\n"
                   "their summed GPU request reaches PCT %% of the cluster's GPUs.\n"
                   "Trace formats: %s\n",
                   trace_format_list());
            return 0;
        }
        if ((m = cli_trace_src_option(&src, argc, argv, &i, "--trace")) != 0) {
            if (m < 0)
                return 2;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--from")) {
            if (m < 0 || !cli_seconds("--from", v, &f.from_s))
                return 2;
            f.has_from = true;
        } else if (OPT("--to")) {
            if (m < 0 || !cli_seconds("--to", v, &f.to_s))
                return 2;
            f.has_to = true;
        } else if (OPT("--tenants")) {
            if (m < 0)
                return 2;
            tenants_arg = v;
        } else if (OPT("--min-gpus")) {
            if (m < 0 || !cli_u64("--min-gpus", v, 0, 65536, &f.min_gpus))
                return 2;
        } else if (OPT("--max-gpus")) {
            if (m < 0 || !cli_u64("--max-gpus", v, 0, 65536, &f.max_gpus))
                return 2;
        } else if (OPT("--first")) {
            if (m < 0 || !cli_u64("--first", v, 1, UINT64_C(1) << 40, &f.first))
                return 2;
        } else if (OPT("--load")) {
            if (m < 0 || !cli_double("--load", v, 0.001, 100000, &load_pct))
                return 2;
        } else if (OPT("--cluster-gpu-type")) {
            if (m < 0)
                return 2;
            cluster_type = v;
        } else if (OPT("--cluster")) {
            if (m < 0)
                return 2;
            cluster = v;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &seed))
                return 2;
            seed_given = true;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace convert'", argv[i]);
        }
#undef OPT
    }
    if (!src.path || !out)
        return cli_usage_error("clustersim trace convert needs --trace FILE and --out FILE");
    if (f.min_gpus > f.max_gpus)
        return cli_usage_error("--min-gpus is larger than --max-gpus");
    if (f.has_from && f.has_to && f.to_s <= f.from_s)
        return cli_usage_error("--to must be after --from");
    if (load_pct > 0 && !cluster)
        return cli_usage_error("--load needs --cluster FILE|SPEC (its GPUs are the capacity)");
    /* These describe the load scaling alone: without it they would be silently ignored. */
    const char *load_only = cluster        ? "--cluster"
                            : cluster_type ? "--cluster-gpu-type"
                            : seed_given   ? "--seed"
                                           : NULL;
    if (load_pct <= 0 && load_only)
        return cli_usage_error("%s serves --load (the cluster it fills, its seeded draws); "
                               "give --load PCT",
                               load_only);
    sim_diag d = {0};
    int st = tenants_arg ? tenant_sel_parse(&f.tenants, tenants_arg, &d) : SIM_OK;
    if (st != SIM_OK) {
        tenant_sel_destroy(f.tenants);
        return cli_fail(st, &d);
    }
    trace_tool t;
    cluster_spec *cl = NULL;
    trace_writer *w = NULL;
    held_job *held = NULL;
    size_t n_held = 0, cap_held = 0;
    uint64_t read = 0, written = 0;
    st = trace_tool_open(&t, &src, &d);
    char cl_ignored[512] = "";
    if (st == SIM_OK && cluster)
        st = cluster_spec_load_ignoring(&cl, cluster, model_catalog_names(t.cat), cluster_type,
                                        cl_ignored, sizeof cl_ignored, &d);
    if (st == SIM_OK && *cl_ignored)
        fprintf(stderr,
                "clustersim: warning: %s: ignoring column(s) the cluster format does not "
                "use: %s\n",
                cluster, cl_ignored);
    /* Load scaling fills a share of the cluster's GPUs: none, and it would write nothing. */
    if (st == SIM_OK && load_pct > 0 && cluster_spec_gpus(cl) == 0)
        st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0,
                          "--load: the cluster '%s' has no GPU (the load is a share of its GPUs)",
                          cluster);
    if (st == SIM_OK)
        st = trace_writer_open(&w, out, t.tenants, t.models, model_catalog_names(t.cat), &d);
    /* A native trace's job groups carry over (a group column in, a group column out). */
    if (st == SIM_OK)
        trace_writer_set_groups(w, trace_reader_has_groups(t.reader));
    job_spec j;
    bool stopped = false; /* --first reached before the end of the trace */
    while (st == SIM_OK && (st = trace_reader_next(t.reader, &j, &d)) == 1) {
        st = SIM_OK;
        read++;
        if (f.tenants)
            tenant_sel_note(f.tenants, sim_intern_name(t.tenants, j.tenant));
        if (!trace_filters_keep(&f, &j, t.tenants))
            continue;
        if (f.first && (load_pct > 0 ? n_held : written) >= f.first) {
            stopped = true;
            break;
        }
        if (load_pct <= 0) {
            if ((st = trace_writer_put(w, &j)) != SIM_OK)
                sim_diag_set(&d, st, out, 0, 0, "cannot write");
            written++;
            continue;
        }
        if (n_held == cap_held) {
            size_t ncap = cap_held ? cap_held * 2 : 1024;
            held_job *nh = sim_reallocarray(held, ncap, sizeof *nh);
            if (!nh) {
                st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            held = nh;
            cap_held = ncap;
        }
        held[n_held].j = j;
        held[n_held].name = sim_strdup(j.name ? j.name : "");
        held[n_held].command = sim_strdup(j.command ? j.command : "");
        n_held++;
        if (!held[n_held - 1].name || !held[n_held - 1].command)
            st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (st == 0)
        st = SIM_OK;
    /* Only a listed tenant that never shows up is an error, so after --first read on
     * while one is still missing. */
    while (st == SIM_OK && stopped && f.tenants && f.tenants->missing &&
           (st = trace_reader_next(t.reader, &j, &d)) == 1) {
        st = SIM_OK;
        read++;
        tenant_sel_note(f.tenants, sim_intern_name(t.tenants, j.tenant));
    }
    if (st == 0)
        st = SIM_OK;
    if (st == SIM_OK && f.tenants && f.tenants->missing)
        st = tenant_sel_error(f.tenants, src.path, &d);
    if (st == SIM_OK && load_pct > 0) {
        if (n_held == 0)
            st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "--load: the filters keep no job");
        else
            st = trace_write_scaled(w, held, n_held, load_pct / 100 * (double)cluster_spec_gpus(cl),
                                    seed, &written, &d);
    }
    int cst = trace_writer_close(w, st == SIM_OK, &d);
    if (st == SIM_OK)
        st = cst;
    if (st == SIM_OK)
        fprintf(stderr, "clustersim: %s: read %llu jobs, wrote %llu to %s\n", src.path,
                (unsigned long long)read, (unsigned long long)written, out);
    held_jobs_free(held, n_held);
    cluster_spec_destroy(cl);
    tenant_sel_destroy(f.tenants);
    trace_tool_fini(&t);
    return st == SIM_OK ? 0 : cli_fail(st, &d);
}
