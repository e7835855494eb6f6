/*
 * alibaba2020.c: Alibaba PAI GPU traces (cluster-trace-gpu-v2020; Weng et al., "MLaaS in
 * the Wild", NSDI'22; github.com/alibaba/clusterdata). The trace is pai_job_table.csv
 * (job_name,inst_id,user,status,start_time,end_time; headerless upstream, a header line
 * is accepted) joined on job_name with pai_task_table.csv (job_name,task_name,inst_num,
 * status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type), given as the option
 * tasks=FILE and loaded whole into a hash table first.
 *
 * Mapping: arrival = job start_time (PAI's submission time, seconds; rebased to seconds
 * since local midnight, UTC+8, of the first day, keeping the time of day); work = job
 * end_time - earliest task start_time; tenant = user. Each instance of a task that asks
 * for GPUs is one replica: plan_gpu (percent of one GPU per instance) <= 100 gives one
 * GPU at 10 x plan_gpu milli, above 100 gives ceil(plan_gpu/100) GPUs sharing it evenly;
 * tasks of different shapes take the largest; inst_num must be a whole number >= 1 (0
 * is accepted for a task without GPUs, which then adds nothing).
 * cpu_milli = sum of inst_num x plan_cpu x 10,
 * mem_mib = sum of inst_num x plan_mem x 1024 over every task; the assigned gpu_type of
 * the first GPU task is the reference type of the duration (not a constraint). Jobs
 * without an end_time (still running when the trace was cut) or without any task are
 * left out and counted as ignored. in_memory: the job table is not in submit order.
 */
#include "traces/trace_int.h"

#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const pai_options[] = {"tasks", NULL};

#define NAME_MAX_LEN 63

typedef struct task_agg {
    char name[NAME_MAX_LEN + 1]; /* job_name; "" = empty slot */
    double gpu_inst;             /* instances that ask for GPUs */
    double gpu_pct;              /* largest per-instance GPU request, percent */
    double cpu_milli, mem_mib;   /* totals over all instances */
    double first_start_s;        /* earliest task start (NAN = none) */
    uint16_t gpu_type;           /* assigned type of the first GPU task */
} task_agg;

typedef struct pai_state {
    task_agg *t;
    size_t cap, n;
} pai_state;

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
}

/* The slot of name (inserted when absent and insert is set); NULL when absent. */
static task_agg *slot(pai_state *s, const char *name, size_t len, bool insert)
{
    size_t k = name_hash(name, len) & (s->cap - 1);
    while (s->t[k].name[0]) {
        if (strlen(s->t[k].name) == len && memcmp(s->t[k].name, name, len) == 0)
            return &s->t[k];
        k = (k + 1) & (s->cap - 1);
    }
    if (!insert)
        return NULL;
    memcpy(s->t[k].name, name, len);
    s->t[k].name[len] = '\0';
    s->t[k].first_start_s = NAN;
    s->n++;
    return &s->t[k];
}

static int grow(pai_state *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 1 << 12;
    task_agg *nt = sim_calloc(ncap, sizeof *nt);
    if (!nt)
        return SIM_ENOMEM;
    pai_state ns = {.t = nt, .cap = ncap};
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->t[i].name[0])
            continue;
        task_agg *dst = slot(&ns, s->t[i].name, strlen(s->t[i].name), true);
        *dst = s->t[i];
    }
    sim_free(s->t);
    *s = ns;
    return SIM_OK;
}

static int opt_number(const csvin *in, const csvin_row *row, int32_t col, const char *name,
                      double *out, sim_diag *d)
{
    *out = 0;
    if (csvin_empty(row, col))
        return SIM_OK;
    return csvin_double(in, row, col, name, 0, 1e15, out, d);
}

static int load_tasks(trace_reader *r, pai_state *s, const char *path, sim_diag *d)
{
    enum { K_JOB, K_TASK, K_INST, K_STATUS, K_START, K_END, K_CPU, K_MEM, K_GPU, K_TYPE, K_N };
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    if ((st = grow(s)) != SIM_OK) {
        csvin_close(in);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    csvin_row row;
    bool first = true;
    uint64_t tasks = 0;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (first && row.n > 0 && strcmp(row.f[0], "job_name") == 0) {
            first = false;
            continue;
        }
        first = false;
        tasks++;
        if (row.n != K_N) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, (int)(row.n < K_N ? row.n : K_N) + 1,
                              "expected the %d fields job_name,task_name,inst_num,status,"
                              "start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type, got %u",
                              K_N, row.n);
            goto out;
        }
        if (csvin_empty(&row, K_JOB) || row.len[K_JOB] > NAME_MAX_LEN) {
            st = csvin_field_error(in, &row, K_JOB, "job_name", "a job name of 1..63 bytes", d);
            goto out;
        }
        double inst, cpu, mem, gpu, start;
        if ((st = csvin_double(in, &row, K_INST, "inst_num", 0, 1e9, &inst, d)) ||
            (st = opt_number(in, &row, K_CPU, "plan_cpu", &cpu, d)) ||
            (st = opt_number(in, &row, K_MEM, "plan_mem", &mem, d)) ||
            (st = opt_number(in, &row, K_GPU, "plan_gpu", &gpu, d)))
            goto out;
        /* Instances are replicas: a fraction of one, or none beside a GPU request, has no
         * meaning (PAI writes the count as a float, "2.0"). A task without GPUs and
         * without instances adds nothing. */
        if (inst != floor(inst) || (inst < 1 && (inst != 0 || gpu > 0))) {
            st = csvin_field_error(in, &row, K_INST, "inst_num",
                                   "a whole number of instances >= 1 (such as 2 or 2.0; 0 only "
                                   "for a task without GPUs)", d);
            goto out;
        }
        start = NAN;
        if (!csvin_empty(&row, K_START) &&
            (st = csvin_double(in, &row, K_START, "start_time", 0, SIM_TIME_LIMIT_S, &start, d)))
            goto out;
        uint16_t type = SIM_GPU_TYPE_NONE;
        if (gpu > 0 && !csvin_empty(&row, K_TYPE)) {
            uint32_t t = sim_intern_find(r->opt.gpu_types, row.f[K_TYPE], row.len[K_TYPE]);
            if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
                char known[600], what[700];
                sim_intern_list(r->opt.gpu_types, ", ", known, sizeof known);
                snprintf(what, sizeof what, "a known GPU type (%s)", known);
                st = csvin_field_error(in, &row, K_TYPE, "gpu_type", what, d);
                goto out;
            }
            type = (uint16_t)t;
        }
        if ((s->n + 1) * 2 > s->cap && grow(s) != SIM_OK) {
            st = sim_diag_set(d, SIM_ENOMEM, path, row.line, 0, "out of memory");
            goto out;
        }
        task_agg *a = slot(s, row.f[K_JOB], row.len[K_JOB], true);
        /* Bounded as the native reader bounds cpu_milli and mem_mib, in double before
         * they become integers. */
        const double most = (double)(UINT64_C(1) << 40);
        if (a->cpu_milli + inst * cpu * 10 > most) {
            st = csvin_field_error(in, &row, K_CPU, "plan_cpu",
                                   "a request whose inst_num x plan_cpu x 10, summed over the "
                                   "job's tasks, is at most 2^40 milli-CPUs",
                                   d);
            goto out;
        }
        if (a->mem_mib + inst * mem * 1024 > most) {
            st = csvin_field_error(in, &row, K_MEM, "plan_mem",
                                   "a request whose inst_num x plan_mem x 1024, summed over the "
                                   "job's tasks, is at most 2^40 MiB",
                                   d);
            goto out;
        }
        a->cpu_milli += inst * cpu * 10;
        a->mem_mib += inst * mem * 1024;
        if (gpu > 0) {
            if (a->gpu_inst == 0)
                a->gpu_type = type;
            a->gpu_inst += inst;
            if (gpu > a->gpu_pct)
                a->gpu_pct = gpu;
        }
        if (!isnan(start) && (isnan(a->first_start_s) || start < a->first_start_s))
            a->first_start_s = start;
    }
    if (st == 0 && tasks == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "the task table has no task rows: expected job_name,task_name,"
                          "inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,"
                          "gpu_type");
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

static int pai_open(trace_reader *r, sim_diag *d)
{
    pai_state *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    r->state = s;
    /* PAI's times keep the time of day of Asia/Shanghai (UTC+8, per the trace's README):
     * arrivals become seconds since local midnight of the first day, as for Philly. */
    r->rebase_day = true;
    r->tz_offset_us = 8 * 3600 * SIM_US_PER_S;
    const char *tasks = trace__opt(r, "tasks");
    if (!tasks)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "the alibaba2020 format reads pai_job_table.csv joined with the task "
                            "table: give --trace-opt tasks=pai_task_table.csv");
    return load_tasks(r, s, tasks, d);
}

static void pai_close(trace_reader *r)
{
    pai_state *s = r->state;
    if (!s)
        return;
    sim_free(s->t);
    sim_free(s);
    r->state = NULL;
}

enum { J_NAME, J_INST, J_USER, J_STATUS, J_START, J_END, J_N };

static int pai_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    pai_state *s = r->state;
    const csvin *in = r->in;
    if (r->rows == 1 && row->n > 0 && strcmp(row->f[0], "job_name") == 0) {
        r->rows--; /* the header is not a record */
        return 0;
    }
    if (row->n != J_N)
        return sim_diag_set(d, SIM_EPARSE, r->path, row->line,
                            (int)(row->n < J_N ? row->n : J_N) + 1,
                            "expected the %d fields job_name,inst_id,user,status,start_time,"
                            "end_time, got %u",
                            J_N, row->n);
    int st;
    double start, end;
    if ((st = trace__job_id(r, row, J_NAME, "job_name", j, d)) ||
        (st = csvin_double(in, row, J_START, "start_time", 0, SIM_TIME_LIMIT_S, &start, d)))
        return st;
    if (csvin_empty(row, J_END)) {
        r->n_ignored++;
        return 0;
    }
    if ((st = csvin_double(in, row, J_END, "end_time", 0, SIM_TIME_LIMIT_S, &end, d)))
        return st;
    const task_agg *a = slot(s, row->f[J_NAME], row->len[J_NAME], false);
    if (!a) {
        r->n_ignored++;
        return 0;
    }
    double run_from = isnan(a->first_start_s) ? start : a->first_start_s;
    if (end < run_from)
        return csvin_field_error(in, row, J_END, "end_time",
                                 "a time not before the job's first task start_time", d);
    r->submit_col = J_START;
    j->submit_us = (sim_time)llround(start * 1e6);
    j->work_s = end - run_from;
    j->cpu_milli = (uint64_t)llround(a->cpu_milli);
    j->mem_mib = (uint64_t)llround(a->mem_mib);
    if (a->gpu_inst > 0) {
        /* Checked in double: plan_gpu can ask for more GPUs than 32 bits count. */
        double per_d = a->gpu_pct <= 100 ? 1 : ceil(a->gpu_pct / 100);
        double inst = a->gpu_inst; /* a sum of whole instance counts */
        if (inst * per_d > 65536)
            return csvin_field_error(in, row, J_NAME, "job_name",
                                     "a job of at most 65536 GPUs in the task table", d);
        uint32_t per = (uint32_t)per_d;
        j->replicas = (uint32_t)inst;
        j->num_gpus = j->replicas * per;
        long milli = lround(a->gpu_pct * 10 / per);
        j->gpu_milli = (uint32_t)(milli < 1 ? 1 : milli > 1000 ? 1000 : milli);
        j->true_milli = j->gpu_milli;
        j->ref_gpu_type = a->gpu_type;
    }
    if ((st = trace__intern(r, r->opt.tenants, row, J_USER, &j->tenant, d)))
        return st;
    return 1;
}

const trace_format trace_format_alibaba2020 = {
    .name = "alibaba2020",
    .summary = "Alibaba PAI 2020 pai_job_table.csv joined with tasks=pai_task_table.csv",
    .delim = ',',
    .open = pai_open,
    .row = pai_row,
    .close = pai_close,
    .in_memory = true,
    .options = pai_options,
    .empty_expect = "job rows job_name,inst_id,user,status,start_time,end_time",
};
