/*
 * ridge.c: standardise, form Z^T Z + lambda I and Z^T y with GSL BLAS, solve by
 * Cholesky (see ridge.h). Population standard deviations (divide by n) make a
 * two-row fit exactly reproducible by hand.
 */
#include "models/ridge.h"

#include "base/alloc.h"

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
    double *E;  /* p x p: Z^T Z (GCV) */
    double *ev; /* p: G beta (GCV) */
    double *c;  /* p: beta at a trial lambda (GCV) */
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
    w->E = sim_calloc((size_t)p * p, sizeof *w->E);
    w->ev = sim_calloc(p, sizeof *w->ev);
    w->c = sim_calloc(p, sizeof *w->c);
    if (!w->Z || !w->yc || !w->A || !w->b || !w->E || !w->ev || !w->c) {
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
    sim_free(w->E);
    sim_free(w->ev);
    sim_free(w->c);
    sim_free(w);
}

/* Standardise X into w->Z and centre y into w->yc; fills r->mean, r->inv_sd and
 * r->intercept. */
static int prepare(model_ridge *r, model_ridge_ws *w, const double *X, const double *y, size_t n)
{
    uint32_t p = r->p;
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
        double mu = s / (double)n, big = 0, dmax = 0;
        for (size_t i = 0; i < n; i++) {
            big = fmax(big, fabs(X[i * p + j]));
            dmax = fmax(dmax, fabs(X[i * p + j] - mu));
        }
        /* The squares are taken of dx / dmax, so that neither a huge spread (above 1e154)
         * overflows nor a tiny one (below 1e-154) underflows. */
        for (size_t i = 0; i < n && dmax > 0; i++) {
            double dx = (X[i * p + j] - mu) / dmax;
            ss += dx * dx;
        }
        double sd = dmax * sqrt(ss / (double)n);
        r->mean[j] = mu;
        /* A (numerically) constant feature carries no information: drop it. The test is
         * relative to the feature's magnitude, so that standardisation stays invariant to
         * the feature's unit (values of 1e-13 are not constant). */
        r->inv_sd[j] = sd > 1e-12 * big ? 1.0 / sd : 0.0;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < p; j++)
            w->Z[i * p + j] = (X[i * p + j] - r->mean[j]) * r->inv_sd[j];
        w->yc[i] = y[i] - ym;
    }
    r->intercept = ym;
    return SIM_OK;
}

/* Solve (Z^T Z + lambda I) beta = Z^T yc for the prepared rows. */
static int solve(model_ridge *r, model_ridge_ws *w, size_t n, double lambda)
{
    uint32_t p = r->p;
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
    r->fitted = true;
    return SIM_OK;
}

int model_ridge_fit(model_ridge *r, model_ridge_ws *w, const double *X, const double *y, size_t n,
                    double lambda)
{
    r->fitted = false;
    if (r->p != w->p || n > w->max_rows || !(lambda >= 0))
        return SIM_EINVAL;
    if (n == 0)
        return SIM_OK;
    int st = prepare(r, w, X, y, n);
    return st == SIM_OK ? solve(r, w, n, lambda) : st;
}

int model_ridge_fit_gcv(model_ridge *r, model_ridge_ws *w, const double *X, const double *y,
                        size_t n, double *lambda)
{
    uint32_t p = r->p;
    r->fitted = false;
    if (p != w->p || n > w->max_rows)
        return SIM_EINVAL;
    if (n == 0)
        return SIM_OK;
    int st = prepare(r, w, X, y, n);
    if (st != SIM_OK)
        return st;
    /* With G = Z^T Z and b = Z^T yc, at each lambda: beta = (G + lambda I)^-1 b,
     * RSS = yc^T yc - 2 beta^T b + beta^T G beta and df = p - lambda tr((G + lambda I)^-1)
     * (a dropped, all-zero feature adds 1 - 1 = 0 to df). */
    gsl_matrix_view Z = gsl_matrix_view_array(w->Z, n, p);
    gsl_vector_view yc = gsl_vector_view_array(w->yc, n);
    gsl_matrix_view A = gsl_matrix_view_array(w->A, p, p);
    gsl_matrix_view G = gsl_matrix_view_array(w->E, p, p);
    gsl_vector_view b = gsl_vector_view_array(w->b, p);
    gsl_vector_view beta = gsl_vector_view_array(w->c, p);
    gsl_vector_view Gb = gsl_vector_view_array(w->ev, p);
    if (gsl_blas_dsyrk(CblasLower, CblasTrans, 1.0, &Z.matrix, 0.0, &G.matrix) ||
        gsl_blas_dgemv(CblasTrans, 1.0, &Z.matrix, &yc.vector, 0.0, &b.vector))
        return SIM_EINVAL;
    for (uint32_t i = 0; i < p; i++)
        for (uint32_t j = i + 1; j < p; j++)
            w->E[i * p + j] = w->E[j * p + i];
    double yy = 0;
    for (size_t i = 0; i < n; i++)
        yy += w->yc[i] * w->yc[i];
    double best = INFINITY, best_lam = (double)n;
    for (int e = -24; e <= 8; e++) {
        double lam = (double)n * pow(10.0, e / 4.0);
        gsl_matrix_memcpy(&A.matrix, &G.matrix);
        for (uint32_t i = 0; i < p; i++)
            w->A[i * p + i] += lam;
        double bb, bgb, tr = 0;
        if (gsl_linalg_cholesky_decomp1(&A.matrix) ||
            gsl_linalg_cholesky_solve(&A.matrix, &b.vector, &beta.vector) ||
            gsl_blas_dsymv(CblasLower, 1.0, &G.matrix, &beta.vector, 0.0, &Gb.vector) ||
            gsl_blas_ddot(&beta.vector, &b.vector, &bb) ||
            gsl_blas_ddot(&beta.vector, &Gb.vector, &bgb) || gsl_linalg_cholesky_invert(&A.matrix))
            return SIM_EINVAL;
        for (uint32_t i = 0; i < p; i++)
            tr += w->A[i * p + i];
        double rss = yy - 2 * bb + bgb, df = (double)p - lam * tr, dof = (double)n - df;
        if (rss < 0)
            rss = 0;
        double gcv = dof > 0 ? (double)n * rss / (dof * dof) : INFINITY;
        if (gcv < best) {
            best = gcv;
            best_lam = lam;
        }
    }
    if (lambda)
        *lambda = best_lam;
    return solve(r, w, n, best_lam);
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
