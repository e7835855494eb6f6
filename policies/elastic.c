/*
 * elastic.c: elastic data-parallel trainers under a utilisation threshold (DESIGN.md,
 * policy 4), and the rigid baseline `rigid-min`.
 *
 * Pending jobs start in arrival order, with backfilling, an elastic job (min_replicas !=
 * max_replicas) at min_replicas, any other at its nominal count. Every trigger period
 * (option `period`) the adjustable jobs (elastic and running with all their trainers)
 * are scaled. While the cluster's allocated GPU fraction U is below the threshold
 * (option `threshold`), they scale out one trainer at a time in ascending order of
 * completion score (cur-min)/(max-min) (ties: arrival order), a trainer only where U
 * stays at or below the threshold with it, round after round (scores recomputed each
 * round) until no job can grow. When U is above the threshold, they scale in one
 * trainer at a time in descending order of score, round after round, until U is at or
 * below it or every job is at its min; a scale-in restarts the job from its last
 * checkpoint (sim_decide_scale_in). `rigid-min` starts jobs the same way and never
 * scales them. Scale-out places a trainer as a start does: most-allocated node first.
 */
#include "policies/place.h"
#include "policies/policy.h"

#include "sim/alloc.h"

#include <math.h>
#include <stdlib.h>

typedef struct adj {
    sim_job_id id;
    uint32_t cur, lo, hi;
    double score;
    uint64_t seq;
} adj;

typedef struct elastic_state {
    place_ws ws;
    sim_time period_us;
    double threshold;
    bool scale;       /* false: rigid-min */
    sim_time next_us; /* next trigger */
    adj *adj;         /* scratch: the adjustable jobs */
    uint32_t adj_cap;
    uint64_t total_milli; /* GPU share of the cluster */
} elastic_state;

static const policy_option elastic_opts[] = {
    {"period", "60", "trigger period, seconds"},
    {"threshold", "0.9", "utilisation threshold: allocated fraction of the GPUs, 0..1"},
    {NULL, NULL, NULL},
};

static const policy_option rigid_opts[] = {{NULL, NULL, NULL}};

static void bounds(const sim_job *j, uint32_t *lo, uint32_t *hi)
{
    *lo = *hi = j->nominal_replicas;
    if (job_spec_has(&j->spec, SIM_ATTR_MIN_REPLICAS))
        *lo = (uint32_t)j->spec.attr[SIM_ATTR_MIN_REPLICAS];
    if (job_spec_has(&j->spec, SIM_ATTR_MAX_REPLICAS))
        *hi = (uint32_t)j->spec.attr[SIM_ATTR_MAX_REPLICAS];
    if (*lo < 1)
        *lo = 1;
    if (*hi < *lo)
        *hi = *lo;
}

static int common_init(elastic_state *s, const policy_config *cfg, sim_diag *d)
{
    s->adj_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->adj = sim_calloc(s->adj_cap, sizeof *s->adj);
    if (!s->adj)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    s->total_milli = (uint64_t)cfg->n_gpus * SIM_MILLI_GPU;
    s->next_us = 0;
    return place_ws_init(&s->ws, cfg, d);
}

static int elastic_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    double period, thr;
    int rc;
    if ((rc = policy_config_double(cfg, elastic_opts, "period", 0.001, 1e9, &period, d)) ||
        (rc = policy_config_double(cfg, elastic_opts, "threshold", 0, 1, &thr, d)))
        return rc;
    s->period_us = (sim_time)llround(period * 1e6);
    s->threshold = thr;
    s->scale = true;
    return common_init(s, cfg, d);
}

static int rigid_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    s->scale = false;
    return common_init(s, cfg, d);
}

static void elastic_fini(void *st)
{
    elastic_state *s = st;
    sim_free(s->adj);
    place_ws_fini(&s->ws);
}

/* Start pending jobs in arrival order, skipping those that do not fit. */
static int start_pending(elastic_state *s, const sim_view *v, policy_decisions *out)
{
    for (uint32_t id = v->pending_head; id != SIM_JOB_NONE;) {
        uint32_t next = sim_view_next(v, id);
        const sim_job *j = sim_view_job(v, id);
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        sim_placement p;
        if (place_gang_n(&s->ws, v, id, lo, 0, UINT64_MAX, place_score_most_allocated, NULL,
                         PLACE_GPU_MOST_USED, NULL, 0, &p)) {
            int rc = sim_decide_start(out, id, &p);
            if (rc != SIM_OK)
                return rc;
        }
        id = next;
    }
    return SIM_OK;
}

static int cmp_up(const void *a, const void *b)
{
    const adj *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_down(const void *a, const void *b)
{
    const adj *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void rescore(adj *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        a[i].score = (double)(a[i].cur - a[i].lo) / (double)(a[i].hi - a[i].lo);
}

/* GPU share one trainer of j holds. */
static uint64_t trainer_milli(const sim_job *j)
{
    return (uint64_t)j->gpus_per_replica * j->share_milli;
}

static int trigger(elastic_state *s, const sim_view *v, policy_decisions *out)
{
    uint32_t n = 0;
    uint64_t used = 0;
    for (uint32_t g = 0; g < v->n_nodes; g++)
        used += v->node_used_milli[g];
    for (uint32_t id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        if (lo == hi || j->gpus_per_replica == 0 || n == s->adj_cap)
            continue;
        s->adj[n++] = (adj){.id = id, .cur = j->replicas, .lo = lo, .hi = hi, .seq = j->seq};
    }
    if (n == 0 || s->total_milli == 0)
        return SIM_OK;
    double limit = s->threshold * (double)s->total_milli;
    if ((double)used <= limit) {
        for (bool grew = true; grew;) {
            grew = false;
            rescore(s->adj, n);
            qsort(s->adj, n, sizeof *s->adj, cmp_up);
            for (uint32_t i = 0; i < n; i++) {
                adj *a = &s->adj[i];
                const sim_job *j = sim_view_job(v, a->id);
                if (a->cur >= a->hi || (double)(used + trainer_milli(j)) > limit)
                    continue;
                sim_placement p;
                if (!place_gang_n(&s->ws, v, a->id, 1, j->share_milli, j->share_mem_mib,
                                  place_score_most_allocated, NULL, PLACE_GPU_MOST_USED, NULL, 0,
                                  &p))
                    continue;
                int rc = sim_decide_grow(out, a->id, &p);
                if (rc != SIM_OK)
                    return rc;
                a->cur++;
                used += trainer_milli(j);
                grew = true;
            }
        }
    } else {
        for (bool shrank = true; shrank && (double)used > limit;) {
            shrank = false;
            rescore(s->adj, n);
            qsort(s->adj, n, sizeof *s->adj, cmp_down);
            for (uint32_t i = 0; i < n && (double)used > limit; i++) {
                adj *a = &s->adj[i];
                if (a->cur <= a->lo)
                    continue;
                const sim_job *j = sim_view_job(v, a->id);
                uint64_t m = trainer_milli(j);
                int rc = sim_decide_scale_in(out, a->id, 1);
                if (rc != SIM_OK)
                    return rc;
                a->cur--;
                used -= m;
                shrank = true;
            }
        }
    }
    return SIM_OK;
}

static int elastic_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    elastic_state *s = st;
    int rc = start_pending(s, v, out);
    if (rc != SIM_OK || !s->scale || now < s->next_us)
        return rc;
    s->next_us = now + s->period_us;
    return trigger(s, v, out);
}

static sim_time elastic_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const elastic_state *s = st;
    if (!s->scale || v->n_running == 0)
        return SIM_TIME_NEVER;
    return s->next_us > now ? s->next_us : now + s->period_us;
}

const policy_ops policy_elastic = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "elastic",
    .summary = "elastic trainers: start at min_replicas; every period scale out by "
               "completion score below a utilisation threshold, scale in above it",
    .state_size = sizeof(elastic_state),
    .options = elastic_opts,
    .init = elastic_init,
    .fini = elastic_fini,
    .schedule = elastic_schedule,
    .next_wakeup = elastic_next_wakeup,
    .elastic_outputs = true,
};

const policy_ops policy_rigid_min = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "rigid-min",
    .summary = "elastic jobs run rigid at min_replicas (arrival order, backfilling)",
    .state_size = sizeof(elastic_state),
    .options = rigid_opts,
    .init = rigid_init,
    .fini = elastic_fini,
    .schedule = elastic_schedule,
    .elastic_outputs = true,
};
