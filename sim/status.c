/*
 * status.c: status names, diagnostics, and the names of the enums in types.h.
 * Library code fills a sim_diag; only main() prints it.
 */
#include "sim/types.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *sim_strerror(int status)
{
    switch (status) {
    case SIM_OK: return "SIM_OK";
    case SIM_EINVAL: return "SIM_EINVAL";
    case SIM_ENOMEM: return "SIM_ENOMEM";
    case SIM_EIO: return "SIM_EIO";
    case SIM_EPARSE: return "SIM_EPARSE";
    case SIM_ELIMIT: return "SIM_ELIMIT";
    case SIM_EPOLICY: return "SIM_EPOLICY";
    default: return "SIM_E?";
    }
}

int sim_diag_set(sim_diag *d, int status, const char *file, long line, int column,
                 const char *fmt, ...)
{
    if (!d)
        return status;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->column = column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return status;
}

const char *sim_diag_format(const sim_diag *d, char *buf, size_t size)
{
    if (d->file[0] && d->line > 0 && d->column > 0)
        snprintf(buf, size, "%s:%ld:%d: error: %s", d->file, d->line, d->column, d->msg);
    else if (d->file[0] && d->line > 0)
        snprintf(buf, size, "%s:%ld: error: %s", d->file, d->line, d->msg);
    else if (d->file[0])
        snprintf(buf, size, "%s: error: %s", d->file, d->msg);
    else
        snprintf(buf, size, "error: %s", d->msg);
    return buf;
}

static const char *const qos_names[SIM_QOS_COUNT] = {"", "LS", "BE", "Burstable", "Guaranteed"};

const char *sim_qos_name(sim_qos q)
{
    return (unsigned)q < SIM_QOS_COUNT ? qos_names[q] : "";
}

bool sim_qos_parse(const char *s, size_t len, sim_qos *out)
{
    for (int q = 0; q < SIM_QOS_COUNT; q++) {
        if (strlen(qos_names[q]) == len && strncasecmp(s, qos_names[q], len) == 0) {
            *out = (sim_qos)q;
            return true;
        }
    }
    /* Common spellings in traces. */
    if (len == 2 && strncasecmp(s, "bt", 2) == 0) {
        *out = SIM_QOS_BE;
        return true;
    }
    return false;
}

static const char *const attr_names[SIM_ATTR_COUNT] = {
    "batch_size",   "iterations",       "input_size",
    "op_addv2",     "op_conv2d",        "op_maxpool",
    "op_relu",      "op_matmul",        "op_avgpool",
    "op_mul",       "op_concat",        "op_softmax",
    "iter_time_ms", "stage_storage_ms", "stage_cpu_ms",
    "stage_gpu_ms", "stage_net_ms",     "gpu_mem_used_mib",
    "min_replicas", "max_replicas",     "depth",
    "slo_s",        "ps_replicas",      "ps_cpu_milli",
    "ps_mem_mib",   "master_cpu_milli", "master_mem_mib",
};

const char *sim_attr_name(sim_attr a)
{
    return (unsigned)a < SIM_ATTR_COUNT ? attr_names[a] : "";
}
