/*
 * gen.h: a seeded synthetic trace generator (GSL random numbers). It yields jobs in
 * submit order, one at a time, so a trace of any length needs constant memory.
 * Same configuration and seed give the same jobs.
 */
#ifndef TRACES_GEN_H
#define TRACES_GEN_H

#include "base/intern.h"
#include "sim/types.h"
#include "traces/stats.h"

#include <gsl/gsl_rng.h>

typedef struct trace_gen_config {
    uint64_t jobs;            /* how many jobs */
    uint64_t seed;
    double arrival_rate_h;    /* mean arrivals per hour (Poisson) */
    double diurnal_amplitude; /* 0..1: rate x (1 + A cos(2 pi (hour - peak) / 24)), per hour */
    double diurnal_peak_h;    /* hour of day of the highest rate (0..24) */
    double duration_median_s; /* lognormal durations: median */
    double duration_sigma;    /* lognormal sigma (heavy tail) */
    double duration_pareto;   /* > 0: Pareto durations of this shape alpha, same median */
    double frac_share;        /* fraction of all jobs asking for a fraction of a GPU */
    double frac_multi;        /* fraction of jobs with 2, 4 or 8 GPUs */
    double frac_cpu_only;     /* fraction of jobs without GPU */
    double frac_ls;           /* fraction of latency-sensitive jobs */
    double over_request;      /* mean factor by which fractional jobs over-ask (>= 1) */
    uint32_t tenants;         /* tenants, activity Zipf(1.2)-skewed */
    const char *gpu_types;    /* '|'-separated types for type constraints, or NULL */
    double frac_constrained;  /* fraction of GPU jobs constrained to one of gpu_types */
    /* Optional: fill model-specific fields (model class, graph and execution features,
     * true demand) of each generated job, drawing only from `rng`. A model class it sets
     * must be interned in the generator's `models` table: the job's name and command are
     * written after it, from the class and batch size the job then carries. The CLI wires
     * the model zoo of models/ here, so traces/ does not depend on models/. */
    void (*annotate)(void *ctx, job_spec *job, gsl_rng *rng);
    void *annotate_ctx;
    /* Optional: fit to a real trace (--like). Arrivals follow the source's rate for
     * each hour of day over its span (starting at its first submission), num_gpus its
     * GPU-count mix, durations its empirical distribution (inverse CDF with linear
     * interpolation), gpu_milli its share mix, tenants its tenants (names from
     * like_tenants) with their job shares. Borrowed; must outlive the generator. */
    const trace_stats *like;
    const sim_intern *like_tenants;
    /* With like, > 0: the source's hour-of-day rates scaled so their mean over a day is
     * this many arrivals per hour (the daily profile is kept); 0 = the source's own. */
    double like_rate_h;
    /* >= 2: jobs come in co-trained groups of 2..group_max (uniform), each group one
     * arrival: its jobs share the submit time and a `group` id ("grp-000000", ...), ask
     * for one whole GPU each and train 1..5 epochs (attribute epochs). 0 = no groups. */
    uint32_t group_max;
    /* > 0: this fraction of the GPU jobs (outside groups) are gangs: a number of
     * replicas drawn uniformly from the powers of two 2..gang_max, each asking for the
     * GPUs, share, CPU and memory the job drew (the replicas column is written). */
    double frac_gang;
    uint32_t gang_max; /* a power of two, 2..1024 (default 64) */
} trace_gen_config;

/* Defaults: 1000 jobs, seed 1, 60 jobs/h, median 30 min, sigma 1.5, ... */
void trace_gen_config_default(trace_gen_config *c);

typedef struct trace_gen trace_gen;

/* Create a generator; tenant names "t00".. are interned into `tenants`, GPU type names
 * resolved in `gpu_types` (needed only when c->gpu_types is set). A parameter outside its
 * range is SIM_EINVAL, its message naming the `trace gen` option that sets it. */
int trace_gen_create(trace_gen **out, const trace_gen_config *c, sim_intern *tenants,
                     sim_intern *models, const sim_intern *gpu_types, sim_diag *d);
/* 1 with *job filled, 0 after the last job. job->name/command stay valid until the
 * next call. A duration drawn beyond SIM_TIME_LIMIT_S is SIM_TIME_LIMIT_S; a submit time
 * beyond it is SIM_ELIMIT (d says which job), as the trace readers would refuse it. */
int trace_gen_next(trace_gen *g, job_spec *job, sim_diag *d);
void trace_gen_destroy(trace_gen *g);

#endif
