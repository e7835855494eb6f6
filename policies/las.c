/*
 * las.c: Tiresias' discretised two-dimensional least-attained-service (Gu et al.,
 * "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, §4.1), which
 * needs no job durations. A job's attained service is its GPU time so far (GPUs x share
 * x seconds: the spatial and the temporal dimension). Thresholds on it split the jobs
 * into priority queues, the least served first; within a queue, jobs go by arrival.
 *
 * At every scheduling point (each arrival and departure, and the moment a running job
 * crosses its queue's threshold) the policy walks all jobs, running and pending, in
 * priority order and admits
 * each whose GPU request still fits the capacity of the up GPUs of the types it accepts
 * (a greedy count, by type). Running jobs not admitted are preempted (with a checkpoint
 * by default); admitted pending jobs are started, in order, on the most-allocated node
 * and GPUs that fit, if any fit. With `starve` > 0, a pending job that has waited since
 * it last queued for more than `starve` times the time it has run goes back to the
 * first queue, its service counted from zero again (Tiresias' guard against starvation).
 */
#include "policies/place.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAS_MAX_QUEUES 16
#define NONE UINT32_MAX

/* One job in the system. Its attained service is a0 at t0, growing at rate (GPUs held x
 * share) while it runs: the policy itself starts and preempts, so it tracks this without
 * reading the job back, and a pass touches these compact records only. */
typedef struct las_entry {
    double a0;          /* attained GPU-seconds at t0 */
    double promoted;    /* attained GPU-seconds when last promoted (queues count from it) */
    double rate;        /* GPU-seconds per second while running, else 0 */
    sim_time t0;        /* when a0 was taken */
    sim_time waiting;   /* when it last became pending */
    sim_time ran_us;    /* time run before t0 (for the starvation guard) */
    uint64_t seq;       /* arrival order */
    uint64_t need;      /* milli-GPUs it holds when running */
    uint64_t mask;      /* GPU types it accepts (0 = any) */
    sim_job_id id;
    uint32_t queue;
    uint32_t next;      /* next admitted pending entry of the same shape, or NONE */
    bool running, started, admitted;
} las_entry;

/* Per-job policy state: seq + 1 while the job has an entry (0 = none: the core zeroes
 * it at arrival), and whether the core requeued it behind the policy's back. */
typedef struct las_job {
    uint64_t listed;
    bool requeued;
} las_job;

typedef struct las_state {
    place_ws ws;
    double thr[LAS_MAX_QUEUES - 1]; /* GPU-seconds, increasing */
    uint32_t n_thr;
    bool checkpoint;
    double starve;
    las_entry *e; /* every job in the system, in the last pass's priority order */
    uint32_t n, cap;
    uint32_t *shape_first; /* per shape id: its first admitted pending entry, or NONE */
    uint32_t shape_cap;
    place_order order;
    sim_time now; /* of the pass in progress */
    sim_time wake_at; /* the earliest next_change after the last pass, at now */
    bool oom;
} las_state;

static const policy_option las_options[] = {
    {"thresholds", "3600,36000",
     "attained GPU-seconds that move a job to the next queue, increasing, comma-separated"},
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {"starve", "0", "a job waiting longer than this times its run time returns to the first "
                    "queue (0: never)"},
    {NULL, NULL, NULL},
};

static int parse_thresholds(las_state *s, const char *text, sim_diag *d)
{
    s->n_thr = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        double x;
        /* A trailing comma is an empty number, not the end of the list. */
        bool trailing = p[len] == ',' && p[len + 1] == '\0';
        if (s->n_thr == LAS_MAX_QUEUES - 1 || !csvin_parse_double(p, len, &x) || !(x > 0) ||
            x > 1e15 || (s->n_thr && x <= s->thr[s->n_thr - 1]) || trailing)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "policy 'las': option 'thresholds': expected up to %d increasing "
                                "positive numbers separated by commas, got \"%s\"",
                                LAS_MAX_QUEUES - 1, text);
        s->thr[s->n_thr++] = x;
        p += len + (p[len] == ',');
    }
    return SIM_OK;
}

static las_job *job_of(const sim_view *v, sim_job_id id)
{
    return sim_view_job_state(v, id);
}

static double attained(const las_entry *x, sim_time now)
{
    return x->a0 + x->rate * (double)(now - x->t0) / 1e6;
}

/* x stops running (or is made to wait again) at now, with a GPU-seconds attained. */
static void stop(las_entry *x, double a, sim_time now)
{
    if (x->running)
        x->ran_us += now - x->t0;
    x->a0 = a;
    x->t0 = x->waiting = now;
    x->rate = 0;
    x->running = false;
}

/* The queue of service a (GPU-seconds counted for the queues): thresholds passed. */
static uint32_t queue_for(const las_state *s, double a)
{
    uint32_t q = 0;
    while (q < s->n_thr && a >= s->thr[q])
        q++;
    return q;
}

/* When x could next change queue: a running job reaching its next threshold, a waiting
 * one reaching its starvation limit; SIM_TIME_NEVER when neither can happen. */
static sim_time next_change(const las_state *s, const las_entry *x, sim_time now)
{
    if (x->running && x->rate > 0) {
        double a = attained(x, now) - x->promoted;
        uint32_t q = queue_for(s, a);
        if (q == s->n_thr)
            return SIM_TIME_NEVER;
        /* The first microsecond at which the threshold is reached (never now: a rounding
         * that leaves it just short retries a microsecond later). */
        double dt_us = ceil((s->thr[q] - a) / x->rate * 1e6);
        return now + (dt_us < 1 ? 1 : dt_us < 1e15 ? (sim_time)dt_us : (sim_time)1e15);
    }
    if (s->starve > 0 && x->started && !x->running) {
        /* In double: starve x run time can pass the range of sim_time. */
        double t = (double)x->waiting + s->starve * (double)x->ran_us + 1;
        return t > (double)now && t < 9e18 ? (sim_time)t : SIM_TIME_NEVER;
    }
    return SIM_TIME_NEVER;
}

/* The admitted pending jobs in priority order, per shape, for the placement pass. */
static sim_job_id las_head(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key,
                           uint64_t *key2)
{
    (void)v;
    const las_state *s = ctx;
    uint32_t i = shape < s->shape_cap ? s->shape_first[shape] : NONE;
    if (i == NONE)
        return SIM_JOB_NONE;
    *key = i;
    *key2 = 0;
    return s->e[i].id;
}

static void las_started(void *ctx, const sim_view *v, uint32_t shape, sim_job_id id)
{
    (void)v;
    (void)id;
    las_state *s = ctx;
    las_entry *x = &s->e[s->shape_first[shape]];
    s->shape_first[shape] = x->next;
    x->t0 = s->now;
    x->rate = (double)x->need / SIM_MILLI_GPU;
    x->running = x->started = true;
    sim_time t = next_change(s, x, s->now);
    if (t < s->wake_at)
        s->wake_at = t;
}

static int las_init(void *st, const policy_config *cfg, sim_diag *d)
{
    las_state *s = st;
    int rc;
    if ((rc = parse_thresholds(s, policy_config_get(cfg, las_options, "thresholds"), d)) ||
        (rc = policy_config_bool(cfg, las_options, "checkpoint", &s->checkpoint, d)) ||
        (rc = policy_config_double(cfg, las_options, "starve", 0, 1e9, &s->starve, d)))
        return rc;
    s->order = (place_order){.head = las_head, .started = las_started, .ctx = s};
    s->now = SIM_TIME_NEVER; /* no pass yet */
    return place_ws_init(&s->ws, cfg, d);
}

static void las_fini(void *st)
{
    las_state *s = st;
    sim_free(s->e);
    sim_free(s->shape_first);
    place_ws_fini(&s->ws);
}

/* A new job gets an entry; the tables grow at new peaks only. */
static void las_arrival(void *st, const sim_view *v, sim_job_id id)
{
    las_state *s = st;
    if (s->n == s->cap) {
        uint32_t ncap = s->cap ? s->cap * 2 : 64;
        las_entry *ne = sim_reallocarray(s->e, ncap, sizeof *ne);
        if (!ne) {
            s->oom = true;
            return;
        }
        s->e = ne;
        s->cap = ncap;
    }
    if (v->n_shapes > s->shape_cap) {
        uint32_t ncap = s->shape_cap ? s->shape_cap : 64;
        while (ncap < v->n_shapes)
            ncap *= 2;
        uint32_t *nf = sim_reallocarray(s->shape_first, ncap, sizeof *nf);
        if (!nf) {
            s->oom = true;
            return;
        }
        s->shape_first = nf;
        s->shape_cap = ncap;
    }
    const sim_job *j = sim_view_job(v, id);
    s->e[s->n++] = (las_entry){
        .t0 = v->now,
        .waiting = v->now,
        .seq = j->seq,
        .need = (uint64_t)j->nominal_replicas * j->gpus_per_replica * j->spec.gpu_milli,
        .mask = j->spec.gpu_type_mask,
        .id = id,
    };
    job_of(v, id)->listed = j->seq + 1;
}

static void las_finish(void *st, const sim_view *v, sim_job_id id)
{
    (void)st;
    job_of(v, id)->listed = 0;
}

/* A failed node sent the job back to the queue: the next pass reads it again. */
static void las_requeue(void *st, const sim_view *v, sim_job_id id)
{
    (void)st;
    job_of(v, id)->requeued = true;
}

/* The queue of x now. A starving job is promoted: its service counts from zero again
 * for the queues, so it stays in the first queue until it has run a threshold's worth. */
static uint32_t queue_of(const las_state *s, las_entry *x, sim_time now)
{
    if (s->starve > 0 && !x->running && x->started &&
        (double)(now - x->waiting) > s->starve * (double)x->ran_us)
        x->promoted = attained(x, now);
    return queue_for(s, attained(x, now) - x->promoted);
}

static bool before(const las_entry *a, const las_entry *b)
{
    return a->queue < b->queue || (a->queue == b->queue && a->seq < b->seq);
}

/* Drop the jobs that left, resynchronise the requeued ones, compute every queue, and
 * sort by (queue, arrival). The last pass's order is kept and arrivals are appended,
 * so an insertion sort costs O(jobs + moves): between two passes only a few jobs arrive
 * or change queue. */
static uint32_t prioritise(las_state *s, const sim_view *v, sim_time now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        las_entry x = s->e[i];
        las_job *pj = job_of(v, x.id);
        if (pj->listed != x.seq + 1)
            continue; /* finished (or its id already reused) */
        if (pj->requeued) {
            stop(&x, sim_view_attained(v, x.id), now);
            pj->requeued = false;
        }
        x.queue = queue_of(s, &x, now);
        s->e[n++] = x;
    }
    for (uint32_t i = 1; i < n; i++) {
        las_entry x = s->e[i];
        uint32_t k = i;
        while (k > 0 && before(&x, &s->e[k - 1])) {
            s->e[k] = s->e[k - 1];
            k--;
        }
        s->e[k] = x;
    }
    s->n = n;
    return n;
}

/* What is left of the up GPUs' capacity, per type, in milli-GPU; `types` has a bit for
 * each type with some left. */
typedef struct las_capacity {
    uint64_t left[SIM_MAX_GPU_TYPES];
    uint64_t types;
} las_capacity;

/* Admit x if its GPU request fits what is left of the capacity of the types it accepts,
 * taking it from those types in type order. O(types with capacity left). */
static bool admit(las_capacity *c, const las_entry *x)
{
    uint64_t need = x->need;
    if (need == 0)
        return true;
    uint64_t usable = c->types & (x->mask ? x->mask : ~UINT64_C(0));
    uint64_t have = 0;
    for (uint64_t m = usable; m && have < need; m &= m - 1)
        have += c->left[__builtin_ctzll(m)];
    if (have < need)
        return false;
    for (uint64_t m = usable; need; m &= m - 1) {
        int t = __builtin_ctzll(m);
        uint64_t take = c->left[t] < need ? c->left[t] : need;
        c->left[t] -= take;
        need -= take;
        if (!c->left[t])
            c->types &= ~(UINT64_C(1) << t);
    }
    return true;
}

static int las_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    las_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    uint32_t n = prioritise(s, v, now);
    las_capacity cap = {.types = 0};
    for (uint32_t nd = 0; nd < v->n_nodes; nd++)
        if (v->node_up[nd] && v->node_gpu_count[nd] && v->node_gpu_type[nd] > 0 &&
            v->node_gpu_type[nd] < SIM_MAX_GPU_TYPES) {
            cap.left[v->node_gpu_type[nd]] += (uint64_t)v->node_gpu_count[nd] * SIM_MILLI_GPU;
            cap.types |= UINT64_C(1) << v->node_gpu_type[nd];
        }
    for (uint32_t i = 0; i < n; i++)
        s->e[i].admitted = admit(&cap, &s->e[i]);
    /* Preemptions first, so the jobs admitted in their place find the room. The next
     * wakeup is gathered on the way (and from the jobs started below). */
    s->now = now;
    s->wake_at = SIM_TIME_NEVER;
    for (uint32_t i = 0; i < n; i++) {
        las_entry *x = &s->e[i];
        if (!x->admitted && x->running) {
            int rc = sim_decide_preempt(out, x->id, s->checkpoint);
            if (rc != SIM_OK)
                return rc;
            stop(x, attained(x, now), now);
        }
        sim_time t = next_change(s, x, now);
        if (t < s->wake_at)
            s->wake_at = t;
    }
    /* Start the admitted pending jobs in priority order: the shared pass tries one job
     * per shape at a time and drops a shape at its first failure. */
    for (uint32_t k = 0; k < v->n_active_shapes; k++)
        if (v->active_shapes[k] < s->shape_cap)
            s->shape_first[v->active_shapes[k]] = NONE;
    for (uint32_t i = n; i-- > 0;) {
        las_entry *x = &s->e[i];
        if (!x->admitted || x->running)
            continue;
        uint32_t shape = sim_view_job(v, x->id)->shape;
        if (shape >= s->shape_cap)
            continue;
        x->next = s->shape_first[shape];
        s->shape_first[shape] = i;
    }
    return place_pass_run_ordered(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                                  PLACE_GPU_MOST_USED, false, &s->order);
}

/* The next moment the order can change: a running job crossing its queue's threshold,
 * or a waiting job reaching its starvation limit. Between those, only arrivals and
 * departures change anything, and they call schedule() anyway. */
static sim_time las_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)v;
    const las_state *s = st;
    if (now == s->now)
        return s->wake_at; /* gathered by the pass just made */
    sim_time next = SIM_TIME_NEVER;
    for (uint32_t i = 0; i < s->n; i++) {
        sim_time t = next_change(s, &s->e[i], now);
        if (t < next)
            next = t;
    }
    return next;
}

const policy_ops policy_las = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "las",
    .summary = "Tiresias discretised 2D least-attained-service: priority queues by GPU time "
               "received, FIFO within a queue, preemptive",
    .state_size = sizeof(las_state),
    .job_state_size = sizeof(las_job),
    .options = las_options,
    .init = las_init,
    .fini = las_fini,
    .on_arrival = las_arrival,
    .on_finish = las_finish,
    .on_requeue = las_requeue,
    .schedule = las_schedule,
    .next_wakeup = las_wakeup,
};
