/*
 * view.h: what a policy sees of the simulation, and the decisions it can take.
 *
 * The view is read-only: struct-of-arrays over nodes and GPUs, job records reached by
 * id, and the pending and running lists in arrival/start order. A policy changes the
 * simulation only through the sim_decide_* calls below. Each call is validated and
 * applied at once, so the view is always current inside schedule(); an invalid
 * decision (over-committed GPU, job not pending, ...) returns SIM_EINVAL and ends the
 * run with a message naming the policy, the decision and the reason.
 *
 * Units: GPU shares in milli-GPU (1000 = one GPU), memory in MiB, CPU in milli-cores,
 * times in microseconds (sim_time), work in reference seconds.
 */
#ifndef SIM_VIEW_H
#define SIM_VIEW_H

#include "sim/types.h"

#include <gsl/gsl_rng.h>
#include <stddef.h>

typedef enum sim_job_state {
    SIM_JOB_PENDING = 0, /* waiting in the pending list */
    SIM_JOB_RUNNING,     /* placed and progressing */
    SIM_JOB_PAUSED,      /* placed, holding its resources, not progressing */
    SIM_JOB_FREE,        /* the id is not in use */
} sim_job_state;

#define SIM_GPU_NONE UINT32_MAX

/* One allocation: a replica's share of one GPU, or a CPU-only replica's node slot.
 * A replica's CPU and memory are charged on its first allocation. */
typedef struct sim_alloc_rec {
    sim_job_id job;
    uint32_t node;
    uint32_t gpu;         /* global GPU index, SIM_GPU_NONE for a CPU-only replica */
    uint32_t milli;       /* GPU share held */
    uint64_t gpu_mem_mib; /* GPU memory held */
    uint64_t cpu_milli;   /* CPU held on the node (first allocation of a replica) */
    uint64_t mem_mib;     /* host memory held on the node (idem) */
    uint32_t replica;     /* replica index within the job */
    uint32_t next_in_job; /* next allocation of the same job, or UINT32_MAX */
    uint32_t prev_on_gpu; /* neighbours among the residents of the same GPU */
    uint32_t next_on_gpu;
    uint32_t demand; /* the job's demand on this GPU's type (sim_view_job_demand), taken
                      * when the allocation is made; 0 for a CPU-only replica */
} sim_alloc_rec;

/* A job in flight, as the core keeps it. Read-only for policies. */
typedef struct sim_job {
    job_spec spec;             /* as the trace gave it (spec.name/command are "") */
    uint64_t seq;              /* arrival order, 0-based, over the whole run */
    uint64_t enqueue_seq;      /* order of the latest entry into the pending list */
    uint32_t gpus_per_replica; /* resolved at arrival */
    uint32_t nominal_replicas; /* resolved at arrival */
    uint64_t cpu_per_replica;  /* milli-cores */
    uint64_t mem_per_replica;  /* MiB */
    sim_job_state state;
    uint32_t replicas;      /* replicas currently placed (0 when pending) */
    uint32_t share_milli;   /* share held per GPU (0 when pending) */
    uint64_t share_mem_mib; /* GPU memory held per GPU */
    uint32_t alloc_head;    /* first allocation, UINT32_MAX when none */
    sim_time first_start_us; /* SIM_TIME_NEVER until first started */
    sim_time last_start_us;  /* start of the current run segment */
    sim_time queued_since_us; /* when it last became pending */
    sim_time last_update_us;  /* when work_done_s was last brought up to date */
    double work_done_s;       /* reference work done as of last_update_us */
    double ckpt_work_s;       /* work done at the segment's start or its last periodic
                                 checkpoint (--checkpoint-interval), whichever is later:
                                 what a restart without a checkpoint goes back to */
    double work_total_s;      /* work plus restart overheads */
    double speed;             /* reference seconds per second, current */
    double speed_factor;      /* policy-set multiplier (1 by default) */
    double attained_gpu_s;    /* GPU-seconds of service received so far (while running) */
    double placed_gpu_s;      /* GPU-seconds held so far (running or paused) */
    double ckpt_gpu_s;        /* placed_gpu_s when ckpt_work_s was taken */
    sim_time placed_us;       /* time spent holding resources (running or paused) */
    double lost_work_s;       /* reference work lost: preemptions without checkpoint,
                                 failures, scale-ins */
    double least_left_s;      /* engine: the least work left after a loss so far (a
                                 preemption, failure or shrink that restarts) */
    uint32_t preemptions;     /* times preempted by the policy (not node failures) */
    double pred_duration_s;   /* policy's prediction (NaN = none) */
    double pred_milli;        /* policy's predicted share (NaN = none) */
    uint32_t list_prev;       /* the link back in the pending or the running list (the next is
                               * the view's job_next) */
    uint32_t shape;                /* shape id while pending (see sim_view) */
    uint32_t shape_prev, shape_next; /* links among pending jobs of the same shape */
    /* Replicas over time (elastic outputs): the fewest and most placed (0 = never
     * placed), replica-seconds placed up to rep_since_us, grow/shrink decisions. */
    uint32_t rep_min, rep_max;
    double rep_seconds;
    sim_time rep_since_us;
    uint32_t scale_events;
    /* Online services (jobs named in the run's demand curves): the replicas the curve
     * asks for now; 0 for other jobs. A service runs at speed 1 whatever its replicas:
     * its work is the time it serves. */
    bool is_service;
    uint32_t svc; /* its index in the curves (services only) */
    uint32_t demand_replicas;
    uint32_t peak_replicas;  /* the most replicas its curve ever asks for */
    sim_time short_since_us; /* shortfall accounted up to here */
    bool short_now;          /* it was short during its current curve period */
    bool listed;             /* in the pending or the running list */
    /* Parameter-server jobs (a trace column ps_replicas, ps_cpu_milli, ps_mem_mib,
     * master_cpu_milli or master_mem_mib given): n_roles = 1 master + ps_replicas
     * parameter servers, CPU-only roles placed with the trainers when the job starts and
     * held while it is placed (trainers scale in and out beside them); 0 for other jobs.
     * Role 0 is the master, roles 1..n_roles-1 the servers. */
    uint32_t n_roles;
    uint64_t master_cpu_milli, master_mem_mib; /* the master's CPU and memory */
    uint64_t ps_cpu_milli, ps_mem_mib;         /* one parameter server's */
    uint32_t role_head; /* first role allocation (no GPU), UINT32_MAX when none */
} sim_job;

/* CPU (milli-cores) and memory (MiB) of role r of job j (0 = master). */
static inline uint64_t sim_job_role_cpu(const sim_job *j, uint32_t r)
{
    return r == 0 ? j->master_cpu_milli : j->ps_cpu_milli;
}

static inline uint64_t sim_job_role_mem(const sim_job *j, uint32_t r)
{
    return r == 0 ? j->master_mem_mib : j->ps_mem_mib;
}

/* A node's free capacity in one 32-byte record, for fast feasibility scans (the same
 * figures as the per-field arrays of sim_view, kept in step by the engine). */
typedef struct sim_node_sum {
    uint64_t cpu_free;       /* milli-cores */
    uint64_t mem_free;       /* MiB */
    uint32_t used_milli;     /* sum of GPU shares held */
    uint16_t gpu_count;
    uint16_t free_gpus;      /* GPUs with no allocation */
    uint16_t max_free_milli; /* largest free share of one GPU */
    uint8_t gpu_type;        /* SIM_GPU_TYPE_NONE for CPU-only nodes */
    uint8_t up;              /* 0 while failed */
} sim_node_sum;

/* Nodes per block of the block summaries (see sim_view.block_*). */
#define SIM_NODE_BLOCK 32u

#define SIM_FRAC_WHOLE 8u
#define SIM_FRAC_SHARE 10u

/* Nodes per quarter of a block (see sim_view.block_quarter). */
#define SIM_NODE_QUARTER (SIM_NODE_BLOCK / 4)

/* A block summary (sim_view.block_*) over a quarter of a block's nodes:
 * frac[0 .. SIM_FRAC_WHOLE - 1] as block_frac_whole, the rest as block_frac_share. A
 * block's summary is the maximum of its quarters', field by field. */
typedef struct sim_quarter_sum {
    double frac[SIM_FRAC_WHOLE + SIM_FRAC_SHARE];
    double max_cpu_frac;
    uint64_t max_cpu_free, max_mem_free, types;
    uint32_t max_free_gpus, max_free_milli;
} sim_quarter_sum;

/* Entries of the release log (see sim_view.release_ring). */
#define SIM_RELEASE_RING 65536u

/* Entries of the change log (see sim_view.change_ring). */
#define SIM_CHANGE_RING 65536u

/* Entries of the speed log (see sim_view.speed_ring). */
#define SIM_SPEED_RING 65536u

/* The read-only view. Arrays are indexed by node id, global GPU index, or tenant id. */
typedef struct sim_view {
    sim_time now;
    /* Nodes. */
    uint32_t n_nodes;
    const uint32_t *node_gpu_first; /* first global GPU index of the node */
    const uint32_t *node_gpu_count;
    const uint16_t *node_gpu_type;  /* SIM_GPU_TYPE_NONE for CPU-only nodes */
    const uint64_t *node_cpu_total, *node_cpu_used;
    const uint64_t *node_mem_total, *node_mem_used;
    const uint32_t *node_free_gpus;  /* GPUs with no allocation at all */
    const uint32_t *node_max_free_milli; /* largest free share of one GPU on the node */
    const uint64_t *node_used_milli; /* sum of GPU shares held on the node */
    const bool *node_up;             /* false while failed */
    uint64_t up_epoch;               /* changes each time a node goes down or comes back */
    const char *const *node_name;
    const sim_node_sum *node_sum;    /* compact copy of the free capacity per node */
    /*
     * Block summaries: nodes b*SIM_NODE_BLOCK .. (b+1)*SIM_NODE_BLOCK-1 form block b.
     * Over the block's up nodes: the most free GPUs, free share of one GPU, free CPU and
     * free memory of any node, and the GPU types present (bit t; bit 0 = a CPU-only
     * node). They bound what any node of the block can offer, so a scan can skip whole
     * blocks. For packing scores, the highest allocated fraction of GPU share
     * (used / (1000 x GPUs)) among the block's up nodes with at least k free GPUs is
     * block_frac_whole[b * SIM_FRAC_WHOLE + k - 1] (k = 1..8), and among those whose
     * freest GPU has at least max(1, 100 i) milli free, block_frac_share[b *
     * SIM_FRAC_SHARE + i] (i = 0..9); -1 when no node qualifies. The engine brings
     * them up to date when asked (sim_view_sync_blocks), not at every node change: read
     * them only after that call.
     */
    void (*sync_blocks)(const struct sim_view *v);
    uint32_t n_blocks;
    const uint32_t *block_max_free_gpus, *block_max_free_milli;
    const uint64_t *block_max_cpu_free, *block_max_mem_free;
    const uint64_t *block_types;
    const double *block_frac_whole, *block_frac_share;
    /* The highest allocated fraction of CPU (node_cpu_used / node_cpu_total, 0 for a
     * node without CPU) among the block's up nodes; -1 when none is up. Synced as
     * above. */
    const double *block_max_cpu_frac;
    /* The same summaries for each quarter of a block: block_quarter[4 * b + q] covers
     * nodes b * SIM_NODE_BLOCK + q * SIM_NODE_QUARTER onwards (a quarter past the last
     * node: empty, no node up). Synced as above. */
    const sim_quarter_sum *block_quarter;
    /* GPUs. */
    uint32_t n_gpus;
    const uint32_t *gpu_node;
    const uint32_t *gpu_used_milli;
    const uint64_t *gpu_used_mem, *gpu_mem_total;
    const uint32_t *gpu_nres;       /* number of resident allocations */
    const uint32_t *gpu_first_res;  /* first resident allocation, UINT32_MAX when none */
    /* Allocations (see sim_alloc_rec), jobs. */
    const sim_alloc_rec *allocs;
    const sim_job *jobs;            /* indexed by sim_job_id; valid only for jobs in flight */
    uint32_t pending_head, running_head; /* first job of each list, SIM_JOB_NONE = empty */
    uint32_t pending_tail, running_tail; /* last job of each list (back: sim_job.list_prev) */
    uint32_t n_pending, n_running;
    /* The enqueue_seq the next job entering the pending list gets: the pending list is in
     * enqueue_seq order, every job in it below this. */
    uint64_t enqueue_count;
    /* Tenants (interned ids, 0 = ""), model classes, GPU types. */
    uint32_t n_tenants;
    const uint64_t *tenant_used_milli; /* GPU share held per tenant */
    const uint32_t *tenant_running;    /* per tenant: its jobs in the running list */
    const uint32_t *tenant_pending;    /* per tenant: its jobs in the pending list */
    const double *tenant_quota_gpus;   /* quota per tenant, GPUs (0 = none set) */
    const char *(*tenant_name)(const struct sim_view *v, uint32_t tenant);
    const char *(*gpu_type_name)(const struct sim_view *v, uint16_t type);
    uint32_t n_gpu_types;              /* ids 1..n_gpu_types-1 */
    const uint64_t *gpu_type_mem_mib;  /* per type id */
    uint64_t total_gpus;
    /*
     * Releases. Every time resources on a node are freed (a job ends, is preempted or
     * shrinks, a share shrinks, a node comes back up) release_epoch is incremented and
     * the node is logged: release_ring[epoch % SIM_RELEASE_RING] = node, and
     * node_release_epoch[node] = epoch. A job that fitted nowhere at epoch E can fit
     * now only on nodes with node_release_epoch > E (all others only filled up).
     */
    uint64_t release_epoch;
    const uint64_t *node_release_epoch;
    const uint32_t *release_ring;
    /*
     * Changes. Every time anything of a node's state changes (an allocation is added,
     * released or resized, the node fails or comes back) change_epoch is incremented and
     * the node is logged: change_ring[epoch % SIM_CHANGE_RING] = node, and
     * node_change_epoch[node] = epoch. A policy that keeps its own index of the nodes
     * re-reads only the nodes logged since it last looked.
     */
    uint64_t change_epoch;
    const uint64_t *node_change_epoch;
    const uint32_t *change_ring;
    /*
     * Speeds. Every time a job's speed (sim_job.speed) changes, speed_epoch is
     * incremented and the job is logged: speed_ring[epoch % SIM_SPEED_RING] = job id. A
     * policy whose order follows the running jobs' progress re-reads only the jobs logged
     * since it last looked (all of them when more than SIM_SPEED_RING were logged). An
     * entry may name a job that has left since.
     */
    uint64_t speed_epoch;
    const uint32_t *speed_ring;
    /*
     * Shapes: pending jobs with identical requests (GPUs per replica, replicas, share,
     * GPU memory, CPU and memory per replica, GPU types, master and parameter servers)
     * are interchangeable for feasibility. Pending jobs of shape s form a list in
     * enqueue order from shape_head[s] through sim_job.shape_next. Shape ids are reused
     * once no job of the shape is pending; shape_gen[s] changes on reuse.
     */
    uint32_t n_shapes; /* ids are below this */
    const uint32_t *shape_head, *shape_count, *shape_gen;
    uint32_t n_active_shapes;      /* shapes with pending jobs ... */
    const uint32_t *active_shapes; /* ... listed here, in no particular order */
    gsl_rng *rng;           /* the run's seeded RNG: the only randomness a policy may use */
    unsigned char *job_state_base; /* per-job policy state (see sim_view_job_state) */
    const uint32_t *job_next;      /* per job slot: the next job in its list (sim_view_next), kept
                                    * apart from the records so that a walk reads one array */
    size_t job_state_size;
    const void *internal;   /* the engine; do not use */
    /* Online services: the sum over the run's demand curves of each one's peak replicas
     * (0 without curves), for a policy that reserves capacity for them. */
    uint64_t services_peak_replicas;
    uint32_t n_services; /* the run's demand curves (0: no job is a service) */
} sim_view;

/* Bring the block summaries (sim_view.block_*) up to date: O(blocks changed since). */
static inline void sim_view_sync_blocks(const sim_view *v)
{
    if (v->sync_blocks)
        v->sync_blocks(v);
}

static inline const sim_job *sim_view_job(const sim_view *v, sim_job_id id)
{
    return &v->jobs[id];
}

/* The policy's per-job state (policy_ops.job_state_size bytes, zeroed at arrival). */
static inline void *sim_view_job_state(const sim_view *v, sim_job_id id)
{
    return v->job_state_base + (size_t)id * v->job_state_size;
}

/* Next job in the same list (pending or running), SIM_JOB_NONE at the end. A decision
 * moves a job to another list, so take the next id before deciding on a job. */
static inline uint32_t sim_view_next(const sim_view *v, sim_job_id id)
{
    return v->job_next[id];
}

/* Start bringing job id's record (SIM_JOB_NONE: none) into the cache, for a job a pass
 * will read soon: a job that waited long has long left it, and a record spans some
 * dozen cache lines, each otherwise a miss when first read. */
static inline void sim_view_prefetch_job(const sim_view *v, sim_job_id id)
{
    if (id == SIM_JOB_NONE)
        return;
    const char *p = (const char *)&v->jobs[id];
    for (size_t off = 0; off < sizeof(sim_job); off += 64)
        __builtin_prefetch(p + off);
}

/* Ask for the lines of bytes [from, to) of a record. */
static inline void sim_prefetch_bytes(const char *from, const char *to)
{
    for (uintptr_t a = (uintptr_t)from & ~(uintptr_t)63; a < (uintptr_t)to; a += 64)
        __builtin_prefetch((const void *)a);
}

/* The same as sim_view_prefetch_job for the parts of the record that the engine's start
 * and preemption read: the spec's figures (not its id, attributes or group) and the
 * engine's fields. */
static inline void sim_view_prefetch_job_hot(const sim_view *v, sim_job_id id)
{
    if (id == SIM_JOB_NONE)
        return;
    const char *p = (const char *)&v->jobs[id];
    sim_prefetch_bytes(p + offsetof(sim_job, spec.submit_us), p + offsetof(sim_job, spec.attr));
    sim_prefetch_bytes(p + offsetof(sim_job, seq), p + sizeof(sim_job));
}

/* Free share and memory of GPU g. */
static inline uint32_t sim_view_gpu_free_milli(const sim_view *v, uint32_t g)
{
    return SIM_MILLI_GPU - v->gpu_used_milli[g];
}

static inline uint64_t sim_view_gpu_free_mem(const sim_view *v, uint32_t g)
{
    return v->gpu_mem_total[g] - v->gpu_used_mem[g];
}

/* Whether GPU type t is allowed for job j (mask 0 = any). */
static inline bool sim_job_type_ok(const sim_job *j, uint16_t t)
{
    return j->spec.gpu_type_mask == 0 || ((j->spec.gpu_type_mask >> t) & 1u);
}

static inline bool sim_job_is_running(const sim_job *j)
{
    return j->state == SIM_JOB_RUNNING;
}

/* Reference work done by job id at the view's time (seconds). */
double sim_view_work_done(const sim_view *v, sim_job_id id);
/* GPU-seconds of service attained by job id at the view's time. */
double sim_view_attained(const sim_view *v, sim_job_id id);
/* Reference work left (seconds). */
double sim_view_work_left(const sim_view *v, sim_job_id id);
/* What a GPU utilisation monitor (nvidia-smi, DCGM) reads for a running job: the share
 * of its first GPU it really uses, min(share held, its true demand on that GPU's type),
 * milli-GPU. 0 when the job is not running or holds no GPU. O(1). */
uint32_t sim_view_job_used_milli(const sim_view *v, sim_job_id id);
/* The share of one GPU of node n that job id uses alone (milli-GPU, 1..1000): the rate
 * model's demand for the node's GPU type, else the job's true_milli, else a whole GPU.
 * The core caps a job's speed on a GPU at min(1, share held / this). O(the hook). */
uint32_t sim_view_job_demand(const sim_view *v, sim_job_id id, uint32_t n);

/*
 * Whether one replica of job j fits node n at per-GPU share `milli` and GPU memory
 * `gpu_mem_mib` (node up, GPU type allowed, CPU and memory free, and enough GPUs with
 * that much free share and memory). O(GPUs of the node).
 */
bool sim_view_replica_fits(const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                           uint64_t gpu_mem_mib);

/*
 * Predicted interference of placing job id, holding `milli` of GPU g, beside the GPU's
 * current residents, under the run's rate model (sim/rate.h): the speed job id would
 * lose, (1 - its interference factor), plus, for each resident, the extra speed it
 * would lose. 0 when the run has no interference model or the GPU has no other
 * resident. O(residents^2) calls of the model; no allocation.
 */
double sim_view_interference_cost(const sim_view *v, sim_job_id id, uint32_t g, uint32_t milli);
/* Whether the run has an interference model (else every cost above is 0). */
bool sim_view_has_interference(const sim_view *v);

/* Speed of job id on one whole GPU of type t relative to its reference type, under the
 * run's rate model (its throughput term only; 1 when the run has none). > 0. O(1). */
double sim_view_type_speed(const sim_view *v, sim_job_id id, uint16_t t);
/* Speed of job id with n replicas relative to its nominal count, under the run's rate
 * model (its scaling hook; n / nominal without one; 0 for n = 0). O(the hook). */
double sim_view_scaling(const sim_view *v, sim_job_id id, uint32_t n);

/* ---- Decisions ---------------------------------------------------------------- */

typedef struct policy_decisions policy_decisions;

/*
 * A placement: `replicas` replicas, replica r on node nodes[r] using GPUs
 * gpus[r*gpus_per_replica .. (r+1)*gpus_per_replica) (global indices, all on that
 * node, distinct within the replica). gpus may be NULL for CPU-only jobs.
 */
typedef struct sim_placement {
    uint32_t replicas;
    const uint32_t *nodes;
    const uint32_t *gpus;
    uint32_t milli;       /* share of each GPU to hold; 0 = the job's request */
    uint64_t gpu_mem_mib; /* GPU memory to hold per GPU; UINT64_MAX = the job's request */
    /* A start of a job with a master and parameter servers (sim_job.n_roles > 0) places
     * them too: role r on node role_nodes[r], roles = n_roles. Read only for such jobs
     * (set them to 0 and NULL otherwise). */
    uint32_t roles;
    const uint32_t *role_nodes;
} sim_placement;

/* Start a pending job (all replicas at once, gang). replicas must equal the job's
 * nominal count unless the job is elastic (min_replicas..max_replicas). A job with a
 * master and parameter servers starts them in the same decision (p->role_nodes), and
 * holds them until it finishes, is preempted or loses a node. */
int sim_decide_start(policy_decisions *out, sim_job_id job, const sim_placement *p);
/* Stop a running or paused job and return it to the pending list. With checkpoint
 * its progress is kept; without, the work since its last periodic checkpoint is lost. */
int sim_decide_preempt(policy_decisions *out, sim_job_id job, bool checkpoint);
/* Change the share each of the job's GPUs holds (must fit on every one of them). */
int sim_decide_set_share(policy_decisions *out, sim_job_id job, uint32_t milli);
/* Add replicas to a running elastic job (p->replicas more, up to max_replicas), on GPUs
 * the job does not hold already (two replicas of a job never share a GPU). */
int sim_decide_grow(policy_decisions *out, sim_job_id job, const sim_placement *p);
/* Remove the job's last `count` replicas (keeping at least min_replicas). */
int sim_decide_shrink(policy_decisions *out, sim_job_id job, uint32_t count);
/* Scale in: remove the job's last `count` replicas (keeping at least min_replicas) and
 * restart it from its last periodic checkpoint, as a parameter-server job re-partitions
 * its trainers: the work since that checkpoint is lost (counted in the job's and the
 * summary's lost_work_s, and in the summary's scale-in loss). */
int sim_decide_scale_in(policy_decisions *out, sim_job_id job, uint32_t count);
/* Suspend progress while holding resources, and resume it. */
int sim_decide_pause(policy_decisions *out, sim_job_id job);
int sim_decide_resume(policy_decisions *out, sim_job_id job);
/* Multiply the job's model speed by f (> 0), e.g. interleaving efficiency. The factor the
 * job has already is no change: its progress is not brought up to date for it. */
int sim_decide_speed_factor(policy_decisions *out, sim_job_id job, double f);
/* Record the policy's predictions for the job (reported in jobs.csv; NaN = none). */
int sim_decide_predict(policy_decisions *out, sim_job_id job, double duration_s, double milli);
/* Give up on a pending job the policy can never run; reason goes to jobs.csv. */
int sim_decide_reject(policy_decisions *out, sim_job_id job, const char *reason);

#endif
