/* A job source over an array of job specs, for tests that drive the engine directly. */
#ifndef TESTS_ARRAY_SOURCE_H
#define TESTS_ARRAY_SOURCE_H

#include <stddef.h>

#include "sim/types.h"

typedef struct array_source {
    const job_spec *jobs;
    size_t n, next;
} array_source;

/* sim_engine's job-source callback: the next job of the array, 0 at its end. */
static inline int array_next(void *ctx, job_spec *job, sim_diag *d)
{
    (void)d;
    array_source *a = ctx;
    if (a->next >= a->n)
        return 0;
    *job = a->jobs[a->next++];
    return 1;
}

#endif
