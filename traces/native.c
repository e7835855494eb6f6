/*
 * native.c: clustersim's own trace format. A CSV with a header, columns in any order;
 * required: job_id, submit_time (s), duration (s), num_gpus (GPUs in total); everything
 * else optional (README "Native trace format" lists every column and its unit). Unknown
 * columns are ignored and reported once as a warning by the CLI.
 */
#include "traces/trace_int.h"

#include <string.h>

enum {
    N_ID, N_SUBMIT, N_DURATION, N_GPUS, N_MILLI, N_TENANT, N_QOS, N_PRIORITY, N_GPU_TYPE,
    N_GPU_MEM, N_CPU, N_MEM, N_REPLICAS, N_MODEL, N_NAME, N_COMMAND, N_TRUE_MILLI, N_REF_TYPE,
    N_ATTR0 /* then one column per sim_attr */
};
#define N_COLS (N_ATTR0 + SIM_ATTR_COUNT)

static const char *col_names[N_COLS];
static bool col_required[N_COLS];

static const char expected[] =
    "job_id,submit_time,duration,num_gpus (optional: gpu_milli,tenant,qos,priority,gpu_type,"
    "gpu_mem_mib,cpu_milli,mem_mib,replicas,model,name,command,true_milli,ref_gpu_type,"
    "batch_size,iterations,...)";

static void init_names(void)
{
    static const char *const base[N_ATTR0] = {
        "job_id",  "submit_time", "duration", "num_gpus", "gpu_milli",  "tenant",
        "qos",     "priority",    "gpu_type", "gpu_mem_mib", "cpu_milli", "mem_mib",
        "replicas", "model",      "name",     "command",  "true_milli", "ref_gpu_type"};
    for (int i = 0; i < N_ATTR0; i++)
        col_names[i] = base[i];
    for (int a = 0; a < SIM_ATTR_COUNT; a++)
        col_names[N_ATTR0 + a] = sim_attr_name((sim_attr)a);
    col_required[N_ID] = col_required[N_SUBMIT] = col_required[N_DURATION] =
        col_required[N_GPUS] = true;
}

static int native_open(trace_reader *r, sim_diag *d)
{
    if (!col_names[0])
        init_names();
    return trace__map_header(r, col_names, col_required, N_COLS, expected, d);
}

static int native_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    uint64_t u;
    r->submit_col = c[N_SUBMIT];
    if ((st = trace__job_id(r, row, c[N_ID], "job_id", j, d)) ||
        (st = csvin_seconds(in, row, c[N_SUBMIT], "submit_time", 0, SIM_TIME_LIMIT_S, &j->submit_us, d)) ||
        (st = csvin_double(in, row, c[N_DURATION], "duration", 0, SIM_TIME_LIMIT_S, &j->work_s, d)) ||
        (st = csvin_u64(in, row, c[N_GPUS], "num_gpus", 0, 65536, &u, d)))
        return st;
    j->num_gpus = (uint32_t)u;
    j->gpu_milli = j->num_gpus ? SIM_MILLI_GPU : 0;
    if (!csvin_empty(row, c[N_MILLI])) {
        if (j->num_gpus) {
            if ((st = csvin_u64(in, row, c[N_MILLI], "gpu_milli", 1, 1000, &u, d)))
                return st;
        } else if ((st = csvin_u64(in, row, c[N_MILLI], "gpu_milli", 0, 0, &u, d))) {
            return st;
        }
        j->gpu_milli = (uint32_t)u;
    }
    j->true_milli = j->gpu_milli;
    if (!csvin_empty(row, c[N_TRUE_MILLI])) {
        /* A CPU-only job has no GPU demand: 0, as trace_writer_put() writes it. */
        if ((st = csvin_u64(in, row, c[N_TRUE_MILLI], "true_milli", j->num_gpus ? 1 : 0,
                            j->num_gpus ? 1000 : 0, &u, d)))
            return st;
        j->true_milli = (uint32_t)u;
    }
    if ((st = trace__intern(r, r->opt.tenants, row, c[N_TENANT], &j->tenant, d)) ||
        (st = trace__intern(r, r->opt.models, row, c[N_MODEL], &j->model, d)))
        return st;
    if (!csvin_empty(row, c[N_QOS]) &&
        !sim_qos_parse(row->f[c[N_QOS]], row->len[c[N_QOS]], &j->qos))
        return csvin_field_error(in, row, c[N_QOS], "qos", "LS, BE, Burstable or Guaranteed", d);
    if (!csvin_empty(row, c[N_PRIORITY])) {
        int64_t p;
        if ((st = csvin_i64(in, row, c[N_PRIORITY], "priority", -1000000, 1000000, &p, d)))
            return st;
        j->priority = (int32_t)p;
    }
    if ((st = trace__gpu_mask(r, row, c[N_GPU_TYPE], "gpu_type", &j->gpu_type_mask, d)))
        return st;
    if (!csvin_empty(row, c[N_REF_TYPE])) {
        uint64_t m;
        if ((st = trace__gpu_mask(r, row, c[N_REF_TYPE], "ref_gpu_type", &m, d)))
            return st;
        if (m & (m - 1))
            return csvin_field_error(in, row, c[N_REF_TYPE], "ref_gpu_type", "one GPU type", d);
        for (uint16_t t = 1; t < SIM_MAX_GPU_TYPES; t++)
            if ((m >> t) & 1u)
                j->ref_gpu_type = t;
    }
    if ((!csvin_empty(row, c[N_GPU_MEM]) &&
         (st = csvin_u64(in, row, c[N_GPU_MEM], "gpu_mem_mib", 0, UINT64_C(1) << 40,
                         &j->gpu_mem_mib, d))) ||
        (!csvin_empty(row, c[N_CPU]) &&
         (st = csvin_u64(in, row, c[N_CPU], "cpu_milli", 0, UINT64_C(1) << 40, &j->cpu_milli,
                         d))) ||
        (!csvin_empty(row, c[N_MEM]) &&
         (st = csvin_u64(in, row, c[N_MEM], "mem_mib", 0, UINT64_C(1) << 40, &j->mem_mib, d))))
        return st;
    if (!csvin_empty(row, c[N_REPLICAS])) {
        if ((st = csvin_u64(in, row, c[N_REPLICAS], "replicas", 1, 65536, &u, d)))
            return st;
        if (j->num_gpus && j->num_gpus % u)
            return csvin_field_error(in, row, c[N_REPLICAS], "replicas",
                                     "a divisor of num_gpus", d);
        j->replicas = (uint32_t)u;
    }
    for (int a = 0; a < SIM_ATTR_COUNT; a++) {
        int32_t col = c[N_ATTR0 + a];
        if (csvin_empty(row, col))
            continue;
        if (a == SIM_ATTR_MIN_REPLICAS || a == SIM_ATTR_MAX_REPLICAS) {
            /* Replica bounds are counts, and max is not below min. */
            uint64_t lo = a == SIM_ATTR_MAX_REPLICAS && job_spec_has(j, SIM_ATTR_MIN_REPLICAS)
                              ? (uint64_t)j->attr[SIM_ATTR_MIN_REPLICAS]
                              : 1;
            if ((st = csvin_u64(in, row, col, sim_attr_name((sim_attr)a), lo, 65536, &u, d)))
                return st;
            j->attr[a] = (double)u;
        } else if ((st = csvin_double(in, row, col, sim_attr_name((sim_attr)a), 0, 1e15,
                                      &j->attr[a], d))) {
            return st;
        }
        j->attr_present |= UINT64_C(1) << a;
    }
    /* Stage times given, but all zero: a profile of no iteration at all. */
    {
        static const sim_attr stages[] = {SIM_ATTR_STAGE_STORAGE_MS, SIM_ATTR_STAGE_CPU_MS,
                                          SIM_ATTR_STAGE_GPU_MS, SIM_ATTR_STAGE_NET_MS};
        bool given = false, nonzero = false;
        int32_t first = -1;
        const char *fname = "";
        for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
            if (job_spec_has(j, stages[i])) {
                if (!given) {
                    first = c[N_ATTR0 + stages[i]];
                    fname = sim_attr_name(stages[i]);
                }
                given = true;
                nonzero = nonzero || j->attr[stages[i]] > 0;
            }
        if (given && !nonzero)
            return csvin_field_error(in, row, first, fname,
                                     "a stage profile with some time (the stage_*_ms columns "
                                     "given are all 0)",
                                     d);
    }
    if (c[N_NAME] >= 0 && (uint32_t)c[N_NAME] < row->n)
        j->name = row->f[c[N_NAME]];
    if (c[N_COMMAND] >= 0 && (uint32_t)c[N_COMMAND] < row->n)
        j->command = row->f[c[N_COMMAND]];
    return 1;
}

const trace_format trace_format_native = {
    .name = "native",
    .summary = "clustersim CSV: job_id,submit_time,duration,num_gpus[,gpu_milli,...]",
    .delim = ',',
    .open = native_open,
    .row = native_row,
};
