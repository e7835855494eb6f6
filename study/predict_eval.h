/*
 * predict_eval.h: the held-out evaluation of the demand predictors.
 */
#ifndef STUDY_PREDICT_EVAL_H
#define STUDY_PREDICT_EVAL_H

#include "models/baseline.h"
#include "models/dataset.h"
#include "models/mlp.h"
#include "models/predictor.h"

#include <stdio.h>

typedef struct study_split {
    size_t n_train, n_test;
    double *Xtr, *ytr, *Xte, *yte; /* row-major, model_kind_inputs(k) columns */
    const model_sample **te_rows;  /* the held-out samples */
} study_split;

/* Hold out round(test_frac x n) rows (at least one) chosen by a permutation seeded by
 * seed; the rest train. */
int study_make_split(const model_dataset *ds, model_kind k, double test_frac, uint64_t seed,
                     study_split *s, sim_diag *d);
void study_split_free(study_split *s);
/* Evaluate the MLP and both baselines on the held-out rows and write the table to out.
 * util_model (may be NULL) feeds the time model its predicted utilisation too. */
int study_predict_report(FILE *out, model_mlp *mlp, model_kind k, const model_dataset *ds,
                         const study_split *s, model_mlp *util_model, sim_diag *d);

#endif
