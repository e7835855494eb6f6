/*
 * test_ridge.c: ridge regression against hand-computed fits. On x = (1, 2, 3),
 * y = (2, 4, 7): mean(y) = 13/3, standardised x = (x - 2) / sqrt(2/3), Z^T Z = 3 and
 * Z^T (y - mean) = 5 sqrt(3/2), so beta = 5 sqrt(3/2) / (3 + lambda) and the prediction
 * at x = 4 is 13/3 + 15 / (3 + lambda): 97/12 with lambda = 1, 28/3 (least squares) with
 * lambda -> 0, whatever the unit of x. Also: exact recovery of a noise-free linear model, a
 * constant feature dropped, bad input refused, and allocation failures reported without leaks.
 */
#include "models/ridge.h"

#include "base/alloc.h"

#include "check.h"

#include <gsl/gsl_rng.h>

int main(void)
{
    model_ridge r;
    model_ridge_ws *w;
    CHECK(model_ridge_init(&r, 1) == SIM_OK);
    CHECK(model_ridge_ws_create(&w, 10, 1) == SIM_OK);
    double X[3] = {1, 2, 3}, y[3] = {2, 4, 7}, x4 = 4;
    CHECK_NEAR(model_ridge_predict(&r, &x4), 0.0, 0);
    CHECK(model_ridge_fit(&r, w, X, y, 3, 1.0) == SIM_OK);
    CHECK(r.fitted);
    CHECK_NEAR(model_ridge_predict(&r, &x4), 97.0 / 12.0, 1e-12);
    CHECK_NEAR(r.intercept, 13.0 / 3.0, 1e-12);
    CHECK(model_ridge_fit(&r, w, X, y, 3, 0.0) == SIM_OK);
    CHECK_NEAR(model_ridge_predict(&r, &x4), 28.0 / 3.0, 1e-8);
    /* Standardisation makes the fit independent of the feature's unit: the same fit on
     * x scaled by 1e-13 (a spread below any absolute tolerance) and by 1e160 (whose
     * squared deviations overflow). */
    for (int s = 0; s < 2; s++) {
        double k = s ? 1e160 : 1e-13, Xk[3] = {k, 2 * k, 3 * k}, xk4 = 4 * k;
        CHECK(model_ridge_fit(&r, w, Xk, y, 3, 1.0) == SIM_OK);
        CHECK(r.inv_sd[0] > 0);
        CHECK_NEAR(model_ridge_predict(&r, &xk4), 97.0 / 12.0, 1e-12);
    }
    /* A single row: only the intercept. */
    CHECK(model_ridge_fit(&r, w, X, y, 1, 1.0) == SIM_OK);
    CHECK_NEAR(model_ridge_predict(&r, &x4), 2.0, 1e-12);
    CHECK(model_ridge_fit(&r, w, X, y, 0, 1.0) == SIM_OK);
    CHECK(!r.fitted);
    CHECK(model_ridge_fit(&r, w, X, y, 11, 1.0) == SIM_EINVAL);
    double nanv[3] = {1, NAN, 3};
    CHECK(model_ridge_fit(&r, w, nanv, y, 3, 1.0) == SIM_EINVAL);
    CHECK(model_ridge_fit(&r, w, X, y, 3, -1.0) == SIM_EINVAL);
    model_ridge_ws_destroy(w);
    model_ridge_fini(&r);

    /* Noise-free y = 1.5 + 2.385 x0 - 3 x1 (+ 0 x2, a constant column) is recovered. */
    enum { N = 200, P = 3 };
    static double A[N * P], b[N];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    for (int i = 0; i < N; i++) {
        A[i * P + 0] = 10 * gsl_rng_uniform(rng);
        A[i * P + 1] = gsl_rng_uniform(rng) - 0.5;
        A[i * P + 2] = 7.0;
        b[i] = 1.5 + 2.385 * A[i * P + 0] - 3 * A[i * P + 1];
    }
    gsl_rng_free(rng);
    CHECK(model_ridge_init(&r, P) == SIM_OK);
    CHECK(model_ridge_ws_create(&w, N, P) == SIM_OK);
    CHECK(model_ridge_fit(&r, w, A, b, N, 1e-9) == SIM_OK);
    double q[P] = {2.5, 0.125, 7.0};
    CHECK_NEAR(model_ridge_predict(&r, q), 1.5 + 2.385 * 2.5 - 0.375, 1e-7);
    CHECK_NEAR(r.coef[2], 0.0, 0);
    CHECK_NEAR(r.inv_sd[2], 0.0, 0);
    /* A heavier penalty shrinks the slope toward 0. */
    CHECK(model_ridge_fit(&r, w, A, b, N, 1000.0) == SIM_OK);
    double lo[P] = {0, 0, 7}, hi[P] = {10, 0, 7};
    CHECK(model_ridge_predict(&r, hi) - model_ridge_predict(&r, lo) < 0.9 * 23.85);
    model_ridge_ws_destroy(w);
    model_ridge_fini(&r);

    /* Allocation failures. */
    int64_t live = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 8; k++) {
        sim_alloc_fail_after(k);
        int st1 = model_ridge_init(&r, 4);
        int st2 = model_ridge_ws_create(&w, 16, 4);
        sim_alloc_fail_after(0);
        failures += (st1 == SIM_ENOMEM) + (st2 == SIM_ENOMEM);
        if (st1 == SIM_OK)
            model_ridge_fini(&r);
        if (st2 == SIM_OK)
            model_ridge_ws_destroy(w);
        CHECK_EQ_I64(sim_alloc_live(), live);
    }
    CHECK(failures >= 8);
    CHECK(model_ridge_ws_create(&w, 0, 4) == SIM_EINVAL);
    model_ridge_ws_destroy(NULL);
    return check_done();
}
