/*
 * cmd_model_throughput.c: `clustersim model show|eval throughput` — steps/s per job class
 * and GPU type, and the roofline fit's error on held-out GPU types.
 */
#include "cli/cli.h"

#include "cli/model_cmds.h"
#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int cli_model_show_throughput(int argc, char **argv)
{
    tp_opts o = {0};
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model show throughput [options]\n%s"
                   "  --types A,B,...   columns (default K80,P100,V100M16,T4,A100,H100)\n",
                   cli_tp_usage);
            return 0;
        }
        int m = cli_tp_opt(argc, argv, &i, &o);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model show throughput'",
                                   argv[i]);
    }
    model_catalog *cat;
    model_throughput *tp;
    int st = cli_tp_load(&o, &cat, &tp);
    if (st != SIM_OK)
        return cli_exit_code(st);
    uint16_t types[SIM_MAX_GPU_TYPES];
    uint32_t nt = 0;
    if (o.types) {
        if (!cli_parse_types(cat, o.types, types, &nt)) {
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

int cli_model_eval_throughput(int argc, char **argv)
{
    tp_opts o = {0};
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model eval throughput [options]\n%s"
                   "  --types A,B,...   types to hold out (default: every measured type)\n"
                   "Each type is held out in turn: the model is refitted without its\n"
                   "measurements and predicts them.\n",
                   cli_tp_usage);
            return 0;
        }
        int m = cli_tp_opt(argc, argv, &i, &o);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model eval throughput'",
                                   argv[i]);
    }
    model_catalog *cat;
    model_throughput *tp;
    int st = cli_tp_load(&o, &cat, &tp);
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
        if (!cli_parse_types(cat, o.types, types, &nt)) {
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
