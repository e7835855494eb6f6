/*
 * pollux.h: the Pollux (OSDI'21) application profiles as a scaling model for elastic
 * data-parallel jobs, and an Amdahl-style fallback for jobs of unknown models.
 *
 * A profiles directory holds one folder per application (bert, cifar10, deepspeech2,
 * imagenet, ncf, yolov3) with placements.csv, scalability.csv and validation-<B>.csv,
 * as the Pollux simulator ships them (github.com/petuum/adaptdl, simulator/). The work
 * of a job of application a at global batch size B is the number of iterations the
 * validation run at B took to complete the application's max_epochs (interpolated
 * linearly between validated batch sizes, as applications.py's get_iteration does).
 * The time of one iteration with n trainers follows applications.py's
 * update_local_bsz and get_throughput: local batch ceil(B/n), gradient accumulation
 * beyond max_local_bsz, step time interpolated in local batch size on the placement
 * that packs n replicas four per node.
 */
#ifndef MODELS_POLLUX_H
#define MODELS_POLLUX_H

#include "base/intern.h"
#include "sim/rate.h"
#include "sim/types.h"

typedef struct model_pollux model_pollux;

/* The largest trainer count the profiles cover (Pollux's simulator caps at 64). */
#define MODEL_POLLUX_MAX_REPLICAS 64u

/*
 * Load the profiles under `dir` (every known application folder that exists; at least
 * one must). Errors: SIM_EIO (no application folder), SIM_EPARSE with file:line:column,
 * SIM_ENOMEM.
 */
int model_pollux_load(model_pollux **out, const char *dir, sim_diag *d);
void model_pollux_destroy(model_pollux *p);

/* Index of the application named name[0..len), or -1 when unknown or not loaded. */
int model_pollux_app(const model_pollux *p, const char *name, size_t len);

/* Smallest and largest validated global batch size, and the smallest local batch size. */
void model_pollux_batch_range(const model_pollux *p, int app, uint32_t *min_bsz, uint32_t *max_bsz,
                              uint32_t *min_local);

/* Iterations to complete the application at global batch size bsz (must lie within the
 * validated range); NaN outside it. */
double model_pollux_iterations(const model_pollux *p, int app, double bsz);

/* Seconds of one iteration (with accumulation steps) with n trainers at global batch
 * size bsz, on the profiles' GPU (T4). O(rows of the application's profiles). */
double model_pollux_iter_time(const model_pollux *p, int app, uint32_t n, double bsz);

/* Amdahl speed-up of n workers with parallel fraction par (0..1): 1/((1-par)+par/n). */
double model_amdahl(double par, uint32_t n);

/*
 * A rate model that adds a scaling hook to another one (inner, may be NULL): jobs whose
 * model class is a loaded Pollux application and that carry batch_size scale as
 * iter_time(nominal)/iter_time(n); every other job as amdahl(n)/amdahl(nominal).
 * init fills `out` (which must stay where it is: out->ctx points into s).
 */
typedef struct model_scaling {
    const model_pollux *pollux; /* borrowed, may be NULL */
    const sim_intern *classes;  /* the run's model-class names (borrowed) */
    double amdahl_par;          /* parallel fraction of the fallback curve */
    sim_rate_model inner;       /* copy of the wrapped model (all NULL when none) */
    struct {
        uint32_t key; /* model id + 1; 0 = empty */
        int app;
    } cache[1024];
    char name[192]; /* the wrapped model's name and the curve, for the run's outputs */
} model_scaling;

void model_scaling_init(model_scaling *s, const model_pollux *pollux, const sim_intern *classes,
                        double amdahl_par, const sim_rate_model *inner, sim_rate_model *out);

#endif
