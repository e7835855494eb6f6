/*
 * features.c: graph, execution and GPU features of the predictors (see features.h).
 * Invariant: the op order here, the sim_attr order of the op columns and the order of
 * model_feature_name() are the same, so a job's attributes map to the vector by index.
 */
#include "models/features.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const op_names[MODEL_OP_COUNT] = {
    "addv2", "conv2d", "maxpool", "relu", "matmul", "avgpool", "mul", "concat", "softmax",
};

/* TensorFlow's spellings of the same ops (matched without regard to case). */
static const char *const op_tf_names[MODEL_OP_COUNT] = {
    "add", "conv2d", "maxpool", "relu", "batchmatmulv2", "avgpool", "mul", "concatv2", "softmax",
};

const char *model_op_name(model_op op)
{
    return op < MODEL_OP_COUNT ? op_names[op] : "";
}

bool model_op_parse(const char *s, size_t len, model_op *out)
{
    for (int k = 0; k < MODEL_OP_COUNT; k++) {
        const char *a = op_names[k], *b = op_tf_names[k];
        if ((strlen(a) == len && strncasecmp(s, a, len) == 0) ||
            (strlen(b) == len && strncasecmp(s, b, len) == 0)) {
            *out = (model_op)k;
            return true;
        }
    }
    return false;
}

const char *model_feature_name(int i)
{
    static const char *const rest[] = {"batch_size",         "iterations", "input_size",
                                       "compute_capability", "gpu_mem_gb", "gpu_cores",
                                       "util_milli"};
    static const char *const op_cols[MODEL_OP_COUNT] = {
        "op_addv2",   "op_conv2d", "op_maxpool", "op_relu",    "op_matmul",
        "op_avgpool", "op_mul",    "op_concat",  "op_softmax",
    };
    if (i >= 0 && i < MODEL_OP_COUNT)
        return op_cols[i];
    if (i >= MODEL_OP_COUNT && i < MODEL_F_COUNT_TIME)
        return rest[i - MODEL_OP_COUNT];
    return "";
}

void model_features_graph(const model_graph_node *nodes, size_t n, double out[MODEL_OP_COUNT])
{
    for (int k = 0; k < MODEL_OP_COUNT; k++)
        out[k] = 0;
    for (size_t i = 0; i < n; i++) {
        double s = nodes[i].input_size;
        if (nodes[i].op < MODEL_OP_COUNT && isfinite(s) && s > out[nodes[i].op])
            out[nodes[i].op] = s;
    }
}

void model_features_job(const job_spec *j, double *out)
{
    for (int k = 0; k < MODEL_OP_COUNT; k++) {
        sim_attr a = (sim_attr)(SIM_ATTR_OP_ADDV2 + k);
        out[MODEL_F_OP0 + k] = job_spec_has(j, a) ? j->attr[a] : 0;
    }
    out[MODEL_F_BATCH] = job_spec_has(j, SIM_ATTR_BATCH_SIZE) ? j->attr[SIM_ATTR_BATCH_SIZE] : 0;
    out[MODEL_F_ITERS] = job_spec_has(j, SIM_ATTR_ITERATIONS) ? j->attr[SIM_ATTR_ITERATIONS] : 0;
    out[MODEL_F_INPUT] = job_spec_has(j, SIM_ATTR_INPUT_SIZE) ? j->attr[SIM_ATTR_INPUT_SIZE] : 0;
}

uint32_t model_gpu_cores(const model_gpu_type *t)
{
    double cc = t->compute_capability;
    uint32_t per_sm;
    if (cc < 5.0)
        per_sm = 192; /* Kepler */
    else if (cc < 6.0)
        per_sm = 128; /* Maxwell */
    else if (cc < 6.05)
        per_sm = 64; /* GP100 */
    else if (cc < 7.0)
        per_sm = 128; /* GP10x */
    else if (cc < 8.05)
        per_sm = 64; /* Volta, Turing, GA100 */
    else
        per_sm = 128; /* GA10x, Ada, Hopper */
    return t->sm_count * per_sm;
}

void model_features_gpu(const model_gpu_type *t, double *out)
{
    out[0] = t->compute_capability;
    out[1] = (double)t->memory_mib / 1024.0;
    out[2] = (double)model_gpu_cores(t);
}
