/*
 * ridge.h: ridge regression (Tikhonov-regularised least squares, Hoerl & Kennard,
 * Technometrics 1970) on standardised features.
 *
 * Each feature is centred and divided by its (population) standard deviation on the
 * training rows; a constant feature is dropped (its coefficient stays 0). The target is
 * centred and the intercept is its mean, which is not penalised. The coefficients solve
 *   (Z^T Z + lambda I) beta = Z^T (y - mean(y))
 * by a Cholesky factorisation (GSL BLAS dsyrk/dgemv + gsl_linalg_cholesky), lambda given
 * or chosen by generalised cross-validation. A workspace
 * sized at creation holds Z, so fitting never allocates.
 */
#ifndef MODELS_RIDGE_H
#define MODELS_RIDGE_H

#include "sim/types.h"

/* A fitted ridge model over p features. */
typedef struct model_ridge {
    uint32_t p;       /* features */
    bool fitted;      /* false until a fit on >= 1 row succeeded */
    double intercept; /* mean of the training targets */
    double *mean;     /* per feature: training mean */
    double *inv_sd;   /* per feature: 1 / standard deviation (0 = dropped) */
    double *coef;     /* per feature: coefficient on the standardised value */
} model_ridge;

/* Storage for p features. SIM_ENOMEM on failure (nothing to release then). */
int model_ridge_init(model_ridge *r, uint32_t p);
void model_ridge_fini(model_ridge *r);

/* Scratch space for fitting up to max_rows rows of p features. */
typedef struct model_ridge_ws model_ridge_ws;
int model_ridge_ws_create(model_ridge_ws **out, uint32_t max_rows, uint32_t p);
void model_ridge_ws_destroy(model_ridge_ws *w);

/*
 * Fit r on the n rows of X (row-major, n x p, stride p) with targets y and penalty
 * lambda >= 0 (a floor of 1e-9 keeps dropped features solvable). n may be 0 (r is then
 * left unfitted). Errors: SIM_EINVAL (n > workspace rows, p mismatch, non-finite data,
 * a failed factorisation). O(n p^2 + p^3).
 */
int model_ridge_fit(model_ridge *r, model_ridge_ws *w, const double *X, const double *y, size_t n,
                    double lambda);

/*
 * Like model_ridge_fit, with lambda chosen by generalised cross-validation (Golub,
 * Heath & Wahba, Technometrics 1979): the lambda of a log grid n x 10^(-6 .. 2, step
 * 1/4) minimising n RSS / (n - df)^2, where df = tr(Z (Z^T Z + lambda I)^-1 Z^T), the
 * effective number of parameters. *lambda (may be NULL) receives the choice.
 * O(n p^2 + 33 p^3).
 */
int model_ridge_fit_gcv(model_ridge *r, model_ridge_ws *w, const double *X, const double *y,
                        size_t n, double *lambda);

/* Prediction for the feature vector x (p values); the intercept when unfitted. O(p). */
double model_ridge_predict(const model_ridge *r, const double *x);

#endif
