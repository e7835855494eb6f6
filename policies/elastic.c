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
 * checkpoint (sim_decide_scale_in; option resize=checkpoint keeps the progress
 * instead, sim_decide_shrink). `rigid-min` starts jobs the same way and never
 * scales them. Scale-out places a trainer as a start does: most-allocated node first.
 *
 * Online services (rows of qos LS with a demand curve) come first at every decision: a
 * service is resized to its demand (clamped to its min..max replicas); a replica that
 * does not fit is made room for, among the offline jobs whose release can help it
 * (holding GPUs, when it needs them, on a node its replica may use), by taking trainers
 * back from the offline elastic jobs above their min (highest completion score first, as
 * the policy's scale-in does), then by preempting offline jobs (the latest started
 * first, losing the work since their checkpoint; optimus keeps it unless resize=lossy),
 * one at a time until it fits or nothing is left to take. `static` is the reserved-slice
 * baseline: the last nodes, enough for the services' peak GPUs (each service's peak
 * replicas x its GPUs per replica, one GPU per replica for services not yet arrived at
 * the first decision), serve the services only (never more), the others run the offline
 * jobs rigid at max_replicas (at most what the offline nodes hold), in arrival order with
 * backfilling; nothing is taken back.
 */
#include "policies/elastic.h"
#include "policies/place.h"
#include "sim/policy.h"

#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct adj {
    sim_job_id id;
    uint32_t cur, lo, hi;
    double score;
    uint64_t seq;
} adj;

/* Mins are handed out in passes of equal min (1, 2, ...); the last pass takes every
 * larger min. */
#define MAX_MIN_PASS 64u

typedef enum mode { M_ELASTIC, M_RIGID_MIN, M_STATIC, M_OPTIMUS } mode;

/* optimus: a job in a round's marginal-gain heap; idx is its place in the running list
 * followed by the pending list (ties go to the first). */
typedef struct gain_ent {
    double gain;
    uint32_t idx;
    sim_job_id id;
} gain_ent;

/* optimus: a pending offline job as it entered the pending list (seq: its enqueue_seq;
 * the entry is stale once the job left the list). */
typedef struct opt_entry {
    sim_job_id id;
    uint64_t seq;
} opt_entry;

/* optimus: the pending offline jobs of one min trainers lo and GPUs per trainer g, in
 * pending-list order: entries e[head..tail), stale ones dropped as rounds pass them. */
typedef struct opt_list {
    uint32_t lo, g;
    opt_entry *e;
    uint32_t head; /* first live entry */
    uint32_t tail; /* one past the last */
    uint32_t cap;
    uint32_t cur; /* round scratch: the next entry to visit */
} opt_list;

/* What the passes remember of an engine shape. */
typedef struct shape_memo {
    uint64_t fail_pass; /* the last pass in which a job of it found no room ... */
    uint32_t fail_n;    /* ... for this many trainers */
    uint32_t fit_gen;   /* static: the shape's shape_gen + 1 when fit_n is known */
    uint64_t fit_n;     /* ... the replicas of it the offline nodes hold */
} shape_memo;

/* optimus: per-job state of an allocation round. */
typedef struct opt_job {
    uint32_t target; /* trainers allocated this round */
    uint32_t step;   /* applying the round: trainers the grants replayed so far give it */
    bool full;       /* applying the round: a trainer of it found no room */
    double gain;     /* remaining time saved by one more trainer (s) */
    uint32_t fixed;  /* running without replica bounds: its GPUs in its bucket's sum */
    uint8_t bucket;  /* ... that bucket (its trainers, MAX_MIN_PASS and above in the last) */
    bool in_sums;    /* counted in n_fixed and its bucket's sum (fixed is 0 for CPU jobs) */
} opt_job;

typedef struct elastic_state {
    place_ws ws;
    mode mode;
    sim_time period_us;
    double threshold;
    bool scale;                      /* false: rigid-min, static */
    bool resize_ckpt;                /* option resize: a shrink keeps progress (checkpoint) */
    bool take_back;                  /* services take resources back from offline jobs */
    bool reserved_init;              /* static: the slice has been chosen */
    uint32_t *svc_nodes, *off_nodes; /* static: the reserved nodes and the others */
    uint32_t n_svc_nodes, n_off_nodes;
    uint64_t svc_cpu, svc_mem, off_cpu, off_mem; /* static: their CPU and memory, summed */
    sim_time next_us;  /* next trigger */
    adj *adj;          /* scratch: the adjustable jobs (room for the running ones) */
    uint32_t adj_cap;
    uint64_t total_milli; /* GPU share of the cluster */
    sim_job_id *ord;      /* optimus scratch: the jobs in the system, ordered */
    uint8_t *bucket;      /* ... their min-replica pass */
    gain_ent *heap;       /* ... the marginal-gain heap */
    uint32_t ord_cap;
    sim_job_id *grants; /* optimus scratch: a round's trainers beyond the mins, by job in
                           the order handed out (each takes a GPU: at most n_gpus) */
    uint32_t grants_cap;
    uint64_t pass;          /* start_pending passes made */
    shape_memo *memo;       /* per engine shape (zeroed as it grows) */
    uint32_t memo_cap;
    bool any_bounds;        /* a job with min_replicas or max_replicas has arrived */
    opt_list *lists;        /* optimus: the pending offline jobs by (lo, g) */
    uint32_t n_lists, lists_cap;
    opt_entry *vis;         /* optimus scratch: the pending jobs given trainers in a round */
    uint32_t vis_cap;
    /* optimus: per bucket of mins, the GPUs of the running offline jobs without replica
     * bounds, and how many such jobs run (see optimus_round). */
    uint64_t fixed_gpus[MAX_MIN_PASS + 1];
    uint32_t n_fixed;
    bool oom;
} elastic_state;

static int preempt_job(elastic_state *s, const sim_view *v, policy_decisions *out, sim_job_id id,
                       bool checkpoint);

static const policy_option elastic_opts[] = {
    {"period", "60", "trigger period, seconds"},
    {"threshold", "0.9", "utilisation threshold: allocated fraction of the GPUs, 0..1"},
    {"resize", "lossy",
     "scale-in: lossy (restart from the last periodic checkpoint) or checkpoint (progress "
     "kept)"},
    {NULL, NULL, NULL},
};

static const policy_option rigid_opts[] = {{NULL, NULL, NULL}};

static const policy_option optimus_opts[] = {
    {"period", "60", "allocation period, seconds"},
    {"resize", "checkpoint",
     "reallocation: checkpoint (progress kept) or lossy (a shrink or a job left without "
     "trainers restarts from the last periodic checkpoint)"},
    {NULL, NULL, NULL},
};

static const char *const resize_choices[] = {"lossy", "checkpoint", NULL};

/* Option resize: true for checkpoint. */
static int resize_opt(const policy_config *cfg, const policy_option *opts, bool *ckpt, sim_diag *d)
{
    int k = 0;
    int rc = policy_config_choice(cfg, opts, "resize", resize_choices, &k, d);
    *ckpt = k == 1;
    return rc;
}

/* Take `count` trainers from job id: with the resize=checkpoint option its progress is
 * kept, otherwise it restarts from its last periodic checkpoint. */
static int scale_in(const elastic_state *s, policy_decisions *out, sim_job_id id, uint32_t count)
{
    return s->resize_ckpt ? sim_decide_shrink(out, id, count) : sim_decide_scale_in(out, id, count);
}

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

static void elastic_fini(void *st);

static int common_init(elastic_state *s, const policy_config *cfg, sim_diag *d)
{
    s->adj_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->adj = sim_calloc(s->adj_cap, sizeof *s->adj);
    s->svc_nodes = sim_calloc(cfg->n_nodes ? cfg->n_nodes : 1, sizeof *s->svc_nodes);
    s->off_nodes = sim_calloc(cfg->n_nodes ? cfg->n_nodes : 1, sizeof *s->off_nodes);
    s->total_milli = (uint64_t)cfg->n_gpus * SIM_MILLI_GPU;
    s->next_us = 0;
    int rc = !s->adj || !s->svc_nodes || !s->off_nodes
                 ? sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory")
                 : place_ws_init(&s->ws, cfg, d);
    if (rc != SIM_OK)
        elastic_fini(s); /* the core calls no fini after a failed init */
    return rc;
}

static int elastic_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    double period, thr;
    int rc;
    if ((rc = policy_config_double(cfg, elastic_opts, "period", 0.001, 1e9, &period, d)) ||
        (rc = policy_config_double(cfg, elastic_opts, "threshold", 0, 1, &thr, d)) ||
        (rc = resize_opt(cfg, elastic_opts, &s->resize_ckpt, d)))
        return rc;
    s->period_us = (sim_time)llround(period * 1e6);
    s->threshold = thr;
    s->scale = true;
    s->take_back = true;
    s->mode = M_ELASTIC;
    return common_init(s, cfg, d);
}

static int rigid_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    s->mode = M_RIGID_MIN;
    s->take_back = true;
    return common_init(s, cfg, d);
}

static int optimus_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    double period;
    int rc = policy_config_double(cfg, optimus_opts, "period", 0.001, 1e9, &period, d);
    if (rc || (rc = resize_opt(cfg, optimus_opts, &s->resize_ckpt, d)))
        return rc;
    s->period_us = (sim_time)llround(period * 1e6);
    s->mode = M_OPTIMUS;
    s->take_back = true;
    s->grants_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->grants = sim_calloc(s->grants_cap, sizeof *s->grants);
    if (!s->grants)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return common_init(s, cfg, d);
}

static int static_init(void *st, const policy_config *cfg, sim_diag *d)
{
    elastic_state *s = st;
    s->mode = M_STATIC;
    return common_init(s, cfg, d);
}

static void elastic_fini(void *st)
{
    elastic_state *s = st;
    sim_free(s->adj);
    sim_free(s->ord);
    sim_free(s->bucket);
    sim_free(s->heap);
    sim_free(s->grants);
    for (uint32_t i = 0; i < s->n_lists; i++)
        sim_free(s->lists[i].e);
    sim_free(s->lists);
    sim_free(s->vis);
    sim_free(s->memo);
    sim_free(s->svc_nodes);
    sim_free(s->off_nodes);
    place_ws_fini(&s->ws);
}

/* static: reserve the last nodes for the services' peak (once, at the first decision). */
static void reserve(elastic_state *s, const sim_view *v)
{
    if (s->reserved_init)
        return;
    s->reserved_init = true;
    /* GPUs: each service in the system at its peak times its GPUs per replica; the
     * services yet to arrive at one GPU per replica. */
    uint64_t need = v->services_peak_replicas;
    for (int running = 1; running >= 0; running--)
        for (uint32_t id = running ? v->running_head : v->pending_head; id != SIM_JOB_NONE;
             id = sim_view_next(v, id)) {
            const sim_job *j = sim_view_job(v, id);
            if (j->is_service && j->gpus_per_replica > 1)
                need += (uint64_t)j->peak_replicas * (j->gpus_per_replica - 1);
        }
    /* The last nodes with GPUs, from the end; a node without GPUs serves no service and
     * stays with the offline jobs. */
    uint32_t first = v->n_nodes;
    while (first > 0 && need > 0) {
        first--;
        if (!v->node_gpu_count[first])
            continue;
        s->svc_nodes[s->n_svc_nodes++] = first;
        need = need > v->node_gpu_count[first] ? need - v->node_gpu_count[first] : 0;
    }
    for (uint32_t k = 0; k < v->n_nodes; k++)
        if (k < first || !v->node_gpu_count[k])
            s->off_nodes[s->n_off_nodes++] = k;
    for (uint32_t i = 0; i < s->n_svc_nodes; i++) {
        s->svc_cpu += v->node_cpu_total[s->svc_nodes[i]];
        s->svc_mem += v->node_mem_total[s->svc_nodes[i]];
    }
    for (uint32_t i = 0; i < s->n_off_nodes; i++) {
        s->off_cpu += v->node_cpu_total[s->off_nodes[i]];
        s->off_mem += v->node_mem_total[s->off_nodes[i]];
    }
}

/* Candidate nodes of a job: all (NULL) except under `static` (where an offline job with
 * no node reserved for services may use all of them too: NULL lets the placement use
 * the engine's block summaries instead of a scan of the list). */
static const uint32_t *cands(const elastic_state *s, const sim_job *j, uint32_t *n)
{
    *n = 0;
    if (s->mode != M_STATIC || (!j->is_service && s->n_svc_nodes == 0))
        return NULL;
    *n = j->is_service ? s->n_svc_nodes : s->n_off_nodes;
    return j->is_service ? s->svc_nodes : s->off_nodes;
}

static bool place_n(elastic_state *s, const sim_view *v, sim_job_id id, uint32_t n,
                    sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t nc;
    const uint32_t *c = cands(s, j, &nc);
    if (c && nc == 0)
        return false;
    bool pending = j->state == SIM_JOB_PENDING;
    return place_gang_n(&s->ws, v, id, n, pending ? 0 : j->share_milli,
                        pending ? UINT64_MAX : j->share_mem_mib, place_score_most_allocated, NULL,
                        PLACE_GPU_MOST_USED, c, nc, p);
}

/* Whether releasing offline job j can make room for a replica of service svc: j holds
 * something on a node where that replica may go (a GPU type svc accepts, with the GPU
 * memory it asks), and GPUs when svc needs them. A job whose trainers hold no GPU, or
 * that runs only on other GPU types, would be taken for nothing. O(j's allocations). */
static bool can_help(const sim_view *v, const sim_job *svc, const sim_job *j)
{
    if (svc->gpus_per_replica && !j->gpus_per_replica)
        return false;
    for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
        uint32_t n = v->allocs[a].node;
        if (!svc->gpus_per_replica ||
            (v->node_gpu_count[n] && sim_job_type_ok(svc, v->node_gpu_type[n]) &&
             v->gpu_mem_total[v->node_gpu_first[n]] >= svc->spec.gpu_mem_mib))
            return true;
    }
    return false;
}

/* Free room for service svc: of the offline jobs whose release can help it, the elastic
 * one above its min with the highest completion score loses a trainer; else the latest
 * started is preempted. *took is false when nothing is left to take. */
static int take_one(elastic_state *s, const sim_view *v, const sim_job *svc, policy_decisions *out,
                    bool *took)
{
    *took = false;
    sim_job_id best = SIM_JOB_NONE, last = SIM_JOB_NONE;
    double best_score = -1;
    for (uint32_t id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        if (j->is_service || !can_help(v, svc, j))
            continue;
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        if (lo < hi && j->replicas > lo) {
            double sc = (double)(j->replicas - lo) / (double)(hi - lo);
            if (sc > best_score) { /* ties: the earliest arrival (list order) */
                best_score = sc;
                best = id;
            }
        }
        if (last == SIM_JOB_NONE || j->last_start_us >= sim_view_job(v, last)->last_start_us)
            last = id;
    }
    int rc;
    if (best != SIM_JOB_NONE)
        rc = scale_in(s, out, best, 1);
    else if (last != SIM_JOB_NONE)
        /* optimus keeps the progress of a job left without trainers unless resize=lossy,
         * as its own reallocations do; elastic and rigid-min lose the work since the last
         * periodic checkpoint. */
        rc = preempt_job(s, v, out, last, s->mode == M_OPTIMUS && s->resize_ckpt);
    else
        return SIM_OK;
    *took = rc == SIM_OK;
    return rc;
}

/* static: how many replicas of job j the nodes[0..count) hold, by their capacity (not
 * what is free now): on each node of a GPU type j accepts whose GPUs have the memory it
 * asks, as many as its GPUs, CPU and memory each allow (two replicas of a job never
 * share a GPU); UINT64_MAX for a job that asks for none of them. The master and
 * parameter servers are not counted. O(count). */
static uint64_t nodes_fit(const sim_view *v, const uint32_t *nodes, uint32_t count,
                          const sim_job *j)
{
    uint64_t fit = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t n = nodes[i];
        uint64_t k = UINT64_MAX;
        if (j->gpus_per_replica) {
            uint32_t cnt = v->node_gpu_count[n];
            if (!cnt || !sim_job_type_ok(j, v->node_gpu_type[n]) ||
                v->gpu_mem_total[v->node_gpu_first[n]] < j->spec.gpu_mem_mib)
                continue;
            k = cnt / j->gpus_per_replica;
        }
        if (j->cpu_per_replica && v->node_cpu_total[n] / j->cpu_per_replica < k)
            k = v->node_cpu_total[n] / j->cpu_per_replica;
        if (j->mem_per_replica && v->node_mem_total[n] / j->mem_per_replica < k)
            k = v->node_mem_total[n] / j->mem_per_replica;
        if (k == UINT64_MAX)
            return UINT64_MAX;
        fit += k;
    }
    return fit;
}

/* static: whether nodes of cpu and mem in all could hold lo replicas of job j with its
 * master and parameter servers (a necessary condition: they may still not pack). */
static bool roles_hold(const sim_job *j, uint32_t lo, uint64_t cpu, uint64_t mem)
{
    uint64_t need_cpu = (uint64_t)lo * j->cpu_per_replica,
             need_mem = (uint64_t)lo * j->mem_per_replica;
    for (uint32_t r = 0; r < j->n_roles; r++) {
        need_cpu += sim_job_role_cpu(j, r);
        need_mem += sim_job_role_mem(j, r);
    }
    return need_cpu <= cpu && need_mem <= mem;
}

/* static: whether every node of nodes[0..count) is up and holds nothing (what a
 * placement finds there then is what they can hold). O(count). */
static bool nodes_idle(const sim_view *v, const uint32_t *nodes, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint32_t n = nodes[i];
        if (!v->node_up[n] || v->node_cpu_used[n] || v->node_mem_used[n] || v->node_used_milli[n] ||
            v->node_free_gpus[n] != v->node_gpu_count[n])
            return false;
    }
    return true;
}

/* static: the rejection of job j, which the nodes `which` (reserved for the services'
 * peak, or the others) cannot hold at lo replicas even idle. */
static int reject_slice(policy_decisions *out, sim_job_id id, const sim_job *j, const char *which,
                        uint32_t lo)
{
    char why[200];
    snprintf(why, sizeof why, "the nodes %s the services' peak cannot hold %u replica%s of it%s",
             which, lo, lo == 1 ? "" : "s",
             j->n_roles ? " with its master and parameter servers" : "");
    return sim_decide_reject(out, id, why);
}

/* Resize every service to its demand (clamped to its bounds), taking resources back
 * from offline jobs when the mode allows. take_one never moves a service, and a
 * service's start moves only itself, so the scan can go on from the next id (an
 * offline job preempted meanwhile is met again in the pending list). */
static int serve(elastic_state *s, const sim_view *v, policy_decisions *out)
{
    if (v->n_services == 0)
        return SIM_OK; /* the run has no demand curves: no job is a service */
    for (int running = 1; running >= 0; running--)
        for (uint32_t id = running ? v->running_head : v->pending_head; id != SIM_JOB_NONE;) {
            const sim_job *j = sim_view_job(v, id);
            uint32_t next = sim_view_next(v, id);
            if (!j->is_service) {
                id = next;
                continue;
            }
            uint32_t lo, hi;
            bounds(j, &lo, &hi);
            uint32_t target = j->demand_replicas < lo   ? lo
                              : j->demand_replicas > hi ? hi
                                                        : j->demand_replicas;
            int rc;
            bool took;
            sim_placement p;
            if (j->state == SIM_JOB_PENDING && s->mode == M_STATIC &&
                (nodes_fit(v, s->svc_nodes, s->n_svc_nodes, j) < lo ||
                 !roles_hold(j, lo, s->svc_cpu, s->svc_mem))) {
                /* The slice was sized at the first decision, at one GPU per replica for
                 * the services not there yet: it may hold none of a later one. */
                if ((rc = reject_slice(out, id, j, "reserved for", lo)) != SIM_OK)
                    return rc;
            } else if (j->state == SIM_JOB_PENDING) {
                for (;;) {
                    if (place_n(s, v, id, target, &p))
                        break;
                    took = false;
                    if (s->take_back && (rc = take_one(s, v, j, out, &took)) != SIM_OK)
                        return rc;
                    if (!took)
                        break;
                }
                /* Not all of it fits: start with as many as fit, at least its min. */
                uint32_t n = target;
                while (n >= lo && n > 0 && !place_n(s, v, id, n, &p))
                    n--;
                if (n >= lo && n > 0 && (rc = sim_decide_start(out, id, &p)) != SIM_OK)
                    return rc;
                /* Not even its min on the idle slice: it never will be. */
                if ((n < lo || n == 0) && s->mode == M_STATIC &&
                    nodes_idle(v, s->svc_nodes, s->n_svc_nodes) &&
                    (rc = reject_slice(out, id, j, "reserved for", lo)) != SIM_OK)
                    return rc;
            } else if (j->state == SIM_JOB_RUNNING) {
                if (j->replicas > target &&
                    (rc = sim_decide_shrink(out, id, j->replicas - target)) != SIM_OK)
                    return rc;
                while (j->replicas < target) {
                    if (place_n(s, v, id, 1, &p)) {
                        if ((rc = sim_decide_grow(out, id, &p)) != SIM_OK)
                            return rc;
                        continue;
                    }
                    took = false;
                    if (s->take_back && (rc = take_one(s, v, j, out, &took)) != SIM_OK)
                        return rc;
                    if (!took)
                        break;
                }
            }
            id = next;
        }
    return SIM_OK;
}

/* Start pending offline jobs in arrival order, skipping those that do not fit: elastic
 * ones at min_replicas (static: at max_replicas). */
static bool by_shape = true;
static bool opt_lists = true;
static bool opt_sums = true;

void optimus_lists_enable(bool on)
{
    opt_lists = on;
}

void optimus_sums_enable(bool on)
{
    opt_sums = on;
}

void elastic_shapes_enable(bool on)
{
    by_shape = on;
}

static void elastic_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    elastic_state *s = st;
    const job_spec *j = &sim_view_job(v, id)->spec;
    if (job_spec_has(j, SIM_ATTR_MIN_REPLICAS) || job_spec_has(j, SIM_ATTR_MAX_REPLICAS))
        s->any_bounds = true;
}

/* optimus: pending offline job id, just appended to the pending list, at the end of its
 * (lo, g) list. */
static void opt_push(elastic_state *s, const sim_view *v, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    if (j->is_service || s->oom)
        return;
    uint32_t lo, hi, g = j->gpus_per_replica;
    bounds(j, &lo, &hi);
    opt_list *l = NULL;
    for (uint32_t i = 0; i < s->n_lists && !l; i++)
        if (s->lists[i].lo == lo && s->lists[i].g == g)
            l = &s->lists[i];
    if (!l) {
        if (!sim_reserve((void **)&s->lists, &s->lists_cap, s->n_lists + 1, sizeof *s->lists)) {
            s->oom = true;
            return;
        }
        l = &s->lists[s->n_lists++];
        *l = (opt_list){.lo = lo, .g = g};
    }
    if (l->tail == l->cap) {
        if (l->head >= l->cap / 2 && l->head > 0) {
            /* (a round's cursor moves with its entries: a preemption in the round
             * pushes while the round's visited entries still await compaction) */
            memmove(l->e, l->e + l->head, (size_t)(l->tail - l->head) * sizeof *l->e);
            l->tail -= l->head;
            l->cur -= l->head;
            l->head = 0;
        } else if (!sim_reserve((void **)&l->e, &l->cap, l->cap + 1, sizeof *l->e)) {
            s->oom = true;
            return;
        }
    }
    l->e[l->tail++] = (opt_entry){id, j->enqueue_seq};
}

static void optimus_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    elastic_on_arrival(st, v, id);
    opt_push(st, v, id);
}

/* optimus: job id starts with n trainers; one without replica bounds (not a service)
 * enters its bucket's sum. */
static void opt_started(elastic_state *s, const sim_view *v, sim_job_id id, uint32_t n)
{
    const sim_job *j = sim_view_job(v, id);
    if (j->is_service || job_spec_has(&j->spec, SIM_ATTR_MIN_REPLICAS) ||
        job_spec_has(&j->spec, SIM_ATTR_MAX_REPLICAS))
        return;
    opt_job *o = sim_view_job_state(v, id);
    o->fixed = n * j->gpus_per_replica;
    o->bucket = (uint8_t)(n > MAX_MIN_PASS ? MAX_MIN_PASS : n);
    s->fixed_gpus[o->bucket] += o->fixed;
    s->n_fixed++;
    o->in_sums = true;
}

/* optimus: job id stops running (finished, preempted or requeued). */
static void opt_stopped(elastic_state *s, const sim_view *v, sim_job_id id)
{
    opt_job *o = sim_view_job_state(v, id);
    if (!o->in_sums)
        return;
    s->fixed_gpus[o->bucket] -= o->fixed;
    s->n_fixed--;
    o->fixed = 0;
    o->in_sums = false;
}

static void optimus_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    opt_stopped(st, v, id);
    opt_push(st, v, id);
}

static void optimus_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    opt_stopped(st, v, id);
}

/* Preempt job id; under optimus it joins its pending list. */
static int preempt_job(elastic_state *s, const sim_view *v, policy_decisions *out, sim_job_id id,
                       bool checkpoint)
{
    int rc = sim_decide_preempt(out, id, checkpoint);
    if (rc == SIM_OK && s->mode == M_OPTIMUS) {
        opt_stopped(s, v, id);
        opt_push(s, v, id);
    }
    return rc;
}

/* Try offline pending job id (a service is left to serve()): start it if it fits, unless
 * a job of its shape found no room for as many trainers earlier in the pass (room is
 * only taken within a pass, and a shape holds everything a placement reads). */
static int try_pending(elastic_state *s, const sim_view *v, sim_job_id id, policy_decisions *out)
{
    const sim_job *j = sim_view_job(v, id);
    if (j->is_service)
        return SIM_OK;
    uint32_t lo, hi;
    bounds(j, &lo, &hi);
    sim_placement p;
    uint32_t n = lo;
    shape_memo *m = j->shape < s->memo_cap ? &s->memo[j->shape] : NULL;
    if (s->mode == M_STATIC) {
        /* At max_replicas, or as many as the offline slice holds; a job the slice cannot
         * hold even empty would wait for ever. */
        uint64_t fit;
        if (m && m->fit_gen == v->shape_gen[j->shape] + 1) {
            fit = m->fit_n;
        } else {
            fit = nodes_fit(v, s->off_nodes, s->n_off_nodes, j);
            if (m) {
                m->fit_gen = v->shape_gen[j->shape] + 1;
                m->fit_n = fit;
            }
        }
        if (fit < lo) {
            char why[160];
            snprintf(why, sizeof why,
                     "the nodes not reserved for the services' peak hold %llu of its %u "
                     "replicas",
                     (unsigned long long)fit, lo);
            return sim_decide_reject(out, id, why);
        }
        if (!roles_hold(j, lo, s->off_cpu, s->off_mem))
            return reject_slice(out, id, j, "not reserved for", lo);
        n = hi < fit ? hi : (uint32_t)fit;
    }
    if (m && m->fail_pass == s->pass && m->fail_n == n)
        return SIM_OK;
    if (place_n(s, v, id, n, &p))
        return sim_decide_start(out, id, &p);
    if (s->mode == M_STATIC && nodes_idle(v, s->off_nodes, s->n_off_nodes)) {
        /* The slice's count is by capacity, node by node, without the master and
         * parameter servers: the idle slice may hold fewer, or too few, and the job
         * would wait for ever. */
        for (uint32_t k = n; k-- > lo && k > 0;)
            if (place_n(s, v, id, k, &p))
                return sim_decide_start(out, id, &p);
        return reject_slice(out, id, j, "not reserved for", lo);
    }
    if (m) {
        m->fail_pass = s->pass;
        m->fail_n = n;
    }
    return SIM_OK;
}

/*
 * Offline pending jobs start in list order where they fit (backfilling). When the run
 * has no services and no job with replica bounds, every job starts with its trace's
 * replicas on any node, most allocated first: that is binpack's backfilling pass, which
 * merges the shapes' lists by enqueue order and drops a shape at its first failure
 * (place_pass_run). Otherwise the pending list is walked, O(pending jobs).
 */
static int start_pending(elastic_state *s, const sim_view *v, policy_decisions *out)
{
    if (by_shape && !s->any_bounds && v->n_services == 0)
        return place_pass_run(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                              PLACE_GPU_MOST_USED, false);
    uint32_t had = s->memo_cap;
    if (!sim_reserve((void **)&s->memo, &s->memo_cap, v->n_shapes, sizeof *s->memo))
        return SIM_ENOMEM;
    memset(s->memo + had, 0, (s->memo_cap - had) * sizeof *s->memo);
    s->pass++;
    for (uint32_t id = v->pending_head; id != SIM_JOB_NONE;) {
        uint32_t next = sim_view_next(v, id); /* before deciding: a start moves the job */
        int rc = try_pending(s, v, id, out);
        if (rc != SIM_OK)
            return rc;
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
    if (!s->any_bounds)
        return SIM_OK; /* no job can be resized */
    /* Any running job may be adjustable, and jobs holding shares of a GPU can outnumber
     * the GPUs: room for all of them (sized to the GPUs at init, grown by doubling). */
    if (!sim_reserve((void **)&s->adj, &s->adj_cap, v->n_running, sizeof *s->adj))
        return SIM_ENOMEM;
    uint32_t n = 0;
    uint64_t used = 0;
    for (uint32_t g = 0; g < v->n_nodes; g++)
        used += v->node_used_milli[g];
    for (uint32_t id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        if (lo == hi || j->is_service || j->gpus_per_replica == 0)
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
                int rc = scale_in(s, out, a->id, 1);
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

/* Remaining time one more trainer saves job id at n trainers: W (1/s(n) - 1/s(n+1)),
 * 0 at max_replicas. */
static double opt_gain(const sim_view *v, sim_job_id id, uint32_t n, uint32_t hi)
{
    if (n + 1 > hi)
        return 0;
    double w = sim_view_work_left(v, id);
    double s0 = sim_view_scaling(v, id, n), s1 = sim_view_scaling(v, id, n + 1);
    if (!(s1 > 0))
        return 0;
    return s0 > 0 ? w * (1.0 / s0 - 1.0 / s1) : INFINITY;
}

static bool gain_before(const gain_ent *a, const gain_ent *b)
{
    return a->gain > b->gain || (a->gain == b->gain && a->idx < b->idx);
}

static void gain_down(gain_ent *h, uint32_t n, uint32_t i)
{
    gain_ent x = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && gain_before(&h[c + 1], &h[c]))
            c++;
        if (!gain_before(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Whether entry x's job is still in the pending list as it entered it. */
static bool opt_pending(const sim_view *v, const opt_entry *x)
{
    const sim_job *j = sim_view_job(v, x->id);
    return j->state == SIM_JOB_PENDING && j->enqueue_seq == x->seq;
}

static int entry_cmp(const void *a, const void *b)
{
    uint64_t x = ((const opt_entry *)a)->seq, y = ((const opt_entry *)b)->seq;
    return (x > y) - (x < y);
}

/* Room for n jobs in a round's order, bucket and heap arrays. */
static int opt_reserve(elastic_state *s, uint32_t n)
{
    uint32_t cap = s->ord_cap ? s->ord_cap : 256;
    while (cap < n)
        cap *= 2;
    sim_job_id *o = sim_reallocarray(s->ord, 2 * (size_t)cap, sizeof *o);
    if (o) {
        /* The second half (a round's running jobs) moves with the capacity. */
        if (s->ord_cap)
            memmove(o + cap, o + s->ord_cap, (size_t)s->ord_cap * sizeof *o);
        s->ord = o;
    }
    uint8_t *b = sim_reallocarray(s->bucket, cap, 1);
    if (b)
        s->bucket = b;
    gain_ent *h = sim_reallocarray(s->heap, cap, sizeof *h);
    if (h)
        s->heap = h;
    if (!o || !b || !h)
        return SIM_ENOMEM;
    s->ord_cap = cap;
    return SIM_OK;
}

/* Pending job id (its min lo, g GPUs per trainer) gets its min this round: it joins the
 * round's reached jobs (entry x), and the GPUs left fall by lo x g. */
static int opt_give_min(elastic_state *s, const sim_view *v, opt_entry x, uint32_t *n_vis,
                        int64_t *free_gpus)
{
    if (!sim_reserve((void **)&s->vis, &s->vis_cap, *n_vis + 1, sizeof *s->vis))
        return SIM_ENOMEM;
    s->vis[(*n_vis)++] = x;
    const sim_job *j = sim_view_job(v, x.id);
    uint32_t lo, hi, g = j->gpus_per_replica;
    bounds(j, &lo, &hi);
    opt_job *o = sim_view_job_state(v, x.id);
    o->target = lo;
    *free_gpus -= (int64_t)lo * g;
    o->gain = opt_gain(v, x.id, lo, hi);
    return SIM_OK;
}

/* After a round: each list's entries passed in it that are still pending stay, moved up
 * against the entries not reached (so the cost is the round's). */
static void opt_compact(elastic_state *s, const sim_view *v)
{
    for (uint32_t i = 0; i < s->n_lists; i++) {
        opt_list *l = &s->lists[i];
        uint32_t w = l->cur;
        for (uint32_t k = l->cur; k-- > l->head;)
            if (opt_pending(v, &l->e[k]))
                l->e[--w] = l->e[k];
        l->head = w;
        if (l->head == l->tail)
            l->head = l->tail = 0;
    }
}

/* Optimus (Peng et al., EuroSys'18) as Pollux's simulator runs it: every offline job
 * gets its min trainers while GPUs last (fewest first), then GPUs go one at a time to
 * the job whose remaining time one more trainer shortens most; jobs are then resized
 * to their allocation (shrinks first, a job left with none is preempted, both with a
 * checkpoint unless resize=lossy), the pending jobs reached start at their min, and the
 * trainers beyond the mins are placed in the order they were handed out, where they
 * fit. */
static int optimus_round(elastic_state *s, const sim_view *v, policy_decisions *out)
{
    /* Mins, fewest first (ties: running before pending, then list order) while GPUs
     * last: the running jobs bucketed by min (those above MAX_MIN_PASS in the last) in
     * one walk and a stable scatter; the pending ones from their (lo, g) lists, merged
     * by list order within a bucket, a list left once its min no longer fits (GPUs only
     * go) and every list once none is left; the jobs not reached get none.
     * When every running job is an offline one without replica bounds (they run at
     * their min and get no more), a bucket whose running jobs fit together gives each
     * its min whatever their order, and the round leaves them as they are: the bucket
     * costs its sum, not a walk. Should a bucket's sum not fit, the round is made again
     * with the walk. */
    if (s->oom)
        return SIM_ENOMEM;
    bool by_sums = opt_sums && s->n_fixed == v->n_running;
again:;
    int64_t free_gpus = (int64_t)(s->total_milli / SIM_MILLI_GPU); /* less the services' */
    uint32_t n_run = by_sums ? 0 : v->n_running;
    if (n_run > s->ord_cap && opt_reserve(s, n_run) != SIM_OK)
        return SIM_ENOMEM;
    sim_job_id *all = s->ord + s->ord_cap; /* running non-services, in list order */
    uint32_t n_all = 0, count[MAX_MIN_PASS + 1] = {0};
    for (uint32_t id = by_sums ? SIM_JOB_NONE : v->running_head; id != SIM_JOB_NONE;
         id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        if (j->is_service) {
            free_gpus -= (int64_t)j->replicas * j->gpus_per_replica;
            continue;
        }
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        s->bucket[n_all] = (uint8_t)(lo > MAX_MIN_PASS ? MAX_MIN_PASS : lo);
        count[s->bucket[n_all]]++;
        all[n_all++] = id;
    }
    if (free_gpus < 0)
        free_gpus = 0; /* shared service GPUs counted whole: a CPU-only job still fits */
    uint32_t at[MAX_MIN_PASS + 1], sum = 0;
    for (uint32_t b = 0; b <= MAX_MIN_PASS; b++) {
        at[b] = sum;
        sum += count[b];
    }
    for (uint32_t i = 0; i < n_all; i++)
        s->ord[at[s->bucket[i]]++] = all[i];
    bool cpu_lists = false; /* a list of CPU-only jobs, which need no GPU left */
    for (uint32_t i = 0; i < s->n_lists; i++) {
        s->lists[i].cur = s->lists[i].head;
        cpu_lists = cpu_lists || (s->lists[i].g == 0 && s->lists[i].head < s->lists[i].tail);
    }
    uint32_t n_vis = 0, r = 0;
    for (uint32_t b = 1; b <= MAX_MIN_PASS; b++) {
        if (by_sums) {
            if ((int64_t)s->fixed_gpus[b] > free_gpus) {
                by_sums = false;
                goto again;
            }
            free_gpus -= (int64_t)s->fixed_gpus[b];
        }
        for (; r < at[b]; r++) {
            sim_job_id id = s->ord[r];
            const sim_job *j = sim_view_job(v, id);
            uint32_t lo, hi;
            bounds(j, &lo, &hi);
            opt_job *o = sim_view_job_state(v, id);
            uint32_t g = j->gpus_per_replica;
            o->target = (int64_t)lo * g <= free_gpus ? lo : 0;
            free_gpus -= (int64_t)o->target * g;
            o->gain = o->target ? opt_gain(v, id, o->target, hi) : 0;
        }
        if (!opt_lists) { /* every pending job of the bucket, in list order */
            for (uint32_t id = v->pending_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
                const sim_job *j = sim_view_job(v, id);
                uint32_t lo, hi, g = j->gpus_per_replica;
                bounds(j, &lo, &hi);
                if (j->is_service || (lo > MAX_MIN_PASS ? MAX_MIN_PASS : lo) != b ||
                    (int64_t)lo * g > free_gpus)
                    continue;
                if (opt_give_min(s, v, (opt_entry){id, j->enqueue_seq}, &n_vis, &free_gpus))
                    return SIM_ENOMEM;
            }
            continue;
        }
        while (free_gpus > 0 || cpu_lists) {
            opt_list *best = NULL;
            for (uint32_t i = 0; i < s->n_lists; i++) {
                opt_list *l = &s->lists[i];
                if ((l->lo > MAX_MIN_PASS ? MAX_MIN_PASS : l->lo) != b ||
                    (int64_t)l->lo * l->g > free_gpus)
                    continue;
                while (l->cur < l->tail && !opt_pending(v, &l->e[l->cur]))
                    l->cur++; /* stale: dropped when the round ends */
                if (l->cur < l->tail && (!best || l->e[l->cur].seq < best->e[best->cur].seq))
                    best = l;
            }
            if (!best)
                break;
            if (opt_give_min(s, v, best->e[best->cur++], &n_vis, &free_gpus))
                return SIM_ENOMEM;
        }
    }
    /* The pending jobs reached, in list order (they come from the lists bucket by
     * bucket). */
    if (n_vis)
        qsort(s->vis, n_vis, sizeof *s->vis, entry_cmp);
    if (n_all + n_vis > s->ord_cap && opt_reserve(s, n_all + n_vis) != SIM_OK)
        return SIM_ENOMEM;
    /* Then one GPU's worth of trainers at a time to the job with the highest marginal
     * gain whose replica still fits: a heap by gain, O((jobs + steps) log jobs). A job
     * whose replica does not fit now never will in this round (GPUs only go). */
    uint32_t nh = 0, n_grants = 0;
    all = s->ord + s->ord_cap; /* (opt_reserve may have moved it) */
    for (uint32_t i = 0; i < n_all + n_vis; i++) {
        sim_job_id id = i < n_all ? all[i] : s->vis[i - n_all].id;
        opt_job *o = sim_view_job_state(v, id);
        o->step = o->target;
        o->full = false;
        if (o->gain > 0 && sim_view_job(v, id)->gpus_per_replica)
            s->heap[nh++] = (gain_ent){o->gain, i, id};
    }
    for (uint32_t i = nh / 2; i-- > 0;)
        gain_down(s->heap, nh, i);
    while (nh) {
        sim_job_id best = s->heap[0].id;
        const sim_job *j = sim_view_job(v, best);
        uint32_t g = j->gpus_per_replica;
        opt_job *o = sim_view_job_state(v, best);
        if ((int64_t)g > free_gpus) {
            s->heap[0] = s->heap[--nh];
        } else {
            uint32_t lo, hi;
            bounds(j, &lo, &hi);
            o->target++;
            free_gpus -= g;
            if (n_grants < s->grants_cap) /* (always: each grant takes g >= 1 GPUs) */
                s->grants[n_grants++] = best;
            o->gain = opt_gain(v, best, o->target, hi);
            if (o->gain > 0)
                s->heap[0].gain = o->gain;
            else
                s->heap[0] = s->heap[--nh];
        }
        if (nh)
            gain_down(s->heap, nh, 0);
    }
    /* Apply: shrink first, so the GPUs they free are there for the others (the running
     * jobs in list order: `all`; a job preempted here has no target to grow to). Then
     * every pending job reached starts at its min, which the round gave it before any
     * trainer beyond a min: starting one at its whole allocation could take the room
     * another's min needs (CPU, memory, a node's GPUs). Then the trainers beyond the
     * mins are placed in the order the gains handed them out, a job's only while each
     * finds room. */
    int rc;
    for (uint32_t i = 0; i < n_all; i++) {
        sim_job_id id = all[i];
        const sim_job *j = sim_view_job(v, id);
        const opt_job *o = sim_view_job_state(v, id);
        if (o->target < j->replicas) {
            /* Pollux's simulator checkpoints before a reallocation (progress kept, the
             * default): with the loss of a restart from the last periodic checkpoint
             * (resize=lossy), allocations that change every round can keep jobs from
             * ever finishing. */
            rc = o->target == 0 ? preempt_job(s, v, out, id, s->resize_ckpt)
                                : scale_in(s, out, id, j->replicas - o->target);
            if (rc != SIM_OK)
                return rc;
        }
    }
    for (uint32_t i = 0; i < n_vis; i++) {
        sim_job_id id = s->vis[i].id;
        const sim_job *j = sim_view_job(v, id);
        uint32_t lo, hi;
        bounds(j, &lo, &hi);
        sim_placement p;
        if (place_n(s, v, id, lo, &p)) {
            if ((rc = sim_decide_start(out, id, &p)) != SIM_OK)
                return rc;
            opt_started(s, v, id, lo);
        }
    }
    for (uint32_t k = 0; k < n_grants; k++) {
        sim_job_id id = s->grants[k];
        const sim_job *j = sim_view_job(v, id);
        opt_job *o = sim_view_job_state(v, id);
        o->step++;
        sim_placement p;
        while (j->state == SIM_JOB_RUNNING && !o->full && j->replicas < o->step) {
            if (!place_n(s, v, id, 1, &p)) {
                o->full = true; /* room only goes within the round */
                break;
            }
            if ((rc = sim_decide_grow(out, id, &p)) != SIM_OK)
                return rc;
        }
    }
    opt_compact(s, v);
    return SIM_OK;
}

static int elastic_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    elastic_state *s = st;
    if (s->mode == M_STATIC)
        reserve(s, v);
    int rc = serve(s, v, out);
    if (rc == SIM_OK && s->mode == M_OPTIMUS) {
        if (now < s->next_us)
            return SIM_OK;
        s->next_us = now + s->period_us;
        return optimus_round(s, v, out);
    }
    if (rc == SIM_OK)
        rc = start_pending(s, v, out);
    if (rc != SIM_OK || !s->scale || now < s->next_us)
        return rc;
    s->next_us = now + s->period_us;
    return trigger(s, v, out);
}

static sim_time elastic_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const elastic_state *s = st;
    if (s->mode == M_OPTIMUS) {
        if (v->n_running == 0 && v->n_pending == 0)
            return SIM_TIME_NEVER;
    } else if (!s->scale || v->n_running == 0) {
        return SIM_TIME_NEVER;
    }
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
    .on_arrival = elastic_on_arrival,
    .schedule = elastic_schedule,
    .next_wakeup = elastic_next_wakeup,
    .elastic_outputs = true,
};

const policy_ops policy_optimus = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "optimus",
    .summary = "Optimus' marginal-gain allocation of trainers by each job's speed curve, "
               "every period",
    .state_size = sizeof(elastic_state),
    .job_state_size = sizeof(opt_job),
    .options = optimus_opts,
    .init = optimus_init,
    .fini = elastic_fini,
    .on_arrival = optimus_on_arrival,
    .on_requeue = optimus_on_requeue,
    .on_finish = optimus_on_finish,
    .schedule = elastic_schedule,
    .next_wakeup = elastic_next_wakeup,
    .elastic_outputs = true,
};

const policy_ops policy_static = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "static",
    .summary = "a node slice reserved for the online services' peak; offline jobs rigid at "
               "max_replicas on the rest",
    .state_size = sizeof(elastic_state),
    .options = rigid_opts,
    .init = static_init,
    .fini = elastic_fini,
    .on_arrival = elastic_on_arrival,
    .schedule = elastic_schedule,
    .elastic_outputs = true,
};

const policy_ops policy_rigid_min = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "rigid-min",
    .summary = "elastic jobs run rigid at min_replicas (arrival order, backfilling); online "
               "services first, preempting offline jobs",
    .state_size = sizeof(elastic_state),
    .options = rigid_opts,
    .init = rigid_init,
    .fini = elastic_fini,
    .on_arrival = elastic_on_arrival,
    .schedule = elastic_schedule,
    .elastic_outputs = true,
};
