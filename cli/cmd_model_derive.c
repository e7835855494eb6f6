/*
 * cmd_model_derive.c: `clustersim model derive catalog|gavel|pollux` — the shipped model
 * tables, derived from their sources (models/derive.h).
 */
#include "cli/cli.h"

#include "cli/model_cmds.h"
#include "base/alloc.h"
#include "models/derive.h"

#include <stdio.h>
#include <string.h>

int cli_model_derive_catalog(int argc, char **argv)
{
    const char *specs = NULL, *labels = NULL, *names = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive catalog --specs gpu_specs.csv "
                   "--labels trace_gpu_label_map.csv [--names gpu_names.csv] --out gpus.csv\n");
            return 0;
        }
        const cli_str_opt opts[] = {{"--specs", &specs},
                                    {"--labels", &labels},
                                    {"--names", &names},
                                    {"--out", &out},
                                    {NULL, NULL}};
        int m = cli_str_opts(argc, argv, &i, opts);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model derive catalog'",
                                   argv[i]);
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

int cli_model_derive_gavel(int argc, char **argv)
{
    const char *iso = NULL, *colo = NULL, *steps_out = NULL, *pairs_out = NULL, *catalog = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive gavel --isolated ISO.csv --colocated COLO.csv\n"
                   "       [--catalog gpus.csv] [--steps-out gavel_steps.csv] "
                   "[--pairs-out gavel_pairs.csv]\n");
            return 0;
        }
        const cli_str_opt opts[] = {{"--isolated", &iso},        {"--colocated", &colo},
                                    {"--steps-out", &steps_out}, {"--pairs-out", &pairs_out},
                                    {"--catalog", &catalog},     {NULL, NULL}};
        int m = cli_str_opts(argc, argv, &i, opts);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model derive gavel'",
                                   argv[i]);
    }
    if ((steps_out && !iso) || (pairs_out && !colo) || (!steps_out && !pairs_out))
        return cli_usage_error("clustersim model derive gavel needs --isolated with --steps-out "
                               "and/or --colocated with --pairs-out");
    model_catalog *cat;
    int st = cli_model_load_catalog(&cat, catalog);
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

int cli_model_derive_pollux(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *catalog = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_flag(argv, i, "--help")) {
            printf("usage: clustersim model derive pollux --profiles pollux_adaptdl/traces "
                   "[--catalog gpus.csv] --out pollux_steps.csv\n");
            return 0;
        }
        const cli_str_opt opts[] = {
            {"--profiles", &dir}, {"--out", &out}, {"--catalog", &catalog}, {NULL, NULL}};
        int m = cli_str_opts(argc, argv, &i, opts);
        if (m < 0)
            return 2;
        if (m == 0)
            return cli_usage_error("unknown option '%s' for 'clustersim model derive pollux'",
                                   argv[i]);
    }
    if (!dir || !out)
        return cli_usage_error("clustersim model derive pollux needs --profiles DIR and --out");
    model_catalog *cat;
    int st = cli_model_load_catalog(&cat, catalog);
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
