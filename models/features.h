/*
 * features.h: the one feature schema shared by traces, training files and the
 * predictors of predicted-demand placement (docs/design.md, Policies 2).
 *
 * A feature vector has MODEL_F_COUNT entries in this order:
 *   graph features (9): for each op type addv2, conv2d, maxpool, relu, matmul, avgpool,
 *     mul, concat, softmax, the largest input size (elements per sample) among the
 *     graph's nodes of that type, 0 when the type is absent;
 *   execution features (3): batch size, iterations, input size (elements per sample);
 *   GPU features (3): compute capability, memory (GB = 2^30 bytes), CUDA cores.
 * The execution-time predictor takes one more input, the (predicted) utilisation.
 * Graph features follow Yeung et al., "Horus: Interference-aware and prediction-based
 * scheduling in deep learning systems", IEEE TPDS 33(1), 2022.
 */
#ifndef MODELS_FEATURES_H
#define MODELS_FEATURES_H

#include "models/catalog.h"
#include "sim/types.h"

/* Op types of the graph features, in schema order. */
typedef enum model_op {
    MODEL_OP_ADDV2 = 0,
    MODEL_OP_CONV2D,
    MODEL_OP_MAXPOOL,
    MODEL_OP_RELU,
    MODEL_OP_MATMUL,
    MODEL_OP_AVGPOOL,
    MODEL_OP_MUL,
    MODEL_OP_CONCAT,
    MODEL_OP_SOFTMAX,
    MODEL_OP_COUNT
} model_op;

/* Indices of the feature vector. */
enum {
    MODEL_F_OP0 = 0,                /* graph features: MODEL_F_OP0 + model_op */
    MODEL_F_BATCH = MODEL_OP_COUNT, /* samples per mini-batch */
    MODEL_F_ITERS,                  /* mini-batches to run */
    MODEL_F_INPUT,                  /* elements of one input sample */
    MODEL_F_GPU_CC,                 /* compute capability, e.g. 7.0 */
    MODEL_F_GPU_MEM_GB,             /* GPU memory, GB (2^30 bytes) */
    MODEL_F_GPU_CORES,              /* CUDA cores */
    MODEL_F_COUNT,                  /* inputs of the utilisation and memory models */
    MODEL_F_UTIL = MODEL_F_COUNT,   /* utilisation, milli-GPU (time model only) */
    MODEL_F_COUNT_TIME              /* inputs of the execution-time model */
};

/* One node of a computation graph: its op type and the size of its largest input
 * (elements per sample). */
typedef struct model_graph_node {
    model_op op;
    double input_size;
} model_graph_node;

/* Lower-case op name ("addv2"). */
const char *model_op_name(model_op op);

/* Parse an op name without regard to ASCII case: the schema names or TensorFlow's
 * ("AddV2" or "Add", "Conv2D", "MaxPool", "Relu", "MatMul" or "BatchMatMulV2",
 * "AvgPool", "Mul", "Concat" or "ConcatV2", "Softmax"). False for any other name. */
bool model_op_parse(const char *s, size_t len, model_op *out);

/* Column name of feature i (0 <= i < MODEL_F_COUNT_TIME): "op_addv2" ... "op_softmax",
 * "batch_size", "iterations", "input_size", "compute_capability", "gpu_mem_gb",
 * "gpu_cores", "util_milli". The op and execution names equal the trace columns. */
const char *model_feature_name(int i);

/* Graph features of a list of nodes: out[op] = the largest input_size among the nodes
 * of that op type, 0 when none. Negative or non-finite sizes count as 0. O(n). */
void model_features_graph(const model_graph_node *nodes, size_t n, double out[MODEL_OP_COUNT]);

/* Graph and execution features of a job from its trace attributes (absent ones are 0)
 * into out[0 .. MODEL_F_GPU_CC). */
void model_features_job(const job_spec *j, double *out);

/* CUDA cores of a GPU type: SMs x cores per SM of its architecture (from the compute
 * capability: 192 for 3.x, 128 for 5.x, 64 for 6.0, 128 for 6.1/6.2, 64 for 7.x and
 * 8.0, 128 for 8.6, 8.7, 8.9 and 9.x). */
uint32_t model_gpu_cores(const model_gpu_type *t);

/* GPU features of a type into out[0..3): compute capability, memory in GB, cores. */
void model_features_gpu(const model_gpu_type *t, double *out);

#endif
