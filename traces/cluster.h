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

#include "base/intern.h"
#include "sim/types.h"

/*
 * Load a cluster from `src`: an existing file path (CSV, gzip allowed) or else a
 * compact string. On success *out is a new spec to free with cluster_spec_destroy().
 * Errors: SIM_EIO, SIM_EPARSE, SIM_ENOMEM, with d filled.
 *
 * A file's layout is detected from its first line:
 *  - a header naming sn (or name), cpu_milli, ...: the node list above;
 *  - num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node (Tiresias
 *    and Muri specs; memory in GB, CPUs in cores): num_switch x num_node_p_switch
 *    identical nodes named s<switch>-n<node>, of GPU type `default_gpu_type`;
 *  - machine,gpu_type,cap_cpu,cap_mem,cap_gpu, or the same five fields without a header
 *    (Alibaba PAI pai_machine_spec.csv; cores, GB; gpu_type CPU = no GPU).
 */
int cluster_spec_load(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                      sim_diag *d);

/* The same with the GPU type given to specs that name none (NULL = "V100M16"). */
int cluster_spec_load_typed(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                            const char *default_gpu_type, sim_diag *d);

/* The same, also writing to ignored[0..size) the header columns of a node-list CSV that
 * are none of its columns or their other names, comma-separated ("" when none), for a
 * warning: such a column is most likely a misspelt optional one (gpu_mem_mib, count). */
int cluster_spec_load_ignoring(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                               const char *default_gpu_type, char *ignored, size_t size,
                               sim_diag *d);

void cluster_spec_destroy(cluster_spec *c);

/* Total GPUs of the cluster. */
uint64_t cluster_spec_gpus(const cluster_spec *c);

#endif
