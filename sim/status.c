/*
 * status.c: the names of the enums in types.h.
 */
#include "sim/types.h"

#include <string.h>
#include <strings.h>

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
    "batch_size",       "iterations",   "input_size",     "op_addv2",
    "op_conv2d",        "op_maxpool",   "op_relu",        "op_matmul",
    "op_avgpool",       "op_mul",       "op_concat",      "op_softmax",
    "iter_time_ms",     "stage_storage_ms", "stage_cpu_ms", "stage_gpu_ms",
    "stage_net_ms",     "gpu_mem_used_mib", "min_replicas", "max_replicas",
    "depth",            "slo_s",
};

const char *sim_attr_name(sim_attr a)
{
    return (unsigned)a < SIM_ATTR_COUNT ? attr_names[a] : "";
}
