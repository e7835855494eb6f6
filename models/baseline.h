/*
 * baseline.h: error metrics of a regressor and the two baselines every predictor is
 * compared with — the training mean, and an ordinary-least-squares linear regression
 * (GSL gsl_multifit_linear) on the same transformed inputs and target as the MLP.
 */
#ifndef MODELS_BASELINE_H
#define MODELS_BASELINE_H

#include "models/mlp.h"

typedef struct model_metrics {
    size_t n;   /* rows compared */
    double mae; /* mean absolute error, target units */
    double mse; /* mean squared error, target units squared */
    double r2;  /* 1 - SSE / SST (SST about the mean of truth); NaN when SST = 0 */
} model_metrics;

/* Metrics of pred against truth over n rows. O(n). */
void model_metrics_compute(const double *pred, const double *truth, size_t n, model_metrics *m);

typedef struct model_linreg {
    uint32_t p;                              /* inputs */
    model_xform in_xf[MODEL_MLP_MAX_INPUTS]; /* per-input transform */
    model_xform y_xf;                        /* target transform */
    double coef[MODEL_MLP_MAX_INPUTS + 1];   /* intercept, then one per input */
} model_linreg;

/* Fit y ~ 1 + xf(x) by least squares over n rows (X row-major n x p). Errors:
 * SIM_EINVAL (n <= p, p too large), SIM_ENOMEM, SIM_EIO for a GSL failure; d filled. */
int model_linreg_fit(model_linreg *lr, const double *X, const double *y, size_t n, uint32_t p,
                     const model_xform *in_xf, model_xform y_xf, sim_diag *d);
/* Prediction for one row, in target units (the inverse transform applied). */
double model_linreg_predict(const model_linreg *lr, const double *x);

#endif
