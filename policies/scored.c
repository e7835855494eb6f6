/*
 * scored.c: the pass, options and workspace of the node-scoring packing policies.
 */
#include "policies/scored.h"

#include "base/alloc.h"

static double ref_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    scored_policy *s = ctx;
    ref_node node;
    ref_pod pod;
    place_ref_view(&s->ws, v, j, n, s->left, &node, &pod);
    return (double)s->ref(&node, &pod);
}

int scored_init(scored_policy *s, const policy_config *cfg, const policy_option *opts,
                place_node_score own, scored_ref_fn ref, sim_diag *d)
{
    s->own = own;
    s->ref = ref;
    int rc = policy_config_choice(cfg, opts, "score", place_score_choices, &s->score, d);
    if (rc != SIM_OK || (rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK)
        return rc;
    if ((s->score == PLACE_SCORE_REFERENCE &&
         (rc = place_ws_set_random_ties(&s->ws, cfg->seed, d)) != SIM_OK) ||
        (rc = place_ws_set_groups(&s->ws, cfg, NULL, NULL, true, d)) != SIM_OK ||
        (rc = place_ws_set_score_memo(&s->ws, d)) != SIM_OK) {
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

void scored_fini(void *st)
{
    scored_policy *s = st;
    place_ws_fini(&s->ws);
    sim_free(s->left);
    s->left = NULL;
}

int scored_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    scored_policy *s = st;
    if (s->score == PLACE_SCORE_REFERENCE)
        return place_pass_run(&s->ws, v, out, 0, ref_score, s, PLACE_GPU_MOST_USED, false);
    return place_pass_run(&s->ws, v, out, 0, s->own, &s->ws, PLACE_GPU_MOST_USED, false);
}
