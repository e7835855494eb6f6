/*
 * test_predict_cli.c: predicted-demand placement through the command line. A zoo trace
 * generated and replayed under `predictive` with the zoo as truth finishes every job,
 * records predictions and is byte-identical on a second run; the predictors train and
 * evaluate from the CLI with their three-way error table; a GPU job without features is
 * rejected with its reason; bad options and files get their one-line errors.
 */
#include "check.h"

#include <unistd.h>

#include <stdlib.h>
#include <string.h>

static int run(const char *args, const char *out_file, const char *err_file)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s > '%s' 2> '%s'", SIM_BINARY, args, out_file, err_file);
    return check_system(cmd);
}

static char *slurp(const char *path)
{
    char *s = check_slurp(path, NULL);
    return s ? s : calloc(1, 1);
}

static void expect_error(const char *args, int status, const char *message)
{
    CHECK_EQ_I64(run(args, "pcli_out.txt", "pcli_err.txt"), status);
    char *e = slurp("pcli_err.txt");
    CHECK_STR(e, message);
    free(e);
}

static void zoo_replay(void)
{
    CHECK_EQ_I64(run("trace gen --zoo --zoo-ref V100M32 --jobs 300 --seed 5 --rate 120 "
                     "--out pcli_zoo.csv",
                     "pcli_out.txt", "pcli_err.txt"),
                 0);
    char *t = slurp("pcli_zoo.csv");
    /* Every GPU job carries features; CPU-only jobs do not. */
    CHECK(strstr(t, "batch_size,iterations,input_size") != NULL);
    free(t);
    const char *args = "run --quiet --trace pcli_zoo.csv --cluster 2xV100M32:4,2xT4:4,1xA100:4 "
                       "--zoo --zoo-ref V100M32 --policy predictive --out %s";
    char a1[512], a2[512];
    snprintf(a1, sizeof a1, args, "pcli_run1");
    snprintf(a2, sizeof a2, args, "pcli_run2");
    CHECK_EQ_I64(run(a1, "pcli_out.txt", "pcli_err.txt"), 0);
    CHECK_EQ_I64(run(a2, "pcli_out.txt", "pcli_err.txt"), 0);
    char *j1 = slurp("pcli_run1/jobs.csv"), *j2 = slurp("pcli_run2/jobs.csv");
    char *s1 = slurp("pcli_run1/summary.json"), *s2 = slurp("pcli_run2/summary.json");
    CHECK(strlen(j1) > 1000);
    CHECK_STR(j1, j2);
    CHECK_STR(s1, s2);
    CHECK(strstr(s1, "\"jobs\": {\"arrived\": 300, \"done\": 300, \"rejected\": 0, "
                     "\"unfinished\": 0}") != NULL);
    CHECK(strstr(s1, "\"rate_model\": \"zoo\"") != NULL);
    /* A GPU job's row has both predictions; count rows with a non-empty pred_milli. */
    int rows = 0, predicted = 0;
    for (char *line = strchr(j1, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        rows++;
        char *end = strchr(line + 1, '\n');
        size_t n = end ? (size_t)(end - line - 1) : strlen(line + 1);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), line + 1);
        /* pred_duration_s and pred_milli are the 23rd and 24th fields. */
        int field = 1;
        const char *p = buf, *f24 = NULL;
        for (; *p; p++)
            if (*p == ',' && ++field == 24)
                f24 = p + 1;
        if (f24 && *f24 && *f24 != ',')
            predicted++;
    }
    CHECK_EQ_I64(rows, 300);
    printf("%d of %d jobs carry a prediction\n", predicted, rows);
    CHECK(predicted >= 250);
    free(j1);
    free(j2);
    free(s1);
    free(s2);
}

static void train_eval(void)
{
    CHECK_EQ_I64(run("model gen samples --out pcli_samples.csv --samples 400 --seed 3",
                     "pcli_out.txt", "pcli_err.txt"),
                 0);
    CHECK_EQ_I64(run("model train util --data pcli_samples.csv --out pcli_util.mlp --hidden 8 "
                     "--epochs 20 --seed 3",
                     "pcli_train.txt", "pcli_err.txt"),
                 0);
    CHECK_EQ_I64(run("model eval --kind util --data pcli_samples.csv --model pcli_util.mlp",
                     "pcli_eval.txt", "pcli_err.txt"),
                 0);
    char *tr = slurp("pcli_train.txt"), *ev = slurp("pcli_eval.txt");
    CHECK(strstr(tr, "data: pcli_samples.csv: 400 rows (400 synthetic, 0 measured)") != NULL);
    CHECK(strstr(tr, "held-out rows: 80 (80 synthetic, 0 measured); the baselines are fitted "
                     "on the other 320 rows; unit: milli-GPU\nthe mlp was trained on a data "
                     "file of 400 rows, a fraction 0.2 held out (split seed 3)\n") != NULL);
    CHECK(strstr(tr, "  mlp  ") && strstr(tr, "  mean baseline  ") &&
          strstr(tr, "  linear-regression baseline  "));
    /* Eval holds out the same rows and reproduces the training report's table. */
    const char *t_tab = strstr(tr, "held-out rows"), *e_tab = strstr(ev, "held-out rows");
    CHECK(t_tab && e_tab && strcmp(t_tab, e_tab) == 0);
    free(tr);
    free(ev);
    CHECK_EQ_I64(run("model train time --data pcli_samples.csv --out pcli_time.mlp --hidden 8 "
                     "--epochs 5",
                     "pcli_out.txt", "pcli_err.txt"),
                 0);
    CHECK_EQ_I64(run("model eval time --data pcli_samples.csv --model pcli_time.mlp "
                     "--util-model pcli_util.mlp",
                     "pcli_eval.txt", "pcli_err.txt"),
                 0);
    ev = slurp("pcli_eval.txt");
    CHECK(strstr(ev, "  mlp, predicted utilisation  ") != NULL);
    free(ev);
}

static void featureless(void)
{
    FILE *f = fopen("pcli_plain.csv", "w");
    fputs("job_id,submit_time,duration,num_gpus,gpu_milli,qos\n"
          "a,0,100,1,500,LS\n"
          "b,1,100,0,,BE\n",
          f);
    fclose(f);
    CHECK_EQ_I64(run("run --quiet --trace pcli_plain.csv --cluster 1xT4:1 --policy predictive "
                     "--out pcli_plain",
                     "pcli_out.txt", "pcli_err.txt"),
                 0);
    char *j = slurp("pcli_plain/jobs.csv");
    CHECK(strstr(j, "\"policy predictive: no execution features (batch_size, iterations, "
                    "input_size) to predict from; give the trace columns or run with --zoo\"") !=
          NULL);
    CHECK(strstr(j, "\nb,,BE,0,done,") != NULL);
    free(j);
}

static void bad_input(void)
{
    expect_error("run --trace pcli_plain.csv --cluster 1xT4:1 --zoo --zoo-ref NOPE", 2,
                 "clustersim: error: --zoo-ref: unknown GPU type 'NOPE'\n");
    expect_error("run --trace pcli_plain.csv --cluster 1xT4:1 --zoo --interference measured", 2,
                 "clustersim: error: --zoo takes the speed and demand of each job from the model "
                 "zoo; it cannot be combined with --throughput or --interference\n");
    expect_error("run --trace pcli_plain.csv --cluster 1xT4:1 --zoo --zoo-over 0.5", 2,
                 "clustersim: error: option --zoo-over: expected a number in [1, 100], got "
                 "\"0.5\"\n");
    expect_error("trace gen --zoo --zoo-ref NOPE --out pcli_x.csv", 2,
                 "clustersim: error: --zoo-ref: unknown GPU type 'NOPE'\n");
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --hidden 8,x", 2,
                 "clustersim: error: option --hidden: expected layer widths 1..1024 separated "
                 "by commas, such as 64,32, at most 7 layers (0: none), got \"8,x\"\n");
    /* An empty --hidden (an unset variable) or a comma too many is refused, not read as
     * fewer layers ('0' asks for none). */
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --hidden ''", 2,
                 "clustersim: error: option --hidden: expected layer widths 1..1024 separated "
                 "by commas, such as 64,32, at most 7 layers (0: none), got \"\"\n");
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --hidden 8,", 2,
                 "clustersim: error: option --hidden: expected layer widths 1..1024 separated "
                 "by commas, such as 64,32, at most 7 layers (0: none), got \"8,\"\n");
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --hidden 1025", 2,
                 "clustersim: error: option --hidden: expected layer widths 1..1024 separated "
                 "by commas, such as 64,32, at most 7 layers (0: none), got \"1025\"\n");
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --hidden "
                 "1,2,3,4,5,6,7,8",
                 2,
                 "clustersim: error: option --hidden: expected layer widths 1..1024 separated "
                 "by commas, such as 64,32, at most 7 layers (0: none), got "
                 "\"1,2,3,4,5,6,7,8\"\n");
    expect_error("model train util --data pcli_samples.csv --out pcli_x.mlp --loss l3", 2,
                 "clustersim: error: option --loss: expected mse or mae, got 'l3'\n");
    expect_error("model train util --out pcli_x.mlp", 2,
                 "clustersim: error: clustersim model train needs --data FILE\n");
    expect_error("model eval mem --data pcli_samples.csv --model pcli_util.mlp", 2,
                 "clustersim: pcli_util.mlp: error: expected a 'mem' model (meta kind mem), got "
                 "kind 'util'\n");
    /* Too few rows to train the linear baseline on: an error before a model is written
     * (20 rows, 4 held out, 16 to train, 16 coefficients). */
    CHECK(check_system("head -n 21 pcli_samples.csv > pcli_20.csv") == 0);
    expect_error("model train util --data pcli_20.csv --out pcli_20.mlp --epochs 5", 2,
                 "clustersim: error: the data has 20 rows, 16 of them to train on after holding "
                 "4 out; the linear baseline needs more than 16\n");
    CHECK(access("pcli_20.mlp", F_OK) != 0);
    /* A split recorded in the model file that cannot be read is an error, not a split
     * seed of 0 or a test fraction of 0. */
    CHECK(check_system("sed 's/^meta split_seed .*/meta split_seed banana/' pcli_util.mlp > "
                       "pcli_seed.mlp && sed 's/^meta test_frac .*/meta test_frac 7/' "
                       "pcli_util.mlp > pcli_frac.mlp") == 0);
    expect_error("model eval util --data pcli_samples.csv --model pcli_seed.mlp", 2,
                 "clustersim: pcli_seed.mlp: error: meta 'split_seed': expected an integer "
                 "0..18446744073709551615, got \"banana\"\n");
    expect_error("model eval util --data pcli_samples.csv --model pcli_frac.mlp", 2,
                 "clustersim: pcli_frac.mlp: error: meta 'test_frac': expected a number in "
                 "[0.01, 0.9], got \"7\"\n");
    FILE *f = fopen("pcli_bad.csv", "w");
    fputs("source,model,gpu_type,op_addv2,op_conv2d,op_maxpool,op_relu,op_matmul,op_avgpool,"
          "op_mul,op_concat,op_softmax,batch_size,iterations,input_size,compute_capability,"
          "gpu_mem_gb,gpu_cores,util_milli,mem_mib,time_s\n"
          "synthetic,bert,T4,1,2,3,4,5,6,7,8,9,32,1000,128,7.5,16,2560,500,3000,-60\n",
          f);
    fclose(f);
    expect_error("model train util --data pcli_bad.csv --out pcli_x.mlp", 2,
                 "clustersim: pcli_bad.csv:2:21: error: field 'time_s': expected a number >= 0, "
                 "got \"-60\"\n");
    expect_error("model gen samples --out pcli_x.csv --gpu-types 'T4|NOPE'", 2,
                 "clustersim: error: option --gpu-types: unknown GPU type 'NOPE' (known: K80, "
                 "P100, P100_SXM2, V100M16, V100M32, V100_PCIE, T4, RTX2080TI, QUADRO_RTX6000, "
                 "A10, A30, A100, A100_80GB, A100_PCIE_40GB, A100_PCIE_80GB, H100, H100_PCIE, "
                 "H200, L4, L40S, G1, G2, G3, MISC)\n");
    expect_error("run --trace pcli_plain.csv --cluster 1xT4:1 --policy predictive "
                 "--policy-opt be_min=2",
                 2,
                 "clustersim: error: policy 'predictive': option 'be_min': expected a number in "
                 "[0, 1], got \"2\"\n");
}

int main(void)
{
    zoo_replay();
    train_eval();
    featureless();
    bad_input();
    return check_done();
}
