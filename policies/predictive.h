/*
 * predictive.h: the predictive policy of policies/predictive.c, its switch for tests and
 * benchmarks.
 */
#ifndef POLICIES_PREDICTIVE_H
#define POLICIES_PREDICTIVE_H

#include <stdbool.h>

/* The control step finds its node by a scan of every node in id order (false), or by
 * the block and quarter summaries, in order of the free share they bound (true, the
 * default), for every engine of the process: the two choose the same node, which the
 * tests compare. */
void predictive_search_enable(bool on);

#endif
