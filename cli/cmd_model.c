/*
 * cmd_model.c: `clustersim model VERB KIND [options]` — a small dispatcher on the verb
 * (show, eval, train, derive) and the kind (catalog, throughput, interference, ...).
 * The kind is the word after the verb or the value of --kind. Adding a model command is
 * one entry in model_cmds[]: a handler receives only the options after VERB and KIND
 * (argv[0..argc)), with --kind removed.
 */
#include "cli/cli.h"

#include "models/catalog.h"
#include "models/derive.h"
#include "models/interference.h"
#include "models/throughput.h"
#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct model_cmd {
    const char *verb;
    const char *kind;
    int (*fn)(int argc, char **argv);
    const char *summary;
} model_cmd;

/* ---- derive ---------------------------------------------------------------------- */

static int load_catalog(model_catalog **cat, const char *path)
{
    sim_diag d = {0};
    int st = model_catalog_load(cat, path ? path : model_catalog_default_path(), &d);
    if (st != SIM_OK)
        cli_print_diag(&d);
    return st;
}

static int derive_catalog(int argc, char **argv)
{
    const char *specs = NULL, *labels = NULL, *names = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive catalog --specs gpu_specs.csv "
                   "--labels trace_gpu_label_map.csv [--names gpu_names.csv] --out gpus.csv\n");
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--specs", &v)) != 0) {
            if (m < 0)
                return 2;
            specs = v;
        } else if ((m = cli_opt(argc, argv, &i, "--labels", &v)) != 0) {
            if (m < 0)
                return 2;
            labels = v;
        } else if ((m = cli_opt(argc, argv, &i, "--names", &v)) != 0) {
            if (m < 0)
                return 2;
            names = v;
        } else if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0)
                return 2;
            out = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model derive catalog'",
                                   argv[i]);
        }
    }
    if (!specs || !labels || !out)
        return cli_usage_error("clustersim model derive catalog needs --specs, --labels and --out");
    char names_default[1100];
    if (!names) {
        snprintf(names_default, sizeof names_default, "%s/models/data/gpu_names.csv",
                 model_data_dir());
        names = names_default;
    }
    study_outfile o = {0};
    if (!study_out_open_path(&o, out))
        return cli_exit_code(SIM_EIO);
    sim_diag d = {0};
    int st = model_derive_catalog(specs, labels, names, o.f, &d);
    bool ok = study_out_close(&o, st == SIM_OK);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return ok ? 0 : cli_exit_code(SIM_EIO);
}

static int derive_gavel(int argc, char **argv)
{
    const char *iso = NULL, *colo = NULL, *steps_out = NULL, *pairs_out = NULL, *catalog = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive gavel --isolated ISO.csv --colocated COLO.csv\n"
                   "       [--catalog gpus.csv] [--steps-out gavel_steps.csv] "
                   "[--pairs-out gavel_pairs.csv]\n");
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--isolated", &v)) != 0) {
            if (m < 0)
                return 2;
            iso = v;
        } else if ((m = cli_opt(argc, argv, &i, "--colocated", &v)) != 0) {
            if (m < 0)
                return 2;
            colo = v;
        } else if ((m = cli_opt(argc, argv, &i, "--steps-out", &v)) != 0) {
            if (m < 0)
                return 2;
            steps_out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--pairs-out", &v)) != 0) {
            if (m < 0)
                return 2;
            pairs_out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--catalog", &v)) != 0) {
            if (m < 0)
                return 2;
            catalog = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model derive gavel'",
                                   argv[i]);
        }
    }
    if ((steps_out && !iso) || (pairs_out && !colo) || (!steps_out && !pairs_out))
        return cli_usage_error("clustersim model derive gavel needs --isolated with --steps-out "
                               "and/or --colocated with --pairs-out");
    model_catalog *cat;
    int st = load_catalog(&cat, catalog);
    if (st != SIM_OK)
        return cli_exit_code(st);
    sim_diag d = {0};
    study_outfile o = {0};
    if (steps_out) {
        if (!study_out_open_path(&o, steps_out)) {
            st = SIM_EIO;
            goto out;
        }
        st = model_derive_gavel_steps(iso, cat, o.f, &d);
        if (!study_out_close(&o, st == SIM_OK) && st == SIM_OK)
            st = SIM_EIO;
        if (st != SIM_OK)
            goto out;
    }
    if (pairs_out) {
        if (!study_out_open_path(&o, pairs_out)) {
            st = SIM_EIO;
            goto out;
        }
        st = model_derive_gavel_pairs(colo, cat, o.f, &d);
        if (!study_out_close(&o, st == SIM_OK) && st == SIM_OK)
            st = SIM_EIO;
    }
out:
    model_catalog_destroy(cat);
    if (st != SIM_OK && d.msg[0])
        cli_print_diag(&d);
    return st == SIM_OK ? 0 : cli_exit_code(st);
}

static int derive_pollux(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *catalog = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive pollux --profiles pollux_adaptdl/traces "
                   "[--catalog gpus.csv] --out pollux_steps.csv\n");
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--profiles", &v)) != 0) {
            if (m < 0)
                return 2;
            dir = v;
        } else if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0)
                return 2;
            out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--catalog", &v)) != 0) {
            if (m < 0)
                return 2;
            catalog = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model derive pollux'",
                                   argv[i]);
        }
    }
    if (!dir || !out)
        return cli_usage_error("clustersim model derive pollux needs --profiles DIR and --out");
    model_catalog *cat;
    int st = load_catalog(&cat, catalog);
    if (st != SIM_OK)
        return cli_exit_code(st);
    sim_diag d = {0};
    study_outfile o = {0};
    if (!study_out_open_path(&o, out)) {
        model_catalog_destroy(cat);
        return cli_exit_code(SIM_EIO);
    }
    st = model_derive_pollux_steps(dir, cat, o.f, &d);
    bool ok = study_out_close(&o, st == SIM_OK);
    model_catalog_destroy(cat);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return ok ? 0 : cli_exit_code(SIM_EIO);
}

/* ---- throughput -------------------------------------------------------------------- */

#define MAX_TABLES 16

/* Options shared by the throughput commands. */
typedef struct tp_opts {
    const char *catalog;
    const char *tables[MAX_TABLES];
    uint32_t n_tables;
    const char *types; /* comma-separated column types, or NULL */
} tp_opts;

/* Parse --catalog, --steps FILE (repeatable) and --types; 1 = consumed, 0 = not ours,
 * -1 = error (printed). */
static int tp_opt(int argc, char **argv, int *i, tp_opts *o)
{
    const char *v;
    int m;
    if ((m = cli_opt(argc, argv, i, "--catalog", &v)) != 0) {
        o->catalog = v;
        return m;
    }
    if ((m = cli_opt(argc, argv, i, "--steps", &v)) != 0) {
        if (m < 0)
            return -1;
        if (o->n_tables >= MAX_TABLES) {
            cli_usage_error("at most %d --steps tables", MAX_TABLES);
            return -1;
        }
        o->tables[o->n_tables++] = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--types", &v)) != 0) {
        o->types = v;
        return m;
    }
    return 0;
}

static int tp_load(const tp_opts *o, model_catalog **cat, model_throughput **tp)
{
    *tp = NULL;
    int st = load_catalog(cat, o->catalog);
    if (st != SIM_OK)
        return st;
    sim_diag d = {0};
    if (o->n_tables)
        st = model_throughput_create(tp, *cat, o->tables, o->n_tables, SIM_GPU_TYPE_NONE, &d);
    else
        st = model_throughput_create_default(tp, *cat, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        model_catalog_destroy(*cat);
        *cat = NULL;
    }
    return st;
}

/* Resolve a comma-separated list of type names; false with a printed error. */
static bool parse_types(const model_catalog *cat, const char *list, uint16_t *types, uint32_t *n)
{
    *n = 0;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        uint32_t id = sim_intern_find(model_catalog_names(cat), p, len);
        if (id == SIM_INTERN_NONE || id == 0) {
            char known[600];
            sim_intern_list(model_catalog_names(cat), ", ", known, sizeof known);
            cli_usage_error("--types: unknown GPU type '%.*s' (known: %s)", (int)len, p, known);
            return false;
        }
        if (*n < SIM_MAX_GPU_TYPES)
            types[(*n)++] = (uint16_t)id;
        p += len + (comma ? 1 : 0);
    }
    return *n > 0;
}

static const char tp_usage[] =
    "  --catalog FILE   GPU catalog (default: the shipped models/data/gpus.csv)\n"
    "  --steps FILE     steps table job_type,scale_factor,gpu_type,steps_per_sec (repeatable;\n"
    "                   default: models/data/gavel_steps.csv and pollux_steps.csv)\n";

static int show_throughput(int argc, char **argv)
{
    tp_opts o = {0};
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model show throughput [options]\n%s"
                   "  --types A,B,...   columns (default K80,P100,V100M16,T4,A100,H100)\n",
                   tp_usage);
            return 0;
        }
        int m = tp_opt(argc, argv, &i, &o);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model show throughput'",
                                   argv[i]);
    }
    model_catalog *cat;
    model_throughput *tp;
    int st = tp_load(&o, &cat, &tp);
    if (st != SIM_OK)
        return cli_exit_code(st);
    uint16_t types[SIM_MAX_GPU_TYPES];
    uint32_t nt = 0;
    if (o.types) {
        if (!parse_types(cat, o.types, types, &nt)) {
            model_throughput_destroy(tp);
            model_catalog_destroy(cat);
            return 2;
        }
    } else {
        static const char *const dflt[] = {"K80", "P100", "V100M16", "T4", "A100", "H100"};
        for (size_t k = 0; k < sizeof dflt / sizeof *dflt; k++) {
            uint32_t id = sim_intern_find(model_catalog_names(cat), dflt[k], strlen(dflt[k]));
            if (id != SIM_INTERN_NONE && id != 0)
                types[nt++] = (uint16_t)id;
        }
    }
    printf("steps/s per GPU; * = measured, others = roofline estimate "
           "(global arithmetic intensity %.3g FLOP/byte)\n",
           model_throughput_intensity(tp));
    printf("%-34s %9s", "class", "FLOP/B");
    for (uint32_t k = 0; k < nt; k++)
        printf(" %11s", model_catalog_type(cat, types[k])->name);
    printf("\n");
    for (uint32_t c = 0; c < model_throughput_class_count(tp); c++) {
        double a, b;
        model_throughput_class_fit(tp, c, &a, &b);
        char inten[32];
        if (b > 0)
            snprintf(inten, sizeof inten, "%.3g", 1000.0 * a / b);
        else
            snprintf(inten, sizeof inten, "inf");
        printf("%-34.34s %9s", model_throughput_class_name(tp, c), inten);
        for (uint32_t k = 0; k < nt; k++) {
            bool meas;
            double s = model_throughput_steps(tp, c, types[k], &meas);
            printf(" %10.4g%c", s, meas ? '*' : ' ');
        }
        printf("\n");
    }
    model_throughput_destroy(tp);
    model_catalog_destroy(cat);
    return 0;
}

static int eval_throughput(int argc, char **argv)
{
    tp_opts o = {0};
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model eval throughput [options]\n%s"
                   "  --types A,B,...   types to hold out (default: every measured type)\n"
                   "Each type is held out in turn: the model is refitted without its\n"
                   "measurements and predicts them.\n",
                   tp_usage);
            return 0;
        }
        int m = tp_opt(argc, argv, &i, &o);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model eval throughput'",
                                   argv[i]);
    }
    model_catalog *cat;
    model_throughput *tp;
    int st = tp_load(&o, &cat, &tp);
    if (st != SIM_OK)
        return cli_exit_code(st);
    char gavel[1100], pollux[1100];
    const char *def[2] = {gavel, pollux};
    const char *const *paths = o.tables;
    uint32_t n_paths = o.n_tables;
    if (!n_paths) {
        snprintf(gavel, sizeof gavel, "%s/models/data/gavel_steps.csv", model_data_dir());
        snprintf(pollux, sizeof pollux, "%s/models/data/pollux_steps.csv", model_data_dir());
        paths = def;
        n_paths = 2;
    }
    uint16_t types[SIM_MAX_GPU_TYPES];
    uint32_t nt = 0;
    if (o.types) {
        if (!parse_types(cat, o.types, types, &nt)) {
            st = SIM_EINVAL;
            goto out;
        }
    } else {
        for (uint16_t t = 1; t < model_catalog_count(cat); t++) {
            bool any = false;
            for (uint32_t c = 0; c < model_throughput_class_count(tp) && !any; c++)
                model_throughput_steps(tp, c, t, &any);
            if (any)
                types[nt++] = t;
        }
    }
    printf("%-10s %7s %9s %9s %13s %13s %12s\n", "held out", "classes", "MAPE", "max APE",
           "FP32-only", "bandwidth-only", "FLOP/B");
    for (uint32_t k = 0; k < nt; k++) {
        model_throughput_holdout h;
        sim_diag d = {0};
        if ((st = model_throughput_eval_holdout(cat, paths, n_paths, types[k], &h, &d)) != SIM_OK) {
            cli_print_diag(&d);
            goto out;
        }
        if (h.n == 0) {
            printf("%-10s %7u   (no class measured on it and on another type)\n",
                   model_catalog_type(cat, types[k])->name, 0u);
            continue;
        }
        printf("%-10s %7u %8.1f%% %8.1f%% %12.1f%% %12.1f%% %12.3g\n",
               model_catalog_type(cat, types[k])->name, h.n, 100 * h.mape, 100 * h.max_ape,
               100 * h.mape_compute_only, 100 * h.mape_bw_only, h.intensity);
    }
    st = SIM_OK;
out:
    model_throughput_destroy(tp);
    model_catalog_destroy(cat);
    return st == SIM_OK ? 0 : cli_exit_code(st);
}

/* ---- interference ------------------------------------------------------------------ */

typedef struct if_opts {
    tp_opts tp;
    const char *pairs;
    const char *contention; /* calibrated C instead of the fitted one */
    uint64_t seed;
    double test_frac;
} if_opts;

static const char if_usage[] =
    "  --pairs FILE     measured pairs gpu_type,job_type_a,job_type_b,speed_a,speed_b\n"
    "                   (default: models/data/gavel_pairs.csv)\n";

static int if_opt(int argc, char **argv, int *i, if_opts *o)
{
    const char *v;
    int m = tp_opt(argc, argv, i, &o->tp);
    if (m != 0)
        return m;
    if ((m = cli_opt(argc, argv, i, "--pairs", &v)) != 0) {
        o->pairs = v;
        return m;
    }
    return 0;
}

static int if_load(const if_opts *o, model_catalog **cat, model_throughput **tp,
                   model_interference **im)
{
    *im = NULL;
    int st = tp_load(&o->tp, cat, tp);
    if (st != SIM_OK)
        return st;
    sim_diag d = {0};
    if (o->pairs)
        st = model_interference_create(im, *cat, *tp, o->pairs, &d);
    else
        st = model_interference_create_default(im, *cat, *tp, &d);
    if (st == SIM_OK && o->contention) {
        model_contention C;
        if ((st = model_contention_load(&C, o->contention, &d)) == SIM_OK)
            model_interference_set_contention(*im, &C, false);
    }
    if (st != SIM_OK) {
        cli_print_diag(&d);
        model_interference_destroy(*im);
        model_throughput_destroy(*tp);
        model_catalog_destroy(*cat);
        *im = NULL;
        *tp = NULL;
        *cat = NULL;
    }
    return st;
}

static void print_contention(const model_contention *C)
{
    printf("contention matrix C[victim][aggressor]:\n%8s", "");
    for (int a = 0; a < MODEL_RES_COUNT; a++)
        printf(" %8s", model_resource_name((model_resource)a));
    printf("\n");
    for (int v = 0; v < MODEL_RES_COUNT; v++) {
        printf("%8s", model_resource_name((model_resource)v));
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            printf(" %8.4f", C->c[v][a]);
        printf("\n");
    }
}

static int show_interference(int argc, char **argv)
{
    if_opts o = {0};
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model show interference [options]\n%s%s"
                   "  --contention FILE  a calibrated contention matrix (clustersim calibrate)\n"
                   "  --types A,B,...    types of the profile columns (default K80,P100,V100M16)\n",
                   tp_usage, if_usage);
            return 0;
        }
        if ((m = if_opt(argc, argv, &i, &o)) != 0) {
            if (m < 0)
                return 2;
        } else if ((m = cli_opt(argc, argv, &i, "--contention", &v)) != 0) {
            if (m < 0)
                return 2;
            o.contention = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model show interference'",
                                   argv[i]);
        }
    }
    model_catalog *cat;
    model_throughput *tp;
    model_interference *im;
    int st = if_load(&o, &cat, &tp, &im);
    if (st != SIM_OK)
        return cli_exit_code(st);
    uint16_t types[SIM_MAX_GPU_TYPES];
    uint32_t nt = 0;
    if (!parse_types(cat, o.tp.types ? o.tp.types : "K80,P100,V100M16", types, &nt)) {
        st = SIM_EINVAL;
        goto out;
    }
    print_contention(model_interference_contention(im));
    printf("\nprofiles per GPU type: sensitivity s, pressure p (1 = the median job; '~' = not\n"
           "fitted on that type: the class's other types or the median) and compute-bound\n"
           "fraction w of the resource mix (sm = w, mem = 1 - w)\n%-34s",
           "class");
    for (uint32_t k = 0; k < nt; k++)
        printf(" %20s", model_catalog_type(cat, types[k])->name);
    printf("\n%-34s", "");
    for (uint32_t k = 0; k < nt; k++)
        printf(" %6s %6s %6s", "s", "p", "w");
    printf("\n");
    for (uint32_t c = 0; c < model_interference_class_count(im); c++) {
        printf("%-34.34s", model_interference_class_name(im, c));
        for (uint32_t k = 0; k < nt; k++) {
            model_profile p;
            model_interference_profile(im, c, types[k], &p);
            char mark = model_interference_fitted(im, c, types[k]) ? ' ' : '~';
            printf(" %5.2f%c %5.2f%c %6.3f", p.sens, mark, p.press, mark, p.u[MODEL_RES_SM]);
        }
        printf("\n");
    }
out:
    model_interference_destroy(im);
    model_throughput_destroy(tp);
    model_catalog_destroy(cat);
    return st == SIM_OK ? 0 : cli_exit_code(st);
}

static void print_stats(const char *label, const model_ifit_stats *s)
{
    printf("%-10s %6u   %6.3f %6.3f %7.3f   %6.3f %7.3f   %6.3f %7.3f\n", label, s->n, s->mae,
           s->rmse, s->r2, s->mae_none, s->r2_none, s->mae_slice, s->r2_slice);
}

static int eval_interference(int argc, char **argv)
{
    if_opts o = {.seed = 1, .test_frac = 0.3};
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model eval interference [options]\n%s%s"
                   "  --seed N         seed of the train/test split (default 1)\n"
                   "  --test-frac X    fraction of the pairs held out (default 0.3)\n"
                   "The contention model is fitted on the training pairs and predicts the\n"
                   "normalised speed of each job of the held-out pairs; it is compared with\n"
                   "'no slowdown' (speed 1) and 'fair time-slicing' (speed 1/2).\n",
                   tp_usage, if_usage);
            return 0;
        }
        if ((m = if_opt(argc, argv, &i, &o)) != 0) {
            if (m < 0)
                return 2;
        } else if ((m = cli_opt(argc, argv, &i, "--seed", &v)) != 0) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &o.seed))
                return 2;
        } else if ((m = cli_opt(argc, argv, &i, "--test-frac", &v)) != 0) {
            if (m < 0 || !cli_double("--test-frac", v, 0.01, 0.99, &o.test_frac))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model eval interference'",
                                   argv[i]);
        }
    }
    model_catalog *cat;
    model_throughput *tp;
    int st = tp_load(&o.tp, &cat, &tp);
    if (st != SIM_OK)
        return cli_exit_code(st);
    char dflt[1100];
    snprintf(dflt, sizeof dflt, "%s/models/data/gavel_pairs.csv", model_data_dir());
    model_ifit_eval *ev = sim_malloc(sizeof *ev);
    sim_diag d = {0};
    if (!ev) {
        st = SIM_ENOMEM;
        goto out;
    }
    if ((st = model_interference_eval(cat, tp, o.pairs ? o.pairs : dflt, o.seed, o.test_frac, ev,
                                      &d)) != SIM_OK) {
        cli_print_diag(&d);
        goto out;
    }
    printf("pairs: %u for training, %u held out (seed %llu); training MAE %.3f\n", ev->train_pairs,
           ev->test_pairs, (unsigned long long)o.seed, ev->train_mae);
    printf("%-10s %6s   %-22s   %-14s   %-14s\n", "", "", "contention model", "no slowdown",
           "time-slicing");
    printf("%-10s %6s   %6s %6s %7s   %6s %7s   %6s %7s\n", "GPU type", "obs", "MAE", "RMSE", "R2",
           "MAE", "R2", "MAE", "R2");
    for (uint32_t k = 0; k < ev->n_types; k++)
        print_stats(model_catalog_type(cat, ev->type[k])->name, &ev->per_type[k]);
    print_stats("all", &ev->all);
    printf("\n");
    print_contention(&ev->C);
out:
    sim_free(ev);
    model_throughput_destroy(tp);
    model_catalog_destroy(cat);
    return st == SIM_OK ? 0 : cli_exit_code(st);
}

/* ---- dispatcher ---------------------------------------------------------------------- */

static const model_cmd model_cmds[] = {
    {"show", "throughput", show_throughput,
     "steps/s of each job class per GPU type (measured or roofline estimate)"},
    {"eval", "throughput", eval_throughput,
     "hold out each measured GPU type and predict it with the roofline fit"},
    {"show", "interference", show_interference,
     "the contention matrix and the fitted resource profile of each class"},
    {"eval", "interference", eval_interference,
     "fit on part of the measured pairs, report MAE and R2 on the rest"},
    {"derive", "catalog", derive_catalog,
     "models/data/gpus.csv from the GPU spec table and the trace label map"},
    {"derive", "gavel", derive_gavel,
     "gavel_steps.csv and gavel_pairs.csv from Gavel's measured throughputs"},
    {"derive", "pollux", derive_pollux, "pollux_steps.csv from Pollux's T4 profiles"},
    {"gen", "samples", cmd_model_gen_samples,
     "synthetic labelled samples of the model zoo (training data of the predictors)"},
    {"train", "util", cmd_model_train_util, "the GPU-utilisation MLP (predictive policy)"},
    {"train", "mem", cmd_model_train_mem, "the GPU-memory MLP (predictive policy)"},
    {"train", "time", cmd_model_train_time, "the execution-time MLP (predictive policy)"},
    {"eval", "util", cmd_model_eval_util, "MAE, MSE and R2 of a utilisation model on held-out rows"},
    {"eval", "mem", cmd_model_eval_mem, "idem for a memory model"},
    {"eval", "time", cmd_model_eval_time, "idem for an execution-time model"},
    {"eval", "duration", cli_model_eval_duration,
     "the duration predictor's error in a chronological split, or a run's predictions"},
    {NULL, NULL, NULL, NULL},
};

static void model_usage(FILE *f)
{
    fputs("usage: clustersim model VERB KIND [options]   (or VERB --kind KIND)\n", f);
    for (const model_cmd *c = model_cmds; c->verb; c++)
        fprintf(f, "  %-7s %-13s %s\n", c->verb, c->kind, c->summary);
    fputs("clustersim model VERB KIND --help lists the options of one command.\n", f);
}

#define MODEL_MAX_ARGS 256

int cmd_model(int argc, char **argv)
{
    if (argc < 3 || cli_flag(argv, 2, "--help") || cli_flag(argv, 2, "-h")) {
        model_usage(argc < 3 ? stderr : stdout);
        return argc < 3 ? 2 : 0;
    }
    const char *verb = argv[2], *kind = NULL;
    char *rest[MODEL_MAX_ARGS];
    int n = 0;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (i == 3 && argv[i][0] != '-') {
            kind = argv[i];
            continue;
        }
        if ((m = cli_opt(argc, argv, &i, "--kind", &v)) != 0) {
            if (m < 0)
                return 2;
            if (kind && strcmp(kind, v) != 0)
                return cli_usage_error("two kinds given: '%s' and '%s'", kind, v);
            kind = v;
            continue;
        }
        if (n >= MODEL_MAX_ARGS)
            return cli_usage_error("too many arguments");
        rest[n++] = argv[i];
    }
    bool verb_known = false;
    for (const model_cmd *c = model_cmds; c->verb; c++) {
        if (strcmp(c->verb, verb) != 0)
            continue;
        verb_known = true;
        if (kind && strcmp(c->kind, kind) == 0)
            return c->fn(n, rest);
    }
    char kinds[512] = "";
    size_t o = 0;
    for (const model_cmd *c = model_cmds; c->verb; c++)
        if (strcmp(c->verb, verb) == 0 && o + 40 < sizeof kinds)
            o += (size_t)snprintf(kinds + o, sizeof kinds - o, "%s%s", o ? ", " : "", c->kind);
    if (!verb_known) {
        cli_usage_error("unknown model command '%s'", verb);
        model_usage(stderr);
        return 2;
    }
    if (!kind && n == 1 && (strcmp(rest[0], "--help") == 0 || strcmp(rest[0], "-h") == 0)) {
        printf("usage: clustersim model %s KIND [options]\n", verb);
        for (const model_cmd *c = model_cmds; c->verb; c++)
            if (strcmp(c->verb, verb) == 0)
                printf("  %-13s %s\n", c->kind, c->summary);
        printf("clustersim model %s KIND --help lists the options of one command.\n", verb);
        return 0;
    }
    if (!kind)
        return cli_usage_error("clustersim model %s needs a kind: %s", verb, kinds);
    return cli_usage_error("unknown kind '%s' for 'clustersim model %s' (known: %s)", kind, verb,
                           kinds);
}
