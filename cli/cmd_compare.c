/*
 * cmd_compare.c: `clustersim compare` — run several policies (and seeds) on the same
 * trace and cluster, each as its own `clustersim run` process (this executable,
 * /proc/self/exe), at most --jobs at once, then write the comparison report
 * (report.h). A run that fails is reported with its exit status and the last line it
 * wrote to stderr; the others' results are kept. Run outputs go to
 * DIR/runs/<policy>/ (one seed) or DIR/runs/<policy>-seed<k>/ (several).
 */
#include "cli/cli.h"

#include "cli/proc.h"
#include "cli/report.h"
#include "sim/alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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
    "  --jobs N              runs at once (default: the number of cores, %ld here)\n"
    "  --out DIR             report.md, report.html, figures/ and runs/<run>/ go here\n"
    "  --no-figures          write the tables only\n"
    "  --quiet               no progress display\n"
    "Any other option is passed to each `clustersim run` (e.g. --sample-interval 5m,\n"
    "--horizon 30d, --checkpoint-interval 1h). Exit status: 0 all runs completed, 1 some\n"
    "run failed (the report is still written and says why), 2 bad usage.\n";

typedef struct progress {
    bool live;   /* redraw one status line (stderr is a terminal) */
    bool quiet;
    size_t done, failed;
    char **names;
} progress;

static long cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

static void show(void *ctx, const cli_proc *p, size_t n, size_t i)
{
    progress *pg = ctx;
    if (pg->quiet)
        return;
    if (i != (size_t)-1 && p[i].state == CLI_PROC_DONE) {
        pg->done++;
        bool ok = p[i].exit_status == 0;
        pg->failed += !ok;
        if (pg->live)
            fputs("\r\033[K", stderr);
        fprintf(stderr, "  %-7s %-28s %7.2f s\n", ok ? "done" : "FAILED", pg->names[i],
                p[i].wall_s);
    }
    if (!pg->live)
        return;
    char line[160];
    size_t o = (size_t)snprintf(line, sizeof line, "compare: %zu/%zu runs done", pg->done, n);
    if (pg->failed)
        o += (size_t)snprintf(line + o, sizeof line - o, " (%zu failed)", pg->failed);
    double now = cli_wall_now();
    bool first = true;
    for (size_t k = 0; k < n && o < sizeof line; k++)
        if (p[k].state == CLI_PROC_RUNNING) {
            o += (size_t)snprintf(line + o, sizeof line - o, "%s %s %.0fs",
                                  first ? "; running:" : ",", pg->names[k], now - p[k].start_s);
            first = false;
        }
    fprintf(stderr, "\r\033[K%s", line);
}

/* Remove the outputs an earlier run left in dir, so a failed run cannot be mistaken for
 * a complete one. */
static void clear_run_dir(const char *dir)
{
    static const char *const files[] = {"jobs.csv", "timeseries.csv", "tenants.csv", "summary.json",
                                        "run.json", "run.log",        "INCOMPLETE"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, files[k]);
        remove(p);
    }
}

/* Write dir/INCOMPLETE: why the outputs beside it are not a finished comparison. */
static void mark_incomplete(const char *dir, const char *why)
{
    char p[1300];
    snprintf(p, sizeof p, "%s/INCOMPLETE", dir);
    cli_outfile o;
    if (cli_out_open_path(&o, p)) {
        fprintf(o.f, "%s\n", why);
        cli_out_close(&o, true);
    }
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
                                       "POLICY:KEY=VALUE", v);
            popts[n_popts++] = v;
        } else if (OPT("--seeds") || OPT("--seed")) {
            if (m < 0)
                return 2;
            seeds_text = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, 4096, &jobs))
                return 2;
        } else if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--policy")) {
            return cli_usage_error("clustersim compare takes --policies A,B,... (not --policy)");
        } else if (strncmp(argv[i], "--", 2) == 0 && argv[i][2]) {
            /* A run option: passed on, with its value when it has one. */
            if (n_pass + 2 > MAX_PASS)
                return cli_usage_error("too many run options (at most %d)", MAX_PASS);
            pass[n_pass++] = argv[i];
            if (!strchr(argv[i], '=') && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                pass[n_pass++] = argv[++i];
        } else {
            return cli_usage_error("unexpected argument '%s' for 'clustersim compare' (see "
                                   "clustersim compare --help)", argv[i]);
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
                                   "commas, got \"%s\"", policies);
        if (n_pol == REPORT_MAX_POLICIES)
            return cli_usage_error("option --policies: at most %d policies",
                                   REPORT_MAX_POLICIES);
        char name[49];
        snprintf(name, sizeof name, "%.*s", (int)(len < 48 ? len : 48), p);
        const policy_ops *ops = len > 48 ? NULL : policy_find(name);
        if (!ops) {
            char known[512];
            policy_known_names(known, sizeof known);
            return cli_usage_error("option --policies: unknown policy '%.*s' (known: %s)",
                                   (int)len, p, known);
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
    if (!cli_self_exe(self, sizeof self, argv[0])) {
        sim_free(seeds);
        return 2;
    }

    size_t n_runs = n_pol * n_seeds;
    int rc = 2;
    char runs_dir[1100];
    snprintf(runs_dir, sizeof runs_dir, "%s/runs", out);
    /* Per run: its name, directory, log, argv (fixed part + options), error text. */
    size_t argv_len = 20 + 2 * (size_t)n_popts + (size_t)n_pass;
    char(*names)[80] = sim_calloc(n_runs, sizeof *names);
    char(*dirs)[1200] = sim_calloc(n_runs, sizeof *dirs);
    char(*logs)[1300] = sim_calloc(n_runs, sizeof *logs);
    char(*seedtxt)[24] = sim_calloc(n_runs, sizeof *seedtxt);
    char(*errors)[700] = sim_calloc(n_runs, sizeof *errors);
    char **name_ptr = sim_calloc(n_runs, sizeof *name_ptr);
    char **args = sim_calloc(n_runs * argv_len, sizeof *args);
    cli_proc *procs = sim_calloc(n_runs, sizeof *procs);
    report_run_spec *specs = sim_calloc(n_runs, sizeof *specs);
    if (!names || !dirs || !logs || !seedtxt || !errors || !name_ptr || !args || !procs ||
        !specs) {
        cli_usage_error("out of memory");
        goto out;
    }
    if (!cli_mkdirs(out) || !cli_mkdirs(runs_dir))
        goto out;
    /* Runs in policy-major order, so the report's groups follow --policies. */
    for (size_t p = 0; p < n_pol; p++)
        for (size_t s = 0; s < n_seeds; s++) {
            size_t k = p * n_seeds + s;
            if (n_seeds > 1)
                snprintf(names[k], sizeof names[k], "%.48s-seed%llu", pol[p],
                         (unsigned long long)seeds[s]);
            else
                snprintf(names[k], sizeof names[k], "%.48s", pol[p]);
            name_ptr[k] = names[k];
            snprintf(dirs[k], sizeof dirs[k], "%s/%s", runs_dir, names[k]);
            snprintf(logs[k], sizeof logs[k], "%s/run.log", dirs[k]);
            snprintf(seedtxt[k], sizeof seedtxt[k], "%llu", (unsigned long long)seeds[s]);
            if (!cli_mkdirs(dirs[k]))
                goto out;
            clear_run_dir(dirs[k]);
            char **a = args + k * argv_len;
            size_t o = 0;
            a[o++] = self;
            a[o++] = "run";
            a[o++] = "--trace";
            a[o++] = (char *)trace;
            if (format) {
                a[o++] = "--format";
                a[o++] = (char *)format;
            }
            a[o++] = "--cluster";
            a[o++] = (char *)cluster;
            if (catalog) {
                a[o++] = "--catalog";
                a[o++] = (char *)catalog;
            }
            a[o++] = "--policy";
            a[o++] = (char *)pol[p];
            a[o++] = "--seed";
            a[o++] = seedtxt[k];
            a[o++] = "--out";
            a[o++] = dirs[k];
            a[o++] = "--quiet";
            for (int q = 0; q < n_popts; q++) {
                if (!cli_policy_opt_applies(popts[q], pol[p]))
                    continue;
                a[o++] = "--policy-opt";
                a[o++] = (char *)popts[q];
            }
            for (int q = 0; q < n_pass; q++)
                a[o++] = (char *)pass[q];
            a[o] = NULL;
            procs[k] = (cli_proc){.argv = a, .log_path = logs[k]};
        }

    /* Inputs and run options are checked once, before any run: a missing file or a bad
     * option is a usage error (status 2), not one failed run per policy and seed. The
     * policies' own options are checked by each run. */
    {
        char **c = sim_calloc(argv_len + 2, sizeof *c);
        if (!c)
            goto out;
        size_t o = 0;
        for (size_t q = 0; args[q]; q++) {
            if (!strcmp(args[q], "--policy-opt") || !strcmp(args[q], "--out")) {
                q++;
                continue;
            }
            c[o++] = args[q];
        }
        c[o++] = "--check";
        c[o] = NULL;
        cli_proc check = {.argv = c, .log_path = logs[0]};
        if (cli_procs_run(&check, 1, 1, NULL, NULL) != 0 || check.exit_status != 0) {
            char last[600];
            cli_last_line(logs[0], last, sizeof last);
            fprintf(stderr, "%s\n", *last ? last : "clustersim: error: the runs' options "
                                                   "could not be checked");
            sim_free(c);
            goto out;
        }
        sim_free(c);
    }
    progress pg = {.live = !quiet && isatty(2), .quiet = quiet, .names = name_ptr};
    if (!quiet)
        fprintf(stderr, "clustersim compare: %zu runs (%zu policies x %zu seeds), %llu at once; "
                        "outputs in %s/\n",
                n_runs, n_pol, n_seeds, (unsigned long long)jobs, runs_dir);
    double t0 = cli_wall_now();
    {
        char stale[1200];
        snprintf(stale, sizeof stale, "%s/INCOMPLETE", out);
        remove(stale);
    }
    /* An interrupt goes to the runs too, and they are waited for: none goes on writing
     * into a comparison said to be interrupted. */
    cli_forward_begin();
    if (cli_procs_run(procs, n_runs, (unsigned)jobs, show, &pg) != 0)
        fprintf(stderr, "\nclustersim: error: cannot start a run: %s\n", strerror(errno));
    if (pg.live)
        fputs("\r\033[K", stderr);
    int sig = cli_forward_signal();
    if (sig) {
        char why[200];
        snprintf(why, sizeof why, "interrupted by signal %d before this run completed", sig);
        size_t left = 0;
        for (size_t k = 0; k < n_runs; k++)
            if (procs[k].state != CLI_PROC_DONE || procs[k].exit_status != 0) {
                mark_incomplete(dirs[k], why);
                left++;
            }
        snprintf(why, sizeof why,
                 "interrupted by signal %d: %zu of %zu runs did not complete; no report was "
                 "written",
                 sig, left, n_runs);
        mark_incomplete(out, why);
        fprintf(stderr, "clustersim compare: %s (marked in %s/INCOMPLETE)\n", why, out);
    }
    cli_forward_end(); /* after a signal, ends the process by it */
    size_t failed = 0;
    for (size_t k = 0; k < n_runs; k++) {
        specs[k] = (report_run_spec){.name = names[k],
                                     .policy = pol[k / n_seeds],
                                     .seed = seeds[k % n_seeds],
                                     .dir = dirs[k]};
        const cli_proc *c = &procs[k];
        if (c->state == CLI_PROC_DONE && c->exit_status == 0)
            continue;
        char last[600];
        cli_last_line(logs[k], last, sizeof last);
        if (c->state != CLI_PROC_DONE)
            snprintf(errors[k], sizeof errors[k], "not started");
        else if (c->exit_status > 128)
            snprintf(errors[k], sizeof errors[k], "killed by signal %d%s%s",
                     c->exit_status - 128, *last ? ": " : "", last);
        else
            snprintf(errors[k], sizeof errors[k], "exit status %d%s%s", c->exit_status,
                     *last ? ": " : "", last);
        specs[k].failed = true;
        specs[k].error = errors[k];
        failed++;
        fprintf(stderr, "clustersim: run %s failed: %s\n", names[k], errors[k]);
    }
    if (!quiet)
        fprintf(stderr, "clustersim compare: %zu of %zu runs completed in %.1f s\n",
                n_runs - failed, n_runs, cli_wall_now() - t0);

    report_config rc_cfg = {
        .out_dir = out,
        .argc = argc,
        .argv = argv,
        .trace = trace,
        .format = format,
        .cluster = cluster,
        .catalog = catalog,
        .runs = specs,
        .n_runs = n_runs,
        .seeds_text = n_seeds > 1 ? seeds_text : NULL,
        .figures = figures,
        .jobs = (unsigned)jobs,
    };
    report_outcome o;
    sim_diag d = {0};
    int st = report_write(&rc_cfg, &o, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        rc = 1;
        goto out;
    }
    if (o.runs_failed > failed)
        fprintf(stderr, "clustersim: %zu run(s) left outputs the report could not read (see "
                        "its Runs table)\n", o.runs_failed - failed);
    if (o.gnuplot_missing)
        fprintf(stderr, "clustersim: warning: gnuplot is not installed, so no figure was drawn; "
                        "the tables are written. Install it with: apt-get install %s\n",
                REPORT_GNUPLOT_PACKAGE);
    if (o.figures_failed)
        fprintf(stderr, "clustersim: warning: %zu figure(s) not drawn: %s\n", o.figures_failed,
                o.problem);
    printf("report: %s/report.md and %s/report.html", out, out);
    if (o.figures_drawn)
        printf(" (%zu figures in %s/figures/, PNG and SVG)", o.figures_drawn, out);
    printf("\n");
    rc = o.runs_failed ? 1 : 0;
out:
    sim_free(seeds);
    sim_free(names);
    sim_free(dirs);
    sim_free(logs);
    sim_free(seedtxt);
    sim_free(errors);
    sim_free(name_ptr);
    sim_free(args);
    sim_free(procs);
    sim_free(specs);
    return rc;
}
