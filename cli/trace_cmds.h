/*
 * trace_cmds.h: what the `clustersim trace` commands share.
 */
#ifndef CLI_TRACE_CMDS_H
#define CLI_TRACE_CMDS_H

#include "study/trace_tools.h"

/* Options every trace tool takes (trace_opt_name names the input: --trace or --like):
 * 1 = consumed, 0 = not one, -1 = error (printed). */
int cli_trace_src_option(trace_src *s, int argc, char **argv, int *i, const char *trace_opt_name);
int cli_trace_convert(int argc, char **argv);
int cli_trace_gen(int argc, char **argv);

#endif
