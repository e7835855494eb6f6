/*
 * test_trace_tools.c: `clustersim trace stats|convert|gen` end to end, the --like
 * tolerances on the Philly CSV, and replays of every staged trace under fifo and
 * binpack. Statistics of files are recomputed here with the traces library.
 */
#include "models/catalog.h"
#include "traces/curves.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include "check.h"
#include "gavel_steps.h"

#include <dirent.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/"
#define BIN SIM_BINARY

static model_catalog *cat;

/* Statistics of a trace file; false when it cannot be read. */
static bool stats_of(const char *path, const char *format, const char *opt, trace_stats *s,
                     sim_intern **tenants_out)
{
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    const char *opts[1] = {opt};
    trace_options o = {.format = format,
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(cat),
                       .opts = opts,
                       .n_opts = opt ? 1 : 0};
    trace_reader *r = NULL;
    sim_diag d;
    trace_stats_init(s);
    bool ok = trace_reader_open(&r, path, &o, &d) == SIM_OK;
    job_spec j;
    int st = 0;
    while (ok && (st = trace_reader_next(r, &j, &d)) == 1)
        trace_stats_add(s, &j);
    ok = ok && st == 0;
    if (!ok)
        fprintf(stderr, "%s: %s\n", path, d.msg);
    trace_stats_finish(s);
    trace_reader_close(r);
    sim_intern_destroy(models);
    if (tenants_out)
        *tenants_out = tenants;
    else
        sim_intern_destroy(tenants);
    return ok;
}

static int run(const char *cmd)
{
    char buf[4200];
    snprintf(buf, sizeof buf, "%s > tool.out 2> tool.err", cmd);
    return check_system(buf);
}

static bool err_has(const char *text)
{
    char *e = check_slurp("tool.err", NULL);
    bool ok = e && strstr(e, text);
    if (!ok)
        fprintf(stderr, "stderr lacks \"%s\": %s\n", text, e ? e : "(none)");
    free(e);
    return ok;
}

static bool out_has(const char *text)
{
    char *e = check_slurp("tool.out", NULL);
    bool ok = e && strstr(e, text);
    if (!ok)
        fprintf(stderr, "stdout lacks \"%s\"\n", text);
    free(e);
    return ok;
}

/* Hand-computed statistics of five jobs. */
static void test_stats_golden(void)
{
    trace_stats s;
    trace_stats_init(&s);
    static const double dur[5] = {4, 1, 100, 3, 2};
    static const uint32_t gpus[5] = {1, 8, 0, 1, 2}, milli[5] = {250, 1000, 0, 1000, 1000};
    for (int k = 0; k < 5; k++) {
        job_spec j = {0};
        j.submit_us = (sim_time)(3700 + 86400 * k) * SIM_US_PER_S;
        j.work_s = dur[k];
        j.num_gpus = gpus[k];
        j.gpu_milli = milli[k];
        j.tenant = (uint32_t)(k % 2);
        CHECK_EQ_I64(trace_stats_add(&s, &j), SIM_OK);
    }
    trace_stats_finish(&s);
    CHECK_EQ_I64(s.jobs, 5);
    CHECK_EQ_I64(s.cpu_only, 1);
    CHECK_EQ_I64(s.by_hour[1], 5);
    CHECK_EQ_I64(s.n_days, 5);
    /* Sorted 1 2 3 4 100: p50 = 3; p10 at h = 0.4 -> 1.4; p90 at h = 3.6 -> 4 + 0.6 x 96. */
    CHECK_NEAR(s.dur_q[2], 3, 1e-12);
    CHECK_NEAR(s.dur_q[0], 1.4, 1e-12);
    CHECK_NEAR(s.dur_q[4], 61.6, 1e-12);
    CHECK_NEAR(s.dur_mean, 22, 1e-12);
    /* GPU-seconds: 0.25 x 4 + 8 x 1 + 3 + 2 x 2 = 16; tenant 1 has the second and fourth
     * jobs: 8 x 1 + 1 x 3 = 11. */
    CHECK_NEAR(s.gpu_seconds, 16, 1e-12);
    CHECK_NEAR(s.tenant_gpu_s[1], 11, 1e-12);
    CHECK_EQ_I64(s.milli_bins[2], 1);
    CHECK_EQ_I64(s.milli_bins[10], 3);
    CHECK_EQ_I64(s.n_gpu_values, 4);
    /* 4 days between the first and the last arrival, 4 gaps. */
    CHECK_NEAR(trace_stats_rate_h(&s), 4.0 / 96, 1e-12);
    trace_stats_fini(&s);
}

static void test_stats_cli(void)
{
    CHECK_EQ_I64(run(BIN " trace stats " FIX "good_philly.json --format philly --json"), 0);
    CHECK(out_has("\"jobs\": 2,"));
    CHECK(out_has("\"records_ignored\": 1,"));
    CHECK(out_has("\"num_gpus\": {\"1\": 1, \"8\": 1}"));
    CHECK(out_has("\"fields_present\": [\"tenant\", \"replicas\"]"));
    /* A job whose submitted_time is "None" or null cannot be replayed: ignored, counted. */
    CHECK_EQ_I64(run(BIN " trace stats " FIX "philly_none_submit.json --format philly --json"), 0);
    CHECK(out_has("\"jobs\": 1,"));
    CHECK(out_has("\"records_ignored\": 2,"));
    CHECK_EQ_I64(run(BIN " trace stats " FIX "good_muri.csv --format muri"), 0);
    CHECK(out_has("jobs       3 (0 CPU-only)"));
    CHECK(out_has("fields present: model priority batch_size iterations iter_time_ms "
                  "stage_cpu_ms stage_gpu_ms stage_net_ms"));
    CHECK_EQ_I64(run(BIN " trace stats " FIX "good_muri.csv --format muri --trace-opt x=1"), 2);
    CHECK(err_has("clustersim: error: --trace-opt 'x=1': the muri format has no options"));
    CHECK_EQ_I64(run(BIN " trace stats " FIX "bad_native_dup.csv"), 2);
    CHECK(err_has("bad_native_dup.csv:4:1: error: duplicate job id 'j1' (first seen on line 2)"));
}

/* True when no file of the working directory starts with prefix (the output or its
 * temporary name). */
static bool no_file_like(const char *prefix)
{
    DIR *dir = opendir(".");
    struct dirent *e;
    bool none = true;
    while (dir && (e = readdir(dir)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "left behind: %s\n", e->d_name);
            none = false;
        }
    if (dir)
        closedir(dir);
    return none;
}

static void test_convert(void)
{
    /* Window [86399, 108784) keeps the three earliest jobs; tenant 6214e9 two of them
     * (11cb48 has a job, after the window). */
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--from 86399 --to 108784 --tenants 6214e9,11cb48 --out conv.csv.gz"),
                 0);
    CHECK(err_has("read 4 jobs, wrote 2 to conv.csv.gz"));
    size_t n = 0;
    char *z = check_slurp("conv.csv.gz", &n);
    CHECK(z && n > 2 && (unsigned char)z[0] == 0x1f && (unsigned char)z[1] == 0x8b);
    free(z);
    trace_stats s;
    CHECK(stats_of("conv.csv.gz", "native", NULL, &s, NULL));
    CHECK_EQ_I64(s.jobs, 2);
    CHECK_NEAR(s.dur_min, 10.5, 1e-12);
    trace_stats_fini(&s);
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--min-gpus 2 --max-gpus 8 --first 1 --out conv.csv"),
                 0);
    CHECK(stats_of("conv.csv", "native", NULL, &s, NULL));
    CHECK_EQ_I64(s.jobs, 1);
    CHECK_EQ_I64(s.n_gpu_values == 1 ? s.gpu_value[0] : 0, 8);
    trace_stats_fini(&s);
    /* Load scaling: draws until 40 % of 2 x 8 GPUs = 6.4 GPUs are requested. */
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--load 40 --cluster 2xV100M16:8 --seed 3 --out load.csv"),
                 0);
    CHECK(stats_of("load.csv", "native", NULL, &s, NULL));
    double gpus = 0;
    for (uint32_t k = 0; k < s.n_gpu_values; k++)
        gpus += (double)s.gpu_value[k] * (double)s.gpu_count[k];
    CHECK(gpus >= 6.4 && gpus < 6.4 + 8);
    trace_stats_fini(&s);
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--load 40 --out load.csv"),
                 2);
    CHECK(err_has("--load needs --cluster"));
    /* --seed, --cluster and --cluster-gpu-type describe the load scaling: without --load
     * they are refused, not ignored. */
    remove("conv_bad.csv");
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--seed 7 --out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --seed serves --load (the cluster it fills, its seeded "
                  "draws); give --load PCT\n"));
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--cluster 2xV100M16:8 --out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --cluster serves --load (the cluster it fills, its seeded "
                  "draws); give --load PCT\n"));
    CHECK(no_file_like("conv_bad.csv"));
    /* A cluster without GPUs has no load to fill: an error, not an empty trace. */
    remove("conv_bad.csv");
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--load 10 --cluster 1xV100M16:0 --out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --load: the cluster '1xV100M16:0' has no GPU (the load "
                  "is a share of its GPUs)\n"));
    CHECK(no_file_like("conv_bad.csv"));
    /* A high load from a trace that mixes CPU-only and GPU jobs is reached however many
     * CPU-only jobs the draws meet (it was refused after 100 draws per job); a trace of
     * CPU-only jobs alone can reach none. */
    check_put("load_mixed.csv", "job_id,submit_time,duration,num_gpus\ng,0,60,1\nc,10,60,0\n");
    CHECK_EQ_I64(run(BIN " trace convert --trace load_mixed.csv --load 1000 --cluster "
                         "2xV100M16:8 --out load_mixed_out.csv"),
                 0);
    CHECK(stats_of("load_mixed_out.csv", "native", NULL, &s, NULL));
    gpus = 0;
    for (uint32_t k = 0; k < s.n_gpu_values; k++)
        gpus += (double)s.gpu_value[k] * (double)s.gpu_count[k];
    CHECK(gpus >= 160 && gpus < 161);
    trace_stats_fini(&s);
    check_put("load_cpu.csv", "job_id,submit_time,duration,num_gpus\nc,10,60,0\n");
    CHECK_EQ_I64(run(BIN " trace convert --trace load_cpu.csv --load 100 --cluster 2xV100M16:8 "
                         "--out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --load: the selected jobs ask for no GPU\n"));
    CHECK(no_file_like("conv_bad.csv"));
    /* A listed tenant no job carries is reported, and no output is left behind. */
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--tenants 6214e9,nosuch,zz --out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --tenants: no job of " FIX "good_philly.csv has tenant "
                  "'nosuch', 'zz'\n"));
    CHECK(no_file_like("conv_bad.csv"));
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--tenants 6214e9, --out conv_bad.csv"),
                 2);
    CHECK(err_has("clustersim: error: --tenants '6214e9,': empty tenant name in the list\n"));
    /* --first stops writing early, but 11cb48's one job (the last) is still found. */
    CHECK_EQ_I64(run(BIN " trace convert --trace " FIX "good_philly.csv --format philly "
                         "--tenants 6214e9,11cb48 --first 1 --out conv.csv"),
                 0);
    CHECK(err_has("read 4 jobs, wrote 1 to conv.csv"));
    remove("conv.csv.gz");
    remove("conv.csv");
    remove("load.csv");
}

static void test_gen(void)
{
    CHECK_EQ_I64(run(BIN " trace gen --jobs 3000 --seed 5 --diurnal 0.9 --peak-hour 14 "
                         "--duration-pareto 1.5 --out gen1.csv"),
                 0);
    CHECK_EQ_I64(run(BIN " trace gen --jobs 3000 --seed 5 --diurnal 0.9 --peak-hour 14 "
                         "--duration-pareto 1.5 --out gen2.csv"),
                 0);
    char *a = check_slurp("gen1.csv", NULL), *b = check_slurp("gen2.csv", NULL);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    trace_stats s;
    CHECK(stats_of("gen1.csv", "native", NULL, &s, NULL));
    CHECK_EQ_I64(s.jobs, 3000);
    /* Rate 1.9x the mean at 14 h, 0.1x at 2 h. */
    CHECK(s.by_hour[14] > 5 * s.by_hour[2]);
    /* Pareto alpha 1.5 with median 1800 s x a tenant scale in [e^-0.5, e^0.5]: no job
     * below the smallest scale x_m = 1800 e^-0.5 / 2^(1/1.5) = 687.8 s (whole seconds),
     * and p99 / p50 near (0.5 / 0.01)^(1/1.5) = 13.6. */
    CHECK(s.dur_min >= 687 && s.dur_min < 700);
    CHECK(s.dur_q[6] / s.dur_q[2] > 10 && s.dur_q[6] / s.dur_q[2] < 20);
    trace_stats_fini(&s);
    remove("gen1.csv");
    remove("gen2.csv");
    remove("x.csv");
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --format philly"), 2);
    CHECK(err_has("clustersim: error: --format, --trace-opt and --skip-bad-rows describe the "
                  "--like FILE; give --like\n"));
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --skip-bad-rows"), 2);
    CHECK(err_has("give --like\n"));
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --zoo-ref T4"), 2);
    CHECK(err_has("clustersim: error: --zoo-ref and --zoo-slo describe the annotation of --zoo; "
                  "give --zoo\n"));
    /* What --like fits from its FILE cannot also be set: refused, not ignored. */
    CHECK_EQ_I64(run(BIN " trace gen --like " FIX "good_philly.csv --format philly --rate 5 "
                         "--tenants 3 --diurnal 0.5 --out x.csv"),
                 2);
    CHECK(err_has("clustersim: error: --tenants cannot be combined with --like: tenants are "
                  "those of the --like FILE, with their shares of the jobs\n"));
    CHECK_EQ_I64(run(BIN " trace gen --diurnal=0.5 --like " FIX "good_philly.csv --format philly "
                         "--out x.csv"),
                 2);
    CHECK(err_has("clustersim: error: --diurnal cannot be combined with --like: arrivals follow "
                  "the hour-of-day rates of the --like FILE (--rate scales them)\n"));
    static const char *const fitted[] = {
        "--peak-hour 3",    "--duration-median 1h", "--duration-sigma 1", "--duration-pareto 2",
        "--frac-share 0.1", "--frac-multi 0.1",     "--frac-cpu 0.1"};
    for (size_t k = 0; k < sizeof fitted / sizeof fitted[0]; k++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 BIN " trace gen --like " FIX "good_philly.csv --format philly %s --out x.csv",
                 fitted[k]);
        CHECK_EQ_I64(run(cmd), 2);
        CHECK(err_has("cannot be combined with --like"));
    }
    /* --rate scales the FILE's hour-of-day rates to a daily mean of 5 jobs/h; the FILE's
     * jobs arrive at 23, 6 and 7 h only, and so do the generated ones. */
    CHECK_EQ_I64(run(BIN " trace gen --like " FIX "good_philly.csv --format philly --rate 5 "
                         "--jobs 3000 --seed 3 --out gen1.csv"),
                 0);
    CHECK(stats_of("gen1.csv", "native", NULL, &s, NULL));
    printf("--like with --rate 5: %.3f jobs/h\n", trace_stats_rate_h(&s));
    CHECK_NEAR(trace_stats_rate_h(&s), 5, 0.05);
    CHECK_EQ_I64(s.by_hour[23] + s.by_hour[6] + s.by_hour[7], 3000);
    trace_stats_fini(&s);
    remove("gen1.csv");
    /* An empty output name (an unset variable) is refused before any work, with no
     * temporary left in the working directory. */
    CHECK_EQ_I64(run(BIN " trace gen --out '' --jobs 3"), 2);
    CHECK(err_has("clustersim: error: cannot create the file: the output file name is empty\n"));
    CHECK(no_file_like(".tmp."));
    /* Without the distribution they shape, --peak-hour and --duration-sigma would be
     * ignored: refused. */
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --peak-hour 14"), 2);
    CHECK(err_has("clustersim: error: --peak-hour needs --diurnal A (the amplitude of the daily "
                  "cycle it places; without it arrivals are uniform over the day)\n"));
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --duration-pareto 1.5 --duration-sigma 2"), 2);
    CHECK(err_has("clustersim: error: --duration-sigma is the spread of lognormal durations, and "
                  "--duration-pareto draws them from a Pareto law instead: give one\n"));
    CHECK(no_file_like("x.csv"));
    /* Type constraints need both the types and the fraction. */
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --frac-constrained 0.5"), 2);
    CHECK(err_has("clustersim: error: --frac-constrained needs --gpu-types A|B|... (the types "
                  "a constrained job is restricted to)\n"));
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --gpu-types T4"), 2);
    CHECK(err_has("clustersim: error: --gpu-types needs --frac-constrained X (the fraction of "
                  "GPU jobs restricted to one of the types)\n"));
    CHECK_EQ_I64(run(BIN " trace gen --out x.csv --gpu-types 'T4|K80|P100|V100M16|V100M32|A10|"
                         "A30|A100|H100' --frac-constrained 0.5"),
                 2);
    CHECK(err_has("clustersim: error: at most 8 GPU types for type constraints\n"));
    CHECK_EQ_I64(run(BIN " trace gen --jobs 400 --out gen1.csv --gpu-types 'T4|A100' "
                         "--frac-constrained 0.5"),
                 0);
    trace_stats s2;
    CHECK(stats_of("gen1.csv", "native", NULL, &s2, NULL));
    CHECK((s2.fields >> TRACE_F_GPU_TYPE) & 1u);
    trace_stats_fini(&s2);
    remove("gen1.csv");
    /* The generator writes nothing its reader refuses: durations drawn beyond the 1e10 s
     * limit are written at it, and a submit time beyond it is an error. */
    CHECK_EQ_I64(run(BIN " trace gen --jobs 20 --duration-median 1e10 --out gen1.csv"), 0);
    CHECK(stats_of("gen1.csv", "native", NULL, &s2, NULL));
    CHECK_EQ_I64(s2.jobs, 20);
    CHECK(s2.dur_max == SIM_TIME_LIMIT_S);
    trace_stats_fini(&s2);
    remove("gen1.csv");
    CHECK_EQ_I64(run(BIN " trace gen --jobs 20 --rate 1e-6 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: job 3 would be submitted at 1.10458e+10 s, beyond the "
                  "1e10 s the trace readers accept: raise --rate or lower --jobs\n"));
    CHECK_EQ_I64(run(BIN " trace gen --jobs 20 --rate 1e-6 --groups 4 --out x.csv"), 2);
    CHECK(err_has("raise --rate or lower --jobs\n"));
    CHECK_EQ_I64(run(BIN " trace gen --zoo --zoo-slo 1e6 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: option --zoo-slo: expected a number in [0, 100000], got "
                  "\"1e6\"\n"));
    CHECK_EQ_I64(run(BIN " trace gen --duration-median 0 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: option --duration-median: expected a duration from 1 s "
                  "(durations are whole seconds) to 1e10 s, got 0\n"));
    CHECK(no_file_like("x.csv"));
    /* Below a second every duration would be written as 1 s, whatever the median. */
    CHECK_EQ_I64(run(BIN " trace gen --duration-median 0.2 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: option --duration-median: expected a duration from 1 s "
                  "(durations are whole seconds) to 1e10 s, got 0.2\n"));
    CHECK(no_file_like("x.csv"));
}

/* With --zoo every row's name and command name the model class and batch size the row
 * carries (the zoo replaces the generator's class), CPU-only rows included. */
static void test_gen_zoo_rows(void)
{
    CHECK_EQ_I64(run(BIN " trace gen --zoo --jobs 300 --seed 5 --out genzoo.csv"), 0);
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    trace_options o = {.tenants = tenants, .models = models, .gpu_types = model_catalog_names(cat)};
    trace_reader *r = NULL;
    sim_diag d;
    CHECK(trace_reader_open(&r, "genzoo.csv", &o, &d) == SIM_OK);
    job_spec j;
    int jobs = 0, agree = 0, zoo_only = 0;
    while (r && trace_reader_next(r, &j, &d) == 1) {
        const char *model = sim_intern_name(models, j.model);
        char name_part[64], command[160];
        snprintf(name_part, sizeof name_part, "-%s-", model);
        snprintf(command, sizeof command, "python train.py --model %s --batch %.0f", model,
                 j.attr[SIM_ATTR_BATCH_SIZE]);
        jobs++;
        agree += strstr(j.name, name_part) && strcmp(j.command, command) == 0;
        /* Classes the generator alone never draws show the zoo's choice got through. */
        zoo_only += !strcmp(model, "inception3") || !strcmp(model, "transformer");
        if (!strstr(j.name, name_part) || strcmp(j.command, command) != 0)
            fprintf(stderr, "row %d: model %s, name %s, command %s\n", jobs, model, j.name,
                    j.command);
    }
    trace_reader_close(r);
    CHECK_EQ_I64(jobs, 300);
    CHECK_EQ_I64(agree, 300);
    CHECK(zoo_only > 0);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    remove("genzoo.csv");
}

/* --frac-gang: that fraction of the GPU jobs are gangs of 2..--gang-max replicas (powers
 * of two), each replica asking for what a job without the option would draw; without
 * the option the replicas column stays empty. Bad values are usage errors. */
static void test_gen_gangs(void)
{
    CHECK_EQ_I64(run(BIN " trace gen --jobs 2000 --seed 9 --frac-gang 0.5 --gang-max 16 "
                         "--out gengang.csv"),
                 0);
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    trace_options o = {.tenants = tenants, .models = models, .gpu_types = model_catalog_names(cat)};
    trace_reader *r = NULL;
    sim_diag d;
    CHECK(trace_reader_open(&r, "gengang.csv", &o, &d) == SIM_OK);
    job_spec j;
    int gpu_jobs = 0, gangs = 0, bad = 0, by_reps[17] = {0};
    while (r && trace_reader_next(r, &j, &d) == 1) {
        if (!j.num_gpus)
            continue;
        gpu_jobs++;
        if (j.replicas <= 1)
            continue;
        gangs++;
        uint32_t per = j.num_gpus / j.replicas;
        bool pow2 = (j.replicas & (j.replicas - 1)) == 0 && j.replicas <= 16;
        bad += !pow2 || per * j.replicas != j.num_gpus ||
               (per != 1 && per != 2 && per != 4 && per != 8);
        if (pow2)
            by_reps[j.replicas]++;
    }
    trace_reader_close(r);
    printf("--frac-gang 0.5: %d gangs of %d GPU jobs (2: %d, 4: %d, 8: %d, 16: %d)\n", gangs,
           gpu_jobs, by_reps[2], by_reps[4], by_reps[8], by_reps[16]);
    CHECK_EQ_I64(bad, 0);
    CHECK(gpu_jobs > 1800);
    CHECK(gangs > 0.45 * gpu_jobs && gangs < 0.55 * gpu_jobs);
    for (int k = 2; k <= 16; k *= 2)
        CHECK(by_reps[k] > gangs / 6);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    remove("gengang.csv");
    /* Without it, no row names replicas. */
    CHECK_EQ_I64(run(BIN " trace gen --jobs 300 --seed 9 --out gengang.csv"), 0);
    trace_stats s;
    CHECK(stats_of("gengang.csv", "native", NULL, &s, NULL));
    CHECK(!((s.fields >> TRACE_F_REPLICAS) & 1u));
    trace_stats_fini(&s);
    remove("gengang.csv");
    CHECK_EQ_I64(run(BIN " trace gen --frac-gang 1.5 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: option --frac-gang: expected a number in [0, 1], got "
                  "\"1.5\"\n"));
    CHECK_EQ_I64(run(BIN " trace gen --frac-gang 0.2 --gang-max 12 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: --gang-max: expected a power of two from 2 to 1024, got "
                  "12\n"));
    CHECK_EQ_I64(run(BIN " trace gen --frac-gang 0.2 --gang-max 2048 --out x.csv"), 2);
    CHECK(err_has("--gang-max"));
    /* Without gangs the option would be ignored: refused instead. */
    CHECK_EQ_I64(run(BIN " trace gen --gang-max 8 --out x.csv"), 2);
    CHECK(err_has("clustersim: error: --gang-max sizes the gangs of --frac-gang X; give X > 0\n"));
    CHECK_EQ_I64(run(BIN " trace gen --frac-gang 0 --gang-max 8 --out x.csv"), 2);
    CHECK(err_has("give X > 0\n"));
    CHECK(no_file_like("x.csv"));
}

/* The --like tolerances on the Philly CSV, stated in the README. */
static void test_like(void)
{
    char buf[1024];
    const char *p = check_shared("pollux_adaptdl/traces/philly.csv.gz", buf, sizeof buf);
    if (!p)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, BIN " trace gen --like %s --format philly --seed 11 --out like.csv.gz",
             p);
    CHECK_EQ_I64(run(cmd), 0);
    trace_stats src, gen;
    sim_intern *st = NULL, *gt = NULL;
    CHECK(stats_of(p, "philly", NULL, &src, &st));
    CHECK(stats_of("like.csv.gz", "native", NULL, &gen, &gt));
    CHECK_EQ_I64(gen.jobs, src.jobs);
    /* Mean arrival rate within 2 %. */
    CHECK_NEAR(trace_stats_rate_h(&gen), trace_stats_rate_h(&src), 0.02);
    /* Share of arrivals in each hour of day within 10 % (relative). */
    double worst_hour = 0;
    for (int h = 0; h < 24; h++) {
        double a = (double)src.by_hour[h] / (double)src.jobs;
        double b = (double)gen.by_hour[h] / (double)gen.jobs;
        worst_hour = fmax(worst_hour, fabs(a - b) / a);
    }
    CHECK(worst_hour < 0.10);
    /* GPU-count mix: each value's share within 0.5 percentage points. */
    double worst_mix = 0;
    for (uint32_t k = 0; k < src.n_gpu_values; k++) {
        double b = 0;
        for (uint32_t q = 0; q < gen.n_gpu_values; q++)
            if (gen.gpu_value[q] == src.gpu_value[k])
                b = (double)gen.gpu_count[q] / (double)gen.jobs;
        worst_mix = fmax(worst_mix, fabs((double)src.gpu_count[k] / (double)src.jobs - b));
    }
    CHECK(worst_mix < 0.005);
    /* Duration quantiles p10..p95 within 5 %, p99 within 10 %. */
    double worst_q = 0;
    for (int q = 0; q < TRACE_STATS_QN; q++) {
        double rel = fabs(gen.dur_q[q] - src.dur_q[q]) / src.dur_q[q];
        if (q < TRACE_STATS_QN - 1)
            worst_q = fmax(worst_q, rel);
        else
            CHECK(rel < 0.10);
    }
    CHECK(worst_q < 0.05);
    /* Tenants: the same names, each one's share of jobs within 1 percentage point. */
    double worst_tenant = 0;
    for (uint32_t t = 1; t < src.n_tenants; t++) {
        if (!src.tenant_jobs[t])
            continue;
        const char *name = sim_intern_name(st, t);
        uint32_t g = sim_intern_find(gt, name, strlen(name));
        double b = g != SIM_INTERN_NONE && g < gen.n_tenants ? (double)gen.tenant_jobs[g] : 0;
        worst_tenant = fmax(worst_tenant, fabs((double)src.tenant_jobs[t] / (double)src.jobs -
                                               b / (double)gen.jobs));
    }
    CHECK(worst_tenant < 0.01);
    printf("--like Philly: rate %.3f vs %.3f jobs/h; worst hour-of-day share error %.2f %%; "
           "worst GPU-mix error %.3f points; worst duration quantile error %.2f %% (p99 %.2f %%); "
           "worst tenant share error %.3f points\n",
           trace_stats_rate_h(&gen), trace_stats_rate_h(&src), 100 * worst_hour, 100 * worst_mix,
           100 * worst_q,
           100 * fabs(gen.dur_q[TRACE_STATS_QN - 1] - src.dur_q[TRACE_STATS_QN - 1]) /
               src.dur_q[TRACE_STATS_QN - 1],
           100 * worst_tenant);
    trace_stats_fini(&src);
    trace_stats_fini(&gen);
    sim_intern_destroy(st);
    sim_intern_destroy(gt);
    remove("like.csv.gz");
}

/* Every staged trace replays to the end under fifo and binpack. */
static void replay(const char *rel, const char *format, const char *opt, const char *cluster,
                   const char *jobs)
{
    char buf[1024], cl[1024];
    const char *p = check_shared(rel, buf, sizeof buf);
    if (!p)
        return;
    if (cluster[0] == '@') {
        const char *c = check_shared(cluster + 1, cl, sizeof cl);
        if (!c)
            return;
        cluster = c;
    }
    static const char *const policies[2] = {"fifo", "binpack"};
    for (int k = 0; k < 2; k++) {
        char cmd[3000], want[128];
        snprintf(cmd, sizeof cmd,
                 BIN " run --quiet --trace %s --format %s %s%s --cluster %s --policy %s "
                     "--sample-interval 0",
                 p, format, opt ? "--trace-opt " : "", opt ? opt : "", cluster, policies[k]);
        int rc = run(cmd);
        CHECK_EQ_I64(rc, 0);
        snprintf(want, sizeof want, "%s: %s jobs (%s done, 0 rejected, 0 unfinished", policies[k],
                 jobs, jobs);
        CHECK(err_has(want));
    }
}

static void test_replays(void)
{
    char iso_buf[1024];
    const char *iso = check_shared("gavel/gavel_simulation_isolated_throughputs.csv", iso_buf,
                                   sizeof iso_buf);
    CHECK(!iso || derive_steps(iso, "gavel_steps_derived.csv"));
    replay("pollux_adaptdl/traces/philly.csv.gz", "philly", NULL, "100xV100M16:8", "82247");
    replay("muri/sim_trace_data/trace1.csv", "muri", NULL, "@muri/n8g8.csv", "1494");
    replay("muri/sim_trace_data/trace2.csv.gz", "muri", NULL, "@muri/n8g8.csv", "5755");
    replay("muri/sim_trace_data/trace3.csv", "muri", NULL, "@muri/n8g8.csv", "992");
    replay("muri/sim_trace_data/trace4.csv", "muri", NULL, "@muri/n8g8.csv", "2638");
    replay("tiresias/60_job.csv", "tiresias", NULL, "@tiresias/n32g4.csv", "60");
    replay("gavel/traces/physical_cluster/max_min_fairness.trace", "gavel",
           "steps_table=gavel_steps_derived.csv", "8xV100M16:4", "96");
    replay("gavel/traces/msr_seed0/6214e9.trace.gz", "gavel",
           "steps_table=gavel_steps_derived.csv", "64xV100M16:8", "2000");
    /* The openb pods on PAI's machines: 5 pods ask for more than any PAI node has. */
    char buf[1024], cl[1024], cmd[4096];
    const char *p = check_shared("alibaba_gpu_v2023/openb_pod_list_default.csv", buf, sizeof buf);
    const char *c = check_shared("alibaba_pai_v2020/pai_machine_spec.csv", cl, sizeof cl);
    if (p && c) {
        snprintf(cmd, sizeof cmd,
                 BIN " run --quiet --trace %s --format alibaba2023 --cluster %s --policy binpack "
                     "--sample-interval 0",
                 p, c);
        CHECK_EQ_I64(run(cmd), 0);
        CHECK(err_has("binpack: 8152 jobs (8147 done, 5 rejected, 0 unfinished"));
    }
    /* The fixtures of formats whose full traces are not staged (Helios, PAI jobs, the
     * Philly JSON) replay too. */
    CHECK_EQ_I64(run(BIN " run --quiet --trace " FIX "good_helios.csv --format helios "
                         "--cluster 4xV100M16:8 --policy fifo --sample-interval 0"),
                 0);
    CHECK(err_has("fifo: 3 jobs (3 done"));
    CHECK_EQ_I64(run(BIN " run --quiet --trace " FIX "good_pai_jobs.csv --format alibaba2020 "
                         "--trace-opt tasks=" FIX "good_pai_tasks.csv --cluster 4xV100M32:8 "
                         "--policy binpack --sample-interval 0"),
                 0);
    CHECK(err_has("binpack: 3 jobs (3 done"));
    CHECK(err_has("note: the alibaba2020 format left out 1 records that are not jobs"));
    CHECK_EQ_I64(run(BIN " run --quiet --trace " FIX "good_philly.json --format philly "
                         "--cluster 4xV100M16:8 --policy fifo --sample-interval 0"),
                 0);
    CHECK(err_has("fifo: 2 jobs (2 done"));
}

/* trace curves writes service names unquoted: a --prefix the --demand reader would split
 * or refuse is refused; one of 58 bytes, the longest, is read back. */
static void test_curves_prefix(void)
{
    static const char *const bad[][2] = {{"'a,b'", "\"a,b\""},
                                         {"'a\"b'", "\"a\\\"b\""},
                                         {"\"$(printf 'a\\nb')\"", "\"a\\x0Ab\""},
                                         {"\"$(printf 'a\\rb')\"", "\"a\\x0Db\""}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char cmd[1024], want[256];
        snprintf(cmd, sizeof cmd, BIN " trace curves --prefix %s --out curves.csv", bad[k][0]);
        CHECK_EQ_I64(run(cmd), 2);
        snprintf(want, sizeof want,
                 "clustersim: error: option --prefix: expected a name of at most 58 bytes "
                 "without a comma, quote or line break, got %s\n",
                 bad[k][1]);
        CHECK(err_has(want));
        CHECK(no_file_like("curves.csv"));
    }
    char name[60];
    memset(name, 'x', 58);
    name[58] = '\0';
    char cmd[1024];
    snprintf(cmd, sizeof cmd, BIN " trace curves --services 12 --prefix %s --out curves.csv", name);
    CHECK_EQ_I64(run(cmd), 0);
    sim_curves c;
    sim_diag d;
    CHECK_EQ_I64(trace_curves_load(&c, "curves.csv", &d), SIM_OK);
    CHECK_EQ_I64(c.n, 12);
    trace_curves_free(&c);
    strcat(name, "x");
    snprintf(cmd, sizeof cmd, BIN " trace curves --prefix %s --out curves.csv", name);
    CHECK_EQ_I64(run(cmd), 2);
    CHECK(err_has("option --prefix: expected a name of at most 58 bytes"));
    remove("curves.csv");
}

/* Every option of trace curves: a bad value is refused with its message and no file; the
 * defaults give 2 services of 145 points (a day in steps of 10 minutes) within 0..16;
 * peak = trough without noise gives that count at every point. */
static void test_curves_options(void)
{
    static const char *const bad[][2] = {
        {"--services 0", "option --services: expected an integer 1..100000, got \"0\""},
        {"--services 100001", "option --services: expected an integer 1..100000, got \"100001\""},
        {"--peak x", "option --peak: expected an integer 0..1000000, got \"x\""},
        {"--peak -1", "option --peak: expected an integer 0..1000000, got \"-1\""},
        {"--trough 1000001", "option --trough: expected an integer 0..1000000, got \"1000001\""},
        {"--trough 20", "--trough 20 is above --peak 16"},
        {"--period 5parsecs",
         "option --period: expected a duration such as 90, 90s, 15m, 2h or 1d, got \"5parsecs\""},
        {"--period 0", "--period and --step must be positive"},
        {"--step 0", "--period and --step must be positive"},
        {"--step 1e-7",
         "option --step: expected at least 1e-6 s (the time resolution of the curves), got "
         "1e-07 s"},
        {"--length -1", "option --length: expected a duration, not a negative number, got \"-1\""},
        {"--length 200000d",
         "option --length: expected a duration of at most 10000000000 s, got \"200000d\""},
        {"--length 1e8 --step 1",
         "options --length and --step: 100000001 points per service, at most 10,000,000 (give a "
         "larger --step or a shorter --length)"},
        {"--noise 11", "option --noise: expected a number in [0, 10], got \"11\""},
        {"--noise nan", "option --noise: expected a number in [0, 10], got \"nan\""},
        {"--seed x", "option --seed: expected an integer 0..18446744073709551615, got \"x\""},
        {"--bogus", "unknown option '--bogus' for 'clustersim trace curves'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char cmd[512], want[512];
        snprintf(cmd, sizeof cmd, BIN " trace curves %s --out cv.csv", bad[k][0]);
        CHECK_EQ_I64(run(cmd), 2);
        snprintf(want, sizeof want, "clustersim: error: %s\n", bad[k][1]);
        CHECK(err_has(want));
        CHECK(no_file_like("cv.csv"));
    }
    CHECK_EQ_I64(run(BIN " trace curves"), 2);
    CHECK(err_has("clustersim: error: clustersim trace curves needs --out FILE\n"));

    CHECK_EQ_I64(run(BIN " trace curves --out cv.csv"), 0);
    sim_curves c;
    sim_diag d;
    CHECK_EQ_I64(trace_curves_load(&c, "cv.csv", &d), SIM_OK);
    CHECK_EQ_I64(c.n, 2);
    CHECK_EQ_I64(c.n_pts, 290);
    uint32_t over = 0;
    for (uint32_t s = 0; s < c.n; s++) {
        CHECK_EQ_I64(c.count[s], 145);
        for (uint32_t i = 0; i < c.count[s]; i++) {
            const sim_curve_point *pt = &c.pts[c.first[s] + i];
            over += pt->replicas > 16 || pt->t_us != (sim_time)i * 600000000;
        }
    }
    CHECK_EQ_I64(over, 0);
    CHECK(strcmp(c.names[0], "svc0") == 0 && strcmp(c.names[1], "svc1") == 0);
    trace_curves_free(&c);

    CHECK_EQ_I64(run(BIN " trace curves --services 3 --peak 5 --trough 5 --noise 0 --step 1h "
                         "--length 2h --prefix web --out cv.csv"),
                 0);
    char *text = check_slurp("cv.csv", NULL);
    CHECK(text && strcmp(text, "service,time,replicas\nweb0,0,5\nweb0,3600,5\nweb0,7200,5\n"
                               "web1,0,5\nweb1,3600,5\nweb1,7200,5\n"
                               "web2,0,5\nweb2,3600,5\nweb2,7200,5\n") == 0);
    free(text);
    remove("cv.csv");
}

int main(void)
{
    sim_diag d;
    if (model_catalog_load(&cat, model_catalog_default_path(), &d) != SIM_OK)
        return 1;
    test_stats_golden();
    test_stats_cli();
    test_convert();
    test_gen();
    test_gen_zoo_rows();
    test_gen_gangs();
    test_like();
    test_replays();
    test_curves_prefix();
    test_curves_options();
    model_catalog_destroy(cat);
    remove("tool.out");
    remove("tool.err");
    return check_done();
}
