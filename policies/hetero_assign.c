/*
 * hetero_assign.c: exact bottleneck assignment and the swap-round rule of the hetero
 * policy (see hetero_assign.h for the algorithms and their sources).
 */
#include "policies/hetero_assign.h"

#include "base/alloc.h"

#include <glpk.h>
#include <math.h>
#include <string.h>

int hetero_ws_init(hetero_ws *w, uint32_t cap_n, uint32_t cap_m)
{
    memset(w, 0, sizeof *w);
    w->cap_n = cap_n;
    w->cap_m = cap_m;
    size_t nm = (size_t)cap_n * cap_m;
    w->cand = sim_calloc(nm ? nm : 1, sizeof *w->cand);
    w->gpu_job = sim_calloc(cap_m ? cap_m : 1, sizeof *w->gpu_job);
    w->seen = sim_calloc(cap_m ? cap_m : 1, sizeof *w->seen);
    w->stack_job = sim_calloc(cap_n ? cap_n : 1, sizeof *w->stack_job);
    w->stack_k = sim_calloc(cap_n ? cap_n : 1, sizeof *w->stack_k);
    w->base = sim_calloc(cap_m ? cap_m : 1, sizeof *w->base);
    w->matched = sim_calloc(cap_n ? cap_n : 1, sizeof *w->matched);
    if (!w->cand || !w->gpu_job || !w->seen || !w->stack_job || !w->stack_k || !w->base ||
        !w->matched) {
        hetero_ws_fini(w);
        return SIM_ENOMEM;
    }
    return SIM_OK;
}

void hetero_ws_fini(hetero_ws *w)
{
    sim_free(w->cand);
    sim_free(w->gpu_job);
    sim_free(w->seen);
    sim_free(w->stack_job);
    sim_free(w->stack_k);
    sim_free(w->base);
    sim_free(w->matched);
    memset(w, 0, sizeof *w);
}

/* Put the element of rank r of a[l..h] at a[r], with no larger one before it and no
 * smaller one after it, within a[l..h] (Hoare's FIND, as Wirth gives it): expected linear
 * time, in place. */
static void select_rank(double *a, int64_t l, int64_t h, int64_t r)
{
    while (l < h) {
        double x = a[r];
        int64_t i = l, j = h;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < r)
            l = i;
        if (r < i)
            h = j;
    }
}

/* Augmenting path from job `root` over edges with cost <= lim (iterative DFS). */
static bool augment(hetero_ws *w, const double *cost, uint32_t m, double lim, uint32_t root)
{
    uint32_t depth = 0;
    w->stack_job[0] = root;
    w->stack_k[0] = 0;
    for (;;) {
        uint32_t i = w->stack_job[depth];
        bool pushed = false;
        while (w->stack_k[depth] < m) {
            uint32_t k = w->stack_k[depth]++;
            if (w->seen[k] == w->stamp || !(cost[(size_t)i * m + k] <= lim))
                continue;
            w->seen[k] = w->stamp;
            if (w->gpu_job[k] == HETERO_NONE) {
                /* Flip the path: each level takes the GPU it last tried. */
                for (;;) {
                    uint32_t ji = w->stack_job[depth];
                    uint32_t kk = w->stack_k[depth] - 1;
                    w->gpu_job[kk] = ji;
                    if (depth == 0)
                        return true;
                    depth--;
                }
            }
            depth++;
            w->stack_job[depth] = w->gpu_job[k];
            w->stack_k[depth] = 0;
            pushed = true;
            break;
        }
        if (pushed)
            continue;
        if (depth == 0)
            return false;
        depth--;
    }
}

/* Whether every job gets a GPU with edges of cost <= lim, starting from the matching in
 * w->base (whose edges all cost <= lim); the maximum matching found stays in gpu_job. */
static bool perfect(hetero_ws *w, const double *cost, uint32_t n, uint32_t m, double lim)
{
    memcpy(w->gpu_job, w->base, (size_t)m * sizeof *w->gpu_job);
    memset(w->matched, 0, n);
    uint32_t left = n;
    for (uint32_t k = 0; k < m; k++)
        if (w->gpu_job[k] != HETERO_NONE) {
            w->matched[w->gpu_job[k]] = 1;
            left--;
        }
    /* Greedy: a free GPU within the limit, in row order. */
    for (uint32_t i = 0; i < n && left; i++) {
        if (w->matched[i])
            continue;
        for (uint32_t k = 0; k < m; k++)
            if (w->gpu_job[k] == HETERO_NONE && cost[(size_t)i * m + k] <= lim) {
                w->gpu_job[k] = i;
                w->matched[i] = 1;
                left--;
                break;
            }
    }
    bool all = true;
    for (uint32_t i = 0; i < n && left; i++) {
        if (w->matched[i])
            continue;
        if (++w->stamp == 0) {
            memset(w->seen, 0, (size_t)m * sizeof *w->seen);
            w->stamp = 1;
        }
        /* A job without an augmenting path stays unmatched; the others are still tried,
         * so the matching is maximum (a warm start for larger probes). */
        if (augment(w, cost, m, lim, i))
            left--;
        else
            all = false;
    }
    return all;
}

double hetero_bottleneck(hetero_ws *w, const double *cost, uint32_t n, uint32_t m, uint32_t *assign)
{
    for (uint32_t i = 0; i < n; i++)
        assign[i] = HETERO_NONE;
    if (n == 0)
        return 0.0;
    if (n > m || n > w->cap_n || m > w->cap_m)
        return INFINITY;
    /* Every job needs a GPU: the optimum is at least the largest row minimum (and, with as
     * many GPUs as jobs, every GPU is used: the largest column minimum). */
    double lb = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        double mn = INFINITY;
        for (uint32_t k = 0; k < m; k++)
            if (cost[(size_t)i * m + k] < mn)
                mn = cost[(size_t)i * m + k];
        if (!isfinite(mn))
            return INFINITY;
        if (mn > lb)
            lb = mn;
    }
    if (n == m)
        for (uint32_t k = 0; k < m; k++) {
            double mn = INFINITY;
            for (uint32_t i = 0; i < n; i++)
                if (cost[(size_t)i * m + k] < mn)
                    mn = cost[(size_t)i * m + k];
            if (!isfinite(mn))
                return INFINITY;
            if (mn > lb)
                lb = mn;
        }
    size_t nc = 0, top = 0;
    for (size_t x = 0; x < (size_t)n * m; x++)
        if (isfinite(cost[x]) && cost[x] >= lb) {
            if (nc == 0 || cost[x] > w->cand[top])
                top = nc;
            w->cand[nc++] = cost[x];
        }
    for (uint32_t k = 0; k < m; k++)
        w->base[k] = HETERO_NONE;
    /* The largest candidate must give every job a GPU, else nothing does. */
    if (nc == 0 || !perfect(w, cost, n, m, w->cand[top]))
        return INFINITY;
    double t = w->cand[top];
    w->cand[top] = w->cand[nc - 1];
    w->cand[nc - 1] = t;
    /* The bound itself (the smallest candidate) is often the optimum. */
    if (perfect(w, cost, n, m, lb)) {
        for (uint32_t k = 0; k < m; k++)
            if (w->gpu_job[k] != HETERO_NONE)
                assign[w->gpu_job[k]] = k;
        return lb;
    }
    memcpy(w->base, w->gpu_job, (size_t)m * sizeof *w->base);
    /* Binary search by rank without sorting: the smallest candidate that gives every job a
     * GPU lies in cand[lo..hi], whose largest value does. The value of rank mid is put in
     * place by selection; a failed probe's maximum matching starts the next probes (all
     * of larger values). */
    size_t lo = 0, hi = nc - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        select_rank(w->cand, (int64_t)lo, (int64_t)hi, (int64_t)mid);
        if (perfect(w, cost, n, m, w->cand[mid])) {
            hi = mid;
        } else {
            lo = mid + 1;
            memcpy(w->base, w->gpu_job, (size_t)m * sizeof *w->base);
        }
    }
    perfect(w, cost, n, m, w->cand[hi]);
    for (uint32_t k = 0; k < m; k++)
        if (w->gpu_job[k] != HETERO_NONE)
            assign[w->gpu_job[k]] = k;
    return w->cand[hi];
}

double hetero_makespan(const double *cost, uint32_t n, uint32_t m, const uint32_t *assign)
{
    double t = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        if (assign[i] >= m)
            return INFINITY;
        double c = cost[(size_t)i * m + assign[i]];
        if (isnan(c))
            return INFINITY;
        if (c > t)
            t = c;
    }
    return t;
}

void hetero_swap_begin(hetero_swap *s, uint32_t n, uint32_t *cur, uint32_t *best,
                       const uint32_t *cold)
{
    s->n = n;
    s->cur = cur;
    s->best = best;
    memcpy(cur, cold, (size_t)n * sizeof *cur);
    memcpy(best, cold, (size_t)n * sizeof *best);
    s->phase = n < 2 ? HETERO_FROZEN : HETERO_COLD;
    s->t_best = INFINITY;
    s->t_cur = INFINITY;
}

/* Swap the GPUs of the slowest and the fastest job (ties: the lowest index). Returns
 * false when they are the same job or may not swap. */
static bool swap_extremes(hetero_swap *s, const double *t,
                          bool (*swappable)(void *ctx, uint32_t a, uint32_t b), void *ctx)
{
    uint32_t slow = 0, fast = 0;
    for (uint32_t i = 1; i < s->n; i++) {
        if (t[i] > t[slow])
            slow = i;
        if (t[i] < t[fast])
            fast = i;
    }
    if (slow == fast || !(t[slow] > t[fast]) || (swappable && !swappable(ctx, slow, fast)))
        return false;
    uint32_t g = s->cur[slow];
    s->cur[slow] = s->cur[fast];
    s->cur[fast] = g;
    return true;
}

hetero_action hetero_swap_round(hetero_swap *s, const double *measured, bool last_round,
                                bool (*swappable)(void *ctx, uint32_t a, uint32_t b), void *ctx)
{
    if (s->phase == HETERO_FROZEN)
        return HETERO_FREEZE;
    double t = 0.0;
    for (uint32_t i = 0; i < s->n; i++)
        if (measured[i] > t)
            t = measured[i];
    s->t_cur = t;
    hetero_action act;
    if (s->phase == HETERO_COLD) {
        s->t_best = t;
        act = HETERO_SWAP;
    } else if (t < s->t_best) {
        s->t_best = t;
        memcpy(s->best, s->cur, (size_t)s->n * sizeof *s->cur);
        act = HETERO_KEEP_SWAP;
    } else {
        memcpy(s->cur, s->best, (size_t)s->n * sizeof *s->cur);
        s->phase = HETERO_FROZEN;
        return HETERO_REVERT;
    }
    if (last_round || !swap_extremes(s, measured, swappable, ctx)) {
        s->phase = HETERO_FROZEN;
        return HETERO_FREEZE;
    }
    s->phase = HETERO_TRYING;
    return act;
}

const char *hetero_action_name(hetero_action a)
{
    switch (a) {
    case HETERO_SWAP:
        return "swap";
    case HETERO_KEEP_SWAP:
        return "keep+swap";
    case HETERO_REVERT:
        return "revert";
    case HETERO_FREEZE:
        return "freeze";
    }
    return "?";
}

double hetero_preemptive_bound(const double *cost, uint32_t n, uint32_t m)
{
    if (n == 0)
        return 0.0;
    size_t nm = (size_t)n * m, cols = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool any = false;
        for (uint32_t k = 0; k < m; k++)
            if (isfinite(cost[(size_t)i * m + k]) && cost[(size_t)i * m + k] > 0) {
                any = true;
                cols++;
            }
        if (!any)
            return INFINITY;
    }
    /* Rows: n works (= 1), m GPU times (<= T), n job times (<= T). Columns: the finite
     * t[i][k], then T. Three entries per t[i][k], m + n for T. */
    size_t nz = 3 * cols + m + n;
    int *ia = sim_malloc((nz + 1) * sizeof *ia), *ja = sim_malloc((nz + 1) * sizeof *ja);
    double *ar = sim_malloc((nz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        sim_free(ia);
        sim_free(ja);
        sim_free(ar);
        return NAN;
    }
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, (int)(2 * n + m));
    glp_add_cols(lp, (int)cols + 1);
    int tcol = (int)cols + 1;
    glp_set_col_bnds(lp, tcol, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, tcol, 1.0);
    for (uint32_t i = 0; i < n; i++) {
        glp_set_row_bnds(lp, (int)i + 1, GLP_FX, 1.0, 1.0);
        glp_set_row_bnds(lp, (int)(n + m + i) + 1, GLP_UP, 0.0, 0.0);
    }
    for (uint32_t k = 0; k < m; k++)
        glp_set_row_bnds(lp, (int)(n + k) + 1, GLP_UP, 0.0, 0.0);
    int e = 0, col = 0;
    for (size_t x = 0; x < nm; x++) {
        double c = cost[x];
        if (!isfinite(c) || !(c > 0))
            continue;
        uint32_t i = (uint32_t)(x / m), k = (uint32_t)(x % m);
        glp_set_col_bnds(lp, ++col, GLP_LO, 0.0, 0.0);
        ++e, ia[e] = (int)i + 1, ja[e] = col, ar[e] = 1.0 / c;
        ++e, ia[e] = (int)(n + k) + 1, ja[e] = col, ar[e] = 1.0;
        ++e, ia[e] = (int)(n + m + i) + 1, ja[e] = col, ar[e] = 1.0;
    }
    for (uint32_t r = 0; r < m + n; r++)
        ++e, ia[e] = (int)(n + r) + 1, ja[e] = tcol, ar[e] = -1.0;
    glp_load_matrix(lp, e, ia, ja, ar);
    sim_free(ia);
    sim_free(ja);
    sim_free(ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    double t = NAN;
    if (glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT)
        t = glp_get_obj_val(lp);
    glp_delete_prob(lp);
    return t;
}
