/*
 * predictive.h: the predictive policy of policies/predictive.c, its switch for tests and
 * benchmarks.
 */
#ifndef POLICIES_PREDICTIVE_H
#define POLICIES_PREDICTIVE_H

#include <stdbool.h>

#include <stdint.h>

/* The control step finds its node by a scan of every node in id order, and every waiting
 * job is tried and searched for at each pass (false), or by the block and quarter
 * summaries, in order of the free share they bound, a one-replica job that fitted nowhere
 * only where nodes were released since, and a pass without a release since the last one
 * tries only the jobs enqueued since (true, the default), for every engine of the
 * process: the two choose the same nodes, which the tests compare. */
void predictive_search_enable(bool on);

/* Searches skipped because no node released since a job fitted nowhere fits it, since
 * the process started (counted atomically); for tests. */
uint64_t predictive_nowhere_skips(void);

#endif
