/*
 * test_gbt.c: gradient-boosted trees against a hand-computed stump. On x = (1, 2, 3, 4),
 * y = (1, 1, 3, 5) with depth 1, rate 1, 4 bins and min_leaf 1, the base is 2.5, the
 * candidate cuts are 1, 2 and 3, and the split x > 2 wins (gain 9 against 3 and 25/3), so the
 * leaves are -1.5 and +1.5: predictions 1 below or at 2 and 4 above, and the same in
 * units of 1e-7. Also: a step
 * function is learnt exactly, training error falls with every tree, fits are
 * deterministic, a heavy-tailed target is fitted better than by its mean, bad input and
 * allocation failures are reported.
 */
#include "models/gbt.h"

#include "base/alloc.h"

#include "check.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double sse(const model_gbt *g, const double *X, const double *y, int n, int p)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        double e = model_gbt_predict(g, X + i * p) - y[i];
        s += e * e;
    }
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fit written plainly, to compare with: every feature's cuts from a sorted sample,
 * bins by counting, and at each level a pass over every row in order (the smaller child
 * of each pair summed, its sibling as parent minus child, as the fast fit does), rows sent
 * right by x > thr. Fills feat, thr and leaf as model_gbt_fit does; returns the base. */
enum { RP = 8, RB = 32, RD = 3, RT = 30, RCELLS = RP * RB };
static double plain_fit(const double *X, const double *y, int n, int p, uint16_t *feat, double *thr,
                        double *leaf)
{
    static double cuts[RP][RB - 1], col[4096], hs[4][RCELLS], hn[4][RCELLS], ps[4][RCELLS],
        pn[4][RCELLS], resid[4096];
    static int ncut[RP], bin[4096][RP], node[4096], nnode[8];
    double base = 0;
    for (int i = 0; i < n; i++)
        base += y[i];
    base /= n;
    for (int j = 0; j < p; j++) {
        double lo = X[j], hi = X[j];
        for (int i = 0; i < n; i++) {
            lo = X[i * p + j] < lo ? X[i * p + j] : lo;
            hi = X[i * p + j] > hi ? X[i * p + j] : hi;
        }
        ncut[j] = 0;
        if (!(hi > lo))
            continue;
        int stride = n > 2048 ? (n + 2047) / 2048 : 1, m = 0;
        for (int i = 0; i < n; i += stride)
            col[m++] = X[i * p + j];
        qsort(col, (size_t)m, sizeof *col, cmp_double);
        for (int b = 1; b < RB; b++) {
            long q = (long)ceil((double)b * m / RB);
            q = q ? q - 1 : 0;
            double v = col[q < m ? q : m - 1];
            if (v < hi && (ncut[j] == 0 || v > cuts[j][ncut[j] - 1]))
                cuts[j][ncut[j]++] = v;
        }
        if (ncut[j] == 0)
            cuts[j][ncut[j]++] = lo;
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            bin[i][j] = 0;
            while (bin[i][j] < ncut[j] && cuts[j][bin[i][j]] < X[i * p + j])
                bin[i][j]++;
        }
        resid[i] = y[i] - base;
    }
    for (int t = 0; t < RT; t++) {
        double ss = 0;
        for (int i = 0; i < n; i++)
            ss += resid[i] * resid[i];
        memset(node, 0, sizeof node);
        for (int level = 0; level < RD; level++) {
            int first = (1 << level) - 1, count = 1 << level;
            int small[4];
            for (int k = 0; k < count; k++)
                small[k] =
                    level == 0 || (k % 2 == 0 ? nnode[k] <= nnode[k + 1] : nnode[k] < nnode[k - 1]);
            memset(hs, 0, sizeof hs);
            memset(hn, 0, sizeof hn);
            for (int i = 0; i < n; i++) {
                int k = node[i] - first;
                if (!small[k])
                    continue;
                for (int j = 0; j < p; j++) {
                    if (!ncut[j])
                        continue;
                    hs[k][j * RB + bin[i][j]] += resid[i];
                    hn[k][j * RB + bin[i][j]] += 1;
                }
            }
            for (int k = 0; k < count; k++)
                for (int c = 0; c < RCELLS && !small[k]; c++) {
                    hs[k][c] = ps[k / 2][c] - hs[k ^ 1][c];
                    hn[k][c] = pn[k / 2][c] - hn[k ^ 1][c];
                }
            for (int k = 0; k < count; k++) {
                int j0 = 0;
                while (j0 < p && !ncut[j0])
                    j0++;
                double S = 0, N = 0;
                for (int b = 0; b < RB && j0 < p; b++) {
                    S += hs[k][j0 * RB + b];
                    N += hn[k][j0 * RB + b];
                }
                double best = 1e-12 * ss, parent = N ? S * S / N : 0;
                int bj = -1, bs = 0;
                for (int j = 0; j < p; j++) {
                    double SL = 0, NL = 0;
                    for (int s = 0; s < ncut[j]; s++) {
                        SL += hs[k][j * RB + s];
                        NL += hn[k][j * RB + s];
                        if (NL < 8 || N - NL < 8)
                            continue;
                        double gain = SL * SL / NL + (S - SL) * (S - SL) / (N - NL) - parent;
                        if (gain > best) {
                            best = gain;
                            bj = j;
                            bs = s;
                        }
                    }
                }
                feat[t * 7 + first + k] = (uint16_t)(bj < 0 ? 0 : bj);
                thr[t * 7 + first + k] = bj < 0 ? INFINITY : cuts[bj][bs];
            }
            memset(nnode, 0, sizeof nnode);
            for (int i = 0; i < n; i++) {
                int nd = node[i];
                node[i] = 2 * nd + 1 + (X[i * p + feat[t * 7 + nd]] > thr[t * 7 + nd]);
                nnode[node[i] - (2 * first + 1)]++;
            }
            memcpy(ps, hs, sizeof ps);
            memcpy(pn, hn, sizeof pn);
        }
        double lsum[8] = {0}, lcnt[8] = {0};
        for (int i = 0; i < n; i++) {
            lsum[node[i] - 7] += resid[i];
            lcnt[node[i] - 7]++;
        }
        for (int l = 0; l < 8; l++)
            leaf[t * 8 + l] = lcnt[l] ? 0.1 * lsum[l] / lcnt[l] : 0;
        for (int i = 0; i < n; i++)
            resid[i] -= leaf[t * 8 + node[i] - 7];
    }
    return base;
}

/* Fits of the default parameters on random data (n rows, p features, kinds by column:
 * continuous, a few integers, binary, constant) equal the plain fit's, bit for bit.
 * Returns the number of fits that differ. */
static int compare_plain(uint64_t seed, int n, int p, bool all_constant)
{
    static double X[4096 * RP], y[4096];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < p; j++) {
            double u = gsl_rng_uniform(rng);
            X[i * p + j] = all_constant || j % 4 == 3 ? 1.5
                           : j % 4 == 0               ? u * u * 100
                           : j % 4 == 1               ? floor(u * 5)
                                                      : (double)(u > 0.7);
        }
        y[i] = log1p(3 * X[i * p] + (p > 1 ? X[i * p + 1] : 0)) + gsl_ran_gaussian(rng, 0.5);
    }
    gsl_rng_free(rng);
    model_gbt_params prm;
    model_gbt_params_default(&prm);
    model_gbt g;
    model_gbt_ws *w;
    static uint16_t feat[RT * 7];
    static double thr[RT * 7], leaf[RT * 8];
    int differ = 1;
    if (model_gbt_init(&g, (uint32_t)p, &prm) == SIM_OK &&
        model_gbt_ws_create(&w, (uint32_t)n, (uint32_t)p, &prm) == SIM_OK) {
        if (model_gbt_fit(&g, w, X, y, (size_t)n) == SIM_OK) {
            double base = plain_fit(X, y, n, p, feat, thr, leaf);
            differ = base != g.base || g.trees != RT || memcmp(feat, g.feat, sizeof feat) ||
                     memcmp(leaf, g.leaf, sizeof leaf);
            for (int k = 0; k < RT * 7; k++)
                differ |= thr[k] != g.thr[k];
        }
        model_gbt_ws_destroy(w);
    }
    model_gbt_fini(&g);
    return differ;
}

int main(void)
{
    model_gbt_params prm = {.trees = 1, .depth = 1, .min_leaf = 1, .bins = 4, .rate = 1.0};
    model_gbt g;
    model_gbt_ws *w;
    CHECK(model_gbt_init(&g, 1, &prm) == SIM_OK);
    CHECK(model_gbt_ws_create(&w, 4, 1, &prm) == SIM_OK);
    double X[4] = {1, 2, 3, 4}, y[4] = {1, 1, 3, 5};
    CHECK(model_gbt_fit(&g, w, X, y, 4) == SIM_OK);
    CHECK_NEAR(g.base, 2.5, 1e-12);
    CHECK_NEAR(g.thr[0], 2.0, 0);
    double q[4] = {1, 2, 2.5, 10};
    CHECK_NEAR(model_gbt_predict(&g, &q[0]), 1.0, 1e-12);
    CHECK_NEAR(model_gbt_predict(&g, &q[1]), 1.0, 1e-12);
    CHECK_NEAR(model_gbt_predict(&g, &q[2]), 4.0, 1e-12);
    CHECK_NEAR(model_gbt_predict(&g, &q[3]), 4.0, 1e-12);
    CHECK(model_gbt_fit(&g, w, X, y, 5) == SIM_EINVAL);
    double bad[4] = {1, INFINITY, 3, 4};
    CHECK(model_gbt_fit(&g, w, bad, y, 4) == SIM_EINVAL);
    model_gbt_ws_destroy(w);
    model_gbt_fini(&g);

    /* The same stump in small units: y = (1, 1, 3, 5) x 1e-7 splits at x > 2 alike (its
     * gain, 9e-14, is below any absolute tolerance a fit might apply). */
    CHECK(model_gbt_init(&g, 1, &prm) == SIM_OK);
    CHECK(model_gbt_ws_create(&w, 4, 1, &prm) == SIM_OK);
    double ysmall[4] = {1e-7, 1e-7, 3e-7, 5e-7};
    CHECK(model_gbt_fit(&g, w, X, ysmall, 4) == SIM_OK);
    CHECK_NEAR(g.thr[0], 2.0, 0);
    CHECK_NEAR(model_gbt_predict(&g, &q[0]), 1e-7, 1e-12);
    CHECK_NEAR(model_gbt_predict(&g, &q[3]), 4e-7, 1e-12);
    model_gbt_ws_destroy(w);
    model_gbt_fini(&g);

    /* A step at 0.5 on a grid is learnt exactly by one full-rate stump. */
    enum { N = 64 };
    double xs[N], ys[N];
    for (int i = 0; i < N; i++) {
        xs[i] = (i + 1) / (double)N;
        ys[i] = xs[i] > 0.5 ? 2.385 : -1.0;
    }
    prm.bins = 32;
    CHECK(model_gbt_init(&g, 1, &prm) == SIM_OK);
    CHECK(model_gbt_ws_create(&w, N, 1, &prm) == SIM_OK);
    CHECK(model_gbt_fit(&g, w, xs, ys, N) == SIM_OK);
    CHECK(sse(&g, xs, ys, N, 1) < 1e-20);
    model_gbt_ws_destroy(w);
    model_gbt_fini(&g);

    /* Heavy tails: y = ln(duration) with a lognormal body and a 10 % tail 100x longer,
     * depending on two features non-linearly. Training error falls with each tree. */
    enum { M = 2000, P = 3 };
    static double A[M * P], b[M];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 9);
    double mean = 0;
    for (int i = 0; i < M; i++) {
        A[i * P + 0] = gsl_rng_uniform(rng);
        A[i * P + 1] = (double)gsl_rng_uniform_int(rng, 4);
        A[i * P + 2] = gsl_ran_gaussian(rng, 1.0);
        bool tail = A[i * P + 0] > 0.9;
        b[i] = 6 + (A[i * P + 1] == 2 ? 1.5 : 0) + (tail ? 4.6 : 0) + gsl_ran_gaussian(rng, 0.3);
        mean += b[i];
    }
    gsl_rng_free(rng);
    mean /= M;
    double sst = 0;
    for (int i = 0; i < M; i++)
        sst += (b[i] - mean) * (b[i] - mean);
    model_gbt_params_default(&prm);
    CHECK(model_gbt_init(&g, P, &prm) == SIM_OK);
    CHECK(model_gbt_ws_create(&w, M, P, &prm) == SIM_OK);
    double prev = sst * 1.0000001;
    int rises = 0;
    for (uint32_t t = 1; t <= 40; t += 3) {
        prm.trees = t;
        model_gbt h;
        CHECK(model_gbt_init(&h, P, &prm) == SIM_OK);
        CHECK(model_gbt_fit(&h, w, A, b, M) == SIM_OK);
        double s = sse(&h, A, b, M, P);
        rises += s > prev;
        prev = s;
        model_gbt_fini(&h);
    }
    CHECK_EQ_I64(rises, 0);
    model_gbt_params_default(&prm);
    CHECK(model_gbt_fit(&g, w, A, b, M) == SIM_OK);
    double r2 = 1 - sse(&g, A, b, M, P) / sst;
    CHECK(r2 > 0.9);
    model_gbt g2;
    CHECK(model_gbt_init(&g2, P, &prm) == SIM_OK);
    CHECK(model_gbt_fit(&g2, w, A, b, M) == SIM_OK);
    int differ = 0;
    for (int i = 0; i < M; i++)
        differ += model_gbt_predict(&g, A + i * P) != model_gbt_predict(&g2, A + i * P);
    CHECK_EQ_I64(differ, 0);
    /* A workspace of another shape is refused. */
    model_gbt_ws *w2;
    CHECK(model_gbt_ws_create(&w2, M, P + 1, &prm) == SIM_OK);
    CHECK(model_gbt_fit(&g2, w2, A, b, M) == SIM_EINVAL);
    model_gbt_ws_destroy(w2);
    model_gbt_fini(&g2);
    model_gbt_ws_destroy(w);
    model_gbt_fini(&g);

    /* The fast fit against the plain one, on row counts that leave every kind of node
     * (empty, below min_leaf, unsplittable) somewhere. */
    int differ_plain = 0;
    for (uint64_t s = 1; s <= 12; s++)
        differ_plain +=
            compare_plain(s, (int)(s % 3 == 0 ? 4096 : 30 + s * 97), (int)(1 + s % RP), false);
    differ_plain += compare_plain(99, 500, 5, true);
    CHECK_EQ_I64(differ_plain, 0);

    /* Parameters and allocation failures. */
    prm.depth = 9;
    CHECK(model_gbt_init(&g, 2, &prm) == SIM_EINVAL);
    model_gbt_params_default(&prm);
    int64_t live = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 14; k++) {
        sim_alloc_fail_after(k);
        int st1 = model_gbt_init(&g, 4, &prm);
        int st2 = model_gbt_ws_create(&w, 100, 4, &prm);
        sim_alloc_fail_after(0);
        failures += (st1 == SIM_ENOMEM) + (st2 == SIM_ENOMEM);
        if (st1 == SIM_OK)
            model_gbt_fini(&g);
        if (st2 == SIM_OK)
            model_gbt_ws_destroy(w);
        CHECK_EQ_I64(sim_alloc_live(), live);
    }
    CHECK(failures >= 14);
    return check_done();
}
