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

#include <stdio.h>
#include <string.h>

typedef struct model_cmd {
    const char *verb;
    const char *kind;
    int (*fn)(int argc, char **argv);
    const char *summary;
} model_cmd;

/* ---- derive ---------------------------------------------------------------------- */

/* Open `path` for writing under a temporary name (renamed by cli_out_close). */
static bool out_open_path(cli_outfile *o, const char *path)
{
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == path) {
        snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    return cli_out_open(o, dir, slash ? slash + 1 : path);
}

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
    cli_outfile o = {0};
    if (!out_open_path(&o, out))
        return 1;
    sim_diag d = {0};
    int st = model_derive_catalog(specs, labels, names, o.f, &d);
    if (!cli_out_close(&o, st == SIM_OK))
        return 1;
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return 0;
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
    cli_outfile o = {0};
    if (steps_out) {
        if (!out_open_path(&o, steps_out)) {
            st = SIM_EIO;
            goto out;
        }
        st = model_derive_gavel_steps(iso, cat, o.f, &d);
        if (!cli_out_close(&o, st == SIM_OK) && st == SIM_OK)
            st = SIM_EIO;
        if (st != SIM_OK)
            goto out;
    }
    if (pairs_out) {
        if (!out_open_path(&o, pairs_out)) {
            st = SIM_EIO;
            goto out;
        }
        st = model_derive_gavel_pairs(colo, cat, o.f, &d);
        if (!cli_out_close(&o, st == SIM_OK) && st == SIM_OK)
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
    cli_outfile o = {0};
    if (!out_open_path(&o, out)) {
        model_catalog_destroy(cat);
        return 1;
    }
    st = model_derive_pollux_steps(dir, cat, o.f, &d);
    bool ok = cli_out_close(&o, st == SIM_OK);
    model_catalog_destroy(cat);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return ok ? 0 : 1;
}

/* ---- dispatcher ---------------------------------------------------------------------- */

static const model_cmd model_cmds[] = {
    {"derive", "catalog", derive_catalog,
     "models/data/gpus.csv from the GPU spec table and the trace label map"},
    {"derive", "gavel", derive_gavel,
     "gavel_steps.csv and gavel_pairs.csv from Gavel's measured throughputs"},
    {"derive", "pollux", derive_pollux, "pollux_steps.csv from Pollux's T4 profiles"},
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
    if (!kind)
        return cli_usage_error("clustersim model %s needs a kind: %s", verb, kinds);
    return cli_usage_error("unknown kind '%s' for 'clustersim model %s' (known: %s)", kind, verb,
                           kinds);
}
