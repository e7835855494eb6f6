/*
 * refscore.h: the node scores of the FGD study's reference simulator
 * (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin/), reproduced
 * to the integer: each plugin returns an int64 in 0..100 (framework.MaxNodeScore),
 * truncated from floating point where the plugin computes in floating point, and the
 * scheduler takes the highest score, ties to the node whose name sorts first (the
 * simulator's selectHost), where each node's name starts with its index in a random
 * permutation of the nodes drawn once per run (syncClusterResourceList): so a tie goes to
 * the node first in a random order fixed for the run (place_ws_set_random_ties). These
 * are the `score=reference` modes of dotprod, bestfit, gpupacking, gpuclustering and
 * fgd.
 *
 * The reference sees a node as its free CPU and the free share of each GPU in device
 * order (host memory takes no part in any score), and a task as its CPU, GPU count and
 * share per GPU. Resource vectors are normalised by the reference's fixed largest node
 * (REF_MAX_CPU, REF_MAX_GPU: the largest node of the openb node list).
 */
#ifndef POLICIES_REFSCORE_H
#define POLICIES_REFSCORE_H

#include <stdbool.h>
#include <stdint.h>

#define REF_MAX_SCORE 100
#define REF_MAX_CPU 128000.0 /* milli-cores (gpushareutils.MaxSpecCpu) */
#define REF_MAX_GPU 8000.0   /* milli-GPU (gpushareutils.MaxSpecGpu) */

/* A node as the reference sees it: free CPU and the free share of each GPU. */
typedef struct ref_node {
    uint64_t cpu_left; /* milli-cores */
    uint32_t n_gpus;
    const uint32_t *gpu_left; /* milli-GPU, device order */
} ref_node;

/* One task (pod): CPU, GPUs and share per GPU (1000 for whole GPUs; 0 when gpus = 0). */
typedef struct ref_pod {
    uint64_t cpu;
    uint32_t gpus, milli;
} ref_pod;

/* Free share of all the node's GPUs. */
uint64_t ref_gpu_left(const ref_node *n);

/* DotProductScore with dimExtMethod merge and normMethod max (the study's settings):
 * 100 x (1 - <free, request> / 2) truncated, both vectors [CPU / REF_MAX_CPU, GPU share /
 * REF_MAX_GPU]; the request must fit the node's CPU. Higher is better, so a node with
 * less free where the task asks more wins. */
int64_t ref_dotprod_score(const ref_node *n, const ref_pod *p);

/* BestFitScore before normalisation: 100 x (1 - sum of 0.5 x (free - request) / max
 * over CPU and GPU share) truncated; -1 when the request does not fit. */
int64_t ref_bestfit_score(const ref_node *n, const ref_pod *p);

/* GpuPackingScore: 0 for a task without GPU; a node whose GPUs are all idle scores
 * max(33 - idle GPUs, idle GPUs); a task that needs idle GPUs on a used node scores
 * max(50 - idle GPUs it takes, 33); one that fits on partly used GPUs only scores
 * max(100 - sum of their free percentages / 10, 50). GPUs are taken least free first
 * (stable on device order). -1 when the task's GPUs do not fit. */
int64_t ref_gpupacking_score(const ref_node *n, const ref_pod *p);

/* The GPU affinity of a task (GetGpuAffinityFromPodAnnotation) as a bit: bit 0 for a
 * GPU-sharing task (one GPU, share < 1000), bit k for a task of k whole GPUs (k < 64);
 * 0 for a task without GPU. */
uint64_t ref_affinity_bit(uint32_t gpus, uint32_t milli);

/* GpuClusteringScore: for a task with GPU affinity `bit` on a node whose resident
 * tasks have the affinities `mask` (ref_affinity_bit of each): 25 x (8000 - free GPU
 * share) / 8000 in integers, plus 75 when the node holds only the task's affinity, 50
 * when it holds it among others, 25 when it holds none, 0 otherwise; 0 for a task
 * without GPU. */
int64_t ref_gpuclustering_score(uint64_t mask, uint64_t bit, uint64_t gpu_left);

/* FGDScore from the change of the node's fragmentation (after - before, milli-GPU,
 * weighted by the typical tasks' frequencies): 100 x sigmoid(-(after - before) / 1000)
 * truncated. */
int64_t ref_fgd_score(double frag_delta_milli);

/* The framework's NormalizeScore (plugin_utils.go), in place: (s - lowest) x 100 /
 * (highest - lowest) in integers; all 0 when every score is equal. */
void ref_normalize(int64_t *scores, uint32_t n);

/* The reference's typical tasks (utils.GetTypicalPods with the study's settings,
 * popularity threshold 95 %, step 1, CPU-only tasks included): from the target workload
 * `all` (host memory dropped, equal shapes merged), the most popular shapes in
 * decreasing count (ties: the larger CPU, then share, GPUs, type mask first) until they
 * cover 95 % of the tasks. *out gets a new workload of those shapes with their counts
 * (free with frag_workload_destroy). SIM_OK or SIM_ENOMEM. */
struct frag_workload;
int ref_typical_workload(const struct frag_workload *all, uint32_t n_gpu_types,
                         struct frag_workload **out);

#endif
