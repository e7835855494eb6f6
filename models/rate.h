/*
 * rate.h: adapts the GPU models to the engine's rate hook (sim/rate.h) with hooks that
 * are pure lookups (no allocation, no I/O, O(residents)).
 * throughput(job, t) = steps(class, t) / steps(class, ref), ref = the job's ref_gpu_type,
 * else the configured default, else none (ratio 1); an unknown class uses the global
 * roofline ratio. interference = min(1, (1 + sum_j a_j) / (1 + x_self)), where a_j =
 * min(share_j, true demand_j) / 1000 is the GPU fraction resident j really uses and x
 * the interference model's excess time: the core's share already divides the GPU's
 * time (fair time-slicing), so the factor is the slowdown beyond it.
 */
#ifndef MODELS_RATE_H
#define MODELS_RATE_H

#include "models/catalog.h"
#include "models/interference.h"
#include "models/throughput.h"
#include "base/intern.h"
#include "sim/rate.h"

typedef enum model_interference_mode {
    MODEL_INTERF_NONE = 0,   /* no interference term */
    MODEL_INTERF_MEASURED,   /* measured pairs where known, the fitted model elsewhere */
    MODEL_INTERF_MODEL,      /* the fitted contention model only */
    MODEL_INTERF_CALIBRATED, /* the model with a calibrated contention matrix */
} model_interference_mode;

typedef struct model_rate_config {
    bool throughput;          /* apply the throughput model */
    const char *const *steps; /* steps tables (NULL: the shipped ones) */
    uint32_t n_steps;
    uint16_t default_ref; /* reference type of jobs without one (NONE: ratio 1) */
    model_interference_mode interference;
    const char *pairs;      /* measured pairs (NULL: the shipped gavel_pairs.csv) */
    const char *contention; /* contention file, for MODEL_INTERF_CALIBRATED */
} model_rate_config;

typedef struct model_rate model_rate;

/*
 * Build the models cfg asks for. `cat` and `classes` (the run's interned model-class
 * names, which the trace reader fills as it goes) are borrowed for the adapter's
 * lifetime. Errors of the model tables (SIM_EIO, SIM_EPARSE, SIM_ENOMEM, SIM_EINVAL)
 * with d filled.
 */
int model_rate_create(model_rate **out, const model_catalog *cat, const sim_intern *classes,
                      const model_rate_config *cfg, sim_diag *d);
void model_rate_destroy(model_rate *r);

/* Fill the engine's rate table; out->name describes the models, e.g.
 * "throughput=measured ref=job interference=measured". Valid while r lives. */
void model_rate_fill(model_rate *r, sim_rate_model *out);

/* The hooks, for tests and tools (ctx is the model_rate). */
double model_rate_throughput(void *ctx, const job_spec *job, uint16_t gpu_type);
double model_rate_interference(void *ctx, const job_spec *self, uint32_t self_milli,
                               const sim_resident *others, uint32_t n, uint16_t gpu_type);

#endif
