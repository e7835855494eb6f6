/*
 * failures.h: node failure lists (--failures): a CSV with the header node,down_s,up_s
 * (columns in any order, gzip allowed), one outage per row, naming a node of the
 * cluster. Outages may overlap; the engine merges them.
 */
#ifndef TRACES_FAILURES_H
#define TRACES_FAILURES_H

#include "sim/types.h"

/* Called once per row, in file order: node index into cl->nodes, times in us. A non-zero
 * return stops the read and is returned (with d filled by the callee). */
typedef int (*trace_failure_fn)(void *ctx, uint32_t node, sim_time down_us, sim_time up_us,
                                sim_diag *d);

/*
 * Read the failure list at `path` for cluster `cl`, calling add() per outage. Errors:
 * SIM_EIO, SIM_ENOMEM, SIM_EPARSE (file:line:column: an empty file, a missing column,
 * a node the cluster lacks, a time that is not a number of seconds in [0, SIM_TIME_LIMIT_S], an
 * up_s not after down_s), or what add() returned.
 */
int trace_failures_load(const char *path, const cluster_spec *cl, trace_failure_fn add, void *ctx,
                        sim_diag *d);

#endif
