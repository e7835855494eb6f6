/*
 * predictor.h: the three demand predictors of predicted-demand placement — GPU
 * compute utilisation (milli-GPU), GPU memory (MiB) and execution time (seconds) of a
 * job on a GPU type — each an MLP (models/mlp.h) over the feature schema of
 * models/features.h. The time model takes the utilisation as one more input: measured
 * when trained, predicted when used. Sizes, counts and every target are log1p-
 * transformed before standardisation (so errors are relative, which matters for small
 * shares); the compute capability and the utilisation input are not.
 */
#ifndef MODELS_PREDICTOR_H
#define MODELS_PREDICTOR_H

#include "models/dataset.h"
#include "models/mlp.h"

typedef enum model_kind {
    MODEL_KIND_UTIL = 0, /* target util_milli */
    MODEL_KIND_MEM,      /* target mem_mib */
    MODEL_KIND_TIME,     /* target time_s */
    MODEL_KIND_COUNT
} model_kind;

/* "util", "mem", "time". */
const char *model_kind_name(model_kind k);
/* Parse a kind name; false when unknown. */
bool model_kind_parse(const char *s, model_kind *out);
/* Inputs of kind k: MODEL_F_COUNT, or MODEL_F_COUNT_TIME for the time model. */
uint32_t model_kind_inputs(model_kind k);
/* Input transforms (model_kind_inputs(k) entries) and the target's transform. */
void model_kind_xforms(model_kind k, model_xform *in_xf, model_xform *target_xf);
/* Inputs and target of sample s for kind k (x has model_kind_inputs(k) entries). */
void model_kind_row(model_kind k, const model_sample *s, double *x, double *y);

/* A fresh network for kind k with its input names, transforms and meta "kind". */
int model_kind_create(model_mlp **out, model_kind k, const uint32_t *hidden, uint32_t n_hidden,
                      model_act act, sim_diag *d);
/* Check that a loaded model is a kind-k model (meta kind and input names);
 * SIM_EPARSE naming path otherwise. */
int model_kind_check(const model_mlp *m, model_kind k, const char *path, sim_diag *d);

/* Path of the shipped default model of kind k:
 * <model_data_dir()>/models/data/predictive/<kind>.mlp. */
const char *model_kind_default_path(model_kind k);

/* The three models. */
typedef struct model_predictor {
    model_mlp *m[MODEL_KIND_COUNT];
} model_predictor;

/* Load and check the three models (NULL path = the shipped default). On error nothing
 * is left loaded. Errors as model_mlp_load, or SIM_EPARSE for a model of another kind. */
int model_predictor_load(model_predictor *p, const char *const paths[MODEL_KIND_COUNT],
                         sim_diag *d);
void model_predictor_fini(model_predictor *p);

typedef struct model_prediction {
    double util_milli; /* clamped to 1..1000 */
    double mem_mib;    /* >= 0 */
    double time_s;     /* >= 0, with the predicted utilisation as input */
} model_prediction;

/* Predict for the graph and execution features job_x (MODEL_F_GPU_CC entries) on a GPU
 * with features gpu_x (3 entries). Does not allocate; not reentrant on the same p. */
void model_predictor_predict(model_predictor *p, const double *job_x, const double *gpu_x,
                             model_prediction *out);

/* Only the time, for given features, GPU and utilisation (e.g. the remaining iterations). */
double model_predictor_time(model_predictor *p, const double *job_x, const double *gpu_x,
                            double util_milli);

#endif
