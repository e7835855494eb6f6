/*
 * mlp.h: a multi-layer perceptron regressor (one output) trained by back-propagation,
 * with GSL BLAS for the matrix work. Inputs and the target are optionally log1p-
 * transformed, then standardised with the training rows' mean and standard deviation;
 * hidden layers use ReLU or tanh, the output is linear. Training: mini-batch Adam
 * (Kingma & Ba, ICLR 2015) or SGD with momentum, MSE or MAE loss, early stopping on a
 * validation split (the weights of the best validation epoch are kept), seeded.
 * A model is saved to and loaded from a versioned text file ("clustersim-mlp 1") whose
 * numbers are written with 17 significant digits, so a loaded model predicts exactly
 * what the saved one did.
 */
#ifndef MODELS_MLP_H
#define MODELS_MLP_H

#include "sim/types.h"

#define MODEL_MLP_MAX_LAYERS 8   /* weight layers, hidden + output */
#define MODEL_MLP_MAX_WIDTH 1024 /* units of one layer */
#define MODEL_MLP_MAX_INPUTS 64
#define MODEL_MLP_MAX_META 8

typedef enum model_act { MODEL_ACT_RELU = 0, MODEL_ACT_TANH } model_act;
typedef enum model_loss { MODEL_LOSS_MSE = 0, MODEL_LOSS_MAE } model_loss;
typedef enum model_optim { MODEL_OPTIM_ADAM = 0, MODEL_OPTIM_SGD } model_optim;
/* Transform of an input or of the target before standardisation. LOG1P is for
 * non-negative quantities (sizes, times); its inverse is expm1. */
typedef enum model_xform { MODEL_XFORM_NONE = 0, MODEL_XFORM_LOG1P } model_xform;

typedef struct model_mlp model_mlp;

/* Training settings. model_mlp_train_defaults() fills the defaults given here. */
typedef struct model_mlp_train_opts {
    model_optim optim;   /* ADAM */
    model_loss loss;     /* MSE */
    uint32_t max_epochs; /* 400 */
    uint32_t batch;      /* rows per mini-batch, 32 */
    double lr;           /* learning rate: 1e-3 (Adam); set 1e-2 for SGD */
    double momentum;     /* SGD momentum, 0.9 */
    double l2;           /* L2 weight decay added to the gradient, 0 */
    double val_frac;     /* fraction of the rows held out for early stopping, 0.2 */
    uint32_t patience;   /* epochs without a better validation loss before stopping, 30 */
    uint64_t seed;       /* initial weights, split and shuffling, 1 */
} model_mlp_train_opts;

/* What training did. Losses are in standardised target units. */
typedef struct model_mlp_report {
    uint32_t epochs;     /* epochs run */
    uint32_t best_epoch; /* 1-based epoch whose weights were kept */
    double train_loss;   /* training loss at the best epoch */
    double val_loss;     /* validation loss at the best epoch */
    size_t n_train, n_val;
} model_mlp_report;

void model_mlp_train_defaults(model_mlp_train_opts *o);

/*
 * Create an untrained network with n_in inputs (1..MODEL_MLP_MAX_INPUTS), the given
 * hidden layer widths (n_hidden of them, 0..MODEL_MLP_MAX_LAYERS-1, each
 * 1..MODEL_MLP_MAX_WIDTH) and one output. names[i] names input i (copied; NULL = "x<i>"),
 * in_xf[i] its transform (NULL = none). Errors: SIM_EINVAL, SIM_ENOMEM (d filled).
 */
int model_mlp_create(model_mlp **out, uint32_t n_in, const char *const *names,
                     const model_xform *in_xf, const uint32_t *hidden, uint32_t n_hidden,
                     model_act act, const char *target_name, model_xform target_xf, sim_diag *d);
void model_mlp_destroy(model_mlp *m);

/*
 * Train on n rows: X is row-major n x n_in, y has n targets. The standardisation is
 * fitted to the training part; a random val_frac of the rows (at least one row when
 * n >= 2) is held out for early stopping. Deterministic for a given seed. Errors:
 * SIM_EINVAL (fewer than 2 rows, a non-finite value, a negative value under LOG1P),
 * SIM_ENOMEM; d filled. Cost O(epochs x n x weights).
 */
int model_mlp_train(model_mlp *m, const double *X, const double *y, size_t n,
                    const model_mlp_train_opts *o, model_mlp_report *rep, sim_diag *d);

/*
 * Predict the target for one input row x (n_in values). Uses scratch space inside m,
 * so it does not allocate and is not reentrant on the same model. O(weights).
 */
double model_mlp_predict(model_mlp *m, const double *x);

/* Number of inputs; name of input i; the target's name. */
uint32_t model_mlp_inputs(const model_mlp *m);
const char *model_mlp_input_name(const model_mlp *m, uint32_t i);
const char *model_mlp_target_name(const model_mlp *m);

/* Free-form metadata saved with the model (kind, data file, split). Keys and values are
 * single words (no spaces), at most 63 bytes; setting a key again replaces it.
 * SIM_EINVAL when they are not, SIM_ELIMIT when MODEL_MLP_MAX_META keys exist. */
int model_mlp_set_meta(model_mlp *m, const char *key, const char *value);
/* Value of key, or NULL. */
const char *model_mlp_meta(const model_mlp *m, const char *key);

/* Save to path (written under a temporary name, then renamed). SIM_EIO on failure. */
int model_mlp_save(const model_mlp *m, const char *path, sim_diag *d);

/* Load a saved model. Errors: SIM_EIO (cannot read), SIM_EPARSE with
 * "path:line: error: expected ..., got ..." (bad or truncated file, unknown version),
 * SIM_ENOMEM. */
int model_mlp_load(model_mlp **out, const char *path, sim_diag *d);

#endif
