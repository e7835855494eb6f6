/*
 * engine.c: setup, the event loop, arrivals and admission, finishes, the rate model,
 * and node failures.
 *
 * The loop takes the least time t among the event heap and the source's next submit,
 * processes every event and arrival at t (heap events first, so finishes free
 * resources before arrivals are seen), calls the policy once if anything changed,
 * then recomputes the speed of every job marked dirty in the batch and pushes its new
 * finish event with a fresh version stamp (older finish events are dropped on pop).
 */
#include "sim/engine_int.h"

#include "base/alloc.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t sim_engine_tenant_jobs(const sim_engine *e, uint32_t tenant)
{
    return tenant < e->tenant_cap ? e->tstats[tenant].arrived : 0;
}

const sim_view *sim_engine_view(const sim_engine *e)
{
    return &e->v;
}

const sim_summary *sim_engine_summary(const sim_engine *e)
{
    return &e->sum;
}

static const char *view_tenant_name(const sim_view *v, uint32_t tenant)
{
    const sim_engine *e = v->internal;
    return sim_intern_name(e->world.tenants, tenant);
}

static const char *view_gpu_type_name(const sim_view *v, uint16_t type)
{
    const sim_engine *e = v->internal;
    return type == SIM_GPU_TYPE_NONE ? "" : sim_intern_name(e->world.gpu_types, type);
}

/* Point the view's arrays at the (possibly reallocated) pools. */
static void sync_view(sim_engine *e)
{
    sim_view *v = &e->v;
    v->allocs = e->allocs;
    v->jobs = e->jobs;
    v->job_state_base = e->jstate;
    v->job_next = e->job_next;
    v->tenant_used_milli = e->tenant_used_milli;
    v->tenant_running = e->tenant_running;
    v->tenant_pending = e->tenant_pending;
    v->tenant_quota_gpus = e->tenant_quota;
    v->n_tenants = e->tenant_cap;
    v->n_shapes = e->shape_cap;
    v->shape_head = e->shape_head;
    v->shape_count = e->shape_count;
    v->shape_gen = e->shape_gen;
    v->active_shapes = e->shape_active;
}

#define ALLOC_ARRAY(p, n)                                                                     \
    do {                                                                                      \
        size_t alloc_n_ = (n);                                                                \
        (p) = sim_calloc(alloc_n_ ? alloc_n_ : 1, sizeof *(p));                               \
        if (!(p))                                                                             \
            goto out_nomem;                                                                   \
    } while (0)

static uint32_t svc_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The service named id, or UINT32_MAX. */
static uint32_t svc_find(const sim_engine *e, const char *id)
{
    if (!e->svc_hash_cap)
        return UINT32_MAX;
    for (uint32_t h = svc_hash(id) & (e->svc_hash_cap - 1); e->svc_hash[h];
         h = (h + 1) & (e->svc_hash_cap - 1))
        if (strcmp(e->world.curves->names[e->svc_hash[h] - 1], id) == 0)
            return e->svc_hash[h] - 1;
    return UINT32_MAX;
}

void sim__svc_account(sim_engine *e, sim_job *j)
{
    if (!j->is_service)
        return;
    double dt = (double)(e->now - j->short_since_us) / 1e6;
    double g = j->gpus_per_replica ? (double)j->gpus_per_replica : 1.0;
    uint32_t want = j->demand_replicas;
    double short_gpus = want > j->replicas ? (double)(want - j->replicas) * g : 0.0;
    if (dt > 0) {
        e->sum.demand_gpu_s += (double)want * g * dt;
        e->sum.short_gpu_s += short_gpus * dt;
        if (short_gpus > 0)
            j->short_now = true;
    }
    j->short_since_us = e->now;
}

/* A service leaves: close its accounting. */
static void svc_leave(sim_engine *e, sim_job *j)
{
    if (!j->is_service)
        return;
    sim__svc_account(e, j);
    if (j->short_now)
        e->sum.short_periods++;
    j->short_now = false;
    e->svc_job[j->svc] = NIL;
}

static int grow_jobs(sim_engine *e)
{
    uint32_t ncap = e->job_cap ? e->job_cap * 2 : 1024;
    if (ncap <= e->job_cap || ncap > (UINT32_MAX - 1) / 2)
        return SIM_ELIMIT;
    sim_job *nj = sim_reallocarray(e->jobs, ncap, sizeof *nj);
    if (!nj)
        return SIM_ENOMEM;
    e->jobs = nj;
    size_t ss = e->pol->job_state_size;
    if (ss) {
        size_t bytes;
        unsigned char *ns = sim_mul_ok(ncap, ss, &bytes)
                                ? sim_grow_lines(&e->jstate_raw, e->job_cap * ss, bytes)
                                : NULL;
        if (!ns)
            return SIM_ENOMEM;
        e->jstate = ns;
    }
    uint32_t *nx = sim_reallocarray(e->job_next, ncap, sizeof *nx);
    if (!nx)
        return SIM_ENOMEM;
    e->job_next = nx;
    uint32_t *nv = sim_reallocarray(e->job_version, ncap, sizeof *nv);
    if (!nv)
        return SIM_ENOMEM;
    e->job_version = nv;
    uint64_t *np = sim_reallocarray(e->seg_point, ncap, sizeof *np);
    if (!np)
        return SIM_ENOMEM;
    e->seg_point = np;
    uint8_t *nd = sim_reallocarray(e->job_dirty, ncap, 1);
    if (!nd)
        return SIM_ENOMEM;
    e->job_dirty = nd;
    uint32_t *ndl = sim_reallocarray(e->dirty, (size_t)ncap * 2, sizeof *ndl);
    if (!ndl)
        return SIM_ENOMEM;
    e->dirty = ndl;
    if (e->cfg.job_groups) {
        uint32_t *ng = sim_reallocarray(e->job_group, ncap, sizeof *ng);
        if (!ng)
            return SIM_ENOMEM;
        e->job_group = ng;
    }
    /* The new slots are handed out from job_fresh up, each set up when it is first
     * taken: they are not written now, so a pool that doubles does not make its new
     * half resident at once (the pages are touched as jobs arrive). */
    if (sim__shapes_grow(e, ncap) != SIM_OK)
        return SIM_ENOMEM;
    e->job_cap = ncap;
    sync_view(e);
    return SIM_OK;
}

int sim__grow_allocs(sim_engine *e)
{
    uint32_t ncap = e->alloc_cap ? e->alloc_cap * 2 : 4096;
    if (ncap <= e->alloc_cap)
        return SIM_ELIMIT;
    sim_alloc_rec *na = sim_reallocarray(e->allocs, ncap, sizeof *na);
    if (!na)
        return SIM_ENOMEM;
    e->allocs = na;
    for (uint32_t i = ncap; i-- > e->alloc_cap;) {
        e->allocs[i].next_in_job = e->alloc_free;
        e->alloc_free = i;
    }
    e->n_alloc_free += ncap - e->alloc_cap;
    e->alloc_cap = ncap;
    sync_view(e);
    return SIM_OK;
}

/* Reallocate *p to n elements of size bytes; false (and *p unchanged) when out of
 * memory. */
static bool realloc_to(void **p, uint32_t n, size_t size)
{
    void *q = sim_reallocarray(*p, n, size);
    if (q)
        *p = q;
    return q != NULL;
}

static int grow_tenants(sim_engine *e, uint32_t need)
{
    if (need <= e->tenant_cap)
        return SIM_OK;
    uint32_t ncap = e->tenant_cap ? e->tenant_cap : 16;
    while (ncap < need)
        ncap *= 2;
    bool ok = realloc_to((void **)&e->tenant_used_milli, ncap, sizeof *e->tenant_used_milli) &&
              realloc_to((void **)&e->tenant_running, ncap, sizeof *e->tenant_running) &&
              realloc_to((void **)&e->tenant_pending, ncap, sizeof *e->tenant_pending) &&
              realloc_to((void **)&e->tenant_quota, ncap, sizeof *e->tenant_quota) &&
              realloc_to((void **)&e->tstats, ncap, sizeof *e->tstats);
    if (!ok) {
        sync_view(e); /* the view follows the arrays that moved before the failure */
        return SIM_ENOMEM;
    }
    for (uint32_t i = e->tenant_cap; i < ncap; i++) {
        e->tenant_used_milli[i] = 0;
        e->tenant_running[i] = e->tenant_pending[i] = 0;
        e->tenant_quota[i] = 0;
        memset(&e->tstats[i], 0, sizeof e->tstats[i]);
    }
    e->tenant_cap = ncap;
    sync_view(e);
    return SIM_OK;
}

/* Sort the nodes into kinds (node_kind) through an open-addressing table over their
 * figures; SIM_OK or SIM_ENOMEM. */
static int find_kinds(sim_engine *e)
{
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)e->n_nodes)
        cap *= 2;
    uint32_t *table = sim_calloc(cap, sizeof *table); /* kind + 1, 0 = empty */
    if (!table)
        return SIM_ENOMEM;
    e->n_kinds = 0;
    for (uint32_t n = 0; n < e->n_nodes; n++) {
        uint32_t cnt = e->node_gpu_count[n];
        node_kind k = {.gpu_mem = cnt ? e->gpu_mem_total[e->node_gpu_first[n]] : 0,
                       .cpu = e->node_cpu_total[n],
                       .mem = e->node_mem_total[n],
                       .gpus = cnt,
                       .type = e->node_gpu_type[n]};
        uint64_t h = UINT64_C(1469598103934665603);
        const uint64_t f[5] = {k.gpu_mem, k.cpu, k.mem, k.gpus, k.type};
        for (int i = 0; i < 5; i++)
            h = (h ^ f[i]) * UINT64_C(1099511628211);
        uint32_t i = (uint32_t)(h ^ h >> 32) & (cap - 1);
        for (;; i = (i + 1) & (cap - 1)) {
            if (!table[i]) {
                if (!sim_reserve((void **)&e->kinds, &e->kinds_cap, e->n_kinds + 1,
                                 sizeof *e->kinds)) {
                    sim_free(table);
                    return SIM_ENOMEM;
                }
                k.count = 1;
                e->kinds[e->n_kinds++] = k;
                table[i] = e->n_kinds;
                break;
            }
            node_kind *o = &e->kinds[table[i] - 1];
            if (o->gpu_mem == k.gpu_mem && o->cpu == k.cpu && o->mem == k.mem &&
                o->gpus == k.gpus && o->type == k.type) {
                o->count++;
                break;
            }
        }
    }
    sim_free(table);
    return SIM_OK;
}

int sim_engine_create(sim_engine **out, const sim_config *cfg, const sim_world *world,
                      const policy_ops *policy, const policy_config *pcfg, sim_diag *d)
{
    *out = NULL;
    if (!policy || policy->abi_version != POLICY_ABI_VERSION || !policy->schedule ||
        !policy->init)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy '%s' was built for another interface version",
                            policy && policy->name ? policy->name : "?");
    const cluster_spec *cl = world->cluster;
    if (!cl || cl->n_nodes == 0)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "the cluster has no node");
    sim_engine *e = sim_calloc(1, sizeof *e);
    if (!e)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    e->cfg = *cfg;
    e->checkpoint_us = cfg->checkpoint_interval_s > 0
                           ? (sim_time)fmax(1, llround(cfg->checkpoint_interval_s * 1e6))
                           : 0;
    e->world = *world;
    if (world->rate)
        e->rate = *world->rate;
    if (!e->rate.name)
        e->rate.name = "none";
    e->pol = policy;
    e->pcfg = *pcfg;
    e->job_free = NIL;
    e->grp_free = NIL;
    e->grp_cur = NIL;
    e->alloc_free = NIL;
    e->shape_free = NIL;
    e->wakeup_at = SIM_TIME_NEVER;
    e->sum.first_submit_us = SIM_TIME_NEVER;
    e->last_submit_us = INT64_MIN;

    uint64_t n_gpus = 0;
    for (uint32_t i = 0; i < cl->n_nodes; i++)
        n_gpus += cl->nodes[i].num_gpus;
    if (n_gpus >= UINT32_MAX / 2) {
        sim_engine_destroy(e);
        return sim_diag_set(d, SIM_ELIMIT, NULL, 0, 0, "the cluster has too many GPUs");
    }
    e->n_nodes = cl->n_nodes;
    e->n_gpus = (uint32_t)n_gpus;
    uint32_t nn = e->n_nodes, ng = e->n_gpus;
    ALLOC_ARRAY(e->node_gpu_first, nn);
    ALLOC_ARRAY(e->node_gpu_count, nn);
    ALLOC_ARRAY(e->node_free_gpus, nn);
    ALLOC_ARRAY(e->node_max_free_milli, nn);
    ALLOC_ARRAY(e->node_gpu_type, nn);
    ALLOC_ARRAY(e->node_cpu_total, nn);
    ALLOC_ARRAY(e->node_cpu_used, nn);
    ALLOC_ARRAY(e->node_mem_total, nn);
    ALLOC_ARRAY(e->node_mem_used, nn);
    ALLOC_ARRAY(e->node_used_milli, nn);
    ALLOC_ARRAY(e->node_up, nn);
    ALLOC_ARRAY(e->node_name, nn);
    ALLOC_ARRAY(e->node_scratch_cpu, nn);
    ALLOC_ARRAY(e->node_scratch_mem, nn);
    ALLOC_ARRAY(e->gpu_node, ng);
    ALLOC_ARRAY(e->gpu_used_milli, ng);
    ALLOC_ARRAY(e->gpu_nres, ng);
    ALLOC_ARRAY(e->gpu_first_res, ng);
    ALLOC_ARRAY(e->gpu_used_mem, ng);
    ALLOC_ARRAY(e->gpu_mem_total, ng);
    ALLOC_ARRAY(e->gpu_scratch, ng);
    ALLOC_ARRAY(e->residents, SIM_MILLI_GPU + 1);
    ALLOC_ARRAY(e->view_res, 2 * (SIM_MILLI_GPU + 2));
    ALLOC_ARRAY(e->fit_cache, FIT_CACHE);
    ALLOC_ARRAY(e->node_release_epoch, nn);
    ALLOC_ARRAY(e->node_sum, nn);
    ALLOC_ARRAY(e->node_outages, nn);
    ALLOC_ARRAY(e->node_frac, nn);
    ALLOC_ARRAY(e->node_cpu_frac, nn);
    ALLOC_ARRAY(e->node_tier_whole, nn);
    ALLOC_ARRAY(e->node_tier_share, nn);
    e->n_blocks = (nn + SIM_NODE_BLOCK - 1) / SIM_NODE_BLOCK;
    ALLOC_ARRAY(e->block_dirty, e->n_blocks);
    ALLOC_ARRAY(e->dirty_blocks, e->n_blocks);
    ALLOC_ARRAY(e->block_max_free_gpus, e->n_blocks);
    ALLOC_ARRAY(e->block_max_free_milli, e->n_blocks);
    ALLOC_ARRAY(e->block_max_cpu_free, e->n_blocks);
    ALLOC_ARRAY(e->block_max_mem_free, e->n_blocks);
    ALLOC_ARRAY(e->block_types, e->n_blocks);
    ALLOC_ARRAY(e->block_frac_whole, (size_t)e->n_blocks * SIM_FRAC_WHOLE);
    ALLOC_ARRAY(e->block_frac_share, (size_t)e->n_blocks * SIM_FRAC_SHARE);
    ALLOC_ARRAY(e->block_max_cpu_frac, e->n_blocks);
    ALLOC_ARRAY(e->quarter, (size_t)e->n_blocks * 4);
    ALLOC_ARRAY(e->release_ring, SIM_RELEASE_RING);
    if (world->curves && world->curves->n) {
        const sim_curves *c = world->curves;
        ALLOC_ARRAY(e->svc_job, c->n);
        ALLOC_ARRAY(e->svc_demand, c->n);
        ALLOC_ARRAY(e->svc_point_svc, c->n_pts);
        ALLOC_ARRAY(e->svc_seen, c->n);
        ALLOC_ARRAY(e->svc_peak, c->n);
        e->svc_hash_cap = 16;
        while (e->svc_hash_cap < 2 * c->n)
            e->svc_hash_cap *= 2;
        ALLOC_ARRAY(e->svc_hash, e->svc_hash_cap);
        e->v.n_services = c->n;
        for (uint32_t s = 0; s < c->n; s++) {
            uint32_t peak = 0;
            for (uint32_t k = 0; k < c->count[s]; k++)
                if (c->pts[c->first[s] + k].replicas > peak)
                    peak = c->pts[c->first[s] + k].replicas;
            e->v.services_peak_replicas += peak;
            e->svc_peak[s] = peak;
            e->svc_job[s] = NIL;
            uint32_t h = svc_hash(c->names[s]) & (e->svc_hash_cap - 1);
            while (e->svc_hash[h])
                h = (h + 1) & (e->svc_hash_cap - 1);
            e->svc_hash[h] = s + 1;
            for (uint32_t k = 0; k < c->count[s]; k++)
                e->svc_point_svc[c->first[s] + k] = s;
        }
    }
    ALLOC_ARRAY(e->node_change_epoch, nn);
    ALLOC_ARRAY(e->change_ring, SIM_CHANGE_RING);
    ALLOC_ARRAY(e->speed_ring, SIM_SPEED_RING);
    uint32_t g = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const node_spec *ns = &cl->nodes[i];
        e->node_gpu_first[i] = g;
        e->node_gpu_count[i] = ns->num_gpus;
        e->node_free_gpus[i] = ns->num_gpus;
        e->node_max_free_milli[i] = ns->num_gpus ? SIM_MILLI_GPU : 0;
        e->node_gpu_type[i] = ns->num_gpus ? ns->gpu_type : SIM_GPU_TYPE_NONE;
        e->node_cpu_total[i] = ns->cpu_milli;
        e->node_mem_total[i] = ns->mem_mib;
        e->node_up[i] = true;
        e->node_name[i] = ns->name;
        e->cpu_total_all += ns->cpu_milli;
        if (ns->num_gpus > e->max_gpus_per_node)
            e->max_gpus_per_node = (uint16_t)(ns->num_gpus > UINT16_MAX ? UINT16_MAX
                                                                         : ns->num_gpus);
        uint64_t mem = ns->gpu_mem_mib;
        if (!mem && ns->num_gpus && world->gpu_type_mem_mib)
            mem = world->gpu_type_mem_mib[ns->gpu_type];
        for (uint32_t k = 0; k < ns->num_gpus; k++, g++) {
            e->gpu_node[g] = i;
            e->gpu_first_res[g] = NIL;
            e->gpu_mem_total[g] = mem ? mem : UINT64_C(1) << 40;
        }
    }
    for (uint32_t i = 0; i < nn; i++)
        sim__node_refresh(e, i);
    if (find_kinds(e) != SIM_OK)
        goto out_nomem;
    /* Every block is listed now; its quarters past the last node are summed (empty) too. */
    memset(e->block_dirty, 0xf, e->n_blocks);
    if (sim_eventq_init(&e->q, 1024) != SIM_OK)
        goto out_nomem;
    /* The services' demand changes are known from the start: one event per point. */
    for (uint32_t pt = 0; world->curves && pt < world->curves->n_pts; pt++)
        if (sim_eventq_push(&e->q, world->curves->pts[pt].t_us, EV_DEMAND, pt, 0) != SIM_OK)
            goto out_nomem;
    e->q_compact_at = 2 * e->q.n > 4096 ? 2 * e->q.n : 4096;
    e->h_jct = sim_hist_create();
    e->h_wait = sim_hist_create();
    if (!e->h_jct || !e->h_wait)
        goto out_nomem;
    for (int k = 0; k < SIM_QOS_COUNT; k++)
        if (!(e->qstats[k].jct = sim_hist_create()))
            goto out_nomem;
    for (uint32_t p = 0; p < cfg->n_probes; p++)
        e->n_probe_cols += cfg->probes[p].n;
    ALLOC_ARRAY(e->probe_vals, e->n_probe_cols);
    ALLOC_ARRAY(e->probe_sums, e->n_probe_cols);
    e->rng = gsl_rng_alloc(gsl_rng_mt19937);
    e->fail_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!e->rng || !e->fail_rng)
        goto out_nomem;
    gsl_rng_set(e->rng, cfg->seed);
    gsl_rng_set(e->fail_rng, cfg->seed ^ UINT64_C(0x9E3779B97F4A7C15));
    if (grow_jobs(e) != SIM_OK || sim__grow_allocs(e) != SIM_OK ||
        grow_tenants(e, sim_intern_count(world->tenants) + 1) != SIM_OK)
        goto out_nomem;
    if (policy->state_size) {
        e->pst = sim_calloc(1, policy->state_size);
        if (!e->pst)
            goto out_nomem;
    }

    sim_view *v = &e->v;
    v->n_nodes = nn;
    v->node_gpu_first = e->node_gpu_first;
    v->node_gpu_count = e->node_gpu_count;
    v->node_gpu_type = e->node_gpu_type;
    v->node_cpu_total = e->node_cpu_total;
    v->node_cpu_used = e->node_cpu_used;
    v->node_mem_total = e->node_mem_total;
    v->node_mem_used = e->node_mem_used;
    v->node_free_gpus = e->node_free_gpus;
    v->node_max_free_milli = e->node_max_free_milli;
    v->node_used_milli = e->node_used_milli;
    v->node_up = e->node_up;
    v->node_name = e->node_name;
    v->n_gpus = ng;
    v->gpu_node = e->gpu_node;
    v->gpu_used_milli = e->gpu_used_milli;
    v->gpu_used_mem = e->gpu_used_mem;
    v->gpu_mem_total = e->gpu_mem_total;
    v->gpu_nres = e->gpu_nres;
    v->gpu_first_res = e->gpu_first_res;
    v->pending_head = v->running_head = SIM_JOB_NONE;
    v->pending_tail = v->running_tail = SIM_JOB_NONE;
    v->node_release_epoch = e->node_release_epoch;
    v->node_sum = e->node_sum;
    v->sync_blocks = sim__sync_blocks;
    v->n_blocks = e->n_blocks;
    v->block_max_free_gpus = e->block_max_free_gpus;
    v->block_max_free_milli = e->block_max_free_milli;
    v->block_max_cpu_free = e->block_max_cpu_free;
    v->block_max_mem_free = e->block_max_mem_free;
    v->block_types = e->block_types;
    v->block_frac_whole = e->block_frac_whole;
    v->block_frac_share = e->block_frac_share;
    v->block_max_cpu_frac = e->block_max_cpu_frac;
    v->block_quarter = e->quarter;
    v->release_ring = e->release_ring;
    v->node_change_epoch = e->node_change_epoch;
    v->change_ring = e->change_ring;
    v->speed_ring = e->speed_ring;
    v->tenant_name = view_tenant_name;
    v->gpu_type_name = view_gpu_type_name;
    v->n_gpu_types = sim_intern_count(world->gpu_types);
    v->gpu_type_mem_mib = world->gpu_type_mem_mib;
    v->total_gpus = n_gpus;
    v->rng = e->rng;
    v->job_state_size = policy->job_state_size;
    v->internal = e;
    e->dec.e = e;
    sync_view(e);

    e->pcfg.policy = policy->name;
    e->pcfg.n_nodes = nn;
    e->pcfg.n_gpus = ng;
    e->pcfg.max_gpus_per_node = e->max_gpus_per_node;
    e->pcfg.n_gpu_types = v->n_gpu_types;
    uint64_t node_types = 0; /* type ids are below SIM_MAX_GPU_TYPES (64) */
    for (uint32_t i = 0; i < nn; i++)
        if (e->node_gpu_count[i] && e->node_gpu_type[i] < SIM_MAX_GPU_TYPES)
            node_types |= UINT64_C(1) << e->node_gpu_type[i];
    e->pcfg.n_node_gpu_types = (uint32_t)__builtin_popcountll(node_types);
    e->pcfg.seed = cfg->seed;
    int st = policy_config_validate(&e->pcfg, policy->options, d);
    if (st == SIM_OK)
        st = policy->init(e->pst, &e->pcfg, d);
    if (st != SIM_OK) {
        /* init failed: fini must not run on a half-initialised state. */
        e->pol = NULL;
        sim_engine_destroy(e);
        return st;
    }
    *out = e;
    return SIM_OK;
out_nomem:
    e->pol = NULL;
    sim_engine_destroy(e);
    return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
}

void sim_engine_destroy(sim_engine *e)
{
    if (!e)
        return;
    if (e->pol && e->pol->fini && e->pst)
        e->pol->fini(e->pst);
    sim_free(e->pst);
    sim__rows_finish(e);
    sim_free(e->big_rec);
    sim_line_free(&e->line);
    sim_free(e->node_gpu_first);
    sim_free(e->node_gpu_count);
    sim_free(e->node_free_gpus);
    sim_free(e->node_max_free_milli);
    sim_free(e->node_gpu_type);
    sim_free(e->node_cpu_total);
    sim_free(e->node_cpu_used);
    sim_free(e->node_mem_total);
    sim_free(e->node_mem_used);
    sim_free(e->node_used_milli);
    sim_free(e->node_up);
    sim_free(e->node_name);
    sim_free(e->node_scratch_cpu);
    sim_free(e->node_scratch_mem);
    sim_free(e->gpu_node);
    sim_free(e->gpu_used_milli);
    sim_free(e->gpu_nres);
    sim_free(e->gpu_first_res);
    sim_free(e->gpu_used_mem);
    sim_free(e->gpu_mem_total);
    sim_free(e->gpu_scratch);
    sim_free(e->residents);
    sim_free(e->view_res);
    sim_free(e->fit_cache);
    sim_free(e->kinds);
    sim_free(e->grp);
    sim_free(e->job_group);
    sim_free(e->grp_spans);
    sim_free(e->node_release_epoch);
    sim_free(e->node_change_epoch);
    sim_free(e->change_ring);
    sim_free(e->speed_ring);
    sim_free(e->node_sum);
    sim_free(e->node_outages);
    sim_free(e->node_frac);
    sim_free(e->node_cpu_frac);
    sim_free(e->node_tier_whole);
    sim_free(e->node_tier_share);
    sim_free(e->block_dirty);
    sim_free(e->dirty_blocks);
    sim_free(e->block_max_free_gpus);
    sim_free(e->block_max_free_milli);
    sim_free(e->block_max_cpu_free);
    sim_free(e->block_max_mem_free);
    sim_free(e->block_types);
    sim_free(e->block_frac_whole);
    sim_free(e->block_frac_share);
    sim_free(e->block_max_cpu_frac);
    sim_free(e->quarter);
    sim_free(e->release_ring);
    sim_free(e->svc_job);
    sim_free(e->svc_demand);
    sim_free(e->svc_point_svc);
    sim_free(e->svc_seen);
    sim_free(e->svc_peak);
    sim_free(e->svc_hash);
    sim_free(e->shape_keys);
    sim_free(e->shape_head);
    sim_free(e->shape_tail);
    sim_free(e->shape_count);
    sim_free(e->shape_gen);
    sim_free(e->shape_slots);
    sim_free(e->shape_active);
    sim_free(e->shape_pos);
    sim_free(e->allocs);
    sim_free(e->jobs);
    sim_free(e->jstate_raw);
    sim_free(e->job_version);
    sim_free(e->seg_point);
    sim_free(e->job_next);
    sim_free(e->job_dirty);
    sim_free(e->dirty);
    sim_free(e->tenant_used_milli);
    sim_free(e->tenant_running);
    sim_free(e->tenant_pending);
    sim_free(e->tenant_quota);
    sim_free(e->tstats);
    sim_free(e->probe_vals);
    sim_free(e->probe_sums);
    sim_hist_destroy(e->h_jct);
    sim_hist_destroy(e->h_wait);
    for (int k = 0; k < SIM_QOS_COUNT; k++)
        sim_hist_destroy(e->qstats[k].jct);
    if (e->rng)
        gsl_rng_free(e->rng);
    if (e->fail_rng)
        gsl_rng_free(e->fail_rng);
    sim_eventq_fini(&e->q);
    sim_free(e);
}

int sim_engine_set_quota(sim_engine *e, uint32_t tenant, double gpus)
{
    if (!(gpus >= 0))
        return SIM_EINVAL;
    int st = grow_tenants(e, tenant + 1);
    if (st != SIM_OK)
        return st;
    /* Policies count quotas in milli-GPUs: one that rounds to 0 is none, for the
     * metrics too (a positive quota of 1e-300 GPU made used / quota overflow). */
    e->tenant_quota[tenant] = gpus * SIM_MILLI_GPU < 0.5 ? 0 : gpus;
    return SIM_OK;
}

int sim_engine_add_failure(sim_engine *e, uint32_t node, sim_time down_us, sim_time up_us,
                           sim_diag *d)
{
    if (node >= e->n_nodes || down_us < 0 || up_us <= down_us)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "failure of node %u from %lld to %lld us is invalid", node,
                            (long long)down_us, (long long)up_us);
    if (sim_eventq_push(&e->q, down_us, EV_NODE_DOWN, node, 0) != SIM_OK ||
        sim_eventq_push(&e->q, up_us, EV_NODE_UP, node, 0) != SIM_OK)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

/* ---- Admission ------------------------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : 0;
}

static bool node_type_ok(const job_spec *s, uint16_t t)
{
    return s->gpu_type_mask == 0 || ((s->gpu_type_mask >> t) & 1u);
}

/*
 * Decide whether the job's shape can ever run on the whole cluster (all nodes up and
 * empty), and resolve its replica count. The replica count (nominal) fixes each
 * replica's GPUs, CPU and memory; what must fit at once is `fewest` such replicas when
 * not 0 and fewer than the nominal count (an elastic job under a policy that starts it
 * at min_replicas), else the nominal count. Fills f->ok, f->replicas_out (the nominal
 * count) and f->reason. O(node kinds); results are cached per shape.
 */
static void admit_shape(const sim_engine *e, const job_spec *s, uint32_t fewest, fit_entry *f)
{
    f->ok = false;
    f->reason[0] = '\0';
    uint32_t G = s->num_gpus;
    uint32_t maxg = 0;
    bool any_type = false, any_mem = false;
    for (uint32_t i = 0; i < e->n_kinds && G; i++) {
        const node_kind *nk = &e->kinds[i];
        uint32_t cnt = nk->gpus;
        if (!cnt || !node_type_ok(s, nk->type))
            continue;
        any_type = true;
        if (nk->gpu_mem < s->gpu_mem_mib)
            continue;
        any_mem = true;
        if (cnt > maxg)
            maxg = cnt;
    }
    uint32_t R, gpr;
    if (G == 0) {
        R = s->replicas ? s->replicas : 1;
        gpr = 0;
    } else {
        if (!any_type) {
            snprintf(f->reason, sizeof f->reason, "no node has a GPU of the requested type");
            return;
        }
        if (!any_mem) {
            snprintf(f->reason, sizeof f->reason,
                     "no GPU of the requested type has %llu MiB of memory",
                     (unsigned long long)s->gpu_mem_mib);
            return;
        }
        if (s->replicas == 0) {
            R = (uint32_t)ceil_div(G, maxg);
            while (G % R || G / R > maxg)
                R++;
        } else {
            R = s->replicas;
            if (G % R) {
                snprintf(f->reason, sizeof f->reason,
                         "%u GPUs cannot be split into %u equal replicas", G, R);
                return;
            }
        }
        gpr = G / R;
        if (gpr > maxg) {
            snprintf(f->reason, sizeof f->reason,
                     "a replica needs %u GPUs on one node; the largest eligible node has %u",
                     gpr, maxg);
            return;
        }
    }
    f->replicas_out = R;
    uint32_t N = fewest && fewest < R ? fewest : R; /* replicas that must fit at once */
    uint64_t cpu = ceil_div(s->cpu_milli, R), mem = ceil_div(s->mem_mib, R);
    uint64_t slots = 0, slots_gpu_only = 0;
    uint64_t max_cpu = 0, max_mem = 0;
    for (uint32_t i = 0; i < e->n_kinds && slots < N; i++) {
        const node_kind *nk = &e->kinds[i];
        uint64_t k;
        if (gpr) {
            uint32_t cnt = nk->gpus;
            if (!cnt || !node_type_ok(s, nk->type) || nk->gpu_mem < s->gpu_mem_mib)
                continue;
            /* Two replicas of one job never share a GPU (the core refuses such a
             * placement), fractional or not: a node holds cnt / gpr of them. */
            k = cnt / gpr;
        } else {
            k = UINT32_MAX;
        }
        slots_gpu_only += k * nk->count;
        if (nk->cpu > max_cpu)
            max_cpu = nk->cpu;
        if (nk->mem > max_mem)
            max_mem = nk->mem;
        if (cpu) {
            uint64_t kc = nk->cpu / cpu;
            if (kc < k)
                k = kc;
        }
        if (mem) {
            uint64_t km = nk->mem / mem;
            if (km < k)
                k = km;
        }
        slots += k * nk->count;
    }
    if (slots >= N) {
        f->ok = true;
        return;
    }
    if (slots_gpu_only >= N && cpu > max_cpu)
        snprintf(f->reason, sizeof f->reason,
                 "a replica needs %llu milli-CPU; the largest eligible node has %llu",
                 (unsigned long long)cpu, (unsigned long long)max_cpu);
    else if (slots_gpu_only >= N && mem > max_mem)
        snprintf(f->reason, sizeof f->reason,
                 "a replica needs %llu MiB of memory; the largest eligible node has %llu",
                 (unsigned long long)mem, (unsigned long long)max_mem);
    else if (N < R)
        snprintf(f->reason, sizeof f->reason,
                 "the whole cluster can hold only %llu of the %u replicas (min_replicas) "
                 "the job starts with",
                 (unsigned long long)slots, N);
    else
        snprintf(f->reason, sizeof f->reason,
                 "the whole cluster can hold only %llu of the job's %u replicas at once",
                 (unsigned long long)slots, R);
}

static const fit_entry *admit(sim_engine *e, const job_spec *s, uint32_t fewest)
{
    uint64_t h = 1469598103934665603u;
    uint64_t key[8] = {s->num_gpus,  s->replicas, s->gpu_milli,     s->gpu_mem_mib,
                       s->cpu_milli, s->mem_mib,  s->gpu_type_mask, fewest};
    for (int i = 0; i < 8; i++)
        h = (h ^ key[i]) * 1099511628211u;
    fit_entry *f = &e->fit_cache[h % FIT_CACHE];
    if (f->used && f->num_gpus == s->num_gpus && f->replicas_in == s->replicas &&
        f->gpu_milli == s->gpu_milli && f->gpu_mem == s->gpu_mem_mib && f->cpu == s->cpu_milli &&
        f->mem == s->mem_mib && f->mask == s->gpu_type_mask && f->fewest == fewest)
        return f;
    f->used = true;
    f->num_gpus = s->num_gpus;
    f->replicas_in = s->replicas;
    f->fewest = fewest;
    f->gpu_milli = s->gpu_milli;
    f->gpu_mem = s->gpu_mem_mib;
    f->cpu = s->cpu_milli;
    f->mem = s->mem_mib;
    f->mask = s->gpu_type_mask;
    admit_shape(e, s, fewest, f);
    return f;
}

/* ---- Rates -------------------------------------------------------------------------- */

static double job_speed(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    if (j->state != SIM_JOB_RUNNING)
        return 0;
    double speed = INFINITY;
    for (uint32_t a = j->alloc_head; a != NIL; a = e->allocs[a].next_in_job) {
        const sim_alloc_rec *r = &e->allocs[a];
        if (r->gpu == SIM_GPU_NONE)
            continue;
        uint16_t type = e->node_gpu_type[r->node];
        uint32_t truem = r->demand;
        double s = e->rate.throughput ? e->rate.throughput(e->rate.ctx, &j->spec, type) : 1.0;
        double share = r->milli >= truem ? 1.0 : (double)r->milli / (double)truem;
        s *= share;
        if (e->rate.interference && e->gpu_nres[r->gpu] > 1) {
            uint32_t n = 0;
            for (uint32_t o = e->gpu_first_res[r->gpu]; o != NIL; o = e->allocs[o].next_on_gpu) {
                const sim_alloc_rec *ro = &e->allocs[o];
                if (ro->job == id || n >= SIM_MILLI_GPU)
                    continue;
                e->residents[n].job = &e->jobs[ro->job].spec;
                e->residents[n].milli = ro->milli;
                n++;
            }
            if (n)
                s *= e->rate.interference(e->rate.ctx, &j->spec, r->milli, e->residents, n, type);
        }
        if (s < speed)
            speed = s;
    }
    if (speed == INFINITY)
        speed = 1.0;
    if (j->is_service) /* a service's work is the time it serves */
        return j->speed_factor;
    if (j->replicas != j->nominal_replicas || e->rate.scaling) {
        if (e->rate.scaling)
            speed *= e->rate.scaling(e->rate.ctx, &j->spec, j->replicas, j->nominal_replicas);
        else
            speed *= (double)j->replicas / (double)j->nominal_replicas;
    }
    speed *= j->speed_factor;
    return speed > 0 && isfinite(speed) ? speed : 0;
}

#define RATE_AHEAD 8 /* dirty jobs ahead whose records update_rates asks for */

/* Recompute the speed of every dirty job and schedule its finish. A job whose speed
 * did not change keeps its finish event: last_update + left / speed is unchanged, unless
 * its work changed (job_dirty 2: a restart in place, sim__work_changed). */
static int update_rates(sim_engine *e)
{
    for (uint32_t i = 0; i < e->n_dirty; i++) {
        /* A point that starts or preempts many jobs (a round of gavel) leaves their
         * records and allocations out of the cache: ask for the fields read here some
         * jobs ahead, and for the first allocation of a job asked for earlier. */
        if (i + RATE_AHEAD < e->n_dirty) {
            const char *p = (const char *)&e->jobs[e->dirty[i + RATE_AHEAD]];
            sim_prefetch_bytes(p + offsetof(sim_job, nominal_replicas),
                               p + offsetof(sim_job, is_service) + 1);
        }
        if (i + RATE_AHEAD / 2 < e->n_dirty) {
            uint32_t a = e->jobs[e->dirty[i + RATE_AHEAD / 2]].alloc_head;
            if (a != NIL)
                __builtin_prefetch(&e->allocs[a]);
        }
        sim_job_id id = e->dirty[i];
        if (!e->job_dirty[id])
            continue;
        bool work_changed = e->job_dirty[id] == 2;
        e->job_dirty[id] = 0;
        sim_job *j = &e->jobs[id];
        double speed = job_speed(e, id);
        if (speed == j->speed && !work_changed)
            continue;
        if (speed != j->speed)
            sim__set_speed(e, id, speed);
        e->job_version[id]++;
        if (speed <= 0)
            continue;
        double left = j->work_total_s - j->work_done_s;
        sim_time t = e->now;
        if (left > 0) {
            double dt = ceil(left / speed * 1e6);
            t = dt >= 9e18 - (double)e->now ? SIM_TIME_NEVER : e->now + (sim_time)dt;
        }
        if (t != SIM_TIME_NEVER &&
            sim_eventq_push(&e->q, t, EV_FINISH, id, e->job_version[id]) != SIM_OK)
            return SIM_ENOMEM;
    }
    e->n_dirty = 0;
    return SIM_OK;
}

/* ---- Job lifecycle ---------------------------------------------------------------- */

/* Job groups: a group is a run of consecutive arrivals with one group id. Its record
 * lives while members are in the system; it ends when the run of arrivals is over and
 * no member is left, and counts as done when no member was rejected. */
static int grow_groups(sim_engine *e)
{
    uint32_t ncap = e->grp_cap ? e->grp_cap * 2 : 64;
    if (ncap <= e->grp_cap || ncap > UINT32_MAX / 2)
        return SIM_ELIMIT;
    group_rec *ng = sim_reallocarray(e->grp, ncap, sizeof *ng);
    if (!ng)
        return SIM_ENOMEM;
    e->grp = ng;
    for (uint32_t i = ncap; i-- > e->grp_cap;) {
        e->grp[i].next_free = e->grp_free;
        e->grp_free = i;
    }
    e->grp_cap = ncap;
    return SIM_OK;
}

/* Every member of group g arrived and left: keep its completion time when it is done.
 * The spans array has room for every group that arrived (group_arrive). */
static void group_end(sim_engine *e, uint32_t g)
{
    group_rec *r = &e->grp[g];
    if (!r->broken) {
        e->grp_spans[e->grp_n_spans++] = r->last_end_us - r->submit_us;
        e->sum.groups_done++;
    }
    r->next_free = e->grp_free;
    e->grp_free = g;
}

/* The run of arrivals of the current group is over. */
static void group_close(sim_engine *e)
{
    if (e->grp_cur == NIL)
        return;
    uint32_t g = e->grp_cur;
    e->grp_cur = NIL;
    e->grp[g].open = false;
    if (!e->grp[g].left)
        group_end(e, g);
}

/* The group record of an arriving job (NIL when it has none): the current group's when
 * the job continues its run of arrivals, else a new record. */
static int group_arrive(sim_engine *e, const job_spec *s, uint32_t *out)
{
    *out = NIL;
    if (!e->cfg.job_groups)
        return SIM_OK;
    if (e->grp_cur != NIL && strcmp(s->group, e->grp_cur_id) == 0) {
        *out = e->grp_cur;
        return SIM_OK;
    }
    group_close(e);
    if (!s->group[0])
        return SIM_OK;
    int st;
    if (e->grp_free == NIL && (st = grow_groups(e)) != SIM_OK)
        return st;
    /* Each group adds at most one completion time: room for one per group arrived. */
    if (e->sum.groups_arrived >= e->grp_spans_cap) {
        size_t ncap = e->grp_spans_cap ? e->grp_spans_cap * 2 : 64;
        sim_time *ns = sim_reallocarray(e->grp_spans, ncap, sizeof *ns);
        if (!ns)
            return SIM_ENOMEM;
        e->grp_spans = ns;
        e->grp_spans_cap = ncap;
    }
    uint32_t g = e->grp_free;
    e->grp_free = e->grp[g].next_free;
    e->grp[g] = (group_rec){
        .submit_us = s->submit_us, .last_end_us = s->submit_us, .open = true, .next_free = NIL};
    e->grp_cur = g;
    memcpy(e->grp_cur_id, s->group, sizeof e->grp_cur_id);
    e->grp_cur_id[sizeof e->grp_cur_id - 1] = '\0';
    e->sum.groups_arrived++;
    *out = g;
    return SIM_OK;
}

void sim__group_member_end(sim_engine *e, sim_job_id id, bool done)
{
    if (!e->cfg.job_groups || e->job_group[id] == NIL)
        return;
    uint32_t g = e->job_group[id];
    e->job_group[id] = NIL;
    group_rec *r = &e->grp[g];
    r->left--;
    if (done)
        r->last_end_us = e->now;
    else
        r->broken = true;
    if (!r->open && !r->left)
        group_end(e, g);
}

static int cmp_time(const void *a, const void *b)
{
    sim_time x = *(const sim_time *)a, y = *(const sim_time *)b;
    return (x > y) - (x < y);
}

/* The done groups' completion times: mean, nearest-rank median and p99, max. */
static void group_figures(sim_engine *e)
{
    size_t n = e->grp_n_spans;
    if (!n) {
        e->sum.group_mean_s = e->sum.group_median_s = NAN;
        e->sum.group_p99_s = e->sum.group_max_s = NAN;
        return;
    }
    qsort(e->grp_spans, n, sizeof *e->grp_spans, cmp_time);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)e->grp_spans[i] / 1e6;
    e->sum.group_mean_s = sum / (double)n;
    size_t r50 = (size_t)ceil(0.5 * (double)n), r99 = (size_t)ceil(0.99 * (double)n);
    e->sum.group_median_s = (double)e->grp_spans[(r50 ? r50 : 1) - 1] / 1e6;
    e->sum.group_p99_s = (double)e->grp_spans[(r99 ? r99 : 1) - 1] / 1e6;
    e->sum.group_max_s = (double)e->grp_spans[n - 1] / 1e6;
}

static void free_job(sim_engine *e, sim_job_id id)
{
    e->job_dirty[id] = 0;
    e->job_version[id]++;
    e->jobs[id].state = SIM_JOB_FREE;
    e->job_next[id] = e->job_free;
    e->job_free = id;
    e->jobs_in_flight--;
}

void sim__count_done(sim_engine *e, sim_time submit_us, sim_time start_us, sim_time end_us,
                     sim_qos qos)
{
    double jct = (double)(end_us - submit_us) / 1e6;
    sim_hist_add(e->h_jct, jct);
    sim_hist_add(e->h_wait, (double)(start_us - submit_us) / 1e6);
    sim_hist_add(e->qstats[qos].jct, jct);
}

static void account_done(sim_engine *e, const sim_job *j)
{
    double jct = (double)(e->now - j->spec.submit_us) / 1e6;
    double wait = (double)(j->first_start_us - j->spec.submit_us) / 1e6;
    /* With a jobs.csv the distributions are counted where the job's row is formatted. */
    if (!e->cfg.jobs_csv)
        sim__count_done(e, j->spec.submit_us, j->first_start_us, e->now, j->spec.qos);
    tenant_stats *ts = &e->tstats[j->spec.tenant];
    ts->done++;
    ts->jct_sum_s += jct;
    ts->wait_sum_s += wait;
    ts->gpu_s += j->attained_gpu_s;
    qos_stats *qs = &e->qstats[j->spec.qos];
    qs->done++;
    qs->jct_sum_s += jct;
    qs->wait_sum_s += wait;
    if (job_spec_has(&j->spec, SIM_ATTR_SLO_S)) {
        e->sum.slo_jobs++;
        if (jct > j->spec.attr[SIM_ATTR_SLO_S])
            e->sum.slo_violations++;
    }
    if (!j->is_service) {
        e->sum.offline_done++;
        e->sum.offline_jct_sum_s += jct;
    }
    e->sum.jobs_done++;
    e->sum.last_end_us = e->now;
}

static int finish_job(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    sim__job_touch(e, id);
    e->stall = 0;
    j->work_done_s = j->work_total_s;
    sim__set_speed(e, id, 0);
    account_done(e, j);
    sim__group_member_end(e, id, true);
    /* The row names the placement the job finished on, so write it before release. */
    int st = sim__write_job_row(e, j, "done", "");
    svc_leave(e, j);
    sim__release_allocs(e, id);
    sim__list_remove(e, id, true);
    if (e->pol->on_finish)
        e->pol->on_finish(e->pst, &e->v, id);
    free_job(e, id);
    return st;
}

void sim__note_rejection(sim_engine *e, const char *id, const char *reason)
{
    if (e->sum.jobs_rejected++ == 0)
        snprintf(e->sum.first_rejection, sizeof e->sum.first_rejection, "'%.60s': %.180s", id,
                 reason);
}

/* With demand curves, the online services are the rows of qos LS: each needs a curve,
 * and a curve's row must be of qos LS. Marks the row's curve as seen. */
static int svc_check(sim_engine *e, const job_spec *s, sim_diag *d)
{
    const sim_curves *c = e->world.curves;
    if (!c)
        return SIM_OK;
    uint32_t svc = svc_find(e, s->id);
    const char *file = e->world.trace_path;
    if (svc == UINT32_MAX && s->qos == SIM_QOS_LS)
        return sim_diag_set(d, SIM_EPARSE, file, (long)s->line, 0,
                            "job '%s' has qos LS, an online service, but no demand curve in "
                            "%s (services are the LS rows; give it a curve or another qos)",
                            s->id, c->path ? c->path : "the demand file");
    if (svc == UINT32_MAX)
        return SIM_OK;
    if (s->qos != SIM_QOS_LS)
        return sim_diag_set(d, SIM_EPARSE, file, (long)s->line, 0,
                            "job '%s' has a demand curve (%s:%ld) but qos '%s'; an online "
                            "service needs qos LS",
                            s->id, c->path ? c->path : "demand", c->line ? c->line[svc] : 0L,
                            s->qos == SIM_QOS_NONE ? "" : sim_qos_name(s->qos));
    e->svc_seen[svc] = 1;
    return SIM_OK;
}

/* After the whole trace: a curve that named no row of the trace. */
static int svc_check_unseen(const sim_engine *e, sim_diag *d)
{
    const sim_curves *c = e->world.curves;
    for (uint32_t s = 0; c && s < c->n; s++)
        if (!e->svc_seen[s])
            return sim_diag_set(d, SIM_EPARSE, c->path, c->line ? c->line[s] : 0, 0,
                                "service '%s' has a demand curve but no row in the trace%s%s "
                                "(an online service is a row of qos LS with this job id)",
                                c->names[s], e->world.trace_path ? " " : "",
                                e->world.trace_path ? e->world.trace_path : "");
    return SIM_OK;
}

/* A role attribute of s as an integer (0 when absent). */
static uint64_t role_attr(const job_spec *s, sim_attr a)
{
    return job_spec_has(s, a) && s->attr[a] > 0 ? (uint64_t)s->attr[a] : 0;
}

/* Why the master or a parameter server of s can never be placed (NULL when each fits
 * some node alone and, with the trainers at their fewest, `trainers`, the cluster's CPU
 * and memory in total; a necessary condition only); the message goes to buf. `replicas`
 * is the job's resolved (nominal) replica count, which sizes each trainer. */
static const char *roles_misfit(const sim_engine *e, const job_spec *s, uint32_t replicas,
                                uint32_t trainers, char *buf, size_t size)
{
    uint64_t ps = role_attr(s, SIM_ATTR_PS_REPLICAS);
    uint64_t limit = (uint64_t)(e->n_gpus > e->n_nodes ? e->n_gpus : e->n_nodes) + 1;
    if (1 + ps > limit) {
        snprintf(buf, size,
                 "its master and %llu parameter servers exceed the %llu roles a job "
                 "may have on this cluster (GPUs or nodes, whichever is more, plus 1)",
                 (unsigned long long)ps, (unsigned long long)limit);
        return buf;
    }
    uint64_t max_cpu = 0, max_mem = 0;
    for (uint32_t n = 0; n < e->n_nodes; n++) {
        if (e->node_cpu_total[n] > max_cpu)
            max_cpu = e->node_cpu_total[n];
        if (e->node_mem_total[n] > max_mem)
            max_mem = e->node_mem_total[n];
    }
    static const struct {
        const char *role;
        sim_attr cpu, mem;
    } roles[2] = {{"the master", SIM_ATTR_MASTER_CPU_MILLI, SIM_ATTR_MASTER_MEM_MIB},
                  {"a parameter server", SIM_ATTR_PS_CPU_MILLI, SIM_ATTR_PS_MEM_MIB}};
    for (int r = 0; r < 2; r++) {
        if (r == 1 && ps == 0)
            break;
        uint64_t cpu = role_attr(s, roles[r].cpu), mem = role_attr(s, roles[r].mem);
        if (cpu > max_cpu)
            snprintf(buf, size, "%s needs %llu milli-CPU; the largest node has %llu", roles[r].role,
                     (unsigned long long)cpu, (unsigned long long)max_cpu);
        else if (mem > max_mem)
            snprintf(buf, size, "%s needs %llu MiB of memory; the largest node has %llu",
                     roles[r].role, (unsigned long long)mem, (unsigned long long)max_mem);
        else
            continue;
        return buf;
    }
    uint64_t lo = trainers;
    uint64_t cpu = lo * ceil_div(s->cpu_milli, replicas) + role_attr(s, SIM_ATTR_MASTER_CPU_MILLI) +
                   ps * role_attr(s, SIM_ATTR_PS_CPU_MILLI);
    uint64_t mem = lo * ceil_div(s->mem_mib, replicas) + role_attr(s, SIM_ATTR_MASTER_MEM_MIB) +
                   ps * role_attr(s, SIM_ATTR_PS_MEM_MIB);
    uint64_t mem_all = 0;
    for (uint32_t n = 0; n < e->n_nodes; n++)
        mem_all += e->node_mem_total[n];
    if (cpu > e->cpu_total_all)
        snprintf(buf, size,
                 "its trainers, master and parameter servers need %llu milli-CPU "
                 "together; the cluster has %llu",
                 (unsigned long long)cpu, (unsigned long long)e->cpu_total_all);
    else if (mem > mem_all)
        snprintf(buf, size,
                 "its trainers, master and parameter servers need %llu MiB of "
                 "memory together; the cluster has %llu",
                 (unsigned long long)mem, (unsigned long long)mem_all);
    else
        return NULL;
    return buf;
}

int sim__output_failed(sim_diag *d, int st, const char *file)
{
    if (st == SIM_ENOMEM)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return sim_diag_set(d, SIM_EIO, NULL, 0, 0, "cannot write %s", file);
}

static int arrive(sim_engine *e, const job_spec *s, sim_diag *d)
{
    e->sum.jobs_arrived++;
    e->stall = 0;
    int st = grow_tenants(e, s->tenant + 1);
    if (st != SIM_OK)
        return sim_diag_set(d, st, NULL, 0, 0, "out of memory");
    e->tstats[s->tenant].arrived++;
    if ((st = svc_check(e, s, d)) != SIM_OK)
        return st;
    uint64_t missing = e->pol->needs_attrs & ~s->attr_present;
    if (missing) {
        char names[512] = "";
        size_t o = 0;
        for (int a = 0; a < SIM_ATTR_COUNT && o + 40 < sizeof names; a++)
            if ((missing >> a) & 1u)
                o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", o ? ", " : "",
                                      sim_attr_name((sim_attr)a));
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy '%s' needs the trace column(s) %s, which job '%s' "
                            "(line %llu) lacks; this trace format does not provide them",
                            e->pol->name, names, s->id, (unsigned long long)s->line);
    }
    /* An elastic job without a replica count starts from its fewest replicas. */
    bool has_min = job_spec_has(s, SIM_ATTR_MIN_REPLICAS);
    bool has_max = job_spec_has(s, SIM_ATTR_MAX_REPLICAS);
    job_spec elastic;
    if (has_min && s->replicas == 0 && s->attr[SIM_ATTR_MIN_REPLICAS] >= 1) {
        elastic = *s;
        elastic.replicas = (uint32_t)s->attr[SIM_ATTR_MIN_REPLICAS];
        s = &elastic;
    }
    /* The replicas that must fit at once: the policies that scale elastic jobs start
     * one at min_replicas (or more, as room allows); every other policy starts a job at
     * its nominal count, so that count must fit. Each replica's size is the nominal
     * count's share of the job either way. */
    uint32_t fewest = 0;
    if (has_min && s->attr[SIM_ATTR_MIN_REPLICAS] >= 1 &&
        s->attr[SIM_ATTR_MIN_REPLICAS] < s->replicas)
        fewest = (uint32_t)s->attr[SIM_ATTR_MIN_REPLICAS];
    uint32_t grp;
    if ((st = group_arrive(e, s, &grp)) != SIM_OK)
        return sim_diag_set(d, st, NULL, 0, 0,
                            st == SIM_ELIMIT ? "too many job groups in flight" : "out of memory");
    const fit_entry *f = admit(e, s, e->pol->elastic_outputs ? fewest : 0);
    char reason[256];
    const char *why = f->ok ? NULL : f->reason;
    if (why && fewest && !e->pol->elastic_outputs && admit(e, s, fewest)->ok) {
        f = admit(e, s, 0); /* (the entry may have been replaced) */
        snprintf(reason, sizeof reason,
                 "%.120s; policy '%.32s' starts it at that count, not at min_replicas as the "
                 "policies that scale elastic jobs do",
                 f->reason, e->pol->name);
        why = reason;
    }
    if (!why && (has_min || has_max)) {
        double lo = has_min ? s->attr[SIM_ATTR_MIN_REPLICAS] : 1;
        double hi = has_max ? s->attr[SIM_ATTR_MAX_REPLICAS] : 1e9;
        if (f->replicas_out < lo || f->replicas_out > hi) {
            snprintf(reason, sizeof reason,
                     "its %u replicas lie outside min_replicas..max_replicas (%g..%g)",
                     f->replicas_out, lo, hi);
            why = reason;
        }
    }
    if (!why && job_spec_has_roles(s) && e->pol->no_roles) {
        snprintf(reason, sizeof reason,
                 "policy '%s' places no master or parameter servers; this job has them",
                 e->pol->name);
        why = reason;
    }
    if (!why && job_spec_has_roles(s))
        why = roles_misfit(e, s, f->replicas_out,
                           e->pol->elastic_outputs && fewest ? fewest : f->replicas_out, reason,
                           sizeof reason);
    if (why) {
        sim__note_rejection(e, s->id, why);
        e->tstats[s->tenant].rejected++;
        if (grp != NIL)
            e->grp[grp].broken = true;
        int wst = sim__write_spec_row(e, s, s->replicas, "rejected", why);
        return wst != SIM_OK ? sim__output_failed(d, wst, "jobs.csv") : SIM_OK;
    }
    /* The makespan window opens at the first admitted job: one rejected at admission
     * never enters the cluster, so it neither opens the window nor ends it. */
    if (e->sum.first_submit_us == SIM_TIME_NEVER)
        e->sum.first_submit_us = s->submit_us;
    if (e->job_free == NIL && e->job_fresh == e->job_cap && (st = grow_jobs(e)) != SIM_OK)
        return sim_diag_set(d, st, NULL, 0, 0,
                            st == SIM_ELIMIT ? "too many jobs in flight" : "out of memory");
    /* A released slot first (the last released), else the lowest never used: the order
     * a free list holding the never-used slots in increasing order behind the released
     * ones would give. */
    sim_job_id id = e->job_free;
    if (id != NIL) {
        e->job_free = e->job_next[id];
    } else {
        id = e->job_fresh++;
        e->job_version[id] = 0;
        e->job_dirty[id] = 0;
    }
    e->jobs_in_flight++;
    sim_job *j = &e->jobs[id];
    memset(j, 0, sizeof *j);
    j->spec = *s;
    j->seq = e->sum.jobs_arrived - 1;
    j->nominal_replicas = f->replicas_out;
    j->gpus_per_replica = s->num_gpus / f->replicas_out;
    j->cpu_per_replica = ceil_div(s->cpu_milli, f->replicas_out);
    j->mem_per_replica = ceil_div(s->mem_mib, f->replicas_out);
    if (e->cfg.job_groups) {
        e->job_group[id] = grp;
        if (grp != NIL)
            e->grp[grp].left++;
    }
    j->state = SIM_JOB_PENDING;
    j->alloc_head = NIL;
    j->role_head = NIL;
    if (job_spec_has_roles(s)) {
        j->n_roles = 1 + role_attr(s, SIM_ATTR_PS_REPLICAS);
        j->master_cpu_milli = role_attr(s, SIM_ATTR_MASTER_CPU_MILLI);
        j->master_mem_mib = role_attr(s, SIM_ATTR_MASTER_MEM_MIB);
        j->ps_cpu_milli = role_attr(s, SIM_ATTR_PS_CPU_MILLI);
        j->ps_mem_mib = role_attr(s, SIM_ATTR_PS_MEM_MIB);
    }
    j->first_start_us = SIM_TIME_NEVER;
    j->queued_since_us = e->now;
    j->last_update_us = e->now;
    j->work_total_s = s->work_s;
    j->least_left_s = INFINITY;
    j->speed_factor = 1.0;
    j->pred_duration_s = NAN;
    j->pred_milli = NAN;
    uint32_t svc = svc_find(e, s->id);
    if (svc != UINT32_MAX) {
        j->is_service = true;
        j->svc = svc;
        j->demand_replicas = e->svc_demand[svc];
        j->peak_replicas = e->svc_peak[svc];
        j->short_since_us = e->now;
        e->svc_job[svc] = id;
        e->sum.services++;
    }
    if (e->pol->job_state_size)
        memset(sim_view_job_state(&e->v, id), 0, e->pol->job_state_size);
    sim__list_append(e, id, false);
    /* The policy sees the job's text during on_arrival only. */
    if (e->pol->on_arrival)
        e->pol->on_arrival(e->pst, &e->v, id);
    j->spec.name = "";
    j->spec.command = "";
    return SIM_OK;
}

static int read_next(sim_engine *e, sim_diag *d)
{
    int st = e->src->next(e->src->ctx, &e->next, d);
    if (st < 0)
        return st;
    e->has_next = st == 1;
    if (e->has_next) {
        if (e->next.submit_us < e->last_submit_us)
            return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0,
                                "job '%s' (line %llu) is submitted before the job read before it; "
                                "traces must be in submit order",
                                e->next.id, (unsigned long long)e->next.line);
        if (e->next.submit_us > (sim_time)(SIM_TIME_LIMIT_S * 1e6) ||
            !(e->next.work_s <= SIM_TIME_LIMIT_S))
            return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0,
                                "job '%s' (line %llu): its submit time or duration exceeds the "
                                "simulator's limit of %.0f s",
                                e->next.id, (unsigned long long)e->next.line, SIM_TIME_LIMIT_S);
        e->last_submit_us = e->next.submit_us;
        if (!e->next.name)
            e->next.name = "";
        if (!e->next.command)
            e->next.command = "";
    }
    return SIM_OK;
}

/* ---- Failures ----------------------------------------------------------------------- */

/* A node is down while at least one outage covers it: outages may overlap (injected
 * ones, and the random process), and the node returns only when the last one ends. */
static int node_down(sim_engine *e, uint32_t n, uint32_t from_process)
{
    if (from_process && e->cfg.mtbf_s > 0) {
        double up = gsl_ran_exponential(e->fail_rng, e->cfg.mttr_s > 0 ? e->cfg.mttr_s : 1);
        if (sim_eventq_push(&e->q, e->now + (sim_time)ceil(up * 1e6), EV_NODE_UP, n, 1) !=
            SIM_OK)
            return SIM_ENOMEM;
    }
    if (e->node_outages[n]++ > 0)
        return SIM_OK;
    e->node_up[n] = false;
    e->v.up_epoch++;
    e->n_down++;
    e->sum.failures++;
    sim__node_refresh(e, n);
    /* Every job with an allocation on the node loses it and the work since its last
     * checkpoint. Failures are rare, so a scan of the running list is fine. */
    for (sim_job_id id = e->v.running_head; id != SIM_JOB_NONE;) {
        sim_job_id next = e->job_next[id];
        bool hit = false;
        for (uint32_t a = e->jobs[id].alloc_head; a != NIL && !hit; a = e->allocs[a].next_in_job)
            hit = e->allocs[a].node == n;
        /* A job whose master or a parameter server was on the node stops as well. */
        for (uint32_t a = e->jobs[id].role_head; a != NIL && !hit; a = e->allocs[a].next_in_job)
            hit = e->allocs[a].node == n;
        if (hit) {
            /* A job with less than a microsecond of work left finishes at this moment
             * (its finish event may stand behind the failure's at the same time). */
            sim_job *j = &e->jobs[id];
            sim__job_touch(e, id);
            if (j->speed > 0 && (j->work_total_s - j->work_done_s) / j->speed * 1e6 < 1) {
                int st = finish_job(e, id);
                if (st != SIM_OK)
                    return st;
            } else {
                sim__requeue(e, id, false, false);
                if (e->pol->on_requeue)
                    e->pol->on_requeue(e->pst, &e->v, id);
            }
        }
        id = next;
    }
    return SIM_OK;
}

static int node_up(sim_engine *e, uint32_t n, uint32_t from_process)
{
    if (e->node_outages[n] > 0 && --e->node_outages[n] == 0) {
        e->node_up[n] = true;
        e->v.up_epoch++;
        e->n_down--;
        sim__node_refresh(e, n);
        sim__note_release(e, n);
    }
    if (from_process && e->cfg.mtbf_s > 0) {
        double down = gsl_ran_exponential(e->fail_rng, e->cfg.mtbf_s);
        if (sim_eventq_push(&e->q, e->now + (sim_time)ceil(down * 1e6), EV_NODE_DOWN, n, 1) !=
            SIM_OK)
            return SIM_ENOMEM;
    }
    return SIM_OK;
}

/* ---- Integration of utilisation --------------------------------------------------- */

static void integrate(sim_engine *e, sim_time now)
{
    if (!e->integ_started) {
        e->integ_started = true;
        e->integ_last_us = now;
        return;
    }
    double dt = (double)(now - e->integ_last_us) / 1e6;
    if (dt > 0) {
        e->sum.gpu_seconds_alloc += dt * (double)e->used_milli_total / 1000.0;
        e->sum.gpu_seconds_effective += dt * (double)e->eff_milli_total / 1000.0;
        e->sum.cpu_milli_seconds_alloc += dt * (double)e->cpu_used_all;
    }
    e->integ_last_us = now;
}

/* ---- The loop ------------------------------------------------------------------------ */

static int call_schedule(sim_engine *e, sim_diag *d)
{
    e->dec_status = SIM_OK;
    int st = e->pol->schedule(e->pst, &e->v, e->now, &e->dec);
    if (e->dec_status != SIM_OK) {
        *d = e->dec_diag;
        /* An invalid decision is the policy's error; the engine's own failures (out of
         * memory, jobs.csv not written) keep their status. */
        return e->dec_status == SIM_EINVAL ? SIM_EPOLICY : e->dec_status;
    }
    if (st != SIM_OK) {
        if (st == SIM_ENOMEM)
            return sim_diag_set(d, st, NULL, 0, 0, "policy '%s': out of memory", e->pol->name);
        sim_diag_set(d, SIM_EPOLICY, NULL, 0, 0, "policy '%s' failed at t=%.6f s: %s",
                     e->pol->name, (double)e->now / 1e6, sim_strerror(st));
        return SIM_EPOLICY;
    }
    return SIM_OK;
}

/* Why job j (running or waiting) is left unfinished. `horizon`: the run stopped at the
 * horizon; otherwise it stalled (sim_summary.stalled), or nothing could change any more. */
static const char *unfinished_reason(const sim_engine *e, const sim_job *j, bool running,
                                     bool horizon)
{
    _Static_assert(SIM_CLOCK_END_S == 2e10, "the reasons below name the end of simulated time");
    if (horizon && e->sum.clock_ended)
        return running ? "still running at the end of simulated time (20000000000 s)"
                       : "still waiting at the end of simulated time (20000000000 s)";
    if (horizon)
        return running ? "still running at the horizon" : "still waiting at the horizon";
    if (e->sum.stalled)
        return running ? "still running when the run stalled: no job finished or was left "
                         "nearer its end for the stall limit"
                       : "still waiting when the run stalled: no job finished or was left "
                         "nearer its end for the stall limit";
    if (running)
        return "placed but not progressing (paused, or no speed) when nothing else could change";
    return j->first_start_us != SIM_TIME_NEVER
               ? "preempted and never restarted: nothing else could change"
               : "never scheduled: the policy left it waiting and nothing else could change";
}

/* Write the jobs still in the system when the run ends (see unfinished_reason); the
 * first write's error, if any. */
static int write_unfinished(sim_engine *e, bool horizon)
{
    int st = SIM_OK;
    for (int running = 0; running < 2; running++) {
        sim_job_id id = running ? e->v.running_head : e->v.pending_head;
        while (id != SIM_JOB_NONE) {
            sim_job *j = &e->jobs[id];
            sim__job_touch(e, id);
            e->sum.jobs_unfinished++;
            /* Its GPU time so far is the tenant's, as it is the run's (gpu_hours). */
            e->tstats[j->spec.tenant].gpu_s += j->attained_gpu_s;
            const char *reason = unfinished_reason(e, j, running, horizon);
            int wst = sim__write_job_row(e, j, "unfinished", reason);
            if (st == SIM_OK)
                st = wst;
            svc_leave(e, j);
            id = e->job_next[id];
        }
    }
    return st; /* every job counted still */
}

/* Read the rest of the source after the horizon: each job is written as unfinished
 * (it never arrived), so every row of the trace is accounted for in jobs.csv. */
static int write_not_arrived(sim_engine *e, sim_diag *d)
{
    while (e->has_next) {
        int sc = svc_check(e, &e->next, d);
        if (sc != SIM_OK)
            return sc;
        e->sum.jobs_not_arrived++;
        e->sum.jobs_unfinished++;
        int wst = sim__write_spec_row(e, &e->next, e->next.replicas, "unfinished",
                                      "not arrived: submitted after the horizon");
        if (wst != SIM_OK)
            return sim__output_failed(d, wst, "jobs.csv");
        int st = read_next(e, d);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

static int run_loop(sim_engine *e, const sim_source *src, sim_diag *d);

/* The job of the next event, when a finish, is read whole when it comes (its row, its
 * allocations): ask for its record now, while this point is simulated, so it is in the
 * cache by then. */
static void prefetch_next_finish(const sim_engine *e)
{
    if (e->q.n == 0 || e->q.a[0].kind != EV_FINISH)
        return;
    const char *p = (const char *)&e->jobs[e->q.a[0].obj];
    for (size_t off = 0; off < sizeof(sim_job); off += 64)
        __builtin_prefetch(p + off);
}

/* Whether ev still stands: a job's finish and the policy's wakeup are superseded by a
 * newer version (a change of speed, a preemption, a new wakeup time); once superseded,
 * always (versions only grow), so the queue may drop such events early. */
static bool event_live(void *ctx, const sim_event *ev)
{
    const sim_engine *e = ctx;
    if (ev->kind == EV_FINISH)
        return ev->version == e->job_version[ev->obj];
    if (ev->kind == EV_WAKEUP)
        return ev->version == e->wakeup_version;
    return true;
}

/* The time of the first event that still stands, the stale ones before it dropped. */
static sim_time live_top_time(sim_engine *e)
{
    sim_event stale;
    while (e->q.n && !event_live(e, &e->q.a[0]))
        sim_eventq_pop(&e->q, &stale);
    return sim_eventq_top_time(&e->q);
}

int sim_engine_run(sim_engine *e, const sim_source *src, sim_diag *d)
{
    int st = run_loop(e, src, d);
    /* Every jobs.csv row is written before the run returns, and the distributions of
     * the done jobs, counted as their rows were formatted, are complete only then. */
    int wst = sim__rows_finish(e);
    e->sum.jct_mean_s = sim_hist_mean(e->h_jct);
    e->sum.jct_median_s = sim_hist_quantile(e->h_jct, 0.5);
    e->sum.jct_p95_s = sim_hist_quantile(e->h_jct, 0.95);
    e->sum.jct_p99_s = sim_hist_quantile(e->h_jct, 0.99);
    e->sum.wait_mean_s = sim_hist_mean(e->h_wait);
    e->sum.wait_median_s = sim_hist_quantile(e->h_wait, 0.5);
    e->sum.wait_p95_s = sim_hist_quantile(e->h_wait, 0.95);
    e->sum.wait_p99_s = sim_hist_quantile(e->h_wait, 0.99);
    if (st == SIM_OK && wst != SIM_OK)
        st = sim__output_failed(d, wst, "jobs.csv");
    return st;
}

static int run_loop(sim_engine *e, const sim_source *src, sim_diag *d)
{
    e->src = src;
    int st = sim__write_headers(e);
    if (st != SIM_OK)
        return sim__output_failed(d, st, "the output files");
    if ((st = read_next(e, d)) != SIM_OK)
        return st;
    if (e->cfg.mtbf_s > 0) {
        for (uint32_t n = 0; n < e->n_nodes; n++) {
            double t = gsl_ran_exponential(e->fail_rng, e->cfg.mtbf_s);
            sim_time start = e->has_next ? e->next.submit_us : 0;
            if (sim_eventq_push(&e->q, start + (sim_time)ceil(t * 1e6), EV_NODE_DOWN, n, 1) !=
                SIM_OK)
                return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
    }
    if (e->cfg.sample_interval_us > 0 && e->has_next) {
        sim_time iv = e->cfg.sample_interval_us;
        sim_time t0 = e->next.submit_us - (((e->next.submit_us % iv) + iv) % iv);
        if (sim_eventq_push(&e->q, t0, EV_SAMPLE, 0, 0) != SIM_OK)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    bool ended_early = false, at_horizon = false;
    /* The run stops at the horizon, or at the end of simulated time if that comes first. */
    const sim_time clock_end = (sim_time)SIM_CLOCK_END_S * SIM_US_PER_S;
    const sim_time end = e->cfg.horizon_us < clock_end ? e->cfg.horizon_us : clock_end;
    /* A sample is due at e->now: written once every event of that moment is done. */
    bool sample_due = false;
    sim_progress prog = {0};
    uint64_t next_progress = 65536;
    for (;;) {
        /* Stale events are dropped before time moves: time stops only at events that
         * stand, so the running sums (GPU-seconds and the like) are split at the same
         * moments whenever the heap was last cleared of stale ones. */
        sim_time t_heap = live_top_time(e);
        sim_time t_arr = e->has_next ? e->next.submit_us : SIM_TIME_NEVER;
        sim_time now = t_heap < t_arr ? t_heap : t_arr;
        bool work_left = e->has_next || e->jobs_in_flight > 0;
        if (!work_left)
            break;
        /* No event left while jobs progress: their ends lie past what a time holds,
         * so beyond the end of simulated time. */
        if (now == SIM_TIME_NEVER && e->n_progressing == 0) {
            ended_early = true;
            break;
        }
        if (now > end) {
            ended_early = at_horizon = true;
            e->sum.clock_ended = end == clock_end && e->cfg.horizon_us != clock_end;
            break;
        }
        integrate(e, now);
        e->now = now;
        e->v.now = now;
        bool changed = false;
        sim_event ev;
        while (sim_eventq_top_time(&e->q) == now && sim_eventq_pop(&e->q, &ev)) {
            if (!event_live(e, &ev))
                continue; /* made stale by an event of this same moment */
            e->sum.events++;
            switch (ev.kind) {
            case EV_FINISH:
                if ((st = finish_job(e, ev.obj)) != SIM_OK)
                    return sim__output_failed(d, st, "jobs.csv");
                changed = true;
                break;
            case EV_WAKEUP:
                e->wakeup_at = SIM_TIME_NEVER;
                changed = true;
                break;
            case EV_SAMPLE:
                sample_due = true;
                break;
            case EV_NODE_DOWN:
                if ((st = node_down(e, ev.obj, ev.version)) != SIM_OK)
                    return sim__output_failed(d, st, "jobs.csv");
                changed = true;
                break;
            case EV_DEMAND: {
                uint32_t s = e->svc_point_svc[ev.obj];
                e->svc_demand[s] = e->world.curves->pts[ev.obj].replicas;
                if (e->svc_job[s] != NIL) {
                    sim_job *j = &e->jobs[e->svc_job[s]];
                    sim__svc_account(e, j);
                    if (j->short_now)
                        e->sum.short_periods++;
                    j->short_now = false;
                    sim__set_demand(e, j, e->svc_demand[s]);
                    changed = true;
                }
                break;
            }
            case EV_NODE_UP:
                if ((st = node_up(e, ev.obj, ev.version)) != SIM_OK)
                    return sim_diag_set(d, st, NULL, 0, 0, "out of memory");
                changed = true;
                break;
            default:
                break;
            }
            if (e->cfg.check_invariants && (st = sim_engine_check(e, d)) != SIM_OK)
                return st;
        }
        while (e->has_next && e->next.submit_us == now) {
            e->sum.events++;
            if ((st = arrive(e, &e->next, d)) != SIM_OK)
                return st;
            if ((st = read_next(e, d)) != SIM_OK)
                return st;
            changed = true;
            if (e->cfg.check_invariants && (st = sim_engine_check(e, d)) != SIM_OK)
                return st;
        }
        prefetch_next_finish(e);
        e->points += changed;
        if (changed && (st = call_schedule(e, d)) != SIM_OK)
            return st;
        if (e->cfg.check_invariants && (st = sim_engine_check(e, d)) != SIM_OK)
            return st;
        if ((st = update_rates(e)) != SIM_OK)
            return sim_diag_set(d, st, NULL, 0, 0, "out of memory");
        if (e->pol->next_wakeup) {
            sim_time w = e->pol->next_wakeup(e->pst, &e->v, now);
            if (w <= now)
                w = now + 1; /* a wakeup in the past would loop forever */
            if (w != e->wakeup_at) {
                e->wakeup_version++;
                e->wakeup_at = w;
                if (w != SIM_TIME_NEVER &&
                    sim_eventq_push(&e->q, w, EV_WAKEUP, 0, e->wakeup_version) != SIM_OK)
                    return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            }
        }
        if (e->q.n >= e->q_compact_at) {
            sim_eventq_compact(&e->q, event_live, e);
            e->q_compact_at = 2 * e->q.n > 4096 ? 2 * e->q.n : 4096;
        }
        if (sample_due) {
            /* A sample shows the state after every event of its moment, including the
             * finishes update_rates has just put at `now` (jobs that started with no work
             * left): while one stands, the sample waits for the next pass at this time.
             * Stale events are dropped as at the top of the loop, so only a live one
             * holds it back. */
            if (live_top_time(e) != now) {
                sample_due = false;
                if ((st = sim__write_sample(e)) != SIM_OK)
                    return sim__output_failed(d, st, "timeseries.csv");
                if ((e->has_next || e->jobs_in_flight > 0) &&
                    sim_eventq_push(&e->q, now + e->cfg.sample_interval_us, EV_SAMPLE, 0, 0) !=
                        SIM_OK)
                    return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            }
        }
        if (e->cfg.progress && e->sum.events >= next_progress) {
            next_progress = e->sum.events + 65536;
            prog.now = now;
            prog.events = e->sum.events;
            prog.jobs_arrived = e->sum.jobs_arrived;
            prog.jobs_ended = e->sum.jobs_done + e->sum.jobs_rejected;
            prog.pending = e->v.n_pending;
            prog.running = e->v.n_running;
            e->cfg.progress(e->cfg.progress_ctx, &prog);
        }
        /* Every job arrived, and over the last stall_limit losses and scheduling points
         * no job finished or was left nearer its end, or nothing ran: the policy cuts
         * every run segment before it gains more than it loses, or leaves idle GPUs to
         * jobs it never starts (a livelock). The jobs left are reported as unfinished. */
        if (changed && e->n_progressing == 0 && e->jobs_in_flight > 0)
            e->stall++; /* a scheduling point (not a sample alone) at which nothing runs */
        if (e->cfg.stall_limit && e->stall >= e->cfg.stall_limit && !e->has_next) {
            e->sum.stalled = true;
            e->sum.stalled_at_us = now;
            ended_early = true;
            break;
        }
        /* Nothing can change any more: no arrival, no progressing job, no policy timer,
         * every node up. The jobs left are reported as unfinished. */
        if (!e->has_next && e->jobs_in_flight > 0 && e->n_progressing == 0 &&
            e->wakeup_at == SIM_TIME_NEVER && e->n_down == 0) {
            ended_early = true;
            break;
        }
    }
    /* A sample held back for events of its moment, when the run ended before them
     * (nothing left to run), is written for that moment. */
    if (sample_due && (st = sim__write_sample(e)) != SIM_OK)
        return sim__output_failed(d, st, "timeseries.csv");
    /* Stopped by the horizon: time runs on to the horizon itself, so the jobs still
     * placed and the GPUs they hold are counted up to it, not up to the last event. */
    if (at_horizon && e->now < end) {
        if (e->integ_started)
            integrate(e, end);
        e->now = end;
        e->v.now = e->now;
    }
    if (e->integ_started)
        integrate(e, e->now);
    if (ended_early && e->jobs_in_flight > 0 && (st = write_unfinished(e, at_horizon)) != SIM_OK)
        return sim__output_failed(d, st, "jobs.csv");
    if (at_horizon && (st = write_not_arrived(e, d)) != SIM_OK)
        return st;
    if (!e->has_next && (st = svc_check_unseen(e, d)) != SIM_OK)
        return st;
    /* A run cut short ends its window where it stopped: with jobs still in the system,
     * or, at the horizon, also with jobs yet to arrive, whether or not one is in flight
     * at that moment (the horizon is the window's end, as for run time and GPU time). */
    if (e->sum.last_end_us < e->now && (e->jobs_in_flight > 0 || at_horizon))
        e->sum.last_end_us = e->now;
    /* Never negative: with no admitted job, or none that ended (every admitted job
     * rejected by the policy), the window is empty. */
    if (e->sum.first_submit_us == SIM_TIME_NEVER)
        e->sum.first_submit_us = e->sum.last_end_us;
    if (e->sum.last_end_us < e->sum.first_submit_us)
        e->sum.last_end_us = e->sum.first_submit_us;
    double span = (double)(e->sum.last_end_us - e->sum.first_submit_us) / 1e6;
    group_close(e);
    group_figures(e);
    if (span > 0 && e->n_gpus) {
        e->sum.gpu_alloc_avg = e->sum.gpu_seconds_alloc / span / (double)e->n_gpus;
        e->sum.gpu_effective_avg = e->sum.gpu_seconds_effective / span / (double)e->n_gpus;
    }
    if (span > 0 && e->cpu_total_all)
        e->sum.cpu_alloc_avg = e->sum.cpu_milli_seconds_alloc / span / (double)e->cpu_total_all;
    return SIM_OK;
}
