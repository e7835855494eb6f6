/*
 * duration.h: an online predictor of ln(job duration) from what is known at submission:
 * the job's text (hashed tokens, TF-IDF, NMF topics), its resources, the hour and weekday
 * of submission, and its tenant's recent durations (the list is in duration.c). Learners:
 * ridge (models/ridge.h) or boosted trees (models/gbt.h); one global model and one per
 * tenant with at least min_history jobs in the history, the global one as fallback.
 * Causality: a duration enters only through model_duration_finish, which a replay calls
 * when the job ends; features are fixed at arrival; training uses finished jobs only.
 * Memory is fixed at creation: arrive, predict, finish and train never allocate.
 * After the per-user duration prediction of Helios (Hu et al., SC'21).
 */
#ifndef MODELS_DURATION_H
#define MODELS_DURATION_H

#include "models/gbt.h"
#include "models/tfidf.h"
#include "sim/types.h"

#define MODEL_DUR_NUMERIC 14u /* numeric features per job */
#define MODEL_DUR_MAX_TOPICS 32u

typedef enum model_dur_learner {
    MODEL_DUR_RIDGE = 0, /* ridge regression on standardised features */
    MODEL_DUR_GBT,       /* gradient-boosted trees */
} model_dur_learner;

typedef struct model_dur_config {
    uint32_t history;           /* finished jobs kept for training, >= 1 */
    uint32_t min_history;       /* a tenant's jobs in the history needed for its own model */
    uint32_t topics;            /* NMF topics k, 0..MODEL_DUR_MAX_TOPICS (0 = no text) */
    uint32_t nmf_docs;          /* most distinct documents (most recent first) fitting NMF */
    uint32_t nmf_iters;         /* multiplicative updates per training */
    uint32_t max_tenants;       /* tenant ids >= max_tenants - 1 share the last slot */
    uint32_t max_tenant_models; /* tenants that may have their own model */
    model_dur_learner learner;
    double ridge_lambda;  /* ridge penalty; < 0 = chosen by generalised cross-validation */
    model_gbt_params gbt; /* tree parameters */
    uint64_t seed;        /* seeds the NMF initialisation */
} model_dur_config;

/* Defaults: history 16384, min_history 50, 8 topics from up to 2048 documents with 100
 * updates, 4096 tenant slots, 64 tenant models, GBT (model_gbt_params_default),
 * ridge lambda by cross-validation, seed 1. */
void model_dur_config_default(model_dur_config *c);

/* What may be known of a job when it is submitted: no duration. */
typedef struct model_dur_input {
    uint32_t tenant;    /* interned tenant id */
    sim_time submit_us; /* submission time on the trace clock */
    uint32_t num_gpus;  /* GPUs in total */
    uint32_t gpu_milli; /* share of each GPU, milli-GPU */
    uint64_t cpu_milli; /* CPU for the whole job */
    uint64_t mem_mib;   /* host memory for the whole job */
    sim_qos qos;
    const char *name;    /* may be NULL */
    const char *command; /* may be NULL */
} model_dur_input;

/* The input of a job spec (its text points into the spec). */
void model_dur_input_of(model_dur_input *in, const job_spec *j);

/* What the predictor keeps of a job from arrival to end (fixed size, so it can live in a
 * policy's per-job state). */
typedef struct model_dur_job {
    model_doc doc;                 /* hashed tokens of name and command */
    uint32_t slot;                 /* tenant slot */
    double num[MODEL_DUR_NUMERIC]; /* numeric features at arrival */
} model_dur_job;

typedef enum model_dur_mode {
    MODEL_DUR_AUTO = 0, /* the tenant's model when it has one, else the global one */
    MODEL_DUR_GLOBAL,   /* the global model */
    MODEL_DUR_TENANT,   /* the tenant's model only (NaN when it has none) */
} model_dur_mode;

typedef enum model_dur_source {
    MODEL_DUR_SRC_NONE = 0, /* nothing known: the prediction is NaN */
    MODEL_DUR_SRC_HISTORY,  /* no trained model yet: tenant or global mean */
    MODEL_DUR_SRC_GLOBAL,
    MODEL_DUR_SRC_TENANT,
} model_dur_source;

typedef struct model_duration model_duration;

/* Create a predictor. Errors: SIM_EINVAL (configuration, named in d), SIM_ENOMEM. */
int model_duration_create(model_duration **out, const model_dur_config *c, sim_diag *d);
void model_duration_destroy(model_duration *m);

/* The job's features from its input and the history so far (a text met recently is
 * tokenised once: see model_doc_tokenise_memo). O(text length). */
void model_duration_arrive(model_duration *m, const model_dur_input *in, model_dur_job *out);

/*
 * Predicted duration in seconds (>= 1), or NaN when `mode` has nothing to predict
 * with. *src (may be NULL) says what was used. Topic vectors of documents are cached,
 * so repeated texts cost O(features + trees x depth). Not thread-safe (the cache).
 */
double model_duration_predict(model_duration *m, const model_dur_job *j, model_dur_mode mode,
                              model_dur_source *src);

/* The job ended after duration_s seconds (floored at 1): add it to the history and to
 * its tenant's and text's records. O(1). */
void model_duration_finish(model_duration *m, const model_dur_job *j, double duration_s);

/*
 * Refit the topics and every model on the history. Returns SIM_OK (also when there is
 * nothing to fit) or SIM_EINVAL when a numerical step failed (the previous models are
 * then dropped). O(history x features x (trees x depth or features)) plus the NMF.
 */
int model_duration_train(model_duration *m);

/* Jobs finished so far, and since the last training. */
uint64_t model_duration_finished(const model_duration *m);
uint64_t model_duration_pending_rows(const model_duration *m);
/* Trainings done; tenants with a fitted model of their own. */
uint64_t model_duration_trainings(const model_duration *m);
uint32_t model_duration_tenant_models(const model_duration *m);
/* Whether the tenant's slot has finished jobs, and whether it has its own model. */
bool model_duration_tenant_known(const model_duration *m, uint32_t tenant);
bool model_duration_tenant_has_model(const model_duration *m, uint32_t tenant);

#endif
