/*
 * test_nmf.c: one multiplicative update on a 2 x 2 matrix against hand-computed
 * factors (W0 = [1;1], H0 = [1 1] give W = [1.5; 3.5], H = [12 17] / 14.5 and a squared
 * error falling from 14 to 4/29); on random sparse matrices the error never increases
 * and every factor stays non-negative; a rank-one matrix is recovered; the transform of
 * a training row gives back its row of W; every allocation failure is reported.
 */
#include "models/nmf.h"

#include "base/alloc.h"

#include "check.h"

#include <gsl/gsl_rng.h>

int main(void)
{
    /* Hand-computed step. */
    {
        uint32_t ptr[3] = {0, 2, 4}, col[4] = {0, 1, 0, 1};
        double val[4] = {1, 2, 3, 4};
        model_csr X = {.rows = 2, .cols = 2, .row_ptr = ptr, .col = col, .val = val};
        model_nmf *m;
        CHECK(model_nmf_create(&m, 2, 2, 1) == SIM_OK);
        double W0[2] = {1, 1}, H0[2] = {1, 1};
        CHECK(model_nmf_set(m, 2, W0, H0) == SIM_OK);
        double err[2];
        CHECK(model_nmf_fit(m, &X, 1, err) == SIM_OK);
        CHECK_NEAR(err[0], 14.0, 1e-12);
        CHECK_NEAR(err[1], 4.0 / 29.0, 1e-12);
        CHECK_NEAR(model_nmf_w(m, 0, 0), 1.5, 1e-12);
        CHECK_NEAR(model_nmf_w(m, 1, 0), 3.5, 1e-12);
        CHECK_NEAR(model_nmf_h(m, 0, 0), 12.0 / 14.5, 1e-12);
        CHECK_NEAR(model_nmf_h(m, 0, 1), 17.0 / 14.5, 1e-12);
        CHECK_NEAR(model_nmf_error(m, &X), 4.0 / 29.0, 1e-12);
        double bad[2] = {-1, 1};
        CHECK(model_nmf_set(m, 2, bad, H0) == SIM_EINVAL);
        CHECK(model_nmf_set(m, 3, W0, H0) == SIM_EINVAL);
        model_csr wrong = X;
        wrong.cols = 3;
        CHECK(model_nmf_fit(m, &wrong, 1, NULL) == SIM_EINVAL);
        model_nmf_destroy(m);
    }
    /* Random sparse matrices: monotone error, non-negative factors. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int round = 0; round < 5; round++) {
        gsl_rng_set(rng, 100 + (unsigned long)round);
        enum { R = 30, C = 50, ITERS = 200 };
        uint32_t ptr[R + 1], col[R * C];
        double val[R * C];
        uint32_t nnz = 0;
        for (uint32_t i = 0; i < R; i++) {
            ptr[i] = nnz;
            for (uint32_t j = 0; j < C; j++)
                if (gsl_rng_uniform(rng) < 0.15) {
                    col[nnz] = j;
                    val[nnz++] = 0.1 + 2.385 * gsl_rng_uniform(rng);
                }
        }
        ptr[R] = nnz;
        model_csr X = {.rows = R, .cols = C, .row_ptr = ptr, .col = col, .val = val};
        model_nmf *m;
        uint32_t k = 2 + (uint32_t)round;
        CHECK(model_nmf_create(&m, R, C, k) == SIM_OK);
        CHECK(model_nmf_init_random(m, &X, rng) == SIM_OK);
        double err[ITERS + 1];
        CHECK(model_nmf_fit(m, &X, ITERS, err) == SIM_OK);
        int rises = 0, negative = 0;
        for (int it = 1; it <= ITERS; it++)
            if (err[it] > err[it - 1] * (1 + 1e-12) + 1e-12)
                rises++;
        for (uint32_t i = 0; i < R; i++)
            for (uint32_t c = 0; c < k; c++)
                negative += !(model_nmf_w(m, i, c) >= 0);
        for (uint32_t c = 0; c < k; c++)
            for (uint32_t j = 0; j < C; j++)
                negative += !(model_nmf_h(m, c, j) >= 0);
        CHECK_EQ_I64(rises, 0);
        CHECK_EQ_I64(negative, 0);
        CHECK(err[ITERS] < 0.8 * err[0]);
        model_nmf_destroy(m);
    }
    /* Rank one: X = u v^T is recovered; the transform of a row returns its W row. */
    {
        enum { R = 6, C = 5 };
        double u[R] = {1.0, 2.385, 0.5, 3.1, 0.25, 1.7}, v[C] = {0.3, 1.2, 2.2, 0.0, 0.9};
        uint32_t ptr[R + 1], col[R * C];
        double val[R * C];
        uint32_t nnz = 0;
        for (uint32_t i = 0; i < R; i++) {
            ptr[i] = nnz;
            for (uint32_t j = 0; j < C; j++)
                if (v[j] > 0) {
                    col[nnz] = j;
                    val[nnz++] = u[i] * v[j];
                }
        }
        ptr[R] = nnz;
        model_csr X = {.rows = R, .cols = C, .row_ptr = ptr, .col = col, .val = val};
        model_nmf *m;
        CHECK(model_nmf_create(&m, R, C, 1) == SIM_OK);
        gsl_rng_set(rng, 7);
        CHECK(model_nmf_init_random(m, &X, rng) == SIM_OK);
        double xx = 0;
        for (uint32_t e = 0; e < nnz; e++)
            xx += val[e] * val[e];
        CHECK(model_nmf_fit(m, &X, 300, NULL) == SIM_OK);
        CHECK(model_nmf_error(m, &X) < 1e-10 * xx);
        double w;
        model_nmf_transform(m, col + ptr[3], val + ptr[3], ptr[4] - ptr[3], 200, &w);
        CHECK_NEAR(w, model_nmf_w(m, 3, 0), 1e-6);
        model_nmf_transform(m, col, val, 0, 200, &w);
        CHECK_NEAR(w, 0.0, 0);
        model_nmf_destroy(m);
    }
    gsl_rng_free(rng);
    /* Invalid sizes and allocation failures. */
    model_nmf *m = (model_nmf *)1;
    CHECK(model_nmf_create(&m, 0, 5, 2) == SIM_EINVAL && m == NULL);
    CHECK(model_nmf_create(&m, 5, 5, 65) == SIM_EINVAL);
    int64_t live = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 12; k++) {
        sim_alloc_fail_after(k);
        int st = model_nmf_create(&m, 10, 20, 3);
        sim_alloc_fail_after(0);
        if (st == SIM_ENOMEM)
            failures++;
        else
            model_nmf_destroy(m);
        CHECK_EQ_I64(sim_alloc_live(), live);
    }
    CHECK_EQ_I64(failures, 9);
    model_nmf_destroy(NULL);
    return check_done();
}
