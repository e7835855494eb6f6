/*
 * cmd_model_interference.c: `clustersim model show|eval interference` — the contention
 * matrix with each class's fitted resource profile, and the fit's error on held-out pairs.
 */
#include "cli/cli.h"

#include "cli/model_cmds.h"
#include "base/alloc.h"
#include "models/interference.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    int m = cli_tp_opt(argc, argv, i, &o->tp);
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
    int st = cli_tp_load(&o->tp, cat, tp);
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

int cli_model_show_interference(int argc, char **argv)
{
    if_opts o = {0};
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model show interference [options]\n%s%s"
                   "  --contention FILE  a calibrated contention matrix (clustersim calibrate)\n"
                   "  --types A,B,...    types of the profile columns (default K80,P100,V100M16)\n",
                   cli_tp_usage, if_usage);
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
    if (!cli_parse_types(cat, o.tp.types ? o.tp.types : "K80,P100,V100M16", types, &nt)) {
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

int cli_model_eval_interference(int argc, char **argv)
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
                   cli_tp_usage, if_usage);
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
    int st = cli_tp_load(&o.tp, &cat, &tp);
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
