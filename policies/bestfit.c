/*
 * bestfit.c: best fit. Jobs in arrival order with backfilling; each replica goes to the
 * feasible node with the least resources left after placing it, measured as the sum
 * over CPU, host memory and GPU share of what remains divided by the node's capacity in
 * that dimension (dimensions the node lacks are skipped; ties: lowest node id). Inside
 * the node the replica takes the most-allocated GPUs that fit (the GPU-level best fit).
 * The baseline "Best-fit" of Weng et al., USENIX ATC 2023, §6.1.
 */
#include "policies/place.h"

typedef struct bestfit_state {
    place_ws ws;
    place_pass pass;
} bestfit_state;

static double bestfit_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    const place_ws *w = ctx;
    double left = 0;
    if (v->node_cpu_total[n])
        left += (double)(place_cpu_free(w, v, n) - j->cpu_per_replica) /
                (double)v->node_cpu_total[n];
    if (v->node_mem_total[n])
        left += (double)(place_mem_free(w, v, n) - j->mem_per_replica) /
                (double)v->node_mem_total[n];
    uint64_t cap = (uint64_t)v->node_gpu_count[n] * SIM_MILLI_GPU;
    if (cap) {
        uint64_t ask = (uint64_t)j->gpus_per_replica * place_milli(j, 0);
        left += (double)(cap - place_node_used_milli(w, v, n) - ask) / (double)cap;
    }
    return -left;
}

static int bestfit_init(void *st, const policy_config *cfg, sim_diag *d)
{
    bestfit_state *s = st;
    return place_ws_init(&s->ws, cfg, d);
}

static void bestfit_fini(void *st)
{
    bestfit_state *s = st;
    place_ws_fini(&s->ws);
}

static int bestfit_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    bestfit_state *s = st;
    return place_pass_run(&s->pass, &s->ws, v, out, 0, bestfit_score, &s->ws,
                          PLACE_GPU_MOST_USED, false);
}

const policy_ops policy_bestfit = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "bestfit",
    .summary = "the feasible node with the least CPU, memory and GPU left after placement "
               "(normalised per dimension)",
    .state_size = sizeof(bestfit_state),
    .init = bestfit_init,
    .fini = bestfit_fini,
    .schedule = bestfit_schedule,
};
