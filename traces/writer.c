/*
 * writer.c: native CSV output through zlib's gz* functions (level 6 for .gz, plain
 * "wT" mode otherwise). Every optional column is written; empty fields mean "absent".
 */
#include "traces/writer.h"

#include "base/alloc.h"
#include "base/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct trace_writer {
    gzFile gz;
    sim_outfile out;
    const sim_intern *tenants, *models, *gpu_types;
    uint64_t attrs; /* attribute columns written */
    bool header_done;
    int failed; /* errno of the first failed write, 0 = none */
};

int trace_writer_open(trace_writer **out, const char *path, const sim_intern *tenants,
                      const sim_intern *models, const sim_intern *gpu_types, sim_diag *d)
{
    *out = NULL;
    trace_writer *w = sim_calloc(1, sizeof *w);
    if (!w)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    int st = sim_outfile_open(&w->out, path, d);
    if (st != SIM_OK) {
        sim_free(w);
        return st;
    }
    size_t len = strlen(path);
    bool gz = len > 3 && strcmp(path + len - 3, ".gz") == 0;
    int fd = sim_outfile_take_fd(&w->out);
    w->gz = gzdopen(fd, gz ? "wb6" : "wT");
    if (!w->gz) {
        close(fd);
        sim_outfile_close(&w->out, false, 0, NULL);
        sim_free(w);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    gzbuffer(w->gz, 1 << 16);
    w->tenants = tenants;
    w->models = models;
    w->gpu_types = gpu_types;
    w->attrs = ~UINT64_C(0);
    *out = w;
    return SIM_OK;
}

void trace_writer_limit_attrs(trace_writer *w, uint64_t attrs)
{
    w->attrs = attrs;
}

/* The header names the attribute columns of the mask; it is written with the first job
 * (or at close), once the mask is final. */
static void put_header(trace_writer *w)
{
    w->header_done = true;
    gzprintf(w->gz, "job_id,submit_time,duration,num_gpus,gpu_milli,true_milli,replicas,"
                    "gpu_type,gpu_mem_mib,cpu_milli,mem_mib,tenant,qos,priority,model,name,"
                    "command");
    for (int a = 0; a < SIM_ATTR_COUNT; a++)
        if ((w->attrs >> a) & 1u)
            gzprintf(w->gz, ",%s", sim_attr_name((sim_attr)a));
    gzputs(w->gz, ",ref_gpu_type\n");
}

static void put_text(gzFile gz, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        gzputs(gz, s);
        return;
    }
    gzputc(gz, '"');
    for (; *s; s++) {
        if (*s == '"')
            gzputc(gz, '"');
        gzputc(gz, *s);
    }
    gzputc(gz, '"');
}

int trace_writer_put(trace_writer *w, const job_spec *j)
{
    gzFile gz = w->gz;
    if (!w->header_done)
        put_header(w);
    put_text(gz, j->id);
    gzprintf(gz, ",%lld.%06lld,%.6f,%u,%u,", (long long)(j->submit_us / SIM_US_PER_S),
             (long long)(j->submit_us % SIM_US_PER_S), j->work_s, j->num_gpus, j->gpu_milli);
    if (j->num_gpus)
        gzprintf(gz, "%u", j->true_milli);
    gzputc(gz, ',');
    if (j->replicas)
        gzprintf(gz, "%u", j->replicas);
    gzputc(gz, ',');
    bool first = true;
    for (uint16_t t = 1; t < SIM_MAX_GPU_TYPES; t++) {
        if (!((j->gpu_type_mask >> t) & 1u))
            continue;
        if (!first)
            gzputc(gz, '|');
        gzputs(gz, sim_intern_name(w->gpu_types, t));
        first = false;
    }
    gzprintf(gz, ",%llu,%llu,%llu,", (unsigned long long)j->gpu_mem_mib,
             (unsigned long long)j->cpu_milli, (unsigned long long)j->mem_mib);
    put_text(gz, sim_intern_name(w->tenants, j->tenant));
    gzprintf(gz, ",%s,%d,", sim_qos_name(j->qos), j->priority);
    put_text(gz, sim_intern_name(w->models, j->model));
    gzputc(gz, ',');
    put_text(gz, j->name ? j->name : "");
    gzputc(gz, ',');
    put_text(gz, j->command ? j->command : "");
    for (int a = 0; a < SIM_ATTR_COUNT; a++) {
        if (!((w->attrs >> a) & 1u))
            continue;
        gzputc(gz, ',');
        if (job_spec_has(j, (sim_attr)a))
            gzprintf(gz, "%.9g", j->attr[a]);
    }
    gzputc(gz, ',');
    if (j->ref_gpu_type != SIM_GPU_TYPE_NONE)
        gzputs(gz, sim_intern_name(w->gpu_types, j->ref_gpu_type));
    if (gzputc(gz, '\n') < 0 && !w->failed)
        w->failed = errno ? errno : EIO;
    return w->failed ? SIM_EIO : SIM_OK;
}

int trace_writer_close(trace_writer *w, bool commit, sim_diag *d)
{
    if (!w)
        return SIM_OK;
    if (commit && !w->header_done)
        put_header(w);
    errno = 0;
    int zst = gzclose(w->gz);
    int err = w->failed;
    if (!err && zst != Z_OK)
        err = zst == Z_ERRNO && errno ? errno : EIO;
    int st = sim_outfile_close(&w->out, commit, err, d);
    sim_free(w);
    return st;
}
