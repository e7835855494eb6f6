/*
 * fit_error.h: error statistics of a regression on held-out data — mean absolute
 * error, mean squared error and the coefficient of determination R^2 = 1 - SSE/SST,
 * where SST is the spread of the true values around their own mean (so predicting that
 * mean scores 0, and a worse predictor scores below 0). Accumulated in one pass; the
 * mean and spread of the true values use Welford's update for numerical stability.
 */
#ifndef MODELS_FIT_ERROR_H
#define MODELS_FIT_ERROR_H

#include "sim/types.h"

typedef struct model_fit_error {
    uint64_t n;     /* pairs added */
    double sum_abs; /* sum of |y - yhat| */
    double sum_sq;  /* sum of (y - yhat)^2 */
    double mean_y;  /* running mean of y */
    double m2_y;    /* running sum of squared deviations of y */
} model_fit_error;

/* Start empty. */
void model_fit_error_init(model_fit_error *e);
/* Add one (true, predicted) pair; non-finite pairs are ignored. O(1). */
void model_fit_error_add(model_fit_error *e, double y, double yhat);
/* MAE and MSE (NaN when empty); R^2 (NaN with fewer than 2 pairs or constant y). */
double model_fit_error_mae(const model_fit_error *e);
double model_fit_error_mse(const model_fit_error *e);
double model_fit_error_r2(const model_fit_error *e);

#endif
