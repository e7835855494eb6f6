/*
 * place.c: feasibility and gang placement over the view's struct-of-arrays. The common
 * case, one replica, touches no tentative state; multi-replica jobs record what each
 * chosen replica takes so the next replica sees it, and undo it at the end.
 */
#include "policies/place.h"

#include "base/alloc.h"

#include <gsl/gsl_rng.h>
#include <string.h>

static void score_memo_free(place_ws *w)
{
    if (w->score_rows)
        for (uint32_t r = 0; r < w->req_n; r++)
            sim_free(w->score_rows[r]);
    sim_free(w->score_rows);
    sim_free(w->req_keys);
    sim_free(w->req_table);
    w->score_rows = NULL;
    w->req_keys = NULL;
    w->req_table = NULL;
    w->req_n = 0;
}

int place_ws_init(place_ws *w, const policy_config *cfg, sim_diag *d)
{
    memset(w, 0, sizeof *w);
    w->n_nodes = cfg->n_nodes;
    w->n_gpus = cfg->n_gpus;
    w->max_slots = cfg->n_gpus > cfg->n_nodes ? cfg->n_gpus : cfg->n_nodes;
    if (w->max_slots < 1)
        w->max_slots = 1;
    w->t_cpu = sim_calloc(w->n_nodes, sizeof *w->t_cpu);
    w->t_mem = sim_calloc(w->n_nodes, sizeof *w->t_mem);
    w->t_node = sim_calloc(w->n_nodes, sizeof *w->t_node);
    w->t_milli = sim_calloc(w->n_gpus, sizeof *w->t_milli);
    w->t_gmem = sim_calloc(w->n_gpus, sizeof *w->t_gmem);
    w->nodes = sim_calloc(w->max_slots, sizeof *w->nodes);
    w->gpus = sim_calloc(w->max_slots, sizeof *w->gpus);
    w->cand = sim_calloc(w->max_slots, sizeof *w->cand);
    w->cand_nodes = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->cand_nodes);
    w->block_order = sim_calloc(w->n_nodes / SIM_NODE_BLOCK + 1, sizeof *w->block_order);
    w->fit_nodes = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->fit_nodes);
    w->gang_heap = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->gang_heap);
    w->role_cap = w->max_slots + 1;
    w->role_nodes = sim_calloc(w->role_cap, sizeof *w->role_nodes);
    if (!w->role_nodes || !w->t_cpu || !w->t_mem || !w->t_node || !w->t_milli || !w->t_gmem ||
        !w->nodes || !w->gpus || !w->cand || !w->cand_nodes || !w->block_order || !w->fit_nodes ||
        !w->gang_heap) {
        place_ws_fini(w);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    return SIM_OK;
}

void place_ws_fini(place_ws *w)
{
    sim_free(w->t_cpu);
    sim_free(w->t_mem);
    sim_free(w->t_node);
    sim_free(w->t_milli);
    sim_free(w->t_gmem);
    sim_free(w->nodes);
    sim_free(w->gpus);
    sim_free(w->cand);
    sim_free(w->cand_nodes);
    sim_free(w->block_order);
    sim_free(w->fit_nodes);
    sim_free(w->gang_heap);
    sim_free(w->role_nodes);
    score_memo_free(w);
    sim_free(w->memo_epoch);
    sim_free(w->memo_q);
    sim_free(w->memo_milli);
    sim_free(w->memo_room);
    sim_free(w->memo_gen);
    sim_free(w->memo_set);
    sim_free(w->heap_key);
    sim_free(w->heap_key2);
    sim_free(w->heap_shape);
    sim_free(w->rank);
    sim_free(w->hidden);
    sim_free(w->touched);
    sim_free(w->run_fit);
    place_groups_fini(&w->groups);
    memset(w, 0, sizeof *w);
}

static bool grouping_on = true;

void place_grouping_enable(bool on)
{
    grouping_on = on;
}

static bool cpu_blocks_on = true, block_search_on = true;

void place_block_search_enable(bool on)
{
    block_search_on = on;
}

static bool gang_room_on = true;

void place_gang_room_enable(bool on)
{
    gang_room_on = on;
}

void place_cpu_blocks_enable(bool on)
{
    cpu_blocks_on = on;
}

int place_ws_set_groups(place_ws *w, const policy_config *cfg, place_gpu_tag tag, void *ctx,
                        bool frac_gangs, sim_diag *d)
{
    place_groups_fini(&w->groups);
    w->use_groups = false;
    score_memo_free(w); /* it knew the old groups' slots */
    if (!cfg->max_gpus_per_node && cfg->n_gpus)
        return SIM_OK;
    if (place_groups_init(&w->groups, cfg->n_nodes, cfg->max_gpus_per_node, w->rank, tag, ctx) !=
        SIM_OK)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    sim_free(w->hidden);
    sim_free(w->touched);
    sim_free(w->run_fit);
    w->hidden = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->hidden);
    w->touched = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->touched);
    w->run_fit = sim_calloc(w->n_nodes / 32 + 1, sizeof *w->run_fit);
    if (!w->hidden || !w->touched || !w->run_fit) {
        place_groups_fini(&w->groups);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    w->use_groups = true;
    w->group_frac_gangs = frac_gangs;
    return SIM_OK;
}

int place_ws_set_score_memo(place_ws *w, sim_diag *d)
{
    if (!w->use_groups || w->score_rows)
        return SIM_OK;
    w->score_rows = sim_calloc(PLACE_MEMO_REQUESTS, sizeof *w->score_rows);
    w->req_keys = sim_calloc(PLACE_MEMO_REQUESTS, sizeof *w->req_keys);
    w->req_table = sim_calloc(2 * PLACE_MEMO_REQUESTS, sizeof *w->req_table);
    w->req_n = 0;
    if (!w->score_rows || !w->req_keys || !w->req_table) {
        score_memo_free(w);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    return SIM_OK;
}

void place_ws_set_pick(place_ws *w, place_gpu_pick pick, void *ctx)
{
    w->pick = pick;
    w->pick_ctx = ctx;
}

uint32_t place_milli(const sim_job *j, uint32_t milli)
{
    return milli ? milli : j->spec.gpu_milli;
}

uint64_t place_gmem(const sim_job *j, uint64_t gmem)
{
    return gmem == UINT64_MAX ? j->spec.gpu_mem_mib : gmem;
}

static inline bool gpu_fits(const place_ws *w, const sim_view *v, uint32_t g, uint32_t milli,
                            uint64_t gmem, bool tent)
{
    /* Tentative usage is the job's own earlier replicas: a placement may not name a GPU
     * twice, so a GPU one of them holds is taken. */
    if (tent && w->t_milli[g])
        return false;
    uint32_t used = v->gpu_used_milli[g] + (tent ? w->t_milli[g] : 0);
    uint64_t umem = v->gpu_used_mem[g] + (tent ? w->t_gmem[g] : 0);
    return used + milli <= SIM_MILLI_GPU && umem + gmem <= v->gpu_mem_total[g];
}

bool place_gpu_fits(const place_ws *w, const sim_view *v, uint32_t g, uint32_t milli, uint64_t gmem)
{
    return gpu_fits(w, v, g, milli, gmem, w->t_node[v->gpu_node[g]]);
}

uint64_t place_node_used_milli(const place_ws *w, const sim_view *v, uint32_t n)
{
    uint64_t used = v->node_used_milli[n];
    if (w->t_node[n]) {
        uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
        for (uint32_t g = first; g < end; g++)
            used += w->t_milli[g];
    }
    return used;
}

bool place_fits(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                uint64_t gmem)
{
    const sim_node_sum *ns = &v->node_sum[n];
    if (!ns->up)
        return false;
    bool tent = w->t_node[n];
    uint64_t tc = tent ? w->t_cpu[n] : 0, tm = tent ? w->t_mem[n] : 0;
    if (ns->cpu_free < tc + j->cpu_per_replica || ns->mem_free < tm + j->mem_per_replica)
        return false;
    uint32_t need = j->gpus_per_replica;
    if (!need)
        return true;
    if (ns->gpu_count < need || !sim_job_type_ok(j, ns->gpu_type) || ns->max_free_milli < milli)
        return false;
    if (!tent && gmem == 0) {
        if (milli == SIM_MILLI_GPU)
            return ns->free_gpus >= need;
        /* The GPU with the most free share fits, and one GPU is all the job needs. */
        if (need == 1)
            return true;
    }
    uint32_t first = v->node_gpu_first[n], end = first + ns->gpu_count, ok = 0;
    for (uint32_t g = first; g < end && ok < need; g++)
        ok += gpu_fits(w, v, g, milli, gmem, tent);
    return ok >= need;
}

bool place_pick_gpus(place_ws *w, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                     uint64_t gmem, place_gpu_order order, uint32_t *out)
{
    uint32_t need = j->gpus_per_replica;
    bool tent = w->t_node[n];
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n], k = 0;
    for (uint32_t g = first; g < end; g++)
        if (gpu_fits(w, v, g, milli, gmem, tent))
            w->cand[k++] = g;
    if (k < need)
        return false;
    if (order == PLACE_GPU_RANDOM) {
        /* Partial Fisher-Yates: the first `need` candidates become a uniform sample. */
        for (uint32_t i = 0; i < need; i++) {
            uint32_t r = i + (uint32_t)gsl_rng_uniform_int(v->rng, k - i);
            uint32_t t = w->cand[i];
            w->cand[i] = w->cand[r];
            w->cand[r] = t;
        }
    } else if (order != PLACE_GPU_FIRST) {
        /* Selection of the `need` best by used share; stable on GPU index. */
        for (uint32_t i = 0; i < need; i++) {
            uint32_t best = i;
            for (uint32_t c = i + 1; c < k; c++) {
                uint32_t uc = v->gpu_used_milli[w->cand[c]] + (tent ? w->t_milli[w->cand[c]] : 0);
                uint32_t ub =
                    v->gpu_used_milli[w->cand[best]] + (tent ? w->t_milli[w->cand[best]] : 0);
                bool better = order == PLACE_GPU_MOST_USED ? uc > ub : uc < ub;
                if (better || (uc == ub && w->cand[c] < w->cand[best]))
                    best = c;
            }
            uint32_t t = w->cand[i];
            w->cand[i] = w->cand[best];
            w->cand[best] = t;
        }
    }
    memcpy(out, w->cand, need * sizeof *out);
    return true;
}

/* Whether node summary ns can host the replica, ignoring tentative usage and GPU memory,
 * and (for fractional multi-GPU replicas) assuming the shares sit on enough GPUs: a
 * necessary condition, and an exact one for whole-GPU or one-GPU replicas without GPU
 * memory. Evaluated without short-circuits, so the scan has one branch per node. */
static inline bool quick_fit(const sim_node_sum *ns, const place_fitq *q)
{
    bool ok = ns->up & (ns->cpu_free >= q->cpu) & (ns->mem_free >= q->mem);
    if (!q->need)
        return ok;
    ok &= (ns->gpu_count >= q->need) & (bool)((q->mask >> ns->gpu_type) & 1u) &
          (ns->max_free_milli >= q->milli);
    if (q->whole)
        ok &= ns->free_gpus >= q->need;
    return ok;
}

/* Whether any node of block b might host a replica of j at share milli. A necessary
 * condition only: the block's maxima may come from different nodes. */
static inline bool block_may_fit(const sim_view *v, uint32_t b, const sim_job *j, uint32_t milli)
{
    if (v->block_max_cpu_free[b] < j->cpu_per_replica ||
        v->block_max_mem_free[b] < j->mem_per_replica)
        return false;
    uint64_t types = v->block_types[b];
    if (!j->gpus_per_replica)
        return types != 0;
    uint64_t want = j->spec.gpu_type_mask ? j->spec.gpu_type_mask : ~UINT64_C(1);
    if (!(types & want) || v->block_max_free_milli[b] < milli)
        return false;
    return milli < SIM_MILLI_GPU || v->block_max_free_gpus[b] >= j->gpus_per_replica;
}

static void add_tentative(place_ws *w, const sim_job *j, uint32_t n, const uint32_t *gpus,
                          uint32_t milli, uint64_t gmem)
{
    w->t_node[n] = 1;
    w->t_cpu[n] += j->cpu_per_replica;
    w->t_mem[n] += j->mem_per_replica;
    for (uint32_t k = 0; k < j->gpus_per_replica; k++) {
        w->t_milli[gpus[k]] += milli;
        w->t_gmem[gpus[k]] += gmem;
    }
}

static void clear_tentative(place_ws *w, const sim_job *j, uint32_t replicas)
{
    for (uint32_t r = 0; r < replicas; r++) {
        uint32_t n = w->nodes[r];
        w->t_node[n] = 0;
        w->t_cpu[n] = 0;
        w->t_mem[n] = 0;
        for (uint32_t k = 0; k < j->gpus_per_replica; k++) {
            uint32_t g = w->gpus[r * j->gpus_per_replica + k];
            w->t_milli[g] = 0;
            w->t_gmem[g] = 0;
        }
    }
}

/* Whether node n is better than best for binpack: a larger allocated fraction of GPU
 * share, compared exactly as used[n] x count[best] > used[best] x count[n]; ties go to
 * the lower node id. */
static inline bool more_allocated(const sim_view *v, uint32_t n, uint32_t best)
{
    if (best == UINT32_MAX)
        return true;
    const sim_node_sum *a = &v->node_sum[n], *b = &v->node_sum[best];
    uint64_t lhs = (uint64_t)a->used_milli * b->gpu_count;
    uint64_t rhs = (uint64_t)b->used_milli * a->gpu_count;
    return lhs > rhs || (lhs == rhs && n < best);
}

static inline double alloc_frac(const sim_view *v, uint32_t n)
{
    const sim_node_sum *ns = &v->node_sum[n];
    return (double)ns->used_milli / (1000.0 * (double)ns->gpu_count);
}

/* The node search of one replica. */
typedef struct search {
    place_ws *w;
    const sim_view *v;
    const sim_job *j;
    place_fitq q;
    uint32_t milli;
    uint64_t gmem;
    bool exact; /* quick_fit decides alone */
} search;

/* The request of one replica of j at share m and GPU memory gm (both 0 without GPUs). */
static place_fitq replica_q(const sim_job *j, uint32_t m, uint64_t gm)
{
    return (place_fitq){.cpu = j->cpu_per_replica,
                        .mem = j->mem_per_replica,
                        .mask = j->spec.gpu_type_mask ? j->spec.gpu_type_mask : ~UINT64_C(0),
                        .need = j->gpus_per_replica,
                        .milli = m,
                        .whole = m == SIM_MILLI_GPU && gm == 0};
}

static inline bool node_fits(const search *s, uint32_t n)
{
    return quick_fit(&s->v->node_sum[n], &s->q) &&
           (s->exact || place_fits(s->w, s->v, s->j, n, s->milli, s->gmem));
}

/*
 * Binpack's search: blocks in decreasing order of the best allocated fraction any of
 * their nodes could offer this replica, stopping at the first block that cannot beat
 * the best node found. Exact: the same node as a scan of every node.
 */
/* The allocated fraction of node n's CPU, as place_score_most_allocated scores a
 * CPU-only replica. */
static inline double cpu_frac(const sim_view *v, uint32_t n)
{
    return v->node_cpu_total[n] ? (double)v->node_cpu_used[n] / (double)v->node_cpu_total[n] : 0;
}

/* Whether node n is better than best (of fraction best_frac) for a CPU-only replica
 * under binpack's score: a larger allocated fraction of CPU; ties go to the lower id. */
static inline bool more_cpu_allocated(const sim_view *v, uint32_t n, uint32_t best,
                                      double best_frac)
{
    double f = cpu_frac(v, n);
    return best == UINT32_MAX || f > best_frac || (f == best_frac && n < best);
}

/* Blocks a search of binpack's finds by a scan of order[] before it builds a heap. */
#define SCANS_BEFORE_HEAP 4u

/* Whether block bound a comes before b in a search's order: a larger bound, then the
 * lower block. */
static inline bool order_before(const block_bound *a, const block_bound *b)
{
    return a->bound > b->bound || (a->bound == b->bound && a->block < b->block);
}

/* Sift entry i of the heap order[0..k) (first in order at the root) down to its place. */
static void order_sift(block_bound *order, uint32_t k, uint32_t i)
{
    block_bound e = order[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= k)
            break;
        if (c + 1 < k && order_before(&order[c + 1], &order[c]))
            c++;
        if (!order_before(&order[c], &e))
            break;
        order[i] = order[c];
        i = c;
    }
    order[i] = e;
}

/* The next block of a search that has made SCANS_BEFORE_HEAP selections, taken out of
 * order[0..*k) and its bound in *tb; UINT32_MAX when none is left. The first call
 * (`build`) keeps the blocks not visited yet (bound not -1) and makes them a heap. Kept
 * out of line: most searches never come here. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint32_t
heap_next(block_bound *order, uint32_t *k, bool build, double *tb)
{
    if (build) {
        uint32_t left = 0;
        for (uint32_t c = 0; c < *k; c++)
            if (order[c].bound >= 0)
                order[left++] = order[c];
        *k = left;
        for (uint32_t c = left / 2; c-- > 0;)
            order_sift(order, left, c);
    }
    if (*k == 0)
        return UINT32_MAX;
    uint32_t blk = order[0].block;
    *tb = order[0].bound;
    order[0] = order[--*k];
    order_sift(order, *k, 0);
    return blk;
}

/* Start a walk (block_walk in place.h; of GPU share, or of CPU for a CPU-only replica) for s's
 * replica: every block whose bound admits some node; whether its nodes may hold the replica
 * (block_may_fit) is asked only of the blocks visited, which are few. The first block is found on
 * the way. */
static inline void walk_init(const search *s, block_walk *bw)
{
    const sim_view *v = s->v;
    block_bound *order = s->w->block_order;
    bool cpu = !s->j->gpus_per_replica;
    bool whole = s->milli == SIM_MILLI_GPU;
    uint32_t tier = whole ? (s->q.need < SIM_FRAC_WHOLE ? s->q.need : SIM_FRAC_WHOLE) - 1
                          : (s->milli / 100 < SIM_FRAC_SHARE ? s->milli / 100 : SIM_FRAC_SHARE - 1);
    /* Block b's bound is bounds[b * stride]. */
    const double *bounds = cpu     ? v->block_max_cpu_frac
                           : whole ? v->block_frac_whole + tier
                                   : v->block_frac_share + tier;
    size_t stride = cpu ? 1 : whole ? SIM_FRAC_WHOLE : SIM_FRAC_SHARE;
    uint32_t k = 0, top = UINT32_MAX;
    double tb = -1;
    for (uint32_t b = 0; b < v->n_blocks; b++) {
        double bound = bounds[b * stride];
        order[k].bound = bound;
        order[k].block = b;
        bool gt = bound > tb;
        tb = gt ? bound : tb;
        top = gt ? k : top;
        k += bound >= 0;
    }
    *bw = (block_walk){.k = k, .pick = 0, .top = top, .tb = tb};
}

/* The walk's next block, its bound in bw->tb; UINT32_MAX when none is left. A search
 * usually stops after a block or two, and the next few are found by selections over
 * order[] (in block order, a block taken has its bound set to -1) rather than by a
 * branch per block. But it visits many where the bound (GPU shares only) meets nodes
 * short of CPU or memory, or of the GPUs a gang's earlier replicas took: past the first
 * few, the blocks left come from a heap (heap_next), lest a scan for each make the
 * search quadratic in the blocks. */
static inline uint32_t walk_next(place_ws *w, block_walk *bw)
{
    block_bound *order = w->block_order;
    uint32_t blk = UINT32_MAX;
    if (bw->pick <= SCANS_BEFORE_HEAP) {
        if (bw->pick > 0) {
            bw->top = UINT32_MAX;
            bw->tb = -1;
            for (uint32_t c = 0; c < bw->k; c++) {
                bool gt = order[c].bound > bw->tb;
                bw->tb = gt ? order[c].bound : bw->tb;
                bw->top = gt ? c : bw->top;
            }
        }
        if (bw->top != UINT32_MAX) {
            blk = order[bw->top].block;
            order[bw->top].bound = -1;
        }
    } else {
        bool build = bw->pick == SCANS_BEFORE_HEAP + 1;
        w->block_heaps += build;
        blk = heap_next(order, &bw->k, build, &bw->tb);
    }
    /* A call that finds none counts too: a gang's later replicas may ask again, and the
     * heap is built once. */
    bw->pick++;
    return blk;
}

/* Whether a block of bound tb whose first node is first can hold no node better than
 * best (of fraction best_frac): later blocks offer at most tb, and on a tie their nodes
 * have higher ids. */
static inline bool walk_done(uint32_t best, double best_frac, double tb, uint32_t first)
{
    return best != UINT32_MAX && (tb < best_frac || (tb == best_frac && first > best));
}

/* Binpack's search: blocks in walk order, stopping when no later block can beat the
 * best node found. */
static uint32_t search_most_allocated(const search *s)
{
    const sim_view *v = s->v;
    sim_view_sync_blocks(v);
    bool cpu = !s->j->gpus_per_replica;
    uint32_t tier =
        (uint32_t)(s->milli == SIM_MILLI_GPU
                       ? (s->q.need < SIM_FRAC_WHOLE ? s->q.need : SIM_FRAC_WHOLE) - 1
                       : SIM_FRAC_WHOLE + (s->milli / 100 < SIM_FRAC_SHARE ? s->milli / 100
                                                                           : SIM_FRAC_SHARE - 1));
    block_walk bw;
    walk_init(s, &bw);
    uint32_t best = UINT32_MAX;
    double best_frac = -1;
    for (;;) {
        uint32_t blk = walk_next(s->w, &bw);
        if (blk == UINT32_MAX || walk_done(best, best_frac, bw.tb, blk * SIM_NODE_BLOCK))
            break;
        if (!block_may_fit(v, blk, s->j, s->milli))
            continue;
        /* The block's quarters the same way: a quarter whose bound cannot beat the best
         * node found is not scanned. */
        const sim_quarter_sum *qs = v->block_quarter + 4 * (size_t)blk;
        for (uint32_t q = 0; q < 4; q++) {
            uint32_t lo = blk * SIM_NODE_BLOCK + q * SIM_NODE_QUARTER;
            uint32_t hi = lo + SIM_NODE_QUARTER < v->n_nodes ? lo + SIM_NODE_QUARTER : v->n_nodes;
            double qb = cpu ? qs[q].max_cpu_frac : qs[q].frac[tier];
            if (qb < 0 || walk_done(best, best_frac, qb, lo))
                continue;
            for (uint32_t n = lo; n < hi; n++) {
                if (!node_fits(s, n))
                    continue;
                if (cpu ? more_cpu_allocated(v, n, best, best_frac) : more_allocated(v, n, best)) {
                    best = n;
                    best_frac = cpu ? cpu_frac(v, n) : alloc_frac(v, n);
                }
            }
        }
    }
    return best;
}

/* Whether node a comes before node b in binpack's order for s's replica. */
static inline bool binpack_before(const search *s, uint32_t a, uint32_t b)
{
    return s->j->gpus_per_replica ? more_allocated(s->v, a, b)
                                  : more_cpu_allocated(s->v, a, b, cpu_frac(s->v, b));
}

/* The heap of a binpack gang's fitting nodes (best at the root): sift entry i up or
 * down. */
static void gang_heap_up(const search *s, uint32_t i)
{
    uint32_t *h = s->w->gang_heap, e = h[i];
    while (i > 0 && binpack_before(s, e, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static void gang_heap_down(const search *s, uint32_t i)
{
    uint32_t *h = s->w->gang_heap, n = s->w->gang_heap_n, e = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && binpack_before(s, h[c + 1], h[c]))
            c++;
        if (!binpack_before(s, h[c], e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/*
 * Binpack's search for replica r of a gang, resumed from the search of replica r - 1.
 * During a gang's search the view does not change and the nodes that fit only shrink
 * (the gang's tentative usage grows), so binpack's order of the nodes is fixed and each
 * replica's node is the first in that order that still fits. The walk over the blocks
 * goes on where the last replica's stopped, and the fitting nodes of the blocks it
 * visited wait in a heap in that order: a node that no longer fits leaves it for good.
 * Each block is visited once per gang, where a search per replica visited again the
 * blocks whose nodes the gang's earlier replicas took. Exact: the same node as
 * search_most_allocated.
 */
static uint32_t search_most_allocated_gang(const search *s, uint32_t r)
{
    place_ws *w = s->w;
    const sim_view *v = s->v;
    bool cpu = !s->j->gpus_per_replica;
    if (r == 0) {
        sim_view_sync_blocks(v);
        walk_init(s, &w->gang_walk);
        w->gang_heap_n = 0;
        w->gang_pend = UINT32_MAX;
    }
    for (;;) {
        while (w->gang_heap_n && !node_fits(s, w->gang_heap[0])) {
            w->gang_heap[0] = w->gang_heap[--w->gang_heap_n];
            if (w->gang_heap_n)
                gang_heap_down(s, 0);
        }
        uint32_t best = w->gang_heap_n ? w->gang_heap[0] : UINT32_MAX;
        double best_frac = best == UINT32_MAX ? -1 : cpu ? cpu_frac(v, best) : alloc_frac(v, best);
        /* The next block, kept when it is not visited yet (a later replica may need it). */
        if (w->gang_pend == UINT32_MAX)
            w->gang_pend = walk_next(w, &w->gang_walk);
        uint32_t blk = w->gang_pend;
        if (blk == UINT32_MAX || walk_done(best, best_frac, w->gang_walk.tb, blk * SIM_NODE_BLOCK))
            return best;
        w->gang_pend = UINT32_MAX;
        if (!block_may_fit(v, blk, s->j, s->milli))
            continue;
        uint32_t lo = blk * SIM_NODE_BLOCK;
        uint32_t hi = lo + SIM_NODE_BLOCK < v->n_nodes ? lo + SIM_NODE_BLOCK : v->n_nodes;
        for (uint32_t n = lo; n < hi; n++)
            if (node_fits(s, n)) {
                w->gang_heap[w->gang_heap_n++] = n;
                gang_heap_up(s, w->gang_heap_n - 1);
            }
    }
}

/* Every other search: each candidate node (or every node, skipping blocks that cannot
 * host the replica), keeping the best score; score NULL picks uniformly at random. */
static uint32_t search_scan(const search *s, place_node_score score, void *ctx,
                            const uint32_t *cands, uint32_t n_cands)
{
    const sim_view *v = s->v;
    bool binpack = score == place_score_most_allocated && s->q.need;
    uint32_t best = UINT32_MAX, seen = 0;
    double best_score = 0;
    uint32_t count = cands ? n_cands : v->n_nodes;
    if (!cands)
        sim_view_sync_blocks(v);
    for (uint32_t c = 0; c < count; c++) {
        uint32_t n = cands ? cands[c] : c;
        if (!cands && n % SIM_NODE_BLOCK == 0 &&
            !block_may_fit(v, n / SIM_NODE_BLOCK, s->j, s->milli)) {
            c += SIM_NODE_BLOCK - 1;
            continue;
        }
        if (!node_fits(s, n))
            continue;
        if (binpack) {
            if (more_allocated(v, n, best))
                best = n;
        } else if (!score) {
            s->w->fit_nodes[seen++] = n;
        } else {
            double sc = score(ctx, v, s->j, n);
            if (best == UINT32_MAX || sc > best_score ||
                (sc == best_score && (s->w->rank ? s->w->rank[n] < s->w->rank[best] : n < best))) {
                best = n;
                best_score = sc;
            }
        }
    }
    /* No score: a node drawn uniformly among those that fit (one draw per replica). */
    if (!score && seen)
        best = s->w->fit_nodes[gsl_rng_uniform_int(v->rng, seen)];
    return best;
}

/* The number of j's replica request in the workspace's table, numbered at its first
 * sight; PLACE_MEMO_NONE once the table is full. */
static uint32_t request_number(place_ws *w, const sim_job *j)
{
    place_request r = {.cpu = j->cpu_per_replica,
                       .mem = j->mem_per_replica,
                       .gmem = j->spec.gpu_mem_mib,
                       .mask = j->spec.gpu_type_mask,
                       .gpus = j->gpus_per_replica,
                       .milli = j->spec.gpu_milli};
    uint64_t h = UINT64_C(1469598103934665603);
    const uint64_t f[6] = {r.cpu, r.mem, r.gmem, r.mask, r.gpus, r.milli};
    for (int i = 0; i < 6; i++)
        h = (h ^ f[i]) * UINT64_C(1099511628211);
    uint32_t mask = 2 * PLACE_MEMO_REQUESTS - 1;
    for (uint32_t i = (uint32_t)(h ^ h >> 32) & mask;; i = (i + 1) & mask) {
        uint32_t e = w->req_table[i];
        if (!e) {
            if (w->req_n == PLACE_MEMO_REQUESTS)
                return PLACE_MEMO_NONE;
            w->req_keys[w->req_n] = r;
            w->req_table[i] = ++w->req_n;
            return w->req_n - 1;
        }
        const place_request *k = &w->req_keys[e - 1];
        if (k->cpu == r.cpu && k->mem == r.mem && k->gmem == r.gmem && k->mask == r.mask &&
            k->gpus == r.gpus && k->milli == r.milli)
            return e - 1;
    }
}

/* The scores of request `req` by group slot, allocated at its first use (one entry per
 * slot; slots are reused lowest first, so the pages of slots never live stay untouched);
 * NULL when out of memory. */
static place_score_entry *score_row(place_ws *w, uint32_t req)
{
    if (!w->score_rows[req])
        w->score_rows[req] = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof **w->score_rows);
    return w->score_rows[req];
}

/* The score of group slot `slot` (first member n) for the job of the search: from the
 * request's row when it was computed there for the slot's present state. */
static double group_score(const search *s, place_node_score score, void *ctx,
                          place_score_entry *row, uint32_t slot, uint32_t n)
{
    if (!row)
        return score(ctx, s->v, s->j, n);
    place_score_entry *e = &row[slot];
    uint32_t gen = place_groups_gen(&s->w->groups, slot);
    if (e->gen != gen) {
        e->gen = gen;
        e->score = score(ctx, s->v, s->j, n);
    } else {
        s->w->score_hits++;
    }
    return e->score;
}

/* The same search as search_scan over every node, one node per group: each group's
 * first member (least tie key) stands for the group, since its members fit and score
 * alike (and a remembered score is the one it would compute). */
static uint32_t search_groups(const search *s, place_node_score score, void *ctx, uint32_t r)
{
    const place_groups *g = &s->w->groups;
    const uint32_t *rank = s->w->rank;
    const sim_view *v = s->v;
    const sim_job *j = s->j;
    bool binpack = score == place_score_most_allocated && s->q.need;
    uint32_t *fit = s->w->fit_nodes, m = 0;
    if (r >= 1) {
        /* A gang's later replica: the groups' states do not change during its search,
         * they only lose members to it, so the list of the replica before stands (the
         * groups whose members fit, tentative usage aside), less the groups emptied
         * since. */
        for (uint32_t i = 0; i < s->w->gang_fit_n; i++) {
            fit[m] = fit[i];
            m += g->size[fit[i]] != 0;
        }
    } else {
        /* The groups that fit, gathered without a branch per group (whether one fits is
         * as good as random to the branch predictor), then scored. */
        for (uint32_t i = 0; i < g->n_live; i++) {
            uint32_t slot = g->live[i];
            fit[m] = slot;
            m += quick_fit(place_groups_sum(g, slot), &s->q);
        }
        if (!s->exact) {
            uint32_t k = 0;
            for (uint32_t i = 0; i < m; i++)
                if (place_fits(s->w, v, j, place_groups_first(g, fit[i]), s->milli, s->gmem))
                    fit[k++] = fit[i];
            m = k;
        }
    }
    s->w->gang_fit_n = m;
    place_score_entry *row = NULL;
    if (s->w->score_rows && m) {
        uint32_t req = request_number(s->w, j);
        if (req != PLACE_MEMO_NONE)
            row = score_row(s->w, req);
    }
    uint32_t best = UINT32_MAX, best_tie = 0;
    double best_score = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t n = place_groups_first(g, fit[i]);
        if (binpack) {
            if (more_allocated(v, n, best))
                best = n;
            continue;
        }
        double sc = group_score(s, score, ctx, row, fit[i], n);
        uint32_t tie = rank ? rank[n] : n;
        if (best == UINT32_MAX || sc > best_score || (sc == best_score && tie < best_tie)) {
            best = n;
            best_score = sc;
            best_tie = tie;
        }
    }
    /* The nodes that hold a gang's earlier replicas are out of their groups (gang_hide):
     * each is weighed on its own, with what those replicas take. One that no longer fits
     * never will again in this gang (its tentative usage only grows) and leaves the list;
     * the order of the list does not matter, ties going by tie key. */
    place_ws *w = s->w;
    for (uint32_t i = 0; i < w->n_touched;) {
        uint32_t n = w->touched[i];
        if (!node_fits(s, n)) {
            w->touched[i] = w->touched[--w->n_touched];
            continue;
        }
        i++;
        if (binpack) {
            if (more_allocated(v, n, best))
                best = n;
            continue;
        }
        double sc = score(ctx, v, j, n);
        uint32_t tie = rank ? rank[n] : n;
        if (best == UINT32_MAX || sc > best_score || (sc == best_score && tie < best_tie)) {
            best = n;
            best_score = sc;
            best_tie = tie;
        }
    }
    return best;
}

/* The fitting nodes among nodes n..n+31, counted without a branch per node (whether a
 * node fits is as good as random to the branch predictor): fits by group slot, ng the
 * nodes' groups. */
static uint32_t run_fits(const uint32_t *fits, const uint32_t *ng, uint32_t n)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < 32; i++)
        c += fits[ng[n + i]];
    return c;
}

/* The uniform draw of search_scan (no score, every node) by group: each group's first
 * member says whether its members fit; the draw among their count is the same, and the
 * node drawn is found by counting the fitting nodes in id order, one group look-up each
 * (group fit flags in fit_nodes, by group slot). */
static uint32_t search_groups_random(const search *s)
{
    const place_groups *g = &s->w->groups;
    uint32_t *fits = s->w->fit_nodes;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < g->n_live; i++) {
        uint32_t slot = g->live[i];
        uint32_t n = place_groups_first(g, slot);
        /* Without a branch on the common exact check (see search_groups). */
        uint32_t ok = s->exact ? quick_fit(place_groups_sum(g, slot), &s->q) : node_fits(s, n);
        fits[slot] = ok;
        seen += g->size[slot] & (0u - ok);
    }
    if (!seen)
        return UINT32_MAX;
    uint32_t k = (uint32_t)gsl_rng_uniform_int(s->v->rng, seen);
    /* The k-th fitting node in node order: whole runs of 32 nodes are counted
     * (run_fits), then the run that holds it is walked. From the nearer end: the
     * (seen - 1 - k)-th from the last when k is in the upper half. */
    const uint32_t *ng = g->node_group;
    uint32_t n_nodes = s->v->n_nodes;
    if (k < seen - k) {
        uint32_t n = 0;
        for (; n + 32 <= n_nodes; n += 32) {
            uint32_t c = run_fits(fits, ng, n);
            if (k < c)
                break;
            k -= c;
        }
        for (; n < n_nodes; n++)
            if (fits[ng[n]] && k-- == 0)
                return n;
    } else {
        uint32_t r = seen - 1 - k, n = n_nodes;
        for (; n % 32; n--) /* the nodes after the last whole run */
            if (fits[ng[n - 1]] && r-- == 0)
                return n - 1;
        for (; n >= 32; n -= 32) {
            uint32_t c = run_fits(fits, ng, n - 32);
            if (r < c)
                break;
            r -= c;
        }
        for (; n-- > 0;)
            if (fits[ng[n]] && r-- == 0)
                return n;
    }
    return UINT32_MAX; /* not reached: the groups hold `seen` fitting nodes */
}

/* Whether node n fits the replica of a random gang's later draw: by its group's flag
 * from the first draw, unless it holds earlier replicas (tentative usage). */
static inline uint32_t gang_node_fits(const search *s, uint32_t n)
{
    return s->w->t_node[n] ? node_fits(s, n) : s->w->fit_nodes[s->w->groups.node_group[n]];
}

/* Replica r >= 1 of a random gang: the same draw as search_scan over every node. Since
 * the first draw (search_groups_random, whose group flags stay in fit_nodes) only the
 * nodes holding the gang's replicas changed, by their tentative usage; so the fitting
 * nodes are counted per run of 32 ids once, and each later replica takes out the node
 * the one before it took if that node no longer fits (its usage only grows). The k-th
 * fitting node is then found through the runs' counts: O(nodes / 32) a replica. */
static uint32_t search_gang_random(const search *s, uint32_t r)
{
    place_ws *w = s->w;
    uint32_t n_nodes = s->v->n_nodes;
    if (r == 1) {
        const uint32_t *fits = w->fit_nodes, *ng = w->groups.node_group;
        w->gang_seen = 0;
        for (uint32_t n = 0; n < n_nodes; n += 32) {
            uint32_t c = 0;
            if (n + 32 <= n_nodes)
                c = run_fits(fits, ng, n);
            else
                for (uint32_t m = n; m < n_nodes; m++)
                    c += fits[ng[m]];
            w->run_fit[n / 32] = c;
            w->gang_seen += c;
        }
    }
    uint32_t last = w->nodes[r - 1];
    if (!node_fits(s, last)) {
        w->run_fit[last / 32]--;
        w->gang_seen--;
    }
    if (!w->gang_seen)
        return UINT32_MAX;
    uint32_t k = (uint32_t)gsl_rng_uniform_int(s->v->rng, w->gang_seen);
    uint32_t n = 0;
    for (; k >= w->run_fit[n / 32]; n += 32)
        k -= w->run_fit[n / 32];
    for (; n < n_nodes; n++)
        if (gang_node_fits(s, n) && k-- == 0)
            return n;
    return UINT32_MAX; /* not reached: the runs hold gang_seen fitting nodes */
}

/* Whether the first replica of j may be searched by group: a scoring search or the
 * random draw, whose policy asked for groups, on a view with a change log. Binpack's own search
 * visits blocks of 32 nodes by their bound, which beats the groups unless the nodes are in far
 * fewer states than there are blocks; both choose the same node. */
static bool groups_apply(place_ws *w, const sim_view *v, const sim_job *j, uint32_t milli,
                         place_node_score score)
{
    if (!w->use_groups || !grouping_on || !v->change_ring)
        return false;
    if (score == place_score_most_allocated && j->gpus_per_replica &&
        (w->groups.built ? w->groups.n_live * 2 > v->n_blocks : v->n_blocks < 64))
        return false;
    if (!w->group_frac_gangs && j->gpus_per_replica > 1 && milli < SIM_MILLI_GPU)
        return false;
    if (!w->groups.built && !place_groups_fit_view(&w->groups, v)) {
        w->use_groups = false;
        return false;
    }
    return true;
}

bool place_gang(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli, uint64_t gmem,
                place_node_score score, void *ctx, place_gpu_order order, const uint32_t *cands,
                uint32_t n_cands, sim_placement *out)
{
    return place_gang_n(w, v, id, sim_view_job(v, id)->nominal_replicas, milli, gmem, score, ctx,
                        order, cands, n_cands, out);
}

/* Mark (or unmark) the GPUs placed job j holds as tentative usage of the workspace, so
 * that gpu_fits treats them as taken, as it does those of a gang's earlier replicas. */
static void mark_held(place_ws *w, const sim_view *v, const sim_job *j, bool on)
{
    for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
        const sim_alloc_rec *r = &v->allocs[a];
        if (r->gpu == SIM_GPU_NONE)
            continue;
        w->t_node[r->node] = on;
        w->t_milli[r->gpu] = on ? r->milli : 0;
    }
}

/* Node n now holds one of the gang's replicas: the first time, it leaves its group for
 * the rest of the gang's search (search_groups weighs it on its own). */
static void gang_hide(place_ws *w, uint32_t n)
{
    if (w->t_node[n])
        return;
    place_groups_hide(&w->groups, n);
    w->hidden[w->n_hidden++] = n;
    w->touched[w->n_touched++] = n;
}

/* The gang's search is over: its nodes go back to their groups. */
static void gang_unhide(place_ws *w)
{
    for (uint32_t i = 0; i < w->n_hidden; i++)
        place_groups_unhide(&w->groups, w->hidden[i]);
    w->n_hidden = w->n_touched = 0;
}

bool place_gang_n(place_ws *w, const sim_view *v, sim_job_id id, uint32_t R, uint32_t milli,
                  uint64_t gmem, place_node_score score, void *ctx, place_gpu_order order,
                  const uint32_t *cands, uint32_t n_cands, sim_placement *out)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t m = place_milli(j, milli);
    uint64_t gm = place_gmem(j, gmem);
    uint32_t gpr = j->gpus_per_replica;
    if (!gpr)
        m = 0, gm = 0;
    if ((uint64_t)R * (gpr ? gpr : 1) > w->max_slots || R > w->max_slots)
        return false;
    search s = {.w = w, .v = v, .j = j, .q = replica_q(j, m, gm), .milli = m, .gmem = gm};
    uint32_t placed = 0;
    bool ok = true;
    /* A placed job that grows (sim_decide_grow) holds GPUs already, and two replicas of
     * one job never share a GPU: its GPUs are taken, and every node is checked against
     * them (the compact checks and the groups do not see them). */
    bool held = gpr && j->alloc_head != UINT32_MAX;
    if (held)
        mark_held(w, v, j, true);
    bool grouped = !held && groups_apply(w, v, j, m, score);
    /* A scored gang's later replicas search by group too, the nodes of its earlier ones
     * weighed apart (they are what tentative usage changes): O(groups) a replica instead
     * of O(nodes). The random draw's later replicas count the first draw's fitting
     * nodes again (search_gang_random). */
    bool gang_groups = grouped && score && !cands && R > 1;
    bool gang_random = grouped && !score && !cands && R > 1;
    for (uint32_t r = 0; r < R; r++) {
        /* Before the first replica is chosen no tentative usage exists, so the compact
         * check is exact whenever the GPU loop is not needed. */
        s.exact = !held && r == 0 && gm == 0 && (s.q.whole || gpr <= 1);
        uint32_t best;
        /* A short list of candidates is cheaper to scan than the groups (whose count
         * may be stale here: either search chooses the same node). */
        if (grouped && r == 0 && !score && !cands) {
            /* The random draw among candidates goes in their order: they are scanned. */
            place_groups_sync(&w->groups, v);
            best = search_groups_random(&s);
        } else if (grouped && r == 0 && score && (!cands || n_cands > w->groups.n_live)) {
            place_groups_sync(&w->groups, v);
            best = search_groups(&s, score, ctx, 0);
        } else if (gang_groups) {
            best = search_groups(&s, score, ctx, r); /* synced for the first replica */
        } else if (gang_random && r > 0) {
            best = search_gang_random(&s, r);
        } else if (score == place_score_most_allocated && !cands && block_search_on &&
                   (gpr || (cpu_blocks_on && !w->rank))) {
            best = R > 1 ? search_most_allocated_gang(&s, r) : search_most_allocated(&s);
        } else
            best = search_scan(&s, score, ctx, cands, n_cands);
        uint32_t *gpus = w->gpus + r * gpr;
        bool picked = best != UINT32_MAX &&
                      (!gpr || (w->pick ? w->pick(w->pick_ctx, w, v, j, best, m, gm, gpus)
                                        : place_pick_gpus(w, v, j, best, m, gm, order, gpus)));
        if (!picked) {
            ok = false;
            break;
        }
        w->nodes[r] = best;
        placed++;
        if (gang_groups && r + 1 < R)
            gang_hide(w, best);
        if (R > 1)
            add_tentative(w, j, best, w->gpus + r * gpr, m, gm);
    }
    if (gang_groups)
        gang_unhide(w);
    if (R > 1)
        clear_tentative(w, j, placed);
    if (held)
        mark_held(w, v, j, false);
    if (!ok)
        return false;
    out->replicas = R;
    out->nodes = w->nodes;
    out->gpus = gpr ? w->gpus : NULL;
    out->milli = gpr ? m : 0;
    out->gpu_mem_mib = gm;
    out->roles = 0;
    out->role_nodes = NULL;
    if (j->n_roles && j->state == SIM_JOB_PENDING)
        return place_roles(w, v, id, out, cands, n_cands);
    return true;
}

bool place_roles(place_ws *w, const sim_view *v, sim_job_id id, sim_placement *p,
                 const uint32_t *cands, uint32_t n_cands)
{
    const sim_job *j = sim_view_job(v, id);
    p->roles = 0;
    p->role_nodes = NULL;
    if (!j->n_roles)
        return true;
    if (j->n_roles > w->role_cap)
        return false;
    /* The trainers' CPU and memory, then each role's, as tentative usage. */
    for (uint32_t r = 0; r < p->replicas; r++) {
        w->t_cpu[p->nodes[r]] += j->cpu_per_replica;
        w->t_mem[p->nodes[r]] += j->mem_per_replica;
    }
    uint32_t placed = 0;
    uint32_t count = cands ? n_cands : v->n_nodes;
    for (uint32_t r = 0; r < j->n_roles; r++) {
        uint64_t cpu = sim_job_role_cpu(j, r), mem = sim_job_role_mem(j, r);
        uint32_t best = UINT32_MAX;
        uint64_t best_free = 0;
        for (uint32_t c = 0; c < count; c++) {
            uint32_t n = cands ? cands[c] : c;
            const sim_node_sum *ns = &v->node_sum[n];
            if (!ns->up || ns->cpu_free < w->t_cpu[n] + cpu || ns->mem_free < w->t_mem[n] + mem)
                continue;
            uint64_t left = ns->cpu_free - w->t_cpu[n] - cpu;
            if (best == UINT32_MAX || left > best_free || (left == best_free && n < best)) {
                best = n;
                best_free = left;
            }
        }
        if (best == UINT32_MAX)
            break;
        w->role_nodes[r] = best;
        w->t_cpu[best] += cpu;
        w->t_mem[best] += mem;
        placed++;
    }
    for (uint32_t r = 0; r < p->replicas; r++)
        w->t_cpu[p->nodes[r]] = w->t_mem[p->nodes[r]] = 0;
    for (uint32_t r = 0; r < placed; r++)
        w->t_cpu[w->role_nodes[r]] = w->t_mem[w->role_nodes[r]] = 0;
    if (placed < j->n_roles)
        return false;
    p->roles = j->n_roles;
    p->role_nodes = w->role_nodes;
    return true;
}

int place_rank_draw(uint64_t seed, uint32_t n, uint32_t *rank)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return SIM_ENOMEM;
    gsl_rng_set(r, seed);
    for (uint32_t i = 0; i < n; i++)
        rank[i] = i;
    /* Fisher-Yates from the top. */
    for (uint32_t i = n; i > 1; i--) {
        uint32_t k = (uint32_t)gsl_rng_uniform_int(r, i);
        uint32_t t = rank[i - 1];
        rank[i - 1] = rank[k];
        rank[k] = t;
    }
    gsl_rng_free(r);
    return SIM_OK;
}

int place_ws_set_random_ties(place_ws *w, uint64_t seed, sim_diag *d)
{
    sim_free(w->rank);
    w->rank = sim_calloc(w->n_nodes ? w->n_nodes : 1, sizeof *w->rank);
    if (!w->rank || place_rank_draw(seed, w->n_nodes, w->rank) != SIM_OK)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

const char *const place_score_choices[] = {"clustersim", "reference", NULL};

void place_ref_view(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                    uint32_t *buf, ref_node *node, ref_pod *pod)
{
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n];
    for (uint32_t k = 0; k < cnt; k++)
        buf[k] = SIM_MILLI_GPU - place_gpu_used(w, v, first + k);
    node->cpu_left = place_cpu_free(w, v, n);
    node->n_gpus = cnt;
    node->gpu_left = buf;
    pod->cpu = j->cpu_per_replica;
    pod->gpus = j->gpus_per_replica;
    pod->milli = j->gpus_per_replica ? place_milli(j, 0) : 0;
}

double place_score_most_allocated(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    (void)ctx;
    if (j->gpus_per_replica)
        return (double)v->node_used_milli[n] / (1000.0 * (double)v->node_gpu_count[n]);
    return cpu_frac(v, n);
}

int place_memo_reserve(place_ws *w, const sim_view *v)
{
    if (v->n_shapes <= w->memo_cap)
        return SIM_OK;
    uint32_t ncap = v->n_shapes;
    uint64_t *ne = sim_reallocarray(w->memo_epoch, ncap, sizeof *ne);
    if (!ne)
        return SIM_ENOMEM;
    w->memo_epoch = ne;
    uint32_t *ng = sim_reallocarray(w->memo_gen, ncap, sizeof *ng);
    if (!ng)
        return SIM_ENOMEM;
    w->memo_gen = ng;
    uint8_t *ns = sim_reallocarray(w->memo_set, ncap, 1);
    if (!ns)
        return SIM_ENOMEM;
    w->memo_set = ns;
    place_fitq *nq = sim_reallocarray(w->memo_q, ncap, sizeof *nq);
    if (!nq)
        return SIM_ENOMEM;
    w->memo_q = nq;
    uint32_t *nm = sim_reallocarray(w->memo_milli, ncap, sizeof *nm);
    if (!nm)
        return SIM_ENOMEM;
    w->memo_milli = nm;
    uint32_t *nr = sim_reallocarray(w->memo_room, ncap, sizeof *nr);
    if (!nr)
        return SIM_ENOMEM;
    w->memo_room = nr;
    uint64_t *hk = sim_reallocarray(w->heap_key, ncap, sizeof *hk);
    if (!hk)
        return SIM_ENOMEM;
    w->heap_key = hk;
    uint64_t *hk2 = sim_reallocarray(w->heap_key2, ncap, sizeof *hk2);
    if (!hk2)
        return SIM_ENOMEM;
    w->heap_key2 = hk2;
    uint32_t *hs = sim_reallocarray(w->heap_shape, ncap, sizeof *hs);
    if (!hs)
        return SIM_ENOMEM;
    w->heap_shape = hs;
    memset(w->memo_set + w->memo_cap, 0, ncap - w->memo_cap);
    w->memo_cap = ncap;
    return SIM_OK;
}

static bool memo_valid(const place_ws *w, const sim_view *v, uint32_t s)
{
    return s < w->memo_cap && w->memo_set[s] && w->memo_gen[s] == v->shape_gen[s];
}

void place_memo_fail(place_ws *w, const sim_view *v, uint32_t s)
{
    if (s >= w->memo_cap)
        return;
    w->memo_set[s] = 1;
    w->memo_gen[s] = v->shape_gen[s];
    w->memo_epoch[s] = v->release_epoch;
}

const uint32_t *place_candidates(place_ws *w, const sim_view *v, uint32_t s, uint32_t *n)
{
    return memo_valid(w, v, s) ? place_released_since(w, v, w->memo_epoch[s], n) : NULL;
}

const uint32_t *place_released_since(place_ws *w, const sim_view *v, uint64_t since, uint32_t *n)
{
    uint64_t now = v->release_epoch;
    /* Walking the log costs one step per release; past n_nodes steps a full scan is
     * cheaper, and past the ring's length the log no longer covers the interval. */
    if (now - since > SIM_RELEASE_RING || now - since > v->n_nodes)
        return NULL;
    uint32_t k = 0;
    for (uint64_t ep = since + 1; ep <= now; ep++) {
        uint32_t node = v->release_ring[ep % SIM_RELEASE_RING];
        /* Count each node once: at its latest release. */
        if (v->node_release_epoch[node] == ep)
            w->cand_nodes[k++] = node;
    }
    *n = k;
    return w->cand_nodes;
}

/* The shapes' heap, ordered by (key, key2); keys are unique, so the order is total. */
static bool heap_less(const place_ws *w, uint32_t a, uint64_t k, uint64_t k2)
{
    return w->heap_key[a] < k || (w->heap_key[a] == k && w->heap_key2[a] < k2);
}

static void heap_push(place_ws *w, uint64_t key, uint64_t key2, uint32_t shape)
{
    uint32_t i = w->heap_n++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (heap_less(w, p, key, key2))
            break;
        w->heap_key[i] = w->heap_key[p];
        w->heap_key2[i] = w->heap_key2[p];
        w->heap_shape[i] = w->heap_shape[p];
        i = p;
    }
    w->heap_key[i] = key;
    w->heap_key2[i] = key2;
    w->heap_shape[i] = shape;
}

static uint32_t heap_pop(place_ws *w)
{
    uint32_t top = w->heap_shape[0];
    uint32_t n = --w->heap_n;
    uint64_t key = w->heap_key[n], key2 = w->heap_key2[n];
    uint32_t shape = w->heap_shape[n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_less(w, c + 1, w->heap_key[c], w->heap_key2[c]))
            c++;
        if (!heap_less(w, c, key, key2))
            break;
        w->heap_key[i] = w->heap_key[c];
        w->heap_key2[i] = w->heap_key2[c];
        w->heap_shape[i] = w->heap_shape[c];
        i = c;
    }
    if (n) {
        w->heap_key[i] = key;
        w->heap_key2[i] = key2;
        w->heap_shape[i] = shape;
    }
    return top;
}

/* An upper bound on the replicas of request q that node n could hold at once, capped at
 * cap: its CPU, its memory and its GPUs with q's share free each bound them (a gang's
 * replicas never share a GPU; GPU memory is left out, which only loosens the bound). */
static uint32_t node_room(const sim_view *v, const place_fitq *q, uint32_t n, uint32_t cap)
{
    const sim_node_sum *ns = &v->node_sum[n];
    if (!quick_fit(ns, q))
        return 0;
    uint64_t room = cap;
    if (q->cpu && ns->cpu_free / q->cpu < room)
        room = ns->cpu_free / q->cpu;
    if (q->mem && ns->mem_free / q->mem < room)
        room = ns->mem_free / q->mem;
    if (q->need) {
        uint32_t gpus = ns->free_gpus;
        if (q->milli < SIM_MILLI_GPU) {
            uint32_t first = v->node_gpu_first[n];
            gpus = 0;
            for (uint32_t g = first; g < first + ns->gpu_count; g++)
                gpus += v->gpu_used_milli[g] + q->milli <= SIM_MILLI_GPU;
        }
        if (gpus / q->need < room)
            room = gpus / q->need;
    }
    return (uint32_t)room;
}

/* The bound of node_room summed over the up nodes (blocks that cannot host one replica
 * skipped), capped at cap. */
static uint32_t cluster_room(const sim_view *v, const sim_job *j, const place_fitq *q, uint32_t cap)
{
    sim_view_sync_blocks(v);
    uint64_t room = 0;
    for (uint32_t n = 0; n < v->n_nodes && room < cap; n++) {
        if (n % SIM_NODE_BLOCK == 0 && !block_may_fit(v, n / SIM_NODE_BLOCK, j, q->milli)) {
            n += SIM_NODE_BLOCK - 1;
            continue;
        }
        room += node_room(v, q, n, cap);
    }
    return room < cap ? (uint32_t)room : cap;
}

/* Whether gang j, whose shape failed at its last try, would fail now: the room it had
 * then (an upper bound) plus the room of every node released since, where a node's room
 * can have grown, is short of its replicas; or else the room measured afresh is. When it
 * is, the room is carried to now and the shape recorded as failed now. */
static bool gang_no_room(place_ws *w, const sim_view *v, const sim_job *j, uint32_t milli)
{
    uint32_t s = j->shape, replicas = j->nominal_replicas;
    if (w->memo_set[s] != 3 || w->memo_milli[s] != milli)
        return false;
    uint32_t n;
    const uint32_t *c = place_candidates(w, v, s, &n);
    uint64_t room = c ? w->memo_room[s] : replicas;
    for (uint32_t i = 0; c && i < n && room < replicas; i++)
        room += node_room(v, &w->memo_q[s], c[i], replicas);
    /* The sum counts a node released since twice (its room then and now), and the log
     * may not reach back far enough: a measure of every node costs less than a search
     * that fails. */
    if (room >= replicas)
        room = cluster_room(v, j, &w->memo_q[s], replicas);
    if (room >= replicas)
        return false;
    w->memo_room[s] = (uint32_t)room;
    w->memo_epoch[s] = v->release_epoch;
    return true;
}

/* Try to start job id; on failure remember that its shape fits nowhere. */
bool place_shape_try(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli,
                     place_node_score score, void *ctx, place_gpu_order order, sim_placement *p)
{
    const sim_job *j = sim_view_job(v, id);
    if (memo_valid(w, v, j->shape) && w->memo_epoch[j->shape] == v->release_epoch)
        return false;
    /* A skipped search would have failed: the placements are the same, except that under
     * the random draw the replicas such a search placed before failing no longer draw. */
    bool one = j->nominal_replicas == 1 && !j->n_roles;
    bool gang = j->nominal_replicas > 1 && j->alloc_head == UINT32_MAX && gang_room_on;
    if (gang && memo_valid(w, v, j->shape) && gang_no_room(w, v, j, milli)) {
        w->room_skips++;
        return false;
    }
    uint32_t n_cands = 0;
    /* A gang that failed may have had room for some of its replicas on nodes released
     * since, so the candidate restriction holds only for one-replica jobs (without a
     * master and parameter servers, which may have been what did not fit). */
    const uint32_t *cands = one ? place_candidates(w, v, j->shape, &n_cands) : NULL;
    if ((cands && n_cands == 0) ||
        !place_gang(w, v, id, milli, UINT64_MAX, score, ctx, order, cands, n_cands, p)) {
        place_memo_fail(w, v, j->shape);
        if ((one || gang) && j->shape < w->memo_cap) {
            bool gpus = j->gpus_per_replica > 0;
            w->memo_q[j->shape] = replica_q(j, gpus ? place_milli(j, milli) : 0,
                                            gpus ? place_gmem(j, UINT64_MAX) : 0);
            w->memo_milli[j->shape] = milli;
            w->memo_set[j->shape] = one ? 2 : 3;
            /* A gang: the room its nodes have now, for later tries to carry forward. */
            if (gang)
                w->memo_room[j->shape] =
                    cluster_room(v, j, &w->memo_q[j->shape], j->nominal_replicas);
        }
        return false;
    }
    return true;
}

/* Whether shape s, which fitted nowhere at its last try, fits none of the nodes released
 * since either (quick_fit is a necessary condition); false when it cannot tell. */
static bool released_no_fit(place_ws *w, const sim_view *v, uint32_t s, uint32_t milli)
{
    if (w->memo_set[s] != 2 || w->memo_milli[s] != milli)
        return false;
    uint32_t n;
    const uint32_t *c = place_candidates(w, v, s, &n);
    if (!c)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (quick_fit(&v->node_sum[c[i]], &w->memo_q[s]))
            return false;
    return true;
}

static int try_start(place_ws *w, const sim_view *v, policy_decisions *out, sim_job_id id,
                     uint32_t milli, place_node_score score, void *ctx, place_gpu_order order,
                     bool *started)
{
    sim_placement p;
    *started = place_shape_try(w, v, id, milli, score, ctx, order, &p);
    return *started ? sim_decide_start(out, id, &p) : SIM_OK;
}

/* Enqueue order: the engine's per-shape lists. */
static sim_job_id enqueue_head(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key,
                               uint64_t *key2)
{
    (void)ctx;
    sim_job_id id = v->shape_head[shape];
    if (id != SIM_JOB_NONE) {
        *key = sim_view_job(v, id)->enqueue_seq;
        *key2 = 0;
    }
    return id;
}

static const place_order enqueue_order = {.head = enqueue_head};

int place_pass_run(place_ws *w, const sim_view *v, policy_decisions *out, uint32_t milli,
                   place_node_score score, void *ctx, place_gpu_order order, bool strict)
{
    if (strict) {
        /* FIFO: only the oldest pending job may start; stop at the first failure. */
        if (place_memo_reserve(w, v) != SIM_OK)
            return SIM_ENOMEM;
        while (v->pending_head != SIM_JOB_NONE) {
            sim_job_id id = v->pending_head;
            uint32_t s = sim_view_job(v, id)->shape;
            if (memo_valid(w, v, s) && w->memo_epoch[s] == v->release_epoch)
                break;
            /* The next in line is read if this one starts. */
            sim_view_prefetch_job(v, sim_view_next(v, id));
            bool started;
            int st = try_start(w, v, out, id, milli, score, ctx, order, &started);
            if (st != SIM_OK)
                return st;
            if (!started)
                break;
        }
        return SIM_OK;
    }
    return place_pass_run_ordered(w, v, out, milli, score, ctx, order, false, &enqueue_order);
}

int place_pass_run_ordered(place_ws *w, const sim_view *v, policy_decisions *out, uint32_t milli,
                           place_node_score score, void *ctx, place_gpu_order order, bool strict,
                           const place_order *q)
{
    if (place_memo_reserve(w, v) != SIM_OK)
        return SIM_ENOMEM;
    /* Merge the shapes' queues by the order's key, dropping a shape at its first failure
     * (or, strict, stopping there). Shapes that failed with nothing released since are
     * not even entered. */
    w->heap_n = 0;
    uint64_t k, k2;
    for (uint32_t i = 0; i < v->n_active_shapes; i++) {
        uint32_t s = v->active_shapes[i];
        if (memo_valid(w, v, s) && w->memo_epoch[s] == v->release_epoch) {
            if (strict && q->head(q->ctx, v, s, &k, &k2) != SIM_JOB_NONE)
                heap_push(w, k, k2, s); /* it may still be the first: it blocks then */
            continue;
        }
        /* Its try would fail (nothing released fits it): recorded as such, unread. No
         * start in this pass releases anything, so it would fail at any point of it. */
        if (!strict && memo_valid(w, v, s) && released_no_fit(w, v, s, milli)) {
            w->memo_epoch[s] = v->release_epoch;
            continue;
        }
        if (q->head(q->ctx, v, s, &k, &k2) != SIM_JOB_NONE)
            heap_push(w, k, k2, s);
    }
    while (w->heap_n) {
        uint32_t s = heap_pop(w);
        sim_job_id id = q->head(q->ctx, v, s, &k, &k2);
        bool started = false;
        if (!strict && memo_valid(w, v, s) && w->memo_epoch[s] != v->release_epoch &&
            released_no_fit(w, v, s, milli)) {
            w->memo_epoch[s] = v->release_epoch; /* the starts before it took the room */
        } else if (!(memo_valid(w, v, s) && w->memo_epoch[s] == v->release_epoch)) {
            /* In enqueue order the shape's next job is read if this one starts. */
            if (q->head == enqueue_head)
                sim_view_prefetch_job(v, sim_view_job(v, id)->shape_next);
            int st = try_start(w, v, out, id, milli, score, ctx, order, &started);
            if (st != SIM_OK)
                return st;
        }
        if (!started) {
            if (strict)
                break;
            continue;
        }
        if (q->started)
            q->started(q->ctx, v, s, id);
        if (v->shape_count[s] > 0 && q->head(q->ctx, v, s, &k, &k2) != SIM_JOB_NONE)
            heap_push(w, k, k2, s);
    }
    return SIM_OK;
}
