/*
 * test_model_cli.c: the GPU models through the command line. A binpack replay with
 * interference on differs from one with it off (and says which model it used), the
 * throughput model changes jobs measured on another GPU type, runs stay byte-identical
 * for the same inputs, `clustersim model show|eval` and `calibrate` work, and bad
 * options and files get their one-line errors with exit status 2.
 */
#include "check.h"

#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/models/"

/* Run clustersim with `args`, stdout to out_file, stderr to err_file; exit status. */
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

static void replay(const char *dir, const char *cluster, const char *extra)
{
    char args[2048];
    snprintf(args, sizeof args,
             "run --quiet --trace '" FIX "colocated_trace.csv' --cluster %s --policy binpack "
             "--out %s %s",
             cluster, dir, extra);
    CHECK_EQ_I64(run(args, "cli_out.txt", "cli_err.txt"), 0);
}

static void test_run_models(void)
{
    replay("cli_off", "1xK80:1", "--interference none");
    replay("cli_on", "1xK80:1", "--interference measured");
    replay("cli_on2", "1xK80:1", "--interference measured");
    replay("cli_model", "1xK80:1", "--interference model");
    char *off = slurp("cli_off/jobs.csv"), *on = slurp("cli_on/jobs.csv");
    char *on2 = slurp("cli_on2/jobs.csv"), *mod = slurp("cli_model/jobs.csv");
    CHECK(strlen(off) > 100 && strcmp(off, on) != 0);
    CHECK_STR(on, on2);
    /* j1 (A3C) shares the K80 with j2 (CycleGAN) from t = 0: Gavel measured it at 0.426232
     * of its solo speed there, which is below fair time-slicing, so it finishes later. */
    CHECK(strstr(off, "\nj1,") && strstr(on, "\nj1,"));
    /* Its factor is (1 + 0.5) / (1 + 0.5 (1/0.426232 - 1)) = 0.896553 while j2 runs, so
     * at t = 3600 it has done 3227.6 s of its 3600 s and ends at 3972.40 s. */
    CHECK(strstr(on, "\nj1,,,0,done,0.000000,0.000000,3972.400564,"));
    CHECK(strcmp(mod, off) != 0);
    free(off);
    free(on);
    free(on2);
    free(mod);
    char *s_off = slurp("cli_off/summary.json"), *s_on = slurp("cli_on/summary.json");
    char *s_mod = slurp("cli_model/summary.json");
    CHECK(strstr(s_off, "\"rate_model\": \"throughput=measured ref=job interference=none\""));
    CHECK(strstr(s_on, "\"rate_model\": \"throughput=measured ref=job interference=measured\""));
    CHECK(strstr(s_mod, "\"rate_model\": \"throughput=measured ref=job interference=model\""));
    free(s_off);
    free(s_on);
    free(s_mod);

    /* The jobs were measured on K80; on a P100 the throughput model speeds them up. */
    replay("cli_p100", "1xP100:1", "");
    replay("cli_p100_none", "1xP100:1", "--throughput none");
    char *tp = slurp("cli_p100/jobs.csv"), *tn = slurp("cli_p100_none/jobs.csv");
    CHECK(strlen(tp) > 100 && strcmp(tp, tn) != 0);
    free(tp);
    free(tn);
    char *sn = slurp("cli_p100_none/summary.json");
    CHECK(strstr(sn, "\"rate_model\": \"none\""));
    free(sn);
}

static void expect_error(const char *args, int status, const char *message)
{
    CHECK_EQ_I64(run(args, "cli_out.txt", "cli_err.txt"), status);
    char *e = slurp("cli_err.txt");
    CHECK_STR(e, message);
    free(e);
}

static void test_errors(void)
{
    expect_error("run --quiet --trace '" FIX "colocated_trace.csv' --cluster 1xK80:1 "
                 "--interference '" FIX "bad_contention_negative.csv'",
                 2,
                 "clustersim: " FIX "bad_contention_negative.csv:3:3: error: field "
                 "'coefficient': expected a number in [0, 1e+06], got \"-0.2\"\n");
    expect_error("run --quiet --trace '" FIX "colocated_trace.csv' --cluster 1xK80:1 "
                 "--interference '" FIX "bad_contention_empty.csv'",
                 2,
                 "clustersim: " FIX "bad_contention_empty.csv: error: no coefficient row "
                 "(expected rows victim,aggressor,coefficient after the header)\n");
    expect_error("run --quiet --trace '" FIX "colocated_trace.csv' --cluster 1xK80:1 "
                 "--interference no_such_contention.csv",
                 2,
                 "clustersim: no_such_contention.csv: error: cannot open: No such file or "
                 "directory\n");
    expect_error("run --quiet --trace '" FIX "colocated_trace.csv' --cluster 1xK80:1 "
                 "--ref-gpu-type Z80",
                 2,
                 "clustersim: error: --ref-gpu-type: unknown GPU type 'Z80' (known: K80, P100, "
                 "P100_SXM2, V100M16, V100M32, V100_PCIE, T4, RTX2080TI, QUADRO_RTX6000, A10, "
                 "A30, A100, A100_80GB, A100_PCIE_40GB, A100_PCIE_80GB, H100, H100_PCIE, H200, "
                 "L4, L40S, G1, G2, G3, MISC)\n");
    /* An empty --throughput (an unset variable) names no table: refused, not run with
     * the measured tables. */
    expect_error("run --quiet --trace '" FIX "colocated_trace.csv' --cluster 1xK80:1 "
                 "--throughput ''",
                 2,
                 "clustersim: error: --throughput '': expected measured, none or steps tables "
                 "FILE[,FILE] (a file name is empty)\n");
    expect_error("calibrate --from '" FIX "bad_calib_resource.csv' --out cli_cal.csv", 2,
                 "clustersim: " FIX "bad_calib_resource.csv:3:8: error: field "
                 "'partner_resource': expected a resource: sm, mem, l2 or pcie, got \"disk\"\n");
    expect_error("calibrate --from '" FIX "bad_calib_modes.csv' --out cli_cal.csv", 2,
                 "clustersim: " FIX "bad_calib_modes.csv: error: the file has several sharing "
                 "modes (streams, process): choose one with --mode\n");
    expect_error("calibrate --out cli_cal.csv", 2,
                 "clustersim: error: clustersim calibrate needs --from FILE and --out FILE\n");
    expect_error("model show bogus", 2,
                 "clustersim: error: unknown kind 'bogus' for 'clustersim model show' (known: "
                 "throughput, interference)\n");
    expect_error("model eval", 2,
                 "clustersim: error: clustersim model eval needs a kind: throughput, "
                 "interference, util, mem, time, duration\n");
    expect_error("model show throughput --kind interference", 2,
                 "clustersim: error: two kinds given: 'throughput' and 'interference'\n");
    /* An empty --types (an unset variable) or an empty name in it is an error that says
     * so, not a silent exit or a dropped comma. */
    expect_error("model show throughput --types ''", 2,
                 "clustersim: error: --types: expected GPU type names separated by commas, got "
                 "''\n");
    expect_error("model eval throughput --types P100,", 2,
                 "clustersim: error: --types: expected GPU type names separated by commas, got "
                 "'P100,'\n");
    /* A type named twice would give the same column or row twice. */
    expect_error("model show throughput --types T4,P100,T4", 2,
                 "clustersim: error: --types: GPU type 'T4' is named twice in 'T4,P100,T4'\n");
    /* A model command's options start at the first word after the kind: an option given
     * there and again later is refused, as anywhere else, not replaced by the second. */
    remove("cli_a.csv");
    remove("cli_b.csv");
    expect_error("model gen samples --out cli_a.csv --samples 3 --out cli_b.csv", 2,
                 "clustersim: error: option --out is given twice (\"cli_a.csv\", then "
                 "\"cli_b.csv\"): give it once\n");
    CHECK(access("cli_a.csv", F_OK) != 0 && access("cli_b.csv", F_OK) != 0);
    expect_error("model eval --kind duration --trace a.csv --trace b.csv", 2,
                 "clustersim: error: option --trace is given twice (\"a.csv\", then "
                 "\"b.csv\"): give it once\n");
}

/* Each option of the model commands refuses a bad value with its one-line error. */
static void test_option_errors(void)
{
    check_put("cli_t1.csv", "job_id,submit_time,duration,num_gpus\na,0,1000,1\n");
    static const char *const cases[][2] = {
        {"model eval --kind duration --trace cli_t1.csv --retrain 5parsecs",
         "option --retrain: expected a duration such as 90, 90s, 15m, 2h or 1d, got "
         "\"5parsecs\""},
        {"model eval --kind duration --trace cli_t1.csv --retrain 1e-7",
         "option --retrain: expected 0 (no retraining) or at least 1e-6 s, got \"1e-7\""},
        {"model eval --kind duration --trace cli_t1.csv --tenant-models 70000",
         "option --tenant-models: expected an integer 0..65536, got \"70000\""},
        {"model eval --kind duration --trace cli_t1.csv --topics 33",
         "option --topics: expected an integer 0..32, got \"33\""},
        {"model eval --kind duration --trace cli_t1.csv --trees 0",
         "option --trees: expected an integer 1..10000, got \"0\""},
        {"model eval --kind duration --trace cli_t1.csv --seed x",
         "option --seed: expected an integer 0..18446744073709551615, got \"x\""},
        {"model eval --kind duration --trace cli_t1.csv --trace-opt foo",
         "--trace-opt 'foo': expected KEY=VALUE"},
        {"model eval --kind duration --trace cli_t1.csv --bogus",
         "unknown option '--bogus' for 'clustersim model eval duration' (see clustersim model "
         "eval duration --help)"},
        {"model eval --kind duration",
         "clustersim model eval duration needs --trace FILE or --jobs FILE"},
        {"model derive catalog --bogus",
         "unknown option '--bogus' for 'clustersim model derive catalog'"},
        {"model derive catalog --specs a.csv",
         "clustersim model derive catalog needs --specs, --labels and --out"},
        {"model derive gavel --bogus",
         "unknown option '--bogus' for 'clustersim model derive gavel'"},
        {"model derive gavel",
         "clustersim model derive gavel needs --isolated with --steps-out and/or --colocated "
         "with --pairs-out"},
        {"model derive pollux --bogus",
         "unknown option '--bogus' for 'clustersim model derive pollux'"},
        {"model derive pollux --out cli_x.csv",
         "clustersim model derive pollux needs --profiles DIR and --out"},
        {"model show interference --bogus",
         "unknown option '--bogus' for 'clustersim model show interference'"},
        {"model eval interference --bogus",
         "unknown option '--bogus' for 'clustersim model eval interference'"},
        {"model eval interference --test-frac 1",
         "option --test-frac: expected a number in [0.01, 0.99], got \"1\""},
        {"model eval interference --seed -1",
         "option --seed: expected an integer 0..18446744073709551615, got \"-1\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --test-frac 0.95",
         "option --test-frac: expected a number in [0.01, 0.9], got \"0.95\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --activation sigmoid",
         "option --activation: expected relu or tanh, got 'sigmoid'"},
        {"model train util --data cli_x.csv --out cli_x.mlp --optimizer lbfgs",
         "option --optimizer: expected adam or sgd, got 'lbfgs'"},
        {"model train util --data cli_x.csv --out cli_x.mlp --batch 0",
         "option --batch: expected an integer 1..65536, got \"0\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --lr 0",
         "option --lr: expected a number in [1e-09, 10], got \"0\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --momentum 1",
         "option --momentum: expected a number in [0, 0.999], got \"1\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --val-frac 0.95",
         "option --val-frac: expected a number in [0, 0.9], got \"0.95\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --patience x",
         "option --patience: expected an integer 1..1000000, got \"x\""},
        {"model train util --data cli_x.csv --out cli_x.mlp --epochs 0",
         "option --epochs: expected an integer 1..1000000, got \"0\""},
        {"model eval util --data cli_x.csv", "clustersim model eval needs --model MODEL"},
        {"model eval util --model cli_x.mlp", "clustersim model eval needs --data FILE"},
        {"model gen samples --out cli_x.csv --samples 0",
         "option --samples: expected an integer 1..100000000, got \"0\""},
        {"model gen samples --out cli_x.csv --seed x",
         "option --seed: expected an integer 0..18446744073709551615, got \"x\""},
        {"model gen samples", "clustersim model gen samples needs --out FILE"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char want[512];
        snprintf(want, sizeof want, "clustersim: error: %s\n", cases[k][1]);
        expect_error(cases[k][0], 2, want);
    }
    /* Files that are not there, named. */
    expect_error("model derive pollux --profiles cli_none --out cli_x.csv", 2,
                 "clustersim: cli_none: error: cannot open the directory\n");
    expect_error("model show interference --pairs cli_none.csv", 2,
                 "clustersim: cli_none.csv: error: cannot open: No such file or directory\n");
    expect_error("model show interference --contention cli_none.csv", 2,
                 "clustersim: cli_none.csv: error: cannot open: No such file or directory\n");
    expect_error("model show throughput --steps cli_none.csv", 2,
                 "clustersim: cli_none.csv: error: cannot open: No such file or directory\n");
    expect_error("model show throughput --catalog cli_none.csv", 2,
                 "clustersim: cli_none.csv: error: cannot open: No such file or directory\n");
    expect_error("model eval --kind duration --trace cli_t1.csv --catalog cli_none.csv", 2,
                 "clustersim: cli_none.csv: error: cannot open: No such file or directory\n");
    CHECK(access("cli_x.csv", F_OK) != 0 && access("cli_x.mlp", F_OK) != 0);
    /* Retraining every microsecond across a gap of 10^9 s steps over the gap at once (it
     * took a step per microsecond: 10^15 of them). */
    check_put("cli_gap.csv", "job_id,submit_time,duration,num_gpus\na,0,10,1\nb,1,10,1\n"
                             "c,2,10,1\nd,1000000000,10,1\n");
    CHECK_EQ_I64(run("model eval --kind duration --trace cli_gap.csv --retrain 1e-6", "cli_out.txt",
                     "cli_err.txt"),
                 0);
}

/* Every model command that writes a file exits 2, naming the file, when it cannot be
 * created: a path under a regular file cannot be (even for root). */
static void test_unwritable_outputs(void)
{
    FILE *f = fopen("cli_notadir", "w");
    fclose(f);
#define NOTDIR(file)                                                                               \
    "clustersim: cli_notadir/" file ": error: cannot create the file: Not a directory\n"
    expect_error("calibrate --from '" FIX "bad_calib_modes.csv' --mode streams "
                 "--out cli_notadir/c.csv",
                 2, NOTDIR("c.csv"));
    expect_error("model derive catalog --specs '" FIX "specs_small.csv' --labels '" FIX
                 "labels_good.csv' --names '" FIX "names_small.csv' --out cli_notadir/g.csv",
                 2, NOTDIR("g.csv"));
    expect_error("model derive pollux --profiles . --out cli_notadir/p.csv", 2, NOTDIR("p.csv"));
    expect_error("model derive gavel --isolated x.csv --steps-out cli_notadir/s.csv", 2,
                 NOTDIR("s.csv"));
    expect_error("model gen samples --samples 3 --out cli_notadir/d.csv", 2, NOTDIR("d.csv"));
    /* Gavel tables with no row to derive from: an error, no empty table written (the
     * sanitizer build used to stop on a sort of no rows). */
    check_put("cli_iso_empty.csv", "worker_type,job_type,scale_factor,steps_per_sec\n");
    expect_error("model derive gavel --isolated cli_iso_empty.csv --steps-out cli_s_empty.csv", 2,
                 "clustersim: cli_iso_empty.csv: error: no row to derive from (a consolidated "
                 "worker type with steps_per_sec above 0)\n");
    CHECK(access("cli_s_empty.csv", F_OK) != 0);
    check_put("cli_colo_empty.csv", "worker_type,job_type_a,scale_factor_a,job_type_b,"
                                    "scale_factor_b,norm_speed_a,norm_speed_b\n");
    expect_error("model derive gavel --colocated cli_colo_empty.csv --pairs-out cli_p_empty.csv", 2,
                 "clustersim: cli_colo_empty.csv: error: no row to derive from (a consolidated "
                 "worker type, scale factors 1 and both normalised speeds above 0)\n");
    CHECK(access("cli_p_empty.csv", F_OK) != 0);
    CHECK_EQ_I64(
        run("model gen samples --samples 40 --out cli_samples.csv", "cli_out.txt", "cli_err.txt"),
        0);
    expect_error("model train util --data cli_samples.csv --epochs 1 --out cli_notadir/u.mlp", 2,
                 NOTDIR("u.mlp"));
#undef NOTDIR
    remove("cli_notadir");
    remove("cli_samples.csv");
}

static void test_model_commands(void)
{
    CHECK_EQ_I64(run("model show throughput", "cli_show.txt", "cli_err.txt"), 0);
    char *s = slurp("cli_show.txt");
    /* Gavel measured A3C at 3.439 steps/s on K80 (shown with 4 digits, '*' = measured). */
    CHECK(strstr(s, "A3C") && strstr(s, "3.439*"));
    free(s);
    CHECK_EQ_I64(run("model eval --kind throughput --types P100", "cli_eval.txt", "cli_err.txt"),
                 0);
    s = slurp("cli_eval.txt");
    CHECK(strstr(s, "P100") && strstr(s, "33.6%"));
    free(s);
    CHECK_EQ_I64(run("model eval interference --seed 1", "cli_eval.txt", "cli_err.txt"), 0);
    s = slurp("cli_eval.txt");
    CHECK(strstr(s, "pairs: 683 for training, 293 held out (seed 1)"));
    free(s);
    CHECK_EQ_I64(run("model show interference", "cli_show.txt", "cli_err.txt"), 0);
    s = slurp("cli_show.txt");
    CHECK(strstr(s, "contention matrix") && strstr(s, "CycleGAN"));
    free(s);
}

int main(void)
{
    test_run_models();
    test_errors();
    test_option_errors();
    test_unwritable_outputs();
    test_model_commands();
    return check_done();
}
