/*
 * curves.h: demand curves of online services: a CSV `service,time,replicas` (time in
 * seconds, replicas a non-negative integer), the service named by its job id in the
 * trace; and a generator of diurnal curves.
 *
 * A curve is a step function: from each point's time on, the service wants that many
 * replicas, until its next point. Points of one service must come in increasing time
 * order (services may interleave).
 */
#ifndef TRACES_CURVES_H
#define TRACES_CURVES_H

#include "sim/types.h"

#include <stdio.h>

/* Read a curve file into *out (owned by the caller: trace_curves_free). Errors:
 * SIM_EIO, SIM_EPARSE (file:line:column, what was expected, the value), SIM_ENOMEM. */
int trace_curves_load(sim_curves *out, const char *path, sim_diag *d);
void trace_curves_free(sim_curves *c);

/* Diurnal curves: replicas(t) = trough + (peak - trough) x (1 - cos(2 pi (t/period +
 * phase))) / 2, times (1 + noise x N(0,1)), rounded and clamped to 0..peak, one point
 * every `step_s` (at least 1e-6) from 0 to `length_s`, times written to the microsecond;
 * each service gets a uniform random phase. The services are named prefix0, prefix1, ...
 * Deterministic for a seed. */
typedef struct trace_diurnal {
    uint32_t services;
    const char *prefix;
    uint32_t peak, trough;
    double period_s, step_s, length_s;
    double noise;
    uint64_t seed;
} trace_diurnal;

int trace_curves_diurnal_write(FILE *f, const trace_diurnal *p, sim_diag *d);

#endif
