/*
 * gpupacking.c: GPU packing (the "GPU Packing" baseline of Weng et al., USENIX ATC 2023,
 * §6.1). Jobs in arrival order with backfilling. A replica prefers, in this order, a
 * node with a partly allocated GPU it fits on, then a node with some GPU share
 * allocated, then an idle node; within a class, the node with the larger allocated
 * fraction of its GPU share, then the lowest node id. Inside the node it takes the
 * most-allocated GPUs that fit, so partly allocated GPUs come first. CPU-only replicas
 * go to the node with the most allocated CPU.
 *
 * score=reference: the reference simulator's GpuPackingScore (policies/refscore.h):
 * integer scores, partly used GPUs that fit first (100 - their free percentage / 10),
 * then nodes where the task takes idle GPUs of a used node (50 - idle GPUs taken), then
 * idle nodes (33 - GPUs); CPU-only tasks score 0 everywhere. Ties: the node first in a
 * random order of the nodes drawn once from the run's seed (place_ws_set_random_ties).
 */
#include "policies/place.h"

#include "base/alloc.h"

typedef struct gpupacking_state {
    place_ws ws;
    int score;
    uint32_t *left; /* scratch: free share per GPU of one node */
} gpupacking_state;

static const policy_option gpupacking_options[] = {
    {"score", "clustersim",
     "clustersim: classes by allocated fraction, CPU-only tasks by allocated CPU; reference: the "
     "reference simulator's integer score"},
    {NULL, NULL, NULL},
};

static double gpupacking_ref_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    gpupacking_state *s = ctx;
    ref_node node;
    ref_pod pod;
    place_ref_view(&s->ws, v, j, n, s->left, &node, &pod);
    return (double)ref_gpupacking_score(&node, &pod);
}

static double gpupacking_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    if (!j->gpus_per_replica)
        return place_score_most_allocated(NULL, v, j, n);
    uint32_t milli = place_milli(j, 0);
    uint64_t gmem = place_gmem(j, UINT64_MAX);
    uint64_t used = place_node_used_milli(w, v, n);
    double frac = (double)used / ((double)v->node_gpu_count[n] * SIM_MILLI_GPU);
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n];
    for (uint32_t g = first; g < end; g++) {
        uint32_t u = place_gpu_used(w, v, g);
        if (u > 0 && u < SIM_MILLI_GPU && place_gpu_fits(w, v, g, milli, gmem))
            return 4 + frac;
    }
    return used ? 2 + frac : 0;
}

static int gpupacking_init(void *st, const policy_config *cfg, sim_diag *d)
{
    gpupacking_state *s = st;
    int rc =
        policy_config_choice(cfg, gpupacking_options, "score", place_score_choices, &s->score, d);
    if (rc != SIM_OK || (rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK)
        return rc;
    if ((s->score == PLACE_SCORE_REFERENCE &&
         (rc = place_ws_set_random_ties(&s->ws, cfg->seed, d)) != SIM_OK) ||
        (rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, true, d)) != SIM_OK) {
        place_ws_fini(&s->ws);
        return rc;
    }
    s->left = sim_calloc(cfg->n_gpus ? cfg->n_gpus : 1, sizeof *s->left);
    if (!s->left) {
        place_ws_fini(&s->ws);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    return SIM_OK;
}

static void gpupacking_fini(void *st)
{
    gpupacking_state *s = st;
    place_ws_fini(&s->ws);
    sim_free(s->left);
    s->left = NULL;
}

static int gpupacking_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    gpupacking_state *s = st;
    if (s->score == PLACE_SCORE_REFERENCE)
        return place_pass_run(&s->ws, v, out, 0, gpupacking_ref_score, s, PLACE_GPU_MOST_USED,
                              false);
    return place_pass_run(&s->ws, v, out, 0, gpupacking_score, &s->ws,
                          PLACE_GPU_MOST_USED, false);
}

const policy_ops policy_gpupacking = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "gpupacking",
    .summary = "partly used GPUs that fit first, then partly used nodes, then idle nodes",
    .state_size = sizeof(gpupacking_state),
    .options = gpupacking_options,
    .init = gpupacking_init,
    .fini = gpupacking_fini,
    .schedule = gpupacking_schedule,
};
