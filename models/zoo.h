/*
 * zoo.h: a zoo of deep-learning model classes (ResNet-18/50, VGG-16, Inception-v3,
 * BERT, GPT-2, Transformer, LSTM language model, recommendation) with their graph and
 * execution features and a ground truth of GPU utilisation, GPU memory and iteration
 * time on every GPU type of the catalog. The truth is an occupancy-roofline model:
 *   occupancy O = 1 - exp(-batch x parallel work per sample / (kappa x CUDA cores))
 *   iteration   = max(FLOPs / (FP32 peak x efficiency x O), bytes / bandwidth) + fixed
 *   utilisation = O x busy time / iteration time            (milli-GPU)
 *   memory      = 400 MiB + 16 bytes per parameter + batch x activations + 4 MiB per SM
 * with per-class constants fitted to Gavel's measured throughputs on K80, P100 and
 * V100 (Narayanan et al., OSDI 2020; ../shared/data/gavel) where they exist, and set by
 * analogy elsewhere (README, "Model zoo"). The zoo generates labelled training samples
 * (synthetic, with noise), annotates trace jobs with features and true demand, and
 * serves as the simulator's rate model (per-type throughput and demand).
 */
#ifndef MODELS_ZOO_H
#define MODELS_ZOO_H

#include "models/catalog.h"
#include "models/dataset.h"
#include "base/intern.h"
#include "sim/rate.h"

#include <gsl/gsl_rng.h>

#define MODEL_ZOO_CLASSES 9

/* One concrete job of a class: a width multiplier (channels / hidden size), an input
 * scale (pixels / sequence length relative to the class's reference input), a batch
 * size and a number of iterations. */
typedef struct model_zoo_job {
    uint32_t cls;      /* class index, 0..MODEL_ZOO_CLASSES-1 */
    double width;      /* > 0, 1 = the published architecture */
    double scale;      /* > 0, 1 = the reference input size */
    double batch;      /* samples per mini-batch, >= 1 */
    double iterations; /* mini-batches, >= 1 */
} model_zoo_job;

/* The noise-free truth of a job on one GPU type, running alone on the whole GPU. */
typedef struct model_zoo_truth {
    double util_milli; /* compute utilisation, milli-GPU (the share it needs), 1..1000 */
    double mem_mib;    /* peak GPU memory, MiB */
    double iter_s;     /* seconds per iteration */
} model_zoo_truth;

typedef struct model_zoo model_zoo;

/* A zoo over a GPU catalog (borrowed; must outlive the zoo). SIM_ENOMEM on failure. */
int model_zoo_create(model_zoo **out, const model_catalog *cat, sim_diag *d);
void model_zoo_destroy(model_zoo *z);
const model_catalog *model_zoo_catalog(const model_zoo *z);

/* Name of class c ("resnet50"); "" when out of range. */
const char *model_zoo_class_name(uint32_t c);
/* Class of a name or alias (case-insensitive: "ResNet-50", "dlrm", "gpt-2", ...);
 * -1 when unknown. */
int model_zoo_class_find(const char *name, size_t len);
/* Typical batch sizes of class c: *lo..*hi. */
void model_zoo_class_batch(uint32_t c, uint32_t *lo, uint32_t *hi);
/* Reference input size of class c, elements per sample. */
double model_zoo_class_input(uint32_t c);

/* Graph and execution features of zj into out[0 .. MODEL_F_GPU_CC). */
void model_zoo_features(const model_zoo_job *zj, double *out);

/* The noise-free truth of zj on GPU type `type` (1..count-1 of the catalog). */
void model_zoo_truth_of(const model_zoo *z, const model_zoo_job *zj, uint16_t type,
                        model_zoo_truth *t);

/* Recover a zoo job from a trace job's model class and attributes (batch_size,
 * input_size and the class's width-bearing op column); false when the job is not of a
 * zoo class or lacks those attributes. `models` names the job's model id. */
bool model_zoo_job_of(const job_spec *j, const sim_intern *models, model_zoo_job *zj);

/* Draw a random job: class uniform, width log-uniform in [0.5, 1.5], scale log-uniform
 * in [0.5, 2], batch log-uniform in the class's range, iterations log-uniform in
 * [100, 100000]. */
void model_zoo_draw(gsl_rng *rng, model_zoo_job *zj);

/*
 * One synthetic training sample: a random job on a GPU type drawn uniformly from
 * type_mask (bit t = type t; types whose memory the job would exceed are redrawn),
 * labelled with the truth times independent log-normal noise (sigma 0.05 on
 * utilisation and time, 0.03 on memory). s->synthetic is true. SIM_EINVAL when the mask
 * names no catalog type.
 */
int model_zoo_sample(const model_zoo *z, gsl_rng *rng, uint64_t type_mask, model_sample *s);

/*
 * The trace annotator (the trace_gen_config.annotate hook and the --zoo option of
 * `clustersim run`): gives a GPU job that has no batch_size attribute a zoo class and
 * variant whose true demand on ref_type is close to a target, then sets its model
 * class, graph and execution features, iterations (so that iterations x iteration
 * time on ref_type = work_s), true_milli (the truth with noise), gpu_mem_used_mib,
 * iter_time_ms, ref_gpu_type (when unknown) and, for LS jobs without one, slo_s =
 * slo_factor x work_s. The target is the job's true_milli, or, with draw_over and a
 * true_milli equal to its request (the trace gives no separate truth), its gpu_milli
 * divided by an over-request factor 1 + Exp(mean over_request - 1).
 * Jobs without GPUs and jobs that already carry iterations and input_size are left alone.
 */
typedef struct model_zoo_annotator {
    const model_zoo *zoo;
    sim_intern *models;  /* model-class names are interned here */
    uint16_t ref_type;   /* GPU type on which work_s is taken to be measured */
    bool draw_over;      /* draw the over-request when true_milli = gpu_milli */
    double over_request; /* mean over-request factor (>= 1) with draw_over */
    double slo_factor;   /* LS target = slo_factor x work_s; 0 = set none */
    uint64_t annotated;  /* jobs annotated so far */
} model_zoo_annotator;

/* The annotate hook; ctx is a model_zoo_annotator. Draws only from rng. */
void model_zoo_annotate(void *ctx, job_spec *job, gsl_rng *rng);

/*
 * The zoo as the simulator's truth: a rate model whose throughput(type) is the job's
 * noise-free iteration time on its reference type (job->ref_gpu_type, else
 * default_ref) over that on `type`, and whose demand(type) is the truth's utilisation
 * on `type` scaled by the job's own noise (true_milli / utilisation on the reference
 * type). Jobs that are not zoo jobs run at throughput 1 with their true_milli.
 * zr must outlive the engine that uses *out.
 */
typedef struct model_zoo_rate {
    const model_zoo *zoo;
    const sim_intern *models;
    uint16_t default_ref;
} model_zoo_rate;

void model_zoo_rate_init(model_zoo_rate *zr, const model_zoo *z, const sim_intern *models,
                         uint16_t default_ref, sim_rate_model *out);

#endif
