/*
 * antman.h: the AntMan baseline of policies/antman.c, its switch for tests and benchmarks.
 */
#ifndef POLICIES_ANTMAN_H
#define POLICIES_ANTMAN_H

#include <stdbool.h>

/* After a release, try every pending job by a walk of the pending list (false), or by
 * the lists per shape and kind merged in the same order, each shape dropped at its first
 * job that finds no GPUs (true, the default), for every engine of the process: the two
 * give the same schedule, which the tests compare. */
void antman_shapes_enable(bool on);

/* A replica's first fit: from the node where the gang's last replica's search stopped,
 * through a max tree of the nodes' free GPUs (true, the default), or by a scan of every
 * node from the first (false), for every engine of the process: the same nodes. */
void antman_fast_fit_enable(bool on);

#endif
