/*
 * test_pack.c: `clustersim pack` and the fragmentation columns of `clustersim run`, end
 * to end through the executable. The study is deterministic for a seed (and does not
 * depend on --jobs), its table has one row per policy and 1 % step with allocation and
 * failures that never decrease (nothing departs) and allocation within the arrived
 * demand; bad options and inputs get their exact one-line diagnostics and status 2; a
 * missing gnuplot still leaves pack.csv; openb pod lists out of order or without times
 * are studied (run refuses them). run's timeseries carries the hand-computed
 * fragmentation of a two-job trace, with the workload from a first pass, from standard
 * input or from the arrivals. On the openb traces (when ../shared is present) the study runs for two policies.
 */
#include "check.h"

#include <unistd.h>

#define CLUSTER "2xA100:4:cpu=32000:mem=262144,3xT4:2:cpu=16000:mem=131072"
#define FIX SIM_SOURCE_DIR "/tests/fixtures/"

static int run(const char *args, const char *err_file)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>%s", SIM_BINARY, args, err_file);
    return check_system(cmd);
}

/* The first line of a file (without its newline), into buf. */
static const char *first_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    if (fgets(buf, (int)size, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
    return buf;
}

static void expect_error(const char *args, int status, const char *message)
{
    CHECK_EQ_I64(run(args, "pack_err.txt"), status);
    char line[1024];
    CHECK_STR(first_line("pack_err.txt", line, sizeof line), message);
}

/*
 * Check a pack.csv: the header, rows for `policies` policies x steps 0..demand in order,
 * per policy allocation and failures non-decreasing and allocation <= demand %.
 */
static void check_table(const char *path, int policies, int demand)
{
    size_t len;
    char *text = check_slurp(path, &len);
    CHECK(text != NULL);
    if (!text)
        return;
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    CHECK_STR(line, "policy,demand_pct,seeds,alloc_mean,alloc_sd,frag_amount_mean,"
                    "frag_amount_sd,frag_ratio_mean,frag_ratio_sd,failed_mean,failed_sd");
    int rows = 0, bad_order = 0, bad_monotone = 0, bad_bound = 0;
    char prev_policy[64] = "";
    double prev_alloc = 0, prev_failed = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char policy[64];
        int step, seeds;
        double v[8];
        if (sscanf(line, "%63[^,],%d,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", policy, &step,
                   &seeds, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 11) {
            bad_order++;
            continue;
        }
        if (step != rows % (demand + 1))
            bad_order++;
        if (step > 0 && strcmp(policy, prev_policy) == 0) {
            if (v[0] + 1e-9 < prev_alloc || v[6] + 1e-9 < prev_failed)
                bad_monotone++;
        } else if (step != 0) {
            bad_order++;
        }
        if (v[0] > step + 1e-6 || v[0] < 0 || v[4] < 0 || v[4] > 100 || v[2] < 0)
            bad_bound++;
        snprintf(prev_policy, sizeof prev_policy, "%s", policy);
        prev_alloc = v[0];
        prev_failed = v[6];
        rows++;
    }
    CHECK_EQ_I64(rows, policies * (demand + 1));
    CHECK_EQ_I64(bad_order, 0);
    CHECK_EQ_I64(bad_monotone, 0);
    CHECK_EQ_I64(bad_bound, 0);
    free(text);
}

static void test_study(void)
{
    const char *base = "pack --trace " FIX "pack_tasks.csv --cluster " CLUSTER;
    char args[2048];
    snprintf(args, sizeof args, "%s --seeds 3..5 --out pack_a", base);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    snprintf(args, sizeof args, "%s --seeds 3..5 --out pack_b --jobs 2", base);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    snprintf(args, sizeof args, "%s --seeds 6,7,8 --out pack_c", base);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    char *a = check_slurp("pack_a/pack.csv", NULL), *b = check_slurp("pack_b/pack.csv", NULL),
         *c = check_slurp("pack_c/pack.csv", NULL);
    CHECK(a && b && c);
    if (a && b && c) {
        CHECK(strcmp(a, b) == 0);
        CHECK(strcmp(a, c) != 0);
    }
    free(a);
    free(b);
    free(c);
    check_table("pack_a/pack.csv", 7, 130);
    /* Another demand and policy subset. */
    snprintf(args, sizeof args, "%s --seeds 1 --demand 80%% --policies fgd,random --out pack_d",
             base);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    check_table("pack_d/pack.csv", 2, 80);
    /* A cluster too small for the tasks: arrivals stop short of the demand, and a note
     * says so. */
    snprintf(args, sizeof args, "pack --trace " FIX "pack_tasks.csv --cluster 1xT4:1 --seeds 1 "
                                "--policies fgd --out pack_small");
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    char *note = check_slurp("pack_err.txt", NULL);
    CHECK(note && strstr(note, "clustersim: note: for some seed the arrivals stopped at "));
    free(note);
    /* Without gnuplot on the PATH the table is still written, with a note. */
    remove("pack_e/pack.csv");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "PATH=/nonexistent %s %s --seeds 1 --policies binpack --out pack_e "
             ">/dev/null 2>pack_err.txt",
             SIM_BINARY, base);
    CHECK_EQ_I64(check_system(cmd), 0);
    char *err = check_slurp("pack_err.txt", NULL);
    CHECK(err && strstr(err, "clustersim: note: gnuplot was not found, so pack_e/pack.png was "
                             "not drawn; pack.csv is written. Install gnuplot (Debian: "
                             "apt-get install gnuplot-nox) for the figure\n"));
    free(err);
    check_table("pack_e/pack.csv", 1, 130);
    /* With gnuplot (when installed) the figure is drawn. */
    if (check_system("command -v gnuplot >/dev/null 2>&1") == 0) {
        remove("pack_d/pack.png");
        snprintf(args, sizeof args, "%s --seeds 1 --policies fgd --out pack_d", base);
        CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
        CHECK(access("pack_d/pack.png", R_OK) == 0);
    }
}

static void test_bad_input(void)
{
    const char *base = "pack --trace " FIX "pack_tasks.csv --cluster " CLUSTER " --out pack_x";
    char args[2048];
    snprintf(args, sizeof args, "%s --demand abc", base);
    expect_error(args, 2, "clustersim: error: option --demand: expected a percentage 1..1000 "
                          "such as 130%, got \"abc\"");
    snprintf(args, sizeof args, "%s --demand 0%%", base);
    expect_error(args, 2, "clustersim: error: option --demand: expected a percentage 1..1000 "
                          "such as 130%, got \"0%\"");
    snprintf(args, sizeof args, "%s --seeds 9..3", base);
    expect_error(args, 2, "clustersim: error: option --seeds: expected A..B with A <= B and "
                          "at most 10000 seeds, got \"9..3\"");
    snprintf(args, sizeof args, "%s --seeds 1,x", base);
    expect_error(args, 2, "clustersim: error: option --seeds: expected an integer "
                          "0..18446744073709551615, got \"x\"");
    snprintf(args, sizeof args, "%s --seeds 1,1", base);
    expect_error(args, 2, "clustersim: error: option --seeds: seed 1 is given twice");
    snprintf(args, sizeof args, "%s --policies fgd,fgd", base);
    expect_error(args, 2, "clustersim: error: option --policies: 'fgd' is listed twice");
    snprintf(args, sizeof args, "%s --jobs 0", base);
    expect_error(args, 2, "clustersim: error: option --jobs: expected an integer 1..256, got "
                          "\"0\"");
    snprintf(args, sizeof args, "%s --policies fgd,quota", base);
    expect_error(args, 2, "clustersim: error: option --policies: 'quota' holds tasks back by "
                          "design (tenant quotas), so the packing study cannot measure it; use "
                          "clustersim run");
    /* Policies that place only at the end of their rounds would leave tasks that fit
     * unplaced (gavel counted 3 of 4 one-GPU tasks failed beside a free GPU). */
    snprintf(args, sizeof args, "%s --policies gavel", base);
    expect_error(args, 2,
                 "clustersim: error: option --policies: 'gavel' holds tasks back by "
                 "design (it places jobs only at the end of its rounds), so the packing "
                 "study cannot measure it; use clustersim run");
    snprintf(args, sizeof args, "%s --policies binpack,optimus", base);
    expect_error(args, 2,
                 "clustersim: error: option --policies: 'optimus' holds tasks back by "
                 "design (it places jobs only at the end of its allocation periods), so "
                 "the packing study cannot measure it; use clustersim run");
    snprintf(args, sizeof args, "%s --policies fgd --policy-opt binpack:backfill=true", base);
    expect_error(args, 2, "clustersim: error: --policy-opt 'binpack:backfill=true': policy "
                          "'binpack' is not run here (the policies run: fgd)");
    snprintf(args, sizeof args, "%s --policy-opt fgd:cache=3", base);
    expect_error(args, 2, "clustersim: error: policy 'fgd': option 'cache': expected 0 or a "
                          "power of two, got 3");
    snprintf(args, sizeof args, "%s --bogus", base);
    expect_error(args, 2, "clustersim: error: unknown option '--bogus' for 'clustersim pack' "
                          "(see clustersim pack --help)");
    expect_error("pack --cluster " CLUSTER, 2,
                 "clustersim: error: clustersim pack needs --trace FILE (see clustersim pack "
                 "--help)");
    /* The list of known policies grows with the registry: check the message up to it. */
    snprintf(args, sizeof args, "%s --policies fgd,nope", base);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 2);
    char line[1024];
    first_line("pack_err.txt", line, sizeof line);
    CHECK(strncmp(line, "clustersim: error: option --policies: unknown policy 'nope' (known: ",
                  68) == 0);
    CHECK(strstr(line, "fgd") && strstr(line, "gpuclustering"));
    expect_error("pack --trace " FIX "pack_cpu_only.csv --cluster " CLUSTER " --out pack_x", 2,
                 "clustersim: " FIX "pack_cpu_only.csv: error: the trace has no task asking "
                 "for a GPU, so there is nothing to pack");
    expect_error("pack --trace " FIX "pack_bad_row.csv --cluster " CLUSTER " --out pack_x", 2,
                 "clustersim: " FIX "pack_bad_row.csv:3:5: error: field 'gpu_milli': expected "
                 "an integer 1..1000, got \"abc\"");
}

/* pack reads only the tasks' requests: openb pod lists out of creation order, and those
 * without time columns, are studied; run sorts the first and refuses the second. */
static void test_shapes_only(void)
{
    CHECK_EQ_I64(run("pack --format alibaba2023 --trace " FIX "openb_unsorted.csv --cluster "
                     CLUSTER " --policies fgd,bestfit --out pack_u",
                     "pack_err.txt"),
                 0);
    check_table("pack_u/pack.csv", 2, 130);
    CHECK_EQ_I64(run("pack --format alibaba2023 --trace " FIX "openb_no_times.csv --cluster "
                     CLUSTER " --policies gpupacking --demand 50 --out pack_n",
                     "pack_err.txt"),
                 0);
    check_table("pack_n/pack.csv", 1, 50);
    /* run sorts an unsorted pod list, and refuses one without times. */
    CHECK_EQ_I64(run("run --format alibaba2023 --trace " FIX "openb_unsorted.csv --cluster "
                     CLUSTER " --quiet", "pack_err.txt"),
                 0);
    expect_error("run --format alibaba2023 --trace " FIX "openb_no_times.csv --cluster " CLUSTER
                 " --quiet",
                 2,
                 "clustersim: " FIX "openb_no_times.csv:1: error: header lacks column "
                 "'creation_time': this pod list has no times (like the published multigpu "
                 "variants), so only clustersim pack, which uses requests alone, can read it");
}

/* Two jobs on one node of 2 GPUs: w1 (0.5 GPU) and w2 (a whole GPU) both start at 0 on
 * GPUs 0 and 1 (binpack): free 500 and 0. M = {0.5: 1, whole: 1}: the 0.5 task fits and
 * leaves no fragment; the whole task does not fit, so the 500 free is a fragment for it:
 * 250 milli-GPU on average = 0.25 GPUs, half of the 0.5 idle. */
static void test_run_columns(void)
{
    CHECK_EQ_I64(run("run --trace " FIX "frag_two_jobs.csv --cluster 1xT4:2 --out run_f "
                     "--quiet",
                     "pack_err.txt"),
                 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s run --trace - --cluster 1xT4:2 --out run_g --quiet <%sfrag_two_jobs.csv "
             "2>pack_err.txt",
             SIM_BINARY, FIX);
    CHECK_EQ_I64(check_system(cmd), 0);
    CHECK_EQ_I64(run("run --trace " FIX "frag_two_jobs.csv --cluster 1xT4:2 --out run_h "
                     "--quiet --frag-workload arrivals",
                     "pack_err.txt"),
                 0);
    static const char *const dirs[3] = {"run_f", "run_g", "run_h"};
    for (int k = 0; k < 3; k++) {
        char path[64];
        snprintf(path, sizeof path, "%s/timeseries.csv", dirs[k]);
        char *ts = check_slurp(path, NULL);
        CHECK(ts && strstr(ts, ",nodes_down,frag_gpus,frag_ratio\n0.000000,0,2,1.500,0.750000,"
                               "1.500,0.750000,0.000000,0,0.250000,0.500000\n"));
        free(ts);
    }
    char *sum = check_slurp("run_f/summary.json", NULL);
    CHECK(sum && strstr(sum, "\"frag_gpus_mean\": 0.250000, \"frag_ratio_mean\": 0.500000"));
    free(sum);
    /* none: no fragmentation columns or figures, and the same jobs.csv. */
    CHECK_EQ_I64(run("run --trace " FIX "frag_two_jobs.csv --cluster 1xT4:2 --out run_n "
                     "--quiet --frag-workload none",
                     "pack_err.txt"),
                 0);
    char *ts = check_slurp("run_n/timeseries.csv", NULL);
    CHECK(ts && strstr(ts, ",nodes_down\n0.000000,0,2,1.500,") && !strstr(ts, "frag_"));
    free(ts);
    sum = check_slurp("run_n/summary.json", NULL);
    CHECK(sum && !strstr(sum, "frag_gpus_mean"));
    free(sum);
    char *j1 = check_slurp("run_f/jobs.csv", NULL), *j2 = check_slurp("run_n/jobs.csv", NULL);
    CHECK(j1 && j2 && strcmp(j1, j2) == 0);
    free(j1);
    free(j2);
    expect_error("run --trace " FIX "frag_two_jobs.csv --cluster 1xT4:2 --frag-workload all",
                 2, "clustersim: error: option --frag-workload: expected trace, arrivals or "
                    "none, got \"all\"");
}

static void test_openb(void)
{
    char trace[1024], nodes[1024];
    if (!check_shared("alibaba_gpu_v2023/openb_pod_list_default.csv", trace, sizeof trace) ||
        !check_shared("alibaba_gpu_v2023/openb_node_list_gpu_node.csv", nodes, sizeof nodes))
        return;
    char args[4096];
    snprintf(args, sizeof args,
             "pack --format alibaba2023 --trace %s --cluster %s --seeds 42 "
             "--policies fgd,binpack --out pack_openb",
             trace, nodes);
    CHECK_EQ_I64(run(args, "pack_err.txt"), 0);
    check_table("pack_openb/pack.csv", 2, 130);
    /* On 6,212 GPUs the last task ends within 1 % of the demand: no note. */
    char *err = check_slurp("pack_err.txt", NULL);
    CHECK(err && !strstr(err, "arrivals stopped"));
    free(err);
}

int main(void)
{
    test_study();
    test_bad_input();
    test_shapes_only();
    test_run_columns();
    test_openb();
    return check_done();
}
