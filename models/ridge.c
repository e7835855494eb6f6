/*
 * ridge.c: standardise, form Z^T Z + lambda I and Z^T y with GSL BLAS, solve by
 * Cholesky (see ridge.h). Population standard deviations (divide by n) make a
 * two-row fit exactly reproducible by hand.
 */
#include "models/ridge.h"

#include "sim/alloc.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <string.h>

struct model_ridge_ws {
    uint32_t max_rows, p;
    double *Z;  /* max_rows x p standardised rows */
    double *yc; /* centred targets */
    double *A;  /* p x p normal matrix */
    double *b;  /* p right-hand side */
};

int model_ridge_init(model_ridge *r, uint32_t p)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->mean = sim_calloc(p ? p : 1, sizeof *r->mean);
    r->inv_sd = sim_calloc(p ? p : 1, sizeof *r->inv_sd);
    r->coef = sim_calloc(p ? p : 1, sizeof *r->coef);
    if (!r->mean || !r->inv_sd || !r->coef) {
        model_ridge_fini(r);
        return SIM_ENOMEM;
    }
    return SIM_OK;
}

void model_ridge_fini(model_ridge *r)
{
    sim_free(r->mean);
    sim_free(r->inv_sd);
    sim_free(r->coef);
    memset(r, 0, sizeof *r);
}

int model_ridge_ws_create(model_ridge_ws **out, uint32_t max_rows, uint32_t p)
{
    *out = NULL;
    size_t zn;
    if (max_rows < 1 || p < 1 || !sim_mul_ok(max_rows, p, &zn))
        return SIM_EINVAL;
    model_ridge_ws *w = sim_calloc(1, sizeof *w);
    if (!w)
        return SIM_ENOMEM;
    w->max_rows = max_rows;
    w->p = p;
    w->Z = sim_calloc(zn, sizeof *w->Z);
    w->yc = sim_calloc(max_rows, sizeof *w->yc);
    w->A = sim_calloc((size_t)p * p, sizeof *w->A);
    w->b = sim_calloc(p, sizeof *w->b);
    if (!w->Z || !w->yc || !w->A || !w->b) {
        model_ridge_ws_destroy(w);
        return SIM_ENOMEM;
    }
    *out = w;
    return SIM_OK;
}

void model_ridge_ws_destroy(model_ridge_ws *w)
{
    if (!w)
        return;
    sim_free(w->Z);
    sim_free(w->yc);
    sim_free(w->A);
    sim_free(w->b);
    sim_free(w);
}

int model_ridge_fit(model_ridge *r, model_ridge_ws *w, const double *X, const double *y,
                    size_t n, double lambda)
{
    uint32_t p = r->p;
    r->fitted = false;
    if (p != w->p || n > w->max_rows || !(lambda >= 0))
        return SIM_EINVAL;
    if (n == 0)
        return SIM_OK;
    double ym = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            return SIM_EINVAL;
        ym += y[i];
    }
    ym /= (double)n;
    for (uint32_t j = 0; j < p; j++) {
        double s = 0, ss = 0;
        for (size_t i = 0; i < n; i++) {
            double x = X[i * p + j];
            if (!isfinite(x))
                return SIM_EINVAL;
            s += x;
        }
        double mu = s / (double)n;
        for (size_t i = 0; i < n; i++) {
            double dx = X[i * p + j] - mu;
            ss += dx * dx;
        }
        double sd = sqrt(ss / (double)n);
        r->mean[j] = mu;
        /* A (numerically) constant feature carries no information: drop it. */
        r->inv_sd[j] = sd > 1e-12 * (fabs(mu) + 1) ? 1.0 / sd : 0.0;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < p; j++)
            w->Z[i * p + j] = (X[i * p + j] - r->mean[j]) * r->inv_sd[j];
        w->yc[i] = y[i] - ym;
    }
    gsl_matrix_view Z = gsl_matrix_view_array(w->Z, n, p);
    gsl_vector_view yc = gsl_vector_view_array(w->yc, n);
    gsl_matrix_view A = gsl_matrix_view_array(w->A, p, p);
    gsl_vector_view b = gsl_vector_view_array(w->b, p);
    gsl_vector_view beta = gsl_vector_view_array(r->coef, p);
    double lam = lambda > 1e-9 ? lambda : 1e-9;
    gsl_matrix_set_identity(&A.matrix);
    if (gsl_blas_dsyrk(CblasLower, CblasTrans, 1.0, &Z.matrix, lam, &A.matrix) ||
        gsl_blas_dgemv(CblasTrans, 1.0, &Z.matrix, &yc.vector, 0.0, &b.vector) ||
        gsl_linalg_cholesky_decomp1(&A.matrix) ||
        gsl_linalg_cholesky_solve(&A.matrix, &b.vector, &beta.vector)) {
        memset(r->coef, 0, p * sizeof *r->coef);
        return SIM_EINVAL;
    }
    r->intercept = ym;
    r->fitted = true;
    return SIM_OK;
}

double model_ridge_predict(const model_ridge *r, const double *x)
{
    double yhat = r->intercept;
    if (!r->fitted)
        return yhat;
    for (uint32_t j = 0; j < r->p; j++)
        yhat += r->coef[j] * (x[j] - r->mean[j]) * r->inv_sd[j];
    return yhat;
}
