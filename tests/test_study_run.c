/*
 * test_study_run.c: study_run (study/study.h) called as a library, not through the
 * command line. The fragmentation workload is built only when the policy or the probe
 * needs it: with the probe on (the default) the trace is read twice (a first pass for
 * the workload), without it and with fifo it is read once and the timeseries has no
 * fragmentation columns, while fgd (which needs the workload) still gets its first pass.
 * The jobs of a run do not depend on the probe: jobs.csv is byte-identical.
 */
#include "study/study.h"

#include "check.h"

#define TRACE SIM_SOURCE_DIR "/tests/fixtures/compare_trace.csv"

static int run(const char *policy, bool probe, const char *out, run_result *res)
{
    run_args a;
    run_args_default(&a);
    a.trace = TRACE;
    a.cluster = "2xT4:1";
    a.policy = policy;
    a.pcfg.policy = policy;
    a.out_dir = out;
    a.frag_probe = probe;
    a.prefetch = false;
    sim_diag d = {0};
    int st = study_run(&a, res, &d);
    if (st != SIM_OK) {
        char buf[2048];
        fprintf(stderr, "%s\n", sim_diag_format(&d, buf, sizeof buf));
    }
    return st;
}

static char *first_line(const char *path)
{
    char *text = check_slurp(path, NULL);
    if (text)
        text[strcspn(text, "\n")] = '\0';
    return text;
}

int main(void)
{
    run_result with, without, fgd;
    CHECK_EQ_I64(run("fifo", true, "study_probe", &with), SIM_OK);
    CHECK_EQ_I64(with.trace_passes, 1);
    CHECK_EQ_I64(run("fifo", false, "study_noprobe", &without), SIM_OK);
    CHECK_EQ_I64(without.trace_passes, 0);
    CHECK_EQ_I64(with.sum.jobs_done, 5);
    CHECK_EQ_I64(without.sum.jobs_done, 5);

    size_t n1 = 0, n2 = 0;
    char *j1 = check_slurp("study_probe/jobs.csv", &n1);
    char *j2 = check_slurp("study_noprobe/jobs.csv", &n2);
    CHECK(j1 && j2 && n1 == n2 && n1 > 0 && memcmp(j1, j2, n1) == 0);
    free(j1);
    free(j2);
    char *h1 = first_line("study_probe/timeseries.csv");
    char *h2 = first_line("study_noprobe/timeseries.csv");
    CHECK(h1 && strstr(h1, ",frag_gpus,frag_ratio") != NULL);
    CHECK(h2 && strstr(h2, "frag") == NULL);
    free(h1);
    free(h2);

    /* fgd needs the workload: its first pass stays without the probe. */
    CHECK_EQ_I64(run("fgd", false, "study_fgd", &fgd), SIM_OK);
    CHECK_EQ_I64(fgd.trace_passes, 1);
    return check_done();
}
