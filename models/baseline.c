/*
 * baseline.c: MAE / MSE / R² and the linear-regression baseline (GSL multifit, which
 * solves the least-squares problem by SVD, so collinear inputs such as a constant GPU
 * column do not fail it).
 */
#include "models/baseline.h"

#include <gsl/gsl_multifit.h>
#include <math.h>
#include <string.h>

void model_metrics_compute(const double *pred, const double *truth, size_t n, model_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    if (n == 0) {
        m->r2 = NAN;
        return;
    }
    double mean = 0, sse = 0, sst = 0, sae = 0;
    for (size_t i = 0; i < n; i++)
        mean += truth[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double e = pred[i] - truth[i];
        sae += fabs(e);
        sse += e * e;
        sst += (truth[i] - mean) * (truth[i] - mean);
    }
    m->mae = sae / (double)n;
    m->mse = sse / (double)n;
    m->r2 = sst > 0 ? 1 - sse / sst : NAN;
}

static double xf(model_xform t, double v)
{
    return t == MODEL_XFORM_LOG1P ? log1p(v) : v;
}

int model_linreg_fit(model_linreg *lr, const double *X, const double *y, size_t n, uint32_t p,
                     const model_xform *in_xf, model_xform y_xf, sim_diag *d)
{
    memset(lr, 0, sizeof *lr);
    if (p > MODEL_MLP_MAX_INPUTS || n <= p + 1)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "linear regression needs more rows (%zu) than coefficients (%u)", n,
                            p + 1);
    lr->p = p;
    for (uint32_t k = 0; k < p; k++)
        lr->in_xf[k] = in_xf ? in_xf[k] : MODEL_XFORM_NONE;
    lr->y_xf = y_xf;
    gsl_matrix *A = gsl_matrix_alloc(n, p + 1);
    gsl_vector *b = gsl_vector_alloc(n);
    gsl_vector *c = gsl_vector_alloc(p + 1);
    gsl_matrix *cov = gsl_matrix_alloc(p + 1, p + 1);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p + 1);
    int st = SIM_OK;
    if (!A || !b || !c || !cov || !ws) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(A, i, 0, 1.0);
        for (uint32_t k = 0; k < p; k++)
            gsl_matrix_set(A, i, k + 1, xf(lr->in_xf[k], X[i * p + k]));
        gsl_vector_set(b, i, xf(y_xf, y[i]));
    }
    double chisq;
    size_t rank;
    /* A relative singular-value cut-off of 1e-12 drops exactly collinear columns. */
    int gs = gsl_multifit_linear_tsvd(A, b, 1e-12, c, cov, &chisq, &rank, ws);
    if (gs != GSL_SUCCESS) {
        st = sim_diag_set(d, SIM_EIO, NULL, 0, 0, "linear regression failed: %s", gsl_strerror(gs));
        goto out;
    }
    for (uint32_t k = 0; k <= p; k++)
        lr->coef[k] = gsl_vector_get(c, k);
out:
    if (A)
        gsl_matrix_free(A);
    if (b)
        gsl_vector_free(b);
    if (c)
        gsl_vector_free(c);
    if (cov)
        gsl_matrix_free(cov);
    if (ws)
        gsl_multifit_linear_free(ws);
    return st;
}

double model_linreg_predict(const model_linreg *lr, const double *x)
{
    double s = lr->coef[0];
    for (uint32_t k = 0; k < lr->p; k++)
        s += lr->coef[k + 1] * xf(lr->in_xf[k], x[k]);
    if (lr->y_xf == MODEL_XFORM_LOG1P) {
        /* Keep a wild extrapolation finite. */
        return expm1(s > 700 ? 700 : s);
    }
    return s;
}
