/*
 * calibrate.h: fit the interference model's contention matrix C (interference.h) to a
 * microbenchmark CSV (bench/interference: one row per kernel and partner with the
 * resource each stresses and the kernel's slowdown beside its partner). Each kernel
 * uses one resource fully (s = p = 1, u a unit vector), so a row says
 *     slowdown - 1 = C[resource][partner_resource]
 * and C is the non-negative least-squares solution over the rows of one sharing mode
 * (streams, process, mps, mig, threads). Entries no row measures stay 0.
 */
#ifndef MODELS_CALIBRATE_H
#define MODELS_CALIBRATE_H

#include "models/interference.h"
#include "sim/types.h"

typedef struct model_calib {
    model_contention C;
    bool measured[MODEL_RES_COUNT][MODEL_RES_COUNT]; /* some row measured the entry */
    uint32_t rows;     /* rows used */
    double rmse;       /* root mean square residual of slowdown - 1 */
    char mode[32];     /* the mode fitted */
    char backend[16];  /* of the first row used ("" when the column is absent) */
    char device[256];
} model_calib;

/*
 * Fit C to the rows of `mode` in `path` (NULL: the file must hold a single mode).
 * Errors: SIM_EIO; SIM_EPARSE with file:line:column for a missing column, an unknown
 * resource, a slowdown that is not a positive number, or no row; SIM_EINVAL when the
 * file mixes modes and none was chosen, or the chosen one is absent (the message lists
 * the modes found).
 */
int model_calibrate(const char *path, const char *mode, model_calib *out, sim_diag *d);

#endif
