/*
 * test_study_run.c: study_run (study/study.h) called as a library, not through the
 * command line. The fragmentation workload is built only when the policy or the probe
 * needs it: the probe (on by default) counts the jobs read so far, so the trace is read
 * once, and twice only when the probe is asked for the whole trace's workload (a first
 * pass), which gives the same last sample; without the probe and with fifo the
 * timeseries has no fragmentation columns, while fgd (which needs the workload) gets
 * its first pass, with or without the probe. The jobs of a run do not depend on the
 * probe: jobs.csv is byte-identical.
 */
#include "study/study.h"

#include "check.h"

#define TRACE SIM_SOURCE_DIR "/tests/fixtures/compare_trace.csv"

enum { WL_DEFAULT, WL_TRACE };

static int run(const char *policy, bool probe, int wl, const char *out, run_result *res)
{
    run_args a;
    run_args_default(&a);
    a.trace = TRACE;
    a.cluster = "2xT4:1";
    a.policy = policy;
    a.pcfg.policy = policy;
    a.out_dir = out;
    a.frag_probe = probe;
    a.frag_trace = wl == WL_TRACE;
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

static char *last_line(const char *path)
{
    char *text = check_slurp(path, NULL);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n')
        text[--n] = '\0';
    char *nl = strrchr(text, '\n');
    if (nl)
        memmove(text, nl + 1, strlen(nl + 1) + 1);
    return text;
}

static bool same_file(const char *a, const char *b)
{
    size_t n1 = 0, n2 = 0;
    char *t1 = check_slurp(a, &n1), *t2 = check_slurp(b, &n2);
    bool same = t1 && t2 && n1 == n2 && n1 > 0 && memcmp(t1, t2, n1) == 0;
    free(t1);
    free(t2);
    return same;
}

int main(void)
{
    run_result with, whole, without, fgd, fgd_probe;
    CHECK_EQ_I64(run("fifo", true, WL_DEFAULT, "study_probe", &with), SIM_OK);
    CHECK_EQ_I64(with.trace_passes, 0);
    CHECK_EQ_I64(run("fifo", true, WL_TRACE, "study_whole", &whole), SIM_OK);
    CHECK_EQ_I64(whole.trace_passes, 1);
    CHECK_EQ_I64(run("fifo", false, WL_DEFAULT, "study_noprobe", &without), SIM_OK);
    CHECK_EQ_I64(without.trace_passes, 0);
    CHECK_EQ_I64(with.sum.jobs_done, 5);
    CHECK_EQ_I64(without.sum.jobs_done, 5);

    CHECK(same_file("study_probe/jobs.csv", "study_noprobe/jobs.csv"));
    CHECK(same_file("study_probe/jobs.csv", "study_whole/jobs.csv"));
    char *h1 = first_line("study_probe/timeseries.csv");
    char *h2 = first_line("study_noprobe/timeseries.csv");
    CHECK(h1 && strstr(h1, ",frag_gpus,frag_ratio") != NULL);
    CHECK(h2 && strstr(h2, "frag") == NULL);
    free(h1);
    free(h2);
    /* Once every job has arrived, the jobs read so far are the whole trace. */
    char *l1 = last_line("study_probe/timeseries.csv");
    char *l2 = last_line("study_whole/timeseries.csv");
    CHECK(l1 && l2 && strcmp(l1, l2) == 0);
    free(l1);
    free(l2);

    /* fgd needs the workload: its first pass stays, with or without the probe, and
     * its jobs do not depend on the probe's workload. */
    CHECK_EQ_I64(run("fgd", false, WL_DEFAULT, "study_fgd", &fgd), SIM_OK);
    CHECK_EQ_I64(fgd.trace_passes, 1);
    CHECK_EQ_I64(run("fgd", true, WL_DEFAULT, "study_fgd_probe", &fgd_probe), SIM_OK);
    CHECK_EQ_I64(fgd_probe.trace_passes, 1);
    CHECK(same_file("study_fgd/jobs.csv", "study_fgd_probe/jobs.csv"));
    return check_done();
}
