/*
 * binpack.c: the vCUDA / GPU-share baseline. A job holds exactly the GPU share it asked
 * for; jobs are tried in arrival order, backfilling past those that do not fit; each
 * replica goes to the most-allocated node that still fits (allocated fraction of its
 * GPU share, of its CPU for CPU-only jobs; ties: lowest node id, i.e. first fit) and to
 * its most-allocated GPUs that fit (ties: lowest GPU index).
 */
#include "policies/place.h"

typedef struct binpack_state {
    place_ws ws;
    bool backfill;
} binpack_state;

static const policy_option binpack_options[] = {
    {"backfill", "true", "start later jobs when an earlier one does not fit"},
    {NULL, NULL, NULL},
};

static int binpack_init(void *st, const policy_config *cfg, sim_diag *d)
{
    binpack_state *s = st;
    int rc = policy_config_bool(cfg, binpack_options, "backfill", &s->backfill, d);
    if (rc != SIM_OK || (rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK)
        return rc;
    /* On large clusters the nodes are in far fewer states than there are blocks of
     * nodes: the search then goes by group (same choice, see place_ws_set_groups). */
    if ((rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, true, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    return rc;
}

static void binpack_fini(void *st)
{
    binpack_state *s = st;
    place_ws_fini(&s->ws);
}

static int binpack_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    binpack_state *s = st;
    return place_pass_run(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                          PLACE_GPU_MOST_USED, !s->backfill);
}

const policy_ops policy_binpack = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "binpack",
    .summary = "requested GPU shares, most-allocated node and GPU first (GPU-share baseline)",
    .state_size = sizeof(binpack_state),
    .options = binpack_options,
    .init = binpack_init,
    .fini = binpack_fini,
    .schedule = binpack_schedule,
};
