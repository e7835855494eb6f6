/*
 * elastic.h: the elastic-trainer policies of policies/elastic.c (elastic, optimus, static,
 * rigid-min), their switch for tests and benchmarks.
 */
#ifndef POLICIES_ELASTIC_H
#define POLICIES_ELASTIC_H

#include <stdbool.h>

/* Start pending jobs by a walk of the pending list (false), or, when the run has no
 * services and no job with replica bounds, by binpack's backfilling pass
 * (place_pass_run: the lists per shape merged in the same order, each shape dropped at
 * its first job that does not fit; true, the default), for every engine of the process:
 * the two give the same schedule, which the tests compare. */
void elastic_shapes_enable(bool on);

/* optimus: give the pending jobs their min trainers from lists kept per (min, GPUs per
 * trainer) in pending-list order, left once the GPUs are gone (true, the default), or by
 * a walk of the whole pending list per bucket of mins (false): the same schedule. */
void optimus_lists_enable(bool on);

/* optimus: while every running job is an offline one without replica bounds, count the
 * running jobs of a bucket of mins by their GPUs' sum where it fits (true, the default),
 * or walk them every round (false): the same schedule. */
void optimus_sums_enable(bool on);

#endif
