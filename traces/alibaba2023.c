/*
 * alibaba2023.c: the Alibaba cluster-trace-gpu-v2023 "openb" pod lists
 * (https://github.com/alibaba/clusterdata, cluster-trace-gpu-v2023; Weng et al., ATC'23).
 * Columns: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 * creation_time,deletion_time,scheduled_time (times in seconds).
 *
 * Mapping: a pod is a one-replica job; arrival = creation_time; duration =
 * deletion_time - scheduled_time, or deletion_time - creation_time for pods that were
 * never scheduled (phase Pending: the lifetime they would have had); gpu_spec "A|B" is
 * the allowed GPU types; qos LS/BE/Burstable/Guaranteed is kept; there is no tenant.
 * For readers of shapes only, the time columns may be absent.
 */
#include "traces/trace_int.h"

#include <string.h>

enum { A_NAME, A_CPU, A_MEM, A_GPUS, A_MILLI, A_SPEC, A_QOS, A_PHASE, A_CREATE, A_DELETE,
       A_SCHED, A_COLS };

static const char *const names[A_COLS] = {
    "name",   "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
    "qos",    "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
static const char expected[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                               "pod_phase,creation_time,deletion_time,scheduled_time";

/* For readers of shapes only (trace_options.shapes_only): the published openb multi-GPU
 * pod lists carry only name,cpu_milli,memory_mib,num_gpu,gpu_milli. */
static const bool required_shapes[A_COLS] = {true, true, true, true, true, false,
                                             false, false, false, false, false};

static int ali_open(trace_reader *r, sim_diag *d)
{
    if (r->opt.shapes_only)
        return trace__map_header(r, names, required_shapes, A_COLS, expected, d);
    int st = trace__map_header(r, names, required_shapes, A_COLS, expected, d);
    if (st == SIM_OK && (r->col[A_CREATE] < 0 || r->col[A_DELETE] < 0))
        return sim_diag_set(d, SIM_EPARSE, r->path, r->header_line, 0,
                            "header lacks column '%s': this pod list has no times (like the "
                            "published multigpu variants), so only clustersim pack, which "
                            "uses requests alone, can read it",
                            r->col[A_CREATE] < 0 ? "creation_time" : "deletion_time");
    return st;
}

static int ali_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    uint64_t u;
    sim_time created, deleted, sched;
    if ((st = trace__job_id(r, row, c[A_NAME], "name", j, d)) ||
        (st = csvin_u64(in, row, c[A_CPU], "cpu_milli", 0, UINT64_C(1) << 40, &j->cpu_milli, d)) ||
        (st = csvin_u64(in, row, c[A_MEM], "memory_mib", 0, UINT64_C(1) << 40, &j->mem_mib, d)) ||
        (st = csvin_u64(in, row, c[A_GPUS], "num_gpu", 0, 4096, &u, d)))
        return st;
    j->num_gpus = (uint32_t)u;
    if ((st = csvin_u64(in, row, c[A_MILLI], "gpu_milli", j->num_gpus ? 1 : 0,
                        j->num_gpus ? 1000 : 0, &u, d)))
        return st;
    j->gpu_milli = (uint32_t)u;
    j->true_milli = j->gpu_milli;
    j->replicas = 1;
    if ((st = trace__gpu_mask(r, row, c[A_SPEC], "gpu_spec", &j->gpu_type_mask, d)))
        return st;
    if (!csvin_empty(row, c[A_QOS]) &&
        !sim_qos_parse(row->f[c[A_QOS]], row->len[c[A_QOS]], &j->qos))
        return csvin_field_error(in, row, c[A_QOS], "qos", "LS, BE, Burstable or Guaranteed", d);
    if (c[A_CREATE] < 0 || c[A_DELETE] < 0) {
        /* Only a reader of shapes gets here (the columns are required otherwise). */
        j->submit_us = 0;
        j->work_s = 0;
        if (c[A_NAME] >= 0)
            j->name = row->f[c[A_NAME]];
        return 1;
    }
    r->submit_col = c[A_CREATE];
    if ((st = csvin_seconds(in, row, c[A_CREATE], "creation_time", 0, SIM_TIME_LIMIT_S, &created, d)) ||
        (st = csvin_seconds(in, row, c[A_DELETE], "deletion_time", 0, SIM_TIME_LIMIT_S, &deleted, d)))
        return st;
    sched = created;
    if (!csvin_empty(row, c[A_SCHED]) &&
        (st = csvin_seconds(in, row, c[A_SCHED], "scheduled_time", 0, SIM_TIME_LIMIT_S, &sched, d)))
        return st;
    if (sched < created)
        return csvin_field_error(in, row, c[A_SCHED], "scheduled_time",
                                 "a time not before creation_time", d);
    if (deleted < sched)
        return csvin_field_error(in, row, c[A_DELETE], "deletion_time",
                                 "a time not before scheduled_time (or creation_time)", d);
    j->submit_us = created;
    j->work_s = (double)(deleted - sched) / 1e6;
    if (c[A_NAME] >= 0)
        j->name = row->f[c[A_NAME]];
    return 1;
}

const trace_format trace_format_alibaba2023 = {
    .name = "alibaba2023",
    .summary = "Alibaba cluster-trace-gpu-v2023 openb pod list",
    .delim = ',',
    .open = ali_open,
    .row = ali_row,
    /* The published variants (pod_lists_gz/) are not in creation order. */
    .in_memory = true,
};
