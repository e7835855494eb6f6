/*
 * fit_error.c: MAE, MSE and R^2 accumulated in one pass (see fit_error.h).
 */
#include "models/fit_error.h"

#include <math.h>

void model_fit_error_init(model_fit_error *e)
{
    e->n = 0;
    e->sum_abs = e->sum_sq = e->mean_y = e->m2_y = 0;
}

void model_fit_error_add(model_fit_error *e, double y, double yhat)
{
    if (!isfinite(y) || !isfinite(yhat))
        return;
    double r = y - yhat;
    e->n++;
    e->sum_abs += fabs(r);
    e->sum_sq += r * r;
    double d = y - e->mean_y;
    e->mean_y += d / (double)e->n;
    e->m2_y += d * (y - e->mean_y);
}

double model_fit_error_mae(const model_fit_error *e)
{
    return e->n ? e->sum_abs / (double)e->n : NAN;
}

double model_fit_error_mse(const model_fit_error *e)
{
    return e->n ? e->sum_sq / (double)e->n : NAN;
}

double model_fit_error_r2(const model_fit_error *e)
{
    if (e->n < 2 || !(e->m2_y > 0))
        return NAN;
    return 1.0 - e->sum_sq / e->m2_y;
}
