/*
 * engine.h: the discrete-event engine. It pulls jobs from a source in submit order,
 * keeps the cluster state, calls the policy once per batch of same-time events,
 * validates and applies its decisions, recomputes the speed of the jobs whose
 * neighbourhood changed, and streams one row per job and one row per sample.
 *
 * Invariants: after every event, free + used = total for every GPU, node and tenant
 * (sim_engine_check); a job's finish event is valid only while its version stamp
 * matches; no allocation happens per event (pools grow geometrically at new peaks).
 * Same inputs and seed give byte-identical outputs.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "sim/policy.h"
#include "base/intern.h"
#include "sim/rate.h"
#include "sim/types.h"
#include "sim/view.h"

#include <stdio.h>

typedef struct sim_engine sim_engine;

/* Where jobs come from: next() returns 1 with *job filled, 0 at the end, or a
 * negative SIM_E* code with d filled. Jobs must come in non-decreasing submit order. */
typedef struct sim_source {
    void *ctx;
    int (*next)(void *ctx, job_spec *job, sim_diag *d);
} sim_source;

/* A timeseries probe: extra sampled columns computed from the view (fragmentation,
 * ...). `names` are the CSV column names; sample() writes n values into out. */
typedef struct sim_probe {
    uint32_t n;
    const char *const *names;
    void *ctx;
    void (*sample)(void *ctx, const sim_view *v, double *out);
} sim_probe;

/* Progress report for an interactive display (called about every 65536 events). */
typedef struct sim_progress {
    sim_time now;
    uint64_t events, jobs_arrived, jobs_ended, pending, running;
} sim_progress;

typedef struct sim_config {
    uint64_t seed;                /* seeds the view's RNG */
    sim_time sample_interval_us;  /* timeseries period; 0 = no timeseries */
    sim_time horizon_us;          /* stop here (SIM_TIME_NEVER = run to the end) */
    double checkpoint_interval_s; /* periodic checkpoints (0 = none: a preemption
                                     without checkpoint loses the whole segment) */
    double restart_penalty_s;     /* reference work added to each restart */
    /* Stop once, after the last arrival, this many scheduling points in a row left no
     * job finished or nearer its end than after its earlier losses (0 = never): the
     * points spanned by the run segments that losses (preemptions, failures, shrinks
     * that restart) threw away, one at least a loss, and those with no job progressing. A
     * policy that cuts every run segment before it gains more than it loses, or never
     * starts the waiting jobs while its timer runs, would otherwise run forever. */
    uint64_t stall_limit;
    double mtbf_s, mttr_s;        /* per-node failure process (0 = no failures) */
    FILE *jobs_csv;               /* one row per job (may be NULL), written by a thread of
                                     the engine's */
    bool jobs_csv_inline;         /* write its rows on the simulating thread instead (the
                                     same bytes) */
    FILE *timeseries_csv;         /* one row per sample (may be NULL) */
    FILE *tenants_csv;            /* one row per tenant per sample (may be NULL) */
    bool tenant_rows_changed;     /* tenants.csv: a tenant's row only when its figures changed
                                     since its last row (else every active tenant, every
                                     sample) */
    const sim_probe *probes;      /* extra timeseries columns */
    uint32_t n_probes;
    void (*progress)(void *ctx, const sim_progress *p); /* optional */
    void *progress_ctx;
    bool check_invariants;        /* run sim_engine_check after every event (tests) */
    /* The jobs carry co-trained group ids (job_spec.group; a group is a run of
     * consecutive jobs with one id): jobs.csv gets a trailing `group` column and
     * summary.json the groups' completion times. Off: both outputs are as without groups. */
    bool job_groups;
    bool elastic_outputs;         /* jobs.csv gets the replica columns and summary.json the
                                     elastic figures (set for policies that scale jobs) */
} sim_config;

/* Engine inputs that describe the world: the cluster, the name tables, the models. */
typedef struct sim_world {
    const cluster_spec *cluster;     /* borrowed for the engine's lifetime */
    const sim_intern *gpu_types;     /* catalog names (type ids) */
    const uint64_t *gpu_type_mem_mib; /* memory per GPU type id, MiB */
    sim_intern *tenants;             /* tenant names; grows as the source reads */
    const sim_rate_model *rate;      /* NULL = every model term is 1 */
    const sim_curves *curves;        /* online services' demand (borrowed), or NULL */
    const char *trace_path;          /* the trace, named in messages about its rows, or NULL */
} sim_world;

/* The run's figures, complete after sim_engine_run. */
typedef struct sim_summary {
    uint64_t jobs_arrived, jobs_done, jobs_rejected, jobs_unfinished;
    /* Jobs submitted after the horizon: never arrived, counted in jobs_unfinished too,
     * so arrived + not_arrived = done + rejected + unfinished = the source's jobs. */
    uint64_t jobs_not_arrived;
    /* Preemptions by the policy (a job stopped by a node failure is not one), and node
     * failures (a node going down). */
    uint64_t events, preemptions, failures;
    /* Reference work lost to preemptions without checkpoint, failures and scale-ins: the
     * sum of the jobs' lost_work_s (scale_lost_work_s is the scale-in part). */
    double lost_work_s;
    double lost_gpu_seconds; /* GPU time of the lost work: its run time x GPUs held */
    /* makespan = last_end - first_submit >= 0: the first admitted job's submission (not
     * one rejected at admission), the last done job's end or where a cut run stopped. */
    sim_time first_submit_us, last_end_us;
    double gpu_alloc_avg;       /* time-averaged allocated share of all GPUs, 0..1 */
    double gpu_effective_avg;   /* time-averaged share really used (min(share, demand)) */
    double gpu_seconds_alloc;   /* integral of allocated GPUs over time */
    double gpu_seconds_effective;
    uint64_t slo_jobs, slo_violations; /* jobs with an slo_s target; those that missed it */
    /* Of done jobs (JCT, and wait = first start - submit); NaN when no job is done. */
    double jct_mean_s, jct_median_s, jct_p95_s, jct_p99_s;
    double wait_mean_s, wait_median_s, wait_p95_s, wait_p99_s;
    /* The first rejected job and why (empty when none): "id: reason", truncated. */
    char first_rejection[256];
    /* Job groups (only with sim_config.job_groups): groups that arrived, and those done
     * (every member done). A group's completion time is its last member's end minus
     * its first member's arrival; mean and nearest-rank quantiles over the done groups
     * (exact; NaN when none is done). */
    uint64_t groups_arrived, groups_done;
    double group_mean_s, group_median_s, group_p99_s, group_max_s;
    /* Elastic jobs: grow and shrink decisions, and the work lost to scale-in (included
     * in lost_work_s). */
    uint64_t scale_events;
    double scale_lost_work_s;
    /* Online services: arrived, GPU-seconds wanted and missing (demand above replicas),
     * curve periods (service x interval between its points) with a shortfall. Offline
     * (non-service) jobs done and the sum of their JCTs. */
    uint64_t services;
    double demand_gpu_s, short_gpu_s;
    uint64_t short_periods;
    uint64_t offline_done;
    double offline_jct_sum_s;
    /* CPU held (trainers, masters and parameter servers, every job): its integral over
     * time in milli-core-seconds, and the time-averaged allocated fraction, 0..1. */
    double cpu_milli_seconds_alloc;
    double cpu_alloc_avg;
    /* The run stopped at stalled_at_us at sim_config.stall_limit (the jobs left are
     * unfinished). */
    bool stalled;
    sim_time stalled_at_us;
    /* The run reached the end of simulated time (SIM_CLOCK_END_S) with jobs in the system
     * (they are unfinished). */
    bool clock_ended;
} sim_summary;

/*
 * Create an engine. cfg, world and pcfg are copied or borrowed as stated above; the
 * policy state is allocated here and the policy's init() called. Errors: SIM_EINVAL
 * (bad configuration or policy options), SIM_ENOMEM, with d filled.
 */
int sim_engine_create(sim_engine **out, const sim_config *cfg, const sim_world *world,
                      const policy_ops *policy, const policy_config *pcfg, sim_diag *d);
void sim_engine_destroy(sim_engine *e);

/* Set a tenant's GPU quota (GPUs, >= 0, else SIM_EINVAL). A quota under half a
 * milli-GPU (0 when rounded to the policies' milli-GPUs) is set to 0: no quota. */
int sim_engine_set_quota(sim_engine *e, uint32_t tenant, double gpus);
/* Inject a node failure from down_us to up_us (before run). */
int sim_engine_add_failure(sim_engine *e, uint32_t node, sim_time down_us, sim_time up_us,
                           sim_diag *d);

/* Run to the end of the source (or the horizon). At the horizon, time is advanced to the
 * horizon itself (run time, GPU time and makespan count up to it, even with no job in
 * flight then, only jobs yet to arrive), the jobs in the system
 * are written as unfinished, and the rest of the source is read and written as unfinished
 * jobs that never arrived. Errors from the source, the policy (an invalid decision names
 * the policy, the decision and the reason) or output. */
int sim_engine_run(sim_engine *e, const sim_source *src, sim_diag *d);

const sim_summary *sim_engine_summary(const sim_engine *e);

/* Write summary.json: the figures, quantiles of JCT and wait, per-tenant and per-qos
 * breakdowns, probe averages. `extra` (may be NULL) is a JSON object body inserted at
 * the top level (e.g. "\"rows_skipped\": 3"). Deterministic. Returns SIM_EIO on a
 * write error. */
int sim_engine_write_summary(const sim_engine *e, FILE *f, const char *extra);

/* Check the cluster's conservation invariants (free + used = total everywhere);
 * SIM_EINVAL with d describing the first violation. O(nodes + GPUs + allocations). */
int sim_engine_check(const sim_engine *e, sim_diag *d);

/* The current view (for tests). */
const sim_view *sim_engine_view(const sim_engine *e);
/* Jobs of a tenant that arrived so far (0 for a tenant id never seen). */
uint64_t sim_engine_tenant_jobs(const sim_engine *e, uint32_t tenant);

/* Header line of jobs.csv / timeseries.csv (without probe columns) / tenants csv. */
extern const char sim_jobs_csv_header[];
/* Columns appended to jobs.csv with sim_config.elastic_outputs. */
extern const char sim_jobs_csv_elastic[];

#endif
