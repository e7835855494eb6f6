/*
 * throughput.h: speed of a job class on each GPU type. Measured steps/s come from
 * steps tables (job_type,scale_factor,gpu_type,steps_per_sec; only scale factor 1
 * rows, one GPU); the shipped ones are Gavel's isolated throughputs on K80/P100/V100
 * and Pollux's T4 profiles. A type without a measurement gets a roofline estimate: a
 * step takes time proportional to tau(t) = 1/F_t + 1/(I B_t), with F_t the FP32 rate
 * and B_t the memory bandwidth of the catalog and I one arithmetic intensity fitted
 * (GSL Brent minimiser, least squares in log speed) over every class measured on two
 * types or more; a class's estimate is the geometric mean over its measured types m of
 * steps(m) x tau(m) / tau(t). Each class also gets its own split alpha_c / F + beta_c / B
 * (TFLOP and GB per step, non-negative least squares on relative error), which gives
 * the fraction of its step spent at the compute roof (its resource profile).
 * Roofline: Williams, Waterman, Patterson, CACM 52(4), 2009.
 */
#ifndef MODELS_THROUGHPUT_H
#define MODELS_THROUGHPUT_H

#include "models/catalog.h"
#include "sim/types.h"

#define MODEL_CLASS_NONE UINT32_MAX

typedef struct model_throughput model_throughput;

/*
 * Load the steps tables paths[0..n_paths) and fit. Class names are the tables'
 * job_type values (case-insensitive); a class measured twice on one type, an unknown
 * GPU type (the message lists the catalog's) or a bad number is SIM_EPARSE with
 * file:line:column. Measurements on `exclude_type` are ignored (SIM_GPU_TYPE_NONE keeps
 * all): the hold-out evaluation uses it. `cat` is borrowed for the model's lifetime.
 * Errors: SIM_EIO, SIM_EPARSE, SIM_ENOMEM, SIM_EINVAL (a GSL failure), with d filled.
 */
int model_throughput_create(model_throughput **out, const model_catalog *cat,
                            const char *const *paths, uint32_t n_paths, uint16_t exclude_type,
                            sim_diag *d);
/* The shipped tables: models/data/gavel_steps.csv and models/data/pollux_steps.csv. */
int model_throughput_create_default(model_throughput **out, const model_catalog *cat,
                                    sim_diag *d);
void model_throughput_destroy(model_throughput *m);

/* Classes: ids 0..count-1 in first-seen order; lookup by name (MODEL_CLASS_NONE when
 * unknown). O(length of name). */
uint32_t model_throughput_class_count(const model_throughput *m);
const char *model_throughput_class_name(const model_throughput *m, uint32_t c);
uint32_t model_throughput_class_find(const model_throughput *m, const char *name, size_t len);
/* Path of the table that measured class c. */
const char *model_throughput_class_source(const model_throughput *m, uint32_t c);
/* Number of GPU types class c is measured on. */
uint32_t model_throughput_class_measured(const model_throughput *m, uint32_t c);

/* Steps/s of class c on type t (1..count-1): the measurement, else the roofline
 * estimate; *measured (may be NULL) says which. O(1). */
double model_throughput_steps(const model_throughput *m, uint32_t c, uint16_t t, bool *measured);

/* Speed of class c on type t relative to type r (> 0). For c == MODEL_CLASS_NONE the
 * ratio of the global roofline: tau(r) / tau(t), tau(t) = 1/F_t + 1/(I B_t). O(1). */
double model_throughput_ratio(const model_throughput *m, uint32_t c, uint16_t t, uint16_t r);

/* Fraction of a step of class c (NONE: the global roofline) on type t spent at the
 * compute roof: (alpha/F_t) / (alpha/F_t + beta/B_t), in [0, 1]. */
double model_throughput_compute_frac(const model_throughput *m, uint32_t c, uint16_t t);

/* The global arithmetic intensity, FLOP per byte. */
double model_throughput_intensity(const model_throughput *m);
/* Roofline split of class c: alpha (TFLOP per step) and beta (GB per step); a class
 * measured on one type gets the global intensity. */
void model_throughput_class_fit(const model_throughput *m, uint32_t c, double *alpha_tflop,
                                double *beta_gb);

/* Hold-out evaluation: refit without the measurements on `type`, then predict them. */
typedef struct model_throughput_holdout {
    uint16_t type;            /* the held-out type */
    uint32_t n;               /* classes measured on it and on another type */
    double mape;              /* mean |pred - meas| / meas of the roofline estimate */
    double max_ape;           /* largest of those relative errors */
    double mape_compute_only; /* baseline: FP32 ratio from the other measured types */
    double mape_bw_only;      /* baseline: bandwidth ratio from the other measured types */
    double intensity;         /* global intensity of the refit, FLOP per byte */
} model_throughput_holdout;

/* Run the hold-out of `type` with the tables paths[0..n_paths). Errors as create; a
 * type no class is measured on gives n == 0. */
int model_throughput_eval_holdout(const model_catalog *cat, const char *const *paths,
                                  uint32_t n_paths, uint16_t type, model_throughput_holdout *out,
                                  sim_diag *d);

#endif
