/*
 * hetero.c: heterogeneous GPU assignment for groups of co-trained jobs (DESIGN.md
 * policy 3) and its two baselines, as three policies over one implementation:
 *   hetero         cold start (jobs by model depth then batch size, GPUs by compute
 *                  capability then memory, all descending; one to one where memory
 *                  fits), swap rounds during the first epoch (hetero_assign.h), then
 *                  the best mapping frozen;
 *   static-order   the user's order: the group's first job on the first free GPU;
 *   data-parallel  each job's batch split evenly over all of the group's GPUs, so every
 *                  job runs at its speed on the group's weakest GPU.
 * A group is the jobs of one `group` id (an ungrouped job is a group of one); groups
 * are served in arrival order on whole, free GPUs, with backfilling; a job that fits no
 * free GPU waits and later joins its group's GPUs as they free up. A job's time on a GPU
 * comes from the run's rate model (sim_view_type_speed), the same one the engine uses,
 * so the policy's picture and the simulated outcome agree; `noise` perturbs the times
 * the swap rounds measure. A swap preempts both jobs with a checkpoint and restarts
 * them on each other's GPU. Options `trail` and `groups` name CSV files for the
 * decision trail and one row per finished group (with the exact bottleneck optimum of
 * the group's GPUs as the bound, and the preemptive bound that swaps cannot beat).
 */
#include "policies/hetero_assign.h"
#include "sim/policy.h"

#include "models/catalog.h"
#include "base/alloc.h"
#include "base/nametab.h"
#include "base/outfile.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define HG_MAX 64u /* jobs per group */

typedef enum hmode { HM_HETERO, HM_STATIC, HM_DP } hmode;

typedef struct hgroup {
    bool used;
    bool swapping; /* in the swap rounds of the first epoch */
    bool complete; /* every job started at the group's cold start */
    bool revert_due; /* a job finished during a trial round: back to the best mapping */
    bool untracked;  /* more jobs or GPUs than a record holds: no rounds, no row */
    char name[SIM_ID_MAX];
    uint32_t gen;   /* generation: tells this group from others the record held before */
    uint32_t total; /* jobs of the group the policy runs (each one whole GPU) */
    uint32_t n;     /* jobs started so far (indices 0..n-1) */
    uint32_t done;
    uint32_t m; /* GPUs of the cold start (slots 0..m-1) */
    uint32_t round;
    sim_job_id job[HG_MAX];
    bool gone[HG_MAX]; /* job i has finished */
    char job_id[HG_MAX][SIM_ID_MAX];
    uint32_t gset[HG_MAX]; /* global GPU per slot */
    uint32_t slot[HG_MAX]; /* slot each job holds now */
    uint32_t cur[HG_MAX], best[HG_MAX];
    double full_s[HG_MAX][HG_MAX]; /* job x slot: solo time of the whole job there */
    double epochs[HG_MAX];
    double busy_s[HG_MAX];     /* per slot: time a job of the group computed there */
    sim_time since_us[HG_MAX]; /* per job: when it last started on its slot */
    hetero_swap sw;
    sim_time submit_us, start_us, end_us, next_round_us;
    double opt_s; /* bottleneck optimum over the cold-start GPUs */
    double pmtn_s; /* the preemptive bound over the same GPUs */
} hgroup;

typedef struct hjob {
    uint32_t group; /* group slot + 1; 0 = not in a group record */
    uint32_t gen;   /* the record's generation when the job joined it */
    uint32_t idx;
} hjob;

typedef struct hetero_state {
    hmode mode;
    model_catalog *cat;
    bool types_ready;
    double cc[SIM_MAX_GPU_TYPES]; /* compute capability per view type */
    double noise;
    uint64_t rounds;
    FILE *trail, *groups_out; /* streams of trail_file, groups_file (or NULL) */
    sim_outfile trail_file, groups_file;
    const char *policy_name;
    hgroup *g;
    uint32_t n_groups;
    uint32_t hi_used; /* the groups in use have indices below this */
    nametab by_name;  /* the open groups, twice as many slots as group records */
    /* Per group record, a bit: in use and swapping or with a revert due (the groups a
     * scheduling point has to look at), n_groups bits; and one for in use. */
    uint64_t *active, *in_use;
    uint32_t gen;     /* generations given to group records so far */
    /* Scratch sized in init. */
    /* A pass's free GPUs in the order they are offered, gathered as far as a job asked:
     * free_gpu[0..n_free), from the nodes before position `scan` of node_order. */
    uint32_t *free_gpu;
    uint32_t n_free;
    uint32_t scan;
    uint8_t *taken;
    uint32_t *node_order; /* the nodes with GPUs, in the order their free GPUs are taken */
    uint32_t *order_pos;  /* per node: its position in node_order, or UINT32_MAX */
    uint32_t n_order;
    uint64_t *has_free; /* per node_order position: the node is up with a free GPU */
    uint64_t synced;    /* the view's change_epoch has_free reflects */
    bool free_built;
    uint32_t n_taken;   /* of free_gpu[0..n_free), those a pass gave a job */
    /* What a pass's jobs that found no free GPU asked for (the first of a batch, so its
     * batch took nothing before it): a later job asking the same finds none either, as
     * the pass only takes GPUs, CPU and memory. */
    struct hmiss {
        uint64_t mask, gmem, cpu, mem;
    } miss[8];
    uint32_t n_miss;
    uint64_t n_bad;     /* pending jobs the next pass rejects (not one whole GPU) */
    sim_job_id batch[HG_MAX];
    uint32_t batch_gpu[HG_MAX];
    double cost[HG_MAX * HG_MAX];
    uint32_t assign[HG_MAX];
    double measured[HG_MAX];
    uint32_t old[HG_MAX];
    hetero_ws ws;
    const sim_view *v; /* for comparators during one schedule() */
} hetero_state;

static const policy_option hetero_options[] = {
    {"rounds", "10", "swap rounds per epoch (a round: 1/rounds of the slowest job's epoch)"},
    {"noise", "0", "relative std. deviation of the measured mini-batch times (seeded)"},
    {"trail", "", "CSV file for the decision trail (mapping per round, T_cur, T_best)"},
    {"groups", "", "CSV file with one row per finished group (makespan, bound, idle)"},
    {"catalog", "", "GPU catalog giving compute capability (default: the shipped one)"},
    {NULL, NULL, NULL},
};

/* The options naming files the policy writes (policy_ops.output_options). */
static const char *const hetero_outputs[] = {"trail", "groups", NULL};

static void hetero_fini(void *st)
{
    hetero_state *s = st;
    /* Written through sim_outfile: complete files replace what was at the paths. */
    if (s->trail)
        sim_outfile_close(&s->trail_file, true, 0, NULL);
    if (s->groups_out)
        sim_outfile_close(&s->groups_file, true, 0, NULL);
    model_catalog_destroy(s->cat);
    sim_free(s->g);
    sim_free(s->by_name.slot);
    sim_free(s->active);
    sim_free(s->in_use);
    sim_free(s->free_gpu);
    sim_free(s->taken);
    sim_free(s->node_order);
    sim_free(s->order_pos);
    sim_free(s->has_free);
    hetero_ws_fini(&s->ws);
}

static int open_out(FILE **f, sim_outfile *o, const policy_config *cfg, const char *key,
                    const char *header, sim_diag *d)
{
    const char *path = policy_config_get(cfg, hetero_options, key);
    if (!path || !*path)
        return SIM_OK;
    int st = sim_outfile_open(o, path, d);
    if (st != SIM_OK)
        return st;
    if (!(*f = sim_outfile_stream(o, d))) {
        sim_outfile_close(o, false, 0, NULL);
        return SIM_ENOMEM;
    }
    fputs(header, *f);
    return SIM_OK;
}

static bool name_index(hetero_state *s);

static int init_mode(void *st, const policy_config *cfg, sim_diag *d, hmode mode)
{
    hetero_state *s = st;
    s->mode = mode;
    s->policy_name = cfg->policy;
    int rc;
    if ((rc = policy_config_double(cfg, hetero_options, "noise", 0, 10, &s->noise, d)) ||
        (rc = policy_config_u64(cfg, hetero_options, "rounds", 1, 1000000, &s->rounds, d)))
        return rc;
    const char *cat = policy_config_get(cfg, hetero_options, "catalog");
    if ((rc = model_catalog_load(&s->cat, cat && *cat ? cat : model_catalog_default_path(), d)))
        return rc;
    /* Room for a group in flight per GPU to start with (group_new grows it). */
    s->n_groups = cfg->n_gpus < 4096 ? cfg->n_gpus + 64 : 4160;
    uint32_t ng = cfg->n_gpus ? cfg->n_gpus : 1;
    s->g = sim_calloc(s->n_groups, sizeof *s->g);
    s->active = sim_calloc((s->n_groups + 63) / 64, sizeof *s->active);
    s->in_use = sim_calloc((s->n_groups + 63) / 64, sizeof *s->in_use);
    s->free_gpu = sim_calloc(ng, sizeof *s->free_gpu);
    s->taken = sim_calloc(ng, 1);
    uint32_t nn = cfg->n_nodes ? cfg->n_nodes : 1;
    s->node_order = sim_calloc(nn, sizeof *s->node_order);
    s->order_pos = sim_calloc(nn, sizeof *s->order_pos);
    s->has_free = sim_calloc((nn + 63) / 64, sizeof *s->has_free);
    if (!s->g || !s->active || !s->in_use || !name_index(s) || !s->free_gpu || !s->taken ||
        !s->node_order || !s->order_pos || !s->has_free || hetero_ws_init(&s->ws, HG_MAX, HG_MAX)) {
        hetero_fini(s);
        memset(s, 0, sizeof *s);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy '%s': out of memory", cfg->policy);
    }
    if ((rc = open_out(&s->trail, &s->trail_file, cfg, "trail",
                       "time_s,group,round,action,t_cur_s,t_best_s,mapping\n", d)) ||
        (rc = open_out(&s->groups_out, &s->groups_file, cfg, "groups",
                       "group,policy,jobs,gpus,submit_s,start_s,end_s,span_s,makespan_s,"
                       "opt_s,gap,mapping_s,strong_type,strong_gpus,strong_idle_gpu_s,pmtn_s\n",
                       d))) {
        hetero_fini(s);
        memset(s, 0, sizeof *s);
        return rc;
    }
    return SIM_OK;
}

static int hetero_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return init_mode(st, cfg, d, HM_HETERO);
}
static int static_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return init_mode(st, cfg, d, HM_STATIC);
}
static int dp_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return init_mode(st, cfg, d, HM_DP);
}

static void resolve_types(hetero_state *s, const sim_view *v)
{
    const sim_intern *names = model_catalog_names(s->cat);
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES; t++) {
        const char *name = v->gpu_type_name(v, t);
        uint32_t id = sim_intern_find(names, name, strlen(name));
        const model_gpu_type *g =
            id == SIM_INTERN_NONE ? NULL : model_catalog_type(s->cat, (uint16_t)id);
        s->cc[t] = g ? g->compute_capability : 0.0;
    }
    s->types_ready = true;
}

static uint16_t gpu_type(const sim_view *v, uint32_t g)
{
    return v->node_gpu_type[v->gpu_node[g]];
}

/* GPU memory the job needs: its request, else its measured use. */
static uint64_t mem_need(const sim_job *j)
{
    if (j->spec.gpu_mem_mib)
        return j->spec.gpu_mem_mib;
    if (job_spec_has(&j->spec, SIM_ATTR_GPU_MEM_USED_MIB))
        return (uint64_t)j->spec.attr[SIM_ATTR_GPU_MEM_USED_MIB];
    return 0;
}

/* Whether job id could run on GPU g (type, memory, the node's CPU and memory) beside
 * `cpu` milli-cores and `mem` MiB more taken on that node. */
static bool job_fits_gpu(const sim_view *v, sim_job_id id, uint32_t g, uint64_t cpu, uint64_t mem)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t n = v->gpu_node[g];
    return v->node_up[n] && sim_job_type_ok(j, gpu_type(v, g)) &&
           mem_need(j) <= v->gpu_mem_total[g] &&
           v->node_cpu_total[n] - v->node_cpu_used[n] >= cpu + j->cpu_per_replica &&
           v->node_mem_total[n] - v->node_mem_used[n] >= mem + j->mem_per_replica;
}

/* The CPU and memory that the batch's jobs before b were given on node n (they start
 * together after the batch is mapped). */
static void batch_taken(const hetero_state *s, const sim_view *v, uint32_t b, uint32_t n,
                        uint64_t *cpu, uint64_t *mem)
{
    *cpu = *mem = 0;
    for (uint32_t k = 0; k < b; k++)
        if (s->batch_gpu[k] != SIM_GPU_NONE && v->gpu_node[s->batch_gpu[k]] == n) {
            const sim_job *o = sim_view_job(v, s->batch[k]);
            *cpu += o->cpu_per_replica;
            *mem += o->mem_per_replica;
        }
}

/* Solo time of the whole job on one GPU of type t, seconds. */
static double job_full_s(const sim_view *v, sim_job_id id, uint16_t t)
{
    return v->jobs[id].spec.work_s / sim_view_type_speed(v, id, t);
}

static double job_epochs(const sim_job *j)
{
    double e = job_spec_has(&j->spec, SIM_ATTR_EPOCHS) ? j->spec.attr[SIM_ATTR_EPOCHS] : 1.0;
    return e >= 1.0 ? e : 1.0;
}

/* ---- Orders ------------------------------------------------------------------------- */

static double attr_or0(const sim_job *j, sim_attr a)
{
    return job_spec_has(&j->spec, a) ? j->spec.attr[a] : 0.0;
}

/* Cold-start job order: depth, then batch size, descending; ties: arrival order. */
static bool job_before(const sim_view *v, sim_job_id a, sim_job_id b)
{
    const sim_job *ja = sim_view_job(v, a), *jb = sim_view_job(v, b);
    double da = attr_or0(ja, SIM_ATTR_DEPTH), db = attr_or0(jb, SIM_ATTR_DEPTH);
    if (da != db)
        return da > db;
    double ba = attr_or0(ja, SIM_ATTR_BATCH_SIZE), bb = attr_or0(jb, SIM_ATTR_BATCH_SIZE);
    if (ba != bb)
        return ba > bb;
    return ja->seq < jb->seq;
}

/* Cold-start GPU order: compute capability, then memory, descending; ties: index. */
static bool gpu_before(const hetero_state *s, const sim_view *v, uint32_t a, uint32_t b)
{
    double ca = s->cc[gpu_type(v, a)], cb = s->cc[gpu_type(v, b)];
    if (ca != cb)
        return ca > cb;
    if (v->gpu_mem_total[a] != v->gpu_mem_total[b])
        return v->gpu_mem_total[a] > v->gpu_mem_total[b];
    return a < b;
}

static void sort_jobs(const sim_view *v, sim_job_id *a, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        sim_job_id x = a[i];
        uint32_t k = i;
        for (; k > 0 && job_before(v, x, a[k - 1]); k--)
            a[k] = a[k - 1];
        a[k] = x;
    }
}

/* Heap sort of the free GPUs by gpu_before (no allocation; n may be large). */
static void sift(const hetero_state *s, const sim_view *v, uint32_t *a, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            return;
        /* Max-heap on "comes later". */
        if (c + 1 < n && gpu_before(s, v, a[c], a[c + 1]))
            c++;
        if (!gpu_before(s, v, a[i], a[c]))
            return;
        uint32_t t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

static void sort_gpus(const hetero_state *s, const sim_view *v, uint32_t *a, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift(s, v, a, n, i);
    for (uint32_t e = n; e-- > 1;) {
        uint32_t t = a[0];
        a[0] = a[e];
        a[e] = t;
        sift(s, v, a, e, 0);
    }
}

/* ---- Groups ------------------------------------------------------------------------- */

static const char *group_name(const void *ctx, uint32_t i)
{
    return ((const hetero_state *)ctx)->g[i].name;
}

static hgroup *group_find(hetero_state *s, const char *name)
{
    uint32_t i = nametab_find(&s->by_name, name, group_name, s);
    return i == UINT32_MAX ? NULL : &s->g[i];
}

/* An index by name of twice the records' count (rounded up to a power of two), filled
 * with the open groups; false when out of memory. */
static bool name_index(hetero_state *s)
{
    uint32_t cap = 1;
    while (cap < 2 * (uint64_t)s->n_groups)
        cap *= 2;
    uint32_t *t = sim_calloc(cap, sizeof *t);
    if (!t)
        return false;
    sim_free(s->by_name.slot);
    s->by_name = (nametab){t, cap - 1};
    for (uint32_t i = 0; i < s->hi_used; i++)
        if (s->g[i].used && s->g[i].name[0])
            nametab_insert(&s->by_name, i, s->g[i].name);
    return true;
}

/* Keep gr's bit in `active` true to its state. */
static void group_mark(hetero_state *s, const hgroup *gr)
{
    uint32_t i = (uint32_t)(gr - s->g);
    uint64_t bit = UINT64_C(1) << (i % 64);
    if (gr->used && (gr->swapping || gr->revert_due))
        s->active[i / 64] |= bit;
    else
        s->active[i / 64] &= ~bit;
}

/* A free group record, the table doubled when every record is in use (a group stays
 * open while any of its jobs waits, also after its started jobs ended, so open groups
 * can outnumber the GPUs); NULL when out of memory. */
static hgroup *group_new(hetero_state *s)
{
    uint32_t i = 0, words = (s->n_groups + 63) / 64;
    while (i < words && s->in_use[i] == UINT64_MAX)
        i++;
    i = i < words ? 64 * i + (uint32_t)__builtin_ctzll(~s->in_use[i]) : s->n_groups;
    if (i >= s->n_groups) {
        i = s->n_groups;
        if (s->n_groups > UINT32_MAX / 4)
            return NULL;
        hgroup *g = sim_reallocarray(s->g, 2 * (size_t)s->n_groups, sizeof *g);
        if (!g)
            return NULL;
        memset(g + s->n_groups, 0, s->n_groups * sizeof *g);
        /* A record's swap state points into the record itself. */
        for (uint32_t k = 0; k < s->n_groups; k++)
            if (g[k].sw.cur) {
                g[k].sw.cur = g[k].cur;
                g[k].sw.best = g[k].best;
            }
        s->g = g;
        size_t was = (s->n_groups + 63) / 64, now = (2 * (size_t)s->n_groups + 63) / 64;
        uint64_t *a = sim_reallocarray(s->active, now, sizeof *a);
        if (!a)
            return NULL;
        s->active = a;
        uint64_t *u = sim_reallocarray(s->in_use, now, sizeof *u);
        if (!u)
            return NULL;
        s->in_use = u;
        memset(a + was, 0, (now - was) * sizeof *a);
        memset(u + was, 0, (now - was) * sizeof *u);
        s->n_groups *= 2;
        if (!name_index(s))
            return NULL;
    }
    memset(&s->g[i], 0, sizeof s->g[i]);
    s->g[i].used = true;
    s->in_use[i / 64] |= UINT64_C(1) << (i % 64);
    s->g[i].gen = ++s->gen;
    if (i >= s->hi_used)
        s->hi_used = i + 1;
    return &s->g[i];
}

/* The open record of job id's group, or NULL: the job joined none, or the record closed
 * since (a record closes once every job of its group has ended, so that means a bug;
 * the generation keeps a reused record from taking another group's finishes). */
static hgroup *job_group(hetero_state *s, const sim_view *v, sim_job_id id)
{
    const hjob *hj = sim_view_job_state(v, id);
    if (!hj->group)
        return NULL;
    hgroup *gr = &s->g[hj->group - 1];
    return gr->used && gr->gen == hj->gen ? gr : NULL;
}

static int start_on(policy_decisions *out, const sim_view *v, sim_job_id id, uint32_t g)
{
    uint32_t node = v->gpu_node[g];
    sim_placement p = {.replicas = 1,
                       .nodes = &node,
                       .gpus = &g,
                       .milli = SIM_MILLI_GPU,
                       .gpu_mem_mib = UINT64_MAX};
    return sim_decide_start(out, id, &p);
}

static void trail_row(hetero_state *s, const hgroup *gr, sim_time now, const char *action)
{
    if (!s->trail)
        return;
    fprintf(s->trail, "%.6f,%s,%u,%s,%.6f,%.6f,", (double)now / 1e6, gr->name, gr->round, action,
            gr->sw.t_cur, gr->sw.t_best);
    for (uint32_t i = 0; i < gr->n; i++)
        fprintf(s->trail, "%s%s@%u", i ? " " : "", gr->job_id[i], gr->gset[gr->cur[i]]);
    fputc('\n', s->trail);
}

/* Round time of job i of the group on slot k, seconds: 1/rounds of its first epoch. */
static double round_s(const hetero_state *s, const hgroup *gr, uint32_t i, uint32_t k)
{
    return gr->full_s[i][k] / gr->epochs[i] / (double)s->rounds;
}

static sim_time next_round_at(const hetero_state *s, const hgroup *gr, sim_time now)
{
    double t = 0.0;
    for (uint32_t i = 0; i < gr->n; i++) {
        double r = round_s(s, gr, i, gr->cur[i]);
        if (r > t)
            t = r;
    }
    sim_time dt = (sim_time)llround(t * 1e6);
    return now + (dt > 0 ? dt : 1);
}

typedef struct swap_ctx {
    const sim_view *v;
    const hgroup *gr;
} swap_ctx;

/* Whether jobs a and b of the group may trade GPUs: each runs on the other's GPU type
 * and memory, and each node keeps room for the CPU and memory of the job it gets in
 * place of the one it lets go. */
static bool swappable(void *ctx, uint32_t a, uint32_t b)
{
    const swap_ctx *c = ctx;
    const hgroup *gr = c->gr;
    const sim_view *v = c->v;
    if (!isfinite(gr->full_s[a][gr->cur[b]]) || !isfinite(gr->full_s[b][gr->cur[a]]))
        return false;
    uint32_t na = v->gpu_node[gr->gset[gr->cur[a]]], nb = v->gpu_node[gr->gset[gr->cur[b]]];
    if (na == nb)
        return true;
    const sim_job *ja = sim_view_job(v, gr->job[a]), *jb = sim_view_job(v, gr->job[b]);
    return v->node_cpu_total[na] - v->node_cpu_used[na] + ja->cpu_per_replica >=
               jb->cpu_per_replica &&
           v->node_mem_total[na] - v->node_mem_used[na] + ja->mem_per_replica >=
               jb->mem_per_replica &&
           v->node_cpu_total[nb] - v->node_cpu_used[nb] + jb->cpu_per_replica >=
               ja->cpu_per_replica &&
           v->node_mem_total[nb] - v->node_mem_used[nb] + jb->mem_per_replica >=
               ja->mem_per_replica;
}

/* One round of the swap phase of group gr. */
static int group_round(hetero_state *s, const sim_view *v, sim_time now, hgroup *gr,
                       policy_decisions *out)
{
    for (uint32_t i = 0; i < gr->n; i++) {
        double r = round_s(s, gr, i, gr->cur[i]);
        double f = s->noise > 0 ? 1.0 + gsl_ran_gaussian(v->rng, s->noise) : 1.0;
        s->measured[i] = r * (f > 0.05 ? f : 0.05);
    }
    memcpy(s->old, gr->cur, gr->n * sizeof *s->old);
    gr->round++;
    swap_ctx ctx = {v, gr};
    hetero_action act =
        hetero_swap_round(&gr->sw, s->measured, gr->round >= s->rounds, swappable, &ctx);
    trail_row(s, gr, now, hetero_action_name(act));
    int rc;
    for (uint32_t i = 0; i < gr->n; i++)
        if (gr->cur[i] != s->old[i]) {
            gr->busy_s[s->old[i]] += (double)(now - gr->since_us[i]) / 1e6;
            if ((rc = sim_decide_preempt(out, gr->job[i], true)))
                return rc;
        }
    for (uint32_t i = 0; i < gr->n; i++)
        if (gr->cur[i] != s->old[i]) {
            gr->slot[i] = gr->cur[i];
            gr->since_us[i] = now;
            if ((rc = start_on(out, v, gr->job[i], gr->gset[gr->cur[i]])))
                return rc;
        }
    if (gr->sw.phase == HETERO_FROZEN)
        gr->swapping = false;
    else
        gr->next_round_us = next_round_at(s, gr, now);
    return SIM_OK;
}

/* The best mapping back, made due by a finish or a requeue during a trial round
 * (hetero_on_finish, hetero_on_requeue): the running jobs off their GPU of the best
 * mapping are preempted, and each waiting job starts on its GPU of the best mapping once
 * that GPU is free (a requeued job waits for it, also while its node is down: the walk
 * over the pending list passes it by). The group is frozen; the revert stays due until
 * no job of the group waits. */
static int group_revert(hetero_state *s, const sim_view *v, sim_time now, hgroup *gr,
                        policy_decisions *out)
{
    int rc;
    bool moved = false;
    for (uint32_t i = 0; i < gr->n; i++)
        if (!gr->gone[i] && gr->cur[i] != gr->best[i])
            moved = true;
    for (uint32_t i = 0; i < gr->n; i++)
        if (!gr->gone[i] && gr->slot[i] != gr->best[i] &&
            sim_view_job(v, gr->job[i])->state == SIM_JOB_RUNNING) {
            gr->busy_s[gr->slot[i]] += (double)(now - gr->since_us[i]) / 1e6;
            if ((rc = sim_decide_preempt(out, gr->job[i], true)))
                return rc;
        }
    bool waiting = false;
    for (uint32_t i = 0; i < gr->n; i++) {
        if (gr->gone[i] || sim_view_job(v, gr->job[i])->state != SIM_JOB_PENDING)
            continue;
        uint32_t g = gr->gset[gr->best[i]];
        if (v->gpu_nres[g] != 0 || !job_fits_gpu(v, gr->job[i], g, 0, 0)) {
            waiting = true;
            continue;
        }
        gr->slot[i] = gr->best[i];
        gr->since_us[i] = now;
        if ((rc = start_on(out, v, gr->job[i], g)))
            return rc;
    }
    memcpy(gr->cur, gr->best, gr->n * sizeof *gr->cur);
    gr->sw.phase = HETERO_FROZEN;
    if (moved)
        trail_row(s, gr, now, "revert");
    gr->revert_due = waiting;
    return SIM_OK;
}

/* The policies map one whole GPU per job; they reject any other request. */
static bool one_whole_gpu(const sim_job *j)
{
    return j->gpus_per_replica * j->nominal_replicas == 1 && j->spec.gpu_milli != 0;
}

/* The jobs of job first's group that the policies run (one whole GPU each), counted
 * along the pending list from first. A group's jobs arrive together and are appended in
 * a row, and a job requeued later goes behind them, so until one of them starts they
 * all wait there in a row, first the first of them. */
static uint32_t group_members(const sim_view *v, sim_job_id first)
{
    const char *name = sim_view_job(v, first)->spec.group;
    uint32_t n = 0;
    for (sim_job_id k = first; k != SIM_JOB_NONE && strcmp(v->jobs[k].spec.group, name) == 0;
         k = sim_view_next(v, k))
        n += one_whole_gpu(sim_view_job(v, k));
    return n;
}

/* A new group record for the batch just placed (its group's first jobs to start, the
 * first of them pending at `first`): cold mapping, optimum, swap phase. */
static void group_open(hetero_state *s, const sim_view *v, sim_time now, hgroup *gr,
                       sim_job_id first, uint32_t n_batch, uint32_t placed)
{
    const sim_job *j0 = sim_view_job(v, s->batch[0]);
    snprintf(gr->name, sizeof gr->name, "%s", j0->spec.group);
    nametab_insert(&s->by_name, (uint32_t)(gr - s->g), gr->name);
    /* The record closes when all of them have ended, and so it stays open while one
     * waits: a job that waits joins it later. */
    gr->total = group_members(v, first);
    gr->untracked = gr->total > HG_MAX;
    gr->submit_us = j0->spec.submit_us;
    gr->start_us = now;
    gr->complete = placed == n_batch && n_batch == gr->total;
    gr->m = 0;
    for (uint32_t b = 0; b < n_batch; b++)
        if (s->batch_gpu[b] != SIM_GPU_NONE)
            gr->gset[gr->m++] = s->batch_gpu[b];
    gr->opt_s = NAN;
    gr->pmtn_s = NAN;
}

static void group_add(hetero_state *s, const sim_view *v, sim_time now, hgroup *gr, uint32_t b)
{
    sim_job_id id = s->batch[b];
    /* A job the core requeued (its node failed) comes back under its old index. */
    uint32_t i = 0;
    while (i < gr->n && gr->job[i] != id)
        i++;
    uint32_t k = 0;
    while (k < gr->m && gr->gset[k] != s->batch_gpu[b])
        k++;
    hjob *hj = sim_view_job_state(v, id);
    hj->group = (uint32_t)(gr - s->g) + 1;
    hj->gen = gr->gen;
    /* Beyond the record's capacity the group runs untracked: no swap rounds, no row
     * (its jobs are only counted, so that the record closes with the last). */
    if ((i == gr->n && gr->n == HG_MAX) || (k == gr->m && gr->m == HG_MAX)) {
        gr->untracked = true;
        gr->swapping = false;
        gr->revert_due = false;
        group_mark(s, gr);
    }
    if (k == gr->m && gr->m < HG_MAX)
        gr->gset[gr->m++] = s->batch_gpu[b]; /* a late job outside the cold start's set */
    if (gr->untracked) {
        hj->idx = UINT32_MAX;
        return;
    }
    if (i == gr->n)
        gr->n++;
    gr->job[i] = id;
    snprintf(gr->job_id[i], sizeof gr->job_id[i], "%s", v->jobs[id].spec.id);
    gr->epochs[i] = job_epochs(sim_view_job(v, id));
    gr->slot[i] = k;
    gr->cur[i] = k;
    gr->since_us[i] = now;
    hj->idx = i;
}

/* Fill full_s for every job and slot of the group (INFINITY where it cannot run). */
static void group_costs(hgroup *gr, const sim_view *v)
{
    for (uint32_t i = 0; i < gr->n; i++)
        for (uint32_t k = 0; k < gr->m; k++) {
            uint32_t g = gr->gset[k];
            const sim_job *j = sim_view_job(v, gr->job[i]);
            bool ok = sim_job_type_ok(j, gpu_type(v, g)) && mem_need(j) <= v->gpu_mem_total[g];
            gr->full_s[i][k] = ok ? job_full_s(v, gr->job[i], gpu_type(v, g)) : INFINITY;
        }
}

/* The f-th free GPU of the pass in the order they are offered, or SIM_GPU_NONE past the
 * last; the nodes' free GPUs are gathered a node at a time, as far as asked. */
static uint32_t free_at(hetero_state *s, const sim_view *v, uint32_t f)
{
    while (f >= s->n_free) {
        uint32_t i = s->scan, w = i / 64;
        if (i >= s->n_order)
            return SIM_GPU_NONE;
        uint64_t bits = s->has_free[w] & (~UINT64_C(0) << (i % 64));
        while (!bits && ++w < (s->n_order + 63) / 64)
            bits = s->has_free[w];
        if (!bits) {
            s->scan = s->n_order;
            return SIM_GPU_NONE;
        }
        i = w * 64 + (uint32_t)__builtin_ctzll(bits);
        s->scan = i + 1;
        uint32_t n = s->node_order[i];
        for (uint32_t g = v->node_gpu_first[n]; g < v->node_gpu_first[n] + v->node_gpu_count[n]; g++)
            if (v->gpu_nres[g] == 0) {
                s->taken[s->n_free] = 0;
                s->free_gpu[s->n_free++] = g;
            }
    }
    return s->free_gpu[f];
}

static void set_has_free(hetero_state *s, const sim_view *v, uint32_t n)
{
    uint32_t i = s->order_pos[n];
    if (i == UINT32_MAX)
        return;
    uint64_t bit = UINT64_C(1) << (i % 64);
    if (v->node_up[n] && v->node_free_gpus[n])
        s->has_free[i / 64] |= bit;
    else
        s->has_free[i / 64] &= ~bit;
}

/* has_free as of now: the nodes changed since the last pass are read again (all of
 * them when the view's change log no longer holds those changes). */
static void sync_free(hetero_state *s, const sim_view *v)
{
    uint64_t now = v->change_epoch;
    if (!s->free_built || now - s->synced > SIM_CHANGE_RING) {
        for (uint32_t i = 0; i < s->n_order; i++)
            set_has_free(s, v, s->node_order[i]);
        s->free_built = true;
    } else {
        for (uint64_t ep = s->synced + 1; ep <= now; ep++) {
            uint32_t n = v->change_ring[ep % SIM_CHANGE_RING];
            if (v->node_change_epoch[n] == ep) /* each node once: at its latest change */
                set_has_free(s, v, n);
        }
    }
    s->synced = now;
}

/* Whether the pass has given away every free GPU: every node was gathered and each of
 * its free GPUs taken. No later job of the pass can start then. */
static bool all_taken(const hetero_state *s)
{
    return s->scan >= s->n_order && s->n_taken == s->n_free;
}

/* Place the batch s->batch[0..nb), jobs of one group (or one job without a group);
 * first: the first of them in the pending list. */
static int place_batch(hetero_state *s, const sim_view *v, sim_time now, sim_job_id first,
                       uint32_t nb, policy_decisions *out)
{
    if (s->mode == HM_HETERO)
        sort_jobs(v, s->batch, nb);
    uint32_t placed = 0;
    for (uint32_t b = 0; b < nb; b++) {
        s->batch_gpu[b] = SIM_GPU_NONE;
        const sim_job *j = sim_view_job(v, s->batch[b]);
        struct hmiss ask = {j->spec.gpu_type_mask, mem_need(j), j->cpu_per_replica,
                            j->mem_per_replica};
        uint32_t k = 0;
        while (k < s->n_miss && memcmp(&s->miss[k], &ask, sizeof ask))
            k++;
        if (k < s->n_miss)
            continue;
        uint32_t g;
        for (uint32_t f = 0; (g = free_at(s, v, f)) != SIM_GPU_NONE; f++) {
            if (s->taken[f])
                continue;
            uint64_t cpu, mem;
            batch_taken(s, v, b, v->gpu_node[g], &cpu, &mem);
            if (job_fits_gpu(v, s->batch[b], g, cpu, mem)) {
                s->taken[f] = 1;
                s->n_taken++;
                s->batch_gpu[b] = g;
                placed++;
                break;
            }
        }
        if (b == 0 && s->batch_gpu[b] == SIM_GPU_NONE && s->n_miss < 8)
            s->miss[s->n_miss++] = ask;
    }
    if (!placed)
        return SIM_OK;
    const sim_job *j0 = sim_view_job(v, s->batch[0]);
    hgroup *gr = NULL;
    if (j0->spec.group[0]) {
        gr = group_find(s, j0->spec.group);
        if (!gr) {
            if (!(gr = group_new(s)))
                return SIM_ENOMEM;
            group_open(s, v, now, gr, first, nb, placed);
        } else if (placed < nb) {
            gr->complete = false;
        }
    }
    /* Data-parallel: every job runs at its speed on the weakest GPU of the group. */
    int rc;
    for (uint32_t b = 0; b < nb; b++) {
        sim_job_id id = s->batch[b];
        if (s->batch_gpu[b] == SIM_GPU_NONE)
            continue;
        if ((rc = start_on(out, v, id, s->batch_gpu[b])))
            return rc;
        if (gr)
            group_add(s, v, now, gr, b);
        if (s->mode == HM_DP && gr) {
            double own = sim_view_type_speed(v, id, gpu_type(v, s->batch_gpu[b]));
            double weak = own;
            for (uint32_t k = 0; k < gr->m; k++) {
                double sp = sim_view_type_speed(v, id, gpu_type(v, gr->gset[k]));
                if (sp < weak)
                    weak = sp;
            }
            if (weak < own && (rc = sim_decide_speed_factor(out, id, weak / own)))
                return rc;
        }
    }
    if (!gr)
        return SIM_OK;
    group_costs(gr, v);
    if (gr->complete && !gr->untracked && gr->n == gr->total && gr->start_us == now) {
        for (uint32_t i = 0; i < gr->n; i++)
            for (uint32_t k = 0; k < gr->m; k++)
                s->cost[i * gr->m + k] = gr->full_s[i][k];
        gr->opt_s = hetero_bottleneck(&s->ws, s->cost, gr->n, gr->m, s->assign);
        /* Only the groups file reports the preemptive bound (an LP per group). */
        if (s->groups_out)
            gr->pmtn_s = hetero_preemptive_bound(s->cost, gr->n, gr->m);
        if (s->mode == HM_HETERO && gr->n >= 2) {
            uint32_t cold[HG_MAX];
            for (uint32_t i = 0; i < gr->n; i++)
                cold[i] = gr->slot[i];
            hetero_swap_begin(&gr->sw, gr->n, gr->cur, gr->best, cold);
            gr->swapping = true;
            gr->next_round_us = next_round_at(s, gr, now);
            group_mark(s, gr);
            trail_row(s, gr, now, "cold");
        }
    }
    return SIM_OK;
}

/* The order in which free GPUs are offered: by index, or (hetero) by gpu_before. The
 * GPUs of a node share their type and memory, so that order keeps each node's GPUs
 * together, and sorting the nodes by their first GPU gives it once for the run. */
static void order_nodes(hetero_state *s, const sim_view *v)
{
    s->n_order = 0;
    for (uint32_t n = 0; n < v->n_nodes; n++)
        if (v->node_gpu_count[n])
            s->free_gpu[s->n_order++] = v->node_gpu_first[n];
    if (s->mode == HM_HETERO)
        sort_gpus(s, v, s->free_gpu, s->n_order);
    for (uint32_t n = 0; n < v->n_nodes; n++)
        s->order_pos[n] = UINT32_MAX;
    for (uint32_t i = 0; i < s->n_order; i++) {
        s->node_order[i] = v->gpu_node[s->free_gpu[i]];
        s->order_pos[s->node_order[i]] = i;
    }
}

/* Whether job id waits for its GPU of its group's best mapping (group_revert starts it). */
static bool waits_for_best(hetero_state *s, const sim_view *v, sim_job_id id)
{
    const hgroup *gr = job_group(s, v, id);
    return gr && gr->revert_due;
}

static int reject(hetero_state *s, policy_decisions *out, sim_job_id j)
{
    if (s->n_bad)
        s->n_bad--;
    return sim_decide_reject(out, j, "hetero policies map one whole GPU per job");
}

static int hetero_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    hetero_state *s = st;
    s->v = v;
    if (!s->types_ready) {
        resolve_types(s, v);
        order_nodes(s, v); /* by compute capability, which resolve_types gave */
    }
    int rc;
    /* The groups swapping or with a revert due, in record order. */
    for (uint32_t w = 0; w < (s->hi_used + 63) / 64; w++)
        for (uint64_t bits = s->active[w]; bits; bits &= bits - 1) {
            hgroup *gr = &s->g[64 * w + (uint32_t)__builtin_ctzll(bits)];
            if (gr->revert_due && (rc = group_revert(s, v, now, gr, out)))
                return rc;
            if (gr->swapping && gr->next_round_us <= now && (rc = group_round(s, v, now, gr, out)))
                return rc;
            group_mark(s, gr);
        }
    if (v->pending_head == SIM_JOB_NONE)
        return SIM_OK;
    /* The free GPUs in order, gathered as the jobs ask for them (free_at). */
    sync_free(s, v);
    s->n_free = 0;
    s->n_taken = 0;
    s->n_miss = 0;
    s->scan = 0;
    sim_job_id j = v->pending_head;
    while (j != SIM_JOB_NONE) {
        /* Once every free GPU is given away the rest of the walk starts nothing (a batch
         * that places no job changes nothing): it goes on only to reject. */
        if (!s->n_bad && all_taken(s))
            break;
        const sim_job *jj = sim_view_job(v, j);
        if (!one_whole_gpu(jj)) {
            sim_job_id nx = sim_view_next(v, j);
            if ((rc = reject(s, out, j)))
                return rc;
            j = nx;
            continue;
        }
        if (waits_for_best(s, v, j)) {
            j = sim_view_next(v, j);
            continue;
        }
        /* The batch: the group's jobs from j on, HG_MAX at most. A job of the group that
         * is not one whole GPU is rejected on the way, so that the others still make one
         * batch (the cold start maps them together). */
        uint32_t nb = 0;
        sim_job_id k = j;
        do {
            sim_job_id nx = sim_view_next(v, k);
            if (!one_whole_gpu(sim_view_job(v, k))) {
                if ((rc = reject(s, out, k)))
                    return rc;
            } else if (!waits_for_best(s, v, k)) {
                s->batch[nb++] = k;
            }
            k = nx;
        } while (k != SIM_JOB_NONE && nb < HG_MAX && jj->spec.group[0] &&
                 strcmp(v->jobs[k].spec.group, jj->spec.group) == 0);
        if ((rc = place_batch(s, v, now, j, nb, out)))
            return rc;
        j = k;
    }
    return SIM_OK;
}

static sim_time hetero_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)v;
    (void)now;
    const hetero_state *s = st;
    sim_time t = SIM_TIME_NEVER;
    for (uint32_t w = 0; w < (s->hi_used + 63) / 64; w++)
        for (uint64_t bits = s->active[w]; bits; bits &= bits - 1) {
            const hgroup *gr = &s->g[64 * w + (uint32_t)__builtin_ctzll(bits)];
            if (gr->swapping && gr->next_round_us < t)
                t = gr->next_round_us;
        }
    return t;
}

static void group_close(hetero_state *s, const sim_view *v, hgroup *gr)
{
    if (s->groups_out && !gr->untracked) {
        double span = (double)(gr->end_us - gr->start_us) / 1e6;
        double best_cc = -1.0;
        uint16_t strong = 0;
        for (uint32_t k = 0; k < gr->m; k++) {
            uint16_t t = gpu_type(v, gr->gset[k]);
            if (s->cc[t] > best_cc) {
                best_cc = s->cc[t];
                strong = t;
            }
        }
        uint32_t n_strong = 0;
        double idle = 0.0;
        for (uint32_t k = 0; k < gr->m; k++) {
            if (gpu_type(v, gr->gset[k]) != strong)
                continue;
            n_strong++;
            double busy = gr->busy_s[k];
            if (s->mode == HM_DP) {
                /* Each GPU computes 1/m of every job's batches. */
                busy = 0.0;
                for (uint32_t i = 0; i < gr->n; i++)
                    busy += gr->full_s[i][k] / (double)gr->m;
            }
            idle += span - busy > 0 ? span - busy : 0.0;
        }
        fprintf(s->groups_out, "%s,%s,%u,%u,%.6f,%.6f,%.6f,%.6f,%.6f,", gr->name, s->policy_name,
                gr->total, gr->m, (double)gr->submit_us / 1e6, (double)gr->start_us / 1e6,
                (double)gr->end_us / 1e6, span, (double)(gr->end_us - gr->submit_us) / 1e6);
        if (isfinite(gr->opt_s)) {
            /* The final (frozen) mapping as a static assignment, beside the optimum. */
            for (uint32_t i = 0; i < gr->n; i++) {
                for (uint32_t k = 0; k < gr->m; k++)
                    s->cost[i * gr->m + k] = gr->full_s[i][k];
                s->assign[i] = gr->slot[i];
            }
            fprintf(s->groups_out, "%.6f,%.6f,%.6f", gr->opt_s, span / gr->opt_s - 1.0,
                    hetero_makespan(s->cost, gr->n, gr->m, s->assign));
        } else {
            fputs(",,", s->groups_out);
        }
        fprintf(s->groups_out, ",%s,%u,%.6f,", strong ? v->gpu_type_name(v, strong) : "", n_strong,
                idle);
        if (isfinite(gr->pmtn_s))
            fprintf(s->groups_out, "%.6f", gr->pmtn_s);
        fputc('\n', s->groups_out);
    }
    nametab_erase(&s->by_name, (uint32_t)(gr - s->g), gr->name, group_name, s);
    gr->used = false;
    group_mark(s, gr);
    s->in_use[(gr - s->g) / 64] &= ~(UINT64_C(1) << ((gr - s->g) % 64));
    while (s->hi_used && !s->g[s->hi_used - 1].used)
        s->hi_used--;
}

static void hetero_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    hetero_state *s = st;
    if (!one_whole_gpu(sim_view_job(v, id)))
        s->n_bad++;
}

/* The core returned the job to the pending list (its node failed): its time on the GPU
 * ends here, and the group's swap rounds stop. A swapped mapping in its trial round can
 * no longer be measured: the best mapping comes back, as after a finish. */
static void hetero_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    hetero_state *s = st;
    hgroup *gr = job_group(s, v, id);
    if (!gr || gr->untracked)
        return;
    const hjob *hj = sim_view_job_state(v, id);
    gr->busy_s[gr->slot[hj->idx]] += (double)(v->now - gr->since_us[hj->idx]) / 1e6;
    gr->since_us[hj->idx] = v->now;
    if (gr->swapping && gr->sw.phase == HETERO_TRYING)
        gr->revert_due = true;
    gr->swapping = false;
    group_mark(s, gr);
}

static void hetero_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    hetero_state *s = st;
    hgroup *gr = job_group(s, v, id);
    hjob *hj = sim_view_job_state(v, id);
    hj->group = 0;
    if (!gr)
        return;
    if (!gr->untracked) {
        uint32_t i = hj->idx;
        gr->busy_s[gr->slot[i]] += (double)(v->now - gr->since_us[i]) / 1e6;
        gr->gone[i] = true;
        /* No swaps once a job of the group is done. A swapped mapping in its trial round
         * can no longer be measured: the best mapping comes back (at the next scheduling
         * point, which the finish makes), as after a trial that did not improve. */
        if (gr->swapping && gr->sw.phase == HETERO_TRYING)
            gr->revert_due = true;
        gr->swapping = false;
        group_mark(s, gr);
    }
    if (++gr->done >= gr->total) {
        gr->end_us = v->now;
        group_close(s, v, gr);
    }
}

#define HETERO_OPS(var, nm, sum, initf)                                                            \
    const policy_ops var = {                                                                       \
        .abi_version = POLICY_ABI_VERSION,                                                         \
        .name = nm,                                                                                \
        .summary = sum,                                                                            \
        .state_size = sizeof(hetero_state),                                                        \
        .job_state_size = sizeof(hjob),                                                            \
        .options = hetero_options,                                                                 \
        .init = initf,                                                                             \
        .fini = hetero_fini,                                                                       \
        .on_arrival = hetero_on_arrival,                                                           \
        .on_finish = hetero_on_finish,                                                             \
        .on_requeue = hetero_on_requeue,                                                           \
        .schedule = hetero_schedule,                                                               \
        .next_wakeup = hetero_next_wakeup,                                                         \
        .no_roles = true,                                                                          \
        .output_options = hetero_outputs,                                                          \
    }

HETERO_OPS(policy_hetero, "hetero",
           "co-trained job groups: sorted cold start, swap rounds in epoch 1, then frozen",
           hetero_init);
HETERO_OPS(policy_static_order, "static-order", "co-trained job groups in the user's order on free GPUs",
           static_init);
HETERO_OPS(policy_data_parallel, "data-parallel",
           "co-trained job groups, each job's batch split over all the group's GPUs", dp_init);
