/*
 * stats.h: what a trace contains — job count, time span, arrivals by hour of day and
 * per day, the GPU-count, duration and fractional-share distributions, GPU-time by
 * tenant, and which optional fields are present. Fed one job at a time; keeps every
 * duration (8 bytes per job) so quantiles are exact order statistics.
 */
#ifndef TRACES_STATS_H
#define TRACES_STATS_H

#include "sim/types.h"

#define TRACE_STATS_GPU_BINS 64 /* distinct num_gpus values tracked; more are "other" */
#define TRACE_STATS_QN 7        /* quantiles reported */

/* Fields beyond the required ones: bit set when at least one job carries it. */
enum trace_field {
    TRACE_F_TENANT = 0,
    TRACE_F_MODEL,
    TRACE_F_QOS,
    TRACE_F_PRIORITY,
    TRACE_F_GPU_TYPE,
    TRACE_F_REF_GPU_TYPE,
    TRACE_F_REPLICAS,
    TRACE_F_GPU_MEM,
    TRACE_F_CPU,
    TRACE_F_MEM,
    TRACE_F_NAME,
    TRACE_F_COMMAND,
    TRACE_F_FRACTIONAL, /* a gpu_milli below 1000 */
    TRACE_F_COUNT
};

/* Name of a field bit ("tenant"); attributes use sim_attr_name(). */
const char *trace_field_name(enum trace_field f);

typedef struct trace_stats {
    uint64_t jobs;
    uint64_t cpu_only;                    /* jobs with num_gpus 0 */
    sim_time first_submit_us, last_submit_us;
    uint64_t by_hour[24];                 /* arrivals per hour of day (time mod 1 day) */
    uint64_t *by_day;                     /* arrivals per day since the trace's day 0 */
    uint32_t n_days;
    uint32_t gpu_value[TRACE_STATS_GPU_BINS]; /* distinct num_gpus values, ascending */
    uint64_t gpu_count[TRACE_STATS_GPU_BINS]; /* jobs per value */
    uint32_t n_gpu_values;
    uint64_t gpu_other;                   /* jobs whose value did not fit the table */
    uint64_t milli_bins[11];              /* GPU jobs by gpu_milli: 1..100, ..., 901..999, 1000 */
    double *durations;                    /* work_s of every job (sorted by finish) */
    size_t n_dur, cap_dur;
    double dur_q[TRACE_STATS_QN];         /* at trace_stats_quantile_p[] (after finish) */
    double dur_mean, dur_min, dur_max;
    double gpu_seconds;                   /* sum of num_gpus x gpu_milli/1000 x work_s */
    double *tenant_gpu_s;                 /* GPU-seconds per interned tenant id */
    uint64_t *tenant_jobs;
    uint32_t n_tenants;
    uint64_t fields;                      /* bit trace_field set when present */
    uint64_t attrs;                       /* bit sim_attr set when present */
} trace_stats;

/* The quantile levels of dur_q: 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99. */
extern const double trace_stats_quantile_p[TRACE_STATS_QN];

void trace_stats_init(trace_stats *s);
void trace_stats_fini(trace_stats *s);
/* Account one job. SIM_ENOMEM on allocation failure. O(1) amortised. */
int trace_stats_add(trace_stats *s, const job_spec *j);
/* Sort the durations and fill the quantiles. O(n log n). */
void trace_stats_finish(trace_stats *s);
/* Duration quantile at level p in [0, 1] (linear interpolation between order
 * statistics); after trace_stats_finish. 0 when there is no job. */
double trace_stats_duration_quantile(const trace_stats *s, double p);
/* Mean arrivals per hour over the span (jobs / span hours; 0 for < 2 jobs). */
double trace_stats_rate_h(const trace_stats *s);

#endif
