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

#include "policies/policy.h"

typedef struct place_ws place_ws;

/* A policy's own choice of GPUs inside a node (see place_ws_set_pick): fill out with
 * j->gpus_per_replica GPUs of node n where a share `milli` and `gmem` MiB fit, tentative
 * usage included (place_gpu_fits). Returns false when fewer fit. */
typedef bool (*place_gpu_pick)(void *ctx, place_ws *w, const sim_view *v, const sim_job *j,
                               uint32_t n, uint32_t milli, uint64_t gmem, uint32_t *out);

struct place_ws {
    uint32_t n_nodes, n_gpus;
    uint64_t *t_cpu, *t_mem;   /* tentative CPU / memory per node */
    uint32_t *t_milli;         /* tentative share per GPU */
    uint64_t *t_gmem;          /* tentative GPU memory per GPU */
    uint8_t *t_node;           /* node has tentative usage */
    uint32_t *nodes;           /* result: node per replica */
    uint32_t *gpus;            /* result: GPUs, grouped by replica */
    uint32_t *cand;            /* scratch: candidate GPUs of one node */
    uint32_t max_slots;        /* capacity of nodes[] and gpus[] */
    place_gpu_pick pick;       /* when set, place_gang chooses GPUs with it */
    void *pick_ctx;
};

/* Size a workspace for the cluster described by cfg. Returns SIM_OK or SIM_ENOMEM. */
int place_ws_init(place_ws *w, const policy_config *cfg, sim_diag *d);
void place_ws_fini(place_ws *w);

/* Make place_gang (and so place_pass_run) choose GPUs with pick(ctx, ...) instead of a
 * place_gpu_order. NULL restores the order. */
void place_ws_set_pick(place_ws *w, place_gpu_pick pick, void *ctx);

typedef enum place_gpu_order {
    PLACE_GPU_MOST_USED,  /* least free share first (packing); ties: lowest index */
    PLACE_GPU_LEAST_USED, /* most free share first (spreading) */
    PLACE_GPU_FIRST,      /* lowest index first */
    PLACE_GPU_RANDOM,     /* uniformly random among those that fit */
} place_gpu_order;

/* Score of a node for one replica of j (larger is better); called only for nodes where
 * the replica fits. NULL score: a node chosen uniformly at random among those that fit. */
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
bool place_fits(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                uint32_t milli, uint64_t gmem);

/* Choose j->gpus_per_replica GPUs of node n that fit, in the given order, into out.
 * Returns false when fewer fit. */
bool place_pick_gpus(place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                     uint32_t milli, uint64_t gmem, place_gpu_order order, uint32_t *out);

/*
 * Place every replica of job id (its nominal count): each on the best-scoring node that
 * fits (ties: the lowest node id), GPUs chosen in `order` (or by the workspace's pick).
 * On success fills *out (its arrays live in w until the next call) and returns true.
 * O(nodes x replicas).
 */
bool place_gang(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli, uint64_t gmem,
                place_node_score score, void *ctx, place_gpu_order order, sim_placement *out);

/* Binpack's node score: the node's allocated fraction of GPU share (CPU for CPU-only
 * jobs). */
double place_score_most_allocated(void *ctx, const sim_view *v, const sim_job *j, uint32_t n);


/*
 * A first-fit-in-order pass over the pending list: each pending job, in list order, is
 * placed with place_gang(score, order) and started. strict: stop at the first job that
 * does not fit (FIFO); otherwise skip it and go on (backfilling). When no resource was
 * released since the previous pass, jobs tried then are skipped (they still cannot fit):
 * a backfilling pass resumes after the last job it left pending (jobs only join the
 * pending list at its end), so it costs O(new jobs x nodes), not O(queue); a strict pass
 * stops at the first job.
 */
typedef struct place_pass {
    bool primed;
    uint64_t epoch;          /* v->release_epoch at the end of the last pass */
    uint64_t enqueued_upto;  /* jobs with enqueue_seq below this were tried */
    bool has_tail;           /* tail_id is the last job the pass left pending */
    uint32_t tail_id;        /* valid while that job is pending with enqueue_seq tail_seq */
    uint64_t tail_seq;
} place_pass;

int place_pass_run(place_pass *pp, place_ws *w, const sim_view *v, policy_decisions *out,
                   uint32_t milli, place_node_score score, void *ctx, place_gpu_order order,
                   bool strict);
#endif
