/*
 * catalog.h: the GPU catalog — one row per GPU type a cluster or trace may name, with
 * public spec-sheet figures (models/data/gpus.csv; see the README for its source).
 * Type ids are 1..n in file order; id 0 (SIM_GPU_TYPE_NONE) means "no GPU". Names and
 * aliases are matched without regard to ASCII case.
 */
#ifndef MODELS_CATALOG_H
#define MODELS_CATALOG_H

#include "base/intern.h"
#include "sim/types.h"

typedef struct model_gpu_type {
    char name[32];             /* canonical name ("V100M32") */
    char spec_id[32];          /* row of the spec table it was derived from */
    double compute_capability; /* e.g. 7.0 */
    uint32_t sm_count;         /* streaming multiprocessors */
    uint64_t memory_mib;       /* memory per GPU, MiB */
    double mem_bandwidth_gbs;  /* GB/s */
    double fp32_tflops;        /* dense FP32 */
    double fp16_tflops;        /* dense FP16 (tensor cores where present) */
    bool assumed;              /* figures are a stand-in: the type is undisclosed */
} model_gpu_type;

typedef struct model_catalog model_catalog;

/* Load a catalog CSV. Errors: SIM_EIO, SIM_EPARSE (with file:line:col), SIM_ENOMEM,
 * SIM_ELIMIT (more than 63 types). */
int model_catalog_load(model_catalog **out, const char *path, sim_diag *d);
void model_catalog_destroy(model_catalog *c);

/* The shipped catalog's path (models/data/gpus.csv under the data directory, which
 * the environment variable CLUSTERSIM_DATA overrides). */
const char *model_catalog_default_path(void);
/* Root of the shipped data files: $CLUSTERSIM_DATA or the build-time source dir. */
const char *model_data_dir(void);

/* Number of types plus one (ids run 1..count-1). */
uint32_t model_catalog_count(const model_catalog *c);
/* Type id (1..count-1); NULL when out of range. */
const model_gpu_type *model_catalog_type(const model_catalog *c, uint16_t id);
/* Names and aliases -> type ids (id 0 is ""). Borrowed, valid while c lives. */
const sim_intern *model_catalog_names(const model_catalog *c);

#endif
