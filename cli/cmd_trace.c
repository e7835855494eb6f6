/*
 * cmd_trace.c: `clustersim trace gen` — write a synthetic trace in the native format.
 */
#include "cli/cli.h"

#include "models/catalog.h"
#include "models/zoo.h"
#include "sim/intern.h"
#include "traces/writer.h"

#include <stdio.h>
#include <string.h>

static int trace_gen_cmd(int argc, char **argv)
{
    trace_gen_config c;
    trace_gen_config_default(&c);
    const char *out = NULL, *catalog = NULL, *zoo_ref = "V100M16";
    bool zoo_on = false;
    double zoo_slo = 2;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--zoo")) {
            zoo_on = true;
            continue;
        }
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace gen --out FILE [--jobs N] [--seed N] [--rate JOBS_PER_H]\n"
                   "       [--duration-median T] [--duration-sigma X] [--tenants N]\n"
                   "       [--frac-share X] [--frac-multi X] [--frac-cpu X] [--frac-ls X]\n"
                   "       [--over-request X] [--gpu-types A|B] [--frac-constrained X]\n"
                   "       [--zoo [--zoo-ref TYPE] [--zoo-slo X]]\n"
                   "--zoo gives each GPU job a model class of the zoo with its graph and\n"
                   "execution features, iterations and true demand (synthetic), and LS jobs\n"
                   "an slo_s of X (default 2) times their duration on TYPE (default V100M16).\n");
            return 0;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            catalog = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, UINT64_C(1) << 40, &c.jobs))
                return 2;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &c.seed))
                return 2;
        } else if (OPT("--rate")) {
            if (m < 0 || !cli_double("--rate", v, 1e-6, 1e12, &c.arrival_rate_h))
                return 2;
        } else if (OPT("--duration-median")) {
            if (m < 0 || !cli_seconds("--duration-median", v, &c.duration_median_s))
                return 2;
        } else if (OPT("--duration-sigma")) {
            if (m < 0 || !cli_double("--duration-sigma", v, 0, 10, &c.duration_sigma))
                return 2;
        } else if (OPT("--tenants")) {
            uint64_t t;
            if (m < 0 || !cli_u64("--tenants", v, 1, 100000, &t))
                return 2;
            c.tenants = (uint32_t)t;
        } else if (OPT("--frac-share")) {
            if (m < 0 || !cli_double("--frac-share", v, 0, 1, &c.frac_share))
                return 2;
        } else if (OPT("--frac-multi")) {
            if (m < 0 || !cli_double("--frac-multi", v, 0, 1, &c.frac_multi))
                return 2;
        } else if (OPT("--frac-cpu")) {
            if (m < 0 || !cli_double("--frac-cpu", v, 0, 1, &c.frac_cpu_only))
                return 2;
        } else if (OPT("--frac-ls")) {
            if (m < 0 || !cli_double("--frac-ls", v, 0, 1, &c.frac_ls))
                return 2;
        } else if (OPT("--over-request")) {
            if (m < 0 || !cli_double("--over-request", v, 1, 100, &c.over_request))
                return 2;
        } else if (OPT("--gpu-types")) {
            if (m < 0)
                return 2;
            c.gpu_types = v;
        } else if (OPT("--zoo-ref")) {
            if (m < 0)
                return 2;
            zoo_ref = v;
        } else if (OPT("--zoo-slo")) {
            if (m < 0 || !cli_double("--zoo-slo", v, 0, 1e6, &zoo_slo))
                return 2;
        } else if (OPT("--frac-constrained")) {
            if (m < 0 || !cli_double("--frac-constrained", v, 0, 1, &c.frac_constrained))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace gen'", argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim trace gen needs --out FILE");
    if (c.frac_cpu_only + c.frac_multi + c.frac_share > 1)
        return cli_usage_error("--frac-cpu + --frac-multi + --frac-share must not exceed 1");
    sim_diag d = {0};
    model_catalog *cat = NULL;
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    trace_gen *g = NULL;
    trace_writer *w = NULL;
    model_zoo *zoo = NULL;
    model_zoo_annotator ann;
    int st = SIM_ENOMEM;
    if (!tenants || !models)
        goto out;
    if ((st = model_catalog_load(&cat, catalog ? catalog : model_catalog_default_path(), &d)))
        goto out;
    if (zoo_on) {
        uint32_t rt = sim_intern_find(model_catalog_names(cat), zoo_ref, strlen(zoo_ref));
        if (rt == SIM_INTERN_NONE || rt == 0) {
            st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "--zoo-ref: unknown GPU type '%s'",
                              zoo_ref);
            goto out;
        }
        if ((st = model_zoo_create(&zoo, cat, &d)))
            goto out;
        ann = (model_zoo_annotator){.zoo = zoo,
                                    .models = models,
                                    .ref_type = (uint16_t)rt,
                                    .draw_over = true,
                                    .over_request = c.over_request,
                                    .slo_factor = zoo_slo};
        c.annotate = model_zoo_annotate;
        c.annotate_ctx = &ann;
    }
    if ((st = trace_gen_create(&g, &c, tenants, models, model_catalog_names(cat), &d)) ||
        (st = trace_writer_open(&w, out, tenants, models, model_catalog_names(cat), &d)))
        goto out;
    job_spec j;
    while (trace_gen_next(g, &j) == 1)
        if ((st = trace_writer_put(w, &j)) != SIM_OK)
            break;
    st = trace_writer_close(w, st == SIM_OK, &d);
    w = NULL;
out:
    if (w)
        trace_writer_close(w, false, &d);
    trace_gen_destroy(g);
    model_zoo_destroy(zoo);
    model_catalog_destroy(cat);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    if (st != SIM_OK) {
        if (st == SIM_ENOMEM && !d.msg[0])
            sim_diag_set(&d, st, NULL, 0, 0, "out of memory");
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return 0;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 3 || cli_flag(argv, 2, "--help")) {
        printf("usage: clustersim trace gen ...   (clustersim trace gen --help)\n");
        return argc < 3 ? 2 : 0;
    }
    if (!strcmp(argv[2], "gen"))
        return trace_gen_cmd(argc, argv);
    return cli_usage_error("unknown trace command '%s' (gen)", argv[2]);
}
