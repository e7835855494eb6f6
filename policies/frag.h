/*
 * frag.h: GPU fragmentation with respect to a target workload, after Weng et al., "Beware
 * of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent",
 * USENIX ATC 2023, §3 (https://www.usenix.org/conference/atc23/presentation/weng).
 *
 * The target workload M is a set of task shapes (one replica's CPU, memory, GPU count,
 * share per GPU and allowed GPU types) with their popularity (how many tasks of the
 * trace have that shape). The fragmentation of a node for one shape is the free GPU
 * capacity on it that such a task could not use: all of it when the task does not fit
 * the node (CPU, memory, GPU type, GPU count or share; a CPU-only task uses no GPU),
 * otherwise the free share of every GPU with less free share than the task needs per
 * GPU (for a whole-GPU task: every partially allocated GPU). A node's fragmentation for
 * M is the popularity-weighted mean over shapes; the cluster's is the sum over its up
 * nodes. Weighted sums are exact integers, so every comparison is deterministic.
 */
#ifndef POLICIES_FRAG_H
#define POLICIES_FRAG_H

#include "sim/types.h"
#include "sim/view.h"

/* One replica of a task, as the measure sees it. GPU memory requests are not part of
 * the shape (the openb traces carry none). */
typedef struct frag_shape {
    uint64_t cpu_milli; /* CPU of one replica, milli-cores */
    uint64_t mem_mib;   /* host memory of one replica, MiB */
    uint32_t gpus;      /* GPUs of one replica (0 = a CPU-only task) */
    uint32_t milli;     /* share of each of them, milli-GPU 1..1000 (0 when gpus = 0) */
    uint64_t type_mask; /* allowed GPU types, bit t for type id t; 0 = any */
} frag_shape;

/* The shape of one replica of a job split into `replicas` replicas (CPU and memory
 * rounded up, as the engine splits them). replicas must divide spec->num_gpus. */
void frag_shape_of_job(const job_spec *spec, uint32_t replicas, frag_shape *out);

/* The replica count the engine resolves for spec on a cluster whose largest node with
 * an allowed GPU type has max_gpus GPUs: spec->replicas when given, else the fewest
 * equal replicas of at most max_gpus GPUs (1 when max_gpus is 0 or nothing divides). */
uint32_t frag_replicas_of_job(const job_spec *spec, uint32_t max_gpus);

/* ---- The target workload --------------------------------------------------------- */

typedef struct frag_workload frag_workload;

/* An empty workload for a catalog with n_gpu_types type ids (1..n_gpu_types-1).
 * Returns SIM_OK, SIM_EINVAL (n_gpu_types > SIM_MAX_GPU_TYPES) or SIM_ENOMEM. */
int frag_workload_create(frag_workload **out, uint32_t n_gpu_types);
void frag_workload_destroy(frag_workload *w);

/* Count `count` more tasks of shape s (equal shapes merge). Allocates only when a new
 * shape exceeds the current capacity (geometric growth). Every call changes the
 * version. O(types x shapes) for a new shape, O(1) expected otherwise. Returns SIM_OK,
 * SIM_EINVAL (milli out of 1..1000 for a GPU shape) or SIM_ENOMEM. */
int frag_workload_add(frag_workload *w, const frag_shape *s, uint64_t count);

/* Number of distinct shapes; total number of tasks counted. */
uint32_t frag_workload_shapes(const frag_workload *w);
uint64_t frag_workload_total(const frag_workload *w);
/* Shape i (0 <= i < shapes, in first-added order) and its count. */
void frag_workload_get(const frag_workload *w, uint32_t i, frag_shape *s, uint64_t *count);
/* Changes whenever the workload does: results computed for another version are stale. */
uint64_t frag_workload_version(const frag_workload *w);

/* ---- Building the workload from jobs ------------------------------------------------ */

/* Counts jobs into a workload as they are read, each job's replica shape resolved as the
 * engine's admission resolves it on cluster cl (the largest node with an allowed GPU
 * type and enough GPU memory bounds a replica). Built incrementally: the run feeds it
 * every job it reads, or a first pass over the trace does. */
#define FRAG_BUILDER_CACHE 64
typedef struct frag_builder {
    frag_workload *wl;        /* borrowed */
    const cluster_spec *cl;   /* borrowed */
    const uint64_t *type_mem; /* memory per GPU type id, MiB (borrowed; NULL = unknown) */
    bool cache_used[FRAG_BUILDER_CACHE]; /* largest eligible node per (types, GPU memory) */
    uint64_t cache_mask[FRAG_BUILDER_CACHE], cache_gmem[FRAG_BUILDER_CACHE];
    uint32_t cache_gpus[FRAG_BUILDER_CACHE];
} frag_builder;

void frag_builder_init(frag_builder *b, frag_workload *wl, const cluster_spec *cl,
                       const uint64_t *type_mem);
/* Count one job's replica shape. SIM_OK, SIM_ENOMEM or SIM_ELIMIT (d names the job). */
int frag_builder_add_job(frag_builder *b, const job_spec *j, sim_diag *d);
/* ---- Node and cluster fragmentation ---------------------------------------------- */

/* A node's free resources. gpu_free must be sorted in non-decreasing order. */
typedef struct frag_node {
    uint16_t gpu_type;        /* the node's GPU type (SIM_GPU_TYPE_NONE: no GPU) */
    uint32_t n_gpus;          /* GPUs on the node */
    uint64_t cpu_free;        /* free CPU, milli-cores */
    uint64_t mem_free;        /* free host memory, MiB */
    const uint32_t *gpu_free; /* free share of each GPU, milli-GPU, sorted ascending */
} frag_node;

/*
 * The node's fragmentation for M as an exact weighted sum: sum over shapes of
 * count x (fragmented milli-GPU for that shape). Divide by total x 1000 for GPUs
 * (frag_workload_total). O(shapes allowed on the node's type + GPUs); no allocation.
 */
uint64_t frag_node_weighted(const frag_workload *w, const frag_node *n);

/* Sort a[0..n) ascending (insertion sort: nodes have few GPUs). */
void frag_sort_free(uint32_t *a, uint32_t n);

/* Fill *out with node n of the view (buf receives its free shares, sorted; it must
 * hold node_gpu_count[n] entries). */
void frag_node_from_view(const sim_view *v, uint32_t n, uint32_t *buf, frag_node *out);

/*
 * A meter of the cluster's fragmentation in a view. It keeps the state of every node as
 * last counted and the cluster's fragmentation as per-shape sums over the nodes, and
 * re-counts only the nodes whose state (CPU, memory, any GPU's share, up/down) changed:
 * those logged in the view's change log since the last measure when the view has one
 * and it is the log seen last time, else every node whose state differs. A workload
 * whose counts changed costs O(shapes); a new shape is counted over every node once.
 */
typedef struct frag_meter frag_meter;

/* A meter for a cluster of n_nodes nodes and n_gpus GPUs, measuring against w (borrowed:
 * it must outlive the meter). SIM_OK or SIM_ENOMEM. */
int frag_meter_create(frag_meter **out, const frag_workload *w, uint32_t n_nodes,
                      uint32_t n_gpus);
void frag_meter_destroy(frag_meter *m);

/*
 * Measure the view: *frag_gpus = the cluster's fragmentation in GPUs (sum over up
 * nodes), *idle_gpus = free GPU capacity of the up nodes in GPUs. Fragmentation is 0
 * when the workload is empty. O(shapes) plus O(shapes + GPUs) per changed node with
 * the change log (O(nodes + GPUs) more without it), plus O(nodes x shapes) for new
 * shapes. Allocates only when the workload has more shapes than ever before
 * (geometric growth; if that fails, every node is measured from then on).
 */
void frag_meter_measure(frag_meter *m, const sim_view *v, double *frag_gpus,
                        double *idle_gpus);

/* The next measure reads a view of another engine (whose change log may sit at the
 * address of a destroyed one's): compare every node instead of reading the log once. */
void frag_meter_forget(frag_meter *m);

#endif
