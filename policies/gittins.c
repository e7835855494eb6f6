/*
 * gittins.c: preemptive Gittins-index scheduling over the distribution of job service
 * (GPU-seconds), as the Tiresias simulator computes it (github.com/SymbioticLab/Tiresias,
 * simulator/run_sim.py: cal_r_gittins_index, get_gittins_index; the same code in
 * Rivendile/Muri's simulator). With the service samples sorted, d_0 <= ... <= d_{m-1},
 * and a quantum delta (GPU-seconds), the index of a job that has received a is the value
 * at the next sample point above it: G(a) = g_i with i the first sample d_i > a (0 past
 * the largest), where g_i is computed at a' = d_i - 1:
 *   i0 = first d > a', i1 = first d > a' + delta (m - 1 when a' + delta > d_{m-1} - 1),
 *   P = (i1 - i0) / (m - i0), E = (sum d_{i0..i1-1} + delta (m - i1)) / (m - i0),
 *   g = P x 10^6 / E
 * (0 when a' > d_{m-1} - 1). Jobs with the highest index go first, ties by arrival.
 * The samples are the GPU service (duration x GPUs) of the jobs that have arrived so
 * far; the table is rebuilt whenever their number has doubled since the last build, so
 * the rebuilds cost O(n log n) over a run. A running job's index is re-read when its
 * service reaches the later of the next sample point and its next multiple of delta.
 */
#include "policies/gittins.h"
#include "policies/preempt.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>

/* A job's entry, with where its last key was read in the table: at service `at`, the
 * first sample above it was data[at_i] (in the table of build `at_build`). */
typedef struct gittins_job {
    preempt_entry e; /* first: the engine's entry */
    double at;
    uint32_t at_i, at_build;
} gittins_job;

typedef struct gittins_state {
    preempt_sched sched; /* first: the engine's hooks take the state */
    double delta;        /* GPU-seconds */
    double *samples;     /* GPU service of each arrived job, in arrival order */
    uint32_t n_samples, samples_cap;
    double *data; /* the samples of the last build, sorted */
    double *sum;  /* sum[i] = data[0] + ... + data[i-1] */
    double *g;    /* index at each sample point; g[m] = 0 */
    uint32_t m, table_cap;
    uint32_t build; /* tables built so far */
} gittins_state;

static const policy_option gittins_options[] = {
    {"delta", "3250", "service quantum of the index, GPU-seconds (Tiresias' gittins_delta)"},
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {NULL, NULL, NULL},
};

/* The first i in data[0..m) with data[i] > a (m when none). */
static uint32_t upper(const double *data, uint32_t m, double a)
{
    uint32_t lo = 0, hi = m;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (data[mid] > a)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

double policy_gittins_index(const double *data, const double *sum, uint32_t m, double delta,
                            double a)
{
    if (m == 0 || a > data[m - 1] - 1)
        return 0;
    uint32_t i0 = upper(data, m, a);
    /* The reference counts the largest sample as not finishing within delta when a +
     * delta passes it. */
    uint32_t i1 = a + delta > data[m - 1] - 1 ? m - 1 : upper(data, m, a + delta);
    double rest = (double)(m - i0);
    double p = (double)(i1 - i0) / rest;
    double e = (sum[i1] - sum[i0] + delta * (double)(m - i1)) / rest;
    return e > 0 ? p * 1e6 / e : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rebuild the table from the samples. SIM_OK or SIM_ENOMEM. */
static int rebuild(gittins_state *s)
{
    uint32_t m = s->n_samples;
    if (m + 1 > s->table_cap) {
        double *nd = sim_reallocarray(s->data, m + 1, sizeof *nd);
        if (nd)
            s->data = nd;
        double *ns = sim_reallocarray(s->sum, m + 1, sizeof *ns);
        if (ns)
            s->sum = ns;
        double *ng = sim_reallocarray(s->g, m + 1, sizeof *ng);
        if (ng)
            s->g = ng;
        if (!nd || !ns || !ng)
            return SIM_ENOMEM;
        s->table_cap = m + 1;
    }
    for (uint32_t i = 0; i < m; i++)
        s->data[i] = s->samples[i];
    qsort(s->data, m, sizeof *s->data, cmp_double);
    s->sum[0] = 0;
    for (uint32_t i = 0; i < m; i++)
        s->sum[i + 1] = s->sum[i] + s->data[i];
    for (uint32_t i = 0; i < m; i++)
        s->g[i] = policy_gittins_index(s->data, s->sum, m, s->delta, s->data[i] - 1);
    s->g[m] = 0;
    s->m = m;
    s->build++;
    return SIM_OK;
}

/* The first sample above service a, read again from x's last key when that was read at
 * a in this table. */
static uint32_t upper_at(const gittins_state *s, const gittins_job *x, double a)
{
    if (x->at_build == s->build && x->at == a)
        return x->at_i;
    return upper(s->data, s->m, a);
}

static void gittins_key(void *ctx, const sim_view *v, preempt_entry *x, sim_time now)
{
    (void)v;
    const gittins_state *s = ctx;
    gittins_job *j = (gittins_job *)x;
    double a = preempt_attained(x, now);
    double g = 0;
    if (s->m && a <= s->data[s->m - 1]) {
        j->at_i = upper_at(s, j, a);
        j->at = a;
        j->at_build = s->build;
        g = s->g[j->at_i];
    }
    x->key = (preempt_key){-g, 0, x->seq};
}

/* When a running x's index can next change: at the next sample point, but no sooner than
 * its next multiple of delta of service. */
static sim_time gittins_next_change(const void *ctx, const preempt_entry *x, sim_time now)
{
    const gittins_state *s = ctx;
    double a = preempt_attained(x, now);
    if (!(x->rate > 0) || s->m == 0 || a >= s->data[s->m - 1])
        return SIM_TIME_NEVER;
    double at = s->data[upper_at(s, (const gittins_job *)x, a)];
    double quantum = (floor(a / s->delta) + 1) * s->delta;
    if (quantum > at)
        at = quantum;
    double dt_us = ceil((at - a) / x->rate * 1e6);
    if (!(dt_us < 1e15))
        return now + (sim_time)1e15;
    /* The first microsecond at which the service, as the key reads it, has reached the
     * point: the quotient above can land one off either way. */
    sim_time t = now + (dt_us < 1 ? 1 : (sim_time)dt_us);
    while (t > now + 1 && preempt_attained(x, t - 1) >= at)
        t--;
    while (preempt_attained(x, t) < at)
        t++;
    return t;
}

static const preempt_hooks gittins_hooks = {
    .key = gittins_key,
    .next_change = gittins_next_change,
};

static int gittins_init(void *st, const policy_config *cfg, sim_diag *d)
{
    gittins_state *s = st;
    bool checkpoint;
    int rc;
    if ((rc = policy_config_double(cfg, gittins_options, "delta", 1e-3, 1e12, &s->delta, d)) ||
        (rc = policy_config_bool(cfg, gittins_options, "checkpoint", &checkpoint, d)))
        return rc;
    return preempt_init(&s->sched, cfg, &gittins_hooks, s, checkpoint, d);
}

static void gittins_fini(void *st)
{
    gittins_state *s = st;
    sim_free(s->samples);
    sim_free(s->data);
    sim_free(s->sum);
    sim_free(s->g);
    preempt_fini(&s->sched);
}

/* A new job adds its service to the samples before it is keyed. */
static void gittins_arrival(void *st, const sim_view *v, sim_job_id id)
{
    gittins_state *s = st;
    if (s->n_samples == s->samples_cap) {
        uint32_t ncap = s->samples_cap ? s->samples_cap * 2 : 64;
        double *ns = sim_reallocarray(s->samples, ncap, sizeof *ns);
        if (!ns) {
            s->sched.oom = true;
            return;
        }
        s->samples = ns;
        s->samples_cap = ncap;
    }
    const sim_job *j = sim_view_job(v, id);
    double gpus =
        (double)j->nominal_replicas * j->gpus_per_replica * j->spec.gpu_milli / SIM_MILLI_GPU;
    s->samples[s->n_samples++] = j->work_total_s * gpus;
    ((gittins_job *)sim_view_job_state(v, id))->at_build = UINT32_MAX; /* none read yet */
    preempt_on_arrival(st, v, id);
}

static int gittins_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    gittins_state *s = st;
    if (s->n_samples >= 2 * s->m && s->n_samples > 0 && !s->sched.oom) {
        if (rebuild(s) != SIM_OK)
            return SIM_ENOMEM;
        preempt_rekey_all(&s->sched, v, now);
    }
    return preempt_schedule(st, v, now, out);
}

const policy_ops policy_gittins = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "gittins",
    .summary = "preemptive Gittins index over the GPU-service distribution of the jobs "
               "arrived so far (Tiresias' computation), admission by GPU request",
    .state_size = sizeof(gittins_state),
    .job_state_size = sizeof(gittins_job),
    .options = gittins_options,
    .init = gittins_init,
    .fini = gittins_fini,
    .on_arrival = gittins_arrival,
    .on_finish = preempt_on_finish,
    .on_requeue = preempt_on_requeue,
    .schedule = gittins_schedule,
    .next_wakeup = preempt_next_wakeup,
};
