/*
 * cmd_trace.c: the trace tools.
 *   trace stats FILE     what a trace contains (text, or --json)
 *   trace convert        any format to the native one, with filters and load scaling
 *                        (cmd_trace_convert.c)
 *   trace gen            a seeded synthetic trace, parametric or fitted to a real one
 *                        (cmd_trace_gen.c)
 * The work is in study/trace_tools.c.
 */
#include "cli/cli.h"

#include "cli/trace_cmds.h"

#include <stdio.h>
#include <string.h>

/* Options every trace tool takes: 1 = consumed, 0 = not one, -1 = error (printed). */
int cli_trace_src_option(trace_src *s, int argc, char **argv, int *i, const char *trace_opt_name)
{
    const char *v;
    int m;
    if (cli_flag(argv, *i, "--skip-bad-rows")) {
        s->skip_bad_rows = true;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, trace_opt_name, &v)) != 0) {
        if (m < 0)
            return -1;
        s->path = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--format", &v)) != 0) {
        if (m < 0)
            return -1;
        s->format = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--trace-opt", &v)) != 0)
        return m < 0 || !cli_trace_opt(s->opts, &s->n_opts, v) ? -1 : 1;
    if ((m = cli_opt(argc, argv, i, "--catalog", &v)) != 0) {
        if (m < 0)
            return -1;
        s->catalog = v;
        return 1;
    }
    return 0;
}

/* ---- trace stats ---------------------------------------------------------------- */

static int trace_stats_cmd(int argc, char **argv)
{
    trace_src src = {0};
    bool json = false;
    for (int i = 3; i < argc; i++) {
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace stats FILE [--format NAME] [--trace-opt K=V]...\n"
                   "       [--json] [--skip-bad-rows] [--catalog FILE]\n"
                   "Jobs, time span, arrivals by hour of day and per day, GPU-count and\n"
                   "duration distributions, GPU share mix, GPU time by tenant, fields present.\n"
                   "Trace formats: %s\n",
                   trace_format_list());
            return 0;
        }
        if (cli_flag(argv, i, "--json")) {
            json = true;
            continue;
        }
        int m = cli_trace_src_option(&src, argc, argv, &i, "--trace");
        if (m < 0)
            return 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("unknown option '%s' for 'clustersim trace stats'", argv[i]);
        if (src.path)
            return cli_usage_error("clustersim trace stats takes one FILE");
        src.path = argv[i];
    }
    if (!src.path)
        return cli_usage_error("clustersim trace stats needs a FILE");
    sim_diag d = {0};
    trace_tool t;
    trace_stats s;
    trace_stats_init(&s);
    int st = trace_tool_open(&t, &src, &d);
    if (st == SIM_OK)
        st = trace_tool_read_stats(&t, &s, &d);
    if (st == SIM_OK)
        trace_tool_print_stats(stdout, &s, &t, src.path, src.format, json);
    trace_stats_fini(&s);
    trace_tool_fini(&t);
    return st == SIM_OK ? 0 : cli_fail(st, &d);
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 3 || cli_flag(argv, 2, "--help") || cli_flag(argv, 2, "-h")) {
        printf("usage: clustersim trace stats|convert|gen ...   (clustersim trace CMD --help)\n");
        return argc < 3 ? 2 : 0;
    }
    if (!strcmp(argv[2], "gen"))
        return cli_trace_gen(argc, argv);
    if (!strcmp(argv[2], "stats"))
        return trace_stats_cmd(argc, argv);
    if (!strcmp(argv[2], "convert"))
        return cli_trace_convert(argc, argv);
    return cli_usage_error("unknown trace command '%s' (stats, convert, gen)", argv[2]);
}
