/*
 * fifo.c: first-in first-out on whole GPUs. Jobs start in strict arrival order; the
 * first job that does not fit blocks every job behind it (no backfilling). Each GPU a
 * job uses is held whole (1000 milli-GPU), whatever share it asked for — the exclusive
 * baseline of GPU-sharing studies. Replicas go to the most-allocated node that fits
 * (ties: lowest node id), GPUs most-used first.
 */
#include "policies/place.h"

typedef struct fifo_state {
    place_ws ws;
} fifo_state;

static int fifo_init(void *st, const policy_config *cfg, sim_diag *d)
{
    fifo_state *s = st;
    int rc = place_ws_init(&s->ws, cfg, d);
    /* Large clusters: the search goes by node group (the same choice as binpack's). */
    if (rc == SIM_OK && (rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, true, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    return rc;
}

static void fifo_fini(void *st)
{
    fifo_state *s = st;
    place_ws_fini(&s->ws);
}

static int fifo_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    fifo_state *s = st;
    return place_pass_run(&s->ws, v, out, SIM_MILLI_GPU, place_score_most_allocated,
                          NULL, PLACE_GPU_MOST_USED, true);
}

const policy_ops policy_fifo = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "fifo",
    .summary = "strict arrival order on exclusive whole GPUs, no backfilling",
    .state_size = sizeof(fifo_state),
    .init = fifo_init,
    .fini = fifo_fini,
    .schedule = fifo_schedule,
};
