/*
 * fit_int.h: numerical helpers shared by the models/ fits, built on GSL. Private to
 * models/. Non-negative least squares is Lawson and Hanson's active-set algorithm
 * ("Solving Least Squares Problems", 1974, ch. 23), whose passive-set solves use GSL's
 * SVD-based gsl_multifit_linear, so rank-deficient designs stay well defined.
 */
#ifndef MODELS_FIT_INT_H
#define MODELS_FIT_INT_H

#include "sim/types.h"

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

/*
 * min ||diag(sqrt(w)) (X c - y)||^2 subject to c >= 0. X is n x p (n >= 1, p >= 1), w may
 * be NULL (unit weights). c (length p) receives the solution; *chisq (may be NULL) the
 * weighted residual sum of squares. Returns SIM_OK, SIM_ENOMEM, or SIM_EINVAL when GSL
 * fails. O(p) passive-set solves of O(n p^2) each.
 */
int model__nnls(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, gsl_vector *c,
                double *chisq);

/*
 * Minimise f over [lo, hi]: the best of `grid` + 1 evenly spaced points, refined by
 * GSL's Brent minimiser inside the neighbouring grid cells. Deterministic. Returns the
 * argument of the smallest value found (*fmin receives it when not NULL).
 */
double model__min1d(double (*f)(double x, void *ctx), void *ctx, double lo, double hi,
                    unsigned grid, double *fmin);

#endif
