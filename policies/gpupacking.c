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
#include "policies/scored.h"

static const policy_option gpupacking_options[] = {
    {"score", "clustersim",
     "clustersim: classes by allocated fraction, CPU-only tasks by allocated CPU; reference: the "
     "reference simulator's integer score"},
    {NULL, NULL, NULL},
};

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
    return scored_init(st, cfg, gpupacking_options, gpupacking_score, ref_gpupacking_score, d);
}

const policy_ops policy_gpupacking = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "gpupacking",
    .summary = "partly used GPUs that fit first, then partly used nodes, then idle nodes",
    .state_size = sizeof(scored_policy),
    .options = gpupacking_options,
    .init = gpupacking_init,
    .fini = scored_fini,
    .schedule = scored_schedule,
};
