/*
 * gpuclustering.c: GPU clustering (the "GPU Clustering" baseline of Weng et al., USENIX
 * ATC 2023, §6.1): keep tasks with the same GPU request together. A task's GPU request
 * is its share per GPU (gpu_milli; 1000 for whole GPUs). Jobs in arrival order with
 * backfilling. A replica prefers, in this order, a node where a GPU it fits on already
 * holds a task with the same request, then a node with no GPU share allocated, then any
 * other node; within a class, the node with the larger allocated fraction of its GPU
 * share, then the lowest node id. Inside the node it takes, among the GPUs that fit,
 * those holding a task with the same request, then idle GPUs, then the others (each
 * group most-allocated first, then lowest index). CPU-only replicas go to the node with
 * the most allocated CPU.
 *
 * score=reference: the reference simulator's GpuClusteringScore (policies/refscore.h).
 * A task's affinity is "sharing" (one GPU, share < 1000) or its count of whole GPUs;
 * a node's affinities are those of the tasks on it. Four tiers of 25 points: nodes whose
 * only affinity is the task's, nodes holding it among others, idle nodes, the rest;
 * within a tier 25 x (8000 - free GPU share) / 8000 in integers. CPU-only tasks score 0
 * everywhere. Ties: the node first in a random order of the nodes drawn once from the
 * run's seed (place_ws_set_random_ties). GPUs: the least free that fit (best fit).
 */
#include "policies/place.h"

typedef struct gpuclustering_state {
    place_ws ws;
    int score;
} gpuclustering_state;

static const policy_option gpuclustering_options[] = {
    {"score", "clustersim",
     "clustersim: same-request GPUs, then idle nodes, by allocated fraction; reference: "
     "the reference simulator's four affinity tiers with integer scores"},
    {NULL, NULL, NULL},
};

/* The reference's score: the affinities of the tasks on node n (the job's own earlier
 * replicas included) against the job's. O(residents of n). */
static double gpuclustering_ref_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    uint64_t bit = ref_affinity_bit(j->gpus_per_replica, place_milli(j, 0));
    if (!bit)
        return 0;
    uint64_t mask = 0, left = 0;
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
    for (uint32_t g = first; g < end; g++) {
        left += SIM_MILLI_GPU - place_gpu_used(w, v, g);
        if (w->t_node[n] && w->t_milli[g])
            mask |= bit;
        for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu) {
            const sim_job *o = sim_view_job(v, v->allocs[a].job);
            mask |= ref_affinity_bit(o->gpus_per_replica, place_milli(o, 0));
        }
    }
    return (double)ref_gpuclustering_score(mask, bit, left);
}

/* The GPU request of the task holding allocation a: the share it holds, since this
 * policy places every replica at its request (place_milli(j, 0)); read from the
 * allocation, not from the job's record. */
static uint32_t resident_request(const sim_view *v, uint32_t a)
{
    return v->allocs[a].milli;
}

/* Whether GPU g holds a task whose share per GPU is `req` (a replica of the job being
 * placed, held tentatively, counts). O(residents of g). */
static bool gpu_holds_same(const place_ws *w, const sim_view *v, uint32_t g, uint32_t req)
{
    if (w->t_node[v->gpu_node[g]] && w->t_milli[g])
        return true;
    for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu)
        if (resident_request(v, a) == req)
            return true;
    return false;
}

/* Rank of GPU g for a replica asking `req` per GPU: 2 same request, 1 idle, 0 other. */
static int gpu_rank(const place_ws *w, const sim_view *v, uint32_t g, uint32_t req)
{
    if (gpu_holds_same(w, v, g, req))
        return 2;
    return place_gpu_used(w, v, g) == 0 ? 1 : 0;
}

static double gpuclustering_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    if (!j->gpus_per_replica)
        return place_score_most_allocated(NULL, v, j, n);
    uint32_t milli = place_milli(j, 0);
    uint64_t gmem = place_gmem(j, UINT64_MAX);
    uint64_t used = place_node_used_milli(w, v, n);
    double frac = (double)used / ((double)v->node_gpu_count[n] * SIM_MILLI_GPU);
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
    for (uint32_t g = first; g < end && used; g++)
        if (place_gpu_fits(w, v, g, milli, gmem) && gpu_holds_same(w, v, g, milli))
            return 4 + frac;
    return used ? frac : 2;
}

/* The word the node groups (policies/groups.h) add to GPU g's state: what the scores read
 * of its residents. Own score: the distinct requests of the residents, 11 bits each
 * (request + 1), sorted; a GPU with more than five is made unique by its index. */
static uint64_t gpuclustering_tag(void *ctx, const sim_view *v, uint32_t g)
{
    (void)ctx;
    uint32_t req[5], n = 0;
    for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu) {
        uint32_t r = resident_request(v, a), k = 0;
        while (k < n && req[k] < r)
            k++;
        if (k < n && req[k] == r)
            continue;
        if (n == 5 || r >= 2047)
            return UINT64_C(1) << 63 | g;
        for (uint32_t q = n++; q > k; q--)
            req[q] = req[q - 1];
        req[k] = r;
    }
    uint64_t t = 0;
    for (uint32_t k = 0; k < n; k++)
        t |= (uint64_t)(req[k] + 1) << (11 * k);
    return t;
}

/* Reference score: the affinities of the residents, as a mask. */
static uint64_t gpuclustering_ref_tag(void *ctx, const sim_view *v, uint32_t g)
{
    (void)ctx;
    uint64_t mask = 0;
    for (uint32_t a = v->gpu_first_res[g]; a != UINT32_MAX; a = v->allocs[a].next_on_gpu) {
        const sim_job *o = sim_view_job(v, v->allocs[a].job);
        mask |= ref_affinity_bit(o->gpus_per_replica, place_milli(o, 0));
    }
    return mask;
}

static bool gpuclustering_pick(void *ctx, place_ws *w, const sim_view *v, const sim_job *j,
                               uint32_t n, uint32_t milli, uint64_t gmem, uint32_t *out)
{
    (void)ctx;
    uint32_t need = j->gpus_per_replica, k = 0;
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
    for (uint32_t g = first; g < end; g++)
        if (place_gpu_fits(w, v, g, milli, gmem))
            w->cand[k++] = g;
    if (k < need)
        return false;
    /* Selection of the `need` best: rank, then most used, then lowest index. */
    for (uint32_t i = 0; i < need; i++) {
        uint32_t best = i;
        int rb = gpu_rank(w, v, w->cand[i], milli);
        for (uint32_t c = i + 1; c < k; c++) {
            uint32_t gc = w->cand[c], gb = w->cand[best];
            int rc = gpu_rank(w, v, gc, milli);
            uint32_t uc = place_gpu_used(w, v, gc), ub = place_gpu_used(w, v, gb);
            if (rc > rb || (rc == rb && (uc > ub || (uc == ub && gc < gb)))) {
                best = c;
                rb = rc;
            }
        }
        uint32_t t = w->cand[i];
        w->cand[i] = w->cand[best];
        w->cand[best] = t;
        out[i] = w->cand[i];
    }
    return true;
}

static int gpuclustering_init(void *st, const policy_config *cfg, sim_diag *d)
{
    gpuclustering_state *s = st;
    int rc = policy_config_choice(cfg, gpuclustering_options, "score", place_score_choices,
                                  &s->score, d);
    if (rc == SIM_OK)
        rc = place_ws_init(&s->ws, cfg, d);
    if (rc == SIM_OK && s->score != PLACE_SCORE_REFERENCE)
        place_ws_set_pick(&s->ws, gpuclustering_pick, s);
    if (rc == SIM_OK && s->score == PLACE_SCORE_REFERENCE &&
        (rc = place_ws_set_random_ties(&s->ws, cfg->seed, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    if (rc == SIM_OK &&
        (rc = place_ws_set_groups(&s->ws, cfg,
                                  s->score == PLACE_SCORE_REFERENCE ? gpuclustering_ref_tag
                                                                    : gpuclustering_tag,
                                  NULL, true, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    if (rc == SIM_OK && (rc = place_ws_set_score_memo(&s->ws, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    return rc;
}

static void gpuclustering_fini(void *st)
{
    gpuclustering_state *s = st;
    place_ws_fini(&s->ws);
}

static int gpuclustering_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    gpuclustering_state *s = st;
    if (s->score == PLACE_SCORE_REFERENCE)
        return place_pass_run(&s->ws, v, out, 0, gpuclustering_ref_score, &s->ws,
                              PLACE_GPU_MOST_USED, false);
    return place_pass_run(&s->ws, v, out, 0, gpuclustering_score, &s->ws, PLACE_GPU_MOST_USED,
                          false);
}

const policy_ops policy_gpuclustering = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "gpuclustering",
    .summary = "keep tasks with the same GPU request together: nodes and GPUs holding the "
               "same share first, then idle ones",
    .state_size = sizeof(gpuclustering_state),
    .options = gpuclustering_options,
    .init = gpuclustering_init,
    .fini = gpuclustering_fini,
    .schedule = gpuclustering_schedule,
};
