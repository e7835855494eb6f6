/*
 * cmd_calibrate.c: `clustersim calibrate --from bench.csv --out FILE [--mode M]` — fit
 * the interference model's contention matrix to an interference_bench CSV and write it
 * for `clustersim run --interference FILE`.
 */
#include "cli/cli.h"

#include "models/calibrate.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: clustersim calibrate --from BENCH.csv --out FILE [--mode MODE]\n"
    "  --from FILE   CSV written by interference_bench (bench/interference)\n"
    "  --out FILE    contention matrix victim,aggressor,coefficient, for\n"
    "                clustersim run --interference FILE\n"
    "  --mode MODE   sharing mode to fit when the CSV has several (streams, process,\n"
    "                mps, mig, threads)\n";

int cmd_calibrate(int argc, char **argv)
{
    const char *from = NULL, *out = NULL, *mode = NULL;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--from", &v)) != 0) {
            if (m < 0)
                return 2;
            from = v;
        } else if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0)
                return 2;
            out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--mode", &v)) != 0) {
            if (m < 0)
                return 2;
            mode = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim calibrate' "
                                   "(see clustersim calibrate --help)",
                                   argv[i]);
        }
    }
    if (!from || !out)
        return cli_usage_error("clustersim calibrate needs --from FILE and --out FILE");
    model_calib cal;
    sim_diag d = {0};
    int st = model_calibrate(from, mode, &cal, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    study_outfile o = {0};
    if (!study_out_open_path(&o, out))
        return cli_exit_code(SIM_EIO);
    st = model_contention_write(&cal.C, o.f, &d);
    bool ok = study_out_close(&o, st == SIM_OK);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    if (!ok)
        return cli_exit_code(SIM_EIO);
    printf("calibrated %s mode '%s'%s%s from %u rows (RMS residual of the slowdown %.4f)\n",
           cal.backend[0] ? cal.backend : "benchmark", cal.mode, cal.device[0] ? " on " : "",
           cal.device, cal.rows, cal.rmse);
    printf("contention C[victim][aggressor] (slowdown - 1 between two saturating kernels):\n%8s",
           "");
    for (int a = 0; a < MODEL_RES_COUNT; a++)
        printf(" %8s", model_resource_name((model_resource)a));
    printf("\n");
    for (int v = 0; v < MODEL_RES_COUNT; v++) {
        printf("%8s", model_resource_name((model_resource)v));
        for (int a = 0; a < MODEL_RES_COUNT; a++) {
            if (cal.measured[v][a])
                printf(" %8.4f", cal.C.c[v][a]);
            else
                printf(" %8s", "-");
        }
        printf("\n");
    }
    printf("('-' = not measured, written as 0); wrote %s\n", out);
    return 0;
}
