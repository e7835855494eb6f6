/*
 * interference.h: the slowdown of a job sharing a GPU. A pair Gavel measured (OSDI'20;
 * models/data/gavel_pairs.csv, K80/P100/V100) uses the measurement; otherwise a
 * contention model: the excess time of job i beside residents j is
 *     x_i = s_i * sum_j a_j p_j (u_i^T C u_j),      speed_i = 1 / (1 + x_i)
 * with s the sensitivity and p the pressure of a class on a GPU type (asymmetric, as
 * Gavel's pairs are), u its resource mix over (sm, mem, l2, pcie) (sm = w, mem = 1 - w
 * from the roofline split of throughput.h; the public data say nothing of L2 or PCIe),
 * a_j the activity of resident j (1 = a whole-GPU job) and C a non-negative contention
 * matrix C[victim][aggressor]. C, s, p and w are fitted together on measured pairs,
 * alternating NNLS for C (on x, weighted by speed^4) and 1-D minimisation of the squared
 * speed error for each s, p, w (GSL Brent); s and p are scaled to a median of 1.
 * `clustersim calibrate` fits C to microbenchmark kernels instead. Sensitivity/pressure:
 * Bubble-Up (Mars et al., MICRO'11), Paragon (Delimitrou, Kozyrakis, ASPLOS'13).
 */
#ifndef MODELS_INTERFERENCE_H
#define MODELS_INTERFERENCE_H

#include "models/catalog.h"
#include "models/throughput.h"
#include "sim/types.h"

#include <stdio.h>

typedef enum model_resource {
    MODEL_RES_SM = 0, /* streaming multiprocessors: FP32 and tensor pipes */
    MODEL_RES_MEM,    /* device memory bandwidth */
    MODEL_RES_L2,     /* L2 cache */
    MODEL_RES_PCIE,   /* host side: host-device copies and the input pipeline */
    MODEL_RES_COUNT
} model_resource;

/* "sm", "mem", "l2", "pcie". */
const char *model_resource_name(model_resource r);
/* Parse a resource name (case-insensitive); false when unknown. */
bool model_resource_parse(const char *s, model_resource *out);

/* A job's interference profile on one GPU type. */
typedef struct model_profile {
    double u[MODEL_RES_COUNT]; /* resource mix: fraction of busy time per resource, sum 1 */
    double sens;               /* sensitivity s >= 0 (1 = the median job) */
    double press;              /* pressure p >= 0 (1 = the median job) */
} model_profile;

/* The contention matrix: c[victim][aggressor] >= 0, dimensionless. */
typedef struct model_contention {
    double c[MODEL_RES_COUNT][MODEL_RES_COUNT];
} model_contention;

/* Excess time x of `self` beside others[0..n) with activities act[0..n):
 * s_self * sum_j act_j p_j (u_self^T C u_j). O(16 n), no allocation. */
double model_contention_excess(const model_contention *C, const model_profile *self,
                               const model_profile *others, const double *act, uint32_t n);

/*
 * Load a contention file (CSV victim,aggressor,coefficient; resource names as above;
 * absent entries are 0). Errors: SIM_EIO; SIM_EPARSE for an unknown resource, a
 * negative or non-numeric coefficient, a duplicated entry or a missing header, with
 * file:line:column, and for a file without any coefficient row.
 */
int model_contention_load(model_contention *C, const char *path, sim_diag *d);
/* Write C in that format (all 16 entries, %.6g). SIM_EIO on a write error. */
int model_contention_write(const model_contention *C, FILE *f, sim_diag *d);

typedef struct model_interference model_interference;

#define MODEL_ICLASS_NONE UINT32_MAX

/*
 * Load the measured pairs `pairs_path` (gpu_type,job_type_a,job_type_b,speed_a,speed_b)
 * and fit C and the profiles on all of them. Classes are the pair table's job types
 * and the throughput model's classes (`tp`, borrowed, like `cat`, for the model's
 * lifetime). Errors: SIM_EIO, SIM_EPARSE (file:line:column), SIM_ENOMEM, SIM_EINVAL
 * (the fit failed), with d filled.
 */
int model_interference_create(model_interference **out, const model_catalog *cat,
                              const model_throughput *tp, const char *pairs_path, sim_diag *d);
/* The shipped pairs: models/data/gavel_pairs.csv. */
int model_interference_create_default(model_interference **out, const model_catalog *cat,
                                      const model_throughput *tp, sim_diag *d);
void model_interference_destroy(model_interference *m);

/* Replace the fitted C (by a calibrated one). use_table false: ignore the measured
 * pairs and always use the contention model. */
void model_interference_set_contention(model_interference *m, const model_contention *C,
                                       bool use_table);
const model_contention *model_interference_contention(const model_interference *m);

/* Classes: lookup by name (case-insensitive), MODEL_ICLASS_NONE when unknown. */
uint32_t model_interference_class_find(const model_interference *m, const char *name, size_t len);
uint32_t model_interference_class_count(const model_interference *m);
const char *model_interference_class_name(const model_interference *m, uint32_t k);

/* Profile of class k on type t. s and p: fitted on t, else the geometric mean of the
 * class's fitted values on other types, else 1 (the median job); w: fitted on t, else
 * the mean of its fitted values, else its roofline split on t. k == NONE gives the
 * median job with the global roofline mix. */
void model_interference_profile(const model_interference *m, uint32_t k, uint16_t t,
                                model_profile *out);
/* Whether s and p of class k were fitted on type t. */
bool model_interference_fitted(const model_interference *m, uint32_t k, uint16_t t);

/* Measured normalised speed of k beside `other` on t, or NaN when not measured (or
 * the table is switched off). */
double model_interference_measured(const model_interference *m, uint32_t k, uint32_t other,
                                   uint16_t t);

/*
 * Excess time x of class `self` on type t beside n residents of classes others[0..n)
 * with activities act[0..n) (in [0, 1]; 1 = a whole-GPU job): the measured pair when
 * n == 1, the table is on and the pair is known (x = act[0] (1/speed - 1)), otherwise
 * the contention model. *measured (may be NULL) says which. No allocation; O(n).
 */
double model_interference_excess(const model_interference *m, uint32_t self, uint16_t t,
                                 const uint32_t *others, const double *act, uint32_t n,
                                 bool *measured);

/* Held-out evaluation of the contention model on unseen pairs. */
#define MODEL_EVAL_MAX_TYPES 8
typedef struct model_ifit_stats {
    uint32_t n;                 /* observations (one per job of a test pair) */
    double mae, rmse, r2;       /* of the fitted contention model */
    double mae_none, r2_none;   /* baseline "no slowdown": speed 1 */
    double mae_slice, r2_slice; /* baseline "fair time-slicing": speed 1/2 */
} model_ifit_stats;

typedef struct model_ifit_eval {
    uint32_t n_types;
    uint16_t type[MODEL_EVAL_MAX_TYPES];
    model_ifit_stats per_type[MODEL_EVAL_MAX_TYPES];
    model_ifit_stats all; /* every test observation */
    double train_mae;     /* of the model on its own training pairs */
    uint32_t train_pairs, test_pairs;
    model_contention C; /* fitted on the training pairs */
} model_ifit_eval;

/*
 * Split the unordered pairs of `pairs_path` at random (GSL mt19937 seeded with `seed`)
 * into a test part (fraction test_frac, in (0, 1)) and a training part, fit on the
 * training part and report errors on the test part. Deterministic for a seed.
 */
int model_interference_eval(const model_catalog *cat, const model_throughput *tp,
                            const char *pairs_path, uint64_t seed, double test_frac,
                            model_ifit_eval *out, sim_diag *d);

#endif
