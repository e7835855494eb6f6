/*
 * bench_study_run.c: the cost of the fragmentation workload's first pass, through the
 * library (study_run): one run with the frag probe (a first pass over the trace, then
 * the run) and one without it (a policy that needs no workload: the trace is read once),
 * median of 5 each, no output files. Default: fifo on the openb pod list and GPU nodes of
 * ../shared/data. Usage: bench_study_run [TRACE FORMAT CLUSTER [POLICY]].
 */
#include "study/study.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *trace =
        argc > 3 ? argv[1] : SIM_SHARED_DIR "/data/alibaba_gpu_v2023/openb_pod_list_default.csv";
    const char *format = argc > 3 ? argv[2] : "alibaba2023";
    const char *cluster =
        argc > 3 ? argv[3] : SIM_SHARED_DIR "/data/alibaba_gpu_v2023/openb_node_list_gpu_node.csv";
    const char *policy = argc > 4 ? argv[4] : "fifo";
    double t[2][5];
    unsigned long long jobs = 0, passes[2] = {0, 0};
    for (int k = 0; k < 5; k++)
        for (int probe = 1; probe >= 0; probe--) {
            run_args a;
            run_args_default(&a);
            a.trace = trace;
            a.format = format;
            a.cluster = cluster;
            a.policy = a.pcfg.policy = policy;
            a.frag_probe = probe;
            run_result r;
            sim_diag d = {0};
            double t0 = bench_now_s();
            if (study_run(&a, &r, &d) != SIM_OK) {
                char buf[2048];
                fprintf(stderr, "bench_study_run: %s\n", sim_diag_format(&d, buf, sizeof buf));
                return 1;
            }
            t[probe][k] = bench_now_s() - t0;
            jobs = r.sum.jobs_arrived;
            passes[probe] = r.trace_passes;
        }
    qsort(t[0], 5, sizeof t[0][0], cmp);
    qsort(t[1], 5, sizeof t[1][0], cmp);
    printf("%s (%s), %s, %llu jobs; median of 5:\n", trace, format, policy, jobs);
    printf("  with the frag probe:    %.3f s (first passes: %llu)\n", t[1][2], passes[1]);
    printf("  without the frag probe: %.3f s (first passes: %llu)\n", t[0][2], passes[0]);
    return 0;
}
