/*
 * cmd_pack.c: `clustersim pack` — the options of the fragmentation study (study/pack.h).
 */
#include "cli/cli.h"
#include "policies/registry.h"

#include "base/csvin.h"
#include "study/pack.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: clustersim pack --trace FILE --cluster FILE|SPEC [options]\n"
    "  --trace FILE          tasks to replay (gzip or plain)\n"
    "  --format NAME         trace format (default native; alibaba2023 for openb pod lists)\n"
    "  --cluster FILE|SPEC   node-list CSV, or e.g. 4xV100M32:8,16xT4:2\n"
    "  --catalog FILE        GPU catalog CSV (default: the shipped models/data/gpus.csv)\n"
    "  --policies LIST       comma-separated policies (default %s)\n"
    "  --policy-opt P:K=V    option K of policy P (repeatable)\n"
    "  --demand PCT          arrived GPU request to reach, %% of the cluster's GPU capacity\n"
    "                        (an integer 1..1000, default 130%%)\n"
    "  --seeds A..B|A,B,...  seeds of the resampling, the order and the policies (default 42)\n"
    "  --out DIR             write DIR/pack.csv and DIR/pack.png (default .)\n"
    "  --jobs N              run the (policy, seed) cells in N processes (default 1)\n"
    "  --skip-bad-rows       skip and count malformed trace rows instead of stopping\n"
    "  --no-figure           write pack.csv only (no gnuplot)\n"
    "Writes one row per policy and 1%% step of arrived demand: allocated GPU share,\n"
    "fragmentation (GPUs and %% of idle GPUs) and failed tasks, mean and sd over seeds.\n";

static const char default_policies[] = "fgd,bestfit,dotprod,gpupacking,gpuclustering,random,"
                                       "binpack";

/* Parse "130%" or "130" (an integer percentage). */
static bool parse_demand(const char *val, uint32_t *out)
{
    size_t len = strlen(val);
    uint64_t x;
    if (len && val[len - 1] == '%')
        len--;
    if (!csvin_parse_u64(val, len, &x) || x < 1 || x > 1000) {
        char q[128];
        csvin_quote(val, strlen(val), q, sizeof q);
        cli_usage_error("option --demand: expected a percentage 1..1000 such as 130%%, got %s", q);
        return false;
    }
    *out = (uint32_t)x;
    return true;
}

/* Split the comma-separated list into known policy names (in buf). */
static bool parse_policies(char *buf, const char **names, uint32_t *n)
{
    *n = 0;
    for (char *p = buf;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (!policy_find(p)) {
            char known[512];
            policy_known_names(known, sizeof known);
            cli_usage_error("option --policies: unknown policy '%s' (known: %s)", p, known);
            return false;
        }
        /* The study places each task when it arrives; these policies hold tasks back
         * by design (tenant quotas; QoS classes and predicted shares; allocation rounds
         * that place jobs only at their ends), so the study would measure their queues,
         * not their packing. */
        static const char *const held[][2] = {
            {"quota", "tenant quotas"},
            {"predictive", "QoS classes, predicted shares"},
            {"gavel", "it places jobs only at the end of its rounds"},
            {"optimus", "it places jobs only at the end of its allocation periods"},
        };
        for (size_t h = 0; h < sizeof held / sizeof held[0]; h++)
            if (strcmp(p, held[h][0]) == 0) {
                cli_usage_error("option --policies: '%s' holds tasks back by design (%s), so "
                                "the packing study cannot measure it; use clustersim run",
                                p, held[h][1]);
                return false;
            }
        for (uint32_t k = 0; k < *n; k++)
            if (strcmp(names[k], p) == 0) {
                cli_usage_error("option --policies: '%s' is listed twice", p);
                return false;
            }
        if (*n >= PACK_MAX_POLICIES) {
            cli_usage_error("option --policies: at most %d policies", PACK_MAX_POLICIES);
            return false;
        }
        names[(*n)++] = p;
        if (!c)
            return true;
        p = c + 1;
    }
}

int cmd_pack(int argc, char **argv)
{
    const char *trace = NULL, *format = NULL, *cluster = NULL, *catalog = NULL;
    const char *out_dir = ".", *policies_arg = default_policies, *seeds_arg = "42";
    const char *pending_opts[POLICY_MAX_OPTIONS];
    int n_opts = 0;
    uint32_t demand = 130;
    uint64_t jobs = 1;
    bool skip_bad = false, figure = true;
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(usage, default_policies);
            return 0;
        }
        if (cli_flag(argv, i, "--no-figure")) {
            figure = false;
            continue;
        }
        if (cli_flag(argv, i, "--skip-bad-rows")) {
            skip_bad = true;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--trace")) {
            if (m < 0)
                return 2;
            trace = v;
        } else if (OPT("--format")) {
            if (m < 0)
                return 2;
            format = v;
        } else if (OPT("--cluster")) {
            if (m < 0)
                return 2;
            cluster = v;
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            catalog = v;
        } else if (OPT("--policy-opt")) {
            if (m < 0)
                return 2;
            if (n_opts >= POLICY_MAX_OPTIONS)
                return cli_usage_error("too many --policy-opt");
            pending_opts[n_opts++] = v;
        } else if (OPT("--policies")) {
            if (m < 0)
                return 2;
            policies_arg = v;
        } else if (OPT("--demand")) {
            if (m < 0 || !parse_demand(v, &demand))
                return 2;
        } else if (OPT("--seeds")) {
            if (m < 0)
                return 2;
            seeds_arg = v;
        } else if (OPT("--out")) {
            if (m < 0 || !cli_out_dir("--out", v))
                return 2;
            out_dir = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, PACK_MAX_JOBS, &jobs))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim pack' "
                                   "(see clustersim pack --help)",
                                   argv[i]);
        }
#undef OPT
    }
    if (!trace)
        return cli_usage_error("clustersim pack needs --trace FILE (see clustersim pack --help)");
    if (!cluster)
        return cli_usage_error("clustersim pack needs --cluster FILE|SPEC "
                               "(see clustersim pack --help)");
    static uint64_t seeds[PACK_MAX_SEEDS];
    uint32_t n_seeds;
    if ((n_seeds = (uint32_t)cli_seeds(seeds_arg, seeds, PACK_MAX_SEEDS)) == 0)
        return 2;
    char pol_buf[1024];
    if (strlen(policies_arg) >= sizeof pol_buf)
        return cli_usage_error("option --policies: the list is too long");
    snprintf(pol_buf, sizeof pol_buf, "%s", policies_arg);
    const char *names[PACK_MAX_POLICIES];
    uint32_t n_pol;
    if (!parse_policies(pol_buf, names, &n_pol))
        return 2;
    if (!cli_check_policy_opts(pending_opts, (size_t)n_opts, names, n_pol))
        return 2;
    static policy_config pcfg[PACK_MAX_POLICIES];
    for (uint32_t p = 0; p < n_pol; p++) {
        memset(&pcfg[p], 0, sizeof pcfg[p]);
        pcfg[p].policy = names[p];
        for (int k = 0; k < n_opts; k++)
            if (!cli_policy_opt(&pcfg[p], pending_opts[k]))
                return 2;
    }
    if (!study_mkdirs(out_dir))
        return 2;
    pack_config c = {.trace = trace,
                     .format = format,
                     .cluster = cluster,
                     .catalog = catalog,
                     .out_dir = out_dir,
                     .names = names,
                     .pcfg = pcfg,
                     .n_pol = n_pol,
                     .seeds = seeds,
                     .n_seeds = n_seeds,
                     .demand = demand,
                     .jobs = (uint32_t)jobs,
                     .skip_bad_rows = skip_bad,
                     .figure = figure};
    return study_pack(&c);
}
