/*
 * random.c: requested GPU shares; jobs in arrival order with backfilling; each replica
 * on a node drawn uniformly among those where it fits, GPUs drawn uniformly among those
 * that fit, from the run's seeded RNG (same seed, same placements).
 */
#include "policies/place.h"

typedef struct random_state {
    place_ws ws;
} random_state;

static int random_init(void *st, const policy_config *cfg, sim_diag *d)
{
    random_state *s = st;
    int rc = place_ws_init(&s->ws, cfg, d);
    /* The draw counts the fitting nodes by group (same node, see search_groups_random). */
    if (rc == SIM_OK && (rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, true, d)) != SIM_OK)
        place_ws_fini(&s->ws);
    return rc;
}

static void random_fini(void *st)
{
    random_state *s = st;
    place_ws_fini(&s->ws);
}

static int random_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    random_state *s = st;
    return place_pass_run(&s->ws, v, out, 0, NULL, NULL, PLACE_GPU_RANDOM, false);
}

const policy_ops policy_random = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "random",
    .summary = "requested GPU shares on a uniformly random node and GPUs that fit (seeded)",
    .state_size = sizeof(random_state),
    .init = random_init,
    .fini = random_fini,
    .schedule = random_schedule,
};
