/*
 * fragmentation.h: the target workload of a run and its fragmentation probe.
 */
#ifndef STUDY_FRAGMENTATION_H
#define STUDY_FRAGMENTATION_H

#include "policies/frag.h"
#include "sim/engine.h"
#include "study/study.h"

/* The target workload of a run and its fragmentation probe (study/fragmentation.c):
 * columns frag_gpus (GPUs no task drawn from the workload could use, summed over up
 * nodes) and frag_ratio (frag_gpus / idle GPUs). The probe's ctx is the struct itself,
 * so it must stay where study_frag_init put it. */
typedef struct study_frag {
    frag_workload *wl;
    frag_meter *meter;
    sim_probe probe;
    frag_builder builder; /* counts jobs into wl */
} study_frag;

/* An empty workload and a meter for cluster cl. SIM_OK, SIM_ENOMEM or SIM_ELIMIT. */
int study_frag_init(study_frag *f, const cluster_spec *cl, const uint64_t *type_mem,
                    uint32_t n_types, sim_diag *d);
void study_frag_fini(study_frag *f);
/* Count one job's replica shape (replicas resolved as the engine's admission does). */
int study_frag_add_job(study_frag *f, const job_spec *j, sim_diag *d);
/* First pass: count every job of a's trace file (or generator). Errors of the trace. */
int study_frag_scan(study_frag *f, const run_args *a, sim_intern *tenants, sim_intern *models,
                    const sim_intern *gpu_types, sim_diag *d);

#endif
