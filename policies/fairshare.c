/*
 * fairshare.c: per-tenant FIFO with fair share — the multi-tenant baseline. Each tenant
 * has a FIFO queue (submit order; a requeued job returns to its place). Repeatedly, the
 * tenant with the smallest usage relative to its weight (GPU share held / weight; ties:
 * lowest tenant id) among those whose first job has not been found unplaceable in this
 * pass starts that job if it fits; when it does not, the tenant waits behind it
 * (head-of-line, no backfilling inside a tenant) while other tenants go on. Weights are
 * the tenants' quotas (at least one GPU: a tenant without one, or with less, weighs one
 * GPU) or all equal. No
 * preemption, no limit: the cluster is shared work-conservingly in proportion to the
 * weights, as in the fair-share schedulers of Slurm and YARN (and DRF on one resource,
 * Ghodsi et al., NSDI'11). Placement: the most-allocated node and GPUs that fit.
 */
#include "policies/place.h"
#include "policies/tenantq.h"

#include "base/alloc.h"

#include <stddef.h>
#include <string.h>

typedef struct fs_job {
    tenantq_link link;
} fs_job;

typedef struct fs_state {
    place_ws ws;
    tenantq q;
    bool equal;       /* weights all equal instead of quotas */
    uint8_t *blocked; /* per tenant, in the current pass */
    uint32_t blocked_cap;
    bool oom;   /* a queue table could not grow: the run fails */
    bool dirty; /* a job joined a queue since the last pass */
    bool primed;
    uint64_t epoch; /* release_epoch at the end of the last pass */
} fs_state;

static const policy_option fs_options[] = {
    {"share", "quota", "tenant weights: quota (quotas, at least 1 GPU) or equal"},
    {"quotas", "", "tenant quotas, a CSV tenant,quota_gpus: the same as the run option --quotas"},
    {"quota_share", "",
     "quotas in proportion to a column, FILE[:COLUMN]: the same as --quota-share"},
    {NULL, NULL, NULL},
};

static int fs_init(void *st, const policy_config *cfg, sim_diag *d)
{
    fs_state *s = st;
    static const char *const choices[] = {"quota", "equal", NULL};
    int share;
    int rc = policy_config_choice(cfg, fs_options, "share", choices, &share, d);
    if (rc != SIM_OK)
        return rc;
    s->equal = share == 1;
    tenantq_init(&s->q, offsetof(fs_job, link), false);
    return place_ws_init(&s->ws, cfg, d);
}

static void fs_fini(void *st)
{
    fs_state *s = st;
    place_ws_fini(&s->ws);
    tenantq_fini(&s->q);
    sim_free(s->blocked);
}

static void fs_enqueue(fs_state *s, const sim_view *v, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t t = j->spec.tenant;
    if (t >= s->blocked_cap) {
        uint32_t ncap = s->blocked_cap ? s->blocked_cap : 16;
        while (ncap <= t)
            ncap *= 2;
        uint8_t *nb = sim_reallocarray(s->blocked, ncap, 1);
        if (!nb || tenantq_reserve(&s->q, ncap) != SIM_OK) {
            if (nb)
                s->blocked = nb;
            s->oom = true;
            return;
        }
        memset(nb + s->blocked_cap, 0, ncap - s->blocked_cap);
        s->blocked = nb;
        s->blocked_cap = ncap;
    }
    tenantq_insert(&s->q, v, t, id, (double)j->spec.submit_us);
    s->dirty = true;
}

static void fs_arrival(void *st, const sim_view *v, sim_job_id id)
{
    fs_enqueue(st, v, id);
}

static void fs_requeue(void *st, const sim_view *v, sim_job_id id)
{
    fs_state *s = st;
    if (!tenantq_link_of(&s->q, v, id)->queued)
        fs_enqueue(s, v, id);
}

/* Usage relative to weight, in GPUs per weight unit. The weight is the quota, but at
 * least one GPU, as in the quota policy's tenant order: a quota below one GPU weighing
 * less than none would serve a tenant with a small quota after one without. */
static double fs_ratio(const fs_state *s, const sim_view *v, uint32_t t)
{
    double used = t < v->n_tenants ? (double)v->tenant_used_milli[t] / 1000.0 : 0;
    double w = 1.0;
    if (!s->equal && t < v->n_tenants && v->tenant_quota_gpus[t] > 1.0)
        w = v->tenant_quota_gpus[t];
    return used / w;
}

static int fs_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    fs_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    /* Nothing was released and nobody joined a queue: every head still cannot start. */
    if (s->primed && !s->dirty && v->release_epoch == s->epoch)
        return SIM_OK;
    if (place_memo_reserve(&s->ws, v) != SIM_OK)
        return SIM_ENOMEM;
    uint32_t T = s->q.cap < s->blocked_cap ? s->q.cap : s->blocked_cap;
    if (s->blocked_cap)
        memset(s->blocked, 0, s->blocked_cap);
    for (;;) {
        uint32_t best = UINT32_MAX;
        double best_r = 0;
        /* The tenants with a queued job only, in order. */
        for (uint32_t t = tenantq_busy_from(&s->q, 0); t < T; t = tenantq_busy_from(&s->q, t + 1)) {
            if (s->blocked[t])
                continue;
            double r = fs_ratio(s, v, t);
            if (best == UINT32_MAX || r < best_r) {
                best = t;
                best_r = r;
            }
        }
        if (best == UINT32_MAX)
            break;
        sim_job_id id = tenantq_head(&s->q, best);
        sim_placement p;
        if (!place_shape_try(&s->ws, v, id, 0, place_score_most_allocated, NULL,
                             PLACE_GPU_MOST_USED, &p)) {
            s->blocked[best] = 1;
            continue;
        }
        tenantq_remove(&s->q, v, id);
        int rc = sim_decide_start(out, id, &p);
        if (rc != SIM_OK)
            return rc;
    }
    s->primed = true;
    s->dirty = false;
    s->epoch = v->release_epoch;
    return SIM_OK;
}

const policy_ops policy_fairshare = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "fairshare",
    .summary = "a FIFO per tenant; the tenant furthest below its fair share starts next "
               "(multi-tenant baseline)",
    .state_size = sizeof(fs_state),
    .job_state_size = sizeof(fs_job),
    .options = fs_options,
    .init = fs_init,
    .fini = fs_fini,
    .on_arrival = fs_arrival,
    .on_requeue = fs_requeue,
    .schedule = fs_schedule,
};
