/*
 * cmd_model.c: `clustersim model VERB KIND [options]` — a small dispatcher on the verb
 * (show, eval, train, derive) and the kind (catalog, throughput, interference, ...).
 * The kind is the word after the verb or the value of --kind. Adding a model command is
 * one entry in model_cmds[]: a handler receives only the options after VERB and KIND
 * (argv[0..argc)), with --kind removed.
 */
#include "cli/cli.h"

#include "cli/model_cmds.h"

#include <stdio.h>
#include <string.h>

typedef struct model_cmd {
    const char *verb;
    const char *kind;
    int (*fn)(int argc, char **argv);
    const char *summary;
} model_cmd;

/* ---- dispatcher ---------------------------------------------------------------------- */

static const model_cmd model_cmds[] = {
    {"show", "throughput", cli_model_show_throughput,
     "steps/s of each job class per GPU type (measured or roofline estimate)"},
    {"eval", "throughput", cli_model_eval_throughput,
     "hold out each measured GPU type and predict it with the roofline fit"},
    {"show", "interference", cli_model_show_interference,
     "the contention matrix and the fitted resource profile of each class"},
    {"eval", "interference", cli_model_eval_interference,
     "fit on part of the measured pairs, report MAE and R2 on the rest"},
    {"derive", "catalog", cli_model_derive_catalog,
     "models/data/gpus.csv from the GPU spec table and the trace label map"},
    {"derive", "gavel", cli_model_derive_gavel,
     "gavel_steps.csv and gavel_pairs.csv from Gavel's measured throughputs"},
    {"derive", "pollux", cli_model_derive_pollux, "pollux_steps.csv from Pollux's T4 profiles"},
    {"gen", "samples", cmd_model_gen_samples,
     "synthetic labelled samples of the model zoo (training data of the predictors)"},
    {"train", "util", cmd_model_train_util, "the GPU-utilisation MLP (predictive policy)"},
    {"train", "mem", cmd_model_train_mem, "the GPU-memory MLP (predictive policy)"},
    {"train", "time", cmd_model_train_time, "the execution-time MLP (predictive policy)"},
    {"eval", "util", cmd_model_eval_util,
     "MAE, MSE and R2 of a utilisation model on held-out rows"},
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
