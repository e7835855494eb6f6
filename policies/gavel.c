/*
 * gavel.c: Gavel's heterogeneity-aware max-min fairness with its round-based mechanism
 * (Narayanan et al., OSDI'20; stanford-futuredata/gavel: policies/max_min_fairness.py
 * for the allocation, scheduler.py _update_priorities, _reset_time_run_so_far and
 * _schedule_jobs_on_workers_helper for the rounds).
 *   - Allocation X (jobs x GPU types, the fraction of time each job should spend on each
 *     type) from the LP of gavel_lp.h over the throughput matrix, the job's speed on each
 *     type under the run's rate model. As in Gavel's simulator, X is recomputed only
 *     when jobs arrived or finished and at least `reset` seconds passed since the last
 *     recomputation; then the time each job received per type is reset to half a round
 *     and the shortfall against X is added to the job's deficit.
 *   - Every `round` seconds (Gavel's default 360): priority of job i on type j =
 *     X_ij / (time i received on j / time all jobs received on j), X_ij x 1e9 while that
 *     fraction is 0, 0 when X_ij is 0 or the job has no allocation yet. Per type in
 *     type-id order, jobs sorted by (priority, deficit, X) descending, ties in arrival
 *     order; a job is chosen once, on the first type it may use with enough GPUs left for
 *     its scale factor (priority 0 included: it takes what the others leave).
 *   - A chosen job already on that type keeps its GPUs; the others are preempted (with a
 *     checkpoint) and the chosen ones started on free GPUs of their type. Jobs arriving
 *     or finishing inside a round wait for its end (no mid-round redispatch), but a round
 *     ends early once none of its jobs is running, as Gavel's simulator ends a round with
 *     its last micro-task.
 */
#include "policies/gavel_lp.h"
#include "policies/gavel_round.h"
#include "sim/policy.h"

#include "base/alloc.h"
#include "base/maxtree.h"

#include <math.h>
#include <string.h>

#define GV_MAXT 8 /* GPU types of one cluster */
#define GV_HINTS 33 /* GPUs per replica up to which a search keeps where it may start */
#define AHEAD 2   /* jobs ahead whose records the preemptions and starts ask for */

/* A job's figures on one type slot, side by side (a round reads the first three together). */
typedef struct gtype {
    double x;           /* allocation */
    double time_so_far; /* seconds received since the last reset */
    double deficit;     /* seconds owed */
    double tput;        /* throughput (0 where the job may not run; fixed at arrival) */
} gtype;

/* A job in flight, at its place in the state's job list: what a round reads of it, kept
 * in the list's order so that a round's passes read memory in order. */
typedef struct grec {
    uint64_t seq;     /* arrival order (the job's seq) */
    sim_time acct_us; /* running time accounted up to here */
    sim_job_id id;
    uint32_t sf;    /* scale factor: GPUs per replica x replicas (fixed at arrival) */
    uint8_t fits;   /* type slots whose nodes, all free, could hold the job */
    bool has_alloc; /* the job was in the last LP */
    int8_t on;      /* the type slot it runs on, -1 while it waits */
} grec;

/* The job's state in the engine: where its record is. */
typedef struct gjob {
    uint32_t pos; /* index in the state's job list */
} gjob;

typedef struct gavel_state {
    double round_s, reset_s;
    bool types_ready;
    uint32_t n_types;                  /* type slots */
    uint16_t type_of[GV_MAXT];         /* view type id per slot */
    int8_t slot_of[SIM_MAX_GPU_TYPES]; /* slot per view type, -1 = absent */
    double workers[GV_MAXT];           /* GPUs per slot */
    double worker_time[GV_MAXT];       /* seconds all jobs received per slot */
    sim_time next_round_us, last_reset_us;
    bool need_update;
    /* Jobs in flight (rec[i], and ty[k][i] per type slot k < n_types), and scratch grown
     * at new peaks. */
    grec *rec;
    gtype *ty[GV_MAXT];
    uint32_t n_jobs, cap;
    sim_job_id *unfit; /* jobs that arrived fitting no type, not yet rejected */
    uint32_t n_unfit;
    uint32_t *run_pos; /* scratch of a round: positions of the running jobs, in order */
    uint8_t *pick;     /* scratch of a round: per position, type slot + 1 chosen, 0 none */
    uint64_t rng;      /* the selection's pivots (the order chosen does not depend on it) */
    double *tput, *scale, *prio, *work, *x;
    gavel_entry *ent;
    /* Free GPUs of the up nodes of each type slot k during a round's starts: a max tree
     * over node ids at free[k * 2 * leaves ..] (base/maxtree.h), node n's leaf at
     * leaves + n. */
    uint32_t *free;
    uint32_t leaves;
    /* hint[k][g]: every node before it has a leaf below g in slot k's tree, which only
     * falls during a round's starts: a search for g free GPUs starts there. */
    uint32_t hint[GV_MAXT][GV_HINTS];
    uint32_t *place_nodes, *place_gpus;
    uint32_t place_cap;
    uint32_t left[GV_MAXT];
    uint32_t first[GV_MAXT]; /* each type's first entry in ent */
    /* fitting_types by what it reads of a job, for the whole run: an open-addressed
     * table of fit_mask + 1 slots (a power of two, at most half full), n_fit used. */
    struct gfit {
        uint64_t gmem, cpu, mem, types; /* the job's GPU memory, CPU and memory per
                                         * replica, accepted types */
        uint32_t gpr, reps;             /* GPUs per replica, replicas */
        uint8_t mask;                   /* fitting_types */
        bool used;
    } * fit;
    uint32_t fit_mask, n_fit;
} gavel_state;

static const policy_option gavel_options[] = {
    {"round", "360", "round length, seconds (Gavel's time_per_iteration)"},
    {"reset", "1920", "least time between allocation recomputations, seconds"},
    {NULL, NULL, NULL},
};

static void gavel_fini(void *st)
{
    gavel_state *s = st;
    sim_free(s->rec);
    for (uint32_t k = 0; k < GV_MAXT; k++)
        sim_free(s->ty[k]);
    sim_free(s->run_pos);
    sim_free(s->pick);
    sim_free(s->unfit);
    sim_free(s->tput);
    sim_free(s->scale);
    sim_free(s->prio);
    sim_free(s->work);
    sim_free(s->x);
    sim_free(s->ent);
    sim_free(s->free);
    sim_free(s->place_nodes);
    sim_free(s->place_gpus);
    sim_free(s->fit);
}

static int grow(gavel_state *s, uint32_t need)
{
    if (need <= s->cap)
        return SIM_OK;
    uint32_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    size_t nm = (size_t)cap * GV_MAXT;
    grec *r = sim_reallocarray(s->rec, cap, sizeof *r);
    if (!r)
        return SIM_ENOMEM;
    s->rec = r;
    for (uint32_t k = 0; k < s->n_types; k++) {
        gtype *t = sim_reallocarray(s->ty[k], cap, sizeof *t);
        if (!t)
            return SIM_ENOMEM;
        s->ty[k] = t;
    }
    uint32_t **u32[] = {&s->run_pos, &s->unfit};
    for (size_t k = 0; k < sizeof u32 / sizeof *u32; k++) {
        uint32_t *q = sim_reallocarray(*u32[k], cap, sizeof *q);
        if (!q)
            return SIM_ENOMEM;
        *u32[k] = q;
    }
    uint8_t *pk = sim_reallocarray(s->pick, cap, sizeof *pk);
    if (!pk)
        return SIM_ENOMEM;
    s->pick = pk;
    double *a = sim_reallocarray(s->tput, nm, sizeof *a), *b, *c, *d, *e;
    if (a)
        s->tput = a;
    b = sim_reallocarray(s->scale, cap, sizeof *b);
    if (b)
        s->scale = b;
    c = sim_reallocarray(s->prio, cap, sizeof *c);
    if (c)
        s->prio = c;
    d = sim_reallocarray(s->work, nm, sizeof *d);
    if (d)
        s->work = d;
    e = sim_reallocarray(s->x, nm, sizeof *e);
    if (e)
        s->x = e;
    gavel_entry *g = sim_reallocarray(s->ent, nm, sizeof *g);
    if (g)
        s->ent = g;
    if (!a || !b || !c || !d || !e || !g)
        return SIM_ENOMEM;
    s->cap = cap;
    return SIM_OK;
}

static int gavel_init(void *st, const policy_config *cfg, sim_diag *d)
{
    gavel_state *s = st;
    int rc;
    if ((rc = policy_config_double(cfg, gavel_options, "round", 1, 1e7, &s->round_s, d)) ||
        (rc = policy_config_double(cfg, gavel_options, "reset", 0, 1e9, &s->reset_s, d)))
        return rc;
    /* The per-job allocation rows hold GV_MAXT types; say so before the run starts (and
     * under --check), not when the first round finds a ninth type. */
    if (cfg->n_node_gpu_types > GV_MAXT)
        return sim_diag_set(d, SIM_ELIMIT, NULL, 0, 0,
                            "policy 'gavel' supports at most %u GPU types; the cluster has %u",
                            GV_MAXT, cfg->n_node_gpu_types);
    s->place_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->place_nodes = sim_calloc(s->place_cap, sizeof *s->place_nodes);
    s->place_gpus = sim_calloc(s->place_cap, sizeof *s->place_gpus);
    if (!s->place_nodes || !s->place_gpus || grow(s, 64)) {
        gavel_fini(s);
        memset(s, 0, sizeof *s);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'gavel': out of memory");
    }
    s->next_round_us = SIM_TIME_NEVER;
    s->rng = 0x9e3779b97f4a7c15u;
    return SIM_OK;
}

static int resolve_types(gavel_state *s, const sim_view *v)
{
    s->n_types = 0;
    memset(s->workers, 0, sizeof s->workers);
    memset(s->slot_of, -1, sizeof s->slot_of);
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        uint16_t t = v->node_gpu_type[n];
        if (!v->node_gpu_count[n] || t >= SIM_MAX_GPU_TYPES)
            continue;
        if (s->slot_of[t] < 0) {
            if (s->n_types == GV_MAXT)
                return SIM_ELIMIT;
            s->slot_of[t] = (int8_t)s->n_types;
            s->type_of[s->n_types++] = t;
        }
        s->workers[s->slot_of[t]] += v->node_gpu_count[n];
    }
    for (uint32_t k = 0; k < s->n_types; k++)
        if (!s->ty[k] && !(s->ty[k] = sim_calloc(s->cap, sizeof *s->ty[k])))
            return SIM_ENOMEM;
    s->leaves = maxtree_leaves(v->n_nodes);
    sim_free(s->free);
    if (!(s->free = sim_calloc((size_t)s->n_types * 2 * s->leaves, sizeof *s->free)))
        return SIM_ENOMEM;
    s->types_ready = true;
    return SIM_OK;
}

/*
 * The type slots whose nodes, all free, could hold job j: each replica's GPUs (with the
 * memory it asks) on one node, and as many replicas on a node as its GPUs, CPU and
 * memory allow (Gavel fills one server's workers before it takes the next). Gavel's own
 * test, the scale factor against the type's GPUs, is this test for jobs of one GPU per
 * replica on nodes without CPU or memory limits. O(nodes).
 */
static uint8_t fitting_types(const gavel_state *s, const sim_view *v, const sim_job *j)
{
    uint32_t gpr = j->gpus_per_replica;
    uint64_t room[GV_MAXT] = {0};
    if (gpr == 0)
        return 0;
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        uint16_t t = v->node_gpu_type[n];
        int k = t < SIM_MAX_GPU_TYPES ? s->slot_of[t] : -1;
        if (k < 0 || v->gpu_mem_total[v->node_gpu_first[n]] < j->spec.gpu_mem_mib)
            continue;
        uint64_t r = v->node_gpu_count[n] / gpr;
        if (j->cpu_per_replica && v->node_cpu_total[n] / j->cpu_per_replica < r)
            r = v->node_cpu_total[n] / j->cpu_per_replica;
        if (j->mem_per_replica && v->node_mem_total[n] / j->mem_per_replica < r)
            r = v->node_mem_total[n] / j->mem_per_replica;
        room[k] += r;
    }
    uint8_t mask = 0;
    for (uint32_t k = 0; k < s->n_types; k++)
        if (sim_job_type_ok(j, s->type_of[k]) && room[k] >= j->nominal_replicas)
            mask |= (uint8_t)(1u << k);
    return mask;
}

/* What fitting_types reads of job j. */
static struct gfit fit_key(const sim_job *j)
{
    return (struct gfit){.gmem = j->spec.gpu_mem_mib,
                         .cpu = j->cpu_per_replica,
                         .mem = j->mem_per_replica,
                         .types = j->spec.gpu_type_mask,
                         .gpr = j->gpus_per_replica,
                         .reps = j->nominal_replicas};
}

static bool fit_same(const struct gfit *a, const struct gfit *b)
{
    return a->gmem == b->gmem && a->cpu == b->cpu && a->mem == b->mem && a->types == b->types &&
           a->gpr == b->gpr && a->reps == b->reps;
}

/* The slot of key k in a table of mask + 1 slots: where it is, or the empty slot where
 * it would go. */
static uint32_t fit_slot(const struct gfit *t, uint32_t mask, const struct gfit *k)
{
    uint64_t h = k->gmem * UINT64_C(0x9e3779b97f4a7c15);
    const uint64_t more[] = {k->cpu, k->mem, k->types, (uint64_t)k->gpr << 32 | k->reps};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        h = (h ^ more[i]) * UINT64_C(0xbf58476d1ce4e5b9);
    uint32_t i = (uint32_t)(h >> 32) & mask;
    while (t[i].used && !fit_same(&t[i], k))
        i = (i + 1) & mask;
    return i;
}

/* fitting_types, remembered for the run by what it reads of the job (GPUs per replica,
 * replicas, GPU memory, CPU and memory per replica, accepted types): the nodes' totals
 * it reads never change. The engine's shape ids would not do: a shape's id is freed when
 * its last pending job leaves, which under a light load is at almost every start, and
 * each new id cost a scan of the nodes. Computed afresh when the table cannot grow. */
static uint8_t job_fits(gavel_state *s, const sim_view *v, const sim_job *j)
{
    struct gfit k = fit_key(j);
    if (s->fit) {
        uint32_t i = fit_slot(s->fit, s->fit_mask, &k);
        if (s->fit[i].used)
            return s->fit[i].mask;
    }
    k.mask = fitting_types(s, v, j);
    k.used = true;
    if (!s->fit || 2 * (s->n_fit + 1) > s->fit_mask + 1) {
        uint32_t cap = s->fit ? 2 * (s->fit_mask + 1) : 64;
        struct gfit *t = sim_calloc(cap, sizeof *t);
        if (!t)
            return k.mask;
        for (uint32_t i = 0; s->fit && i <= s->fit_mask; i++)
            if (s->fit[i].used)
                t[fit_slot(t, cap - 1, &s->fit[i])] = s->fit[i];
        sim_free(s->fit);
        s->fit = t;
        s->fit_mask = cap - 1;
    }
    s->fit[fit_slot(s->fit, s->fit_mask, &k)] = k;
    s->n_fit++;
    return k.mask;
}

static void gavel_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    gavel_state *s = st;
    gjob *g = sim_view_job_state(v, id);
    if (!s->types_ready && resolve_types(s, v) != SIM_OK)
        return; /* schedule() reports the cluster's types */
    if (grow(s, s->n_jobs + 1) != SIM_OK)
        return; /* schedule() reports the shortage */
    const sim_job *j = sim_view_job(v, id);
    uint32_t i = s->n_jobs++;
    grec *r = &s->rec[i];
    *r = (grec){.seq = j->seq,
                .id = id,
                .sf = j->gpus_per_replica * j->nominal_replicas,
                .fits = job_fits(s, v, j),
                .on = -1};
    if (!r->fits)
        s->unfit[s->n_unfit++] = id;
    g->pos = i;
    for (uint32_t k = 0; k < s->n_types; k++)
        s->ty[k][i] =
            (gtype){.time_so_far = s->round_s / 2.0,
                    .tput = (r->fits >> k) & 1 ? sim_view_type_speed(v, id, s->type_of[k]) : 0.0};
    s->need_update = true;
    if (s->next_round_us == SIM_TIME_NEVER)
        s->next_round_us = v->now;
}

/* Add the running time of the job at position i since it was last accounted; whether
 * it runs. */
static bool account(gavel_state *s, uint32_t i, sim_time now)
{
    grec *r = &s->rec[i];
    if (r->on < 0)
        return false;
    double dt = (double)(now - r->acct_us) / 1e6;
    if (dt > 0) {
        s->ty[r->on][i].time_so_far += dt;
        s->worker_time[r->on] += dt;
    }
    r->acct_us = now;
    return true;
}

/* The position of job id in the job list, or UINT32_MAX where it is not there. */
static uint32_t pos_of(const gavel_state *s, const sim_view *v, sim_job_id id)
{
    uint32_t i = ((const gjob *)sim_view_job_state(v, id))->pos;
    return i < s->n_jobs && s->rec[i].id == id ? i : UINT32_MAX;
}

static void forget(gavel_state *s, const sim_view *v, uint32_t i)
{
    uint32_t last = --s->n_jobs;
    s->rec[i] = s->rec[last];
    for (uint32_t k = 0; k < s->n_types; k++)
        s->ty[k][i] = s->ty[k][last];
    ((gjob *)sim_view_job_state(v, s->rec[i].id))->pos = i;
    s->need_update = true;
}

/* A finished job's last run counts in its type's time, as in Gavel (_done_callback adds
 * a micro-task's time to the worker type's before it removes a job that is done). */
static void gavel_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    gavel_state *s = st;
    uint32_t i = pos_of(s, v, id);
    if (i == UINT32_MAX)
        return;
    account(s, i, v->now);
    forget(s, v, i);
}

/* A node failure put the job back in the queue: its run since it was last accounted
 * is lost work, and counts for nothing (Gavel counts no time for a failed micro-task). */
static void gavel_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    gavel_state *s = st;
    uint32_t i = pos_of(s, v, id);
    if (i != UINT32_MAX)
        s->rec[i].on = -1;
}

static int recompute(gavel_state *s, sim_time now)
{
    /* Reset the time received (Gavel's _reset_time_run_so_far). */
    double since = (double)(now - s->last_reset_us) / 1e6;
    uint32_t n = s->n_jobs, m = s->n_types;
    for (uint32_t k = 0; k < m; k++) {
        s->worker_time[k] = 0.0;
        for (uint32_t i = 0; i < n; i++) {
            gtype *t = &s->ty[k][i];
            double received = t->time_so_far - s->round_s / 2.0;
            double owed = s->rec[i].has_alloc ? t->x * since : 0.0;
            t->deficit += owed - received;
            t->time_so_far = s->round_s / 2.0;
            s->worker_time[k] += t->time_so_far;
        }
    }
    s->last_reset_us = now;
    for (uint32_t i = 0; i < n; i++) {
        const grec *r = &s->rec[i];
        for (uint32_t k = 0; k < m; k++)
            s->tput[(size_t)i * m + k] = s->ty[k][i].tput;
        s->scale[i] = r->sf < 1 ? 1.0 : (double)r->sf;
        s->prio[i] = 1.0;
    }
    int st = gavel_allocation(n, m, s->tput, s->scale, s->prio, s->workers, s->work, s->x);
    if (st)
        return st;
    for (uint32_t i = 0; i < n; i++) {
        s->rec[i].has_alloc = true;
        for (uint32_t k = 0; k < m; k++)
            s->ty[k][i].x = s->x[(size_t)i * m + k];
    }
    return SIM_OK;
}

/* Fill the trees of free GPUs from the view: each up node with GPUs under its type's slot
 * (the others hold 0). O(types x nodes). */
static void fill_free(gavel_state *s, const sim_view *v)
{
    uint32_t L = s->leaves;
    memset(s->free, 0, (size_t)s->n_types * 2 * L * sizeof *s->free);
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        uint16_t t = v->node_gpu_type[n];
        int k = t < SIM_MAX_GPU_TYPES ? s->slot_of[t] : -1;
        if (k >= 0 && v->node_up[n] && v->node_gpu_count[n])
            s->free[(size_t)k * 2 * L + L + n] = v->node_free_gpus[n];
    }
    for (uint32_t k = 0; k < s->n_types; k++) {
        maxtree_build(s->free + (size_t)k * 2 * L, L);
        memset(s->hint[k], 0, sizeof s->hint[k]);
    }
}

/* Start job id on free GPUs of type slot k: node by node in id order, as many replicas on
 * each as its free GPUs, CPU and memory hold (Gavel assigns a server's free workers
 * before the next server's). The nodes with fewer free GPUs than a replica takes give
 * none: only the others are visited, as the tree of the slot finds them. The tree holds
 * at least each node's free GPUs (a round's starts only take GPUs, and each start sets
 * its nodes' leaves to the view's count), and the GPUs themselves are checked, so it
 * only spares visits. *started: whether it found the GPUs. */
static int start_on_type(gavel_state *s, const sim_view *v, sim_job_id id, uint32_t k,
                         policy_decisions *out, bool *started)
{
    *started = false;
    const sim_job *j = sim_view_job(v, id);
    uint32_t gpr = j->gpus_per_replica, reps = j->nominal_replicas, r = 0, L = s->leaves;
    if (gpr == 0 || (size_t)gpr * reps > s->place_cap)
        return SIM_OK;
    uint32_t *f = s->free + (size_t)k * 2 * L;
    uint32_t n = gpr < GV_HINTS ? maxtree_first_hinted(f, L, &s->hint[k][gpr], gpr)
                                : maxtree_first(f, L, 0, gpr);
    /* The next node is looked for only while replicas are left to place. */
    for (; n != UINT32_MAX; n = maxtree_first(f, L, n + 1, gpr)) {
        uint64_t cpu = v->node_cpu_total[n] - v->node_cpu_used[n];
        uint64_t mem = v->node_mem_total[n] - v->node_mem_used[n];
        uint32_t g = v->node_gpu_first[n], end = g + v->node_gpu_count[n];
        while (r < reps && cpu >= j->cpu_per_replica && mem >= j->mem_per_replica) {
            uint32_t got = 0;
            for (; g < end && got < gpr; g++)
                if (v->gpu_nres[g] == 0 && v->gpu_mem_total[g] >= j->spec.gpu_mem_mib)
                    s->place_gpus[r * gpr + got++] = g;
            if (got < gpr)
                break;
            s->place_nodes[r++] = n;
            cpu -= j->cpu_per_replica;
            mem -= j->mem_per_replica;
        }
        if (r == reps)
            break;
    }
    if (r < reps)
        return SIM_OK; /* fragmented: the job waits for the next round */
    sim_placement p = {.replicas = reps,
                       .nodes = s->place_nodes,
                       .gpus = s->place_gpus,
                       .milli = SIM_MILLI_GPU,
                       .gpu_mem_mib = UINT64_MAX};
    int rc = sim_decide_start(out, id, &p);
    if (rc != SIM_OK)
        return rc;
    *started = true;
    for (uint32_t q = 0; q < reps; q++) /* a node's replicas are consecutive */
        if (q == 0 || s->place_nodes[q] != s->place_nodes[q - 1])
            maxtree_set(f, L, s->place_nodes[q], v->node_free_gpus[s->place_nodes[q]]);
    return SIM_OK;
}

/* Why job j, which fits no type, can never run. */
static const char *reject_reason(const gavel_state *s, const sim_job *j)
{
    if (!j->gpus_per_replica)
        return "gavel schedules GPU jobs only; this one requests none";
    for (uint32_t k = 0; k < s->n_types; k++)
        if (sim_job_type_ok(j, s->type_of[k]) &&
            j->gpus_per_replica * j->nominal_replicas <= (uint32_t)s->workers[k])
            return "no GPU type it may use has nodes that could hold all its replicas";
    return "needs more GPUs than any allowed type has";
}

static int gavel_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    gavel_state *s = st;
    int rc;
    if (!s->types_ready && (rc = resolve_types(s, v)))
        return rc;
    if (s->n_jobs < v->n_pending + v->n_running)
        return SIM_ENOMEM; /* on_arrival could not grow the job list */
    if (s->n_jobs == 0) {
        s->next_round_us = SIM_TIME_NEVER;
        return SIM_OK;
    }
    /* A round ends when its time is up, or as soon as every job it runs has finished: in
     * Gavel's simulator a round ends with its last micro-task, and with nothing running
     * an arriving job is scheduled at once. */
    if (now < s->next_round_us && v->n_running > 0)
        return SIM_OK;
    /* A job no type it may use can hold can never run; nor can a job without GPUs,
     * which has no throughput on any type (Gavel schedules GPU time only). Such jobs
     * are known at arrival (s->unfit). They leave in the order of a scan of the job
     * list that rejects each one it meets (a rejected job's place takes the last job,
     * which is met next): the one at the lowest place goes first. */
    while (s->n_unfit) {
        uint32_t best = UINT32_MAX, at = 0;
        for (uint32_t u = 0; u < s->n_unfit;) {
            sim_job_id id = s->unfit[u];
            uint32_t i = pos_of(s, v, id);
            if (i == UINT32_MAX || s->rec[i].fits || s->rec[i].on >= 0) {
                s->unfit[u] = s->unfit[--s->n_unfit]; /* gone, or not one (not reached) */
                continue;
            }
            if (i < best) {
                best = i;
                at = u;
            }
            u++;
        }
        if (best == UINT32_MAX)
            break;
        sim_job_id id = s->unfit[at];
        s->unfit[at] = s->unfit[--s->n_unfit];
        forget(s, v, best);
        if ((rc = sim_decide_reject(out, id, reject_reason(s, sim_view_job(v, id)))))
            return rc;
    }
    if (s->n_jobs == 0)
        return SIM_OK;
    /* Gavel resets while its last reset time is 0 (none yet, or all at time 0) or once
     * `reset` seconds have passed; the running time is accounted first. */
    bool reset = s->need_update &&
                 (s->last_reset_us == 0 || (double)(now - s->last_reset_us) / 1e6 >= s->reset_s);
    uint32_t n_run = 0;
    for (uint32_t i = 0; i < s->n_jobs; i++) /* the running time first */
        if (account(s, i, now))
            s->run_pos[n_run++] = i;
    if (reset) {
        if ((rc = recompute(s, now)))
            return rc;
        s->need_update = false;
    }
    /* The entries, type by type. */
    uint32_t m = s->n_types, ne = 0;
    for (uint32_t k = 0; k < m; k++) {
        s->first[k] = ne;
        s->left[k] = (uint32_t)s->workers[k];
        const gtype *ty = s->ty[k];
        double wt = s->worker_time[k];
        for (uint32_t i = 0; i < s->n_jobs; i++) {
            const grec *r = &s->rec[i];
            uint32_t sf = (r->fits >> k) & 1 ? r->sf : GAVEL_NOT_OK;
            double p = 0.0, alloc = r->has_alloc ? ty[i].x : 0.0;
            if (alloc > 0 && sf != GAVEL_NOT_OK) {
                double frac = wt > 0 ? ty[i].time_so_far / wt : 0;
                p = frac > 0 ? alloc / frac : alloc * 1e9;
            }
            s->ent[ne++] = (gavel_entry){.key = {gavel_key_desc(p), gavel_key_desc(ty[i].deficit),
                                                 gavel_key_desc(alloc), r->seq},
                                         .pos = i,
                                         .sf = sf};
        }
    }
    /* Type by type, each job in the order of the round is chosen where its scale
     * factor fits (gavel_choose). */
    memset(s->pick, 0, s->n_jobs);
    for (uint32_t k = 0; k < m; k++) {
        uint32_t n = (k + 1 < m ? s->first[k + 1] : ne) - s->first[k];
        s->left[k] =
            gavel_choose(s->ent + s->first[k], n, s->left[k], s->pick, (uint8_t)(k + 1), &s->rng);
    }
    /* Preempt the running jobs not kept on their type, then start the chosen ones. */
    uint32_t n_go = 0;
    for (uint32_t q = 0; q < n_run; q++) {
        uint32_t i = s->run_pos[q];
        if (s->pick[i] != s->rec[i].on + 1)
            s->run_pos[n_go++] = i;
    }
    for (uint32_t q = 0; q < n_go; q++) {
        if (q + AHEAD < n_go)
            sim_view_prefetch_job_hot(v, s->rec[s->run_pos[q + AHEAD]].id);
        grec *r = &s->rec[s->run_pos[q]];
        if ((rc = sim_decide_preempt(out, r->id, true)))
            return rc;
        r->on = -1;
    }
    n_go = 0;
    for (uint32_t i = 0; i < s->n_jobs; i++) { /* without a branch: half go, half stay */
        s->run_pos[n_go] = i;
        n_go += (s->pick[i] != 0) & (s->rec[i].on < 0);
    }
    if (n_go)
        fill_free(s, v);
    for (uint32_t q = 0; q < n_go; q++) {
        if (q + AHEAD < n_go)
            sim_view_prefetch_job_hot(v, s->rec[s->run_pos[q + AHEAD]].id);
        uint32_t i = s->run_pos[q];
        grec *r = &s->rec[i];
        r->acct_us = now;
        bool started;
        if ((rc = start_on_type(s, v, r->id, s->pick[i] - 1u, out, &started)))
            return rc;
        if (started)
            r->on = (int8_t)(s->pick[i] - 1);
    }
    s->next_round_us = now + (sim_time)llround(s->round_s * 1e6);
    return SIM_OK;
}

static sim_time gavel_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)v;
    (void)now;
    const gavel_state *s = st;
    return s->n_jobs ? s->next_round_us : SIM_TIME_NEVER;
}

const policy_ops policy_gavel = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "gavel",
    .summary = "Gavel: heterogeneity-aware max-min fairness LP (GLPK), rounds of 360 s",
    .state_size = sizeof(gavel_state),
    .job_state_size = sizeof(gjob),
    .options = gavel_options,
    .init = gavel_init,
    .fini = gavel_fini,
    .on_arrival = gavel_on_arrival,
    .on_finish = gavel_on_finish,
    .on_requeue = gavel_on_requeue,
    .schedule = gavel_schedule,
    .next_wakeup = gavel_next_wakeup,
    .no_roles = true,
};
