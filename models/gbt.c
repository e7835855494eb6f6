/*
 * gbt.c: histogram-based gradient boosting with squared loss (see gbt.h). Per tree,
 * rows carry the index of the node they reached; each level accumulates, per node,
 * feature and bin, the sum of residuals and the row count, then every node takes the
 * split with the largest decrease of squared error, S_L^2/n_L + S_R^2/n_R - S^2/n.
 * Ties keep the first candidate in (feature, bin) order, so fits are deterministic.
 */
#include "models/gbt.h"

#include "base/alloc.h"

#include <gsl/gsl_sort.h>
#include <math.h>
#include <string.h>

/* One histogram cell: residual sum and row count side by side (one cache line). */
typedef struct hbin {
    double sum;
    uint32_t cnt;
} hbin;

struct model_gbt_ws {
    uint32_t max_rows, p, depth, bins;
    uint8_t *bin;     /* max_rows x p: bin of each value */
    double *cuts;     /* p x (bins - 1): thresholds, increasing */
    uint32_t *n_cuts; /* p */
    double *col;      /* max_rows: one column, sorted */
    double *resid;    /* max_rows: y - current prediction */
    uint32_t *node;   /* max_rows: node reached in the current tree */
    hbin *hist;       /* 2^(depth-1) x p x bins: the current level */
    hbin *prev;       /* same: the parent level (histogram subtraction) */
    uint32_t *n_node; /* 2^depth: rows reaching each node of the next level */
    uint8_t *small;   /* 2^(depth-1): node is the smaller child of its parent */
    uint32_t *active; /* features with at least one cut */
    uint32_t n_active;
    double *leaf_sum; /* 2^depth */
    uint32_t *leaf_cnt;
};

void model_gbt_params_default(model_gbt_params *prm)
{
    prm->trees = 30;
    prm->depth = 3;
    prm->min_leaf = 8;
    prm->bins = 32;
    prm->rate = 0.1;
}

static bool params_ok(const model_gbt_params *prm)
{
    return prm->trees >= 1 && prm->trees <= 10000 && prm->depth >= 1 && prm->depth <= 8 &&
           prm->min_leaf >= 1 && prm->bins >= 2 && prm->bins <= 256 && prm->rate > 0 &&
           prm->rate <= 1;
}

int model_gbt_init(model_gbt *g, uint32_t p, const model_gbt_params *prm)
{
    memset(g, 0, sizeof *g);
    if (!params_ok(prm) || p < 1 || p > UINT16_MAX)
        return SIM_EINVAL;
    g->prm = *prm;
    g->p = p;
    size_t internal = ((size_t)1 << prm->depth) - 1, leaves = (size_t)1 << prm->depth;
    g->feat = sim_calloc(prm->trees * internal, sizeof *g->feat);
    g->thr = sim_calloc(prm->trees * internal, sizeof *g->thr);
    g->leaf = sim_calloc(prm->trees * leaves, sizeof *g->leaf);
    if (!g->feat || !g->thr || !g->leaf) {
        model_gbt_fini(g);
        return SIM_ENOMEM;
    }
    return SIM_OK;
}

void model_gbt_fini(model_gbt *g)
{
    sim_free(g->feat);
    sim_free(g->thr);
    sim_free(g->leaf);
    memset(g, 0, sizeof *g);
}

int model_gbt_ws_create(model_gbt_ws **out, uint32_t max_rows, uint32_t p,
                        const model_gbt_params *prm)
{
    *out = NULL;
    size_t np, hist;
    if (!params_ok(prm) || max_rows < 1 || p < 1 || !sim_mul_ok(max_rows, p, &np) ||
        !sim_mul_ok((size_t)1 << (prm->depth - 1), (size_t)p * prm->bins, &hist))
        return SIM_EINVAL;
    model_gbt_ws *w = sim_calloc(1, sizeof *w);
    if (!w)
        return SIM_ENOMEM;
    w->max_rows = max_rows;
    w->p = p;
    w->depth = prm->depth;
    w->bins = prm->bins;
    w->bin = sim_calloc(np, sizeof *w->bin);
    w->cuts = sim_calloc((size_t)p * (prm->bins - 1), sizeof *w->cuts);
    w->n_cuts = sim_calloc(p, sizeof *w->n_cuts);
    w->col = sim_calloc(max_rows, sizeof *w->col);
    w->resid = sim_calloc(max_rows, sizeof *w->resid);
    w->node = sim_calloc(max_rows, sizeof *w->node);
    w->hist = sim_calloc(hist, sizeof *w->hist);
    w->prev = sim_calloc(hist, sizeof *w->prev);
    w->n_node = sim_calloc((size_t)1 << prm->depth, sizeof *w->n_node);
    w->small = sim_calloc((size_t)1 << (prm->depth - 1), sizeof *w->small);
    w->active = sim_calloc(p, sizeof *w->active);
    w->leaf_sum = sim_calloc((size_t)1 << prm->depth, sizeof *w->leaf_sum);
    w->leaf_cnt = sim_calloc((size_t)1 << prm->depth, sizeof *w->leaf_cnt);
    if (!w->bin || !w->cuts || !w->n_cuts || !w->col || !w->resid || !w->node || !w->hist ||
        !w->prev || !w->n_node || !w->small || !w->active || !w->leaf_sum || !w->leaf_cnt) {
        model_gbt_ws_destroy(w);
        return SIM_ENOMEM;
    }
    *out = w;
    return SIM_OK;
}

void model_gbt_ws_destroy(model_gbt_ws *w)
{
    if (!w)
        return;
    sim_free(w->bin);
    sim_free(w->cuts);
    sim_free(w->n_cuts);
    sim_free(w->col);
    sim_free(w->resid);
    sim_free(w->node);
    sim_free(w->hist);
    sim_free(w->prev);
    sim_free(w->n_node);
    sim_free(w->small);
    sim_free(w->active);
    sim_free(w->leaf_sum);
    sim_free(w->leaf_cnt);
    sim_free(w);
}

/* Thresholds of feature j: distinct quantiles of the column, below its maximum (a cut at
 * the maximum would leave the right side empty). Long columns are subsampled at a fixed
 * stride (at most CUT_SAMPLE values) before sorting: cuts need only approximate
 * quantiles, and the split search still scores every row. */
#define CUT_SAMPLE 2048u
static void make_cuts(model_gbt_ws *w, const double *X, size_t n, uint32_t j)
{
    uint32_t p = w->p, B = w->bins;
    w->n_cuts[j] = 0;
    double lo = X[j], hi = X[j];
    for (size_t i = 1; i < n; i++) {
        double x = X[i * p + j];
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    if (!(hi > lo))
        return;
    size_t stride = n > CUT_SAMPLE ? (n + CUT_SAMPLE - 1) / CUT_SAMPLE : 1, m_n = 0;
    for (size_t i = 0; i < n; i += stride)
        w->col[m_n++] = X[i * p + j];
    gsl_sort(w->col, 1, m_n);
    double *cuts = w->cuts + (size_t)j * (B - 1);
    uint32_t m = 0;
    for (uint32_t b = 1; b < B; b++) {
        /* The b/B quantile: the cut leaves ceil(b n / B) values (of distinct ones) left. */
        size_t pos = (size_t)ceil((double)b * (double)m_n / (double)B);
        pos = pos ? pos - 1 : 0;
        if (pos >= m_n)
            pos = m_n - 1;
        double v = w->col[pos];
        if (v < hi && (m == 0 || v > cuts[m - 1]))
            cuts[m++] = v;
    }
    /* A sample can miss the only value below the maximum: cut at the minimum then. */
    if (m == 0)
        cuts[m++] = lo;
    w->n_cuts[j] = m;
}

/* Bin of x for feature j: the number of thresholds strictly below x. */
static uint8_t bin_of(const model_gbt_ws *w, uint32_t j, double x)
{
    const double *cuts = w->cuts + (size_t)j * (w->bins - 1);
    uint32_t lo = 0, hi = w->n_cuts[j];
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cuts[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint8_t)lo;
}

int model_gbt_fit(model_gbt *g, model_gbt_ws *w, const double *X, const double *y, size_t n)
{
    uint32_t p = g->p, D = g->prm.depth, B = g->prm.bins;
    g->trees = 0;
    g->base = 0;
    if (w->p != p || w->depth != D || w->bins != B || n > w->max_rows)
        return SIM_EINVAL;
    if (n == 0)
        return SIM_OK;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            return SIM_EINVAL;
        for (uint32_t j = 0; j < p; j++)
            if (!isfinite(X[i * p + j]))
                return SIM_EINVAL;
        g->base += y[i];
    }
    g->base /= (double)n;
    w->n_active = 0;
    for (uint32_t j = 0; j < p; j++) {
        make_cuts(w, X, n, j);
        /* A feature without cuts is constant on these rows: it can never split. */
        if (w->n_cuts[j])
            w->active[w->n_active++] = j;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < p; j++)
            w->bin[i * p + j] = bin_of(w, j, X[i * p + j]);
        w->resid[i] = y[i] - g->base;
    }
    size_t internal = ((size_t)1 << D) - 1, leaves = (size_t)1 << D;
    uint32_t min_leaf = g->prm.min_leaf;
    for (uint32_t t = 0; t < g->prm.trees; t++) {
        uint16_t *feat = g->feat + t * internal;
        double *thr = g->thr + t * internal;
        double *leaf = g->leaf + t * leaves;
        memset(w->node, 0, n * sizeof *w->node);
        for (uint32_t level = 0; level < D; level++) {
            uint32_t first = (1u << level) - 1, count = 1u << level;
            size_t hsize = (size_t)count * p * B;
            /* Histogram subtraction: below the root, accumulate only the smaller child
             * of each pair and obtain its sibling as parent minus child. */
            for (uint32_t k = 0; k < count; k++)
                w->small[k] = level == 0 || (k % 2 == 0 ? w->n_node[k] <= w->n_node[k + 1]
                                                        : w->n_node[k] < w->n_node[k - 1]);
            memset(w->hist, 0, hsize * sizeof *w->hist);
            for (size_t i = 0; i < n; i++) {
                uint32_t k = w->node[i] - first;
                if (!w->small[k])
                    continue;
                hbin *h = w->hist + (size_t)k * p * B;
                const uint8_t *bi = w->bin + i * p;
                double r = w->resid[i];
                for (uint32_t a = 0; a < w->n_active; a++) {
                    uint32_t j = w->active[a];
                    hbin *c = h + (size_t)j * B + bi[j];
                    c->sum += r;
                    c->cnt++;
                }
            }
            for (uint32_t k = 0; k < count && level > 0; k++) {
                if (w->small[k])
                    continue;
                hbin *h = w->hist + (size_t)k * p * B;
                const hbin *sib = w->hist + (size_t)(k ^ 1u) * p * B;
                const hbin *par = w->prev + (size_t)(k / 2) * p * B;
                for (uint32_t a = 0; a < w->n_active; a++) {
                    size_t o = (size_t)w->active[a] * B;
                    for (uint32_t b = 0; b < B; b++) {
                        h[o + b].sum = par[o + b].sum - sib[o + b].sum;
                        h[o + b].cnt = par[o + b].cnt - sib[o + b].cnt;
                    }
                }
            }
            for (uint32_t k = 0; k < count; k++) {
                const hbin *h = w->hist + (size_t)k * p * B;
                /* Node totals from one active feature's histogram (every row is in one
                 * of its bins); a node without active features does not split. */
                double S = 0;
                uint32_t N = 0;
                for (uint32_t b = 0; b < B && w->n_active; b++) {
                    S += h[(size_t)w->active[0] * B + b].sum;
                    N += h[(size_t)w->active[0] * B + b].cnt;
                }
                double best_gain = 1e-12, parent = N ? S * S / N : 0;
                int best_j = -1;
                uint32_t best_s = 0;
                for (uint32_t a = 0; a < w->n_active; a++) {
                    uint32_t j = w->active[a];
                    double SL = 0;
                    uint32_t NL = 0;
                    for (uint32_t s = 0; s < w->n_cuts[j]; s++) {
                        SL += h[(size_t)j * B + s].sum;
                        NL += h[(size_t)j * B + s].cnt;
                        uint32_t NR = N - NL;
                        if (NL < min_leaf || NR < min_leaf)
                            continue;
                        double SR = S - SL;
                        double gain = SL * SL / NL + SR * SR / NR - parent;
                        if (gain > best_gain) {
                            best_gain = gain;
                            best_j = (int)j;
                            best_s = s;
                        }
                    }
                }
                uint32_t nd = first + k;
                if (best_j < 0) {
                    feat[nd] = 0;
                    thr[nd] = INFINITY;
                } else {
                    feat[nd] = (uint16_t)best_j;
                    thr[nd] = w->cuts[(size_t)best_j * (B - 1) + best_s];
                }
            }
            memset(w->n_node, 0, 2 * (size_t)count * sizeof *w->n_node);
            for (size_t i = 0; i < n; i++) {
                uint32_t nd = w->node[i];
                bool right = X[i * p + feat[nd]] > thr[nd];
                w->node[i] = 2 * nd + 1 + (right ? 1u : 0u);
                w->n_node[w->node[i] - (2 * first + 1)]++;
            }
            hbin *t2 = w->prev;
            w->prev = w->hist;
            w->hist = t2;
        }
        memset(w->leaf_sum, 0, leaves * sizeof *w->leaf_sum);
        memset(w->leaf_cnt, 0, leaves * sizeof *w->leaf_cnt);
        for (size_t i = 0; i < n; i++) {
            uint32_t l = w->node[i] - (uint32_t)internal;
            w->leaf_sum[l] += w->resid[i];
            w->leaf_cnt[l]++;
        }
        for (size_t l = 0; l < leaves; l++)
            leaf[l] = w->leaf_cnt[l] ? g->prm.rate * w->leaf_sum[l] / w->leaf_cnt[l] : 0;
        for (size_t i = 0; i < n; i++)
            w->resid[i] -= leaf[w->node[i] - internal];
        g->trees = t + 1;
    }
    return SIM_OK;
}

double model_gbt_predict(const model_gbt *g, const double *x)
{
    uint32_t D = g->prm.depth;
    size_t internal = ((size_t)1 << D) - 1, leaves = (size_t)1 << D;
    double yhat = g->base;
    for (uint32_t t = 0; t < g->trees; t++) {
        const uint16_t *feat = g->feat + t * internal;
        const double *thr = g->thr + t * internal;
        uint32_t nd = 0;
        for (uint32_t level = 0; level < D; level++)
            nd = 2 * nd + 1 + (x[feat[nd]] > thr[nd] ? 1u : 0u);
        yhat += g->leaf[t * leaves + (nd - internal)];
    }
    return yhat;
}
