/*
 * scored.h: what the node-scoring packing policies share (bestfit, dotprod, gpupacking).
 * Each is a pass in arrival order with backfilling that puts a replica on the feasible
 * node of best score and its most-allocated GPUs that fit; the policy gives its own
 * score and, for score=reference, the reference simulator's integer score
 * (policies/refscore.h) with ties broken by a seeded random order of the nodes.
 */
#ifndef POLICIES_SCORED_H
#define POLICIES_SCORED_H

#include "policies/place.h"
#include "policies/refscore.h"

typedef int64_t (*scored_ref_fn)(const ref_node *n, const ref_pod *p);

typedef struct scored_policy {
    place_ws ws;
    int score;            /* PLACE_SCORE_* from the option `score` */
    uint32_t *left;       /* scratch: free share per GPU of one node */
    place_node_score own; /* the policy's own score (ctx: &ws) */
    scored_ref_fn ref;    /* the reference score */
} scored_policy;

/* Read the option `score` from opts and size the workspace. SIM_OK, or an option error /
 * SIM_ENOMEM with d filled (nothing left to free). */
int scored_init(scored_policy *s, const policy_config *cfg, const policy_option *opts,
                place_node_score own, scored_ref_fn ref, sim_diag *d);
/* The policy_ops fini and schedule of these policies (st: their scored_policy). */
void scored_fini(void *st);
int scored_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out);

#endif
