/*
 * tiresias.c: the traces of the Tiresias simulator (Gu et al., "Tiresias: A GPU Cluster
 * Manager for Distributed Deep Learning", NSDI'19; github.com/SymbioticLab/Tiresias)
 * and of Muri, which extends it (Zhao et al., "Multi-Resource Interleaving for Deep
 * Learning Training", SIGCOMM'22; github.com/Rivendile/Muri).
 *
 * tiresias: job_id,num_gpu,submit_time,iterations,model_name,duration,interval, times
 *   in seconds. muri: job_id,num_gpu,submit_time,iterations,model_name,batch_size,
 *   duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,
 *   priority, times in MILLISECONDS. Per-iteration times are kept as attributes:
 *   iteration_time -> iter_time_ms, resource_time_0 (data loading: storage reads and CPU
 *   preprocessing, which the trace does not split) -> stage_cpu_ms, resource_time_1
 *   (GPU compute) -> stage_gpu_ms, resource_time_2 (gradient synchronisation, 0 for
 *   one-GPU jobs) -> stage_net_ms; stage_storage_ms stays absent. `interval` (the gap
 *   to the previous submission) is redundant with submit_time and not kept.
 * Both are streamed: rows must come in submit order.
 */
#include "traces/trace_int.h"

#include <math.h>
#include <string.h>

enum { T_ID, T_GPUS, T_SUBMIT, T_ITERS, T_MODEL, T_BATCH, T_DUR, T_INTERVAL, T_ITER_TIME, T_RT0,
       T_RT1, T_RT2, T_PRIO, T_COLS };

static const char *const names[T_COLS] = {
    "job_id",   "num_gpu",        "submit_time",     "iterations",      "model_name",
    "batch_size", "duration",     "interval",        "iteration_time",  "resource_time_0",
    "resource_time_1", "resource_time_2", "priority"};
static const bool tiresias_required[T_COLS] = {true, true, true, false, false, false, true};
static const bool muri_required[T_COLS] = {true, true, true, true,  true, false, true,
                                           false, true, true, true, true, false};

static int tiresias_open(trace_reader *r, sim_diag *d)
{
    int st = trace__map_header(r, names, tiresias_required, T_COLS,
                               "job_id,num_gpu,submit_time,iterations,model_name,duration,"
                               "interval", d);
    /* Muri's files share Tiresias' columns but count milliseconds: read as Tiresias,
     * every time would be 1000 times too long. */
    if (st == SIM_OK && r->col[T_RT0] >= 0)
        return sim_diag_set(d, SIM_EPARSE, r->path, r->header_line, 0,
                            "the header has Muri's per-resource columns (resource_time_0, ...), "
                            "whose times are milliseconds; read this file with --format muri");
    return st;
}

static int muri_open(trace_reader *r, sim_diag *d)
{
    return trace__map_header(r, names, muri_required, T_COLS,
                             "job_id,num_gpu,submit_time,iterations,model_name,batch_size,"
                             "duration,interval,iteration_time,resource_time_0,resource_time_1,"
                             "resource_time_2,priority",
                             d);
}

static int attr(const trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                double scale, job_spec *j, sim_attr a, sim_diag *d)
{
    if (csvin_empty(row, col))
        return SIM_OK;
    double v;
    int st = csvin_double(r->in, row, col, name, 0, 1e15, &v, d);
    if (st)
        return st;
    j->attr[a] = v * scale;
    j->attr_present |= UINT64_C(1) << a;
    return SIM_OK;
}

/* Both layouts; `ms` = times in milliseconds (Muri) rather than seconds (Tiresias). */
static int common_row(trace_reader *r, const csvin_row *row, job_spec *j, bool ms, sim_diag *d)
{
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    uint64_t u;
    double submit, dur;
    double unit = ms ? 1e-3 : 1;
    r->submit_col = c[T_SUBMIT];
    if ((st = trace__job_id(r, row, c[T_ID], "job_id", j, d)) ||
        (st = csvin_u64(in, row, c[T_GPUS], "num_gpu", 0, 65536, &u, d)) ||
        (st = csvin_double(in, row, c[T_SUBMIT], "submit_time", 0, ms ? 1e3 * SIM_TIME_LIMIT_S : SIM_TIME_LIMIT_S, &submit,
                           d)) ||
        (st = csvin_double(in, row, c[T_DUR], "duration", 0, ms ? 1e3 * SIM_TIME_LIMIT_S : SIM_TIME_LIMIT_S, &dur, d)))
        return st;
    j->submit_us = (sim_time)llround(submit * unit * 1e6);
    j->work_s = dur * unit;
    j->num_gpus = (uint32_t)u;
    j->gpu_milli = j->true_milli = j->num_gpus ? SIM_MILLI_GPU : 0;
    if ((st = trace__intern(r, r->opt.models, row, c[T_MODEL], &j->model, d)) ||
        (st = attr(r, row, c[T_ITERS], "iterations", 1, j, SIM_ATTR_ITERATIONS, d)) ||
        (st = attr(r, row, c[T_BATCH], "batch_size", 1, j, SIM_ATTR_BATCH_SIZE, d)))
        return st;
    if (!csvin_empty(row, c[T_INTERVAL]) &&
        (st = csvin_double(in, row, c[T_INTERVAL], "interval", 0, 1e15, &dur, d)))
        return st;
    if (ms) {
        if ((st = attr(r, row, c[T_ITER_TIME], "iteration_time", 1, j, SIM_ATTR_ITER_TIME_MS,
                       d)) ||
            (st = attr(r, row, c[T_RT0], "resource_time_0", 1, j, SIM_ATTR_STAGE_CPU_MS, d)) ||
            (st = attr(r, row, c[T_RT1], "resource_time_1", 1, j, SIM_ATTR_STAGE_GPU_MS, d)) ||
            (st = attr(r, row, c[T_RT2], "resource_time_2", 1, j, SIM_ATTR_STAGE_NET_MS, d)))
            return st;
        /* A stage profile whose stages are all zero describes no iteration at all. */
        if (job_spec_has(j, SIM_ATTR_STAGE_CPU_MS) && job_spec_has(j, SIM_ATTR_STAGE_GPU_MS) &&
            job_spec_has(j, SIM_ATTR_STAGE_NET_MS) && j->attr[SIM_ATTR_STAGE_CPU_MS] == 0 &&
            j->attr[SIM_ATTR_STAGE_GPU_MS] == 0 && j->attr[SIM_ATTR_STAGE_NET_MS] == 0)
            return csvin_field_error(in, row, c[T_RT0], "resource_time_0",
                                     "a stage profile with some time (resource_time_0..2 are "
                                     "all 0)",
                                     d);
    }
    if (!csvin_empty(row, c[T_PRIO])) {
        int64_t p;
        if ((st = csvin_i64(in, row, c[T_PRIO], "priority", -1000000, 1000000, &p, d)))
            return st;
        j->priority = (int32_t)p;
    }
    return 1;
}

static int tiresias_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    return common_row(r, row, j, false, d);
}

static int muri_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    return common_row(r, row, j, true, d);
}

const trace_format trace_format_tiresias = {
    .name = "tiresias",
    .summary = "Tiresias simulator CSV job_id,num_gpu,submit_time,iterations,model_name,"
               "duration,interval (seconds)",
    .delim = ',',
    .open = tiresias_open,
    .row = tiresias_row,
};

const trace_format trace_format_muri = {
    .name = "muri",
    .summary = "Muri simulator CSV with per-resource iteration times (milliseconds)",
    .delim = ',',
    .open = muri_open,
    .row = muri_row,
};
