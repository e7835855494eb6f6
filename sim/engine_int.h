/*
 * engine_int.h: the engine's private state, shared by engine.c (event loop, arrivals,
 * rates, failures), decide.c (decisions and cluster accounting) and output.c (rows,
 * samples, summary). Nothing outside sim/ includes this file.
 *
 * Storage: nodes and GPUs are struct-of-arrays sized once at creation; jobs,
 * allocations and per-job policy state live in pools indexed by id with LIFO free
 * lists, grown geometrically (so allocation happens only at new peaks of jobs in
 * flight, never per event).
 */
#ifndef SIM_ENGINE_INT_H
#define SIM_ENGINE_INT_H

#include "sim/engine.h"
#include "sim/eventq.h"
#include "base/hist.h"
#include "base/line.h"

#define NIL UINT32_MAX

enum ev_kind { EV_FINISH = 1, EV_WAKEUP, EV_SAMPLE, EV_NODE_DOWN, EV_NODE_UP, EV_DEMAND };

struct policy_decisions {
    struct sim_engine *e;
};

/* Per-tenant accounting (arrays indexed by tenant id). */
typedef struct tenant_stats {
    uint64_t arrived, done, rejected;
    double jct_sum_s, wait_sum_s, gpu_s;
    /* The figures of the tenant's last tenants.csv row (sim_config.tenant_rows_changed). */
    uint64_t row_used;
    uint32_t row_running, row_pending;
    double row_quota;
    bool row_written;
} tenant_stats;

typedef struct qos_stats {
    uint64_t done;
    double jct_sum_s, wait_sum_s;
    sim_hist *jct;
} qos_stats;

/* A job group with members in the system (sim_config.job_groups). */
typedef struct group_rec {
    sim_time submit_us, last_end_us; /* its first arrival, its last member's end so far */
    uint32_t left;                   /* members arrived and not ended */
    bool open;                       /* more members may still arrive */
    bool broken;                     /* a member was rejected: the group never completes */
    uint32_t next_free;
} group_rec;

/* The request fields that make pending jobs interchangeable for feasibility. */
typedef struct shape_key {
    uint32_t gpr, replicas, milli;
    uint64_t gmem, cpu, mem, mask;
    uint32_t roles;                  /* master and parameter servers */
    uint64_t mcpu, mmem, pcpu, pmem; /* their CPU and memory */
} shape_key;

/* Verdict cache for "can this job shape ever fit the cluster". */
#define FIT_CACHE 1024
/* Nodes by what admission reads of them: GPUs, their type and (first GPU's) memory, CPU
 * and memory. Capacities never change, so the kinds are found once. */
typedef struct node_kind {
    uint64_t gpu_mem, cpu, mem;
    uint32_t gpus, count; /* count: nodes of the kind */
    uint16_t type;
} node_kind;

typedef struct fit_entry {
    bool used, ok;
    uint32_t num_gpus, replicas_in, gpu_milli, fewest;
    uint64_t gpu_mem, cpu, mem, mask;
    uint32_t replicas_out;
    char reason[200];
} fit_entry;

struct sim_engine {
    sim_config cfg;
    sim_time checkpoint_us; /* cfg.checkpoint_interval_s in whole microseconds (0: none) */
    sim_world world;
    sim_rate_model rate;
    const policy_ops *pol;
    void *pst;
    policy_config pcfg;
    sim_view v;
    struct policy_decisions dec;
    gsl_rng *rng, *fail_rng;

    /* Nodes (SoA). */
    uint32_t n_nodes, n_down;
    uint32_t *node_gpu_first, *node_gpu_count, *node_free_gpus, *node_max_free_milli;
    uint16_t *node_gpu_type;
    uint64_t *node_cpu_total, *node_cpu_used, *node_mem_total, *node_mem_used;
    uint64_t *node_used_milli;
    bool *node_up;
    const char **node_name;
    uint64_t *node_scratch_cpu, *node_scratch_mem; /* decision validation */
    uint64_t cpu_total_all, cpu_used_all;
    sim_node_sum *node_sum;
    uint32_t *node_outages; /* outages covering the node now; down while > 0 */
    double *node_frac;     /* allocated fraction of the node's GPU share */
    double *node_cpu_frac; /* allocated fraction of its CPU (0 without CPU) */
    /* Each node's tiers for the block summaries, read there 32 times as often as they
     * change: its free whole GPUs (1..8) less 1, or SIM_FRAC_WHOLE when it has none (or
     * no free share); its largest free share in tenths, 0..9, or SIM_FRAC_SHARE when none. */
    uint8_t *node_tier_whole, *node_tier_share;
    uint32_t n_blocks;
    /* Per block: bit q set when a node of its q-th quarter (SIM_NODE_QUARTER nodes)
     * changed since the block's summary. */
    uint8_t *block_dirty;
    uint32_t *dirty_blocks; /* those blocks, n_dirty_blocks of them */
    uint32_t n_dirty_blocks;
    uint32_t *block_max_free_gpus, *block_max_free_milli;
    uint64_t *block_max_cpu_free, *block_max_mem_free, *block_types;
    double *block_frac_whole, *block_frac_share, *block_max_cpu_frac;
    /* The summary of each quarter of a block (sim_view.block_quarter): a block's
     * summary is summed again from its four quarters, of which only those with a
     * changed node are summed again from their nodes. */
    sim_quarter_sum *quarter;
    uint16_t max_gpus_per_node;

    /* GPUs (SoA). */
    uint32_t n_gpus;
    uint32_t *gpu_node, *gpu_used_milli, *gpu_nres, *gpu_first_res;
    uint64_t *gpu_used_mem, *gpu_mem_total;
    uint8_t *gpu_scratch; /* marks GPUs of a placement being validated */

    /* Allocation pool. */
    sim_alloc_rec *allocs;
    uint32_t alloc_cap, alloc_free;
    uint32_t n_alloc_free;   /* records on the free list */
    sim_resident *residents; /* scratch for the interference hook, 1001 entries */
    sim_resident *view_res;  /* scratch for sim_view_interference_cost, 2 x 1002 entries */

    /* Job pool. */
    sim_job *jobs;
    unsigned char *jstate; /* per-job policy state, from a cache line of jstate_raw */
    void *jstate_raw;
    uint32_t *job_version;
    uint32_t *job_next; /* per slot: the next job in its list, or in the free list */
    uint8_t *job_dirty;
    /* Job slots: job_cap allocated; the released ones in a free list from job_free; the
     * slots from job_fresh up never used yet (not even initialised). */
    uint32_t job_cap, job_free, job_fresh, jobs_in_flight;
    uint32_t *dirty;
    uint32_t n_dirty;
    uint32_t n_progressing; /* running (not paused) jobs with speed > 0 */
    /* Since a job last arrived, finished or was left nearer its end by a loss
     * (sim_config.stall_limit): each loss (preemption, failure, shrink that restarts)
     * that left its job no nearer its end than an earlier loss did, counted as the
     * scheduling points its run segment spanned (one at least), and each scheduling
     * point after which no job progressed. */
    uint64_t stall;
    uint64_t points;        /* scheduling points so far */
    uint64_t *seg_point;    /* by job: the point its current run segment began at */

    /* Tenants. */
    uint32_t tenant_cap;
    uint64_t *tenant_used_milli;
    uint32_t *tenant_running; /* jobs in the running list (kept by sim__list_append/remove) */
    uint32_t *tenant_pending; /* jobs in the pending list (the same) */
    double *tenant_quota;
    tenant_stats *tstats;
    qos_stats qstats[SIM_QOS_COUNT];

    /* Online services (world.curves): per service, the job in flight (NIL when none),
     * its current demand and its point's index in the curves; a hash of the names. */
    uint32_t *svc_job, *svc_demand, *svc_point_svc;
    uint32_t *svc_hash; /* service + 1 per slot, 0 = empty */
    uint8_t *svc_seen;  /* per service: a trace row named it */
    uint32_t *svc_peak; /* per service: the most replicas its curve asks for */
    uint32_t svc_hash_cap;

    /* Time and events. */
    sim_eventq q;
    size_t q_compact_at; /* queue size at which its stale events are dropped */
    sim_time now;
    uint32_t wakeup_version;
    sim_time wakeup_at;
    sim_time next_sample_us;

    /* Source lookahead. */
    const sim_source *src;
    job_spec next;
    bool has_next;
    sim_time last_submit_us;

    /* Metrics. */
    sim_summary sum;
    sim_hist *h_jct, *h_wait;
    uint64_t used_milli_total;  /* sum of all GPU shares held */
    uint64_t eff_milli_total;   /* sum of min(share, demand) over running jobs */
    /* Over the jobs in the system: the GPUs the services want, hold and lack, and the
     * trainers of offline elastic jobs (the timeseries' online columns). */
    int64_t online[4];
    sim_time integ_last_us;
    bool integ_started;
    double *probe_vals, *probe_sums;
    uint32_t n_probe_cols;
    uint64_t probe_samples;
    uint64_t samples;

    fit_entry *fit_cache;
    node_kind *kinds; /* the distinct node kinds (admit_shape reads these, not the nodes) */
    uint32_t n_kinds, kinds_cap;

    /* Shapes of pending jobs: a hash (linear probing, slot = id + 1, 0 = empty) over
     * shape_keys, per-shape pending lists, a free list through shape_tail. */
    shape_key *shape_keys;
    uint32_t *shape_head, *shape_tail, *shape_count, *shape_gen;
    uint32_t shape_cap, shape_free, shape_used;
    uint32_t *shape_slots;
    uint32_t shape_slots_cap; /* power of two, >= 2 x shape_cap */
    uint32_t *shape_active, *shape_pos; /* dense list of shapes in use, and positions */

    /* Release log. */
    uint64_t *node_release_epoch;
    uint32_t *release_ring;

    /* Job groups (cfg.job_groups): records of the groups in the system (a pool with a
     * free list, grown geometrically), each job's record (NIL = none), the record of the
     * group now arriving and its id, and the completion times of the done groups. */
    group_rec *grp;
    uint32_t grp_cap, grp_free, grp_cur;
    uint32_t *job_group;
    char grp_cur_id[SIM_ID_MAX];
    sim_time *grp_spans;
    size_t grp_n_spans, grp_spans_cap;
    /* Change log. */
    uint64_t *node_change_epoch;
    uint32_t *change_ring;
    uint32_t *speed_ring; /* speed log (sim_view.speed_ring) */

    /* Decision state for the current schedule() call: SIM_EINVAL after an invalid
     * decision (the policy's error), SIM_ENOMEM or SIM_EIO after the engine's own. */
    int dec_status;
    sim_diag dec_diag;
    uint64_t decisions;

    sim_line line; /* the output row being assembled (output.c) */
    struct sim_rows *rows; /* the jobs.csv writer thread, from the first row (output.c) */
    bool rows_inline;      /* it could not start: rows are written in place */
    void *big_rec;         /* a jobs.csv record larger than the writer's blocks */
    uint32_t big_cap;
};

/* decide.c: accounting primitives used by the loop too. */
void sim__job_touch(sim_engine *e, sim_job_id id);
void sim__mark_dirty(sim_engine *e, sim_job_id id);
/* Job id's work done or total changed in place (a restart that keeps it placed): its
 * finish is scheduled again at the next update of speeds, even at the same speed. */
void sim__work_changed(sim_engine *e, sim_job_id id);

void sim__set_speed(sim_engine *e, sim_job_id id, double speed);
int sim__grow_allocs(sim_engine *e);
void sim__release_allocs(sim_engine *e, sim_job_id id);
/* Replica-seconds up to now, then the bounds with `next` replicas (0 = none placed). */
void sim__rep_account(sim_engine *e, sim_job *j, uint32_t next);
/* A service's shortfall (demand above its replicas, in GPUs) up to now. */
void sim__svc_account(sim_engine *e, sim_job *j);
/* Job id stops and waits again: preempted by the policy (counted as a preemption), or
 * stopped by a node failure (preempted false: counted in the run's failures). Without a
 * checkpoint the work since the last one is lost. */
void sim__requeue(sim_engine *e, sim_job_id id, bool checkpoint, bool preempted);
/* Job j (its work up to date) has just lost work, or been preempted: the run progresses
 * if j is left nearer its end than after any loss before (e->stall). */
void sim__note_loss(sim_engine *e, sim_job *j);
void sim__list_remove(sim_engine *e, sim_job_id id, bool running);
void sim__list_append(sim_engine *e, sim_job_id id, bool running);
/* A listed job's demand changes to d (its part of the online figures with it). */
void sim__set_demand(sim_engine *e, sim_job *j, uint32_t d);
/* The diagnostic of an output write that failed with st: out of memory (a row's buffer
 * could not grow), or `file` could not be written. Returns the status (SIM_ENOMEM or
 * SIM_EIO). */
int sim__output_failed(sim_diag *d, int st, const char *file);
void sim__node_refresh(sim_engine *e, uint32_t node);
/* Recompute the summaries of the blocks with a node changed since (view.sync_blocks). */
void sim__sync_blocks(const sim_view *v);
void sim__note_release(sim_engine *e, uint32_t node);

/* shapes.c */
int sim__shapes_grow(sim_engine *e, uint32_t ncap);
void sim__shape_attach(sim_engine *e, sim_job_id id);
void sim__shape_detach(sim_engine *e, sim_job_id id);
double sim__job_gpus_held(const sim_engine *e, const sim_job *j);
/* True demand (milli-GPU) of job j on one GPU of `node`: the rate model's demand hook
 * for the node's GPU type, else the job's true_milli. */
uint32_t sim__job_demand(const sim_engine *e, const sim_job *j, uint32_t node);

/* Job j (id) leaves the system: done, or not (rejected). Accounts its group. */
void sim__group_member_end(sim_engine *e, sim_job_id id, bool done);

/* Count a rejection and keep the first one's id and reason for the run's message. */
void sim__note_rejection(sim_engine *e, const char *id, const char *reason);

/* output.c */
int sim__write_job_row(sim_engine *e, const sim_job *j, const char *status, const char *reason);
int sim__write_spec_row(sim_engine *e, const job_spec *s, uint32_t replicas,
                        const char *status, const char *reason);
int sim__write_sample(sim_engine *e);
int sim__write_headers(sim_engine *e);
/* Write every jobs.csv row handed over and stop the writer thread (nothing when none
 * runs); returns its first error. */
int sim__rows_finish(sim_engine *e);
/* Count a done job in the distributions of completion and waiting times (h_jct, h_wait,
 * its class's jct): from account_done without a jobs.csv, otherwise where its row is
 * formatted, in the rows' order (on the writer's thread, or on the simulating thread for
 * a row written in place while the writer is idle or absent); the simulating thread
 * reads them only after sim__rows_finish. */
void sim__count_done(sim_engine *e, sim_time submit_us, sim_time start_us, sim_time end_us,
                     sim_qos qos);

#endif
