/*
 * predictive.c: predicted-demand placement (docs/design.md, Policies 2). Three MLPs
 * (models/predictor.h) predict each job's share, memory and solo time on every GPU type
 * from its graph and execution features; jobs hold the prediction, never their request.
 * Control step: the eligible node (enough GPUs with free share >= the prediction for its
 * type) whose eligible GPU has the most free share, ties by node order. Worker step: LS
 * to the freest GPUs, BE to the shortest predicted time (a tie inside one-type nodes,
 * broken towards the most used GPU). LS jobs are served first and may evict BE jobs
 * where that makes room; a QoS monitor grows late LS jobs by `step` (from free share,
 * then shrinking or evicting BE jobs) and throttles on-target over-users back to their
 * predicted share; a shrunk BE job takes its predicted share back as share frees up. Invariant: the
 * policy reads only predictions and what a utilisation monitor reads; the simulator runs each job
 * at min(1, share / true demand). After Yeung et al., "Horus" (IEEE TPDS 33(1), 2022) for the
 * predictors.
 */
#include "policies/place.h"
#include "policies/predictive.h"

#include "models/catalog.h"
#include "models/features.h"
#include "models/predictor.h"
#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-job state: predictions for every GPU type (indexed by type id). */
typedef struct pjob {
    bool predicted;
    bool ls;                             /* latency-sensitive (LS or Guaranteed) */
    bool running;                        /* counted in ls_running */
    bool featureless;                    /* a GPU job without execution features */
    bool recorded;                       /* its predictions are in jobs.csv (first start) */
    bool fit_checked;                    /* its gang was fitted on the empty cluster */
    bool nowhere;        /* a one-replica job that fitted on no node at release epoch */
    uint64_t nowhere_at; /* ... nowhere_at (moved up while no node released since fits) */
    uint16_t type;                       /* type it runs on */
    uint16_t milli[SIM_MAX_GPU_TYPES];   /* predicted share; 0 = type not usable */
    uint32_t mem_mib[SIM_MAX_GPU_TYPES]; /* predicted GPU memory */
    float time_s[SIM_MAX_GPU_TYPES];     /* predicted solo time on the whole GPU */
    float util[SIM_MAX_GPU_TYPES];       /* predicted utilisation, unrounded */
    double target_s;                     /* completion target after submission */
} pjob;

typedef struct pred_state {
    place_ws ws;
    bool searched_nowhere; /* the last place_typed found no node for its first replica */
    model_predictor pred;
    model_catalog *cat;
    bool types_ready;
    bool type_ok[SIM_MAX_GPU_TYPES];    /* present in the cluster and in the catalog */
    double gpu_x[SIM_MAX_GPU_TYPES][3]; /* GPU features per type */
    uint64_t type_mem[SIM_MAX_GPU_TYPES]; /* the largest GPU memory of each type, MiB */
    /* The nodes with GPUs by type, each type's by GPU memory, largest first: by_type[
     * type_first[t] .. type_first[t + 1]) (NULL when it could not be allocated). */
    uint32_t *by_type;
    uint32_t type_first[SIM_MAX_GPU_TYPES + 1];
    /* Options. */
    double monitor_s, step, be_min, slo_factor, margin, mem_margin;
    bool evict, throttle, saturated_only;
    /* Monitor and pass bookkeeping. */
    sim_time next_monitor;
    uint32_t ls_running;
    bool be_shrunk; /* a running BE job holds less than its predicted share */
    bool primed;
    uint64_t epoch, enqueued_upto;
    /* Scratch for evictions: residents of one GPU. */
    sim_job_id *res;
    uint32_t res_cap;
} pred_state;

static const policy_option pred_options[] = {
    {"util_model", "",
     "utilisation model file (default: the shipped models/data/predictive/util.mlp)"},
    {"mem_model", "", "memory model file (default: the shipped mem.mlp)"},
    {"time_model", "", "execution-time model file (default: the shipped time.mlp)"},
    {"catalog", "", "GPU catalog giving the GPU features (default: the shipped gpus.csv)"},
    {"monitor_interval", "60", "seconds between two rounds of the QoS monitor"},
    {"step", "0.1", "share growth of a late LS job per monitor round, fraction of a GPU"},
    {"be_min", "0.5", "a BE job shrunk below this fraction of its predicted share is evicted"},
    {"slo_factor", "2", "LS target without slo_s: this factor x predicted solo time"},
    {"margin", "1", "share held = margin x predicted utilisation"},
    {"mem_margin", "1", "GPU memory held = mem_margin x predicted memory"},
    {"evict", "true", "let a waiting LS job evict BE jobs to make room"},
    {"throttle", "true",
     "throttle an on-target LS job that holds and uses more than its predicted share"},
    {"saturated_only", "true", "grow only LS jobs that use their whole share (share-bound)"},
    {NULL, NULL, NULL},
};

static int pred_init(void *st, const policy_config *cfg, sim_diag *d)
{
    pred_state *s = st;
    int rc;
    if ((rc = policy_config_double(cfg, pred_options, "monitor_interval", 0.001, 1e9, &s->monitor_s,
                                   d)) ||
        (rc = policy_config_double(cfg, pred_options, "step", 0.001, 1, &s->step, d)) ||
        (rc = policy_config_double(cfg, pred_options, "be_min", 0, 1, &s->be_min, d)) ||
        (rc =
             policy_config_double(cfg, pred_options, "slo_factor", 0.01, 1e6, &s->slo_factor, d)) ||
        (rc = policy_config_double(cfg, pred_options, "margin", 0.01, 100, &s->margin, d)) ||
        (rc = policy_config_double(cfg, pred_options, "mem_margin", 0, 100, &s->mem_margin, d)) ||
        (rc = policy_config_bool(cfg, pred_options, "evict", &s->evict, d)) ||
        (rc = policy_config_bool(cfg, pred_options, "throttle", &s->throttle, d)) ||
        (rc = policy_config_bool(cfg, pred_options, "saturated_only", &s->saturated_only, d)))
        return rc;
    const char *paths[MODEL_KIND_COUNT];
    static const char *const keys[MODEL_KIND_COUNT] = {"util_model", "mem_model", "time_model"};
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const char *p = policy_config_get(cfg, pred_options, keys[k]);
        paths[k] = p && *p ? p : NULL;
    }
    const char *cat = policy_config_get(cfg, pred_options, "catalog");
    if ((rc = model_catalog_load(&s->cat, cat && *cat ? cat : model_catalog_default_path(), d)))
        return rc;
    if ((rc = model_predictor_load(&s->pred, paths, d)) != SIM_OK) {
        model_catalog_destroy(s->cat);
        s->cat = NULL;
        return rc;
    }
    if ((rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK) {
        model_predictor_fini(&s->pred);
        model_catalog_destroy(s->cat);
        s->cat = NULL;
        return rc;
    }
    /* A GPU holds at most 1000 residents of at least 1 milli each. */
    s->res_cap = SIM_MILLI_GPU + 1;
    s->res = sim_calloc(s->res_cap, sizeof *s->res);
    if (!s->res) {
        place_ws_fini(&s->ws);
        model_predictor_fini(&s->pred);
        model_catalog_destroy(s->cat);
        s->cat = NULL;
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    s->next_monitor = SIM_TIME_NEVER;
    return SIM_OK;
}

static void pred_fini(void *st)
{
    pred_state *s = st;
    place_ws_fini(&s->ws);
    model_predictor_fini(&s->pred);
    model_catalog_destroy(s->cat);
    sim_free(s->res);
    sim_free(s->by_type);
}

typedef struct node_mem {
    uint64_t mem; /* GPU memory of the node's GPUs, MiB */
    uint32_t node;
} node_mem;

static int by_mem_desc(const void *a, const void *b)
{
    const node_mem *x = a, *y = b;
    return x->mem != y->mem ? (x->mem < y->mem ? 1 : -1)
                            : (x->node > y->node) - (x->node < y->node);
}

/* s->type_mem, and s->by_type: the nodes with GPUs grouped by type, largest GPU memory
 * first (left NULL when out of memory: gang_may_fit then assumes a fit). A node's GPUs
 * have one memory size. */
static void index_types(pred_state *s, const sim_view *v)
{
    uint32_t at[SIM_MAX_GPU_TYPES + 1] = {0};
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        uint16_t t = v->node_gpu_type[n];
        if (!v->node_gpu_count[n] || t >= SIM_MAX_GPU_TYPES)
            continue;
        at[t + 1]++;
        uint64_t mem = v->gpu_mem_total[v->node_gpu_first[n]];
        if (mem > s->type_mem[t])
            s->type_mem[t] = mem;
    }
    node_mem *tmp = sim_calloc(v->n_nodes ? v->n_nodes : 1, sizeof *tmp);
    s->by_type = sim_calloc(v->n_nodes ? v->n_nodes : 1, sizeof *s->by_type);
    if (!tmp || !s->by_type) {
        sim_free(tmp);
        sim_free(s->by_type);
        s->by_type = NULL;
        return;
    }
    for (uint32_t t = 0; t < SIM_MAX_GPU_TYPES; t++) {
        s->type_first[t + 1] = s->type_first[t] + at[t + 1];
        at[t + 1] = s->type_first[t];
    }
    for (uint32_t n = 0; n < v->n_nodes; n++)
        if (v->node_gpu_count[n] && v->node_gpu_type[n] < SIM_MAX_GPU_TYPES)
            tmp[at[v->node_gpu_type[n] + 1]++] =
                (node_mem){v->gpu_mem_total[v->node_gpu_first[n]], n};
    for (uint32_t t = 0; t < SIM_MAX_GPU_TYPES; t++)
        qsort(tmp + s->type_first[t], s->type_first[t + 1] - s->type_first[t], sizeof *tmp,
              by_mem_desc);
    for (uint32_t i = 0; i < s->type_first[SIM_MAX_GPU_TYPES]; i++)
        s->by_type[i] = tmp[i].node;
    sim_free(tmp);
}

/* Whether some GPU type holds all of job j's replicas on the empty cluster by its
 * predicted memory: on each node of the type, one replica per gpus_per_replica GPUs with
 * that much memory (two replicas never share a GPU). CPU and memory are not counted, so
 * false means that no placement can ever be found. Stops at the first node too small,
 * or once enough are counted: O(nodes of the types) at worst. */
static bool gang_may_fit(const pred_state *s, const sim_view *v, const sim_job *j, const pjob *pj)
{
    if (!s->by_type)
        return true;
    uint64_t want = j->nominal_replicas;
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES; t++) {
        if (!pj->milli[t])
            continue;
        uint64_t got = 0;
        for (uint32_t i = s->type_first[t]; i < s->type_first[t + 1] && got < want; i++) {
            uint32_t n = s->by_type[i];
            if (v->gpu_mem_total[v->node_gpu_first[n]] < pj->mem_mib[t])
                break;
            got += v->node_gpu_count[n] / j->gpus_per_replica;
        }
        if (got >= want)
            return true;
    }
    return false;
}

/* The GPU types of the cluster, matched by name with the policy's catalog. */
static void resolve_types(pred_state *s, const sim_view *v)
{
    bool present[SIM_MAX_GPU_TYPES] = {false};
    for (uint32_t n = 0; n < v->n_nodes; n++)
        if (v->node_gpu_count[n] && v->node_gpu_type[n] < SIM_MAX_GPU_TYPES)
            present[v->node_gpu_type[n]] = true;
    const sim_intern *names = model_catalog_names(s->cat);
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES; t++) {
        if (!present[t])
            continue;
        const char *name = v->gpu_type_name(v, t);
        uint32_t id = sim_intern_find(names, name, strlen(name));
        const model_gpu_type *g =
            id == SIM_INTERN_NONE ? NULL : model_catalog_type(s->cat, (uint16_t)id);
        if (!g)
            continue;
        model_features_gpu(g, s->gpu_x[t]);
        s->type_ok[t] = true;
    }
    index_types(s, v);
    s->types_ready = true;
}

static bool is_ls(const sim_job *j)
{
    return j->spec.qos == SIM_QOS_LS || j->spec.qos == SIM_QOS_GUARANTEED;
}

static void predict_job(pred_state *s, const sim_view *v, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    pjob *pj = sim_view_job_state(v, id);
    if (!s->types_ready)
        resolve_types(s, v);
    pj->ls = is_ls(j);
    pj->predicted = true;
    pj->featureless = j->gpus_per_replica && !(job_spec_has(&j->spec, SIM_ATTR_BATCH_SIZE) &&
                                               job_spec_has(&j->spec, SIM_ATTR_ITERATIONS) &&
                                               job_spec_has(&j->spec, SIM_ATTR_INPUT_SIZE));
    if (pj->featureless)
        return;
    double x[MODEL_F_GPU_CC];
    model_features_job(&j->spec, x);
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES; t++) {
        pj->milli[t] = 0;
        if (!s->type_ok[t] || !sim_job_type_ok(j, t))
            continue;
        model_prediction p;
        model_predictor_predict(&s->pred, x, s->gpu_x[t], &p);
        double m = ceil(p.util_milli * s->margin);
        pj->milli[t] = (uint16_t)(m < 1 ? 1 : m > SIM_MILLI_GPU ? SIM_MILLI_GPU : m);
        double mem = ceil(p.mem_mib * s->mem_margin);
        pj->mem_mib[t] = mem > 4e9 ? UINT32_MAX : (uint32_t)mem;
        pj->time_s[t] = (float)p.time_s;
        pj->util[t] = (float)p.util_milli;
    }
    /* A type whose GPUs are all smaller than the predicted memory is not used; when
     * that leaves none, the job would wait for ever: then, as a share above a whole GPU
     * holds the whole GPU, it holds the whole memory of the largest GPU of each type
     * (it runs alone on one). */
    bool fits = false;
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES && !fits; t++)
        fits = pj->milli[t] && pj->mem_mib[t] <= s->type_mem[t];
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES && !fits; t++)
        if (pj->milli[t] && pj->mem_mib[t] > s->type_mem[t])
            pj->mem_mib[t] = (uint32_t)s->type_mem[t];
}

static void pred_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    predict_job(st, v, id);
}

static void pred_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    pred_state *s = st;
    pjob *pj = sim_view_job_state(v, id);
    if (pj->running && pj->ls)
        s->ls_running--;
    pj->running = false;
}

static void pred_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    pred_on_finish(st, v, id);
}

/* ---- Control and worker steps ------------------------------------------------------- */

/* Whether one more replica fits node n at the predicted share and memory of its type,
 * and the largest free share among its GPUs that fit (the control step's score). */
static bool node_eligible(const pred_state *s, const sim_view *v, const sim_job *j, const pjob *pj,
                          uint32_t n, uint32_t *best_free)
{
    uint16_t t = v->node_gpu_type[n];
    if (t >= SIM_MAX_GPU_TYPES || !pj->milli[t])
        return false;
    uint32_t milli = pj->milli[t];
    uint64_t mem = pj->mem_mib[t];
    if (!place_fits(&s->ws, v, j, n, milli, mem))
        return false;
    const place_ws *w = &s->ws;
    bool tent = w->t_node[n];
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n], best = 0;
    for (uint32_t g = first; g < end; g++) {
        uint32_t used = v->gpu_used_milli[g] + (tent ? w->t_milli[g] : 0);
        uint64_t umem = v->gpu_used_mem[g] + (tent ? w->t_gmem[g] : 0);
        if (used + milli <= SIM_MILLI_GPU && umem + mem <= v->gpu_mem_total[g] &&
            SIM_MILLI_GPU - used > best)
            best = SIM_MILLI_GPU - used;
    }
    *best_free = best;
    return true;
}

static void tentative(place_ws *w, const sim_job *j, uint32_t n, const uint32_t *gpus,
                      uint32_t milli, uint64_t mem, bool add)
{
    w->t_node[n] = add;
    w->t_cpu[n] = add ? w->t_cpu[n] + j->cpu_per_replica : 0;
    w->t_mem[n] = add ? w->t_mem[n] + j->mem_per_replica : 0;
    for (uint32_t k = 0; k < j->gpus_per_replica; k++) {
        w->t_milli[gpus[k]] = add ? w->t_milli[gpus[k]] + milli : 0;
        w->t_gmem[gpus[k]] = add ? w->t_gmem[gpus[k]] + mem : 0;
    }
}

static bool search_on = true;

void predictive_search_enable(bool on)
{
    search_on = on;
}

static uint64_t nowhere_skips;

uint64_t predictive_nowhere_skips(void)
{
    return __atomic_load_n(&nowhere_skips, __ATOMIC_RELAXED);
}

/* Whether node n, whose GPUs have at most `bound` milli-GPU free, could still beat the
 * best node found (ties go to the lower id). */
static bool may_beat(uint32_t bound, uint32_t n, uint32_t best, uint32_t best_free)
{
    return best == UINT32_MAX || bound > best_free || (bound == best_free && n < best);
}

/*
 * The control step's node for one replica of j (on GPUs of `type`, any type when 0):
 * the eligible node whose fitting GPUs offer the most free share, the lowest id on a
 * tie, as a scan of every node in id order finds it (UINT32_MAX: none). A node's score
 * is at most the most free share of any of its GPUs, which the block and quarter
 * summaries bound, so the blocks go in order of that bound and the search stops when
 * no block left can beat the best node found; a quarter, or a node, that cannot beat
 * it or hold the least share the job asks of any type is passed over.
 */
static uint32_t control_node(pred_state *s, const sim_view *v, const sim_job *j, const pjob *pj,
                             uint16_t type)
{
    uint32_t need = UINT32_MAX;
    uint64_t types = 0;
    for (uint16_t t = 1; t < v->n_gpu_types && t < SIM_MAX_GPU_TYPES; t++)
        if ((!type || t == type) && pj->milli[t]) {
            need = pj->milli[t] < need ? pj->milli[t] : need;
            types |= UINT64_C(1) << t;
        }
    if (need == UINT32_MAX)
        return UINT32_MAX;
    uint32_t best = UINT32_MAX, best_free = 0;
    if (!search_on) {
        for (uint32_t n = 0; n < v->n_nodes; n++) {
            uint32_t f;
            if ((type && v->node_gpu_type[n] != type) || !node_eligible(s, v, j, pj, n, &f))
                continue;
            if (best == UINT32_MAX || f > best_free) {
                best = n;
                best_free = f;
            }
        }
        return best;
    }
    sim_view_sync_blocks(v);
    block_bound *order = s->ws.block_order;
    uint32_t k = 0;
    for (uint32_t b = 0; b < v->n_blocks; b++)
        if (v->block_max_free_milli[b] >= need && (v->block_types[b] & types))
            order[k++] = (block_bound){v->block_max_free_milli[b], b};
    for (;;) {
        /* The block of the largest bound not visited yet, the first in block order. */
        uint32_t top = UINT32_MAX;
        double tb = -1;
        for (uint32_t c = 0; c < k; c++)
            if (order[c].bound > tb) {
                tb = order[c].bound;
                top = c;
            }
        if (top == UINT32_MAX ||
            !may_beat((uint32_t)tb, order[top].block * SIM_NODE_BLOCK, best, best_free))
            break;
        order[top].bound = -1;
        for (uint32_t q = 0; q < 4; q++) {
            uint32_t lo = order[top].block * SIM_NODE_BLOCK + q * SIM_NODE_QUARTER;
            uint32_t hi = lo + SIM_NODE_QUARTER < v->n_nodes ? lo + SIM_NODE_QUARTER : v->n_nodes;
            uint32_t qm = v->block_quarter[4 * (size_t)order[top].block + q].max_free_milli;
            if (lo >= hi || qm < need || !may_beat(qm, lo, best, best_free))
                continue;
            for (uint32_t n = lo; n < hi; n++) {
                uint32_t nm = v->node_sum[n].max_free_milli, f;
                if (nm < need || !may_beat(nm, n, best, best_free) ||
                    (type && v->node_gpu_type[n] != type) || !node_eligible(s, v, j, pj, n, &f))
                    continue;
                if (may_beat(f, n, best, best_free)) {
                    best = n;
                    best_free = f;
                }
            }
        }
    }
    return best;
}

/*
 * Place all replicas of a GPU job by the control and worker steps, on GPUs of type
 * `type` only, or (type 0) with the first replica fixing the type (a job holds one
 * share on all its GPUs) and later replicas going to eligible nodes of that type.
 * *first_type gets the type of the first replica placed (0: none). On success fills
 * *out from the workspace.
 */
static bool place_typed(pred_state *s, const sim_view *v, sim_job_id id, uint16_t type,
                        uint16_t *first_type, sim_placement *out)
{
    const sim_job *j = sim_view_job(v, id);
    const pjob *pj = sim_view_job_state(v, id);
    place_ws *w = &s->ws;
    uint32_t R = j->nominal_replicas, gpr = j->gpus_per_replica;
    *first_type = 0;
    if ((uint64_t)R * gpr > w->max_slots)
        return false;
    uint32_t placed = 0;
    bool ok = true;
    s->searched_nowhere = false;
    for (uint32_t r = 0; r < R; r++) {
        uint32_t best = control_node(s, v, j, pj, type);
        if (best == UINT32_MAX) {
            s->searched_nowhere = r == 0;
            ok = false;
            break;
        }
        type = v->node_gpu_type[best];
        *first_type = type;
        place_gpu_order order = pj->ls ? PLACE_GPU_LEAST_USED : PLACE_GPU_MOST_USED;
        if (!place_pick_gpus(w, v, j, best, pj->milli[type], pj->mem_mib[type], order,
                             w->gpus + r * gpr)) {
            ok = false;
            break;
        }
        w->nodes[r] = best;
        placed++;
        if (R > 1)
            tentative(w, j, best, w->gpus + r * gpr, pj->milli[type], pj->mem_mib[type], true);
    }
    if (R > 1)
        for (uint32_t r = 0; r < placed; r++)
            tentative(w, j, w->nodes[r], w->gpus + r * gpr, 0, 0, false);
    if (!ok)
        return false;
    out->replicas = R;
    out->nodes = w->nodes;
    out->gpus = w->gpus;
    out->milli = pj->milli[type];
    out->gpu_mem_mib = pj->mem_mib[type];
    return place_roles(w, v, id, out, NULL, 0);
}

/* place_typed with the type the first replica picks; when the later replicas do not fit
 * on that type, each other type the job has a prediction for, in type order (else a job
 * whose first replica always goes to a type that cannot hold the others would wait for
 * ever, though another type holds them all). */
static bool place_job(pred_state *s, const sim_view *v, sim_job_id id, sim_placement *out)
{
    const pjob *pj = sim_view_job_state(v, id);
    uint16_t tried, t0;
    if (place_typed(s, v, id, 0, &tried, out))
        return true;
    if (!tried || sim_view_job(v, id)->nominal_replicas < 2)
        return false;
    for (uint16_t t = 1; t < SIM_MAX_GPU_TYPES; t++)
        if (t != tried && pj->milli[t] && place_typed(s, v, id, t, &t0, out))
            return true;
    return false;
}

/* A CPU-only job (nothing to predict): each replica on the node with the largest
 * allocated fraction of CPU that fits (ties: node order), as binpack does. */
static bool place_cpu_job(pred_state *s, const sim_view *v, sim_job_id id, sim_placement *out)
{
    const sim_job *j = sim_view_job(v, id);
    place_ws *w = &s->ws;
    uint32_t R = j->nominal_replicas, placed = 0;
    if (R > w->max_slots)
        return false;
    for (uint32_t r = 0; r < R; r++) {
        uint32_t best = UINT32_MAX;
        double best_used = -1;
        for (uint32_t n = 0; n < v->n_nodes; n++) {
            if (!place_fits(w, v, j, n, 0, 0))
                continue;
            double used = v->node_cpu_total[n]
                              ? (double)v->node_cpu_used[n] / (double)v->node_cpu_total[n]
                              : 0;
            if (used > best_used) {
                best = n;
                best_used = used;
            }
        }
        if (best == UINT32_MAX)
            break;
        w->nodes[r] = best;
        placed++;
        if (R > 1)
            tentative(w, j, best, NULL, 0, 0, true);
    }
    if (R > 1)
        for (uint32_t r = 0; r < placed; r++)
            tentative(w, j, w->nodes[r], NULL, 0, 0, false);
    if (placed < R)
        return false;
    out->replicas = R;
    out->nodes = w->nodes;
    out->gpus = NULL;
    out->milli = 0;
    out->gpu_mem_mib = 0;
    return place_roles(w, v, id, out, NULL, 0);
}

static int start_job(pred_state *s, const sim_view *v, sim_job_id id, const sim_placement *p,
                     policy_decisions *out)
{
    const sim_job *j = sim_view_job(v, id);
    pjob *pj = sim_view_job_state(v, id);
    int rc = sim_decide_start(out, id, p);
    if (rc != SIM_OK || !j->gpus_per_replica)
        return rc;
    uint16_t t = v->node_gpu_type[p->nodes[0]];
    pj->type = t;
    if (pj->time_s[t] > 0 || !job_spec_has(&j->spec, SIM_ATTR_SLO_S))
        pj->target_s = job_spec_has(&j->spec, SIM_ATTR_SLO_S) ? j->spec.attr[SIM_ATTR_SLO_S]
                                                              : s->slo_factor * pj->time_s[t];
    else
        pj->target_s = j->spec.attr[SIM_ATTR_SLO_S];
    if (pj->ls && !pj->running) {
        s->ls_running++;
        if (s->next_monitor == SIM_TIME_NEVER || s->next_monitor <= v->now)
            s->next_monitor = v->now + (sim_time)llround(s->monitor_s * 1e6);
    }
    pj->running = true;
    /* The predictions on the type the job first started on (a restart elsewhere keeps
     * them). */
    if (pj->recorded)
        return SIM_OK;
    pj->recorded = true;
    return sim_decide_predict(out, id, pj->time_s[t], pj->util[t]);
}

/* ---- Eviction ---------------------------------------------------------------------- */

/* Collect the running BE jobs resident on GPU g into s->res, largest share first
 * (ties: lower id). Returns their number. */
static uint32_t be_residents(pred_state *s, const sim_view *v, uint32_t g)
{
    uint32_t n = 0;
    for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX && n < s->res_cap;
         a = v->allocs[a].next_on_gpu) {
        sim_job_id b = v->allocs[a].job;
        const pjob *pb = sim_view_job_state(v, b);
        if (pb->ls || v->jobs[b].state != SIM_JOB_RUNNING)
            continue;
        s->res[n++] = b;
    }
    for (uint32_t i = 1; i < n; i++) {
        sim_job_id x = s->res[i];
        uint32_t k = i;
        while (k > 0 && (v->jobs[s->res[k - 1]].share_milli < v->jobs[x].share_milli ||
                         (v->jobs[s->res[k - 1]].share_milli == v->jobs[x].share_milli &&
                          s->res[k - 1] > x))) {
            s->res[k] = s->res[k - 1];
            k--;
        }
        s->res[k] = x;
    }
    return n;
}

/* Share and memory of GPU g held by running BE jobs. */
static void be_held(const sim_view *v, uint32_t g, uint32_t *milli, uint64_t *mem)
{
    *milli = 0;
    *mem = 0;
    for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu) {
        const pjob *pb = sim_view_job_state(v, v->allocs[a].job);
        if (!pb->ls && v->jobs[v->allocs[a].job].state == SIM_JOB_RUNNING) {
            *milli += v->allocs[a].milli;
            *mem += v->allocs[a].gpu_mem_mib;
        }
    }
}

/* BE share evicted from GPU g, largest share first as evict_for evicts, until `milli` and
 * `mem` fit there: 0 when they fit already, UINT32_MAX when evicting every BE job on it
 * would not do. Uses s->res. */
static uint32_t evict_cost(pred_state *s, const sim_view *v, uint32_t g, uint32_t milli,
                           uint64_t mem)
{
    uint32_t freem = sim_view_gpu_free_milli(v, g), cost = 0;
    uint64_t freemem = sim_view_gpu_free_mem(v, g);
    uint32_t nres = be_residents(s, v, g);
    for (uint32_t q = 0; q < nres && (freem < milli || freemem < mem); q++) {
        const sim_job *b = &v->jobs[s->res[q]];
        freem += b->share_milli;
        freemem += b->share_mem_mib;
        cost += b->share_milli;
    }
    return freem >= milli && freemem >= mem ? cost : UINT32_MAX;
}

static bool node_resources_fit(const sim_view *v, const sim_job *j, uint32_t n)
{
    return v->node_cpu_used[n] + j->cpu_per_replica <= v->node_cpu_total[n] &&
           v->node_mem_used[n] + j->mem_per_replica <= v->node_mem_total[n];
}

/*
 * An LS job that fits nowhere: find the node where evicting BE jobs makes room for its
 * (single) replica with the least BE share evicted (ties: node order), and evict them
 * there, largest share first. Nothing is evicted unless that makes room. Only
 * single-replica jobs evict. *evicted tells whether any job was evicted.
 */
static int evict_for(pred_state *s, const sim_view *v, sim_job_id id, policy_decisions *out,
                     bool *evicted)
{
    *evicted = false;
    const sim_job *j = sim_view_job(v, id);
    const pjob *pj = sim_view_job_state(v, id);
    uint32_t gpr = j->gpus_per_replica;
    uint32_t *cost = s->ws.cand;
    if (j->nominal_replicas != 1 || gpr == 0)
        return SIM_OK;
    uint32_t best = UINT32_MAX;
    uint64_t best_cost = UINT64_MAX;
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        uint16_t t = v->node_gpu_type[n];
        if (!v->node_up[n] || t >= SIM_MAX_GPU_TYPES || !pj->milli[t] || v->node_gpu_count[n] < gpr)
            continue;
        /* CPU and host memory, counting what the node's BE jobs would give back. */
        uint64_t be_cpu = 0, be_hmem = 0;
        uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
        for (uint32_t g = first; g < end; g++)
            for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu) {
                const pjob *pb = sim_view_job_state(v, v->allocs[a].job);
                if (!pb->ls) {
                    be_cpu += v->allocs[a].cpu_milli;
                    be_hmem += v->allocs[a].mem_mib;
                }
            }
        if (v->node_cpu_used[n] - be_cpu + j->cpu_per_replica > v->node_cpu_total[n] ||
            v->node_mem_used[n] - be_hmem + j->mem_per_replica > v->node_mem_total[n])
            continue;
        uint32_t k = 0;
        for (uint32_t g = first; g < end; g++) {
            uint32_t c = evict_cost(s, v, g, pj->milli[t], pj->mem_mib[t]);
            if (c != UINT32_MAX)
                cost[k++] = c;
        }
        if (k < gpr)
            continue;
        /* The sum of the gpr smallest costs (partial selection). */
        uint64_t sum = 0;
        for (uint32_t i = 0; i < gpr; i++) {
            uint32_t m = i;
            for (uint32_t q = i + 1; q < k; q++)
                if (cost[q] < cost[m])
                    m = q;
            uint32_t tmp = cost[i];
            cost[i] = cost[m];
            cost[m] = tmp;
            sum += cost[i];
        }
        if (!node_resources_fit(v, j, n))
            sum++;
        if (sum > 0 && sum < best_cost) {
            best_cost = sum;
            best = n;
        }
    }
    if (best == UINT32_MAX)
        return SIM_OK;
    uint16_t t = v->node_gpu_type[best];
    uint32_t milli = pj->milli[t];
    uint64_t mem = pj->mem_mib[t];
    uint32_t first = v->node_gpu_first[best], end = first + v->node_gpu_count[best];
    /* The cheapest GPUs, one at a time: evict on each until the replica's share fits. */
    uint32_t *chosen = s->ws.gpus;
    for (uint32_t done = 0; done < gpr; done++) {
        uint32_t pick = UINT32_MAX, pick_cost = UINT32_MAX;
        for (uint32_t g = first; g < end; g++) {
            bool taken = false;
            for (uint32_t q = 0; q < done; q++)
                taken |= chosen[q] == g;
            uint32_t c = taken ? UINT32_MAX : evict_cost(s, v, g, milli, mem);
            if (c < pick_cost) {
                pick_cost = c;
                pick = g;
            }
        }
        if (pick == UINT32_MAX)
            break;
        chosen[done] = pick;
        uint32_t nres = be_residents(s, v, pick);
        for (uint32_t q = 0; q < nres; q++) {
            if (sim_view_gpu_free_milli(v, pick) >= milli && sim_view_gpu_free_mem(v, pick) >= mem)
                break;
            if (v->jobs[s->res[q]].state != SIM_JOB_RUNNING)
                continue;
            int rc = sim_decide_preempt(out, s->res[q], true);
            if (rc != SIM_OK)
                return rc;
            *evicted = true;
        }
    }
    /* CPU and host memory: evict further BE jobs of the node while they lack. */
    for (uint32_t g = first; g < end && !node_resources_fit(v, j, best); g++) {
        uint32_t nres = be_residents(s, v, g);
        for (uint32_t q = 0; q < nres && !node_resources_fit(v, j, best); q++) {
            int rc = sim_decide_preempt(out, s->res[q], true);
            if (rc != SIM_OK)
                return rc;
            *evicted = true;
        }
    }
    return SIM_OK;
}

/* ---- QoS monitor -------------------------------------------------------------------- */

/* Minimum share of a BE job: be_min of its predicted share on its type (at least 1). */
static uint32_t be_minimum(const pred_state *s, const pjob *pb)
{
    double m = ceil(s->be_min * pb->milli[pb->type]);
    return m < 1 ? 1 : (uint32_t)m;
}

/* Grow LS job id's share by up to `delta`, taking free share first, then BE shares on
 * each of its GPUs. */
static int grow_share(pred_state *s, const sim_view *v, sim_job_id id, uint32_t delta,
                      policy_decisions *out)
{
    const sim_job *j = sim_view_job(v, id);
    /* What every GPU of the job can give: its free share plus all BE shares. */
    for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
        uint32_t g = v->allocs[a].gpu, bm;
        uint64_t bmem;
        be_held(v, g, &bm, &bmem);
        uint32_t avail = sim_view_gpu_free_milli(v, g) + bm;
        if (avail < delta)
            delta = avail;
    }
    if (delta == 0)
        return SIM_OK;
    for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
        uint32_t g = v->allocs[a].gpu;
        uint32_t nres = be_residents(s, v, g);
        for (uint32_t k = 0; k < nres; k++) {
            uint32_t freem = sim_view_gpu_free_milli(v, g);
            if (freem >= delta)
                break;
            sim_job_id b = s->res[k];
            const sim_job *jb = sim_view_job(v, b);
            if (jb->state != SIM_JOB_RUNNING)
                continue;
            uint32_t need = delta - freem;
            const pjob *pb = sim_view_job_state(v, b);
            int rc;
            if (jb->share_milli > need && jb->share_milli - need >= be_minimum(s, pb)) {
                rc = sim_decide_set_share(out, b, jb->share_milli - need);
                s->be_shrunk = true;
            } else
                rc = sim_decide_preempt(out, b, true);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return sim_decide_set_share(out, id, j->share_milli + delta);
}

static int monitor(pred_state *s, const sim_view *v, policy_decisions *out)
{
    uint32_t step = (uint32_t)llround(s->step * SIM_MILLI_GPU);
    if (step < 1)
        step = 1;
    for (sim_job_id id = v->running_head; id != SIM_JOB_NONE;) {
        sim_job_id next = sim_view_next(v, id);
        const sim_job *j = sim_view_job(v, id);
        pjob *pj = sim_view_job_state(v, id);
        if (!pj->ls || !pj->running || !j->gpus_per_replica || j->state != SIM_JOB_RUNNING) {
            id = next;
            continue;
        }
        uint16_t t = pj->type;
        uint32_t used = sim_view_job_used_milli(v, id);
        /* What the job may be given if late (more share: only below a whole GPU, and by
         * default only while it uses all it holds) or if on target (its predicted share
         * back). Where neither can be, the prediction would decide nothing. */
        bool may_grow =
            j->share_milli < SIM_MILLI_GPU && (used >= j->share_milli || !s->saturated_only);
        bool may_throttle = s->throttle && used > pj->milli[t] && j->share_milli > pj->milli[t];
        if (!may_grow && !may_throttle) {
            id = next;
            continue;
        }
        double done = j->work_total_s > 0 ? sim_view_work_done(v, id) / j->work_total_s : 1;
        double x[MODEL_F_GPU_CC];
        model_features_job(&j->spec, x);
        x[MODEL_F_ITERS] *= 1 - done;
        double remaining = model_predictor_time(&s->pred, x, s->gpu_x[t], pj->util[t]);
        double elapsed = (double)(v->now - j->spec.submit_us) / 1e6;
        int rc = SIM_OK;
        if (elapsed + remaining > pj->target_s) {
            if (may_grow) {
                uint32_t d =
                    SIM_MILLI_GPU - j->share_milli < step ? SIM_MILLI_GPU - j->share_milli : step;
                rc = grow_share(s, v, id, d, out);
            }
        } else if (may_throttle) {
            rc = sim_decide_set_share(out, id, pj->milli[t]);
        }
        if (rc != SIM_OK)
            return rc;
        id = next;
    }
    return SIM_OK;
}

/* A BE job shrunk for an LS job takes its predicted share back as far as the free share
 * of each of its GPUs allows; s->be_shrunk says whether one is still short. O(running),
 * only while a BE job is shrunk. */
static int restore_be(pred_state *s, const sim_view *v, policy_decisions *out)
{
    bool short_left = false;
    for (sim_job_id id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        const pjob *pj = sim_view_job_state(v, id);
        if (pj->ls || !j->gpus_per_replica || j->state != SIM_JOB_RUNNING ||
            j->share_milli >= pj->milli[pj->type])
            continue;
        uint32_t want = pj->milli[pj->type] - j->share_milli, d = want;
        for (uint32_t a = j->alloc_head; a != UINT32_MAX && d; a = v->allocs[a].next_in_job) {
            uint32_t f = sim_view_gpu_free_milli(v, v->allocs[a].gpu);
            if (f < d)
                d = f;
        }
        short_left = short_left || d < want;
        int rc = d ? sim_decide_set_share(out, id, j->share_milli + d) : SIM_OK;
        if (rc != SIM_OK)
            return rc;
    }
    s->be_shrunk = short_left;
    return SIM_OK;
}

/* ---- schedule ---------------------------------------------------------------------- */

/* Whether one-replica GPU job j, which fitted on no node at release epoch nowhere_at,
 * fits none of the nodes released since either: then it fits nowhere now, as every other
 * node only filled up, and its epoch moves to now. False when it cannot tell (no such
 * failure, a gang or a job with roles, or more releases since than nodes or than the
 * log holds). */
static bool released_nowhere(pred_state *s, const sim_view *v, const sim_job *j, pjob *pj)
{
    if (!search_on || !pj->nowhere || j->nominal_replicas != 1 || j->n_roles)
        return false;
    uint32_t n_rel;
    const uint32_t *rel = place_released_since(&s->ws, v, pj->nowhere_at, &n_rel);
    if (!rel)
        return false;
    for (uint32_t i = 0; i < n_rel; i++) {
        uint32_t f;
        if (node_eligible(s, v, j, pj, rel[i], &f))
            return false;
    }
    pj->nowhere_at = v->release_epoch;
    __atomic_fetch_add(&nowhere_skips, 1, __ATOMIC_RELAXED);
    return true;
}

/* A GPU job's placement by the control and worker steps, skipped for a one-replica job
 * that fitted nowhere and fits none of the nodes released since (released_nowhere);
 * a one-replica job whose search finds no node is remembered for that. */
static bool place_gpu_job(pred_state *s, const sim_view *v, sim_job_id id, sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    pjob *pj = sim_view_job_state(v, id);
    if (released_nowhere(s, v, j, pj))
        return false;
    bool placed = place_job(s, v, id, p);
    pj->nowhere = !placed && s->searched_nowhere && j->nominal_replicas == 1 && !j->n_roles;
    pj->nowhere_at = v->release_epoch;
    return placed;
}

/* The first pending job enqueued at or after upto (the list is in enqueue order), found
 * from the tail: O(those jobs). */
static sim_job_id pending_since(const sim_view *v, uint64_t upto)
{
    sim_job_id id = SIM_JOB_NONE;
    for (sim_job_id t = v->pending_tail;
         t != SIM_JOB_NONE && sim_view_job(v, t)->enqueue_seq >= upto;
         t = sim_view_job(v, t)->list_prev)
        id = t;
    return id;
}

/* Try the waiting jobs of one class (LS or BE) in queue order; without a release since
 * the last pass (not fresh) only those enqueued since it (at or after upto): the others
 * would fail again where they failed. */
static int try_pending(pred_state *s, const sim_view *v, policy_decisions *out, bool ls_pass,
                       bool fresh, uint64_t upto)
{
    for (sim_job_id id = fresh ? v->pending_head : pending_since(v, upto); id != SIM_JOB_NONE;) {
        const sim_job *j = sim_view_job(v, id);
        sim_job_id next = sim_view_next(v, id);
        pjob *pj = sim_view_job_state(v, id);
        if (!pj->predicted)
            predict_job(s, v, id);
        if (pj->featureless) {
            int rc = sim_decide_reject(out, id,
                                       "no execution features (batch_size, iterations, "
                                       "input_size) to predict from; give the trace "
                                       "columns or run with --zoo");
            if (rc != SIM_OK)
                return rc;
            id = next;
            continue;
        }
        if (pj->ls != ls_pass || (!fresh && j->enqueue_seq < upto)) {
            id = next;
            continue;
        }
        sim_placement p;
        bool placed =
            j->gpus_per_replica ? place_gpu_job(s, v, id, &p) : place_cpu_job(s, v, id, &p);
        if (!placed && j->gpus_per_replica && !pj->fit_checked) {
            pj->fit_checked = true;
            if (!gang_may_fit(s, v, j, pj)) {
                int rc = sim_decide_reject(out, id,
                                           "its predicted GPU memory leaves too few GPUs for "
                                           "its replicas, even on the empty cluster");
                if (rc != SIM_OK)
                    return rc;
                id = next;
                continue;
            }
        }
        if (!placed && ls_pass && s->evict && j->gpus_per_replica) {
            bool evicted;
            int rc = evict_for(s, v, id, out, &evicted);
            if (rc != SIM_OK)
                return rc;
            /* Evicted jobs went to the end of the pending list: `next` is still valid. */
            placed = evicted && place_job(s, v, id, &p);
        }
        if (placed) {
            int rc = start_job(s, v, id, &p, out);
            if (rc != SIM_OK)
                return rc;
        }
        id = next;
    }
    return SIM_OK;
}

static int pred_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    pred_state *s = st;
    if (!s->types_ready)
        resolve_types(s, v);
    int rc;
    if (s->next_monitor != SIM_TIME_NEVER && now >= s->next_monitor) {
        s->next_monitor =
            s->ls_running ? now + (sim_time)llround(s->monitor_s * 1e6) : SIM_TIME_NEVER;
        if (s->ls_running && (rc = monitor(s, v, out)) != SIM_OK)
            return rc;
    }
    /* A release since the last pass, or (for the BE pass) by the LS pass's evictions,
     * and every waiting job is tried. */
    uint64_t e0 = v->release_epoch;
    bool fresh = !search_on || !s->primed || e0 != s->epoch;
    uint64_t upto = s->enqueued_upto;
    /* Jobs enqueued from here on are new to the next pass (the ones enqueued before and
     * not waiting now do not matter: a job enqueued again gets a new stamp). */
    s->enqueued_upto = v->enqueue_count;
    if ((rc = try_pending(s, v, out, true, fresh, upto)) != SIM_OK ||
        (rc = try_pending(s, v, out, false, fresh || v->release_epoch != e0, upto)) != SIM_OK)
        return rc;
    /* Shrunk BE jobs take back what the waiting jobs left. */
    if (s->be_shrunk && (rc = restore_be(s, v, out)) != SIM_OK)
        return rc;
    /* Jobs evicted in this call were enqueued after `upto`: try them next time. The
     * epoch is the one this pass started from: a release made during it (an eviction)
     * makes the next pass try every waiting job, the LS ones included. */
    s->primed = true;
    s->epoch = e0;
    return SIM_OK;
}

static sim_time pred_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const pred_state *s = st;
    (void)v;
    (void)now;
    return s->ls_running ? s->next_monitor : SIM_TIME_NEVER;
}

const policy_ops policy_predictive = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "predictive",
    .summary = "predicted-demand placement: MLP-predicted shares per GPU type, LS before BE, "
               "BE eviction, QoS monitor",
    .state_size = sizeof(pred_state),
    .job_state_size = sizeof(pjob),
    .options = pred_options,
    .init = pred_init,
    .fini = pred_fini,
    .on_arrival = pred_on_arrival,
    .on_finish = pred_on_finish,
    .on_requeue = pred_on_requeue,
    .schedule = pred_schedule,
    .next_wakeup = pred_next_wakeup,
};
