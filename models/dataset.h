/*
 * dataset.h: labelled samples for the demand predictors — the training-data CSV. One
 * row per (job configuration, GPU type) measurement; columns in any order, all required:
 *   source        "synthetic" (the model zoo) or "measured" (a real GPU, bench/profiler)
 *   model         model class or layer-sequence name (informative, not a feature)
 *   gpu_type      GPU name (informative; the GPU features are what count)
 *   op_addv2 .. op_softmax, batch_size, iterations, input_size, compute_capability,
 *   gpu_mem_gb, gpu_cores         the features (models/features.h)
 *   util_milli    measured GPU compute utilisation, milli-GPU (0..1000)
 *   mem_mib       measured peak GPU memory, MiB
 *   time_s        measured execution time of all iterations, seconds
 * Bad rows are reported as file:line:column: error: field 'x': expected ..., got "v".
 */
#ifndef MODELS_DATASET_H
#define MODELS_DATASET_H

#include "models/features.h"

#include <stdio.h>

typedef struct model_sample {
    double x[MODEL_F_COUNT]; /* features, in the order of models/features.h */
    double util_milli;       /* measured utilisation, milli-GPU */
    double mem_mib;          /* measured GPU memory, MiB */
    double time_s;           /* measured execution time, seconds */
    bool synthetic;          /* source: generated (true) or measured (false) */
    char model[32];          /* model class, informative */
    char gpu_type[32];       /* GPU name, informative */
} model_sample;

typedef struct model_dataset {
    size_t n, cap;
    model_sample *rows;
    size_t n_synthetic; /* rows whose source is "synthetic" */
} model_dataset;

/* Read a training CSV (plain or gzip) into ds (which must be zeroed or freed). Errors:
 * SIM_EIO, SIM_EPARSE (with file:line:column), SIM_ENOMEM; ds is then empty. */
int model_dataset_load(model_dataset *ds, const char *path, sim_diag *d);

/* Append a copy of s. SIM_ENOMEM on failure. */
int model_dataset_append(model_dataset *ds, const model_sample *s);

void model_dataset_free(model_dataset *ds);

/* The CSV header line (with its newline), and one row for s. SIM_EIO on a write error. */
int model_dataset_write_header(FILE *f);
int model_dataset_write_row(FILE *f, const model_sample *s);

#endif
