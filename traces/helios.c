/*
 * helios.c: SenseTime Helios traces (Hu et al., "Characterization and Prediction of Deep
 * Learning Workloads in Large-Scale GPU Datacenters", SC'21;
 * github.com/S-Lab-System-Group/HeliosData), cluster_log.csv of each cluster:
 * job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,
 * duration,queue (times "YYYY-MM-DD HH:MM:SS", duration and queue in seconds).
 *
 * Mapping: arrival = submit_time; work = duration (end_time - start_time when empty);
 * num_gpus = gpu_num (0 = CPU job); cpu_milli = 1000 x cpu_num; replicas = node_num when
 * it divides gpu_num; tenant = vc (option tenant=user). A job that never ran (no
 * duration and no start/end time) is left out and counted as ignored. The reader is
 * in_memory (timestamps are rebased to midnight of the earliest day).
 */
#include "traces/trace_int.h"

#include <string.h>

enum { H_ID, H_USER, H_VC, H_GPUS, H_CPUS, H_NODES, H_STATE, H_SUBMIT, H_START, H_END, H_DUR,
       H_QUEUE, H_COLS };

static const char *const names[H_COLS] = {"job_id", "user", "vc", "gpu_num", "cpu_num",
                                          "node_num", "state", "submit_time", "start_time",
                                          "end_time", "duration", "queue"};
static const bool required[H_COLS] = {true, false, false, true, false, false,
                                      false, true, false, false, false, false};
static const char expected[] = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,"
                               "start_time,end_time,duration,queue";
static const char *const helios_options[] = {"tenant", NULL};

static int helios_open(trace_reader *r, sim_diag *d)
{
    const char *t = trace__opt(r, "tenant");
    if (t && strcmp(t, "vc") != 0 && strcmp(t, "user") != 0)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "--trace-opt tenant=%s: expected vc or user", t);
    r->tenant_user = t && strcmp(t, "user") == 0;
    int st = trace__map_header(r, names, required, H_COLS, expected, d);
    if (st == SIM_OK && r->col[H_DUR] < 0 && (r->col[H_START] < 0 || r->col[H_END] < 0))
        return sim_diag_set(d, SIM_EPARSE, r->path, r->header_line, 0,
                            "header lacks column 'duration' (or 'start_time' and 'end_time'); "
                            "expected %s",
                            expected);
    return st;
}

static int helios_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    uint64_t u;
    r->submit_col = c[H_SUBMIT];
    if ((st = trace__job_id(r, row, c[H_ID], "job_id", j, d)) ||
        (st = trace__timestamp(r, row, c[H_SUBMIT], "submit_time", &j->submit_us, d)) ||
        (st = csvin_u64(in, row, c[H_GPUS], "gpu_num", 0, 65536, &u, d)))
        return st;
    j->num_gpus = (uint32_t)u;
    j->gpu_milli = j->true_milli = j->num_gpus ? SIM_MILLI_GPU : 0;
    if (!csvin_empty(row, c[H_CPUS])) {
        if ((st = csvin_u64(in, row, c[H_CPUS], "cpu_num", 0, UINT64_C(1) << 30, &u, d)))
            return st;
        j->cpu_milli = u * 1000;
    }
    if (!csvin_empty(row, c[H_NODES])) {
        if ((st = csvin_u64(in, row, c[H_NODES], "node_num", 0, 65536, &u, d)))
            return st;
        if (u && (j->num_gpus == 0 || j->num_gpus % u == 0))
            j->replicas = (uint32_t)u;
    }
    if (!csvin_empty(row, c[H_DUR])) {
        if ((st = csvin_double(in, row, c[H_DUR], "duration", 0, SIM_TIME_LIMIT_S, &j->work_s, d)))
            return st;
    } else if (!csvin_empty(row, c[H_START]) && !csvin_empty(row, c[H_END])) {
        sim_time t0, t1;
        if ((st = trace__timestamp(r, row, c[H_START], "start_time", &t0, d)) ||
            (st = trace__timestamp(r, row, c[H_END], "end_time", &t1, d)))
            return st;
        if (t1 < t0)
            return csvin_field_error(in, row, c[H_END], "end_time", "a time not before start_time",
                                     d);
        j->work_s = (double)(t1 - t0) / 1e6;
        /* The native reader's bound, so the job can be simulated and written back. */
        if (j->work_s > SIM_TIME_LIMIT_S)
            return csvin_field_error(in, row, c[H_END], "end_time",
                                     "a time at most 1e+10 s after start_time", d);
    } else {
        r->n_ignored++;
        return 0;
    }
    int32_t tcol = r->tenant_user ? c[H_USER] : c[H_VC];
    if ((st = trace__intern(r, r->opt.tenants, row, tcol, &j->tenant, d)))
        return st;
    return 1;
}

const trace_format trace_format_helios = {
    .name = "helios",
    .summary = "Helios cluster_log.csv (job_id,user,vc,gpu_num,...,submit_time,...)",
    .delim = ',',
    .open = helios_open,
    .row = helios_row,
    .in_memory = true,
    .options = helios_options,
};
