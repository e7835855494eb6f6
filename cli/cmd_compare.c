/*
 * cmd_compare.c: `clustersim compare` — the options of a comparison of policies (and
 * seeds) on one trace and cluster; study_compare (study/study.h) runs it and writes the
 * report.
 */
#include "cli/cli.h"
#include "policies/registry.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_SEEDS 1000
#define MAX_PASS 64

static const char usage[] =
    "usage: clustersim compare --trace FILE --cluster FILE|SPEC --policies A,B,... --out DIR\n"
    "                          [options] [run options]\n"
    "  --trace FILE          trace to replay (as for clustersim run)\n"
    "  --format NAME         trace format (default native)\n"
    "  --cluster FILE|SPEC   node-list CSV or compact spec\n"
    "  --catalog FILE        GPU catalog CSV\n"
    "  --policies A,B,...    policies to compare; the first is the baseline\n"
    "  --policy-opt K=V      option of every policy that has K; P:K=V for policy P only\n"
    "  --seeds S             seeds: N, A..B or A,B,C (default 1); each policy runs once per seed\n"
    "  --seed N              the same as --seeds N (give one of the two)\n"
    "  --jobs N              runs at once (default: the number of cores, %ld here)\n"
    "  --out DIR             report.md, report.html, figures/ and runs/<run>/ go here\n"
    "  --no-figures          write the tables only\n"
    "  --quiet               no progress display\n"
    "Any other option but --check is passed to each `clustersim run` (e.g.\n"
    "--sample-interval 5m, --horizon 30d, --checkpoint-interval 1h). Exit status: 0 all\n"
    "runs completed, 1 some run failed (the report is still written and says why), 2 bad\n"
    "usage.\n";

static long cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

int cmd_compare(int argc, char **argv)
{
    const char *trace = NULL, *format = NULL, *cluster = NULL, *catalog = NULL;
    const char *policies = NULL, *seeds_text = NULL, *out = NULL;
    const char *popts[POLICY_MAX_OPTIONS], *pass[MAX_PASS];
    int n_popts = 0, n_pass = 0;
    uint64_t jobs = (uint64_t)cores();
    bool figures = true, quiet = false;
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(usage, cores());
            return 0;
        }
        if (cli_flag(argv, i, "--no-figures")) {
            figures = false;
            continue;
        }
        if (cli_flag(argv, i, "--quiet")) {
            quiet = true;
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
        } else if (OPT("--policies")) {
            if (m < 0)
                return 2;
            policies = v;
        } else if (OPT("--policy-opt")) {
            if (m < 0)
                return 2;
            if (n_popts >= POLICY_MAX_OPTIONS)
                return cli_usage_error("too many --policy-opt (at most %d)", POLICY_MAX_OPTIONS);
            if (!strchr(v, '='))
                return cli_usage_error("--policy-opt '%s': expected KEY=VALUE or "
                                       "POLICY:KEY=VALUE",
                                       v);
            popts[n_popts++] = v;
        } else if (OPT("--seeds") || OPT("--seed")) {
            if (m < 0)
                return 2;
            /* cli_opt refuses a name given twice; one of each is the same mistake. */
            if (seeds_text) {
                char q1[128], q2[128];
                csvin_quote(seeds_text, strlen(seeds_text), q1, sizeof q1);
                csvin_quote(v, strlen(v), q2, sizeof q2);
                return cli_usage_error("options --seeds and --seed are one option, given twice "
                                       "(%s, then %s): give it once",
                                       q1, q2);
            }
            seeds_text = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, 4096, &jobs))
                return 2;
        } else if (OPT("--out")) {
            if (m < 0 || !cli_out_dir("--out", v))
                return 2;
            out = v;
        } else if (OPT("--policy")) {
            return cli_usage_error("clustersim compare takes --policies A,B,... (not --policy)");
        } else if (cli_flag(argv, i, "--check")) {
            /* Each run would check its inputs and write nothing to compare. */
            return cli_usage_error("clustersim compare has no --check: check the inputs with "
                                   "clustersim run --check (same trace, cluster and options)");
        } else if (strncmp(argv[i], "--", 2) == 0 && argv[i][2]) {
            /* A run option: passed on, with its value when it has one. */
            if (n_pass + 2 > MAX_PASS)
                return cli_usage_error("too many run options (at most %d)", MAX_PASS);
            pass[n_pass++] = argv[i];
            if (!strchr(argv[i], '=') && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                pass[n_pass++] = argv[++i];
        } else {
            return cli_usage_error("unexpected argument '%s' for 'clustersim compare' (see "
                                   "clustersim compare --help)",
                                   argv[i]);
        }
#undef OPT
    }
    if (!trace)
        return cli_usage_error("clustersim compare needs --trace FILE (see clustersim compare "
                               "--help)");
    if (trace_path_is_stream(trace))
        return cli_usage_error("clustersim compare reads the trace once per run: give a file, "
                               "not standard input or a pipe");
    if (!cluster)
        return cli_usage_error("clustersim compare needs --cluster FILE|SPEC");
    if (!policies)
        return cli_usage_error("clustersim compare needs --policies A,B,...");
    if (!out)
        return cli_usage_error("clustersim compare needs --out DIR");

    /* Policies: registered ones (their names are safe as directory names), each once. */
    const char *pol[REPORT_MAX_POLICIES];
    size_t n_pol = 0;
    for (const char *p = policies;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return cli_usage_error("option --policies: expected policy names separated by "
                                   "commas, got \"%s\"",
                                   policies);
        if (n_pol == REPORT_MAX_POLICIES)
            return cli_usage_error("option --policies: at most %d policies", REPORT_MAX_POLICIES);
        char name[49];
        snprintf(name, sizeof name, "%.*s", (int)(len < 48 ? len : 48), p);
        const policy_ops *ops = len > 48 ? NULL : policy_find(name);
        if (!ops) {
            char known[512];
            policy_known_names(known, sizeof known);
            return cli_usage_error("option --policies: unknown policy '%.*s' (known: %s)", (int)len,
                                   p, known);
        }
        for (size_t k = 0; k < n_pol; k++)
            if (pol[k] == ops->name)
                return cli_usage_error("option --policies: '%s' is given twice", pol[k]);
        pol[n_pol++] = ops->name;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (!cli_check_policy_opts(popts, (size_t)n_popts, pol, n_pol))
        return 2;
    uint64_t *seeds = sim_calloc(MAX_SEEDS, sizeof *seeds);
    if (!seeds)
        return cli_usage_error("out of memory");
    size_t n_seeds = 1;
    seeds[0] = 1;
    if (seeds_text && (n_seeds = cli_seeds(seeds_text, seeds, MAX_SEEDS)) == 0) {
        sim_free(seeds);
        return 2;
    }

    char self[PATH_MAX];
    if (!study_self_exe(self, sizeof self, argv[0])) {
        sim_free(seeds);
        return 2;
    }

    static bool applies[REPORT_MAX_POLICIES * POLICY_MAX_OPTIONS];
    for (size_t p = 0; p < n_pol; p++)
        for (int q = 0; q < n_popts; q++)
            applies[p * (size_t)n_popts + (size_t)q] = cli_policy_opt_applies(popts[q], pol[p]);
    /* An option naming a file a policy writes would be written over by every run but
     * the last: at most one run may have it. */
    for (int q = 0; q < n_popts; q++) {
        const char *pname, *key;
        size_t pname_len, key_len, writers = 0;
        cli_policy_opt_split(popts[q], &pname, &pname_len, &key, &key_len);
        for (size_t p = 0; p < n_pol; p++)
            if (applies[p * (size_t)n_popts + (size_t)q] &&
                policy_option_writes(policy_find(pol[p]), key, key_len))
                writers += n_seeds;
        if (writers > 1) {
            sim_free(seeds);
            return cli_usage_error("--policy-opt '%s' names a file the policy writes, and %zu runs "
                                   "would write it over each other: give it to one policy "
                                   "(POLICY:KEY=VALUE) and one seed, or to 'clustersim run'",
                                   popts[q], writers);
        }
    }
    compare_config c = {.self = self,
                        .trace = trace,
                        .format = format,
                        .cluster = cluster,
                        .catalog = catalog,
                        .out = out,
                        .policies = pol,
                        .n_policies = n_pol,
                        .policy_opts = popts,
                        .n_policy_opts = (size_t)n_popts,
                        .policy_opt_applies = applies,
                        .pass = pass,
                        .n_pass = (size_t)n_pass,
                        .seeds = seeds,
                        .n_seeds = n_seeds,
                        .seeds_text = seeds_text,
                        .jobs = (unsigned)jobs,
                        .figures = figures,
                        .quiet = quiet,
                        .argc = argc,
                        .argv = argv};
    int rc = study_compare(&c);
    sim_free(seeds);
    return rc;
}
