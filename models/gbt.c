/*
 * gbt.c: histogram-based gradient boosting with squared loss (see gbt.h). Per tree, the
 * row ids are kept grouped by the node they reached (each group in increasing order, so
 * every sum adds its rows in the order of one pass over them); each level accumulates,
 * per node, feature and bin, the sum of residuals and the row count, then every node
 * takes the split with the largest decrease of squared error, S_L^2/n_L + S_R^2/n_R -
 * S^2/n, and its group is split by the bins of the split feature. Ties keep the first
 * candidate in (feature, bin) order, so fits are deterministic.
 */
#include "models/gbt.h"

#include "base/alloc.h"

#include <gsl/gsl_sort.h>
#include <math.h>
#include <string.h>

/* One histogram cell: the residual sum and the row count, added as one vector (the
 * count is a double: integers below 2^53 are exact, so the sums and the gains are those
 * of an integer count). */
typedef double hbin __attribute__((vector_size(16), aligned(8)));

struct model_gbt_ws {
    uint32_t max_rows, p, depth, bins;
    uint8_t *bin;     /* max_rows x n_active: bin of each active feature's value */
    double *cuts;     /* p x (bins - 1): thresholds, increasing */
    uint32_t *n_cuts; /* p */
    double *col;      /* max_rows: one column's sample, its quantiles selected in place */
    double *resid;    /* max_rows: y - current prediction */
    uint32_t *rows;   /* max_rows: row ids grouped by the node they reached, each group in */
    uint32_t *rows2;  /* ... increasing order; rows2 receives the next level's */
    uint32_t *start;  /* 2^depth + 1: where each node's group begins in rows */
    hbin *hist;       /* 2^(depth-1) x n_active x bins: the current level */
    hbin *prev;       /* same: the parent level (histogram subtraction) */
    int32_t *go_a;    /* 2^(depth-1): active feature of each node's split, -1 = none */
    uint32_t *go_s;   /* 2^(depth-1): its cut (rows with a larger bin go right) */
    uint32_t *go_nl;  /* 2^(depth-1): rows going left */
    uint32_t *active; /* features with at least one cut */
    uint32_t n_active;
    double min_gain; /* smallest gain that splits: relative to the tree's residual scale */
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
    size_t half = (size_t)1 << (prm->depth - 1);
    w->bin = sim_calloc(np, sizeof *w->bin);
    w->cuts = sim_calloc((size_t)p * (prm->bins - 1), sizeof *w->cuts);
    w->n_cuts = sim_calloc(p, sizeof *w->n_cuts);
    w->col = sim_calloc(max_rows, sizeof *w->col);
    w->resid = sim_calloc(max_rows, sizeof *w->resid);
    w->rows = sim_calloc(max_rows, sizeof *w->rows);
    w->rows2 = sim_calloc(max_rows, sizeof *w->rows2);
    w->start = sim_calloc(2 * half + 1, sizeof *w->start);
    w->hist = sim_calloc(hist, sizeof *w->hist);
    w->prev = sim_calloc(hist, sizeof *w->prev);
    w->go_a = sim_calloc(half, sizeof *w->go_a);
    w->go_s = sim_calloc(half, sizeof *w->go_s);
    w->go_nl = sim_calloc(half, sizeof *w->go_nl);
    w->active = sim_calloc(p, sizeof *w->active);
    if (!w->bin || !w->cuts || !w->n_cuts || !w->col || !w->resid || !w->rows || !w->rows2 ||
        !w->start || !w->hist || !w->prev || !w->go_a || !w->go_s || !w->go_nl || !w->active) {
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
    sim_free(w->rows);
    sim_free(w->rows2);
    sim_free(w->start);
    sim_free(w->hist);
    sim_free(w->prev);
    sim_free(w->go_a);
    sim_free(w->go_s);
    sim_free(w->go_nl);
    sim_free(w->active);
    sim_free(w);
}

static void swap_d(double *a, size_t i, size_t j)
{
    double t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Leaves at each place want[0..nw) (increasing, within [lo, hi)) of a the value that
 * place holds once a[lo..hi) is sorted: quickselect for many places at once, with a
 * three-way partition (columns often hold few distinct values), O(n log nw) expected;
 * past `depth` partitions the rest is sorted by GSL (heapsort, O(n log n) always). */
static void select_places(double *a, size_t lo, size_t hi, const size_t *want, size_t nw,
                          unsigned depth)
{
    while (nw && hi - lo > 16) {
        if (!depth--) {
            gsl_sort(a + lo, 1, hi - lo);
            return;
        }
        double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
        double p = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
        while (i < gt) {
            if (a[i] < p)
                swap_d(a, lt++, i++);
            else if (a[i] > p)
                swap_d(a, i, --gt);
            else
                i++;
        }
        size_t left = 0;
        while (left < nw && want[left] < lt)
            left++;
        select_places(a, lo, lt, want, left, depth);
        size_t mid = left;
        while (mid < nw && want[mid] < gt)
            mid++; /* places holding p: done */
        want += mid;
        nw -= mid;
        lo = gt;
    }
    if (!nw)
        return;
    for (size_t i = lo + 1; i < hi; i++) {
        double v = a[i];
        size_t k = i;
        for (; k > lo && a[k - 1] > v; k--)
            a[k] = a[k - 1];
        a[k] = v;
    }
}

/* Thresholds of feature j: distinct quantiles of the column, below its maximum (a cut at
 * the maximum would leave the right side empty). Long columns are subsampled at a fixed
 * stride (at most CUT_SAMPLE values) before the quantiles are selected: cuts need only
 * approximate quantiles, and the split search still scores every row. */
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
    /* The b/B quantile: the cut leaves ceil(b n / B) values (of distinct ones) left. */
    size_t pos[256];
    for (uint32_t b = 1; b < B; b++) {
        size_t q = (size_t)ceil((double)b * (double)m_n / (double)B);
        q = q ? q - 1 : 0;
        pos[b - 1] = q < m_n ? q : m_n - 1;
    }
    select_places(w->col, 0, m_n, pos, B - 1, 64);
    double *cuts = w->cuts + (size_t)j * (B - 1);
    uint32_t m = 0;
    for (uint32_t b = 1; b < B; b++) {
        double v = w->col[pos[b - 1]];
        if (v < hi && (m == 0 || v > cuts[m - 1]))
            cuts[m++] = v;
    }
    /* A sample can miss the only value below the maximum: cut at the minimum then. */
    if (m == 0)
        cuts[m++] = lo;
    w->n_cuts[j] = m;
}

/* Bin of x for feature j: the number of thresholds strictly below x (a search without
 * branches on the comparisons: their outcomes are as good as random). */
static uint8_t bin_of(const model_gbt_ws *w, uint32_t j, double x)
{
    const double *c = w->cuts + (size_t)j * (w->bins - 1);
    uint32_t n = w->n_cuts[j], lo = 0;
    if (!n)
        return 0;
    while (n > 1) {
        uint32_t half = n / 2;
        lo = c[lo + half] < x ? lo + half : lo;
        n -= half;
    }
    return (uint8_t)(lo + (c[lo] < x));
}

/* Sum node k's rows into its histogram h (n_active x bins cells, zeroed). */
static void accumulate(const model_gbt_ws *w, uint32_t k, hbin *h)
{
    uint32_t na = w->n_active, B = w->bins;
    for (uint32_t x = w->start[k]; x < w->start[k + 1]; x++) {
        uint32_t i = w->rows[x];
        const uint8_t *bi = w->bin + (size_t)i * na;
        hbin r = {w->resid[i], 1.0};
        hbin *c = h;
        for (uint32_t a = 0; a < na; a++, c += B)
            c[bi[a]] += r;
    }
}

/* Whether node k of a level gets its histogram from its rows: the root, and the smaller
 * group of each pair of siblings (the left one on a tie); the other is its parent's
 * minus it. */
static bool summed_from_rows(const model_gbt_ws *w, uint32_t level, uint32_t k)
{
    if (level == 0)
        return true;
    uint32_t nk = w->start[k + 1] - w->start[k];
    uint32_t ns = w->start[(k ^ 1u) + 1] - w->start[k ^ 1u];
    return k % 2 == 0 ? nk <= ns : nk < ns;
}

/* The best split of node k (histogram h) into go_a, go_s and go_nl; the tree's feat and
 * thr at node nd. Ties keep the first candidate in (feature, cut) order. */
static void best_split(model_gbt_ws *w, const model_gbt *g, const hbin *h, uint32_t k,
                       uint16_t *feat, double *thr, uint32_t nd)
{
    uint32_t na = w->n_active, B = w->bins;
    double min_leaf = g->prm.min_leaf;
    /* Node totals from the first active feature's histogram (every row is in one of its
     * bins); a node without active features does not split. */
    double S = 0, N = 0;
    for (uint32_t b = 0; b < B && na; b++) {
        S += h[b][0];
        N += h[b][1];
    }
    double best_gain = w->min_gain, parent = N > 0 ? S * S / N : 0, best_nl = 0;
    int32_t best_a = -1;
    uint32_t best_s = 0;
    for (uint32_t a = 0; a < na; a++) {
        const hbin *c = h + (size_t)a * B;
        uint32_t cuts = w->n_cuts[w->active[a]];
        double SL = 0, NL = 0;
        for (uint32_t s = 0; s < cuts; s++) {
            SL += c[s][0];
            NL += c[s][1];
            double NR = N - NL;
            if (NL < min_leaf || NR < min_leaf)
                continue;
            double SR = S - SL;
            double gain = SL * SL / NL + SR * SR / NR - parent;
            if (gain > best_gain) {
                best_gain = gain;
                best_a = (int32_t)a;
                best_s = s;
                best_nl = NL;
            }
        }
    }
    w->go_a[k] = best_a;
    w->go_s[k] = best_s;
    w->go_nl[k] = best_a < 0 ? w->start[k + 1] - w->start[k] : (uint32_t)best_nl;
    if (best_a < 0) {
        feat[nd] = 0;
        thr[nd] = INFINITY;
    } else {
        uint32_t j = w->active[best_a];
        feat[nd] = (uint16_t)j;
        thr[nd] = w->cuts[(size_t)j * (B - 1) + best_s];
    }
}

/* Node k's rows into its children's groups in rows2, each in increasing order: a row goes
 * right when its bin of the split feature is above the split's cut, which is x > thr (the
 * cuts increase strictly, so bin > s exactly when cuts[s] < x). */
static void partition(model_gbt_ws *w, uint32_t k, uint32_t *child_start)
{
    uint32_t lo = w->start[k], hi = w->start[k + 1], na = w->n_active;
    uint32_t l = lo, r = lo + w->go_nl[k];
    child_start[2 * k] = lo;
    child_start[2 * k + 1] = r;
    if (w->go_a[k] < 0) {
        memcpy(w->rows2 + lo, w->rows + lo, (size_t)(hi - lo) * sizeof *w->rows);
        return;
    }
    const uint8_t *col = w->bin + w->go_a[k];
    uint32_t s = w->go_s[k];
    for (uint32_t x = lo; x < hi; x++) {
        uint32_t i = w->rows[x];
        uint32_t right = col[(size_t)i * na] > s;
        w->rows2[right ? r : l] = i;
        r += right;
        l += 1 - right;
    }
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
    uint32_t na = w->n_active;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t a = 0; a < na; a++)
            w->bin[i * na + a] = bin_of(w, w->active[a], X[i * p + w->active[a]]);
        w->resid[i] = y[i] - g->base;
    }
    size_t internal = ((size_t)1 << D) - 1, leaves = (size_t)1 << D, cells = (size_t)na * B;
    uint32_t next[257]; /* the next level's group starts (2^depth + 1 <= 257) */
    for (uint32_t t = 0; t < g->prm.trees; t++) {
        uint16_t *feat = g->feat + t * internal;
        double *thr = g->thr + t * internal;
        double *leaf = g->leaf + t * leaves;
        /* Gains scale with the squared residuals, so the threshold that keeps rounding
         * noise from splitting does too: an absolute one would refuse every split of
         * targets in small units (a step of 1e-7 gains 1e-14). */
        double ss = 0;
        for (uint32_t i = 0; i < n; i++) {
            w->rows[i] = i;
            ss += w->resid[i] * w->resid[i];
        }
        w->min_gain = 1e-12 * ss;
        w->start[0] = 0;
        w->start[1] = (uint32_t)n;
        for (uint32_t level = 0; level < D; level++) {
            uint32_t first = (1u << level) - 1, count = 1u << level;
            memset(w->hist, 0, count * cells * sizeof *w->hist);
            /* Histogram subtraction: below the root, accumulate only the smaller child
             * of each pair and obtain its sibling as parent minus child. */
            for (uint32_t k = 0; k < count; k++)
                if (summed_from_rows(w, level, k))
                    accumulate(w, k, w->hist + k * cells);
            for (uint32_t k = 0; k < count; k++) {
                if (summed_from_rows(w, level, k))
                    continue;
                hbin *h = w->hist + k * cells;
                const hbin *sib = w->hist + (k ^ 1u) * cells;
                const hbin *par = w->prev + (k / 2) * cells;
                for (size_t c = 0; c < cells; c++)
                    h[c] = par[c] - sib[c];
            }
            for (uint32_t k = 0; k < count; k++)
                best_split(w, g, w->hist + k * cells, k, feat, thr, first + k);
            for (uint32_t k = 0; k < count; k++)
                partition(w, k, next);
            next[2 * count] = (uint32_t)n;
            memcpy(w->start, next, (2 * (size_t)count + 1) * sizeof *next);
            uint32_t *t2 = w->rows;
            w->rows = w->rows2;
            w->rows2 = t2;
            hbin *h2 = w->prev;
            w->prev = w->hist;
            w->hist = h2;
        }
        /* Leaves: each group's rows in increasing order, as one pass over the rows
         * would add them. */
        for (size_t l = 0; l < leaves; l++) {
            double sum = 0;
            uint32_t lo = w->start[l], hi = w->start[l + 1];
            for (uint32_t x = lo; x < hi; x++)
                sum += w->resid[w->rows[x]];
            leaf[l] = hi > lo ? g->prm.rate * sum / (hi - lo) : 0;
            for (uint32_t x = lo; x < hi; x++)
                w->resid[w->rows[x]] -= leaf[l];
        }
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
