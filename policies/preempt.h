/*
 * preempt.h: the shared machinery of the preemptive priority policies (las, srtf, srsf,
 * gittins). At every scheduling point all jobs in the system are ordered by a priority
 * key that the policy supplies (smaller first); they are admitted in that order while
 * their GPU requests can be served together by the up GPUs (each from the types its job
 * accepts: Hall's condition, see hall in preempt.c; or by the free-GPU count alone);
 * running jobs not admitted are preempted; admitted pending
 * jobs are started in priority order on the most-allocated node and GPUs that fit.
 *
 * Cost: pending jobs sit in one binary heap per class (same GPU request and accepted
 * types), keyed by a priority that does not change while they wait (a policy changes it
 * through the engine: a due time, preempt_rekey_all). Running jobs sit in treaps by key
 * with the GPU request summed over each subtree; a policy whose running keys change only
 * at known times (next_change: las, gittins) has them re-keyed then, one at a time. A
 * policy whose running keys drift (srtf, srsf: the work left falls at the job's speed)
 * names the drift, the rate at which a running job's key falls; running jobs with the
 * same drift keep their order while they run, so they share a lane: a treap keyed by
 * key + drift x time, which no pass re-keys. A job is filed again only when the engine
 * logs a change of its speed (sim_view.speed_ring: when it starts, and under a rate
 * model when its neighbours change). Admission reads the lanes together, each at the
 * present time; its cost grows with the lanes in use (distinct drifts: GPU requests x
 * speeds, a few on most clusters). When every job accepts
 * every GPU type, or admission counts
 * free GPUs whatever their type, the capacity is one number, and admission merges the
 * heads of the class heaps with whole runs of running jobs at once: a run that fits is
 * admitted by its sum, and only from the first running job that does not fit on are
 * jobs visited one by one (those preempted, and the few that still fit behind them). A
 * pass then costs O(L + (A + C + K + V) M log n): A admitted, C classes, K preempted, V
 * running jobs still fitting behind the first that does not, L lanes, M of them with
 * jobs between two pending heads (after the first head a pass visits only the lanes
 * with jobs after the last head, and walks back only through those looked up); a class
 * that does not fit is dropped for the rest of the pass, since capacity only shrinks.
 * Admission reads each class's first jobs in key order, kept in an array beside its heap
 * (a job coming, going or re-keyed among them moves the array's tail), and merges the
 * classes by a heap of one entry each; a class read past its array gets one about twice
 * as long, read from its heap in order (a frontier of heap slots). So an admitted job
 * that finds no room costs O(log C), and only a job that starts leaves its heap.
 * With jobs tied to GPU types, each request is tested against the subsets of the T GPU
 * types up that hold the types it accepts (2^(T - types accepted) each, 2^T set up per
 * pass; T <= 10, else type by type). The running jobs are then filed by drift and by the
 * types they accept (a lane each), so the same admission by sums holds with that test
 * for the one number; where a lane mixes sets of types, admission walks every running
 * job in key order (O(R log L)).
 * Where the capacity is one number and keys do not drift, a pass that would decide
 * nothing is skipped, and after a finish that changes no admission only the last pass's
 * admitted jobs are placed: each pass records, per class it turned away, where and by
 * how much (see preempt_schedule).
 */
#ifndef POLICIES_PREEMPT_H
#define POLICIES_PREEMPT_H

#include "policies/place.h"

/* A priority: (k0, k1, k2), lexicographic, smaller first; k2 is the arrival order when
 * nothing else separates two jobs, so the order is total. */
typedef struct preempt_key {
    double k0;
    uint64_t k1;
    uint64_t k2;
} preempt_key;

/* One job in the system, kept in the job's policy state (policy_ops.job_state_size must
 * be sizeof(preempt_entry), or a struct starting with one). Its attained service is a0
 * at t0, growing at `rate` (GPUs held x share) while it runs: the engine starts and
 * preempts it, so it tracks the service without reading the job back. */
typedef struct preempt_entry {
    preempt_key key;  /* pending: as queued; running: as of the last pass */
    /* The fields a walk of the treap reads, together (one cache line or two). */
    uint64_t need;   /* milli-GPUs it holds when running */
    uint64_t tsum;   /* running: GPU requests summed over its subtree, milli-GPU */
    uint32_t tl, tr; /* running: children in the treap (job ids), or UINT32_MAX */
    uint32_t tprio;  /* treap priority, drawn from the arrival order */
    uint32_t lane;   /* running: its lane (its drift; see preempt_lane) */
    uint32_t rank;   /* running: its place in the one lane, as rekey_one_lane listed it */
    double a0;        /* attained GPU-seconds at t0 */
    double base;      /* policy's origin of service (las: service when last promoted) */
    double rate;      /* GPU-seconds per second while running, else 0 */
    sim_time t0;      /* when a0 was taken */
    sim_time waiting; /* when it last became pending */
    sim_time ran_us;  /* time run before t0 */
    sim_time due;     /* pending: when its key changes on its own (SIM_TIME_NEVER: never) */
    sim_time pend_us; /* policy's pending-time account (las mode=tiresias) */
    uint64_t seq;     /* arrival order */
    uint64_t mask;    /* GPU types it accepts (0 = any) */
    uint64_t pos;     /* policy's position counter (las mode=tiresias) */
    sim_job_id id;
    uint32_t cls;    /* its class */
    uint32_t slot;   /* its slot in the class heap while pending, else UINT32_MAX */
    uint32_t dslot;  /* its slot in the heap of due times, or UINT32_MAX */
    uint32_t rslot;  /* running: slot in the heap of key changes, or UINT32_MAX */
    sim_time rdue;   /* running: when its key changes (next_change) */
    uint32_t queue;  /* policy's queue (las) */
    uint8_t region;  /* policy's region in a queue (las mode=tiresias) */
    bool listed, running, started, requeued;
} preempt_entry;

/* The policy's part, called with its ctx. key: the priority of x at now (running or
 * pending; it may update the policy's fields of x, such as a queue). next_change
 * (optional): the first time after now at which a running x's key changes in a way that
 * needs a pass, else SIM_TIME_NEVER. due (optional): the same for a pending x, which the
 * engine then re-keys at that time. preempted (optional): x, the i-th of k jobs taken
 * off their GPUs at once in priority order (preempted by a pass, or requeued by a
 * failure), is pending now (its key already computed; the hook may change it).
 * pass_begin (optional): called at the start of a pass with the running jobs that the
 * last pass started or re-keyed, in key order; it may change their keys. started
 * (optional): pending x starts at now, before the engine marks it running. drift
 * (optional): the rate (key units per second) at which running x's key k0 falls while
 * its speed (sim_job.speed) stays as it is; NULL: running keys do not drift. */
typedef struct preempt_hooks {
    void (*key)(void *ctx, const sim_view *v, preempt_entry *x, sim_time now);
    sim_time (*next_change)(const void *ctx, const preempt_entry *x, sim_time now);
    sim_time (*due)(const void *ctx, const preempt_entry *x, sim_time now);
    void (*preempted)(void *ctx, preempt_entry *x, uint32_t i, uint32_t k);
    void (*pass_begin)(void *ctx, const sim_view *v, preempt_entry *const *run, uint32_t n);
    void (*started)(void *ctx, preempt_entry *x, sim_time now);
    double (*drift)(const void *ctx, const sim_view *v, const preempt_entry *x);
} preempt_hooks;

/* Running jobs of one drift, in a treap keyed by (key + rate x time in seconds) x 1e6:
 * the order of their present keys. Lane 0 has rate 0 (every running job of a policy without
 * drift, and a drifting one until its speed is known). Where admission is by GPU type
 * (not by_count), a lane also holds one set of accepted types (`mask`; lane 0 those
 * that accept any), so its sum is a request on that set (see admit_hall_sums): at most
 * PREEMPT_MASK_LANES such lanes holding jobs at once, beyond which a job goes to the lane
 * of its drift alone, mixed (n_mixed counts them). At most PREEMPT_RATE_LANES lanes of one
 * drift alone (lane 0 among them; the model zoo's speeds on two GPU types give about
 * 1,900 at once on the benchmark's cluster): a run whose running jobs come to have more
 * drifts at once puts them all in lane 0 with their keys as last read, for the rest of the
 * run, and re-reads at each pass those whose place may have changed (`one_lane`: the
 * running jobs at or after the first pending key, O(those) a pass). Lanes are found by
 * (rate, mask) in a hash table; an emptied lane keeps its drift until a new one takes it
 * over. A pass visits the lanes with jobs after its first pending key (`act`), not all. */
#define PREEMPT_RATE_LANES 65536
#define PREEMPT_MASK_LANES 65536
typedef struct preempt_lane {
    double rate;
    uint64_t mask; /* the GPU types its jobs accept (0: any, or mixed) */
    uint32_t root; /* or UINT32_MAX */
    uint32_t n;    /* its jobs */
    uint64_t pre;  /* pass scratch: its jobs' GPU requests before the last pending head */
    uint32_t succ; /* pass scratch: its first job at or after the last pending head */
    uint32_t cur;  /* pass scratch: the next job of a walk back */
    uint32_t lm;   /* pass scratch: its types as admit_hall_sums' bits */
    bool freed;    /* in the list of emptied lanes */
    /* Kept as jobs come and go (a rebuilt treap reads them again): its jobs' GPU requests
     * (0 while it holds none), and its last job (of the latest key) and that key; not
     * read in the one lane, whose keys change in place. */
    uint32_t last_id;
    uint64_t sum;
    preempt_key last;
} preempt_lane;

/* A running job and its key at the time of a pass (scratch of the walk). */
typedef struct preempt_walk {
    preempt_key key;
    preempt_entry *x;
} preempt_walk;

/* A pending job in its class heap: its key (as in its state), id and engine shape
 * (sim_job.shape, which stays while the job is pending). */
typedef struct preempt_slot {
    preempt_key key;
    sim_job_id id;
    uint32_t shape;
} preempt_slot;

/* An admitted pending job's engine shape and the next admitted one of that shape (an
 * index into preempt_sched.adm, or UINT32_MAX). */
typedef struct preempt_link {
    uint32_t shape, next;
} preempt_link;

typedef struct preempt_class {
    uint64_t need, mask;
    preempt_slot *heap; /* pending jobs of the class, by key */
    uint32_t n, cap;
    uint32_t members; /* jobs of the class in the system (the heap's room) */
    /* Its first pending jobs by key, in order: first[0..n_first) are its n_first
     * smallest (kept as jobs come, go and are re-keyed; made longer when a pass reads
     * past them). */
    preempt_slot *first;
    uint32_t n_first, first_cap;
    uint32_t cur; /* pass scratch: the next of first[] in line */
} preempt_class;

/* A class in line in a pass: its next pending job's key. */
typedef struct preempt_front {
    preempt_key key;
    uint32_t cls;
} preempt_front;

/* A slot of a class heap and its key (scratch of an in-order read of the heap). */
typedef struct preempt_hslot {
    preempt_key key;
    uint32_t slot;
} preempt_hslot;

/* A pending job that found no room in a pass: its key and the milli-GPUs it lacked. */
typedef struct preempt_miss {
    preempt_key key;
    uint64_t short_by;
    uint32_t cls;
} preempt_miss;

typedef struct preempt_sched {
    place_ws ws;
    const preempt_hooks *hooks;
    void *ctx;
    bool checkpoint; /* preempt with a checkpoint */
    bool by_count;   /* admit by the count of free GPUs, whatever their type */
    preempt_class *cls;
    uint32_t n_cls, cls_cap;
    preempt_lane *lane;        /* the running jobs, by drift (lane 0: none); lane_cap of them */
    uint32_t n_lane, lane_cap; /* lanes 0..n_lane-1 have a drift */
    uint32_t *lane_table;      /* lanes past 0 by (rate, mask), open addressing; NONE: free */
    uint32_t lane_slots;       /* the table's length, a power of two over 2 x lane_cap */
    uint32_t *lane_free;       /* lanes past 0 emptied (freed), to take over; lane_cap */
    uint32_t n_free;
    uint32_t lanes_used[2]; /* lanes past 0 holding jobs: of any type, of one set of types */
    uint64_t run_need;      /* the lanes' sums together, milli-GPUs (not kept in the one lane) */
    uint32_t *act;          /* pass scratch: lanes with jobs after the last pending head */
    uint32_t *moved;        /* pass scratch: lanes with jobs between the last two heads */
    uint32_t n_act, n_moved;
    bool one_lane; /* too many drifts: every running job in lane 0, keys as last read */
    uint32_t one_lane_skip; /* re-keyings of the one lane left to rebuild it without
                             * looking for the jobs that moved (see rekey_one_lane) */
    uint64_t speed_seen; /* the view's speed_epoch as of the last pass */
    double now_us;       /* the pass's time in microseconds */
    preempt_walk *walk;  /* scratch: running jobs in the order of a walk ... */
    preempt_walk *walk2; /* ... and room to sort them */
    uint32_t walk_cap, walk2_cap;
    uint32_t n_run;    /* running jobs */
    sim_job_id *rheap; /* running jobs with a key change ahead, by its time */
    uint32_t n_rdue, rdue_cap;
    sim_job_id *fresh; /* running jobs started or re-keyed by the last pass */
    uint32_t n_fresh, fresh_cap;
    sim_job_id *req; /* running jobs a failure requeued since the last pass */
    uint32_t n_req, req_cap;
    uint32_t n_masked; /* jobs in the system tied to GPU types */
    uint32_t n_mixed;  /* running jobs tied to GPU types in a lane of any type (preempt_lane) */
    sim_job_id *adm;   /* scratch: admitted pending jobs of a pass, in order ... */
    preempt_link *adm_link; /* ... with their shapes, linked shape by shape */
    sim_job_id *pre;        /* scratch: running jobs to preempt, in order ... */
    uint64_t *pre_short;    /* ... and the milli-GPUs each lacked (admit_sums only) */
    uint32_t adm_cap, adm_link_cap, pre_cap, pre_short_cap;
    preempt_entry **sorted; /* scratch: running entries in key order */
    uint32_t sorted_cap;
    preempt_front *front; /* scratch: the classes in line in a pass, a heap by key */
    uint32_t n_front, front_cap;
    preempt_hslot *hread; /* scratch: frontier of an in-order read of a class heap */
    uint32_t hread_cap;
    uint32_t n_sys;    /* jobs in the system */
    sim_job_id *dheap; /* pending jobs with a due time, by due time */
    uint32_t n_due, due_cap;
    uint32_t *shape_first; /* per shape id: its first admitted pending entry, or NONE */
    uint32_t shape_cap;
    place_order order;
    sim_time now;     /* of the pass in progress, SIM_TIME_NEVER before any */
    sim_time wake_at; /* the earliest change after the last pass */
    uint64_t cap_epoch; /* view's up_epoch when cap_left was summed (UINT64_MAX: never) */
    uint64_t cap_left[SIM_MAX_GPU_TYPES], cap_types; /* the up GPUs (see up_capacity) */
    /* A pass made right after the last one would decide nothing, and since it nothing
     * has come, gone or changed a node (at change_epoch settled_change): see
     * preempt_schedule. */
    bool settled;
    uint64_t settled_change;
    bool place_only; /* jobs finished since, none changing the admissions (finish_keeps) */
    bool rekey_running; /* preempt_rekey_all left the running jobs to the pass */
    /* The classes the last full pass found no room for, each at its first job that did
     * not fit, with the milli-GPUs it lacked (n_miss = UINT32_MAX: not recorded). */
    preempt_miss *miss;
    uint32_t n_miss, miss_cap;
    uint32_t n_started; /* jobs the pass in progress started */
    bool oom;
} preempt_sched;

/* Set up the engine for a policy's hooks and ctx (borrowed). SIM_OK or SIM_ENOMEM. */
int preempt_init(preempt_sched *s, const policy_config *cfg, const preempt_hooks *h, void *ctx,
                 bool checkpoint, sim_diag *d);
void preempt_fini(preempt_sched *s);

static inline preempt_entry *preempt_entry_of(const sim_view *v, sim_job_id id)
{
    return sim_view_job_state(v, id);
}

/* Attained GPU-seconds of x at now, as the engine tracks it. */
static inline double preempt_attained(const preempt_entry *x, sim_time now)
{
    return x->a0 + x->rate * (double)(now - x->t0) / 1e6;
}

/* Whether a's key comes before b's. */
static inline bool preempt_before(const preempt_key *a, const preempt_key *b)
{
    if (a->k0 != b->k0)
        return a->k0 < b->k0;
    if (a->k1 != b->k1)
        return a->k1 < b->k1;
    return a->k2 < b->k2;
}

/* Use the walk over every running job even where the capacity is one number (false), or
 * not (true, the default), for every engine of the process: to compare the two in tests
 * and benchmarks. */
void preempt_fast_enable(bool on);

/* Skip the admission and placement of a pass that would decide nothing (true, the
 * default), or make every pass (false), for every engine of the process: to test the
 * two against each other. */
void preempt_settled_enable(bool on);

/* Passes skipped so, over the process (for tests). */
uint64_t preempt_settled_skips(void);

/* Leave the running jobs of preempt_rekey_all to the next pass, which re-keys them only
 * when not every job fits (true, the default), or re-key them at once (false), for every
 * engine of the process: to test the two against each other. */
void preempt_lazy_rekey_enable(bool on);

/* Re-keys of the running jobs so left to a pass, and of those the passes made because
 * not every job fitted, since the process started; for tests. */
uint64_t preempt_rekeys_left(void);
uint64_t preempt_rekeys_late(void);

/* Passes whose admission by GPU type was decided without the walk over every running
 * job (see preempt_schedule), over the process (for tests). */
uint64_t preempt_hall_fast_passes(void);

/* Running jobs that the one-lane path (more drifts than lanes) moved in its treap by
 * erasing and inserting them, where the others kept their places, since the process
 * started; for tests. */
uint64_t preempt_one_lane_moves(void);

/* Runs that came to have more drifts at once than lanes (and went to the one lane),
 * since the process started; for tests. */
uint64_t preempt_one_lane_runs(void);

/* Lanes emptied and taken over by a new drift (or set of types), and passes by GPU type
 * that walked every running job because some were in a lane of mixed types (more sets of
 * types than PREEMPT_MASK_LANES), since the process started; for tests. */
uint64_t preempt_lane_takeovers(void);
uint64_t preempt_mixed_passes(void);

/* At most n lanes of one drift and one set of types (1 <= n <= PREEMPT_MASK_LANES; other
 * values restore PREEMPT_MASK_LANES), for every engine of the process: for tests of the
 * lanes of mixed types. */
void preempt_mask_lanes_set(uint32_t n);

/* Read the engine's speed log (true, the default), or file every running job again at
 * every pass (false), for every engine of the process: to test the two in tests. */
void preempt_speed_log_enable(bool on);

/* At most n lanes of one drift alone (2 <= n <= PREEMPT_RATE_LANES; other values restore
 * PREEMPT_RATE_LANES), for every engine of the process: for tests of the one lane with
 * fewer drifts than the lanes hold. */
void preempt_rate_lanes_set(uint32_t n);

/* Check at every pass, for every engine of the process, that each class's first jobs
 * (preempt_class.first) are its smallest in key order, as read afresh from its heap
 * (true), or not (false, the default): for tests. preempt_first_checked counts the
 * classes checked, preempt_first_errors those found wrong (then set right). */
void preempt_first_check_enable(bool on);
uint64_t preempt_first_checked(void);
uint64_t preempt_first_errors(void);
/* With the same check, the passes that found a lane's sum, or the count of jobs in lanes
 * of mixed types, different from their treaps' (for tests). */
uint64_t preempt_lane_errors(void);

/* The policy_ops hooks, for a policy whose state starts with a preempt_sched. The tables
 * grow at new peaks only; a failure to grow ends the next pass with SIM_ENOMEM. */
void preempt_on_arrival(void *st, const sim_view *v, sim_job_id id);
void preempt_on_finish(void *st, const sim_view *v, sim_job_id id);
void preempt_on_requeue(void *st, const sim_view *v, sim_job_id id);
int preempt_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out);
sim_time preempt_next_wakeup(const void *st, const sim_view *v, sim_time now);

/* Re-key every job (the policy's keys changed as a whole), for a policy without drift.
 * O(P + R log R). Where admission counts free GPUs and keys change only here, the running
 * jobs are re-keyed by the next pass, and only when not every job fits (their order then
 * decides nothing). */
void preempt_rekey_all(preempt_sched *s, const sim_view *v, sim_time now);

#endif
