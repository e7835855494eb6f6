/*
 * quota.c: multi-tenant elastic quotas ordered by predicted duration. Each tenant has a
 * GPU quota and a high- and a low-priority queue. High-priority jobs start within the
 * quota their tenant has left, tenants in order of quota usage; one that finds no room
 * reclaims lent GPUs by preempting borrowers (jobs beyond their tenant's quota, of
 * tenants still over it; the most recently started first on the node where that takes
 * the least borrowed share, until GPUs, CPU and memory fit; a dry run checks first).
 * Only while no such job waits do the others start, borrowing idle GPUs beyond quota
 * (borrow=false: a static partition). Queues are ordered by aged predicted duration
 * (models/duration.h: predicted when the job becomes schedulable, learnt when it
 * finishes, retrained on simulated time).
 * Invariant: the jobs a tenant started within quota never hold more than its quota.
 * Passes are incremental: with nothing released, only newly queued jobs are tried; the
 * queues the low pass reads (low-priority jobs, high-priority ones that borrow) are split
 * by shape (shapeq.h), so it passes over all the jobs of a shape that found no room at
 * once instead of walking them.
 * After Kubernetes ElasticQuota, Philly's virtual clusters (Jeon et al., ATC'19) and
 * Helios' QSSF (Hu et al., SC'21). README "Multi-tenant quotas" has the full rules.
 */
#include "policies/quota.h"

#include "models/duration.h"
#include "policies/place.h"
#include "policies/shapeq.h"
#include "policies/tenantq.h"
#include "base/alloc.h"
#include "base/maxtree.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { PRIO_TRACE, PRIO_QOS, PRIO_HASH, PRIO_ALL };
#define NOJOB SIM_JOB_NONE

typedef struct qjob {
    tenantq_link link;    /* high-priority queue (must stay first: offset 0) */
    tenantq_link sub;     /* low-priority queue, or (borrowing) high one, by shape */
    /* Beside the links, which a pass reads with them: */
    uint64_t tried;       /* release_epoch + 1 when placement last failed, 0 = never */
    uint64_t demand;      /* demand_milli of the job, fixed at arrival */
    uint32_t shape;       /* sim_job.shape while queued (a pending job keeps it) */
    model_dur_job feat;   /* the predictor's view of the job, fixed at arrival */
    double pred_s;        /* predicted duration, NaN until predicted */
    sim_time eligible_us; /* end of profiling */
    uint32_t prof_next;   /* next in the profiling FIFO */
    uint32_t rep_next;    /* next in the list of predictions to record */
    uint32_t fresh_next;  /* next in the list of jobs queued since the last pass */
    uint32_t reclaims;    /* preemptions to give borrowed GPUs back */
    uint64_t dry;         /* dry run that marked the job as a victim */
    uint8_t high, borrower, profiling, reject, fresh;
} qjob;

#define LB_MEMOS 16 /* replica requests whose node bounds are kept */
#define DRY_KEYS 64 /* replica requests (with the tenant) whose dry-run costs are kept */
#define DRY_MEMO_BITS 16 /* log2 of the entries of the dry-run memo */

static uint32_t dry_serial_first; /* see quota_dry_serial_first */

typedef struct qstate {
    /* Options. */
    bool borrow, by_submit, interference;
    int prio;
    int64_t high_min;
    double high_fraction, aging, profile_s, retrain_s;
    uint64_t min_new; /* finished jobs a retraining needs since the last one */
    uint64_t seed;
    /* Predictor and placement. */
    model_duration *pred;
    place_ws ws;
    tenantq q;    /* per tenant: its high-priority queue */
    shapeq low;   /* per tenant and shape: its low-priority queue */
    shapeq hover; /* with borrowing, per tenant and shape: its high-priority queue again,
                   * for the low pass, which starts such jobs beyond quota */
    /* Per tenant (grown with the queues): the high queue's pass cursor, and the low
     * pass's heap of its shape sublists (low_candidate): lc_n entries from lc_off in the
     * pool, built in pass lc_pass at insertion count lc_gen. */
    uint32_t *cursor;
    /* The GPU demands of the jobs in the high queues: (tenant, demand, jobs), sorted by
     * tenant then demand (distinct demands are few). */
    struct hdem {
        uint32_t tenant, n;
        uint64_t demand;
    } * hdem;
    uint32_t n_hdem, hdem_cap;
    uint32_t *lc_off, *lc_n;
    uint64_t *lc_pass, *lc_gen;
    uint32_t t_cap;
    /* The heaps' entries (at least one per sublist), valid for pool_pass and pool_gen;
     * low_gen counts the insertions into the shape queues. */
    struct lc_entry *pool;
    uint32_t pool_cap, pool_used;
    uint64_t pool_pass, pool_gen, low_gen;
    /* Reclaim scratch, sized at init (per node, per GPU), with the tenants, and (victims)
     * with the running jobs. Per node: the cost of its own dry run (node_cost); the
     * smallest share of a borrower on its GPUs (min_share), as of node_change_epoch + 1
     * (min_share_at); the reclaim that found it unusable with the others' victims (bad),
     * and the one that found it holding the replica as it is (fit_at). The heap of
     * nodes by cost, and the nodes in cost order so far (reclaim_stream); the nodes the
     * reclaim in progress took out of its memo's tree (taken, n_taken, of the memo
     * `cur`), to be put back before the next. */
    double *node_cost, *min_share;
    uint64_t *min_share_at, *bad, *fit_at;
    uint32_t *gpu_borrowed; /* per GPU: the share borrowers hold there, as of min_share_at */
    uint32_t *deficit;      /* per GPU of a node: share short of a replica's */
    uint32_t *cost_heap, *order, *taken;
    uint32_t n_cost, n_order, n_taken;
    uint64_t reclaim_id;
    /* node_bound per node for the last few replica requests reclaimed for (a bound
     * depends on the node and on the replica's GPUs, share and GPU memory only; which
     * nodes may hold the replica, on its GPUs and the job's GPU types too), with the
     * nodes of finite bound (those that hold the replica as they are among them) in a
     * tournament tree by bound, then id; with borrowing, sized at init for the nodes
     * (n_nodes): LB_MEMOS x nodes bounds of lb_all (and epochs of lb_at_all), LB_MEMOS x
     * 2 x lb_leaves entries of win_all. */
    struct lb_memo {
        uint32_t gpr;      /* the request: GPUs of a replica */
        uint32_t milli;    /* share of each GPU, milli-GPUs */
        uint64_t gmem_mib; /* GPU memory of each GPU */
        uint64_t mask;     /* the job's GPU types (0: any) */
        uint64_t used;     /* reclaim_id of the reclaim that last read it */
        uint64_t synced;   /* the view's change_epoch + 1 when last brought up to date; 0: never */
        /* Per node: node_bound, INFINITY where the node cannot hold a replica (down, of
         * too few or too many GPUs, of a type the job does not accept), as of
         * node_change_epoch + 1 = at (0: never). */
        double *lb;
        uint64_t *at;
        /* win[lb_leaves + n]: node n where its bound is finite (and the last reclaim did
         * not take it out: see taken), else UINT32_MAX; win[i] (1 <= i < lb_leaves): the
         * first of win[2i] and win[2i + 1] by bound, then id. */
        uint32_t *win;
    } lb_memo[LB_MEMOS];
    uint32_t n_lb_memo;
    uint32_t n_nodes;   /* the cluster's nodes, as sized at init */
    uint32_t lb_leaves; /* a power of two at least the nodes */
    double *lb_all;
    uint64_t *lb_at_all;
    uint32_t *win_all;
    struct lb_memo *cur; /* the memo of the reclaim in progress or last made */
    /* The cost of a node's own dry run (node_dry_cost) for the last few requests
     * reclaimed for, kept while the node does not change and each tenant whose excess
     * the dry run read still holds more than the dry run took from it (dry_memo_hit):
     * a direct-mapped table by (request, node), with borrowing, sized at init. A
     * request (a replica's GPUs, share, GPU memory, CPU and memory, the job's GPU types,
     * and the tenant it reclaims for) is interned in dry_keys under a serial; the least
     * recently used is replaced under a new serial, so that its old entries no longer
     * match (when the serials wrap, the table is cleared). */
    struct dry_key {
        uint32_t gpr;       /* GPUs of a replica */
        uint32_t milli;     /* share of each GPU, milli-GPUs */
        uint64_t gmem_mib;  /* GPU memory of each GPU, MiB */
        uint64_t cpu_milli; /* CPU of a replica, milli-cores */
        uint64_t mem_mib;   /* memory of a replica, MiB */
        uint64_t types;     /* the GPU types the job accepts (sim_job_type_ok; 0: any) */
        uint32_t tenant;    /* the tenant reclaiming */
        uint32_t serial;    /* its entries' serial, never 0 */
        uint64_t used;      /* reclaim_id of the reclaim that last read it */
    } dry_keys[DRY_KEYS];
    uint32_t n_dry_keys;      /* keys in dry_keys */
    uint32_t dry_serial_next; /* the last serial given */
    uint32_t dry_serial;      /* the current reclaim's request, 0 = no memo */
    struct dry_memo {
        uint32_t serial; /* the request, 0 = empty */
        uint32_t node;   /* the node */
        uint64_t at;     /* node_change_epoch[node] + 1 when computed */
        double cost;     /* the dry run's cost, milli-GPUs (INFINITY: cannot be freed) */
        int64_t need;    /* milli-GPUs each tenant of mask must exceed its quota by, strictly */
        uint64_t mask;   /* tenants (bit t) whose excess the dry run read */
    } * dry_memo;
    /* What the current dry run read of the tenants' excess: the most it had taken from one
     * tenant at a check that passed (dry_need, milli-GPUs), the tenants (dry_mask), and
     * whether a check failed or the victims ran out of room (dry_short). */
    int64_t dry_need;
    uint64_t dry_mask;
    bool dry_short;
    double *gpu_cost;
    uint32_t *gpu_idx;
    uint32_t *room_milli; /* per GPU of a node: free share in a dry run */
    uint64_t *room_mem;   /* per GPU of a node: free GPU memory in a dry run, MiB */
    uint32_t *chosen;  /* nodes chosen for the replicas */
    uint32_t *victims; /* jobs marked by the dry run (distinct running jobs) */
    uint32_t n_victims;
    uint32_t victims_cap;  /* grown to the running jobs at each schedule call */
    uint32_t max_gpn;      /* capacity of the per-GPU arrays */
    int64_t *excess;       /* per tenant: share beyond quota during a dry run */
    uint64_t *excess_mark; /* per tenant: dry run that set excess */
    uint64_t dry_id;
    /* Lists. */
    uint32_t prof_head, prof_tail, rep_head;
    sim_time next_train_us;
    bool started, oom;
    /* Skip a pass when nothing that could let a job start changed since the last one. */
    bool primed;
    bool waiting;        /* the last pass left a high-priority job waiting */
    bool low_ran;        /* the low-priority pass ran at this epoch */
    uint64_t epoch;      /* release_epoch after the last pass */
    uint32_t fresh_head; /* jobs queued since the last pass */
    /* Shapes (sim_job.shape) that found no room in the current pass: resources only
     * shrink during a pass (until a reclaim releases some), so a later job of the same
     * shape would not fit either. Per shape id: the pass, and the id's generation. */
    struct qfail {
        uint64_t pass;
        uint32_t gen;
    } *fail;
    uint32_t fail_cap;
    uint64_t pass_id;
} qstate;

static const policy_option quota_options[] = {
    {"borrow", "true", "low-priority jobs may borrow idle GPUs beyond their tenant's quota"},
    {"priority", "trace",
     "high-priority jobs: trace (priority >= high_min), qos (LS or Guaranteed), hash "
     "(high_fraction of jobs by a hash of the id), all"},
    {"high_min", "1", "trace priority at or above which a job is high priority"},
    {"high_fraction", "0.5", "share of high-priority jobs with priority=hash"},
    {"order", "predicted", "queue order: predicted (shortest predicted first, aged) or submit"},
    {"aging", "1", "seconds of predicted duration forgiven per second of waiting"},
    {"profile_time", "60", "seconds the jobs of a tenant without history wait (profiling)"},
    {"retrain_interval", "86400",
     "seconds of simulated time between trainings (skipped while under 1 % of the history "
     "is new)"},
    {"min_history", "50", "finished jobs a tenant needs for its own model"},
    {"tenant_models", "64", "most tenants with a model of their own (the first to reach "
                            "min_history); the others use the global model"},
    {"history", "16384", "finished jobs kept for training"},
    {"learner", "gbt", "duration learner: gbt (boosted trees) or ridge"},
    {"topics", "8", "NMF topics of the job text (0 = no text features)"},
    {"placement", "interference",
     "shared GPUs: interference (least predicted slowdown) or pack (most allocated)"},
    {"quotas", "", "tenant quotas, a CSV tenant,quota_gpus: the same as the run option --quotas"},
    {"quota_share", "",
     "quotas in proportion to a column, FILE[:COLUMN]: the same as --quota-share"},
    {NULL, NULL, NULL},
};

/* A sublist in its tenant's heap, with its first job that may start as last seen. */
typedef struct lc_entry {
    double key;
    uint64_t seq;
    uint32_t sub; /* the sublist, of s->hover when high, else of s->low */
    sim_job_id head;
    bool high;
} lc_entry;

static qjob *qj(const sim_view *v, sim_job_id id)
{
    return sim_view_job_state(v, id);
}

bool policy_quota_job_is_high(const sim_view *v, sim_job_id id)
{
    return qj(v, id)->high != 0;
}

bool policy_quota_job_is_borrower(const sim_view *v, sim_job_id id)
{
    return qj(v, id)->borrower != 0;
}

uint32_t policy_quota_job_reclaims(const sim_view *v, sim_job_id id)
{
    return qj(v, id)->reclaims;
}

bool policy_quota_job_is_profiling(const sim_view *v, sim_job_id id)
{
    return qj(v, id)->profiling != 0;
}

/* The reclaim and placement scratch sized at init. */
static void free_scratch(qstate *s)
{
    sim_free(s->node_cost);
    sim_free(s->min_share);
    sim_free(s->min_share_at);
    sim_free(s->bad);
    sim_free(s->fit_at);
    sim_free(s->taken);
    sim_free(s->cost_heap);
    sim_free(s->order);
    sim_free(s->gpu_borrowed);
    sim_free(s->deficit);
    sim_free(s->gpu_cost);
    sim_free(s->gpu_idx);
    sim_free(s->room_milli);
    sim_free(s->room_mem);
    sim_free(s->chosen);
    sim_free(s->lb_all);
    sim_free(s->lb_at_all);
    sim_free(s->win_all);
    sim_free(s->dry_memo);
}

static int quota_init(void *st, const policy_config *cfg, sim_diag *d)
{
    qstate *s = st;
    static const char *const prio[] = {"trace", "qos", "hash", "all", NULL};
    static const char *const order[] = {"predicted", "submit", NULL};
    static const char *const learner[] = {"gbt", "ridge", NULL};
    static const char *const placement[] = {"interference", "pack", NULL};
    const policy_option *o = quota_options;
    int ord, lrn, plc, rc;
    uint64_t min_hist, hist, topics, tmodels;
    double high_min;
    if ((rc = policy_config_bool(cfg, o, "borrow", &s->borrow, d)) ||
        (rc = policy_config_choice(cfg, o, "priority", prio, &s->prio, d)) ||
        (rc = policy_config_double(cfg, o, "high_min", -1e6, 1e6, &high_min, d)) ||
        (rc = policy_config_double(cfg, o, "high_fraction", 0, 1, &s->high_fraction, d)) ||
        (rc = policy_config_choice(cfg, o, "order", order, &ord, d)) ||
        (rc = policy_config_double(cfg, o, "aging", 0, 1e6, &s->aging, d)) ||
        (rc = policy_config_double(cfg, o, "profile_time", 0, 1e9, &s->profile_s, d)) ||
        (rc = policy_config_double(cfg, o, "retrain_interval", 1, 1e9, &s->retrain_s, d)) ||
        (rc = policy_config_u64(cfg, o, "min_history", 1, 1u << 24, &min_hist, d)) ||
        (rc = policy_config_u64(cfg, o, "tenant_models", 0, 65536, &tmodels, d)) ||
        (rc = policy_config_u64(cfg, o, "history", 1, 1u << 24, &hist, d)) ||
        (rc = policy_config_choice(cfg, o, "learner", learner, &lrn, d)) ||
        (rc = policy_config_u64(cfg, o, "topics", 0, MODEL_DUR_MAX_TOPICS, &topics, d)) ||
        (rc = policy_config_choice(cfg, o, "placement", placement, &plc, d)))
        return rc;
    s->high_min = (int64_t)ceil(high_min);
    /* Retraining on a history that changed by less than 1 % would refit the same model. */
    s->min_new = hist / 100 > 1 ? hist / 100 : 1;
    s->by_submit = ord == 1;
    s->interference = plc == 0;
    s->seed = cfg->seed;
    s->prof_head = s->prof_tail = s->rep_head = s->fresh_head = NOJOB;
    s->next_train_us = SIM_TIME_NEVER;
    s->dry_serial_next = dry_serial_first;
    tenantq_init(&s->q, offsetof(qjob, link), true);
    shapeq_init(&s->low, offsetof(qjob, sub));
    shapeq_init(&s->hover, offsetof(qjob, sub));
    model_dur_config mc;
    model_dur_config_default(&mc);
    mc.learner = lrn == 0 ? MODEL_DUR_GBT : MODEL_DUR_RIDGE;
    mc.min_history = (uint32_t)min_hist;
    mc.max_tenant_models = (uint32_t)tmodels;
    mc.history = (uint32_t)hist;
    mc.topics = (uint32_t)topics;
    mc.seed = cfg->seed;
    if ((rc = model_duration_create(&s->pred, &mc, d)) != SIM_OK)
        return rc;
    if ((rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK) {
        model_duration_destroy(s->pred);
        return rc;
    }
    s->max_gpn = cfg->n_gpus ? cfg->n_gpus : 1;
    size_t nn = cfg->n_nodes ? cfg->n_nodes : 1;
    s->node_cost = sim_calloc(nn, sizeof *s->node_cost);
    s->min_share = sim_calloc(nn, sizeof *s->min_share);
    s->min_share_at = sim_calloc(nn, sizeof *s->min_share_at);
    s->bad = sim_calloc(nn, sizeof *s->bad);
    s->fit_at = sim_calloc(nn, sizeof *s->fit_at);
    s->taken = sim_calloc(nn, sizeof *s->taken);
    s->cost_heap = sim_calloc(nn, sizeof *s->cost_heap);
    s->order = sim_calloc(nn, sizeof *s->order);
    s->gpu_borrowed = sim_calloc(s->max_gpn, sizeof *s->gpu_borrowed);
    s->deficit = sim_calloc(s->max_gpn, sizeof *s->deficit);
    s->gpu_cost = sim_calloc(s->max_gpn, sizeof *s->gpu_cost);
    s->gpu_idx = sim_calloc(s->max_gpn, sizeof *s->gpu_idx);
    s->chosen = sim_calloc(s->max_gpn, sizeof *s->chosen);
    s->room_milli = sim_calloc(s->max_gpn, sizeof *s->room_milli);
    s->room_mem = sim_calloc(s->max_gpn, sizeof *s->room_mem);
    /* Reclaims need borrowers. */
    if (s->borrow) {
        s->n_nodes = (uint32_t)nn;
        s->lb_leaves = maxtree_leaves((uint32_t)nn);
        s->lb_all = sim_calloc(LB_MEMOS * nn, sizeof *s->lb_all);
        s->lb_at_all = sim_calloc(LB_MEMOS * nn, sizeof *s->lb_at_all);
        s->win_all = sim_calloc(LB_MEMOS * 2 * (size_t)s->lb_leaves, sizeof *s->win_all);
        s->dry_memo = sim_calloc((size_t)1 << DRY_MEMO_BITS, sizeof *s->dry_memo);
    }
    if (!s->node_cost || !s->min_share || !s->min_share_at || !s->bad || !s->fit_at || !s->taken ||
        !s->cost_heap || !s->order || !s->gpu_borrowed || !s->deficit || !s->gpu_cost ||
        !s->gpu_idx || !s->chosen || !s->room_milli || !s->room_mem ||
        (s->borrow && (!s->lb_all || !s->lb_at_all || !s->win_all || !s->dry_memo))) {
        free_scratch(s);
        place_ws_fini(&s->ws);
        model_duration_destroy(s->pred);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    return SIM_OK;
}

static void quota_fini(void *st)
{
    qstate *s = st;
    model_duration_destroy(s->pred);
    place_ws_fini(&s->ws);
    tenantq_fini(&s->q);
    shapeq_fini(&s->low);
    shapeq_fini(&s->hover);
    sim_free(s->cursor);
    sim_free(s->hdem);
    sim_free(s->lc_off);
    sim_free(s->lc_n);
    sim_free(s->lc_pass);
    sim_free(s->lc_gen);
    sim_free(s->pool);
    sim_free(s->fail);
    free_scratch(s);
    sim_free(s->victims);
    sim_free(s->excess);
    sim_free(s->excess_mark);
}

/* ---- Quotas ---------------------------------------------------------------------- */

static uint64_t quota_milli(const sim_view *v, uint32_t t)
{
    if (t >= v->n_tenants || !(v->tenant_quota_gpus[t] > 0))
        return 0;
    return (uint64_t)(v->tenant_quota_gpus[t] * 1000.0 + 0.5);
}

static uint64_t used_milli(const sim_view *v, uint32_t t)
{
    return t < v->n_tenants ? v->tenant_used_milli[t] : 0;
}

/* GPU share the job holds when running with its requested share. */
static uint64_t demand_milli(const sim_job *j)
{
    return (uint64_t)j->spec.num_gpus * j->spec.gpu_milli;
}

static bool fits_quota(const sim_view *v, const sim_job *j)
{
    uint32_t t = j->spec.tenant;
    return used_milli(v, t) + demand_milli(j) <= quota_milli(v, t);
}

/* Quota usage for the order of tenants. A quota below one GPU (none included) counts
 * as one GPU, so a tenant without quota is served by its usage too, not starved. */
static double usage_ratio(const sim_view *v, uint32_t t)
{
    uint64_t q = quota_milli(v, t);
    return (double)used_milli(v, t) / (double)(q > SIM_MILLI_GPU ? q : SIM_MILLI_GPU);
}

/* ---- Arrival, profiling, prediction -------------------------------------------------- */

static bool prio_high(const qstate *s, const sim_job *j)
{
    switch (s->prio) {
    case PRIO_TRACE:
        return j->spec.priority >= s->high_min;
    case PRIO_QOS:
        return j->spec.qos == SIM_QOS_LS || j->spec.qos == SIM_QOS_GUARANTEED;
    case PRIO_HASH: {
        /* FNV-1a of the id mixed with the seed: the same job gets the same class in
         * every run with that seed, whatever the policy does. */
        uint64_t h = 1469598103934665603u ^ s->seed;
        for (const char *c = j->spec.id; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211u;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 33;
        return (double)(h >> 11) * 0x1.0p-53 < s->high_fraction;
    }
    default:
        return true;
    }
}

static double queue_key(const qstate *s, const sim_job *j, double pred_s)
{
    double submit_s = (double)j->spec.submit_us / 1e6;
    if (s->by_submit)
        return submit_s;
    return (isnan(pred_s) ? 0 : pred_s) + s->aging * submit_s;
}

static bool queued(const qjob *q)
{
    return q->link.queued || q->sub.queued;
}

static double qkey(const qjob *q)
{
    return q->link.queued ? q->link.key : q->sub.key;
}

/* The first entry of s->hdem at or after (t, d). */
static uint32_t hdem_at(const qstate *s, uint32_t t, uint64_t d)
{
    uint32_t lo = 0, hi = s->n_hdem;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct hdem *h = &s->hdem[mid];
        if (h->tenant < t || (h->tenant == t && h->demand < d))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Count a job of demand d in tenant t's high queue in (add) or out. False when the table
 * cannot grow. */
static bool hdem_count(qstate *s, uint32_t t, uint64_t d, bool add)
{
    uint32_t i = hdem_at(s, t, d);
    bool here = i < s->n_hdem && s->hdem[i].tenant == t && s->hdem[i].demand == d;
    if (!add) {
        if (here && --s->hdem[i].n == 0) {
            memmove(s->hdem + i, s->hdem + i + 1, (s->n_hdem - i - 1) * sizeof *s->hdem);
            s->n_hdem--;
        }
        return true;
    }
    if (here) {
        s->hdem[i].n++;
        return true;
    }
    if (!sim_reserve((void **)&s->hdem, &s->hdem_cap, s->n_hdem + 1, sizeof *s->hdem))
        return false;
    memmove(s->hdem + i + 1, s->hdem + i, (s->n_hdem - i) * sizeof *s->hdem);
    s->hdem[i] = (struct hdem){t, 1, d};
    s->n_hdem++;
    return true;
}

/* The smallest demand in tenant t's high queue; UINT64_MAX when it is empty. */
static uint64_t hdem_min(const qstate *s, uint32_t t)
{
    uint32_t i = hdem_at(s, t, 0);
    return i < s->n_hdem && s->hdem[i].tenant == t ? s->hdem[i].demand : UINT64_MAX;
}

static void enqueue(qstate *s, const sim_view *v, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    qjob *q = qj(v, id);
    uint32_t t = j->spec.tenant;
    double key = queue_key(s, j, q->pred_s);
    q->shape = j->shape;
    if (q->high) {
        if (!hdem_count(s, t, q->demand, true)) {
            s->oom = true;
            return;
        }
        tenantq_insert(&s->q, v, t, id, key);
    }
    shapeq *sq = !q->high ? &s->low : s->borrow ? &s->hover : NULL;
    if (sq) {
        if (shapeq_insert(sq, v, t, id, key) != SIM_OK ||
            !sim_reserve((void **)&s->pool, &s->pool_cap, s->low.cap + s->hover.cap,
                         sizeof *s->pool)) {
            s->oom = true;
            return;
        }
        s->low_gen++;
    }
    if (!q->fresh) {
        q->fresh = 1;
        q->fresh_next = s->fresh_head;
        s->fresh_head = id;
    }
}

/* Predict, then queue (or mark for rejection), and list the job for recording. */
static void make_schedulable(qstate *s, const sim_view *v, sim_job_id id)
{
    qjob *q = qj(v, id);
    const sim_job *j = sim_view_job(v, id);
    q->profiling = 0;
    q->pred_s = model_duration_predict(s->pred, &q->feat, MODEL_DUR_AUTO, NULL);
    if (!s->borrow && demand_milli(j) > quota_milli(v, j->spec.tenant))
        q->reject = 1;
    else
        enqueue(s, v, id);
    q->rep_next = s->rep_head;
    s->rep_head = id;
}

static void quota_arrival(void *st, const sim_view *v, sim_job_id id)
{
    qstate *s = st;
    const sim_job *j = sim_view_job(v, id);
    uint32_t t = j->spec.tenant;
    if (2 * (uint64_t)t + 2 > UINT32_MAX / 2) {
        s->oom = true;
        return;
    }
    if (t >= s->t_cap) {
        uint32_t ncap = s->t_cap ? s->t_cap : 16;
        while (ncap <= t)
            ncap *= 2;
        bool grown = true;
        uint32_t **per32[] = {&s->cursor, &s->lc_off, &s->lc_n};
        for (size_t k = 0; k < sizeof per32 / sizeof *per32 && grown; k++) {
            uint32_t *p = sim_reallocarray(*per32[k], ncap, sizeof *p);
            if (p)
                *per32[k] = p;
            grown = p != NULL;
        }
        uint64_t **per[] = {&s->lc_pass, &s->lc_gen};
        for (size_t k = 0; k < sizeof per / sizeof *per && grown; k++) {
            uint64_t *p = sim_reallocarray(*per[k], ncap, sizeof *p);
            if (p) {
                memset(p + s->t_cap, 0, (ncap - s->t_cap) * sizeof *p);
                *per[k] = p;
            }
            grown = p != NULL;
        }
        int64_t *ne = sim_reallocarray(s->excess, ncap, sizeof *ne);
        if (ne)
            s->excess = ne;
        uint64_t *nm = sim_reallocarray(s->excess_mark, ncap, sizeof *nm);
        if (nm) {
            memset(nm + s->t_cap, 0, (ncap - s->t_cap) * sizeof *nm);
            s->excess_mark = nm;
        }
        if (!grown || !ne || !nm || tenantq_reserve(&s->q, ncap) != SIM_OK) {
            s->oom = true;
            return;
        }
        s->t_cap = ncap;
    }
    if (!s->started) {
        s->started = true;
        s->next_train_us = j->spec.submit_us + (sim_time)llround(s->retrain_s * 1e6);
    }
    qjob *q = qj(v, id);
    model_dur_input in;
    model_dur_input_of(&in, &j->spec);
    model_duration_arrive(s->pred, &in, &q->feat);
    q->pred_s = NAN;
    uint64_t qm = quota_milli(v, t);
    q->demand = demand_milli(j);
    q->high = prio_high(s, j) && qm > 0 && q->demand <= qm;
    if (s->profile_s > 0 && !model_duration_tenant_known(s->pred, t)) {
        q->profiling = 1;
        q->eligible_us = v->now + (sim_time)llround(s->profile_s * 1e6);
        q->prof_next = NOJOB;
        if (s->prof_tail == NOJOB)
            s->prof_head = id;
        else
            qj(v, s->prof_tail)->prof_next = id;
        s->prof_tail = id;
        return;
    }
    make_schedulable(s, v, id);
}

static void quota_finish(void *st, const sim_view *v, sim_job_id id)
{
    qstate *s = st;
    const sim_job *j = sim_view_job(v, id);
    /* The job's duration is known now, and only now. */
    model_duration_finish(s->pred, &qj(v, id)->feat, j->spec.work_s);
}

static void quota_requeue(void *st, const sim_view *v, sim_job_id id)
{
    qstate *s = st;
    qjob *q = qj(v, id);
    q->borrower = 0;
    if (!queued(q) && !q->profiling)
        enqueue(s, v, id);
}

/* ---- Placement ---------------------------------------------------------------------- */

/*
 * One replica of a job that shares GPUs, placed by predicted interference: on each node
 * where it fits, its gpr GPUs of least interference cost (sim_view_interference_cost);
 * the node whose GPUs cost least wins; ties go to the most-allocated node (packing), then
 * the lowest id. Only the nodes in cands[0..n_cands) when cands is not NULL.
 * O(GPUs x residents^2).
 */
static bool place_interference(qstate *s, const sim_view *v, sim_job_id id, uint32_t m,
                               const uint32_t *cands, uint32_t n_cands, sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t gpr = j->gpus_per_replica;
    uint64_t gm = j->spec.gpu_mem_mib;
    uint32_t best = UINT32_MAX;
    double best_cost = 0, best_pack = 0;
    for (uint32_t ci = 0; ci < (cands ? n_cands : v->n_nodes); ci++) {
        uint32_t n = cands ? cands[ci] : ci;
        if (!place_fits(&s->ws, v, j, n, m, gm))
            continue;
        uint32_t first = v->node_gpu_first[n], k = 0;
        for (uint32_t g = first; g < first + v->node_gpu_count[n]; g++)
            if (SIM_MILLI_GPU - v->gpu_used_milli[g] >= m &&
                v->gpu_mem_total[g] - v->gpu_used_mem[g] >= gm) {
                s->gpu_cost[k] = sim_view_interference_cost(v, id, g, m);
                s->gpu_idx[k++] = g;
            }
        double cost = 0;
        for (uint32_t i = 0; i < gpr && i < k; i++) {
            uint32_t b = i;
            for (uint32_t c = i + 1; c < k; c++)
                if (s->gpu_cost[c] < s->gpu_cost[b] ||
                    (s->gpu_cost[c] == s->gpu_cost[b] &&
                     v->gpu_used_milli[s->gpu_idx[c]] > v->gpu_used_milli[s->gpu_idx[b]]))
                    b = c;
            double tc = s->gpu_cost[i];
            uint32_t ti = s->gpu_idx[i];
            s->gpu_cost[i] = s->gpu_cost[b];
            s->gpu_idx[i] = s->gpu_idx[b];
            s->gpu_cost[b] = tc;
            s->gpu_idx[b] = ti;
            cost += s->gpu_cost[i];
        }
        double pack = place_score_most_allocated(NULL, v, j, n);
        if (best == UINT32_MAX || cost < best_cost ||
            (cost == best_cost && (pack > best_pack || (pack == best_pack && n < best)))) {
            best = n;
            best_cost = cost;
            best_pack = pack;
            memcpy(s->ws.gpus, s->gpu_idx, gpr * sizeof *s->ws.gpus);
        }
    }
    if (best == UINT32_MAX)
        return false;
    s->ws.nodes[0] = best;
    p->replicas = 1;
    p->nodes = s->ws.nodes;
    p->gpus = s->ws.gpus;
    p->milli = m;
    p->gpu_mem_mib = gm;
    return place_roles(&s->ws, v, id, p, NULL, 0);
}

static bool place_shape(qstate *s, const sim_view *v, sim_job_id id, sim_placement *p);

/* Whether shape sh found no room in this pass. */
static bool shape_no_room(const qstate *s, const sim_view *v, uint32_t sh)
{
    return sh < s->fail_cap && s->fail[sh].pass == s->pass_id &&
           s->fail[sh].gen == v->shape_gen[sh];
}

/* Whether pending job id's shape found no room in this pass. */
static bool shape_failed(const qstate *s, const sim_view *v, sim_job_id id)
{
    return shape_no_room(s, v, sim_view_job(v, id)->shape);
}

/* Place a job, unless a job of the same shape found no room earlier in this pass. */
static bool place_job(qstate *s, const sim_view *v, sim_job_id id, sim_placement *p)
{
    if (shape_failed(s, v, id))
        return false;
    bool ok = place_shape(s, v, id, p);
    uint32_t sh = sim_view_job(v, id)->shape;
    if (!ok && sh < s->fail_cap)
        s->fail[sh] = (struct qfail){s->pass_id, v->shape_gen[sh]};
    return ok;
}

/* A one-replica job without master or parameter servers that fitted nowhere at some
 * release epoch fits only on the nodes released since (place_candidates). */
static bool place_shape(qstate *s, const sim_view *v, sim_job_id id, sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t m = place_milli(j, 0), n_cands = 0;
    /* Multi-replica jobs are packed whatever their share: gang placement comes first.
     * Without an interference model every cost is 0, and for one GPU the scan below
     * picks what packing does (the most-allocated node, lowest id; its most used GPU,
     * lowest index). */
    if (!(s->interference && j->gpus_per_replica && m < SIM_MILLI_GPU && j->nominal_replicas == 1 &&
          j->gpus_per_replica <= s->ws.max_slots &&
          (j->gpus_per_replica > 1 || sim_view_has_interference(v))))
        return place_shape_try(&s->ws, v, id, 0, place_score_most_allocated, NULL,
                               PLACE_GPU_MOST_USED, p);
    bool single = !j->n_roles;
    const uint32_t *cands = single ? place_candidates(&s->ws, v, j->shape, &n_cands) : NULL;
    bool ok = !(cands && n_cands == 0) && place_interference(s, v, id, m, cands, n_cands, p);
    if (!ok && single)
        place_memo_fail(&s->ws, v, j->shape);
    return ok;
}

static int start_job(qstate *s, const sim_view *v, policy_decisions *out, sim_job_id id,
                     const sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    qjob *q = qj(v, id);
    q->borrower = !fits_quota(v, j);
    if (q->link.queued)
        hdem_count(s, j->spec.tenant, q->demand, false);
    tenantq_remove(&s->q, v, id);
    shapeq_remove(q->high ? &s->hover : &s->low, v, id);
    return sim_decide_start(out, id, p);
}

/* ---- Reclaim -------------------------------------------------------------------------- */

/* Whether running job vid may be preempted to give quota back to tenant a: a borrower
 * of another tenant. Its tenant must also still be over quota (see tenant_excess). */
static bool is_borrower_of_other(const sim_view *v, sim_job_id vid, uint32_t a)
{
    const sim_job *vj = sim_view_job(v, vid);
    return vj->state != SIM_JOB_PENDING && qj(v, vid)->borrower && vj->spec.tenant != a;
}

/* Share tenant t holds beyond its quota now (negative: within quota). */
static int64_t excess_now(const sim_view *v, uint32_t t)
{
    return (int64_t)used_milli(v, t) - (int64_t)quota_milli(v, t);
}

/* Share tenant t holds beyond its quota, as left by the preemptions of the current
 * dry run (negative: within quota). */
static int64_t *tenant_excess(qstate *s, const sim_view *v, uint32_t t)
{
    if (s->excess_mark[t] != s->dry_id) {
        s->excess_mark[t] = s->dry_id;
        s->excess[t] = excess_now(v, t);
    }
    return &s->excess[t];
}

/* Whether tenant t still holds share beyond its quota in the current dry run; records
 * what the answer rested on (dry_need, dry_mask, dry_short). */
static bool still_over(qstate *s, const sim_view *v, uint32_t t)
{
    int64_t e = *tenant_excess(s, v, t);
    s->dry_mask |= UINT64_C(1) << (t & 63);
    if (e <= 0) {
        s->dry_short = true;
        return false;
    }
    /* The share the dry run took from t so far: its excess before, less that left. */
    int64_t taken = excess_now(v, t) - e;
    if (taken > s->dry_need)
        s->dry_need = taken;
    return true;
}

/* The GPU share a job holds (what a victim's preemption costs). */
static double held_share(const sim_job *vj)
{
    return (double)vj->replicas * vj->gpus_per_replica * vj->share_milli;
}

/* Whether vid started after job b (ties: the later arrival): preempting it loses less. */
static bool started_later(const sim_view *v, sim_job_id vid, sim_job_id b)
{
    const sim_job *x = sim_view_job(v, vid), *y = sim_view_job(v, b);
    return x->last_start_us != y->last_start_us ? x->last_start_us > y->last_start_us
                                                : x->seq > y->seq;
}

/* The room on node n (room_milli/room_mem per GPU of the node, *cpu and *mem) once job
 * vid's allocations there, roles included, are gone (give) or back (!give). */
static void dry_room(qstate *s, const sim_view *v, sim_job_id vid, uint32_t n, bool give,
                     uint64_t *cpu, uint64_t *mem)
{
    const sim_job *vj = sim_view_job(v, vid);
    uint32_t first = v->node_gpu_first[n];
    for (int roles = 0; roles < 2; roles++)
        for (uint32_t ai = roles ? vj->role_head : vj->alloc_head; ai != UINT32_MAX;
             ai = v->allocs[ai].next_in_job) {
            const sim_alloc_rec *al = &v->allocs[ai];
            if (al->node != n)
                continue;
            if (al->gpu != SIM_GPU_NONE) {
                uint32_t k = al->gpu - first;
                s->room_milli[k] =
                    give ? s->room_milli[k] + al->milli : s->room_milli[k] - al->milli;
                s->room_mem[k] =
                    give ? s->room_mem[k] + al->gpu_mem_mib : s->room_mem[k] - al->gpu_mem_mib;
            }
            *cpu = give ? *cpu + al->cpu_milli : *cpu - al->cpu_milli;
            *mem = give ? *mem + al->mem_mib : *mem - al->mem_mib;
        }
}

/* Mark (or unmark) job vid as a victim of the current dry run: its tenant's excess and
 * the room on node n follow. */
static void dry_mark(qstate *s, const sim_view *v, sim_job_id vid, uint32_t n, bool mark,
                     uint64_t *cpu, uint64_t *mem)
{
    const sim_job *vj = sim_view_job(v, vid);
    int64_t share = (int64_t)vj->replicas * vj->gpus_per_replica * vj->share_milli;
    qj(v, vid)->dry = mark ? s->dry_id : 0;
    *tenant_excess(s, v, vj->spec.tenant) += mark ? -share : share;
    dry_room(s, v, vid, n, mark, cpu, mem);
}

/* Whether node n holds a replica of j with the room left by dry_mark. */
static bool dry_fits(const qstate *s, const sim_view *v, const sim_job *j, uint32_t n,
                     uint32_t milli, uint64_t gmem, uint64_t cpu, uint64_t mem)
{
    if (cpu < j->cpu_per_replica || mem < j->mem_per_replica)
        return false;
    uint32_t k = 0;
    for (uint32_t g = 0; g < v->node_gpu_count[n] && k < j->gpus_per_replica; g++)
        k += s->room_milli[g] >= milli && s->room_mem[g] >= gmem;
    return k >= j->gpus_per_replica;
}

/* Whether node n may hold a replica of gpr GPUs of a job accepting the GPU types of mask
 * (0: any): up, with at least gpr GPUs (and no more than the per-GPU arrays hold), of an
 * accepted type. */
static bool node_may_hold(const qstate *s, const sim_view *v, uint32_t n, uint32_t gpr,
                          uint64_t mask)
{
    uint32_t cnt = v->node_gpu_count[n];
    return v->node_up[n] && cnt >= gpr && cnt <= s->max_gpn &&
           (!mask || ((mask >> v->node_gpu_type[n]) & 1u));
}

/*
 * Dry run on node n for one replica of job j (tenant a): mark, in the current dry run,
 * the borrowers to preempt so that gpr of the node's GPUs have room for the replica's
 * share and GPU memory and the node for its CPU and memory. The node's borrowers go the
 * most recently started first whatever GPU they are on (they lose the least work), each
 * only while its tenant is still over quota; then those that the later victims made
 * unnecessary (a borrower on a GPU that still had too little room) are spared. Jobs
 * marked before (on other nodes, for other replicas) count as gone. Appends the victims
 * to s->victims and sets *cost to their GPU share (milli). False when the node cannot
 * be freed. O(victims x residents of the node).
 */
static bool dry_node(qstate *s, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                     uint64_t gmem, uint32_t a, double *cost)
{
    uint32_t cnt = v->node_gpu_count[n], first = v->node_gpu_first[n], from = s->n_victims;
    if (!node_may_hold(s, v, n, j->gpus_per_replica, j->spec.gpu_type_mask))
        return false;
    uint64_t cpu = v->node_cpu_total[n] - v->node_cpu_used[n];
    uint64_t mem = v->node_mem_total[n] - v->node_mem_used[n];
    for (uint32_t k = 0; k < cnt; k++) {
        s->room_milli[k] = SIM_MILLI_GPU - v->gpu_used_milli[first + k];
        s->room_mem[k] = v->gpu_mem_total[first + k] - v->gpu_used_mem[first + k];
    }
    for (uint32_t i = 0; i < from; i++)
        dry_room(s, v, s->victims[i], n, true, &cpu, &mem);
    while (!dry_fits(s, v, j, n, milli, gmem, cpu, mem)) {
        sim_job_id best = NOJOB;
        for (uint32_t g = first; g < first + cnt; g++)
            for (uint32_t ai = v->gpu_first_res[g]; ai != UINT32_MAX;
                 ai = v->allocs[ai].next_on_gpu) {
                sim_job_id vid = v->allocs[ai].job;
                if (qj(v, vid)->dry == s->dry_id || !is_borrower_of_other(v, vid, a) ||
                    !still_over(s, v, sim_view_job(v, vid)->spec.tenant))
                    continue;
                if (best == NOJOB || started_later(v, vid, best))
                    best = vid;
            }
        if (s->n_victims >= s->victims_cap) {
            s->dry_short = true;
            return false;
        }
        if (best == NOJOB)
            return false;
        dry_mark(s, v, best, n, true, &cpu, &mem);
        s->victims[s->n_victims++] = best;
    }
    /* The last victim was needed (the room did not suffice without it); the earlier ones
     * are tried without, the least recently started first. */
    for (uint32_t i = s->n_victims > from + 1 ? s->n_victims - 1 : from; i-- > from;) {
        sim_job_id vid = s->victims[i];
        dry_mark(s, v, vid, n, false, &cpu, &mem);
        if (!dry_fits(s, v, j, n, milli, gmem, cpu, mem)) {
            dry_mark(s, v, vid, n, true, &cpu, &mem);
            continue;
        }
        memmove(s->victims + i, s->victims + i + 1,
                (size_t)(s->n_victims - i - 1) * sizeof *s->victims);
        s->n_victims--;
    }
    *cost = 0;
    for (uint32_t i = from; i < s->n_victims; i++) {
        const sim_job *vj = sim_view_job(v, s->victims[i]);
        *cost += held_share(vj);
    }
    return true;
}

static int preempt_victim(qstate *s, const sim_view *v, policy_decisions *out, sim_job_id vid)
{
    qjob *q = qj(v, vid);
    q->reclaims++;
    q->borrower = 0;
    int rc = sim_decide_preempt(out, vid, false);
    if (rc == SIM_OK && !queued(q))
        enqueue(s, v, vid);
    return rc;
}

#define RECLAIM_TRIES 8 /* node sets dry-run per reclaim before giving up */

static bool reclaim_bound = true;

void quota_reclaim_bound_enable(bool on)
{
    reclaim_bound = on;
}

void quota_dry_serial_first(uint32_t last)
{
    dry_serial_first = last;
}

/* The borrowers with a GPU on node n: the smallest share one holds (INFINITY: none), and
 * per GPU the share they hold there (gpu_borrowed). Kept until the node changes (a
 * borrower's start, preemption or end each change it). */
static double node_borrowers(qstate *s, const sim_view *v, uint32_t n)
{
    if (s->min_share_at[n] == v->node_change_epoch[n] + 1)
        return s->min_share[n];
    double m = INFINITY;
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n];
    for (uint32_t g = first; g < first + cnt; g++) {
        uint32_t held = 0;
        for (uint32_t ai = v->gpu_first_res[g]; ai != UINT32_MAX; ai = v->allocs[ai].next_on_gpu) {
            sim_job_id vid = v->allocs[ai].job;
            const sim_job *vj = sim_view_job(v, vid);
            if (vj->state == SIM_JOB_PENDING || !qj(v, vid)->borrower)
                continue;
            held += v->allocs[ai].milli;
            if (held_share(vj) < m)
                m = held_share(vj);
        }
        s->gpu_borrowed[g] = held;
    }
    s->min_share[n] = m;
    s->min_share_at[n] = v->node_change_epoch[n] + 1;
    return m;
}

/*
 * A lower bound on the cost of a dry run on node n for a replica of j that does not fit
 * there as it is (INFINITY: none can free it). A victim costs at least its smallest
 * borrower share there; and each victim costs at least the share it frees on the node
 * (its whole share counts), so the victims cost at least what the replica's GPUs lack:
 * the sum of the gpr smallest shortfalls of share over the GPUs, each GPU short of GPU
 * memory lacking at least 1, a GPU lacking more than its borrowers hold out of reach.
 */
static double node_bound(qstate *s, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                         uint64_t gmem)
{
    double m = node_borrowers(s, v, n);
    if (!isfinite(m))
        return INFINITY;
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n], k = 0;
    for (uint32_t g = first; g < first + cnt; g++) {
        uint32_t room = SIM_MILLI_GPU - v->gpu_used_milli[g];
        uint32_t d = room >= milli ? 0 : milli - room;
        if (v->gpu_mem_total[g] - v->gpu_used_mem[g] < gmem && d == 0)
            d = 1;
        if (d > s->gpu_borrowed[g])
            continue;
        /* Kept sorted: the gpr smallest lead. */
        uint32_t i = k++;
        for (; i > 0 && s->deficit[i - 1] > d; i--)
            s->deficit[i] = s->deficit[i - 1];
        s->deficit[i] = d;
    }
    if (k < j->gpus_per_replica)
        return INFINITY;
    double need = 0;
    for (uint32_t i = 0; i < j->gpus_per_replica; i++)
        need += s->deficit[i];
    return need > m ? need : m;
}

/* The bounds kept for a replica of gpr GPUs of milli and gmem of a job accepting the GPU
 * types of mask: the memo of that request, or the one least recently used, to be built
 * afresh. O(LB_MEMOS). */
static struct lb_memo *lb_memo_of(qstate *s, uint32_t gpr, uint32_t milli, uint64_t gmem,
                                  uint64_t mask)
{
    for (uint32_t i = 0; i < s->n_lb_memo; i++) {
        struct lb_memo *m = &s->lb_memo[i];
        if (m->gpr == gpr && m->milli == milli && m->gmem_mib == gmem && m->mask == mask) {
            m->used = s->reclaim_id;
            return m;
        }
    }
    size_t nn = s->n_nodes;
    struct lb_memo *m = &s->lb_memo[0];
    if (s->n_lb_memo < LB_MEMOS) {
        m = &s->lb_memo[s->n_lb_memo];
        m->lb = s->lb_all + s->n_lb_memo * nn;
        m->at = s->lb_at_all + s->n_lb_memo * nn;
        m->win = s->win_all + s->n_lb_memo++ * 2 * (size_t)s->lb_leaves;
    } else {
        for (uint32_t i = 1; i < LB_MEMOS; i++)
            if (s->lb_memo[i].used < m->used)
                m = &s->lb_memo[i];
        memset(m->at, 0, nn * sizeof *m->at);
    }
    *m = (struct lb_memo){.gpr = gpr,
                          .milli = milli,
                          .gmem_mib = gmem,
                          .mask = mask,
                          .used = s->reclaim_id,
                          .synced = 0,
                          .lb = m->lb,
                          .at = m->at,
                          .win = m->win};
    return m;
}

/* The first of nodes a and b (UINT32_MAX: none) by m's bound, then id. */
static uint32_t lb_first(const struct lb_memo *m, uint32_t a, uint32_t b)
{
    if (a == UINT32_MAX || b == UINT32_MAX)
        return a == UINT32_MAX ? b : a;
    return m->lb[a] < m->lb[b] || (m->lb[a] == m->lb[b] && a < b) ? a : b;
}

/* Node n's leaf of m's tree set to `node` (n, or UINT32_MAX to leave it out), and the
 * matches above it played again, up to the first whose winner stays and is not n (the
 * matches above that one see the same players). O(log nodes). */
static void lb_set(const qstate *s, struct lb_memo *m, uint32_t n, uint32_t node)
{
    uint32_t i = s->lb_leaves + n;
    m->win[i] = node;
    for (i /= 2; i >= 1; i /= 2) {
        uint32_t was = m->win[i];
        m->win[i] = lb_first(m, m->win[2 * i], m->win[2 * i + 1]);
        if (m->win[i] == was && was != n)
            break;
    }
}

/* Node n's bound in m afresh (INFINITY where it cannot hold a replica of the request). */
static double lb_read(qstate *s, const sim_view *v, const struct lb_memo *m, const sim_job *j,
                      uint32_t n)
{
    if (!node_may_hold(s, v, n, m->gpr, m->mask))
        return INFINITY;
    return node_bound(s, v, j, n, m->milli, m->gmem_mib);
}

/* Node n's bound in m, read afresh if the node changed since it was. */
static double lb_of(qstate *s, const sim_view *v, struct lb_memo *m, const sim_job *j, uint32_t n)
{
    if (m->at[n] != v->node_change_epoch[n] + 1) {
        m->lb[n] = lb_read(s, v, m, j, n);
        m->at[n] = v->node_change_epoch[n] + 1;
    }
    return m->lb[n];
}

/* Bring m's bounds and tree up to date for job j (of m's request): the nodes logged as
 * changed since it was last, each once. The tree is built again, each node's bound read
 * afresh only if the node changed, when it was never built, when the log has wrapped
 * since, or when the changes logged since pass a quarter of the tree's leaves (each
 * would cost a walk up the tree). */
static void lb_sync(qstate *s, const sim_view *v, struct lb_memo *m, const sim_job *j)
{
    uint64_t now = v->change_epoch;
    uint32_t L = s->lb_leaves, most = L / 4 < SIM_CHANGE_RING ? L / 4 : SIM_CHANGE_RING;
    if (m->synced && now + 1 == m->synced && v->change_ring)
        return;
    if (!m->synced || !v->change_ring || now + 1 - m->synced > most) {
        for (uint32_t n = 0; n < L; n++) {
            bool live = n < s->n_nodes && isfinite(lb_of(s, v, m, j, n));
            m->win[L + n] = live ? n : UINT32_MAX;
        }
        for (uint32_t i = L; i-- > 1;)
            m->win[i] = lb_first(m, m->win[2 * i], m->win[2 * i + 1]);
    } else {
        for (uint64_t ep = m->synced; ep <= now; ep++) {
            uint32_t n = v->change_ring[ep % SIM_CHANGE_RING];
            if (n >= s->n_nodes || v->node_change_epoch[n] != ep)
                continue; /* each node once: at its latest change */
            double was = m->lb[n];
            double lb = lb_of(s, v, m, j, n);
            /* A bound that came back the same leaves the tree as it is. */
            if (lb != was || isfinite(lb) != (m->win[L + n] != UINT32_MAX))
                lb_set(s, m, n, isfinite(lb) ? n : UINT32_MAX);
        }
    }
    m->synced = now + 1;
}

/* Node n out of the tree of the reclaim's memo until the next reclaim puts it back. */
static void lb_take(qstate *s, uint32_t n)
{
    lb_set(s, s->cur, n, UINT32_MAX);
    s->taken[s->n_taken++] = n;
}

/* Whether node n holds a replica of j as it is: dry_fits before any victim. */
static bool node_fits_now(const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                          uint64_t gmem)
{
    if (v->node_max_free_milli[n] < milli ||
        v->node_cpu_total[n] - v->node_cpu_used[n] < j->cpu_per_replica ||
        v->node_mem_total[n] - v->node_mem_used[n] < j->mem_per_replica)
        return false;
    uint32_t k = 0, first = v->node_gpu_first[n];
    for (uint32_t g = first; g < first + v->node_gpu_count[n] && k < j->gpus_per_replica; g++)
        k += SIM_MILLI_GPU - v->gpu_used_milli[g] >= milli &&
             v->gpu_mem_total[g] - v->gpu_used_mem[g] >= gmem;
    return k >= j->gpus_per_replica;
}

/* Whether node a comes before node b by key (cost or bound), then id. */
static bool key_less(const double *key, uint32_t a, uint32_t b)
{
    return key[a] < key[b] || (key[a] == key[b] && a < b);
}

static void node_heap_down(uint32_t *h, uint32_t n, uint32_t i, const double *key)
{
    uint32_t x = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && key_less(key, h[c + 1], h[c]))
            c++;
        if (!key_less(key, h[c], x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void node_heap_push(uint32_t *h, uint32_t *n, uint32_t x, const double *key)
{
    uint32_t i = (*n)++;
    while (i > 0 && key_less(key, x, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static uint32_t node_heap_pop(uint32_t *h, uint32_t *n, const double *key)
{
    uint32_t top = h[0];
    h[0] = h[--*n];
    if (*n)
        node_heap_down(h, *n, 0, key);
    return top;
}

/* The serial of job j's request in the dry-run memo (see qstate.dry_keys): found, or the
 * least recently used replaced. 0 (no memo) while the bounds are off, or with more
 * tenants than the memo's mask has bits. O(DRY_KEYS). */
static uint32_t dry_key_of(qstate *s, const sim_view *v, const sim_job *j, uint32_t milli,
                           uint64_t gmem)
{
    if (!reclaim_bound || v->n_tenants > 64)
        return 0;
    struct dry_key k = {.gpr = j->gpus_per_replica,
                        .milli = milli,
                        .gmem_mib = gmem,
                        .cpu_milli = j->cpu_per_replica,
                        .mem_mib = j->mem_per_replica,
                        .types = j->spec.gpu_type_mask,
                        .tenant = j->spec.tenant,
                        .used = s->reclaim_id};
    struct dry_key *x = &s->dry_keys[0];
    for (uint32_t i = 0; i < s->n_dry_keys; i++) {
        struct dry_key *y = &s->dry_keys[i];
        if (y->gpr == k.gpr && y->milli == k.milli && y->gmem_mib == k.gmem_mib &&
            y->cpu_milli == k.cpu_milli && y->mem_mib == k.mem_mib && y->types == k.types &&
            y->tenant == k.tenant) {
            y->used = s->reclaim_id;
            return y->serial;
        }
        if (y->used < x->used)
            x = y;
    }
    if (s->n_dry_keys < DRY_KEYS)
        x = &s->dry_keys[s->n_dry_keys++];
    *x = k;
    if (++s->dry_serial_next == 0) { /* the serials wrapped: no old entry may match */
        memset(s->dry_memo, 0, ((size_t)1 << DRY_MEMO_BITS) * sizeof *s->dry_memo);
        for (uint32_t i = 0; i < s->n_dry_keys; i++)
            s->dry_keys[i].serial = ++s->dry_serial_next;
    } else {
        x->serial = s->dry_serial_next;
    }
    return x->serial;
}

/* The memo's entry for node n under the current request. */
static struct dry_memo *dry_memo_at(qstate *s, uint32_t n)
{
    uint64_t h = ((uint64_t)s->dry_serial << 32 | n) * UINT64_C(0x9E3779B97F4A7C15);
    return &s->dry_memo[h >> (64 - DRY_MEMO_BITS)];
}

/* Whether entry m holds node n's cost now: the same request and node state, and every
 * tenant whose excess the dry run read still beyond quota by more than the dry run took
 * from it, so that each of its checks passes again (and with them each of its choices). */
static bool dry_memo_hit(const qstate *s, const sim_view *v, const struct dry_memo *m, uint32_t n)
{
    if (m->serial != s->dry_serial || m->node != n || m->at != v->node_change_epoch[n] + 1)
        return false;
    for (uint64_t b = m->mask; b; b &= b - 1) {
        uint32_t t = (uint32_t)__builtin_ctzll(b);
        if (excess_now(v, t) <= m->need)
            return false;
    }
    return true;
}

/* The cost of node n: the GPU share of the victims its own dry run picks (INFINITY when
 * it cannot be freed), from the memo when it holds it. */
static double node_dry_cost(qstate *s, const sim_view *v, const sim_job *j, uint32_t n,
                            uint32_t milli, uint64_t gmem)
{
    struct dry_memo *m = s->dry_serial ? dry_memo_at(s, n) : NULL;
    if (m && dry_memo_hit(s, v, m, n))
        return m->cost;
    double c;
    s->dry_id++;
    s->n_victims = 0;
    s->dry_need = 0;
    s->dry_mask = 0;
    s->dry_short = false;
    if (!dry_node(s, v, j, n, milli, gmem, j->spec.tenant, &c))
        c = INFINITY;
    if (m && !s->dry_short)
        *m = (struct dry_memo){.serial = s->dry_serial,
                               .node = n,
                               .at = v->node_change_epoch[n] + 1,
                               .cost = c,
                               .need = s->dry_need,
                               .mask = s->dry_mask};
    return c;
}

/* Set up reclaim_next for job j: the nodes that may host a replica, each under a lower
 * bound of its cost. A node that holds the replica as it is costs 0 (its dry run picks
 * no victim), and one without a borrower that does not cannot be freed; the others need
 * a victim (node_bound), and wait in the tree of the request's memo. */
static void reclaim_stream(qstate *s, const sim_view *v, const sim_job *j, uint32_t milli,
                           uint64_t gmem)
{
    s->n_cost = s->n_order = 0;
    /* The last reclaim's nodes back into its memo's tree, their bounds unchanged (a
     * node that changed since is logged, and read again by lb_sync). */
    for (uint32_t i = 0; i < s->n_taken; i++)
        lb_set(s, s->cur, s->taken[i], s->taken[i]);
    s->n_taken = 0;
    s->cur = NULL;
    if (!reclaim_bound) { /* every node's dry run, now */
        for (uint32_t n = 0; n < v->n_nodes; n++) {
            s->node_cost[n] = node_dry_cost(s, v, j, n, milli, gmem);
            if (isfinite(s->node_cost[n]))
                s->cost_heap[s->n_cost++] = n;
        }
        for (uint32_t i = s->n_cost / 2; i-- > 0;)
            node_heap_down(s->cost_heap, s->n_cost, i, s->node_cost);
        return;
    }
    s->cur = lb_memo_of(s, j->gpus_per_replica, milli, gmem, j->spec.gpu_type_mask);
    lb_sync(s, v, s->cur, j);
    /* The nodes that hold it as they are, in id order (a heap of equal costs). */
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        if (v->node_max_free_milli[n] < milli)
            continue; /* node_fits_now's first test, alone: one array turns most away */
        if (!node_may_hold(s, v, n, j->gpus_per_replica, j->spec.gpu_type_mask) ||
            !node_fits_now(v, j, n, milli, gmem))
            continue;
        s->node_cost[n] = 0;
        s->fit_at[n] = s->reclaim_id;
        s->cost_heap[s->n_cost++] = n;
    }
}

/* Whether node u's bound lb, then id, comes before node e's cost, then id. */
static bool bound_before(const qstate *s, uint32_t u, double lb, uint32_t e)
{
    return lb < s->node_cost[e] || (lb == s->node_cost[e] && u < e);
}

/* Dry-run node n: its cost, and its place in the heap by cost when it can be freed. */
static void cost_node(qstate *s, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                      uint64_t gmem)
{
    s->node_cost[n] = node_dry_cost(s, v, j, n, milli, gmem);
    if (isfinite(s->node_cost[n]))
        node_heap_push(s->cost_heap, &s->n_cost, n, s->node_cost);
}

/*
 * The next node in order of cost, then id, among those that can be freed; UINT32_MAX when
 * none is left. A node waits under its bound until every node of smaller cost is known:
 * nodes are dry-run in order of bound while the smallest bound comes before the smallest
 * cost found (a node's cost is at least its bound), so only the first few are, each
 * taken from the top of the memo's tree (a node that holds the replica as it is, already
 * costed, is taken out unread).
 */
static uint32_t reclaim_next(qstate *s, const sim_view *v, const sim_job *j, uint32_t milli,
                             uint64_t gmem)
{
    while (s->cur) {
        uint32_t u = s->cur->win[1];
        if (u == UINT32_MAX)
            break;
        if (s->fit_at[u] == s->reclaim_id) {
            lb_take(s, u);
            continue;
        }
        if (s->n_cost && !bound_before(s, u, s->cur->lb[u], s->cost_heap[0]))
            break;
        lb_take(s, u);
        cost_node(s, v, j, u, milli, gmem);
    }
    return s->n_cost ? node_heap_pop(s->cost_heap, &s->n_cost, s->node_cost) : UINT32_MAX;
}

/*
 * Free room for high-priority job id by preempting borrowers, then start it. The
 * replicas go to the nodes where the borrowed share to preempt (a dry run of each node
 * alone) is smallest (ties: lowest id); a dry run of the chosen nodes together checks
 * that the preemptions free enough, so nothing is preempted for a job that would still
 * not fit (a node that fails it, its tenants' excess taken by another replica's
 * victims, is set aside and the next set tried). The nodes come from reclaim_next, which
 * dry-runs only those whose bound does not rule them out (quota_reclaim_bound_enable:
 * every node). Returns 1 when the job started, 0 when nothing was preempted, or a
 * negative error.
 */
static int reclaim(qstate *s, const sim_view *v, policy_decisions *out, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t gpr = j->gpus_per_replica, R = j->nominal_replicas, a = j->spec.tenant;
    if (!gpr || R > v->n_nodes || R > s->max_gpn)
        return 0;
    uint32_t milli = place_milli(j, 0);
    uint64_t gmem = j->spec.gpu_mem_mib;
    s->reclaim_id++;
    s->dry_serial = dry_key_of(s, v, j, milli, gmem);
    reclaim_stream(s, v, j, milli, gmem);
    for (int attempt = 0; attempt < RECLAIM_TRIES; attempt++) {
        /* The R cheapest nodes not set aside, one replica each; one of them must need a
         * preemption. */
        double total = 0;
        uint32_t r = 0;
        for (uint32_t i = 0; r < R; i++) {
            if (i == s->n_order) {
                uint32_t b = reclaim_next(s, v, j, milli, gmem);
                if (b == UINT32_MAX)
                    return 0;
                s->order[s->n_order++] = b;
            }
            uint32_t b = s->order[i];
            if (s->bad[b] == s->reclaim_id)
                continue;
            s->chosen[r++] = b;
            total += s->node_cost[b];
        }
        if (!(total > 0))
            return 0;
        s->dry_id++;
        s->n_victims = 0;
        uint32_t bad = UINT32_MAX;
        double c;
        for (r = 0; r < R && bad == UINT32_MAX; r++)
            if (!dry_node(s, v, j, s->chosen[r], milli, gmem, a, &c))
                bad = s->chosen[r];
        if (bad != UINT32_MAX) {
            s->bad[bad] = s->reclaim_id;
            continue;
        }
        for (uint32_t i = 0; i < s->n_victims; i++) {
            int rc = preempt_victim(s, v, out, s->victims[i]);
            if (rc != SIM_OK)
                return rc;
        }
        /* The preemptions released room: the pass's record of failed shapes is stale. */
        s->pass_id++;
        sim_placement p;
        if (!place_job(s, v, id, &p))
            return 0;
        int rc = start_job(s, v, out, id, &p);
        return rc == SIM_OK ? 1 : rc;
    }
    return 0;
}

/* ---- Passes ------------------------------------------------------------------------- */

/* The high pass; the low pass's walk of the high queue, which only the tests use
 * (quota_low_heap_enable(false): the low pass otherwise takes those jobs from their
 * shape sublists, low_candidate). */
enum { Q_HIGH, Q_OVER };

/* Move tenant t's high-queue cursor to the next job the pass may start: in the high
 * pass, jobs that fit the quota left; in the low pass's walk, when borrowing, jobs that
 * do not fit their quota (they borrow like low-priority ones). Jobs that failed at this epoch
 * are passed over; in the high pass they count as waiting. In the low pass a job whose
 * shape found no room in the pass is passed over too: it would fail at once (there is
 * no reclaim in the low pass), and the mark of that failure would never be read (the
 * job does not fit its quota, and will not until the next release, so no high pass nor
 * still_waiting looks at it; a full low pass runs once a release epoch, and a fresh
 * pass reads only jobs queued since the last pass). */
static uint32_t advance(qstate *s, const sim_view *v, uint32_t t, int mode, bool *waiting)
{
    uint32_t *c = &s->cursor[t];
    if (mode == Q_OVER && !s->borrow)
        return NOJOB;
    /* fits_quota of each job of the queue (tenant t's), from the policy's records only. */
    uint64_t used = used_milli(v, t), quota = quota_milli(v, t);
    /* In the high pass, when no job of the queue fits the quota left, the walk would pass
     * over every one, none of them counting as waiting. */
    if (mode == Q_HIGH && (used > quota || hdem_min(s, t) > quota - used)) {
        *c = NOJOB;
        return NOJOB;
    }
    while (*c != NOJOB) {
        const qjob *q = qj(v, *c);
        bool in_quota = used + q->demand <= quota;
        bool skip = mode == Q_HIGH ? !in_quota : in_quota;
        if (!skip && q->tried == v->release_epoch + 1) {
            if (mode == Q_HIGH)
                *waiting = true;
            skip = true;
        } else if (!skip && mode == Q_OVER) {
            skip = shape_no_room(s, v, q->shape);
        }
        if (!skip)
            break;
        *c = tenantq_next(&s->q, v, *c);
    }
    return *c;
}

/* The first tenant from t on with a queued job, or UINT32_MAX: a tenant without one has
 * no candidate, so a pass walks busy_from(s, 0), busy_from(s, t + 1), ... */
static uint32_t busy_from(const qstate *s, uint32_t t)
{
    uint32_t h = tenantq_busy_from(&s->q, t), l = shapeq_busy_from(&s->low, t);
    return h < l ? h : l;
}

static void reset_cursors(qstate *s)
{
    for (uint32_t t = busy_from(s, 0); t != UINT32_MAX; t = busy_from(s, t + 1))
        s->cursor[t] = tenantq_head(&s->q, t);
}

/* Whether job a goes before job b in a queue. */
static bool key_before(const sim_view *v, sim_job_id a, sim_job_id b)
{
    double ka = qkey(qj(v, a)), kb = qkey(qj(v, b));
    return ka != kb ? ka < kb : sim_view_job(v, a)->seq < sim_view_job(v, b)->seq;
}

/* Whether a goes before b in the low queues' order: key, then arrival. */
static bool lc_before(const lc_entry *a, const lc_entry *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void lc_down(lc_entry *h, uint32_t n, uint32_t i)
{
    lc_entry x = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && lc_before(&h[c + 1], &h[c]))
            c++;
        if (!lc_before(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* The shape queue of the low pass's high-priority jobs, or of its low-priority ones. */
static const shapeq *sq_of(const qstate *s, bool high)
{
    return high ? &s->hover : &s->low;
}

/* The first job from id on in its sublist that did not fail at this epoch, or NOJOB. */
static sim_job_id first_untried(const shapeq *sq, const sim_view *v, sim_job_id id)
{
    while (id != NOJOB && qj(v, id)->tried == v->release_epoch + 1)
        id = tenantq_next(&sq->q, v, id);
    return id;
}

/*
 * Whether sublist b's jobs (whose first that may start is id) are out of this pass: its
 * shape found no room; or, for low-priority jobs without borrowing, they are beyond
 * quota; or, for high-priority ones, they are within it (the high pass takes those).
 * These hold to the end of the pass: the failed record only fills, usage only grows,
 * and the low pass runs only when the high pass left no job within quota untried (one
 * tried at this epoch that fits its quota again leaves the low pass out: still_waiting).
 */
static bool sub_out(const qstate *s, const sim_view *v, bool high, uint32_t b, sim_job_id id)
{
    const shapeq *sq = sq_of(s, high);
    if (shape_no_room(s, v, sq->shape[b]))
        return true;
    if (high)
        return fits_quota(v, sim_view_job(v, id));
    return !s->borrow && !fits_quota(v, sim_view_job(v, id));
}

/* Tenant t's heap of sublists, built afresh: each sublist still in the pass, under its
 * first job that may start. */
static void lc_build(qstate *s, const sim_view *v, uint32_t t)
{
    if (s->pool_pass != s->pass_id || s->pool_gen != s->low_gen) {
        s->pool_used = 0;
        s->pool_pass = s->pass_id;
        s->pool_gen = s->low_gen;
    }
    uint32_t n = 0;
    for (int high = 0; high < 2; high++) {
        const shapeq *sq = sq_of(s, high);
        for (uint32_t b = shapeq_first(sq, t); b != SHAPEQ_NONE; b = shapeq_next(sq, b)) {
            sim_job_id id = shapeq_head(sq, b);
            if (sub_out(s, v, high, b, id) || (id = first_untried(sq, v, id)) == NOJOB)
                continue;
            if (s->pool_used + n >= s->pool_cap) { /* not reached: the pool holds every sublist */
                s->oom = true;
                break;
            }
            s->pool[s->pool_used + n++] =
                (lc_entry){qkey(qj(v, id)), sim_view_job(v, id)->seq, b, id, high};
        }
    }
    for (uint32_t i = n / 2; i-- > 0;)
        lc_down(s->pool + s->pool_used, n, i);
    s->lc_off[t] = s->pool_used;
    s->lc_n[t] = n;
    s->lc_pass[t] = s->pass_id;
    s->lc_gen[t] = s->low_gen;
    s->pool_used += n;
}

/*
 * Tenant t's first job the low pass may start: the first, in queue order, of the first
 * jobs of its shape sublists still in the pass (sub_out) that did not fail at this epoch;
 * the sublists of its low-priority jobs, and with borrowing those of its high-priority
 * jobs beyond quota (one order: key, then arrival). The jobs of a sublist before that
 * point have started, so this is the job a walk of the whole queues would reach. The
 * sublists wait in a heap by the job each had first when last looked at, built once a
 * pass (and again after an insertion into a shape queue, which only a reclaim's victims
 * make during a pass). During a pass a sublist only loses jobs from its front (they
 * start, or fail at this epoch), so that key is a lower bound: the top is looked at
 * again and, when its first job moved, sifted down under the new one; a sublist out of
 * the pass, or emptied, leaves the heap. O(log sublists) for a start or a failure, where
 * a walk of every sublist made a pass over a backlog of many shapes quadratic in them.
 */
static bool low_heap = true;

void quota_low_heap_enable(bool on)
{
    low_heap = on;
}

/* low_candidate's low-priority job by a walk of every sublist. */
static sim_job_id low_candidate_walk(const qstate *s, const sim_view *v, uint32_t t)
{
    sim_job_id c = NOJOB;
    for (uint32_t b = shapeq_first(&s->low, t); b != SHAPEQ_NONE; b = shapeq_next(&s->low, b)) {
        sim_job_id id = shapeq_head(&s->low, b);
        if (sub_out(s, v, false, b, id) || (id = first_untried(&s->low, v, id)) == NOJOB)
            continue;
        if (c == NOJOB || key_before(v, id, c))
            c = id;
    }
    return c;
}

static sim_job_id low_candidate(qstate *s, const sim_view *v, uint32_t t)
{
    if (s->lc_pass[t] != s->pass_id || s->lc_gen[t] != s->low_gen)
        lc_build(s, v, t);
    uint32_t *n = &s->lc_n[t];
    while (*n) {
        lc_entry *h = s->pool + s->lc_off[t];
        const shapeq *sq = sq_of(s, h[0].high);
        sim_job_id id = shapeq_head(sq, h[0].sub);
        if (id == NOJOB || sub_out(s, v, h[0].high, h[0].sub, id) ||
            (id = first_untried(sq, v, id)) == NOJOB) {
            h[0] = h[--*n];
            lc_down(h, *n, 0);
            continue;
        }
        if (id == h[0].head)
            return id;
        h[0].head = id;
        h[0].key = qkey(qj(v, id));
        h[0].seq = sim_view_job(v, id)->seq;
        lc_down(h, *n, 0);
    }
    return NOJOB;
}

/* Tenant t's candidate in this pass (NOJOB when none); *cur: the high-queue cursor it
 * came from, NULL for a job of the low pass's heap. */
static sim_job_id candidate(qstate *s, const sim_view *v, uint32_t t, bool high, bool *waiting,
                            uint32_t **cur)
{
    *cur = &s->cursor[t];
    if (high)
        return advance(s, v, t, Q_HIGH, waiting);
    if (low_heap) {
        *cur = NULL;
        return low_candidate(s, v, t);
    }
    sim_job_id over = advance(s, v, t, Q_OVER, waiting), low = low_candidate_walk(s, v, t);
    if (over != NOJOB && (low == NOJOB || key_before(v, over, low)))
        return over;
    *cur = NULL;
    return low;
}

/* One pass over the high (or low) priority queues. *waiting: a high-priority job that
 * fits its quota could not start. */
static int pass(qstate *s, const sim_view *v, policy_decisions *out, bool high, bool *waiting)
{
    s->pass_id++;
    reset_cursors(s);
    /* The tenant whose job just failed with nothing started or released: every other
     * tenant's candidate and every usage are as they were, so it is chosen again while
     * it has a candidate (this keeps a pass over a long high queue at O(queue), not
     * O(queue x tenants); the low queues are passed over a shape at a time). */
    uint32_t again = UINT32_MAX;
    for (;;) {
        uint32_t best = UINT32_MAX;
        double best_r = 0;
        uint32_t *cur = NULL;
        sim_job_id id = NOJOB;
        bool scan = true;
        if (again != UINT32_MAX && (id = candidate(s, v, again, high, waiting, &cur)) != NOJOB) {
            best = again;
            scan = false;
        }
        for (uint32_t t = scan ? busy_from(s, 0) : UINT32_MAX; t != UINT32_MAX;
             t = busy_from(s, t + 1)) {
            uint32_t *ct;
            sim_job_id ci = candidate(s, v, t, high, waiting, &ct);
            if (ci == NOJOB)
                continue;
            double r = usage_ratio(v, t);
            if (best == UINT32_MAX || r < best_r) {
                best = t;
                best_r = r;
                cur = ct;
                id = ci;
            }
        }
        again = UINT32_MAX;
        if (best == UINT32_MAX)
            return SIM_OK;
        uint32_t *c = cur;
        uint32_t next = c ? tenantq_next(&s->q, v, id) : NOJOB;
        sim_placement p;
        if (place_job(s, v, id, &p)) {
            int rc = start_job(s, v, out, id, &p);
            if (rc != SIM_OK)
                return rc;
            if (c)
                *c = next;
            continue;
        }
        if (high && s->borrow) {
            uint64_t before = v->release_epoch;
            int rc = reclaim(s, v, out, id);
            if (rc < 0)
                return rc;
            if (v->release_epoch != before) {
                /* Tenants that lost borrowers may fit their quota again, and the room
                 * freed may fit shapes that failed before. */
                s->pass_id++;
                reset_cursors(s);
                if (rc == 1)
                    continue;
            } else if (rc == 1) {
                *c = next;
                continue;
            }
        }
        qj(v, id)->tried = v->release_epoch + 1;
        if (high)
            *waiting = true;
        if (c && *c == id)
            *c = next;
        again = best;
    }
}

/*
 * The pass restricted to the jobs queued since the last one, when nothing was released
 * since: every other job was tried then and still cannot start (usage only grew), so
 * only the fresh ones may, taken in the pass's order. Returns SIM_OK, or 1 when a
 * reclaim released resources and a full pass is needed.
 */
static int fresh_pass(qstate *s, const sim_view *v, policy_decisions *out, bool high)
{
    s->pass_id++;
    for (;;) {
        sim_job_id best = NOJOB;
        double best_r = 0, best_k = 0;
        for (sim_job_id id = s->fresh_head; id != NOJOB; id = qj(v, id)->fresh_next) {
            const qjob *q = qj(v, id);
            const sim_job *j = sim_view_job(v, id);
            if (!q->fresh || !queued(q) || q->tried == v->release_epoch + 1)
                continue;
            bool in_quota = fits_quota(v, j);
            bool ok =
                high ? q->high && in_quota
                     : (!q->high && (s->borrow || in_quota)) || (q->high && s->borrow && !in_quota);
            if (!ok)
                continue;
            double r = usage_ratio(v, j->spec.tenant);
            uint32_t t = j->spec.tenant,
                     bt = best == NOJOB ? 0 : sim_view_job(v, best)->spec.tenant;
            double k = qkey(q);
            if (best == NOJOB || r < best_r || (r == best_r && t < bt) ||
                (r == best_r && t == bt &&
                 (k < best_k || (k == best_k && j->seq < sim_view_job(v, best)->seq)))) {
                best = id;
                best_r = r;
                best_k = k;
            }
        }
        if (best == NOJOB)
            return SIM_OK;
        sim_placement p;
        if (place_job(s, v, best, &p)) {
            int rc = start_job(s, v, out, best, &p);
            if (rc != SIM_OK)
                return rc;
            continue;
        }
        if (high && s->borrow) {
            uint64_t before = v->release_epoch;
            int rc = reclaim(s, v, out, best);
            if (rc < 0)
                return rc;
            if (v->release_epoch != before)
                return 1;
            if (rc == 1)
                continue;
        }
        qj(v, best)->tried = v->release_epoch + 1;
        if (high)
            s->waiting = true;
    }
}

/* Whether a high-priority job that failed at this epoch still fits its quota (it then
 * still waits: jobs of its tenant that started since may have used the quota up). */
static bool still_waiting(const qstate *s, const sim_view *v)
{
    for (uint32_t t = tenantq_busy_from(&s->q, 0); t != UINT32_MAX;
         t = tenantq_busy_from(&s->q, t + 1))
        for (sim_job_id id = tenantq_head(&s->q, t); id != NOJOB;
             id = tenantq_next(&s->q, v, id))
            if (qj(v, id)->tried == v->release_epoch + 1 && fits_quota(v, sim_view_job(v, id)))
                return true;
    return false;
}

static void clear_fresh(qstate *s, const sim_view *v)
{
    for (sim_job_id id = s->fresh_head; id != NOJOB;) {
        qjob *q = qj(v, id);
        sim_job_id next = q->fresh_next;
        q->fresh = 0;
        id = next;
    }
    s->fresh_head = NOJOB;
}

/* Room in the failed-shape record for every shape id in use (new ids start clear). */
static bool reserve_shapes(qstate *s, uint32_t n)
{
    uint32_t had = s->fail_cap;
    if (!sim_reserve((void **)&s->fail, &s->fail_cap, n, sizeof *s->fail))
        return false;
    memset(s->fail + had, 0, (size_t)(s->fail_cap - had) * sizeof *s->fail);
    return true;
}

static int quota_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    qstate *s = st;
    int rc;
    /* A reclaim's victims are distinct running jobs: with shared GPUs a GPU holds many,
     * so the list is sized by the jobs, not the GPUs (grown by doubling). */
    if (s->oom || !reserve_shapes(s, v->n_shapes) || place_memo_reserve(&s->ws, v) != SIM_OK ||
        !sim_reserve((void **)&s->victims, &s->victims_cap, v->n_running, sizeof *s->victims))
        return SIM_ENOMEM;
    if (now >= s->next_train_us) {
        if (model_duration_pending_rows(s->pred) >= s->min_new &&
            (rc = model_duration_train(s->pred)) != SIM_OK)
            return rc;
        sim_time iv = (sim_time)llround(s->retrain_s * 1e6);
        s->next_train_us += ((now - s->next_train_us) / iv + 1) * iv;
    }
    while (s->prof_head != NOJOB && qj(v, s->prof_head)->eligible_us <= now) {
        sim_job_id id = s->prof_head;
        s->prof_head = qj(v, id)->prof_next;
        if (s->prof_head == NOJOB)
            s->prof_tail = NOJOB;
        make_schedulable(s, v, id);
    }
    for (sim_job_id id = s->rep_head; id != NOJOB;) {
        qjob *q = qj(v, id);
        sim_job_id next = q->rep_next;
        if (q->reject) {
            char why[160];
            snprintf(why, sizeof why,
                     "needs %.3f GPUs, more than its tenant's quota of %.3f "
                     "(borrowing is off)",
                     (double)demand_milli(sim_view_job(v, id)) / 1000.0,
                     (double)quota_milli(v, sim_view_job(v, id)->spec.tenant) / 1000.0);
            rc = sim_decide_reject(out, id, why);
        } else {
            rc = sim_decide_predict(out, id, q->pred_s, NAN);
        }
        if (rc != SIM_OK)
            return rc;
        id = next;
    }
    s->rep_head = NOJOB;
    /* Usage falls only when resources are released (the epoch moves): with no release
     * only the jobs queued since the last pass may start. */
    if (s->primed && v->release_epoch == s->epoch) {
        rc = s->fresh_head == NOJOB ? SIM_OK : fresh_pass(s, v, out, true);
        if (rc == SIM_OK && s->fresh_head != NOJOB && s->waiting)
            s->waiting = still_waiting(s, v);
        if (rc == SIM_OK && !s->waiting) {
            /* Low-priority jobs never tried at this epoch need the whole pass. */
            bool ignored = false;
            rc = s->low_ran ? fresh_pass(s, v, out, false) : pass(s, v, out, false, &ignored);
            s->low_ran = true;
        }
        if (rc < 0)
            return rc;
        if (rc == SIM_OK) {
            clear_fresh(s, v);
            s->epoch = v->release_epoch;
            return SIM_OK;
        }
    }
    clear_fresh(s, v);
    bool waiting = false;
    if ((rc = pass(s, v, out, true, &waiting)) != SIM_OK)
        return rc;
    bool lend = !waiting;
    if (lend && (rc = pass(s, v, out, false, &waiting)) != SIM_OK)
        return rc;
    /* Victims requeued by this pass were tried in it; the list must not outlive the
     * call, or a job of the list could end and its slot be reused before the next. */
    clear_fresh(s, v);
    s->low_ran = lend;
    s->primed = true;
    s->waiting = waiting;
    s->epoch = v->release_epoch;
    return SIM_OK;
}

static sim_time quota_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)now;
    const qstate *s = st;
    sim_time w = SIM_TIME_NEVER;
    if (s->prof_head != NOJOB)
        w = qj(v, s->prof_head)->eligible_us;
    if (model_duration_pending_rows(s->pred) >= s->min_new && s->next_train_us < w)
        w = s->next_train_us;
    return w;
}

const policy_ops policy_quota = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "quota",
    .summary = "tenant quotas, high priority within quota, low priority borrows idle GPUs and "
               "is reclaimed; shortest predicted duration first",
    .state_size = sizeof(qstate),
    .job_state_size = sizeof(qjob),
    .options = quota_options,
    .init = quota_init,
    .fini = quota_fini,
    .on_arrival = quota_arrival,
    .on_finish = quota_finish,
    .on_requeue = quota_requeue,
    .schedule = quota_schedule,
    .next_wakeup = quota_wakeup,
};
