/*
 * gbt.h: gradient-boosted regression trees with squared loss (Friedman, "Greedy
 * function approximation: a gradient boosting machine", Annals of Statistics 2001),
 * grown level by level on feature histograms (the binning of LightGBM, Ke et al.,
 * NeurIPS 2017).
 *
 * Each tree is complete of fixed depth: internal node i tests x[feat] > thr (right) and
 * the 2^depth leaves hold shrunken mean residuals. A node with no split that leaves
 * min_leaf rows on both sides sends every row left. Candidate thresholds are at most
 * bins - 1 distinct training quantiles per feature. The ensemble is stored in arrays
 * sized at init, and a workspace sized at creation holds the bins, residuals and
 * histograms, so fitting never allocates.
 */
#ifndef MODELS_GBT_H
#define MODELS_GBT_H

#include "sim/types.h"

typedef struct model_gbt_params {
    uint32_t trees;    /* boosting rounds, 1..10000 */
    uint32_t depth;    /* depth of every tree, 1..8 */
    uint32_t min_leaf; /* fewest training rows on each side of a split, >= 1 */
    uint32_t bins;     /* histogram bins per feature, 2..256 */
    double rate;       /* shrinkage of each tree, (0, 1] */
} model_gbt_params;

/* Defaults: 30 trees of depth 3, min_leaf 8, 32 bins, rate 0.1. */
void model_gbt_params_default(model_gbt_params *prm);

/* A fitted ensemble over p features. */
typedef struct model_gbt {
    model_gbt_params prm;
    uint32_t p;     /* features */
    uint32_t trees; /* trees fitted (0 = predicts base) */
    double base;    /* initial prediction: mean of the training targets */
    uint16_t *feat; /* prm.trees x (2^depth - 1): feature tested by each node */
    double *thr;    /* same shape: threshold (go right when x[feat] > thr) */
    double *leaf;   /* prm.trees x 2^depth: leaf values */
} model_gbt;

/* Storage for an ensemble. Errors: SIM_EINVAL (parameters), SIM_ENOMEM. */
int model_gbt_init(model_gbt *g, uint32_t p, const model_gbt_params *prm);
void model_gbt_fini(model_gbt *g);

typedef struct model_gbt_ws model_gbt_ws;
/* Scratch space to fit up to max_rows rows with these parameters. */
int model_gbt_ws_create(model_gbt_ws **out, uint32_t max_rows, uint32_t p,
                        const model_gbt_params *prm);
void model_gbt_ws_destroy(model_gbt_ws *w);

/*
 * Fit g on the n rows of X (row-major n x p) with targets y. The workspace must have
 * been created with the same p, depth and bins and at least n rows; otherwise
 * SIM_EINVAL. n = 0 leaves g predicting 0. Deterministic: no randomness.
 * O(n p log bins + trees x depth x n p).
 */
int model_gbt_fit(model_gbt *g, model_gbt_ws *w, const double *X, const double *y, size_t n);

/* Prediction for x (p values). O(trees x depth). */
double model_gbt_predict(const model_gbt *g, const double *x);

#endif
