/*
 * hetero_assign.h: the combinatorial core of heterogeneous GPU assignment for a group of
 * co-trained jobs, free of the simulator so it can be tested by hand and by brute force.
 *
 * - The exact bottleneck assignment: n jobs, m >= n GPUs, cost c[i][k] (seconds job i
 *   needs on GPU k, INFINITY where it cannot run there); minimise the largest cost of a
 *   one-to-one assignment. Binary search over the costs by rank (the value of each rank
 *   put in place by selection, so nothing is sorted), each probe a
 *   bipartite matching (Kuhn's augmenting paths) over the edges with cost <= the probe:
 *   O(log(nm) x n x nm). (Gross, "The bottleneck assignment problem", RAND P-1630, 1959.)
 *   Candidates below the largest row minimum (and, when n = m, column minimum) cannot be
 *   the optimum and are left out; each probe starts from the maximum matching of the
 *   largest probe that failed (still valid at a larger threshold) and first gives the
 *   remaining jobs free GPUs greedily, so only the rest needs augmenting paths.
 * - The swap rounds of the hetero policy (DESIGN.md policy 3): after each round the
 *   slowest job's time is compared with the best so far, the GPUs of the slowest and the
 *   fastest job are swapped while that improves, and the best mapping is then frozen.
 * - The preemptive bound: the same jobs when they may move between GPUs without losing
 *   work (as the swap rounds move them), each running on one GPU at a time (Lawler and
 *   Labetoulle, "On preemptive scheduling of unrelated parallel processors by linear
 *   programming", JACM 25(4), 1978): an LP, solved with GLPK.
 * Workspaces are sized once (hetero_ws_init); the calls never allocate, except the
 * preemptive bound (GLPK builds its problem on each solve; called once per group).
 */
#ifndef POLICIES_HETERO_ASSIGN_H
#define POLICIES_HETERO_ASSIGN_H

#include "sim/types.h"

#define HETERO_NONE UINT32_MAX

typedef struct hetero_ws {
    uint32_t cap_n, cap_m; /* largest n and m the workspace serves */
    double *cand;          /* cap_n x cap_m: sorted candidate costs */
    uint32_t *gpu_job;     /* cap_m: job matched to each GPU, HETERO_NONE */
    uint32_t *seen;        /* cap_m: visit stamp of each GPU in one augmenting search */
    uint32_t *stack_job;   /* cap_n: iterative augmenting search: job per level */
    uint32_t *stack_k;     /* cap_n: next GPU to try per level */
    uint32_t *base;        /* cap_m: the matching of the largest failed probe (warm start) */
    uint8_t *matched;      /* cap_n: whether each job has a GPU in the current matching */
    uint32_t stamp;
} hetero_ws;

/* Size a workspace for up to cap_n jobs and cap_m GPUs. SIM_OK or SIM_ENOMEM. */
int hetero_ws_init(hetero_ws *w, uint32_t cap_n, uint32_t cap_m);
void hetero_ws_fini(hetero_ws *w);

/*
 * Exact bottleneck optimum: cost is n x m row-major (n <= m <= the workspace's caps).
 * Returns the smallest achievable largest cost and fills assign[i] (the GPU of job i);
 * INFINITY (and assign all HETERO_NONE) when no assignment gives every job a GPU.
 */
double hetero_bottleneck(hetero_ws *w, const double *cost, uint32_t n, uint32_t m,
                         uint32_t *assign);

/*
 * The smallest T for which each job's work can be split over the GPUs, t[i][k] >= 0
 * seconds of job i on GPU k with sum_k t[i][k] / cost[i][k] = 1, so that no GPU works
 * more than T (sum_i t[i][k] <= T) and no job runs more than T (sum_k t[i][k] <= T):
 * no schedule that moves jobs between GPUs without losing work ends earlier, and it is
 * at most the bottleneck optimum (a fixed assignment is such a split). INFINITY when a job
 * fits no GPU, NAN when GLPK finds no optimum.
 */
double hetero_preemptive_bound(const double *cost, uint32_t n, uint32_t m);

/* The largest cost of an assignment (INFINITY if a job has no GPU or an infinite cost). */
double hetero_makespan(const double *cost, uint32_t n, uint32_t m, const uint32_t *assign);

/* Swap-round phases. */
typedef enum hetero_phase {
    HETERO_COLD = 0, /* the cold-start mapping runs its first round */
    HETERO_TRYING,   /* a swapped mapping runs a round */
    HETERO_FROZEN,   /* the best mapping is kept for good */
} hetero_phase;

/* What a round decided. */
typedef enum hetero_action {
    HETERO_SWAP = 0,  /* swapped the slowest and the fastest job's GPUs */
    HETERO_KEEP_SWAP, /* the trial improved: kept, and swapped again */
    HETERO_REVERT,    /* the trial did not improve: back to the best, frozen */
    HETERO_FREEZE,    /* nothing left to try (or the epoch ended): frozen as is */
} hetero_action;

/* The swap rounds of one group of n jobs. cur[i] / best[i]: the GPU of job i. */
typedef struct hetero_swap {
    uint32_t n;
    uint32_t *cur, *best; /* caller-provided arrays of n entries */
    hetero_phase phase;
    double t_best; /* best round time so far, seconds (INFINITY before the first) */
    double t_cur;  /* slowest time of the last measured round */
} hetero_swap;

/* Start with the cold mapping (copied into cur and best). */
void hetero_swap_begin(hetero_swap *s, uint32_t n, uint32_t *cur, uint32_t *best,
                       const uint32_t *cold);

/*
 * End of a round: measured[i] is job i's round time under cur. swappable(ctx, a, b)
 * says whether jobs a and b may exchange GPUs (memory fits); NULL = always. Applies the
 * rule and returns the action; cur holds the mapping to run next (after REVERT, the
 * best one). Once frozen, cur never changes again and the action is HETERO_FREEZE.
 * last_round: the first epoch ends with this round (freeze on the best mapping).
 */
hetero_action hetero_swap_round(hetero_swap *s, const double *measured, bool last_round,
                                bool (*swappable)(void *ctx, uint32_t a, uint32_t b), void *ctx);

/* "swap", "keep+swap", "revert", "freeze". */
const char *hetero_action_name(hetero_action a);

#endif
