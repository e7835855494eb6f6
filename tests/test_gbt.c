/*
 * test_gbt.c: gradient-boosted trees against a hand-computed stump. On x = (1, 2, 3, 4),
 * y = (1, 1, 3, 5) with depth 1, rate 1, 4 bins and min_leaf 1, the base is 2.5, the
 * candidate cuts are 1, 2 and 3, and the split x > 2 wins (gain 9 against 3 and 25/3), so the
 * leaves are -1.5 and +1.5: predictions 1 below or at 2 and 4 above. Also: a step
 * function is learnt exactly, training error falls with every tree, fits are
 * deterministic, a heavy-tailed target is fitted better than by its mean, bad input and
 * allocation failures are reported.
 */
#include "models/gbt.h"

#include "base/alloc.h"

#include "check.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static double sse(const model_gbt *g, const double *X, const double *y, int n, int p)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        double e = model_gbt_predict(g, X + i * p) - y[i];
        s += e * e;
    }
    return s;
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
