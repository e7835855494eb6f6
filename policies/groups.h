/*
 * groups.h: the nodes of a cluster grouped by state, so that a packing search scores each
 * distinct state once instead of every node. Two nodes are in one group when everything a
 * placement score or a feasibility check reads of them is equal: up or down, GPU type and
 * count, CPU and memory (total and used), and the multiset of their GPUs' states (used
 * share, used and total GPU memory, whether some allocation resides on it, and a word the
 * policy may add per GPU, such as the requests of its residents). Each group keeps its
 * members in a pairing heap ordered by a tie key (the node id, or a rank per node), so the
 * member a tie goes to is at hand.
 *
 * The groups follow the engine's change log (sim_view.change_ring): a sync re-files only
 * the nodes changed since the last one, O(changes x (GPUs per node) log(groups)). A scan
 * over the groups costs O(groups), which depends on how many states the cluster's nodes
 * are in, not on how many nodes it has.
 */
#ifndef POLICIES_GROUPS_H
#define POLICIES_GROUPS_H

#include "sim/view.h"

#include <stdbool.h>
#include <stdint.h>

/* A word the policy adds to GPU g's state (0 when it adds nothing). Two GPUs whose words
 * differ are in different states; equal words must mean the policy's score cannot tell
 * them apart. */
typedef uint64_t (*place_gpu_tag)(void *ctx, const sim_view *v, uint32_t g);

typedef struct place_groups {
    uint32_t n_nodes;
    uint32_t key_words; /* words per state key */
    uint64_t *keys;     /* key_words per group slot (n_nodes slots) */
    uint64_t *hash;     /* per group slot: hash of its key */
    uint32_t *root;     /* per group slot: its member of least tie key */
    uint32_t *size;     /* per group slot: members */
    uint32_t *gen;      /* per group slot: changes whenever the slot takes a new key (never 0) */
    sim_node_sum *sum;  /* per group slot: its members' summary (the key decides it) */
    uint32_t *live;     /* groups with members, in no particular order ... */
    uint32_t *live_pos; /* ... and each group's position there */
    uint32_t n_live;
    uint32_t *free_slots; /* group slots not in use (a stack) */
    uint32_t n_free;
    uint32_t *table; /* open addressing over the keys: group slot + 1, 0 = empty */
    uint32_t table_mask;
    uint32_t *node_group;             /* group of each node */
    uint32_t *child, *sibling, *prev; /* pairing-heap links per node (UINT32_MAX = none) */
    const uint32_t *tie;              /* tie key per node; NULL = the node id */
    uint64_t *scratch;                /* one key */
    uint64_t *key_mul;                /* per key word: its odd multiplier in the hash */
    uint64_t synced;                  /* change epoch the groups reflect */
    bool built;
    place_gpu_tag tag;
    void *tag_ctx;
} place_groups;

/* Size the groups for n_nodes nodes of at most max_gpus GPUs each. tie (borrowed, may be
 * NULL) orders the members of a group; tag (may be NULL) adds a word per GPU.
 * SIM_OK or SIM_ENOMEM. */
int place_groups_init(place_groups *g, uint32_t n_nodes, uint32_t max_gpus, const uint32_t *tie,
                      place_gpu_tag tag, void *tag_ctx);
void place_groups_fini(place_groups *g);

/* Bring the groups up to date with the view (every node at the first call or when the
 * change log no longer covers the interval, else the nodes logged since). Requires a
 * view with a change log (v->change_ring set). */
void place_groups_sync(place_groups *g, const sim_view *v);

/* The member of group slot s with the least tie key. */
static inline uint32_t place_groups_first(const place_groups *g, uint32_t s)
{
    return g->root[s];
}

/* The summary (sim_view.node_sum) of every member of group slot s, kept beside the
 * group so that a search reads the groups' summaries in one dense array. */
static inline const sim_node_sum *place_groups_sum(const place_groups *g, uint32_t s)
{
    return &g->sum[s];
}

/* The generation of group slot s: a slot that keeps its generation keeps its key (its
 * state), so what a caller derived from that state stays true. */
static inline uint32_t place_groups_gen(const place_groups *g, uint32_t s)
{
    return g->gen[s];
}

/* Take node n out of its group for a while (a gang's search weighs the nodes of its
 * earlier replicas apart): the group keeps its key, generation and place among the live
 * ones, even empty, and its first member is the least of the others. Until
 * place_groups_unhide, no sync. */
void place_groups_hide(place_groups *g, uint32_t n);
/* Put node n, taken out by place_groups_hide, back in its group. */
void place_groups_unhide(place_groups *g, uint32_t n);

/* Whether the groups cover the nodes of view v (the same node count; nodes of no more
 * GPUs than sized for). */
bool place_groups_fit_view(const place_groups *g, const sim_view *v);

#endif
