/*
 * cmd_trace_gen.c: `clustersim trace gen` — a seeded synthetic trace, parametric or
 * fitted to a real one (--like FILE).
 */
#include "cli/cli.h"

#include "cli/trace_cmds.h"
#include "base/alloc.h"
#include "models/zoo.h"
#include "traces/writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Options whose distribution --like takes from its FILE instead, with what it takes:
 * given with --like they would be silently ignored, so they are refused. --rate is not
 * here: it scales the FILE's hour-of-day rates. */
static const char *const like_fitted[][2] = {
    {"--diurnal", "arrivals follow the hour-of-day rates of the --like FILE (--rate scales them)"},
    {"--peak-hour",
     "arrivals follow the hour-of-day rates of the --like FILE (--rate scales them)"},
    {"--duration-median", "durations are drawn from those of the --like FILE"},
    {"--duration-sigma", "durations are drawn from those of the --like FILE"},
    {"--duration-pareto", "durations are drawn from those of the --like FILE"},
    {"--tenants", "tenants are those of the --like FILE, with their shares of the jobs"},
    {"--frac-share", "GPU counts and shares are drawn from the mix of the --like FILE"},
    {"--frac-multi", "GPU counts and shares are drawn from the mix of the --like FILE"},
    {"--frac-cpu", "GPU counts and shares are drawn from the mix of the --like FILE"},
};

/* Index in like_fitted of the option arg ("--name" or "--name=value"); -1 when absent. */
static int like_fitted_find(const char *arg)
{
    size_t n = strcspn(arg, "=");
    for (size_t k = 0; k < sizeof like_fitted / sizeof like_fitted[0]; k++)
        if (strlen(like_fitted[k][0]) == n && strncmp(arg, like_fitted[k][0], n) == 0)
            return (int)k;
    return -1;
}

int cli_trace_gen(int argc, char **argv)
{
    trace_gen_config c;
    trace_gen_config_default(&c);
    trace_src like = {0};
    const char *out = NULL, *zoo_ref = "V100M16";
    bool jobs_given = false, zoo_on = false, constrained_given = false, zoo_opt = false;
    bool diurnal_given = false, peak_given = false, sigma_given = false, gang_max_given = false;
    int fitted = -1; /* an option --like replaces, when given */
    double zoo_slo = 2;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (fitted < 0)
            fitted = like_fitted_find(argv[i]);
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(
                "usage: clustersim trace gen --out FILE [--jobs N] [--seed N] [--rate JOBS_PER_H]\n"
                "       [--diurnal A] [--peak-hour H] [--duration-median T]\n"
                "       [--duration-sigma X] [--duration-pareto ALPHA] [--tenants N]\n"
                "       [--frac-share X] [--frac-multi X] [--frac-cpu X] [--frac-ls X]\n"
                "       [--over-request X] [--gpu-types A|B] [--frac-constrained X]\n"
                "       [--like FILE [--format NAME] [--trace-opt K=V]... [--skip-bad-rows]]\n"
                "       [--catalog FILE]\n"
                "       [--zoo [--zoo-ref TYPE] [--zoo-slo X]] [--groups N]\n"
                "       [--frac-gang X [--gang-max N]]\n"
                "--like FILE takes arrivals by hour of day, durations, the GPU mix and the\n"
                "tenants from FILE (--rate then scales its rates to that daily mean); the\n"
                "options that would set those are refused with it.\n"
                "--zoo gives each GPU job a model class of the zoo with its graph and\n"
                "execution features, iterations and true demand (synthetic), and LS jobs\n"
                "an slo_s of X (default 2) times their duration on TYPE (default V100M16).\n"
                "--groups N makes co-trained job groups of 2..N jobs (one arrival each,\n"
                "a `group` column, one whole GPU and 1..5 epochs per job).\n"
                "--frac-gang X makes that fraction of the GPU jobs gangs of 2, 4, ..., N\n"
                "replicas (--gang-max, default 64), each replica asking what the job drew.\n");
            return 0;
        }
        if (cli_flag(argv, i, "--zoo")) {
            zoo_on = true;
            continue;
        }
        if ((m = cli_trace_src_option(&like, argc, argv, &i, "--like")) != 0) {
            if (m < 0)
                return 2;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, UINT64_C(1) << 40, &c.jobs))
                return 2;
            jobs_given = true;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &c.seed))
                return 2;
        } else if (OPT("--rate")) {
            if (m < 0 || !cli_double("--rate", v, 1e-6, 1e12, &c.arrival_rate_h))
                return 2;
            c.like_rate_h = c.arrival_rate_h; /* with --like: scales its rates */
        } else if (OPT("--diurnal")) {
            if (m < 0 || !cli_double("--diurnal", v, 0, 1, &c.diurnal_amplitude))
                return 2;
            diurnal_given = true;
        } else if (OPT("--peak-hour")) {
            if (m < 0 || !cli_double("--peak-hour", v, 0, 24, &c.diurnal_peak_h))
                return 2;
            peak_given = true;
        } else if (OPT("--duration-median")) {
            if (m < 0 || !cli_seconds("--duration-median", v, &c.duration_median_s))
                return 2;
        } else if (OPT("--duration-sigma")) {
            if (m < 0 || !cli_double("--duration-sigma", v, 0, 10, &c.duration_sigma))
                return 2;
            sigma_given = true;
        } else if (OPT("--duration-pareto")) {
            if (m < 0 || !cli_double("--duration-pareto", v, 0.1, 100, &c.duration_pareto))
                return 2;
        } else if (OPT("--tenants")) {
            uint64_t tn;
            if (m < 0 || !cli_u64("--tenants", v, 1, 100000, &tn))
                return 2;
            c.tenants = (uint32_t)tn;
        } else if (OPT("--groups")) {
            uint64_t gm;
            if (m < 0 || !cli_u64("--groups", v, 2, 64, &gm))
                return 2;
            c.group_max = (uint32_t)gm;
        } else if (OPT("--frac-gang")) {
            if (m < 0 || !cli_double("--frac-gang", v, 0, 1, &c.frac_gang))
                return 2;
        } else if (OPT("--gang-max")) {
            uint64_t gm;
            if (m < 0 || !cli_u64("--gang-max", v, 2, 1024, &gm))
                return 2;
            if (gm & (gm - 1))
                return cli_usage_error("--gang-max: expected a power of two from 2 to 1024, got %s",
                                       v);
            c.gang_max = (uint32_t)gm;
            gang_max_given = true;
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
        } else if (OPT("--frac-constrained")) {
            if (m < 0 || !cli_double("--frac-constrained", v, 0, 1, &c.frac_constrained))
                return 2;
            constrained_given = true;
        } else if (OPT("--zoo-ref")) {
            if (m < 0)
                return 2;
            zoo_ref = v;
            zoo_opt = true;
        } else if (OPT("--zoo-slo")) {
            /* At most 1e5 x a duration of at most 1e10 s: slo_s within the readers' 1e15. */
            if (m < 0 || !cli_double("--zoo-slo", v, 0, 1e5, &zoo_slo))
                return 2;
            zoo_opt = true;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace gen'", argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim trace gen needs --out FILE");
    if (c.frac_cpu_only + c.frac_multi + c.frac_share > 1)
        return cli_usage_error("--frac-cpu + --frac-multi + --frac-share must not exceed 1");
    /* Each of the pair means nothing without the other: constrained to which types, or
     * how many jobs are. */
    if (c.frac_constrained > 0 && !c.gpu_types)
        return cli_usage_error("--frac-constrained needs --gpu-types A|B|... (the types a "
                               "constrained job is restricted to)");
    if (c.gpu_types && !constrained_given)
        return cli_usage_error("--gpu-types needs --frac-constrained X (the fraction of GPU "
                               "jobs restricted to one of the types)");
    if (!like.path && (like.format || like.n_opts || like.skip_bad_rows))
        return cli_usage_error("--format, --trace-opt and --skip-bad-rows describe the --like "
                               "FILE; give --like");
    if (like.path && fitted >= 0)
        return cli_usage_error("%s cannot be combined with --like: %s", like_fitted[fitted][0],
                               like_fitted[fitted][1]);
    /* An option whose distribution is not drawn from would be silently ignored. */
    if (peak_given && !diurnal_given)
        return cli_usage_error("--peak-hour needs --diurnal A (the amplitude of the daily cycle "
                               "it places; without it arrivals are uniform over the day)");
    if (sigma_given && c.duration_pareto > 0)
        return cli_usage_error("--duration-sigma is the spread of lognormal durations, and "
                               "--duration-pareto draws them from a Pareto law instead: give one");
    if (zoo_opt && !zoo_on)
        return cli_usage_error("--zoo-ref and --zoo-slo describe the annotation of --zoo; "
                               "give --zoo");
    if (gang_max_given && !(c.frac_gang > 0))
        return cli_usage_error("--gang-max sizes the gangs of --frac-gang X; give X > 0");
    sim_diag d = {0};
    trace_tool t;
    trace_stats s;
    trace_stats_init(&s);
    trace_gen *g = NULL;
    trace_writer *w = NULL;
    sim_intern *tenants = NULL;
    model_zoo *zoo = NULL;
    model_zoo_annotator ann;
    int st = trace_tool_open(&t, &like, &d);
    if (st == SIM_OK && zoo_on) {
        uint32_t rt = sim_intern_find(model_catalog_names(t.cat), zoo_ref, strlen(zoo_ref));
        if (rt == SIM_INTERN_NONE || rt == 0)
            st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "--zoo-ref: unknown GPU type '%s'",
                              zoo_ref);
        else if ((st = model_zoo_create(&zoo, t.cat, &d)) == SIM_OK) {
            ann = (model_zoo_annotator){.zoo = zoo,
                                        .models = t.models,
                                        .ref_type = (uint16_t)rt,
                                        .draw_over = true,
                                        .over_request = c.over_request,
                                        .slo_factor = zoo_slo};
            c.annotate = model_zoo_annotate;
            c.annotate_ctx = &ann;
        }
    }
    if (st == SIM_OK && like.path) {
        st = trace_tool_read_stats(&t, &s, &d);
        c.like = &s;
        c.like_tenants = t.tenants;
        if (!jobs_given)
            c.jobs = s.jobs;
    }
    /* The generated names go to a table of their own, so --like's names stay intact. */
    if (st == SIM_OK && !(tenants = sim_intern_create(false)))
        st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (st == SIM_OK)
        st = trace_gen_create(&g, &c, tenants, t.models, model_catalog_names(t.cat), &d);
    if (st == SIM_OK)
        st = trace_writer_open(&w, out, tenants, t.models, model_catalog_names(t.cat), &d);
    /* Without the zoo, the generator gives a job no attribute but its batch size. */
    if (st == SIM_OK && !zoo_on)
        trace_writer_limit_attrs(w, (UINT64_C(1) << SIM_ATTR_BATCH_SIZE) |
                                        (c.group_max ? UINT64_C(1) << SIM_ATTR_EPOCHS : 0));
    if (st == SIM_OK)
        trace_writer_set_groups(w, c.group_max >= 2);
    job_spec j;
    int more = 1;
    while (st == SIM_OK && (more = trace_gen_next(g, &j, &d)) == 1)
        if ((st = trace_writer_put(w, &j)) != SIM_OK)
            sim_diag_set(&d, st, out, 0, 0, "cannot write");
    if (more < 0)
        st = more;
    if (w) {
        int cst = trace_writer_close(w, st == SIM_OK, &d);
        if (st == SIM_OK)
            st = cst;
    }
    trace_gen_destroy(g);
    model_zoo_destroy(zoo);
    sim_intern_destroy(tenants);
    trace_stats_fini(&s);
    trace_tool_fini(&t);
    return st == SIM_OK ? 0 : cli_fail(st, &d);
}
