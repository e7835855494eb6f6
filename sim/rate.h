/*
 * rate.h: the rate model interface. A running job's speed (reference work-seconds per
 * second) is
 *   min over its GPUs g of [ throughput(type of g) x share_speed(g) x interference(g) ]
 *     x scaling(replicas) x speed_factor
 * where share_speed = min(1, share / true demand) is computed by the core, and the
 * three model terms come from this table (a NULL hook means 1.0). The true demand is
 * the job's true_milli, or the demand hook's figure for the GPU's type when set. The
 * engine calls the hooks only when a job's neighbourhood changes (it starts, stops, is
 * resized, or a co-resident on one of its GPUs does), never per event. Models fill it;
 * the CLI wires it into the engine, so the core depends on no model.
 */
#ifndef SIM_RATE_H
#define SIM_RATE_H

#include "sim/types.h"

/* Another job on the same GPU, as the interference hook sees it. */
typedef struct sim_resident {
    const job_spec *job; /* its specification */
    uint32_t milli;      /* share it holds on this GPU, milli-GPU */
} sim_resident;

typedef struct sim_rate_model {
    const char *name; /* reported in summary.json ("none" when all hooks are NULL) */
    void *ctx;        /* passed to every hook */

    /* Speed of `job` on one GPU of `gpu_type` relative to its speed on its reference
     * type (job->ref_gpu_type; SIM_GPU_TYPE_NONE = unknown). Must be > 0. */
    double (*throughput)(void *ctx, const job_spec *job, uint16_t gpu_type);

    /* Factor in (0, 1] by which `self`, holding `self_milli` of a GPU of `gpu_type`, is
     * slowed by the other residents of that GPU (n >= 1 of them). */
    double (*interference)(void *ctx, const job_spec *self, uint32_t self_milli,
                           const sim_resident *others, uint32_t n, uint16_t gpu_type);

    /* Speed with `replicas` replicas relative to the job's nominal replica count
     * `nominal` (the trace's). Must be > 0; NULL means replicas / nominal. */
    double (*scaling)(void *ctx, const job_spec *job, uint32_t replicas, uint32_t nominal);

    /* True demand of `job` on one GPU of `gpu_type`: the share (milli-GPU, 1..1000) it
     * uses alone there, which replaces job->true_milli in share_speed and in the
     * effective utilisation. NULL means job->true_milli on every type. */
    uint32_t (*demand)(void *ctx, const job_spec *job, uint16_t gpu_type);
} sim_rate_model;

#endif
