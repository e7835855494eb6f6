/*
 * cmd_run.c: `clustersim run` — replay one trace against one policy.
 */
#include "cli/cli.h"
#include "policies/registry.h"

#include "base/csvin.h"
#include "traces/trace.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: clustersim run --trace FILE --cluster FILE|SPEC [options]\n"
    "  --trace FILE          trace to replay (gzip or plain; '-' = stdin)\n"
    "  --format NAME         trace format (default native; see below)\n"
    "  --trace-opt K=V       format-specific option (repeatable), e.g. tenant=user\n"
    "  --cluster FILE|SPEC   node-list CSV, or e.g. 4xV100M32:8,16xT4:2\n"
    "  --cluster-gpu-type T  GPU type of cluster specs that name none (default V100M16)\n"
    "  --catalog FILE        GPU catalog CSV (default: the shipped models/data/gpus.csv)\n"
    "  --policy NAME         scheduling policy (default binpack; `clustersim policies`)\n"
    "  --policy-opt K=V      policy option (repeatable)\n"
    "  --seed N              seed of the run's random numbers (default 1)\n"
    "  --out DIR             write jobs.csv, timeseries.csv, tenants.csv, summary.json, run.json\n"
    "  --sample-interval T   timeseries period (default 600s; 0 = none)\n"
    "  --horizon T           stop the simulation at time T\n"
    "  --checkpoint-interval T  periodic checkpoints (default 0: a failure loses the segment)\n"
    "  --restart-penalty T   reference work added to each restart (default 0)\n"
    "  --stall-limit N       stop when, after the last arrival, N scheduling points in a\n"
    "                        row (idle, or in run segments a loss threw away) leave no\n"
    "                        job finished or nearer its end (default 1000000; 0: never)\n"
    "  --failures FILE       node failures: CSV node,down_s,up_s\n"
    "  --quotas FILE         tenant quotas: CSV tenant,quota_gpus\n"
    "  --quota-share FILE[:COLUMN]  quotas dividing the cluster's GPUs in proportion to a\n"
    "                        column (default: the second) of a CSV naming tenants first\n"
    "  --mtbf T --mttr T     random node failures (exponential, per node)\n"
    "  --skip-bad-rows       skip and count malformed trace rows instead of stopping\n"
    "  --check-invariants    verify the cluster's accounting after every event (slow)\n"
    "  --no-prefetch         read the trace on the simulating thread (same outputs)\n"
    "  --check               check the options and inputs (open the trace, read the\n"
    "                        cluster and the other files, set the policy up), then stop\n"
    "  --tenant-rows R       tenants.csv: 'all' (every active tenant at every sample;\n"
    "                        default) or 'changed' (a tenant's row only when its figures\n"
    "                        changed since its last row)\n"
    "  --frag-workload W     workload of the fragmentation columns and of fgd: unset, the\n"
    "                        jobs read so far for the columns and the whole trace for\n"
    "                        fgd (a first pass over the file); 'trace' (both the whole\n"
    "                        trace), 'arrivals' (both the jobs read so far: no second\n"
    "                        read) or 'none' (no fragmentation columns)\n"
    "  --throughput M        GPU-type speed model: measured (default), none, or steps\n"
    "                        tables FILE[,FILE] (job_type,scale_factor,gpu_type,steps_per_sec)\n"
    "  --ref-gpu-type TYPE   reference type of jobs whose trace gives none (default: job,\n"
    "                        i.e. such jobs run at their trace speed on every type)\n"
    "  --interference M      co-location slowdown: none (default), measured, model, or a\n"
    "                        contention FILE from `clustersim calibrate`\n"
    "  --amdahl P            speed of an elastic job with n replicas follows Amdahl's law\n"
    "                        1/((1-P)+P/n) with parallel fraction P in [0,1] (relative to\n"
    "                        its nominal count); pollux traces: their profiles, else P=0.95\n"
    "  --pollux-profiles DIR elastic jobs of Pollux's applications (model column) scale by\n"
    "                        the profiles in DIR (pollux_adaptdl/traces), any trace format\n"
    "  --demand FILE         online services' demand curves, CSV service,time,replicas\n"
    "                        (service = the job id of a trace row of qos LS; every LS\n"
    "                        row needs a curve; `clustersim trace curves`)\n"
    "  --quiet               no progress line\n"
    "  --zoo                 model zoo: synthetic features for jobs without them, and the\n"
    "                        zoo's per-GPU-type speed and demand as the simulator's truth\n"
    "  --zoo-ref TYPE        GPU type durations are measured on (default V100M16)\n"
    "  --zoo-over X          mean over-request of jobs given zoo features (default 1.5)\n"
    "  --zoo-slo X           their LS target: X x duration (default 2; 0 = none)\n"
    "Durations T accept s, m, h, d suffixes. Trace formats: %s\n";

int cmd_run(int argc, char **argv)
{
    run_args a;
    run_args_default(&a);
    a.argc = argc;
    a.argv = argv;
    bool quiet = false, zoo_opt = false;
    const char *pending_opts[POLICY_MAX_OPTIONS];
    int n_opts = 0;
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(usage, trace_format_list());
            return 0;
        }
        if (cli_flag(argv, i, "--skip-bad-rows")) {
            a.skip_bad_rows = true;
            continue;
        }
        if (cli_flag(argv, i, "--quiet")) {
            quiet = true;
            continue;
        }
        if (cli_flag(argv, i, "--check-invariants")) {
            a.check_invariants = true;
            continue;
        }
        if (cli_flag(argv, i, "--no-prefetch")) {
            a.prefetch = false;
            continue;
        }
        if (cli_flag(argv, i, "--check")) {
            a.check_only = true;
            continue;
        }
        if (cli_flag(argv, i, "--zoo")) {
            a.zoo = true;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--trace")) {
            if (m < 0)
                return 2;
            a.trace = v;
        } else if (OPT("--format")) {
            if (m < 0)
                return 2;
            a.format = v;
        } else if (OPT("--trace-opt")) {
            if (m < 0 || !cli_trace_opt(a.trace_opts, &a.n_trace_opts, v))
                return 2;
        } else if (OPT("--cluster-gpu-type")) {
            if (m < 0)
                return 2;
            a.cluster_gpu_type = v;
        } else if (OPT("--cluster")) {
            if (m < 0)
                return 2;
            a.cluster = v;
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            a.catalog = v;
        } else if (OPT("--policy-opt")) {
            if (m < 0)
                return 2;
            if (n_opts >= POLICY_MAX_OPTIONS)
                return cli_usage_error("too many --policy-opt");
            pending_opts[n_opts++] = v;
        } else if (OPT("--policy")) {
            if (m < 0)
                return 2;
            a.policy = v;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &a.seed))
                return 2;
        } else if (OPT("--out")) {
            if (m < 0 || !cli_out_dir("--out", v))
                return 2;
            a.out_dir = v;
        } else if (OPT("--sample-interval")) {
            if (m < 0 || !cli_seconds("--sample-interval", v, &a.sample_interval_s))
                return 2;
            /* Times are whole microseconds; below a millisecond the samples would
             * outnumber the events. */
            if (a.sample_interval_s > 0 && a.sample_interval_s < 0.001)
                return cli_usage_error("option --sample-interval: expected 0 (no samples) or "
                                       "at least 0.001 s, got %s",
                                       v);
        } else if (OPT("--horizon")) {
            if (m < 0 || !cli_seconds("--horizon", v, &a.horizon_s))
                return 2;
            /* Times are whole microseconds: a shorter horizon would be 0, which is none. */
            if (a.horizon_s > 0 && a.horizon_s < 1e-6)
                return cli_usage_error("option --horizon: expected 0 (no horizon) or at least "
                                       "1e-6 s, got %s",
                                       v);
        } else if (OPT("--checkpoint-interval")) {
            if (m < 0 || !cli_seconds("--checkpoint-interval", v, &a.checkpoint_s))
                return 2;
        } else if (OPT("--restart-penalty")) {
            if (m < 0 || !cli_seconds("--restart-penalty", v, &a.restart_penalty_s))
                return 2;
        } else if (OPT("--stall-limit")) {
            if (m < 0 || !cli_u64("--stall-limit", v, 0, UINT64_MAX, &a.stall_limit))
                return 2;
        } else if (OPT("--tenant-rows")) {
            if (m < 0)
                return 2;
            if (strcmp(v, "all") != 0 && strcmp(v, "changed") != 0) {
                char q[128];
                csvin_quote(v, strlen(v), q, sizeof q);
                return cli_usage_error("option --tenant-rows: expected all or changed, got %s", q);
            }
            a.tenant_rows_changed = strcmp(v, "changed") == 0;
        } else if (OPT("--frag-workload")) {
            if (m < 0)
                return 2;
            if (strcmp(v, "trace") != 0 && strcmp(v, "arrivals") != 0 && strcmp(v, "none") != 0) {
                char q[128];
                csvin_quote(v, strlen(v), q, sizeof q);
                return cli_usage_error("option --frag-workload: expected trace, arrivals or "
                                       "none, got %s",
                                       q);
            }
            a.frag_arrivals = strcmp(v, "arrivals") == 0;
            a.frag_trace = strcmp(v, "trace") == 0;
            a.frag_probe = strcmp(v, "none") != 0;
        } else if (OPT("--failures")) {
            if (m < 0)
                return 2;
            a.failures = v;
        } else if (OPT("--quotas")) {
            if (m < 0)
                return 2;
            a.quotas = v;
        } else if (OPT("--quota-share")) {
            if (m < 0)
                return 2;
            a.quota_share = v;
        } else if (OPT("--mtbf")) {
            if (m < 0 || !cli_seconds("--mtbf", v, &a.mtbf_s))
                return 2;
        } else if (OPT("--throughput")) {
            if (m < 0)
                return 2;
            a.throughput = v;
        } else if (OPT("--interference")) {
            if (m < 0)
                return 2;
            a.interference = v;
        } else if (OPT("--ref-gpu-type")) {
            if (m < 0)
                return 2;
            a.ref_gpu_type = v;
        } else if (OPT("--pollux-profiles")) {
            if (m < 0)
                return 2;
            a.pollux_profiles = v;
        } else if (OPT("--demand")) {
            if (m < 0)
                return 2;
            a.demand = v;
        } else if (OPT("--amdahl")) {
            if (m < 0 || !cli_double("--amdahl", v, 0, 1, &a.amdahl))
                return 2;
        } else if (OPT("--mttr")) {
            if (m < 0 || !cli_seconds("--mttr", v, &a.mttr_s))
                return 2;
        } else if (OPT("--zoo-ref")) {
            if (m < 0)
                return 2;
            a.zoo_ref = v;
            zoo_opt = true;
        } else if (OPT("--zoo-over")) {
            if (m < 0 || !cli_double("--zoo-over", v, 1, 100, &a.zoo_over))
                return 2;
            zoo_opt = true;
        } else if (OPT("--zoo-slo")) {
            if (m < 0 || !cli_double("--zoo-slo", v, 0, 1e6, &a.zoo_slo))
                return 2;
            zoo_opt = true;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim run' "
                                   "(see clustersim run --help)",
                                   argv[i]);
        }
#undef OPT
    }
    if (!a.trace)
        return cli_usage_error("clustersim run needs --trace FILE (see clustersim run --help)");
    if (!a.cluster)
        return cli_usage_error("clustersim run needs --cluster FILE|SPEC "
                               "(see clustersim run --help)");
    if (a.mttr_s > 0 && a.mtbf_s <= 0)
        return cli_usage_error("--mttr needs a positive --mtbf");
    /* Random failures never stop, and a job longer than a few MTBFs without checkpoints
     * would restart forever: such a run must end at a horizon. */
    if (a.mtbf_s > 0 && a.horizon_s <= 0)
        return cli_usage_error("--mtbf needs --horizon T (random failures go on forever)");
    if (zoo_opt && !a.zoo)
        return cli_usage_error("--zoo-ref, --zoo-over and --zoo-slo describe the annotation of "
                               "--zoo; give --zoo");
    if (a.quotas && a.quota_share)
        return cli_usage_error("give --quotas or --quota-share, not both");
    /* Policy options are matched to the policy once it is known. */
    a.pcfg.policy = a.policy;
    const policy_ops *pol = policy_find(a.policy); /* unknown: the run says so */
    if (pol && !cli_check_policy_opts(pending_opts, (size_t)n_opts, &a.policy, 1))
        return 2;
    for (int k = 0; k < n_opts; k++)
        if (!cli_policy_opt(&a.pcfg, pending_opts[k]))
            return 2;
    /* The quota policies take their quotas as options too; the run reads them. */
    for (int k = 0; pol && k < 2; k++) {
        const char *key = k ? "quota_share" : "quotas";
        const char *v = policy_config_get(&a.pcfg, pol->options, key);
        if (!v || !*v)
            continue;
        if (a.quotas || a.quota_share)
            return cli_usage_error("give the quotas once: --policy-opt %s, --quotas or "
                                   "--quota-share",
                                   key);
        *(k ? &a.quota_share : &a.quotas) = v;
    }
    a.progress = !quiet && isatty(2);
    run_result r;
    sim_diag d = {0};
    int st = study_run(&a, &r, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    if (a.check_only)
        return 0;
    const sim_summary *s = &r.sum;
    fprintf(stderr,
            "clustersim: %s: %llu jobs (%llu done, %llu rejected, %llu unfinished, %llu rows "
            "skipped), %llu events in %.2f s (%.0f events/s)%s%s\n",
            a.policy, (unsigned long long)(s->jobs_arrived + s->jobs_not_arrived),
            (unsigned long long)s->jobs_done, (unsigned long long)s->jobs_rejected,
            (unsigned long long)s->jobs_unfinished, (unsigned long long)r.rows_skipped,
            (unsigned long long)s->events, r.wall_s,
            r.wall_s > 0 ? (double)s->events / r.wall_s : 0, a.out_dir ? "; outputs in " : "",
            a.out_dir ? a.out_dir : "");
    if (s->groups_arrived && s->groups_done)
        fprintf(stderr,
                "clustersim: %s: %llu job groups (%llu done); group completion time mean "
                "%.2f s, p50 %.2f s, p99 %.2f s\n",
                a.policy, (unsigned long long)s->groups_arrived, (unsigned long long)s->groups_done,
                s->group_mean_s, s->group_median_s, s->group_p99_s);
    else if (s->groups_arrived)
        fprintf(stderr, "clustersim: %s: %llu job groups, none done\n", a.policy,
                (unsigned long long)s->groups_arrived);
    if (s->stalled)
        fprintf(stderr,
                "clustersim: note: stopped at %.6f s: over the last %llu scheduling points (idle, "
                "or in run segments a loss threw away) no job finished or was left nearer "
                "its end (each run "
                "segment is cut before it gains more than it loses, or the waiting jobs never "
                "start); the %llu jobs left are unfinished\n",
                (double)s->stalled_at_us / 1e6, (unsigned long long)a.stall_limit,
                (unsigned long long)s->jobs_unfinished);
    if (s->clock_ended)
        fprintf(stderr,
                "clustersim: note: stopped at the end of simulated time, %.0f s: %llu job%s "
                "still in the system, unfinished (the reasons are in jobs.csv)\n",
                SIM_CLOCK_END_S, (unsigned long long)s->jobs_unfinished,
                s->jobs_unfinished == 1 ? "" : "s");
    if (s->jobs_not_arrived)
        fprintf(stderr,
                "clustersim: note: %llu job%s submitted after the horizon (unfinished, not "
                "arrived)\n",
                (unsigned long long)s->jobs_not_arrived, s->jobs_not_arrived == 1 ? "" : "s");
    if (s->jobs_rejected)
        fprintf(stderr, "clustersim: note: %llu job%s rejected; the first, %s%s\n",
                (unsigned long long)s->jobs_rejected, s->jobs_rejected == 1 ? "" : "s",
                s->first_rejection, a.out_dir ? " (every reason is in jobs.csv)" : "");
    for (const char *n = r.notes; *n;) {
        size_t len = strcspn(n, "\n");
        fprintf(stderr, "clustersim: note: %.*s\n", (int)len, n);
        n += len + (n[len] == '\n');
    }
    if (r.rows_ignored)
        fprintf(stderr,
                "clustersim: note: the %s format left out %llu records that are not "
                "jobs (see the README)\n",
                a.format ? a.format : "native", (unsigned long long)r.rows_ignored);
    if (!a.out_dir)
        fputs(r.summary_json, stdout);
    return 0;
}
