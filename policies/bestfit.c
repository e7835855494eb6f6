/*
 * bestfit.c: best fit. Jobs in arrival order with backfilling; each replica goes to the
 * feasible node with the least resources left after placing it, measured as the sum
 * over CPU, host memory and GPU share of what remains divided by the node's capacity in
 * that dimension (dimensions the node lacks are skipped; ties: lowest node id). Inside
 * the node the replica takes the most-allocated GPUs that fit (the GPU-level best fit).
 * The baseline "Best-fit" of Weng et al., USENIX ATC 2023, §6.1.
 *
 * score=reference: the reference simulator's BestFitScore (policies/refscore.h): CPU and
 * total GPU share left after placement, each over the largest node's, weighed 0.5/0.5,
 * as an integer 0..100 (truncated; the framework's normalisation keeps the order of
 * scores that span at most 100), so many nodes tie: ties go to the node first in a
 * random order of the nodes drawn once from the run's seed (place_ws_set_random_ties).
 */
#include "policies/scored.h"

static const policy_option bestfit_options[] = {
    {"score", "clustersim",
     "clustersim: least CPU, memory and GPU left per node capacity; reference: the reference "
     "simulator's integer score (CPU and GPU, 0.5/0.5, over the largest node)"},
    {NULL, NULL, NULL},
};

static double bestfit_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    double left = 0;
    if (v->node_cpu_total[n])
        left +=
            (double)(place_cpu_free(w, v, n) - j->cpu_per_replica) / (double)v->node_cpu_total[n];
    if (v->node_mem_total[n])
        left +=
            (double)(place_mem_free(w, v, n) - j->mem_per_replica) / (double)v->node_mem_total[n];
    uint64_t cap = (uint64_t)v->node_gpu_count[n] * SIM_MILLI_GPU;
    if (cap) {
        uint64_t ask = (uint64_t)j->gpus_per_replica * place_milli(j, 0);
        left += (double)(cap - place_node_used_milli(w, v, n) - ask) / (double)cap;
    }
    return -left;
}

static int bestfit_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return scored_init(st, cfg, bestfit_options, bestfit_score, ref_bestfit_score, d);
}

const policy_ops policy_bestfit = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "bestfit",
    .summary = "the feasible node with the least CPU, memory and GPU left after placement "
               "(normalised per dimension)",
    .state_size = sizeof(scored_policy),
    .options = bestfit_options,
    .init = bestfit_init,
    .fini = scored_fini,
    .schedule = scored_schedule,
};
