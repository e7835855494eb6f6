/*
 * cluster.h: cluster descriptions. A cluster comes from a node-list CSV (the native
 * format, which is also the Alibaba openb node list: sn,cpu_milli,memory_mib,gpu,model
 * plus optional columns) or from a compact string such as "4xV100M32:8,16xT4:2"
 * (node count x GPU type : GPUs per node, with optional ":cpu=96000:mem=786432").
 * GPU type names are resolved through the catalog's names; an unknown one is an error
 * that lists the known names.
 */
#ifndef TRACES_CLUSTER_H
#define TRACES_CLUSTER_H

#include "sim/intern.h"
#include "sim/types.h"

/*
 * Load a cluster from `src`: an existing file path (CSV, gzip allowed) or else a
 * compact string. On success *out is a new spec to free with cluster_spec_destroy().
 * Errors: SIM_EIO, SIM_EPARSE, SIM_ENOMEM, with d filled.
 */
int cluster_spec_load(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                      sim_diag *d);

void cluster_spec_destroy(cluster_spec *c);

/* Total GPUs of the cluster. */
uint64_t cluster_spec_gpus(const cluster_spec *c);

#endif
