/*
 * dotprod.c: dot-product alignment (Grandl et al., "Multi-Resource Packing for Cluster
 * Schedulers" (Tetris), SIGCOMM 2014; the "Dot-product" baseline of Weng et al., USENIX
 * ATC 2023, §6.1). Jobs in arrival order with backfilling; each replica goes to the
 * feasible node maximising sum over CPU, host memory and GPU share of
 * (free / capacity) x (request / capacity), where free is the node's free amount before
 * placement and capacity the node's (dimensions the node lacks are skipped; ties: lowest
 * node id). Inside the node the replica takes the most-allocated GPUs that fit.
 *
 * score=reference: the reference simulator's DotProductScore as the FGD study runs it
 * (merge, max; policies/refscore.h): 100 x (1 - <free, request> / 2) truncated, over
 * CPU and total GPU share normalised by the largest node, so it prefers the node with
 * the least free where the request is large; ties: the node first in a random order of
 * the nodes drawn once from the run's seed (place_ws_set_random_ties).
 */
#include "policies/scored.h"

static const policy_option dotprod_options[] = {
    {"score", "clustersim",
     "clustersim: the largest dot product over CPU, memory and GPU per node capacity; "
     "reference: the reference simulator's integer score (1 - dot product)"},
    {NULL, NULL, NULL},
};

static double dotprod_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    double dot = 0;
    double cpu = (double)v->node_cpu_total[n], mem = (double)v->node_mem_total[n];
    if (cpu > 0)
        dot += (double)place_cpu_free(w, v, n) / cpu * ((double)j->cpu_per_replica / cpu);
    if (mem > 0)
        dot += (double)place_mem_free(w, v, n) / mem * ((double)j->mem_per_replica / mem);
    double cap = (double)v->node_gpu_count[n] * SIM_MILLI_GPU;
    if (cap > 0) {
        double ask = (double)j->gpus_per_replica * place_milli(j, 0);
        dot += (cap - (double)place_node_used_milli(w, v, n)) / cap * (ask / cap);
    }
    return dot;
}

static int dotprod_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return scored_init(st, cfg, dotprod_options, dotprod_score, ref_dotprod_score, d);
}

const policy_ops policy_dotprod = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "dotprod",
    .summary = "the feasible node maximising the dot product of its free resources and the "
               "request (normalised by capacity; Tetris)",
    .state_size = sizeof(scored_policy),
    .options = dotprod_options,
    .init = dotprod_init,
    .fini = scored_fini,
    .schedule = scored_schedule,
};
