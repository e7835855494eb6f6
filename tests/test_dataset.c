/*
 * test_dataset.c: the training-data CSV. Written rows read back equal (to the printed
 * precision), gzip-compressed files read the same, and each bad input gives its exact
 * diagnostic (file:line:column, field, what was expected, the value found).
 */
#include "models/dataset.h"

#include "check.h"

#include <string.h>
#include <zlib.h>

static void roundtrip(void)
{
    model_sample a;
    memset(&a, 0, sizeof a);
    for (int k = 0; k < MODEL_F_COUNT; k++)
        a.x[k] = 1000.0 * k + 2.385;
    a.x[MODEL_F_GPU_CC] = 7.5;
    a.util_milli = 612;
    a.mem_mib = 2385;
    a.time_s = 123.25;
    a.synthetic = true;
    snprintf(a.model, sizeof a.model, "resnet50");
    snprintf(a.gpu_type, sizeof a.gpu_type, "T4");
    model_sample b = a;
    b.synthetic = false;
    snprintf(b.model, sizeof b.model, "convstack");
    FILE *f = fopen("ds_roundtrip.csv", "w");
    CHECK(model_dataset_write_header(f) == SIM_OK);
    CHECK(model_dataset_write_row(f, &a) == SIM_OK);
    CHECK(model_dataset_write_row(f, &b) == SIM_OK);
    fclose(f);
    model_dataset ds;
    sim_diag d = {0};
    CHECK(model_dataset_load(&ds, "ds_roundtrip.csv", &d) == SIM_OK);
    CHECK(ds.n == 2);
    CHECK(ds.n_synthetic == 1);
    if (ds.n == 2) {
        for (int k = 0; k < MODEL_F_COUNT; k++)
            CHECK_NEAR(ds.rows[0].x[k], a.x[k], 1e-9);
        CHECK(ds.rows[0].util_milli == 612 && ds.rows[0].mem_mib == 2385 &&
              ds.rows[0].time_s == 123.25);
        CHECK_STR(ds.rows[0].model, "resnet50");
        CHECK_STR(ds.rows[1].model, "convstack");
        CHECK_STR(ds.rows[1].gpu_type, "T4");
        CHECK(ds.rows[0].synthetic && !ds.rows[1].synthetic);
    }
    /* The same file through gzip. */
    size_t len = 0;
    char *text = check_slurp("ds_roundtrip.csv", &len);
    gzFile gz = gzopen("ds_roundtrip.csv.gz", "wb");
    gzwrite(gz, text, (unsigned)len);
    gzclose(gz);
    free(text);
    model_dataset dz;
    CHECK(model_dataset_load(&dz, "ds_roundtrip.csv.gz", &d) == SIM_OK);
    CHECK(dz.n == 2 && memcmp(dz.rows, ds.rows, 2 * sizeof *ds.rows) == 0);
    model_dataset_free(&dz);
    model_dataset_free(&ds);
}

static void expect_error(const char *name, const char *text, const char *want)
{
    check_put(name, text);
    model_dataset ds;
    sim_diag d = {0};
    CHECK(model_dataset_load(&ds, name, &d) == SIM_EPARSE);
    CHECK(ds.n == 0 && ds.rows == NULL);
    char buf[2048];
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), want);
}

#define HDR                                                                                        \
    "source,model,gpu_type,op_addv2,op_conv2d,op_maxpool,op_relu,op_matmul,op_avgpool,op_mul,"     \
    "op_concat,op_softmax,batch_size,iterations,input_size,compute_capability,gpu_mem_gb,"         \
    "gpu_cores,util_milli,mem_mib,time_s\n"
#define GOOD "synthetic,bert,T4,1,2,3,4,5,6,7,8,9,32,1000,128,7.5,16,2560,500,3000,60\n"

static void bad_inputs(void)
{
    expect_error("ds_bad_source.csv",
                 HDR GOOD
                 "simulated,bert,T4,1,2,3,4,5,6,7,8,9,32,1000,128,7.5,16,2560,500,3000,60\n",
                 "ds_bad_source.csv:3:1: error: field 'source': expected synthetic or measured, "
                 "got \"simulated\"");
    expect_error("ds_bad_util.csv",
                 HDR "measured,bert,T4,1,2,3,4,5,6,7,8,9,32,1000,128,7.5,16,2560,1200,3000,60\n",
                 "ds_bad_util.csv:2:19: error: field 'util_milli': expected a number in [0, "
                 "1000], got \"1200\"");
    expect_error("ds_bad_batch.csv",
                 HDR GOOD GOOD
                 "synthetic,bert,T4,1,2,3,4,5,6,7,8,9,abc,1000,128,7.5,16,2560,500,3000,60\n",
                 "ds_bad_batch.csv:4:13: error: field 'batch_size': expected a number >= 0, got "
                 "\"abc\"");
    expect_error("ds_bad_short.csv", HDR "synthetic,bert,T4,1,2,3\n",
                 "ds_bad_short.csv:2:7: error: field 'op_relu': expected a value (the row is "
                 "short), got nothing (the row has 6 fields)");
    expect_error("ds_bad_header.csv", "source,model,gpu_type,util_milli\n",
                 "ds_bad_header.csv:1: error: header lacks column 'mem_mib'; expected "
                 "source,model,gpu_type,util_milli,mem_mib,time_s,op_addv2,op_conv2d,op_maxpool,"
                 "op_relu,op_matmul,op_avgpool,op_mul,op_concat,op_softmax,batch_size,iterations,"
                 "input_size,compute_capability,gpu_mem_gb,gpu_cores");
    expect_error("ds_bad_empty.csv", "",
                 "ds_bad_empty.csv:1: error: empty file: expected a header line");
    model_dataset ds;
    sim_diag d = {0};
    CHECK(model_dataset_load(&ds, "ds_absent.csv", &d) == SIM_EIO);
}

int main(void)
{
    roundtrip();
    bad_inputs();
    return check_done();
}
