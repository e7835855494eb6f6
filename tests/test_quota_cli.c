/*
 * test_quota_cli.c: the quota and duration-prediction commands end to end.
 *  - Bad quota files (--quotas, --quota-share) and bad options each give their exact
 *    one-line diagnostic and exit status 2.
 *  - Notes: a quota file naming no tenant; quota tenants with no job before the horizon.
 *  - A quota under half a milli-GPU is no quota: the metrics stay finite. A tenant name
 *    of 1500 characters fits summary.json's quota metrics.
 *  - A run with quotas writes the quota metrics (summary.json's quota_metrics, the
 *    timeseries columns) and lost_gpu_hours; --quota-share divides the cluster's GPUs in
 *    proportion to the weights (3:2:2:1 of 32 GPUs = 12, 8, 8, 4).
 *  - A job whose master finds no CPU does not keep a job of the same trainer requests
 *    but no master from starting in the same pass (j2 at 61 s, after profiling, not when
 *    j0 ends at 10060 s): a failed shape includes the roles.
 *  - `model eval --kind duration` prints its table on a generated trace and on a run's
 *    jobs.csv; the Philly trace (shared data) runs under quota, quota borrow=false and
 *    fairshare with quotas proportional to the VC sizes.
 */
#include "check.h"

#include <stdbool.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/"
#define OUT "quota_cli_out"

/* Run the binary with args; stderr into OUT/err.txt, stdout into OUT/out.txt. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >" OUT "/out.txt 2>" OUT "/err.txt", SIM_BINARY, args);
    return check_system(cmd);
}

static char *err_text(void)
{
    return check_slurp(OUT "/err.txt", NULL);
}

/* The diagnostic printed for a run must end with `tail`, and the exit status be `code`
 * (2 for bad input and for a file that cannot be read). */
static void expect_status(const char *args, const char *tail, int code)
{
    int rc = run(args);
    char *e = err_text();
    CHECK_EQ_I64(rc, code);
    bool ok = e && strstr(e, tail) != NULL;
    if (!ok)
        fprintf(stderr, "for: %s\n  expected: %s\n  got: %s", args, tail, e ? e : "(none)");
    CHECK(ok);
    free(e);
}

static void expect_error(const char *args, const char *tail)
{
    expect_status(args, tail, 2);
}

/* The jobs column of the table row `name` in text (-1 when absent). */
static long table_jobs(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = text ? strstr(text, key) : NULL;
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static double json_number(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? atof(p + strlen(key)) : NAN;
}

static void test_roles_shape(void)
{
    FILE *f = fopen(OUT "/roles.csv", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("job_id,submit_time,duration,num_gpus,gpu_milli,replicas,cpu_milli,mem_mib,tenant,"
          "priority,master_cpu_milli\n"
          "j0,0.0,10000,1,1000,1,14000,1024,t00,0,\n"
          "j1,1.0,100,1,1000,1,1000,1024,t00,0,4000\n"
          "j2,1.0,100,1,1000,1,1000,1024,t00,0,\n",
          f);
    fclose(f);
    f = fopen(OUT "/roles_q.csv", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("tenant,quota_gpus\nt00,4\n", f);
    fclose(f);
    CHECK(run("run --trace " OUT "/roles.csv --cluster 1xV100M16:8:cpu=16000:mem=65536 --quotas " OUT
              "/roles_q.csv --policy quota --policy-opt order=submit --quiet --out " OUT
              "/roles") == 0);
    char *j = check_slurp(OUT "/roles/jobs.csv", NULL);
    CHECK(j && strstr(j, "\nj2,t00,") && strstr(strstr(j, "\nj2,t00,"), ",done,1.000000,61.000000,"));
    free(j);
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

/* A quota under half a milli-GPU is no quota, to the metrics as to the policy: with
 * 1e-300, used / quota overflowed and summary.json and timeseries.csv got "-nan". */
static void test_tiny_quota(const char *base)
{
    char args[2048];
    if (!write_file(OUT "/tiny_q.csv", "tenant,quota_gpus\nt00,1e-300\nt01,4\n"))
        return;
    snprintf(args, sizeof args,
             "%s --quotas " OUT "/tiny_q.csv --sample-interval 60 --out " OUT "/tiny", base);
    CHECK_EQ_I64(run(args), 0);
    char *sum = check_slurp(OUT "/tiny/summary.json", NULL);
    char *ts = check_slurp(OUT "/tiny/timeseries.csv", NULL);
    CHECK(sum && ts);
    if (sum && ts) {
        CHECK(strstr(sum, ": -nan") == NULL && strstr(sum, ": nan") == NULL);
        CHECK(strstr(ts, ",-nan") == NULL && strstr(ts, ",nan") == NULL);
        CHECK(strstr(sum, "\"t00\": {\"quota_gpus\": 0.000000, ") != NULL);
        double jain = json_number(sum, "\"jain_mean\": ");
        CHECK(jain > 0 && jain <= 1.0);
    }
    free(sum);
    free(ts);
}

/* A tenant name of 1500 characters: summary.json's quota metrics are sized from the
 * names (a fixed 320 bytes per tenant failed the finished run, exit 1, no outputs). */
static void test_long_tenant(void)
{
    char name[1501], text[4096], args[1024];
    memset(name, 'x', 1500);
    name[1500] = '\0';
    snprintf(text, sizeof text,
             "job_id,submit_time,duration,num_gpus,tenant,priority\nj1,0,100,1,%s,1\n", name);
    if (!write_file(OUT "/long.csv", text))
        return;
    snprintf(text, sizeof text, "tenant,quota_gpus\n%s,2\n", name);
    if (!write_file(OUT "/long_q.csv", text))
        return;
    snprintf(args, sizeof args,
             "run --trace " OUT "/long.csv --cluster 1xV100M16:4 --policy quota --quotas " OUT
             "/long_q.csv --quiet --out " OUT "/long");
    CHECK_EQ_I64(run(args), 0);
    char *sum = check_slurp(OUT "/long/summary.json", NULL);
    snprintf(text, sizeof text, "\"%s\": {\"quota_gpus\": 2.000000, \"used_gpus_mean\"", name);
    CHECK(sum && strstr(sum, text) != NULL);
    free(sum);
}

int main(void)
{
    CHECK(check_system("mkdir -p " OUT) == 0);
    test_roles_shape();
    CHECK(run("trace gen --out " OUT "/gen.csv --jobs 800 --seed 4 --tenants 4 --rate 240 "
              "--frac-cpu 0") == 0);
    const char *base = "run --trace " OUT "/gen.csv --cluster 4xV100M16:8 --quiet --policy quota";
    char args[2048];
    static const struct {
        const char *opt, *file, *tail;
    } bad[] = {
        {"--quotas", "bad_quotas_header.csv",
         "bad_quotas_header.csv:1: error: header lacks column 'tenant'; expected "
         "tenant,quota_gpus\n"},
        {"--quotas", "bad_quotas_nonnum.csv",
         "bad_quotas_nonnum.csv:2:2: error: field 'quota_gpus': expected a number in [0, "
         "1e+09], got \"four\"\n"},
        {"--quotas", "bad_quotas_negative.csv",
         "bad_quotas_negative.csv:2:2: error: field 'quota_gpus': expected a number in [0, "
         "1e+09], got \"-1\"\n"},
        {"--quotas", "bad_quotas_dup.csv",
         "bad_quotas_dup.csv:4:1: error: field 'tenant': \"A\" appears twice (first on line "
         "2)\n"},
        {"--quotas", "bad_quotas_empty.csv",
         "bad_quotas_empty.csv:1: error: empty file: expected the header tenant,quota_gpus\n"},
        {"--quotas", "bad_quotas_tenant.csv",
         "bad_quotas_tenant.csv:2:1: error: field 'tenant': expected a tenant name, got \"\"\n"},
        {"--quota-share", "bad_quota_share_zero.csv",
         "bad_quota_share_zero.csv: error: the weights in column 'node num' sum to 0\n"},
        {"--quota-share", "bad_quota_share_nonnum.csv",
         "bad_quota_share_nonnum.csv:3:2: error: field 'node num': expected a number in [0, "
         "1e+09], got \"x\"\n"},
        {"--quota-share", "bad_quota_share_onecol.csv",
         "bad_quota_share_onecol.csv:1: error: header has 1 column(s); expected the tenant "
         "column and a weight column\n"},
        {"--quota-share", "good_quota_share.csv:nodes",
         "good_quota_share.csv:1: error: header has no weight column 'nodes' after the tenant "
         "column\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "%s %s '" FIX "%s'", base, bad[i].opt, bad[i].file);
        expect_error(args, bad[i].tail);
    }
    snprintf(args, sizeof args, "%s --quotas " OUT "/missing.csv", base);
    expect_status(args, OUT "/missing.csv: error: cannot open: No such file or directory\n", 2);
    snprintf(args, sizeof args,
             "%s --quotas '" FIX "good_quotas.csv' --quota-share '" FIX "good_quota_share.csv'",
             base);
    expect_error(args, "error: give --quotas or --quota-share, not both\n");
    snprintf(args, sizeof args, "%s --policy-opt learner=svm", base);
    expect_error(args, "error: policy 'quota': option 'learner': expected one of gbt, ridge, "
                       "got \"svm\"\n");
    snprintf(args, sizeof args, "%s --policy-opt priority=vip", base);
    expect_error(args, "error: policy 'quota': option 'priority': expected one of trace, qos, "
                       "hash, all, got \"vip\"\n");
    /* Likely mistakes run, with a note. */
    FILE *q = fopen(OUT "/typo_quotas.csv", "w");
    fputs("tenant,quota_gpus\nnosuch-tenant,4\n", q);
    fclose(q);
    snprintf(args, sizeof args, "%s --quotas " OUT "/typo_quotas.csv", base);
    expect_status(args, "clustersim: note: 1 of the 1 tenants given a quota never appear in "
                        "the trace ('nosuch-tenant'); check their names\n", 0);
    expect_status(base, "clustersim: note: policy quota without --quotas or --quota-share: no "
                        "tenant has a quota, so every job ran as a borrower\n", 0);
    /* A quota file with only its header was reported as no --quotas at all. */
    write_file(OUT "/header_q.csv", "tenant,quota_gpus\n");
    snprintf(args, sizeof args, "%s --quotas " OUT "/header_q.csv", base);
    expect_status(args,
                  "clustersim: note: --quotas " OUT "/header_q.csv names no tenant: no "
                  "tenant has a quota, so every job ran as a borrower\n",
                  0);
    /* A horizon before B's only job: B was said never to appear in the trace. */
    write_file(OUT "/hz.csv", "job_id,submit_time,duration,num_gpus,tenant,priority\n"
                              "j1,0,100,1,A,1\nj2,1000,100,1,B,1\n");
    write_file(OUT "/hz_q.csv", "tenant,quota_gpus\nA,1\nB,1\n");
    expect_status("run --trace " OUT "/hz.csv --cluster 1xV100M16:4 --policy quota --quotas " OUT
                  "/hz_q.csv --horizon 500 --quiet --out " OUT "/hz",
                  "clustersim: note: 1 of the 2 tenants given a quota have no job that arrived "
                  "before the horizon ('B'); check their names\n",
                  0);
    snprintf(args, sizeof args, "%s --policy-opt quantum=3", base);
    expect_error(args, "policy 'quota' has no option 'quantum'");
    test_tiny_quota(base);
    test_long_tenant();
    expect_error("model eval --trace " OUT "/gen.csv",
                 "error: clustersim model eval needs a kind: ");
    expect_error("model eval --kind mlp --trace " OUT "/gen.csv",
                 "error: unknown kind 'mlp' for 'clustersim model eval' (known: ");
    expect_error("model eval duration --trace " OUT "/gen.csv --jobs x.csv",
                 "error: clustersim model eval duration: give --trace or --jobs, not both\n");
    expect_error("model eval --kind duration --trace " OUT "/gen.csv --split 1.5",
                 "error: option --split: expected a number in [0.01, 0.99], got \"1.5\"\n");
    expect_error("model eval --kind duration --jobs '" FIX "bad_quotas_header.csv'",
                 "bad_quotas_header.csv:1: error: header lacks column 'work_s'; expected the "
                 "header of a jobs.csv\n");

    /* A run with quotas: the quota metrics and lost GPU-hours are written. */
    snprintf(args, sizeof args,
             "%s --quota-share '" FIX "good_quota_share.csv:node num' "
             "--policy-opt priority=qos --sample-interval 60 --checkpoint-interval 10m "
             "--out " OUT "/run",
             base);
    CHECK_EQ_I64(run(args), 0);
    char *sum = check_slurp(OUT "/run/summary.json", NULL);
    char *ts = check_slurp(OUT "/run/timeseries.csv", NULL);
    char *tn = check_slurp(OUT "/run/tenants.csv", NULL);
    CHECK(sum && ts && tn);
    if (sum && ts && tn) {
        CHECK(strstr(sum, "\"quota_metrics\": {\"samples\": ") != NULL);
        CHECK(strstr(sum, "\"t00\": {\"quota_gpus\": 12.000000, ") != NULL);
        CHECK(strstr(sum, "\"t03\": {\"quota_gpus\": 4.000000, ") != NULL);
        CHECK(strstr(sum, "\"lost_gpu_hours\": ") != NULL);
        double jain = json_number(sum, "\"jain_mean\": ");
        CHECK(jain > 0.25 && jain <= 1.0);
        CHECK(strstr(ts, ",jain_quota,tenants_over_quota,tenants_under_quota_waiting\n") != NULL);
        CHECK(strstr(tn, ",t01,") != NULL && strstr(tn, ",8.000\n") != NULL);
    }
    free(sum);
    free(ts);
    free(tn);
    /* The same run again gives the same bytes. */
    snprintf(args, sizeof args,
             "%s --quota-share '" FIX "good_quota_share.csv:node num' "
             "--policy-opt priority=qos --sample-interval 60 --checkpoint-interval 10m "
             "--out " OUT "/run2",
             base);
    CHECK_EQ_I64(run(args), 0);
    CHECK_EQ_I64(check_system("cmp -s " OUT "/run/jobs.csv " OUT "/run2/jobs.csv && cmp -s " OUT
                              "/run/summary.json " OUT "/run2/summary.json"),
                 0);

    /* The quotas given as a policy option instead: the same run. */
    snprintf(args, sizeof args,
             "%s --policy-opt 'quota_share=" FIX "good_quota_share.csv:node num' "
             "--policy-opt priority=qos --sample-interval 60 --checkpoint-interval 10m "
             "--out " OUT "/run3",
             base);
    CHECK_EQ_I64(run(args), 0);
    CHECK_EQ_I64(check_system("cmp -s " OUT "/run/jobs.csv " OUT "/run3/jobs.csv && cmp -s " OUT
                              "/run/summary.json " OUT "/run3/summary.json"),
                 0);
    snprintf(args, sizeof args,
             "%s --policy-opt 'quota_share=" FIX "good_quota_share.csv:node num' "
             "--quotas '" FIX "good_quotas.csv'",
             base);
    expect_error(args, "error: give the quotas once: --policy-opt quota_share, --quotas or "
                       "--quota-share\n");

    /* model eval on the generated trace and on the run's recorded predictions. */
    CHECK_EQ_I64(run("model eval --kind duration --trace " OUT "/gen.csv --min-history 20"), 0);
    char *out = check_slurp(OUT "/out.txt", NULL);
    CHECK(out && strstr(out, "predictor                    jobs   MAE_log") != NULL);
    CHECK_EQ_I64(table_jobs(out, "gbt combined"), 240);
    CHECK_EQ_I64(table_jobs(out, "ridge global"), 240);
    CHECK_EQ_I64(table_jobs(out, "tenant last job"), 240);
    CHECK(out && strstr(out, "trained on the 345 jobs finished by then") != NULL);
    free(out);
    /* With a history shorter than the jobs finished by the split, the line says the models
     * were fitted on the last `history` of them. */
    CHECK_EQ_I64(run("model eval --kind duration --trace " OUT "/gen.csv --min-history 20 "
                     "--history 100"),
                 0);
    out = check_slurp(OUT "/out.txt", NULL);
    CHECK(out && strstr(out, "trained on the last 100 (history) of the 345 jobs") != NULL);
    free(out);
    CHECK_EQ_I64(run("model eval --kind duration --jobs " OUT "/run/jobs.csv"), 0);
    out = check_slurp(OUT "/out.txt", NULL);
    CHECK(out && strstr(out, OUT "/run/jobs.csv: 800 jobs, ") != NULL);
    CHECK(out && strstr(out, "\nrecorded predictions ") != NULL);
    free(out);

    /* The Philly trace: VCs as tenants, quotas proportional to the VC sizes. */
    char pbuf[512], vbuf[512];
    const char *philly = check_shared("pollux_adaptdl/traces/philly.csv.gz", pbuf, sizeof pbuf);
    const char *vc = check_shared("helios_philly_meta/philly_vc.csv", vbuf, sizeof vbuf);
    if (philly && vc) {
        static const char *const pols[3] = {"quota --policy-opt priority=hash",
                                            "quota --policy-opt priority=hash --policy-opt "
                                            "borrow=false",
                                            "fairshare"};
        for (int p = 0; p < 3; p++) {
            snprintf(args, sizeof args,
                     "run --trace '%s' --format philly --cluster 64xV100M16:8 --policy %s "
                     "--quota-share '%s:node num' --horizon 35d --sample-interval 1h --quiet "
                     "--out " OUT "/philly%d",
                     philly, pols[p], vc, p);
            CHECK_EQ_I64(run(args), 0);
            char path[128];
            snprintf(path, sizeof path, OUT "/philly%d/summary.json", p);
            sum = check_slurp(path, NULL);
            CHECK(sum && strstr(sum, "\"6214e9\": {\"quota_gpus\": 93.090909, ") != NULL);
            CHECK(sum && json_number(sum, "\"done\": ") > 15000);
            free(sum);
        }
        snprintf(args, sizeof args, "model eval --kind duration --format philly --trace '%s'",
                 philly);
        CHECK_EQ_I64(run(args), 0);
        out = check_slurp(OUT "/out.txt", NULL);
        CHECK(out && strstr(out, ": 82247 jobs; split at job 57572 ") != NULL);
        CHECK_EQ_I64(table_jobs(out, "tenant mean"), 24675);
        free(out);
    }
    return check_done();
}
