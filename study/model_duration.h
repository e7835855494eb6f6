/*
 * model_duration.h: the duration predictor's error on a trace, replayed in its own
 * timeline with a chronological split, or the error of the predictions a run recorded
 * in its jobs.csv. Tables are written to out.
 */
#ifndef STUDY_MODEL_DURATION_H
#define STUDY_MODEL_DURATION_H

#include "models/duration.h"
#include "traces/trace.h"

#include <stdio.h>

/* A trace evaluation; jobs is the jobs.csv of the other mode (unused here). */
typedef struct study_dur_eval {
    const char *trace, *format, *catalog, *jobs;
    const char *trace_opts[TRACE_MAX_OPTS];
    uint32_t n_trace_opts;
    double split, retrain_s;
    model_dur_config cfg;
    bool skip_bad_rows;
} study_dur_eval;

/* The trace mode (a->trace must be a file: it is read twice). */
int study_dur_eval_trace(const study_dur_eval *a, FILE *out, sim_diag *d);
/* The errors of pred_duration_s against work_s in a jobs.csv. */
int study_dur_eval_jobs(const char *path, FILE *out, sim_diag *d);

#endif
