/*
 * cmd_demo.c: `clustersim demo` — a run that needs no input: a synthetic trace and a
 * small heterogeneous cluster generated here, replayed under two policies, with the
 * comparison printed as a table.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char demo_cluster[] = "4xV100M32:8:cpu=96000:mem=786432,"
                                   "8xT4:4:cpu=64000:mem=393216,"
                                   "2xA100:8:cpu=128000:mem=1048576";

int cmd_demo(int argc, char **argv)
{
    const char *out = NULL;
    uint64_t jobs = 2000, seed = 1;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim demo [--out DIR] [--jobs N] [--seed N]\n"
                   "Generates %llu jobs (seeded) on the cluster %s and compares fifo with\n"
                   "binpack. With --out, each policy's outputs go to DIR/<policy>/.\n",
                   (unsigned long long)jobs, demo_cluster);
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0)
                return 2;
            out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--jobs", &v)) != 0) {
            if (m < 0 || !cli_u64("--jobs", v, 1, 100000000, &jobs))
                return 2;
        } else if ((m = cli_opt(argc, argv, &i, "--seed", &v)) != 0) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &seed))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim demo'", argv[i]);
        }
    }
    trace_gen_config gen;
    trace_gen_config_default(&gen);
    gen.jobs = jobs;
    gen.seed = seed;
    gen.arrival_rate_h = 20;
    gen.gpu_types = "V100M32|T4|A100";
    gen.frac_constrained = 0.1;
    static const char *const policies[2] = {"fifo", "binpack"};
    run_result res[2];
    printf("clustersim demo: %llu generated jobs (seed %llu) on %s\n",
           (unsigned long long)jobs, (unsigned long long)seed, demo_cluster);
    for (int p = 0; p < 2; p++) {
        run_args a;
        run_args_default(&a);
        a.gen = &gen;
        a.cluster = demo_cluster;
        a.policy = policies[p];
        a.pcfg.policy = policies[p];
        a.seed = seed;
        a.argc = argc;
        a.argv = argv;
        a.progress = isatty(2);
        char dir[1024];
        if (out) {
            snprintf(dir, sizeof dir, "%s/%s", out, policies[p]);
            a.out_dir = dir;
        }
        sim_diag d = {0};
        int st = cli_run_sim(&a, &res[p], &d);
        if (st != SIM_OK) {
            cli_print_diag(&d);
            return cli_exit_code(st);
        }
    }
    printf("\n%-10s %9s %9s %10s %10s %10s %10s %9s %9s\n", "policy", "jobs done", "rejected",
           "JCT mean h", "wait mean", "makespan h", "GPU alloc", "GPU eff", "wall s");
    for (int p = 0; p < 2; p++) {
        const sim_summary *s = &res[p].sum;
        double span = (double)(s->last_end_us - s->first_submit_us) / 3.6e9;
        double jct = s->jct_mean_s, wait = s->wait_mean_s;
        printf("%-10s %9llu %9llu %10.2f %10.2f %10.1f %9.1f%% %8.1f%% %9.2f\n", policies[p],
               (unsigned long long)s->jobs_done, (unsigned long long)s->jobs_rejected,
               jct / 3600, wait / 3600, span, 100 * s->gpu_alloc_avg,
               100 * s->gpu_effective_avg, res[p].wall_s);
    }
    printf("(JCT and wait in hours; GPU alloc/eff: time-averaged allocated and really used "
           "share of all GPUs)\n");
    if (out)
        printf("outputs: %s/fifo/ and %s/binpack/\n", out, out);
    return 0;
}
