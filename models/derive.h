/*
 * derive.h: the tools that turn public measurement and spec tables (../shared/data) into
 * the project's shipped tables under models/data/. Each is deterministic: the same
 * inputs give a byte-identical output, so a test can re-derive a shipped file and
 * compare. Sources: NVIDIA datasheets (gpu_specs), Gavel (Narayanan et al., OSDI'20,
 * github.com/stanford-futuredata/gavel), Pollux (Qiao et al., OSDI'21,
 * github.com/petuum/adaptdl, osdi21-artifact).
 */
#ifndef MODELS_DERIVE_H
#define MODELS_DERIVE_H

#include "models/catalog.h"
#include "sim/types.h"

#include <stdio.h>

/*
 * The GPU catalog (gpus.csv schema, see catalog.h) from the spec table `specs`
 * (gpu_specs.csv), the map of trace GPU labels `labels` (trace_gpu_label_map.csv) and
 * the project's naming table `names` (models/data/gpu_names.csv: name,spec_id,
 * memory_gib,labels,assumed). One output row per names row, in its order, with the
 * figures of its spec row; aliases are the spec id (first non-assumed row of that spec)
 * and every trace label whose spec is that row's (a label of a spec several rows use,
 * or of an undisclosed GPU, must be claimed in the names row's `labels`). Labels that
 * are not single tokens ("(all)", "12GB / 24GB") name no GPU a trace carries and are
 * skipped. Errors: SIM_EIO, SIM_EPARSE (a label no row takes, an unknown spec id, ...),
 * SIM_ENOMEM, with d filled.
 */
int model_derive_catalog(const char *specs, const char *labels, const char *names, FILE *out,
                         sim_diag *d);

/*
 * gavel_steps.csv (job_type,scale_factor,gpu_type,steps_per_sec) from Gavel's isolated
 * throughput table (worker_type,job_type,scale_factor,steps_per_sec). Worker types
 * resolve through the catalog's names (k80 -> K80, p100 -> P100, v100 -> V100M16);
 * "_unconsolidated" workers (replicas spread over servers) and infeasible (0)
 * measurements are left out. Rows sorted by job type, scale factor, catalog type id.
 */
int model_derive_gavel_steps(const char *isolated, const model_catalog *cat, FILE *out,
                             sim_diag *d);

/*
 * gavel_pairs.csv (gpu_type,job_type_a,job_type_b,speed_a,speed_b) from Gavel's
 * co-located throughput table: single-GPU jobs (scale factor 1) on consolidated
 * workers, each unordered pair once (job_type_a <= job_type_b, byte order), speeds
 * normalised to the job's isolated speed on the same GPU. Infeasible pairs (a speed of
 * 0 or missing: out of memory) are left out.
 */
int model_derive_gavel_pairs(const char *colocated, const model_catalog *cat, FILE *out,
                             sim_diag *d);

/*
 * pollux_steps.csv (same schema as gavel_steps.csv) from the Pollux profiles directory
 * (one folder per application with placements.csv: placement,local_bsz,step_time,
 * sync_time): for each application, the single-GPU placement ("1") at its largest
 * measured per-GPU batch, steps_per_sec = 1 / step_time, on T4 (Pollux's AWS g4dn
 * nodes). Applications in byte order of their folder names.
 */
int model_derive_pollux_steps(const char *dir, const model_catalog *cat, FILE *out, sim_diag *d);

#endif
