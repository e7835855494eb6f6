/*
 * nmf.h: non-negative matrix factorisation X ~ W H of a sparse non-negative matrix X
 * (rows x cols) into W (rows x k) and H (k x cols), both non-negative, by the
 * multiplicative updates of Lee & Seung, "Algorithms for non-negative matrix
 * factorization", NIPS 2000, which never increase the squared Frobenius error
 * ||X - W H||^2 and keep every factor >= 0:
 *   W <- W .* (X H^T) ./ (W H H^T),   H <- H .* (W^T X) ./ (W^T W H).
 * The sparse products cost O(nnz x k); the dense ones go through GSL BLAS.
 *
 * Workspaces are sized at creation for at most max_rows rows, so fitting and
 * transforming never allocate.
 */
#ifndef MODELS_NMF_H
#define MODELS_NMF_H

#include "sim/types.h"

#include <gsl/gsl_rng.h>

/* A sparse matrix in compressed sparse row form; arrays are borrowed. */
typedef struct model_csr {
    uint32_t rows, cols;
    const uint32_t *row_ptr; /* rows + 1 offsets into col and val */
    const uint32_t *col;     /* column of each stored value, < cols */
    const double *val;       /* stored values, >= 0 */
} model_csr;

typedef struct model_nmf model_nmf;

/* Create a factorisation of rank k (1..64) for up to max_rows rows and `cols` columns.
 * Errors: SIM_EINVAL (sizes), SIM_ENOMEM. */
int model_nmf_create(model_nmf **out, uint32_t max_rows, uint32_t cols, uint32_t k);
void model_nmf_destroy(model_nmf *m);

/* Rank k. */
uint32_t model_nmf_rank(const model_nmf *m);

/* Initialise W (X->rows rows) and H (k x X->cols) with uniform [0,1) draws from rng
 * scaled by sqrt(mean(X) / k) (the scale of scikit-learn's random initialisation).
 * X may use fewer columns than the workspace has: from then on the factorisation has
 * X->cols columns (callers compact the columns they use). SIM_EINVAL when X does not
 * fit the workspace. */
int model_nmf_init_random(model_nmf *m, const model_csr *X, gsl_rng *rng);

/* Set W (rows x k, row-major) and H (k x cols, row-major, all the columns of the
 * workspace) explicitly; entries must be >= 0. SIM_EINVAL when sizes or values are
 * invalid. */
int model_nmf_set(model_nmf *m, uint32_t rows, const double *W, const double *H);

/*
 * Run `iters` multiplicative updates (W then H) on X, whose rows must match the rows
 * initialised. err, when not NULL, receives iters + 1 squared Frobenius errors: before
 * the first update and after each. Returns SIM_OK or SIM_EINVAL (X does not match) or
 * the GSL failure as SIM_EINVAL. O(iters x (nnz k + (rows + cols) k^2)).
 */
int model_nmf_fit(model_nmf *m, const model_csr *X, uint32_t iters, double *err);

/* ||X - W H||^2 for the current factors. O(nnz k + k^2 + rows k^2 + cols k^2). */
double model_nmf_error(model_nmf *m, const model_csr *X);

/* Element (i, c) of W and (c, j) of H. */
double model_nmf_w(const model_nmf *m, uint32_t i, uint32_t c);
double model_nmf_h(const model_nmf *m, uint32_t c, uint32_t j);

/*
 * Topic weights w (k values, >= 0) of a new sparse row x (nnz pairs col/val) with H
 * held fixed: `iters` multiplicative updates w <- w .* (H x) ./ (H H^T w) from w = 1.
 * An empty row gives w = 0. O(iters x (nnz k + k^2)); no allocation.
 */
void model_nmf_transform(const model_nmf *m, const uint32_t *col, const double *val, uint32_t nnz,
                         uint32_t iters, double *w);

#endif
