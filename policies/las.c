/*
 * las.c: Tiresias' discretised two-dimensional least-attained-service (Gu et al.,
 * "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, §4.1), which
 * needs no job durations. A job's attained service is its GPU time so far (GPUs x share
 * x seconds: the spatial and the temporal dimension). Thresholds on it split the jobs
 * into priority queues, the least served first; within a queue, jobs go by arrival.
 *
 * At every scheduling point (each arrival and departure, and the moment a running job
 * crosses its queue's threshold) the jobs, running and pending, are admitted in priority
 * order while their GPU request fits the capacity of the up GPUs of the types they
 * accept (a greedy count, by type); running jobs not admitted are preempted (with a
 * checkpoint by default); admitted pending jobs are started, in order, on the
 * most-allocated node and GPUs that fit, if any fit (policies/preempt.c does the pass).
 * With `starve` > 0, a pending job that has waited since it last queued for more than
 * `starve` times the time it has run goes back to the first queue, its service counted
 * from zero again (Tiresias' guard against starvation).
 *
 * mode=tiresias runs the discretised 2D-LAS as the Tiresias and Muri simulators do
 * (github.com/SymbioticLab/Tiresias and Rivendile/Muri, simulator/run_sim.py,
 * dlas_sim_jobs with gputime): each queue is a list; arrivals, demoted and promoted jobs
 * go to its tail; a running job moves down at most one queue per scheduling point;
 * admission counts free GPUs whatever their type; after each pass the pending jobs of a
 * queue move behind its running ones, keeping their order; the starvation guard counts
 * the time pending since the job last ran from the first queue, against `starve` times
 * its run time since then (seconds, not GPU-seconds).
 */
#include "policies/preempt.h"

#include "base/csvin.h"

#include <math.h>
#include <string.h>

#define LAS_MAX_QUEUES 16
/* Positions of the tiresias mode: the tail of a queue counts up from here, the head of
 * its pending part down, so the two never meet. */
#define LAS_POS_ORIGIN (UINT64_C(1) << 62)
#define LAS_REGION_BIT (UINT64_C(1) << 63)

typedef struct las_state {
    preempt_sched sched;            /* first: the engine's hooks take the state */
    double thr[LAS_MAX_QUEUES - 1]; /* GPU-seconds, increasing */
    uint32_t n_thr;
    double starve;
    bool tiresias;
    uint64_t back, front; /* tiresias: next tail position, last head position */
} las_state;

static const char *const las_modes[] = {"default", "tiresias", NULL};

static const policy_option las_options[] = {
    {"thresholds", "3600,36000",
     "attained GPU-seconds that move a job to the next queue, increasing, comma-separated "
     "(mode=tiresias: 3250,7200 unless given, the simulators' queue_limit)"},
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {"starve", "0",
     "a job waiting longer than this times its run time returns to the first "
     "queue (0: never)"},
    {"mode", "default",
     "default: admission by GPU type, arrival order within a queue; tiresias: the Tiresias "
     "and Muri simulators' 2D-LAS (admission by free-GPU count, running jobs ahead of "
     "pending ones within a queue, one demotion per scheduling point)"},
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

/* The queue of service a (GPU-seconds counted for the queues): thresholds passed. */
static uint32_t queue_for(const las_state *s, double a)
{
    uint32_t q = 0;
    while (q < s->n_thr && a >= s->thr[q])
        q++;
    return q;
}

/* Seconds run since the job last entered the first queue (tiresias mode). */
static double executed_s(const preempt_entry *x, sim_time now)
{
    return x->need ? (preempt_attained(x, now) - x->base) * SIM_MILLI_GPU / (double)x->need : 0;
}

static void tiresias_key(las_state *s, preempt_entry *x, sim_time now)
{
    double a = preempt_attained(x, now) - x->base;
    if (x->pos == 0) { /* arrival: the tail of the first queue */
        x->region = 1;
        x->pos = ++s->back;
    } else if (x->running) {
        if (x->queue < s->n_thr && a >= s->thr[x->queue]) {
            x->queue++;
            x->region = 1;
            x->pos = ++s->back;
        }
    } else if (s->starve > 0 && x->queue > 0 && now > x->waiting) {
        double e = executed_s(x, now);
        if (e > 0 && (double)(x->pend_us + (now - x->waiting)) >= s->starve * e * 1e6) {
            x->base = preempt_attained(x, now);
            x->pend_us = 0;
            x->queue = 0;
            x->region = 1;
            x->pos = ++s->back;
        }
    }
    x->key = (preempt_key){(double)x->queue, (x->region ? LAS_REGION_BIT : 0) | x->pos, x->seq};
}

static void las_key(void *ctx, const sim_view *v, preempt_entry *x, sim_time now)
{
    (void)v;
    las_state *s = ctx;
    if (s->tiresias) {
        tiresias_key(s, x, now);
        return;
    }
    /* A starving job is promoted: its service counts from zero again for the queues, so
     * it stays in the first queue until it has run a threshold's worth. */
    if (s->starve > 0 && !x->running && x->started &&
        (double)(now - x->waiting) > s->starve * (double)x->ran_us)
        x->base = preempt_attained(x, now);
    x->queue = queue_for(s, preempt_attained(x, now) - x->base);
    x->key = (preempt_key){(double)x->queue, 0, x->seq};
}

/* When a running x reaches the next threshold: the first microsecond at which its
 * service, as computed at that microsecond, has reached it (so the queue read at any
 * later time agrees), never now. */
static sim_time las_next_change(const void *ctx, const preempt_entry *x, sim_time now)
{
    const las_state *s = ctx;
    if (!(x->rate > 0))
        return SIM_TIME_NEVER;
    double a = preempt_attained(x, now) - x->base;
    uint32_t q = s->tiresias ? x->queue : queue_for(s, a);
    if (q >= s->n_thr)
        return SIM_TIME_NEVER;
    double dt_us = ceil((s->thr[q] - a) / x->rate * 1e6);
    if (!(dt_us < 1e15))
        return now + (sim_time)1e15;
    sim_time t = now + (dt_us < 1 ? 1 : (sim_time)dt_us);
    while (t > now + 1 && preempt_attained(x, t - 1) - x->base >= s->thr[q])
        t--;
    while (preempt_attained(x, t) - x->base < s->thr[q])
        t++;
    return t;
}

/* When a pending x reaches its starvation limit. */
static sim_time las_due(const void *ctx, const preempt_entry *x, sim_time now)
{
    const las_state *s = ctx;
    if (!(s->starve > 0) || !x->started)
        return SIM_TIME_NEVER;
    if (s->tiresias) {
        double e = executed_s(x, now);
        if (x->queue == 0 || !(e > 0))
            return SIM_TIME_NEVER;
        double t = (double)x->waiting + ceil(s->starve * e * 1e6 - (double)x->pend_us);
        return t <= (double)now ? now + 1 : t < 9e18 ? (sim_time)t : SIM_TIME_NEVER;
    }
    /* The first microsecond at which las_key's test, now - waiting > starve x ran_us,
     * holds; once it held the job was promoted, and nothing is due until it runs again.
     * In double: starve x run time can pass the range of sim_time. */
    double lim = s->starve * (double)x->ran_us;
    if (!(lim < 9e18))
        return SIM_TIME_NEVER;
    sim_time k = (sim_time)floor(lim) + 1;
    if (k > SIM_TIME_NEVER - 1 - x->waiting)
        return SIM_TIME_NEVER;
    return x->waiting + k > now ? x->waiting + k : SIM_TIME_NEVER;
}

/* Tiresias mode: after the last pass, the running jobs of each queue stand ahead of its
 * pending ones, in their order: those still at the tail take the next positions. */
static void las_pass_begin(void *ctx, const sim_view *v, preempt_entry *const *run, uint32_t n)
{
    (void)v;
    las_state *s = ctx;
    for (uint32_t i = 0; i < n; i++)
        if (run[i]->region) {
            run[i]->region = 0;
            run[i]->pos = ++s->back;
            run[i]->key.k1 = run[i]->pos;
        }
}

/* Tiresias mode: jobs preempted from the running part of a queue head its pending part,
 * in their order, ahead of those already pending. */
static void las_preempted(void *ctx, preempt_entry *x, uint32_t i, uint32_t k)
{
    las_state *s = ctx;
    if (!x->region) {
        x->region = 1;
        x->pos = s->front - k + i;
        x->key.k1 = LAS_REGION_BIT | x->pos;
    }
    if (i + 1 == k)
        s->front -= k;
}

static void las_started(void *ctx, preempt_entry *x, sim_time now)
{
    (void)ctx;
    if (executed_s(x, x->t0) > 0)
        x->pend_us += now - x->waiting;
}

static const preempt_hooks las_hooks = {
    .key = las_key,
    .next_change = las_next_change,
    .due = las_due,
};

static const preempt_hooks las_tiresias_hooks = {
    .key = las_key,
    .next_change = las_next_change,
    .due = las_due,
    .preempted = las_preempted,
    .pass_begin = las_pass_begin,
    .started = las_started,
};

/* Whether the user gave option key. */
static bool given(const policy_config *cfg, const char *key)
{
    for (uint32_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->key[i], key) == 0)
            return true;
    return false;
}

static int las_init(void *st, const policy_config *cfg, sim_diag *d)
{
    las_state *s = st;
    bool checkpoint;
    int mode, rc;
    if ((rc = policy_config_choice(cfg, las_options, "mode", las_modes, &mode, d)))
        return rc;
    s->tiresias = mode == 1;
    /* The simulators' queue_limit (3250, 7200, 18000 with three queues: the last limit is
     * never read) is mode=tiresias's default. */
    const char *thr = policy_config_get(cfg, las_options, "thresholds");
    if (s->tiresias && !given(cfg, "thresholds"))
        thr = "3250,7200";
    if ((rc = parse_thresholds(s, thr, d)) ||
        (rc = policy_config_bool(cfg, las_options, "checkpoint", &checkpoint, d)) ||
        (rc = policy_config_double(cfg, las_options, "starve", 0, 1e9, &s->starve, d)))
        return rc;
    s->back = s->front = LAS_POS_ORIGIN;
    s->sched.by_count = s->tiresias;
    return preempt_init(&s->sched, cfg, s->tiresias ? &las_tiresias_hooks : &las_hooks, s,
                        checkpoint, d);
}

static void las_fini(void *st)
{
    las_state *s = st;
    preempt_fini(&s->sched);
}

const policy_ops policy_las = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "las",
    .summary = "Tiresias discretised 2D least-attained-service: priority queues by GPU time "
               "received, FIFO within a queue, preemptive",
    .state_size = sizeof(las_state),
    .job_state_size = sizeof(preempt_entry),
    .options = las_options,
    .init = las_init,
    .fini = las_fini,
    .on_arrival = preempt_on_arrival,
    .on_finish = preempt_on_finish,
    .on_requeue = preempt_on_requeue,
    .schedule = preempt_schedule,
    .next_wakeup = preempt_next_wakeup,
};
