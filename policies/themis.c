/*
 * themis.c: finish-time fairness (Mahajan et al., "Themis: Fair and Efficient GPU Cluster
 * Scheduling", NSDI'20) as the Muri simulator runs it (github.com/Rivendile/Muri,
 * simulator/run_sim.py, themis_sim_jobs), a simplified auction without bids: at every
 * scheduling point (each arrival and departure) a fractional GPU allocation x (0..1 of
 * each job's request, sum of x x GPUs <= the cluster's GPUs) minimises the largest
 * finish-time fairness rho = T_shared / T_independent over all jobs in the system:
 *
 *   T_shared      = (now - submit) + R x iteration time / x
 *   T_independent = I + R / a,  a = min(1, ceil(G / n) / GPUs requested)
 *
 * R: iterations left; G: the cluster's GPUs; n: jobs in the system; I: the sum over the
 * earlier points of the iterations done since the one before divided by that point's a
 * (the simulator's cumulative isolated time, in its units). Every job is offered
 * resources (no fraction of apps is held back). The jobs are then ranked by x over the
 * seconds they have run (x x 1e9 for a job that never ran), then by deficit (the
 * seconds they should have received, the sum of x times the gap between points, less
 * those they ran), then by x, larger first; they are admitted in that order while their
 * GPU request fits the free-GPU count, the others preempted (policies/preempt.c places
 * the admitted ones on the most-allocated node). The min-max problem is solved exactly:
 * rho's lower bound is max (a_i + c_i) / B_i (every x = 1); when the GPUs bind, rho is
 * the root of sum n_i c_i / (rho B_i - a_i) = G (Newton from the left: the sum is convex
 * and decreasing in rho) and x_i = c_i / (rho B_i - a_i).
 */
#include "policies/preempt.h"

#include "base/alloc.h"

#include <math.h>
#include <string.h>

#define PREFETCH 8 /* jobs ahead whose records a pass asks for */

typedef struct themis_job {
    preempt_entry e;              /* first: the engine's entry */
    sim_time submit_us;           /* fixed at arrival: submit time, */
    double it_s, gpus;            /* iteration time (s), GPUs requested as a count (>= 1) */
    double n_gpus;                /* and GPUs requested (0 for a CPU-only job) */
    double cum_iso;               /* I, the cumulative isolated time */
    double prev_left, prev_alloc; /* iterations left and a at the last point, 0 before */
    double ran_s;                 /* seconds run, as of last_us */
    double should_s;              /* seconds it should have received */
    double x, deficit, sort_val;
    sim_time last_us;
} themis_job;

typedef struct themis_state {
    preempt_sched sched; /* first: the engine's hooks take the state */
    sim_time last_point; /* the last scheduling point, 0 before any */
    themis_job **jobs;   /* scratch: the jobs in the system */
    double *a, *b, *c, *n;
    uint32_t cap;
    bool oom;
} themis_state;

static const policy_option themis_options[] = {
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {NULL, NULL, NULL},
};

/* An order-preserving map of a double onto the unsigned integers. */
static uint64_t ordered_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static void themis_key(void *ctx, const sim_view *v, preempt_entry *x, sim_time now)
{
    (void)ctx;
    (void)v;
    (void)now;
    const themis_job *t = (const themis_job *)x;
    /* Larger first: sort value, then deficit (x only breaks ties of both, rarely). */
    x->key = (preempt_key){-t->sort_val, ordered_bits(-t->deficit), x->seq};
}

static const preempt_hooks themis_hooks = {.key = themis_key};

static bool grow_one(double **p, uint32_t ncap)
{
    double *q = sim_reallocarray(*p, ncap, sizeof *q);
    if (q)
        *p = q;
    return q != NULL;
}

static bool grow(themis_state *s, uint32_t need)
{
    if (need <= s->cap)
        return true;
    uint32_t ncap = s->cap ? s->cap : 256;
    while (ncap < need)
        ncap *= 2;
    themis_job **j = sim_reallocarray(s->jobs, ncap, sizeof *j);
    if (!j)
        return false;
    s->jobs = j;
    if (!grow_one(&s->a, ncap) || !grow_one(&s->b, ncap) || !grow_one(&s->c, ncap) ||
        !grow_one(&s->n, ncap))
        return false;
    s->cap = ncap;
    return true;
}

/* The smallest rho with sum n_i c_i / (rho b_i - a_i) <= g, from lo (where the sum may
 * exceed g). */
static double solve_rho(const themis_state *s, uint32_t k, double lo, double g)
{
    double rho = lo;
    for (int it = 0; it < 100; it++) {
        double f = 0, df = 0;
        /* The sum alone first: where the GPUs do not bind (f <= g at lo), the slope is
         * not needed. */
        for (uint32_t i = 0; i < k; i++)
            if (s->c[i] > 0)
                f += s->n[i] * s->c[i] / (rho * s->b[i] - s->a[i]);
        if (f <= g * (1 + 1e-12))
            break;
        for (uint32_t i = 0; i < k; i++) {
            if (!(s->c[i] > 0))
                continue;
            double d = rho * s->b[i] - s->a[i];
            df -= s->n[i] * s->c[i] * s->b[i] / (d * d);
        }
        if (!(df < 0))
            break;
        double next = rho + (g - f) / df;
        if (!(next > rho))
            break;
        rho = next;
    }
    return rho;
}


static int themis_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    themis_state *s = st;
    uint32_t k = 0, total = v->n_pending + v->n_running;
    if (!grow(s, total))
        return SIM_ENOMEM;
    /* In the engine's list order: the sums below depend on their order in the last
     * bits, and the schedule on those where the GPUs bind. */
    for (int list = 0; list < 2; list++)
        for (uint32_t id = list ? v->running_head : v->pending_head; id != SIM_JOB_NONE;
             id = sim_view_next(v, id))
            if (k < total)
                s->jobs[k++] = sim_view_job_state(v, id);
    double g = (double)v->total_gpus, lo = 0;
    double share = k ? ceil(g / (double)k) : 0;
    for (uint32_t i = 0; i < k; i++) {
        themis_job *t = s->jobs[i];
        if (i + PREFETCH < k) { /* the records are scattered: ask ahead */
            const themis_job *ahead = s->jobs[i + PREFETCH];
            const sim_job *ja = sim_view_job(v, ahead->e.id);
            __builtin_prefetch(&ja->state);       /* and the time of its last update */
            __builtin_prefetch(&ja->work_done_s); /* and the work in all, and the speed */
            if (i + 2 * PREFETCH < k)
                __builtin_prefetch(s->jobs[i + 2 * PREFETCH]);
        }
        if (t->e.running)
            t->ran_s += (double)(now - t->last_us) / 1e6;
        t->last_us = now;
        /* A quotient by 1 is its dividend, exactly: most jobs divide by 1 (no iteration
         * time; a share of at least their GPUs), and a division is the loop's cost. */
        double w = sim_view_work_left(v, t->e.id);
        double left = w > 0 ? (t->it_s == 1 ? w : w / t->it_s) : 0; /* iterations left */
        double alloc = share >= t->gpus ? 1 : share / t->gpus;
        if (t->prev_alloc > 0)
            t->cum_iso +=
                t->prev_alloc == 1 ? t->prev_left - left : (t->prev_left - left) / t->prev_alloc;
        t->prev_left = left;
        t->prev_alloc = alloc;
        double a = (double)(now - t->submit_us) / 1e6, c = left * t->it_s;
        double b = t->cum_iso + (alloc == 1 ? left : left / alloc);
        s->a[i] = a;
        s->b[i] = b;
        s->c[i] = c;
        s->n[i] = t->n_gpus;
        /* (a + c) / b can exceed lo only where a + c >= lo x b (b > 0, lo >= 0), less a
         * margin for the product's rounding: the other quotients are not taken. */
        double ac = a + c;
        if (b > 0 && !(ac < 0.999999 * (lo * b)) && ac / b > lo)
            lo = ac / b;
    }
    double rho = solve_rho(s, k, lo, g);
    for (uint32_t i = 0; i < k; i++) {
        themis_job *t = s->jobs[i];
        double d = rho * s->b[i] - s->a[i];
        /* min(1, c / d): c >= d gives a quotient of at least 1 (rounding keeps order). */
        double x = s->c[i] > 0 && d > 0 && s->c[i] < d ? s->c[i] / d : 1;
        t->x = x;
        t->sort_val = t->ran_s == 0 ? x * 1e9 : x / t->ran_s;
        t->deficit = t->should_s - t->ran_s;
        t->should_s += x * (double)(now - s->last_point) / 1e6;
    }
    s->last_point = now;
    preempt_rekey_all(&s->sched, v, now);
    return preempt_schedule(st, v, now, out);
}

static void themis_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    preempt_on_arrival(st, v, id);
    themis_job *t = sim_view_job_state(v, id);
    const job_spec *j = &sim_view_job(v, id)->spec;
    t->last_us = v->now;
    t->submit_us = j->submit_us;
    t->it_s = job_spec_has(j, SIM_ATTR_ITER_TIME_MS) && j->attr[SIM_ATTR_ITER_TIME_MS] > 0
                  ? j->attr[SIM_ATTR_ITER_TIME_MS] / 1000
                  : 1.0;
    t->gpus = j->num_gpus ? (double)j->num_gpus : 1;
    t->n_gpus = (double)j->num_gpus;
}

static void themis_fini(void *st);

static int themis_init(void *st, const policy_config *cfg, sim_diag *d)
{
    themis_state *s = st;
    bool checkpoint;
    int rc = policy_config_bool(cfg, themis_options, "checkpoint", &checkpoint, d);
    if (rc != SIM_OK)
        return rc;
    /* The simulator admits by the count of free GPUs. */
    s->sched.by_count = true;
    rc = grow(s, 256) ? preempt_init(&s->sched, cfg, &themis_hooks, s, checkpoint, d)
                      : sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'themis': out of memory");
    if (rc != SIM_OK)
        themis_fini(s); /* the core calls no fini after a failed init */
    return rc;
}

static void themis_fini(void *st)
{
    themis_state *s = st;
    preempt_fini(&s->sched);
    sim_free(s->jobs);
    sim_free(s->a);
    sim_free(s->b);
    sim_free(s->c);
    sim_free(s->n);
}

const policy_ops policy_themis = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "themis",
    .summary = "Themis finish-time fairness as the Muri simulator runs it: min-max rho "
               "allocation, jobs ranked by share over time run, preemptive",
    .state_size = sizeof(themis_state),
    .job_state_size = sizeof(themis_job),
    .options = themis_options,
    .init = themis_init,
    .fini = themis_fini,
    .on_arrival = themis_on_arrival,
    .on_finish = preempt_on_finish,
    .on_requeue = preempt_on_requeue,
    .schedule = themis_schedule,
    .next_wakeup = preempt_next_wakeup,
};
