/*
 * place.h: placement helpers shared by policies — feasibility of a replica on a node,
 * choice of GPUs inside a node, and gang placement of all of a job's replicas with a
 * policy-supplied node score. The helpers only read the view; the policy passes the
 * resulting sim_placement to sim_decide_start(). Multi-replica jobs are placed against
 * a tentative copy of the usage (the replicas chosen so far), which is cleared before
 * returning.
 */
#ifndef POLICIES_PLACE_H
#define POLICIES_PLACE_H

#include "policies/groups.h"
#include "sim/policy.h"
#include "policies/refscore.h"

/* A block of nodes and the best packing score any of its nodes could offer. */
typedef struct block_bound {
    double bound;
    uint32_t block;
} block_bound;

/* Binpack's walk over the blocks in order of the most allocated fraction their nodes may
 * offer a replica (bound descending, block ascending), as a search takes them. */
typedef struct block_walk {
    uint32_t k;    /* blocks left in the workspace's block_order */
    uint32_t pick; /* blocks taken so far */
    uint32_t top;  /* the next one while the first is not taken (UINT32_MAX: none) */
    double tb;     /* the bound of the block taken last */
} block_walk;

typedef struct place_ws place_ws;

/* A policy's own choice of GPUs inside a node (see place_ws_set_pick): fill out with
 * j->gpus_per_replica GPUs of node n where a share `milli` and `gmem` MiB fit, tentative
 * usage included (place_gpu_fits). Returns false when fewer fit. */
typedef bool (*place_gpu_pick)(void *ctx, place_ws *w, const sim_view *v, const sim_job *j,
                               uint32_t n, uint32_t milli, uint64_t gmem, uint32_t *out);

/* A replica's request, as the compact feasibility check reads it. */
typedef struct place_fitq {
    uint64_t cpu, mem, mask;
    uint32_t need, milli;
    bool whole; /* whole GPUs, no GPU memory request */
} place_fitq;

/* A remembered score: the generation of the group slot it was computed for (0: none),
 * and the score. */
typedef struct place_score_entry {
    uint32_t gen;
    double score;
} place_score_entry;

/* A replica's request as a score reads it. */
typedef struct place_request {
    uint64_t cpu, mem, gmem, mask;
    uint32_t gpus, milli;
} place_request;

#define PLACE_MEMO_REQUESTS 256u /* distinct requests remembered; later ones are not */
#define PLACE_MEMO_NONE UINT32_MAX

struct place_ws {
    uint32_t n_nodes, n_gpus;
    uint64_t *t_cpu, *t_mem;  /* tentative CPU / memory per node */
    uint32_t *t_milli;        /* tentative share per GPU */
    uint64_t *t_gmem;         /* tentative GPU memory per GPU */
    uint8_t *t_node;          /* node has tentative usage */
    uint32_t *nodes;          /* result: node per replica */
    uint32_t *gpus;           /* result: GPUs, grouped by replica */
    uint32_t *cand;           /* scratch: candidate GPUs of one node */
    uint32_t max_slots;       /* capacity of nodes[] and gpus[] */
    uint32_t *cand_nodes;     /* scratch: candidate nodes (released since a failure) */
    block_bound *block_order; /* scratch: blocks ordered by a packing bound */
    uint32_t *fit_nodes;      /* scratch: nodes that fit (random choice) */
    /* Per shape id (grown with the engine's shape capacity): the release epoch at which
     * the shape last fitted nowhere, valid while memo_gen matches the shape's gen. */
    uint64_t *memo_epoch;
    uint32_t *memo_gen;
    /* 0 none; 1 a failure; 2 a failure with its request in memo_q; 3 a gang's failure
     * with its replicas' request in memo_q and room for at most memo_room of them */
    uint8_t *memo_set;
    uint32_t memo_cap;
    /* Per shape, recorded by place_shape_try when a one-replica job without roles fitted
     * nowhere: its replica's request and the share asked of the search, so a pass can
     * tell that none of the nodes released since could host it without reading a job. */
    place_fitq *memo_q;
    uint32_t *memo_milli;
    /* Per shape, recorded when a gang failed: an upper bound on the replicas the nodes
     * could hold at once, as of memo_epoch. */
    uint32_t *memo_room;
    /* Heap of shapes ordered by the enqueue order of their first pending job. */
    uint64_t *heap_key, *heap_key2;
    uint32_t *heap_shape;
    uint32_t heap_n;
    uint32_t *rank;      /* when set, node ties go to the lowest rank (not node id) */
    place_gpu_pick pick; /* when set, place_gang chooses GPUs with it */
    void *pick_ctx;
    uint32_t *role_nodes; /* result: node per role of a job (master, servers) */
    uint32_t role_cap;    /* capacity of role_nodes[]: max_slots + 1 */
    place_groups groups;  /* nodes grouped by state (see place_ws_set_groups) */
    bool use_groups;
    bool group_frac_gangs; /* fractional replicas of several GPUs may use the groups */
    /* A gang's search by group (with the groups): the nodes its earlier replicas took
     * out of their groups (hidden, n_hidden), and those of them that may still fit a
     * replica (touched, n_touched); n_nodes each, empty between searches. */
    uint32_t *hidden, *touched;
    uint32_t n_hidden, n_touched;
    /* A random gang's later draws: the fitting nodes per run of 32 node ids (one entry
     * per run) and in all, as of the replica being drawn. */
    uint32_t *run_fit;
    uint32_t gang_seen;
    uint32_t gang_fit_n; /* a scored search's fitting groups, left in fit_nodes */
    /* A binpack gang's search (search_most_allocated_gang in place.c): its walk over the
     * blocks, the block it took and has not visited (UINT32_MAX: none), and the fitting
     * nodes of the blocks visited, best first (a heap of n_nodes). */
    block_walk gang_walk;
    uint32_t gang_pend;
    uint32_t *gang_heap;
    uint32_t gang_heap_n;
    /* Scores by request and group slot (see place_ws_set_score_memo): the requests are
     * numbered in req_keys (req_n of them) through an open-addressing table of
     * 2 x PLACE_MEMO_REQUESTS entries (number + 1, 0 = empty); score_rows[r] (allocated
     * at request r's first search) holds an entry per group slot. NULL when off. */
    place_score_entry **score_rows;
    place_request *req_keys;
    uint32_t *req_table;
    uint32_t req_n;
    uint64_t score_hits;  /* scores read from the memo */
    uint64_t block_heaps; /* binpack's searches that went on to a heap of blocks */
    uint64_t room_skips;  /* gang tries skipped for want of room (place_gang_room_enable) */
};

/* Size a workspace for the cluster described by cfg. Returns SIM_OK or SIM_ENOMEM. */
int place_ws_init(place_ws *w, const policy_config *cfg, sim_diag *d);
void place_ws_fini(place_ws *w);

/* Make place_gang (and so place_pass_run) choose GPUs with pick(ctx, ...) instead of a
 * place_gpu_order. NULL restores the order. */
void place_ws_set_pick(place_ws *w, place_gpu_pick pick, void *ctx);

/*
 * Remember the scores of the group search (place_ws_set_groups first): for a score that
 * reads nothing but the node's state as the groups key it and the replica's request (GPUs,
 * share and GPU memory per GPU, CPU and memory, GPU types: place_request), the score of a
 * group for a request is computed once and read again for later jobs asking the same while
 * the group keeps its state. The workspace must then be used with that one score function.
 * The choice is the same (the same score, bit for bit). SIM_OK, or SIM_ENOMEM (diag set).
 */
int place_ws_set_score_memo(place_ws *w, sim_diag *d);

/*
 * Make place_gang score each distinct node state once (policies/groups.h) instead of
 * every node: for a score that reads nothing of a node but its state as the groups key it
 * (tag adds the policy's own word per GPU; may be NULL), the chosen node is the same, at
 * O(states) instead of O(nodes) per replica. Ties still go to the lowest node id, or the
 * lowest rank (call place_ws_set_random_ties first). frac_gangs false keeps the scan of
 * every node for fractional replicas of several GPUs (for a score that depends on the
 * order of the node's GPUs there). The first replica of a job uses the groups; later
 * replicas of a gang, which see the earlier ones' tentative usage, scan every node.
 * When cfg does not tell the most GPUs of a node (max_gpus_per_node 0), nothing changes.
 * SIM_OK or SIM_ENOMEM (diag set).
 */
int place_ws_set_groups(place_ws *w, const policy_config *cfg, place_gpu_tag tag, void *ctx,
                        bool frac_gangs, sim_diag *d);

/* Turn the use of groups off (false) or back on for every workspace of the process, to
 * compare the two in tests and benchmarks. On by default. */
void place_grouping_enable(bool on);

/* Binpack's score finds a CPU-only replica's node through the blocks' CPU summaries
 * (on, the default) or by scoring every node (off): the same node either way; the
 * switch lets tests compare the two. */
void place_cpu_blocks_enable(bool on);

/* Binpack's score finds every replica's node through the block summaries (on, the
 * default; CPU-only ones as place_cpu_blocks_enable says) or by scoring every node
 * (off): the same node either way; the switch lets tests compare the two. */
void place_block_search_enable(bool on);

/* A gang that failed is tried again only once the replicas its nodes could hold (an
 * upper bound, carried forward through the nodes released since) reach its count (on,
 * the default), or at every try the failure memo allows (off): the same placements
 * either way, but for the random draw (a skipped search no longer draws for the replicas
 * it placed before failing, so the later draws differ); the switch lets tests compare
 * the two. */
void place_gang_room_enable(bool on);

typedef enum place_gpu_order {
    PLACE_GPU_MOST_USED,  /* least free share first (packing); ties: lowest index */
    PLACE_GPU_LEAST_USED, /* most free share first (spreading) */
    PLACE_GPU_FIRST,      /* lowest index first */
    PLACE_GPU_RANDOM,     /* uniformly random among those that fit */
} place_gpu_order;

/* Score of a node for one replica of j (larger is better); called only for nodes where
 * the replica fits. NULL score: a node drawn uniformly at random among those that fit
 * (one draw from v->rng per replica). */
typedef double (*place_node_score)(void *ctx, const sim_view *v, const sim_job *j, uint32_t n);

/* The share and GPU memory a placement with these arguments holds per GPU
 * (milli 0 = the job's request; gmem UINT64_MAX = the job's request). */
uint32_t place_milli(const sim_job *j, uint32_t milli);
uint64_t place_gmem(const sim_job *j, uint64_t gmem);

/* Used share of GPU g, and free CPU, memory and summed GPU share of node n, tentative
 * usage included. O(1), except place_node_used_milli: O(GPUs of n) with tentative usage. */
static inline uint32_t place_gpu_used(const place_ws *w, const sim_view *v, uint32_t g)
{
    return v->gpu_used_milli[g] + (w->t_node[v->gpu_node[g]] ? w->t_milli[g] : 0);
}

static inline uint64_t place_cpu_free(const place_ws *w, const sim_view *v, uint32_t n)
{
    return v->node_cpu_total[n] - v->node_cpu_used[n] - (w->t_node[n] ? w->t_cpu[n] : 0);
}

static inline uint64_t place_mem_free(const place_ws *w, const sim_view *v, uint32_t n)
{
    return v->node_mem_total[n] - v->node_mem_used[n] - (w->t_node[n] ? w->t_mem[n] : 0);
}

uint64_t place_node_used_milli(const place_ws *w, const sim_view *v, uint32_t n);

/* Whether a share `milli` and `gmem` MiB fit on GPU g (tentative usage included: a GPU
 * an earlier replica of the job holds is taken, since a placement names a GPU once). */
bool place_gpu_fits(const place_ws *w, const sim_view *v, uint32_t g, uint32_t milli,
                    uint64_t gmem);

/* Whether one more replica of j fits node n (tentative usage included, as in
 * place_gpu_fits). O(GPUs of n). */
bool place_fits(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                uint64_t gmem);

/* Choose j->gpus_per_replica GPUs of node n that fit, in the given order, into out.
 * Returns false when fewer fit. */
bool place_pick_gpus(place_ws *w, const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                     uint64_t gmem, place_gpu_order order, uint32_t *out);

/*
 * Place every replica of job id (its nominal count): each on the best-scoring node that
 * fits (ties: the lowest node id, or rank when set), GPUs chosen in `order` (or by the
 * workspace's pick).
 * Only the nodes in
 * cands[0..n_cands) are considered, or every node when cands is NULL. On success fills
 * *out (its arrays live in w until the next call) and returns true.
 * O(candidate nodes x replicas).
 */
bool place_gang(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli, uint64_t gmem,
                place_node_score score, void *ctx, place_gpu_order order, const uint32_t *cands,
                uint32_t n_cands, sim_placement *out);

/* place_gang for R replicas instead of the nominal count (elastic jobs: a start at
 * min_replicas, or R more replicas for sim_decide_grow, on GPUs the job does not hold).
 * Both place a pending job's master and parameter servers too (place_roles), after its
 * trainers. */
bool place_gang_n(place_ws *w, const sim_view *v, sim_job_id id, uint32_t R, uint32_t milli,
                  uint64_t gmem, place_node_score score, void *ctx, place_gpu_order order,
                  const uint32_t *cands, uint32_t n_cands, sim_placement *out);

/*
 * The master and parameter servers of pending job id (sim_job.n_roles > 0) beside the
 * trainers of placement p, which this fills in (p->roles, p->role_nodes, living in w
 * until the next call): each role in turn, master first, on the up node with the most
 * CPU left after the trainers and the roles before it (ties: the lowest node id) where
 * its CPU and memory fit; only nodes in cands[0..n_cands) when cands is not NULL. For a
 * job without roles it sets p->roles = 0 and returns true. False when a role fits
 * nowhere. O(roles x candidate nodes).
 */
bool place_roles(place_ws *w, const sim_view *v, sim_job_id id, sim_placement *p,
                 const uint32_t *cands, uint32_t n_cands);

/* Node n and one replica of j as the reference simulator's scores see them
 * (policies/refscore.h), tentative usage included: buf receives the free share of each
 * of the node's GPUs (it must hold node_gpu_count[n] entries). */
void place_ref_view(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                    uint32_t *buf, ref_node *node, ref_pod *pod);

/* The reference simulator's order of nodes among equal scores: it prefixes each node's
 * name with its index in a random permutation of the nodes (drawn once per run from the
 * seed) and takes the first name. Fills rank[0..n) with a uniformly random permutation
 * of 0..n-1 drawn from an MT19937 seeded with seed (the same permutation for the same
 * seed, not the reference's own: its generator is Go's). SIM_OK or SIM_ENOMEM. */
int place_rank_draw(uint64_t seed, uint32_t n, uint32_t *rank);

/* Make node ties go to the node of lowest rank in place_rank_draw(seed) instead of the
 * lowest node id (the workspace owns the ranks). SIM_OK or SIM_ENOMEM (diag set). */
int place_ws_set_random_ties(place_ws *w, uint64_t seed, sim_diag *d);

/* The `score` option of the packing policies: their own score (default) or the reference
 * simulator's (policies/refscore.h). */
extern const char *const place_score_choices[];
enum { PLACE_SCORE_OWN = 0, PLACE_SCORE_REFERENCE = 1 };

/* Binpack's node score: the node's allocated fraction of GPU share (CPU for CPU-only
 * jobs). */
double place_score_most_allocated(void *ctx, const sim_view *v, const sim_job *j, uint32_t n);

/*
 * An in-order pass over the pending jobs: in enqueue order, each job is placed with
 * place_gang(score, order) and started. strict: stop at the first job that does not fit
 * (FIFO); otherwise skip it and go on (backfilling). The result is the same as trying
 * every pending job in order, but cheaper: jobs of one shape fit exactly where each
 * other fit, so once a job fails, the rest of its shape is skipped, until something is
 * released; and a one-replica shape that failed at release epoch E is retried only on
 * nodes released since E (every other node only filled up). A pass costs O(shapes + tried jobs x
 * candidate nodes), not O(queue x nodes). (Gangs of several replicas are retried on every node.)
 * The per-shape arrays grow with the engine's shape capacity (at new peaks only); SIM_ENOMEM if
 * that fails.
 */
int place_pass_run(place_ws *w, const sim_view *v, policy_decisions *out, uint32_t milli,
                   place_node_score score, void *ctx, place_gpu_order order, bool strict);

/* An order of the pending jobs for place_pass_run_ordered: head() gives the next job of
 * shape s (SIM_JOB_NONE when none) and its key (key, key2), smaller first and unique
 * across shapes; started() (optional) is told when that job was started. */
typedef struct place_order {
    sim_job_id (*head)(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key, uint64_t *key2);
    void (*started)(void *ctx, const sim_view *v, uint32_t shape, sim_job_id id);
    void *ctx;
} place_order;

/* place_pass_run with the policy's own order of jobs: the jobs are tried by their key,
 * each shape's next job after the last one started, a shape dropped at its first
 * failure (strict: the pass stops there). O(shapes log shapes + tried jobs x candidate
 * nodes). */
int place_pass_run_ordered(place_ws *w, const sim_view *v, policy_decisions *out, uint32_t milli,
                           place_node_score score, void *ctx, place_gpu_order order, bool strict,
                           const place_order *q);

/* Candidate nodes for a one-replica job of shape s: NULL (every node) unless the shape
 * is known to have fitted nowhere at an epoch E, in which case the nodes released since
 * E are returned in w->cand_nodes with their count in *n. (For a gang, a node not
 * released since E may still host some replicas, so gangs need every node.) */
const uint32_t *place_candidates(place_ws *w, const sim_view *v, uint32_t shape, uint32_t *n);
/* The nodes released since release epoch `since`, each once, in w->cand_nodes with their
 * count in *n; NULL when the release log cannot tell (more releases since than it holds)
 * or a scan of every node costs less (more releases than nodes). */
const uint32_t *place_released_since(place_ws *w, const sim_view *v, uint64_t since, uint32_t *n);
/* Place pending job id as place_gang over every node would (score, order, milli as
 * there; its GPU memory its own), through the shape memo: false at once if its shape
 * fitted nowhere and nothing was released since, a one-replica job tried only on the
 * nodes released since its shape last fitted nowhere, a gang false at once while the
 * room for its replicas (as of its last failure, and on the nodes released since) falls
 * short of them, and a failure recorded. The memo must have room for the view's shapes
 * (place_memo_reserve). */
bool place_shape_try(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli,
                     place_node_score score, void *ctx, place_gpu_order order, sim_placement *p);
/* Record that shape s fits nowhere now. */
void place_memo_fail(place_ws *w, const sim_view *v, uint32_t shape);
/* Size the per-shape memo to v->n_shapes (growing only). */
int place_memo_reserve(place_ws *w, const sim_view *v);
#endif
