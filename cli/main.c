/*
 * main.c: clustersim's entry point — dispatches to the subcommands. GSL's default
 * error handler aborts, so it is switched off here and every GSL status is checked.
 */
#include "cli/cli.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"run", cmd_run, "replay a trace against a policy"},
    {"demo", cmd_demo, "generate a trace and a cluster, compare two policies"},
    {"policies", cmd_policies, "list the policies and their options"},
    {"trace", cmd_trace, "trace tools: stats, convert, gen"},
    {"compare", cmd_compare, "compare policies on one trace: runs, report and figures"},
    {"plot", cmd_plot, "draw the figures of one run"},
    {"pack", cmd_pack, "fragmentation study: pack a resampled trace, no departures"},
    {"sweep", cmd_sweep, "a grid of runs or packs: N processes or MPI, resumable, one report"},
    {"calibrate", cmd_calibrate, "fit the interference model to a microbenchmark CSV"},
    {"model", cmd_model, "models and predictors: show, eval, derive, gen, train (clustersim model --help)"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "clustersim %s — GPU-cluster scheduling simulator\n"
               "usage: clustersim COMMAND [options]   (clustersim COMMAND --help)\n",
            CLI_VERSION);
    for (const command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("clustersim %s\n", CLI_VERSION);
        return 0;
    }
    /* Every command's temporary outputs go away with it when it is interrupted. */
    cli_cleanup_on_signals();
    for (const command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->fn(argc, argv);
    fprintf(stderr, "clustersim: error: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
