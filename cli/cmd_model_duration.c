/*
 * cmd_model_duration.c: `clustersim model eval duration` — options of the duration
 * predictor's evaluation (study/model_duration.h).
 */
#include "cli/cli.h"
#include "base/csvin.h"

#include "study/model_duration.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: clustersim model eval duration --trace FILE [options]   (or eval --kind duration)\n"
    "       clustersim model eval duration --jobs DIR/jobs.csv\n"
    "  --trace FILE        trace whose durations are predicted (any --format)\n"
    "  --format NAME       trace format (default native)\n"
    "  --trace-opt K=V     format-specific option (repeatable), e.g. tenant=user\n"
    "  --catalog FILE      GPU catalog (default: the shipped one)\n"
    "  --split X           share of jobs (in submit order) before the split (default 0.7)\n"
    "  --retrain T         also retrain every T of trace time after the split (default: no)\n"
    "  --history N         finished jobs kept for training (default 16384)\n"
    "  --min-history N     a tenant's jobs needed for its own model (default 50)\n"
    "  --tenant-models N   most tenants with their own model, the first to reach\n"
    "                      min-history (default 64); the others use the global model\n"
    "  --topics K          NMF topics of the job text, 0..32 (default 8)\n"
    "  --trees N           boosted trees (default 30)\n"
    "  --seed N            seed of the NMF initialisation (default 1)\n"
    "  --skip-bad-rows     skip malformed trace rows\n"
    "  --jobs FILE         instead: errors of pred_duration_s against work_s in a jobs.csv\n";

int cli_model_eval_duration(int argc, char **argv)
{
    study_dur_eval a = {.split = 0.7};
    model_dur_config_default(&a.cfg);
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int m;
        uint64_t u;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (cli_flag(argv, i, "--skip-bad-rows")) {
            a.skip_bad_rows = true;
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
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            a.catalog = v;
        } else if (OPT("--jobs")) {
            if (m < 0)
                return 2;
            a.jobs = v;
        } else if (OPT("--split")) {
            if (m < 0 || !cli_double("--split", v, 0.01, 0.99, &a.split))
                return 2;
        } else if (OPT("--retrain")) {
            if (m < 0 || !cli_seconds("--retrain", v, &a.retrain_s))
                return 2;
            /* Trace times are whole microseconds: a period is at least one. */
            if (a.retrain_s > 0 && a.retrain_s < 1e-6) {
                char q[128];
                csvin_quote(v, strlen(v), q, sizeof q);
                return cli_usage_error("option --retrain: expected 0 (no retraining) or at "
                                       "least 1e-6 s, got %s",
                                       q);
            }
        } else if (OPT("--history")) {
            if (m < 0 || !cli_u64("--history", v, 1, 1u << 24, &u))
                return 2;
            a.cfg.history = (uint32_t)u;
        } else if (OPT("--min-history")) {
            if (m < 0 || !cli_u64("--min-history", v, 1, 1u << 24, &u))
                return 2;
            a.cfg.min_history = (uint32_t)u;
        } else if (OPT("--tenant-models")) {
            if (m < 0 || !cli_u64("--tenant-models", v, 0, 65536, &u))
                return 2;
            a.cfg.max_tenant_models = (uint32_t)u;
        } else if (OPT("--topics")) {
            if (m < 0 || !cli_u64("--topics", v, 0, MODEL_DUR_MAX_TOPICS, &u))
                return 2;
            a.cfg.topics = (uint32_t)u;
        } else if (OPT("--trees")) {
            if (m < 0 || !cli_u64("--trees", v, 1, 10000, &u))
                return 2;
            a.cfg.gbt.trees = (uint32_t)u;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &a.cfg.seed))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model eval duration' "
                                   "(see clustersim model eval duration --help)",
                                   argv[i]);
        }
#undef OPT
    }
    if (a.jobs && a.trace)
        return cli_usage_error("clustersim model eval duration: give --trace or --jobs, not both");
    sim_diag d = {0};
    int st;
    if (a.jobs)
        st = study_dur_eval_jobs(a.jobs, stdout, &d);
    else if (!a.trace)
        return cli_usage_error("clustersim model eval duration needs --trace FILE or --jobs FILE");
    else
        st = study_dur_eval_trace(&a, stdout, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    return 0;
}
