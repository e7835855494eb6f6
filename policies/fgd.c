/*
 * fgd.c: Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation", USENIX
 * ATC 2023, §4, Algorithm 1). Jobs in arrival order with backfilling; each replica goes to
 * the node and GPUs that least increase the node's fragmentation for the run's target
 * workload (policies/frag.h). In a node, a fractional task tries each GPU it fits on (one
 * per distinct free share) and keeps the least fragmented result (ties: less free share,
 * then lowest index); several fractional GPUs are picked one at a time that way; whole
 * GPUs come from the idle ones, lowest index first. Node ties: lowest node id.
 *
 * A node's fragmentation depends only on its state (type, free CPU and memory, multiset
 * of free shares) and the workload version: values are cached by exact state (nodes of
 * up to 8 GPUs), and each node keeps its current value and, per task shape, its last
 * outcome until it or the workload changes. A hit returns exactly what a recomputation
 * would, so placements do not depend on the caches.
 *
 * score=reference: the reference simulator's FGDScore (policies/refscore.h). The
 * fragmentation is measured against the reference's typical tasks (the most popular
 * shapes covering 95 % of the target workload, host memory dropped), the node's score
 * is 100 x sigmoid(-(increase of fragmentation) / 1000 milli-GPU) truncated to an
 * integer, a fractional task takes the first GPU (device order) with the highest such
 * score, and node ties go to the node first in a random order of the nodes drawn once
 * from the run's seed (place_ws_set_random_ties).
 */
#include "policies/frag.h"
#include "policies/place.h"
#include "policies/refscore.h"

#include "base/alloc.h"

#include <string.h>

#define MEMO_MAX_GPUS 8u
#define RESULT_WAYS 16u       /* results kept per node (direct-mapped by task shape) */
#define RESULT_MAX_GPUS 16u  /* chosen GPUs are kept as 4-bit offsets in the node */

typedef struct memo_entry {
    uint64_t cpu_free, mem_free; /* key: free CPU (milli-cores) and memory (MiB) */
    uint64_t lo, hi;             /* key: sorted free shares, 16 bits each */
    uint64_t value;              /* weighted fragmentation (frag_node_weighted) */
    uint64_t version;            /* workload version + 1; 0 = empty */
    uint32_t meta;               /* key: GPU type << 8 | GPUs */
} memo_entry;

/* The outcome of placing one replica of a task shape on a node in a given state. */
typedef struct result_entry {
    uint64_t cpu_milli, mem_mib; /* key: the replica's CPU and memory */
    uint32_t gpus, milli;        /* key: its GPUs and share per GPU */
    uint32_t stamp;              /* the node's stamp when computed; 0 = empty */
    uint32_t offsets;            /* chosen GPUs (at most 8), 4 bits each from the first */
    int64_t delta;               /* increase of the node's weighted fragmentation */
} result_entry;

typedef struct fgd_state {
    place_ws ws;
    bool backfill;
    int score;                   /* PLACE_SCORE_OWN or PLACE_SCORE_REFERENCE */
    const frag_workload *wl;     /* the workload the fragmentation is measured against */
    const frag_workload *run_wl; /* the run's target workload */
    frag_workload *ref_wl;       /* reference: its typical tasks (owned) */
    uint64_t ref_src_version;    /* run_wl's version ref_wl was built from */
    uint32_t n_gpu_types;
    memo_entry *memo;   /* NULL when the cache is off */
    uint32_t memo_mask;
    uint32_t buf_cap;   /* entries of the per-node buffers below */
    uint32_t *cur;      /* free share of each GPU of the node evaluated, in node order */
    uint32_t *sorted;   /* the same, sorted */
    uint8_t *taken;     /* GPU already chosen for this replica */
    uint32_t *best;     /* chosen GPUs (global indices) */
    /* Each node's weighted fragmentation, with the state it was computed for. */
    uint64_t *node_frag;
    uint64_t *node_version; /* workload version + 1; 0 = none */
    uint64_t *node_cpu, *node_mem; /* CPU and memory used */
    uint32_t *gpu_used;     /* each GPU's used share */
    uint32_t *node_stamp;   /* changes whenever the node's state or the workload does */
    result_entry *results;  /* RESULT_WAYS per node */
} fgd_state;

static const policy_option fgd_options[] = {
    {"backfill", "true", "start later jobs when an earlier one does not fit"},
    {"cache", "131072", "entries of the node-fragmentation cache (a power of two; 0 = none)"},
    {"score", "clustersim",
     "clustersim: the least increase of fragmentation, exact; reference: the reference "
     "simulator's integer score against its typical tasks"},
    {NULL, NULL, NULL},
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* Weighted fragmentation of a node of type `type` with free CPU, memory and GPU shares
 * (free[0..G), any order). */
static uint64_t node_frag(fgd_state *s, uint16_t type, uint32_t G, uint64_t cpu, uint64_t mem,
                          const uint32_t *free)
{
    memcpy(s->sorted, free, G * sizeof *free);
    frag_sort_free(s->sorted, G);
    frag_node fn = {.gpu_type = type, .n_gpus = G, .cpu_free = cpu, .mem_free = mem,
                    .gpu_free = s->sorted};
    if (!s->memo || G > MEMO_MAX_GPUS)
        return frag_node_weighted(s->wl, &fn);
    uint64_t lo = 0, hi = 0;
    for (uint32_t k = 0; k < G; k++) {
        if (k < 4)
            lo |= (uint64_t)s->sorted[k] << (16 * k);
        else
            hi |= (uint64_t)s->sorted[k] << (16 * (k - 4));
    }
    uint32_t meta = (uint32_t)type << 8 | G;
    uint64_t version = frag_workload_version(s->wl) + 1;
    uint64_t h = mix64(cpu ^ mix64(mem ^ mix64(lo ^ mix64(hi ^ meta))));
    memo_entry *e = &s->memo[h & s->memo_mask];
    if (e->version == version && e->meta == meta && e->cpu_free == cpu && e->mem_free == mem &&
        e->lo == lo && e->hi == hi)
        return e->value;
    uint64_t value = frag_node_weighted(s->wl, &fn);
    *e = (memo_entry){.cpu_free = cpu, .mem_free = mem, .lo = lo, .hi = hi, .value = value,
                      .version = version, .meta = meta};
    return value;
}

/* The node's fragmentation now (free CPU cpu, memory mem; with tentative usage, GPU
 * shares s->cur): from the per-node cache when neither the node nor the workload changed
 * since it was computed, else computed (and s->cur filled from the view). Tentative usage
 * (a gang's earlier replicas) bypasses the cache. */
static uint64_t node_before(fgd_state *s, const sim_view *v, uint32_t n, uint64_t cpu,
                           uint64_t mem)
{
    uint32_t first = v->node_gpu_first[n], G = v->node_gpu_count[n];
    uint16_t type = v->node_gpu_type[n];
    if (s->ws.t_node[n])
        return node_frag(s, type, G, cpu, mem, s->cur);
    uint64_t version = frag_workload_version(s->wl) + 1;
    bool same = s->node_version[n] == version && s->node_cpu[n] == v->node_cpu_used[n] &&
                s->node_mem[n] == v->node_mem_used[n];
    for (uint32_t g = first; g < first + G && same; g++)
        same = s->gpu_used[g] == v->gpu_used_milli[g];
    if (same)
        return s->node_frag[n];
    for (uint32_t g = first; g < first + G; g++) {
        s->gpu_used[g] = v->gpu_used_milli[g];
        s->cur[g - first] = SIM_MILLI_GPU - v->gpu_used_milli[g];
    }
    s->node_cpu[n] = v->node_cpu_used[n];
    s->node_mem[n] = v->node_mem_used[n];
    s->node_version[n] = version;
    s->node_frag[n] = node_frag(s, type, G, cpu, mem, s->cur);
    if (++s->node_stamp[n] == 0)
        s->node_stamp[n] = 1;
    return s->node_frag[n];
}

/* The reference's integer score of a change of the weighted fragmentation (count x
 * milli-GPU over the typical tasks): per task, divided by their count. */
static int64_t ref_score_of(const fgd_state *s, int64_t delta)
{
    uint64_t total = frag_workload_total(s->wl);
    return ref_fgd_score(total ? (double)delta / (double)total : 0.0);
}

/*
 * The best placement of one replica of j on node n (where it fits): fills s->best with
 * its GPUs and returns the increase of the node's weighted fragmentation, or INT64_MAX
 * when the GPUs cannot be chosen. O(GPUs^2 x evaluations of the node).
 */
static int64_t place_eval(fgd_state *s, const sim_view *v, const sim_job *j, uint32_t n)
{
    enum { CAND = 0, TAKEN = 1, UNFIT = 2 };
    place_ws *w = &s->ws;
    uint32_t first = v->node_gpu_first[n], G = v->node_gpu_count[n];
    uint16_t type = v->node_gpu_type[n];
    uint32_t milli = place_milli(j, 0);
    uint64_t gmem = place_gmem(j, UINT64_MAX);
    uint32_t need = j->gpus_per_replica, fit = 0;
    for (uint32_t k = 0; k < G; k++) {
        s->cur[k] = SIM_MILLI_GPU - place_gpu_used(w, v, first + k);
        bool ok = need && place_gpu_fits(w, v, first + k, milli, gmem);
        s->taken[k] = ok ? CAND : UNFIT;
        fit += ok;
    }
    if (fit < need)
        return INT64_MAX;
    uint64_t cpu = place_cpu_free(w, v, n), mem = place_mem_free(w, v, n);
    uint64_t before = node_before(s, v, n, cpu, mem);
    cpu -= j->cpu_per_replica;
    mem -= j->mem_per_replica;
    if (milli == SIM_MILLI_GPU) {
        /* Whole GPUs fit only idle GPUs, which all give the same state: the first ones. */
        for (uint32_t k = 0, step = 0; step < need; k++)
            if (s->taken[k] == CAND) {
                s->cur[k] = 0;
                s->best[step++] = first + k;
            }
    }
    uint64_t after = need && milli < SIM_MILLI_GPU ? before
                                                   : node_frag(s, type, G, cpu, mem, s->cur);
    for (uint32_t step = 0; step < need && milli < SIM_MILLI_GPU; step++) {
        uint32_t best_k = UINT32_MAX;
        uint64_t best_f = UINT64_MAX;
        int64_t best_sc = INT64_MIN;
        for (uint32_t k = 0; k < G; k++) {
            if (s->taken[k] != CAND)
                continue;
            /* GPUs with equal free share give the same node state: try the first. */
            bool dup = false;
            for (uint32_t q = 0; q < k && !dup; q++)
                dup = s->taken[q] == CAND && s->cur[q] == s->cur[k];
            if (dup)
                continue;
            s->cur[k] -= milli;
            uint64_t f = node_frag(s, type, G, cpu, mem, s->cur);
            s->cur[k] += milli;
            if (s->score == PLACE_SCORE_REFERENCE) {
                /* The first GPU in device order with the highest integer score. */
                int64_t sc = ref_score_of(s, (int64_t)f - (int64_t)before);
                if (best_k == UINT32_MAX || sc > best_sc) {
                    best_f = f;
                    best_k = k;
                    best_sc = sc;
                }
            } else if (best_k == UINT32_MAX || f < best_f ||
                       (f == best_f && s->cur[k] < s->cur[best_k])) {
                best_f = f;
                best_k = k;
            }
        }
        s->taken[best_k] = TAKEN;
        s->cur[best_k] -= milli;
        s->best[step] = first + best_k;
        after = best_f;
    }
    return (int64_t)after - (int64_t)before;
}

/*
 * place_eval through the per-node results: a node whose state (and the workload) did not
 * change since a replica of the same shape was evaluated there gives the same result.
 * Only plain cases are kept (no tentative usage, no GPU memory request, few GPUs).
 * Fills s->best like place_eval.
 */
static int64_t eval_cached(fgd_state *s, const sim_view *v, const sim_job *j, uint32_t n)
{
    uint32_t G = v->node_gpu_count[n], need = j->gpus_per_replica;
    uint32_t milli = place_milli(j, 0);
    if (s->ws.t_node[n] || place_gmem(j, UINT64_MAX) || G > RESULT_MAX_GPUS || need > 8)
        return place_eval(s, v, j, n);
    node_before(s, v, n, v->node_cpu_total[n] - v->node_cpu_used[n],
                v->node_mem_total[n] - v->node_mem_used[n]);
    uint64_t h = mix64(j->cpu_per_replica ^ mix64(j->mem_per_replica ^
                                                  ((uint64_t)need << 32 | milli)));
    result_entry *e = &s->results[(size_t)n * RESULT_WAYS + (h & (RESULT_WAYS - 1))];
    uint32_t first = v->node_gpu_first[n];
    if (e->stamp == s->node_stamp[n] && e->cpu_milli == j->cpu_per_replica &&
        e->mem_mib == j->mem_per_replica && e->gpus == need && e->milli == milli) {
        for (uint32_t k = 0; k < need; k++)
            s->best[k] = first + ((e->offsets >> (4 * k)) & 15u);
        return e->delta;
    }
    int64_t delta = place_eval(s, v, j, n);
    uint32_t offsets = 0;
    for (uint32_t k = 0; k < need && delta != INT64_MAX; k++)
        offsets |= (s->best[k] - first) << (4 * k);
    *e = (result_entry){.cpu_milli = j->cpu_per_replica, .mem_mib = j->mem_per_replica,
                        .gpus = need, .milli = milli, .stamp = s->node_stamp[n],
                        .offsets = offsets, .delta = delta};
    return delta;
}

static double fgd_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    fgd_state *s = ctx;
    int64_t delta = eval_cached(s, v, j, n);
    if (delta == INT64_MAX)
        return -1e300;
    return s->score == PLACE_SCORE_REFERENCE ? (double)ref_score_of(s, delta) : -(double)delta;
}

static bool fgd_pick(void *ctx, place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                     uint32_t milli, uint64_t gmem, uint32_t *out)
{
    (void)w;
    (void)milli;
    (void)gmem;
    fgd_state *s = ctx;
    if (eval_cached(s, v, j, n) == INT64_MAX)
        return false;
    memcpy(out, s->best, j->gpus_per_replica * sizeof *out);
    return true;
}

static void fgd_fini(void *st)
{
    fgd_state *s = st;
    place_ws_fini(&s->ws);
    sim_free(s->memo);
    sim_free(s->cur);
    sim_free(s->sorted);
    sim_free(s->taken);
    sim_free(s->best);
    sim_free(s->node_frag);
    sim_free(s->node_version);
    sim_free(s->node_cpu);
    sim_free(s->node_mem);
    sim_free(s->gpu_used);
    sim_free(s->node_stamp);
    sim_free(s->results);
    frag_workload_destroy(s->ref_wl);
    s->ref_wl = NULL;
    s->node_stamp = NULL;
    s->results = NULL;
    s->node_frag = s->node_version = s->node_cpu = s->node_mem = NULL;
    s->gpu_used = NULL;
    s->memo = NULL;
    s->cur = s->sorted = s->best = NULL;
    s->taken = NULL;
}

static int fgd_init(void *st, const policy_config *cfg, sim_diag *d)
{
    fgd_state *s = st;
    uint64_t cache;
    int rc = policy_config_bool(cfg, fgd_options, "backfill", &s->backfill, d);
    if (rc == SIM_OK)
        rc = policy_config_u64(cfg, fgd_options, "cache", 0, UINT64_C(1) << 26, &cache, d);
    if (rc == SIM_OK)
        rc = policy_config_choice(cfg, fgd_options, "score", place_score_choices, &s->score, d);
    if (rc != SIM_OK)
        return rc;
    if (cache & (cache - 1))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy 'fgd': option 'cache': expected 0 or a power of two, got %llu",
                            (unsigned long long)cache);
    if (!cfg->workload)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy 'fgd' needs the run's target workload (task shapes and "
                            "their popularity), and none was given");
    s->wl = s->run_wl = cfg->workload;
    s->n_gpu_types = cfg->n_gpu_types;
    if (s->score == PLACE_SCORE_REFERENCE) {
        if ((rc = ref_typical_workload(s->run_wl, s->n_gpu_types, &s->ref_wl)) != SIM_OK)
            return sim_diag_set(d, rc, NULL, 0, 0, "out of memory");
        s->ref_src_version = frag_workload_version(s->run_wl);
        s->wl = s->ref_wl;
    }
    if ((rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK) {
        frag_workload_destroy(s->ref_wl);
        s->ref_wl = NULL;
        return rc;
    }
    if (s->score == PLACE_SCORE_REFERENCE &&
        (rc = place_ws_set_random_ties(&s->ws, cfg->seed, d)) != SIM_OK) {
        fgd_fini(s);
        return rc;
    }
    /* A node's score is a function of its state, except that the reference's choice of
     * several fractional GPUs (the first in device order among equal integer scores)
     * depends on the order of its GPUs: those replicas scan every node. */
    if ((rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, s->score != PLACE_SCORE_REFERENCE, d)) !=
        SIM_OK) {
        fgd_fini(s);
        return rc;
    }
    s->buf_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->cur = sim_calloc(s->buf_cap, sizeof *s->cur);
    s->sorted = sim_calloc(s->buf_cap, sizeof *s->sorted);
    s->taken = sim_calloc(s->buf_cap, sizeof *s->taken);
    s->best = sim_calloc(s->buf_cap, sizeof *s->best);
    uint32_t nn = cfg->n_nodes ? cfg->n_nodes : 1;
    s->node_frag = sim_calloc(nn, sizeof *s->node_frag);
    s->node_version = sim_calloc(nn, sizeof *s->node_version);
    s->node_cpu = sim_calloc(nn, sizeof *s->node_cpu);
    s->node_mem = sim_calloc(nn, sizeof *s->node_mem);
    s->gpu_used = sim_calloc(s->buf_cap, sizeof *s->gpu_used);
    s->node_stamp = sim_calloc(nn, sizeof *s->node_stamp);
    s->results = sim_calloc((size_t)nn * RESULT_WAYS, sizeof *s->results);
    if (cache) {
        s->memo = sim_calloc(cache, sizeof *s->memo);
        s->memo_mask = (uint32_t)(cache - 1);
    }
    if (!s->cur || !s->sorted || !s->taken || !s->best || !s->node_frag || !s->node_version ||
        !s->node_cpu || !s->node_mem || !s->gpu_used || !s->node_stamp || !s->results ||
        (cache && !s->memo)) {
        fgd_fini(s);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    place_ws_set_pick(&s->ws, fgd_pick, s);
    return SIM_OK;
}

static int fgd_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    fgd_state *s = st;
    if (s->score == PLACE_SCORE_REFERENCE &&
        frag_workload_version(s->run_wl) != s->ref_src_version) {
        /* The run's workload grew: rebuild the typical tasks, and forget every value
         * computed against the old ones (the new workload's versions restart). */
        frag_workload *nw = NULL;
        int rc = ref_typical_workload(s->run_wl, s->n_gpu_types, &nw);
        if (rc != SIM_OK)
            return rc;
        frag_workload_destroy(s->ref_wl);
        s->ref_wl = nw;
        s->wl = nw;
        s->ref_src_version = frag_workload_version(s->run_wl);
        uint32_t nn = s->ws.n_nodes ? s->ws.n_nodes : 1;
        memset(s->node_version, 0, nn * sizeof *s->node_version);
        memset(s->node_stamp, 0, nn * sizeof *s->node_stamp);
        memset(s->results, 0, (size_t)nn * RESULT_WAYS * sizeof *s->results);
        if (s->memo)
            memset(s->memo, 0, ((size_t)s->memo_mask + 1) * sizeof *s->memo);
    }
    return place_pass_run(&s->ws, v, out, 0, fgd_score, s, PLACE_GPU_MOST_USED,
                          !s->backfill);
}

const policy_ops policy_fgd = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "fgd",
    .needs_workload = true,
    .summary = "fragmentation gradient descent: the node and GPUs that least increase "
               "fragmentation for the target workload (Weng et al., ATC'23)",
    .state_size = sizeof(fgd_state),
    .options = fgd_options,
    .init = fgd_init,
    .fini = fgd_fini,
    .schedule = fgd_schedule,
};
