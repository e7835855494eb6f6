/*
 * prefetch.h: a job source that reads ahead on a thread of its own. Parsing a trace and
 * simulating it are independent work, so on a machine with two cores the reader runs
 * beside the engine: a producer thread pulls jobs from the inner source into a bounded
 * ring (memory stays bounded by the ring, not the trace) and the engine takes them in
 * the same order. Output is identical with or without it.
 *
 * The inner source must not touch what the engine uses except tables made thread-safe
 * with sim_intern_share (tenant and model names).
 */
#ifndef STUDY_PREFETCH_H
#define STUDY_PREFETCH_H

#include "sim/engine.h"

typedef struct prefetch prefetch;

/* Start reading `inner` ahead into a ring of `slots` jobs. Errors: SIM_ENOMEM. */
int prefetch_create(prefetch **out, const sim_source *inner, uint32_t slots, sim_diag *d);

/* sim_source-compatible: the next job (1), the end (0) or the inner source's error. The
 * job's name and command stay valid until the next call. */
int prefetch_next(void *ctx, job_spec *job, sim_diag *d);

/* Stop the reader (if it still runs) and free everything. NULL does nothing. */
void prefetch_destroy(prefetch *p);

#endif
