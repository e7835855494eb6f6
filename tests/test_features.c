/*
 * test_features.c: the feature schema of the demand predictors. The worked examples of
 * docs/design.md (Policies 2): ops addv2 2000, conv2d 4800, maxpool 3200, matmul 4200,
 * softmax 100 give the vector (2000, 4800, 3200, 0, 4200, 0, 0, 0, 100); three conv2d
 * of 2400, 2800, 4800 give conv2d = 4800. Also op-name parsing, column names, job
 * attributes, and GPU features from the catalog.
 */
#include "models/catalog.h"
#include "models/features.h"

#include "check.h"

#include <string.h>

static void worked_examples(void)
{
    model_graph_node g1[] = {
        {MODEL_OP_ADDV2, 2000},  {MODEL_OP_CONV2D, 4800}, {MODEL_OP_MAXPOOL, 3200},
        {MODEL_OP_MATMUL, 4200}, {MODEL_OP_SOFTMAX, 100},
    };
    double f[MODEL_OP_COUNT];
    model_features_graph(g1, 5, f);
    const double want[MODEL_OP_COUNT] = {2000, 4800, 3200, 0, 4200, 0, 0, 0, 100};
    for (int k = 0; k < MODEL_OP_COUNT; k++)
        CHECK(f[k] == want[k]);

    model_graph_node g2[] = {
        {MODEL_OP_CONV2D, 2400}, {MODEL_OP_CONV2D, 2800}, {MODEL_OP_CONV2D, 4800}};
    model_features_graph(g2, 3, f);
    CHECK(f[MODEL_OP_CONV2D] == 4800);
    for (int k = 0; k < MODEL_OP_COUNT; k++)
        if (k != MODEL_OP_CONV2D)
            CHECK(f[k] == 0);
    /* Order does not matter; the largest of a repeated op counts. */
    model_graph_node g3[] = {{MODEL_OP_CONV2D, 4800},
                             {MODEL_OP_CONV2D, 2400},
                             {MODEL_OP_RELU, 17.5},
                             {MODEL_OP_CONV2D, 2800}};
    model_features_graph(g3, 4, f);
    CHECK(f[MODEL_OP_CONV2D] == 4800);
    CHECK(f[MODEL_OP_RELU] == 17.5);
    model_features_graph(NULL, 0, f);
    for (int k = 0; k < MODEL_OP_COUNT; k++)
        CHECK(f[k] == 0);
}

static void names(void)
{
    model_op op;
    CHECK(model_op_parse("AddV2", 5, &op) && op == MODEL_OP_ADDV2);
    CHECK(model_op_parse("Conv2D", 6, &op) && op == MODEL_OP_CONV2D);
    CHECK(model_op_parse("ConcatV2", 8, &op) && op == MODEL_OP_CONCAT);
    CHECK(model_op_parse("softmax", 7, &op) && op == MODEL_OP_SOFTMAX);
    CHECK(model_op_parse("BatchMatMulV2", 13, &op) && op == MODEL_OP_MATMUL);
    CHECK(!model_op_parse("Sigmoid", 7, &op));
    CHECK(!model_op_parse("Conv", 4, &op));
    CHECK_STR(model_op_name(MODEL_OP_AVGPOOL), "avgpool");
    /* Column names: the op and execution columns are the trace's attribute names. */
    for (int k = 0; k < MODEL_OP_COUNT; k++)
        CHECK_STR(model_feature_name(MODEL_F_OP0 + k),
                  sim_attr_name((sim_attr)(SIM_ATTR_OP_ADDV2 + k)));
    CHECK_STR(model_feature_name(MODEL_F_BATCH), sim_attr_name(SIM_ATTR_BATCH_SIZE));
    CHECK_STR(model_feature_name(MODEL_F_ITERS), sim_attr_name(SIM_ATTR_ITERATIONS));
    CHECK_STR(model_feature_name(MODEL_F_INPUT), sim_attr_name(SIM_ATTR_INPUT_SIZE));
    CHECK_STR(model_feature_name(MODEL_F_GPU_CORES), "gpu_cores");
    CHECK_STR(model_feature_name(MODEL_F_UTIL), "util_milli");
    CHECK_STR(model_feature_name(MODEL_F_COUNT_TIME), "");
}

static void job_and_gpu(void)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    j.attr[SIM_ATTR_OP_CONV2D] = 4800;
    j.attr[SIM_ATTR_OP_SOFTMAX] = 100;
    j.attr[SIM_ATTR_BATCH_SIZE] = 64;
    j.attr[SIM_ATTR_INPUT_SIZE] = 150528;
    j.attr[SIM_ATTR_ITERATIONS] = 777; /* not marked present: reads as 0 */
    j.attr_present = (UINT64_C(1) << SIM_ATTR_OP_CONV2D) | (UINT64_C(1) << SIM_ATTR_OP_SOFTMAX) |
                     (UINT64_C(1) << SIM_ATTR_BATCH_SIZE) | (UINT64_C(1) << SIM_ATTR_INPUT_SIZE);
    double x[MODEL_F_GPU_CC];
    model_features_job(&j, x);
    CHECK(x[MODEL_F_OP0 + MODEL_OP_CONV2D] == 4800);
    CHECK(x[MODEL_F_OP0 + MODEL_OP_SOFTMAX] == 100);
    CHECK(x[MODEL_F_OP0 + MODEL_OP_ADDV2] == 0);
    CHECK(x[MODEL_F_BATCH] == 64);
    CHECK(x[MODEL_F_ITERS] == 0);
    CHECK(x[MODEL_F_INPUT] == 150528);

    model_catalog *cat;
    sim_diag d = {0};
    CHECK(model_catalog_load(&cat, SIM_SOURCE_DIR "/models/data/gpus.csv", &d) == SIM_OK);
    const sim_intern *nm = model_catalog_names(cat);
    static const struct {
        const char *name;
        double cc, mem_gb, cores;
    } want[] = {
        {"V100M32", 7.0, 32, 5120}, {"T4", 7.5, 16, 2560},        {"A100", 8.0, 40, 6912},
        {"K80", 3.7, 12, 2496},     {"A10", 8.6, 24, 9216},       {"H100", 9.0, 80, 16896},
        {"P100", 6.0, 16, 3584},    {"RTX2080TI", 7.5, 11, 4352},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint32_t t = sim_intern_find(nm, want[i].name, strlen(want[i].name));
        CHECK(t != SIM_INTERN_NONE);
        if (t == SIM_INTERN_NONE)
            continue;
        double g[3];
        model_features_gpu(model_catalog_type(cat, (uint16_t)t), g);
        CHECK(g[0] == want[i].cc);
        CHECK(g[1] == want[i].mem_gb);
        CHECK(g[2] == want[i].cores);
    }
    model_catalog_destroy(cat);
}

int main(void)
{
    worked_examples();
    names();
    job_and_gpu();
    return check_done();
}
