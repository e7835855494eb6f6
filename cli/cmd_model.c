/*
 * cmd_model.c: `clustersim model VERB KIND [options]` — a dispatcher on the verb and the
 * kind (the word after the verb, or the value of --kind). Adding a model command is one
 * entry in model_cmds[]; a handler receives only the options after VERB and KIND
 * (argv[0..argc)), with --kind removed.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

typedef struct model_cmd {
    const char *verb;
    const char *kind;
    int (*fn)(int argc, char **argv);
    const char *summary;
} model_cmd;

static const model_cmd model_cmds[] = {
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
    if (!kind)
        return cli_usage_error("clustersim model %s needs a kind: %s", verb, kinds);
    return cli_usage_error("unknown kind '%s' for 'clustersim model %s' (known: %s)", kind, verb,
                           kinds);
}
