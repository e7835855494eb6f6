/*
 * compare.c: the driver of `clustersim compare` — run several policies (and seeds) on
 * the same trace and cluster, each as its own `clustersim run` process (this executable,
 * /proc/self/exe), at most --jobs at once, then write the comparison report
 * (report.h). A run that fails is reported with its exit status and the last line it
 * wrote to stderr; the others' results are kept. Run outputs go to
 * DIR/runs/<policy>/ (one seed) or DIR/runs/<policy>-seed<k>/ (several).
 */
#include "study/study.h"

#include "study/proc.h"
#include "base/alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct progress {
    bool live; /* redraw one status line (stderr is a terminal) */
    bool quiet;
    size_t done, failed;
    char **names;
} progress;

static void show(void *ctx, const study_proc *p, size_t n, size_t i)
{
    progress *pg = ctx;
    if (pg->quiet)
        return;
    if (i != (size_t)-1 && p[i].state == STUDY_PROC_DONE) {
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
    double now = study_wall_now();
    bool first = true;
    for (size_t k = 0; k < n && o < sizeof line; k++)
        if (p[k].state == STUDY_PROC_RUNNING) {
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
    study_outfile o;
    if (study_out_open_path(&o, p)) {
        fprintf(o.f, "%s\n", why);
        study_out_close(&o, true);
    }
}

int study_compare(const compare_config *cfg)
{
    size_t n_runs = cfg->n_policies * cfg->n_seeds;
    int rc = 2;
    char runs_dir[1100];
    snprintf(runs_dir, sizeof runs_dir, "%s/runs", cfg->out);
    /* Per run: its name, directory, log, argv (fixed part + options), error text. */
    size_t argv_len = 20 + 2 * (size_t)cfg->n_policy_opts + (size_t)cfg->n_pass;
    char(*names)[80] = sim_calloc(n_runs, sizeof *names);
    char(*dirs)[1200] = sim_calloc(n_runs, sizeof *dirs);
    char(*logs)[1300] = sim_calloc(n_runs, sizeof *logs);
    char(*seedtxt)[24] = sim_calloc(n_runs, sizeof *seedtxt);
    char(*errors)[700] = sim_calloc(n_runs, sizeof *errors);
    char **name_ptr = sim_calloc(n_runs, sizeof *name_ptr);
    char **args = sim_calloc(n_runs * argv_len, sizeof *args);
    study_proc *procs = sim_calloc(n_runs, sizeof *procs);
    report_run_spec *specs = sim_calloc(n_runs, sizeof *specs);
    if (!names || !dirs || !logs || !seedtxt || !errors || !name_ptr || !args || !procs || !specs) {
        study_error("out of memory");
        goto out;
    }
    if (!study_mkdirs(cfg->out) || !study_mkdirs(runs_dir))
        goto out;
    /* Runs in policy-major order, so the report's groups follow --policies. */
    for (size_t p = 0; p < cfg->n_policies; p++)
        for (size_t s = 0; s < cfg->n_seeds; s++) {
            size_t k = p * cfg->n_seeds + s;
            if (cfg->n_seeds > 1)
                snprintf(names[k], sizeof names[k], "%.48s-seed%llu", cfg->policies[p],
                         (unsigned long long)cfg->seeds[s]);
            else
                snprintf(names[k], sizeof names[k], "%.48s", cfg->policies[p]);
            name_ptr[k] = names[k];
            snprintf(dirs[k], sizeof dirs[k], "%s/%s", runs_dir, names[k]);
            snprintf(logs[k], sizeof logs[k], "%s/run.log", dirs[k]);
            snprintf(seedtxt[k], sizeof seedtxt[k], "%llu", (unsigned long long)cfg->seeds[s]);
            if (!study_mkdirs(dirs[k]))
                goto out;
            clear_run_dir(dirs[k]);
            char **a = args + k * argv_len;
            size_t o = 0;
            a[o++] = (char *)cfg->self;
            a[o++] = "run";
            a[o++] = "--trace";
            a[o++] = (char *)cfg->trace;
            if (cfg->format) {
                a[o++] = "--format";
                a[o++] = (char *)cfg->format;
            }
            a[o++] = "--cluster";
            a[o++] = (char *)cfg->cluster;
            if (cfg->catalog) {
                a[o++] = "--catalog";
                a[o++] = (char *)cfg->catalog;
            }
            a[o++] = "--policy";
            a[o++] = (char *)cfg->policies[p];
            a[o++] = "--seed";
            a[o++] = seedtxt[k];
            a[o++] = "--out";
            a[o++] = dirs[k];
            a[o++] = "--quiet";
            for (size_t q = 0; q < cfg->n_policy_opts; q++) {
                if (!cfg->policy_opt_applies[p * cfg->n_policy_opts + q])
                    continue;
                a[o++] = "--policy-opt";
                a[o++] = (char *)cfg->policy_opts[q];
            }
            for (size_t q = 0; q < cfg->n_pass; q++)
                a[o++] = (char *)cfg->pass[q];
            a[o] = NULL;
            procs[k] = (study_proc){.argv = a, .log_path = logs[k]};
        }

    /* Inputs and run options are checked once, before any run: a missing file or a bad
     * option is a usage error (status 2), not one failed run per policy and seed. The
     * policies' own options are checked by each run. `--check` goes before the options
     * passed on, which end the argv as in the runs: one given last without its value
     * is reported as missing, not given `--check` as its value. */
    {
        char **c = sim_calloc(argv_len + 2, sizeof *c);
        if (!c)
            goto out;
        size_t o = 0;
        c[o++] = args[0];
        c[o++] = args[1];
        c[o++] = "--check";
        for (size_t q = 2; args[q]; q++) {
            if (!strcmp(args[q], "--policy-opt") || !strcmp(args[q], "--out")) {
                q++;
                continue;
            }
            c[o++] = args[q];
        }
        c[o] = NULL;
        study_proc check = {.argv = c, .log_path = logs[0]};
        if (study_procs_run(&check, 1, 1, NULL, NULL) != 0 || check.exit_status != 0) {
            char last[600];
            study_last_line(logs[0], last, sizeof last);
            fprintf(stderr, "%s\n",
                    *last ? last
                          : "clustersim: error: the runs' options "
                            "could not be checked");
            sim_free(c);
            goto out;
        }
        sim_free(c);
    }
    progress pg = {.live = !cfg->quiet && isatty(2), .quiet = cfg->quiet, .names = name_ptr};
    if (!cfg->quiet)
        fprintf(stderr,
                "clustersim compare: %zu runs (%zu policies x %zu seeds), %llu at once; "
                "outputs in %s/\n",
                n_runs, cfg->n_policies, cfg->n_seeds, (unsigned long long)cfg->jobs, runs_dir);
    double t0 = study_wall_now();
    {
        char stale[1200];
        snprintf(stale, sizeof stale, "%s/INCOMPLETE", cfg->out);
        remove(stale);
    }
    /* An interrupt goes to the runs too, and they are waited for: none goes on writing
     * into a comparison said to be interrupted. */
    study_forward_begin();
    if (study_procs_run(procs, n_runs, cfg->jobs, show, &pg) != 0)
        fprintf(stderr, "\nclustersim: error: cannot start a run: %s\n", strerror(errno));
    if (pg.live)
        fputs("\r\033[K", stderr);
    int sig = study_forward_signal();
    if (sig) {
        char why[200];
        snprintf(why, sizeof why, "interrupted by signal %d before this run completed", sig);
        size_t left = 0;
        for (size_t k = 0; k < n_runs; k++)
            if (procs[k].state != STUDY_PROC_DONE || procs[k].exit_status != 0) {
                mark_incomplete(dirs[k], why);
                left++;
            }
        snprintf(why, sizeof why,
                 "interrupted by signal %d: %zu of %zu runs did not complete; no report was "
                 "written",
                 sig, left, n_runs);
        mark_incomplete(cfg->out, why);
        fprintf(stderr, "clustersim compare: %s (marked in %s/INCOMPLETE)\n", why, cfg->out);
    }
    study_forward_end(); /* after a signal, ends the process by it */
    size_t failed = 0;
    for (size_t k = 0; k < n_runs; k++) {
        specs[k] = (report_run_spec){.name = names[k],
                                     .policy = cfg->policies[k / cfg->n_seeds],
                                     .seed = cfg->seeds[k % cfg->n_seeds],
                                     .dir = dirs[k]};
        const study_proc *c = &procs[k];
        if (c->state == STUDY_PROC_DONE && c->exit_status == 0)
            continue;
        char last[600];
        study_last_line(logs[k], last, sizeof last);
        if (c->state != STUDY_PROC_DONE)
            snprintf(errors[k], sizeof errors[k], "not started");
        else if (c->exit_status > 128)
            snprintf(errors[k], sizeof errors[k], "killed by signal %d%s%s", c->exit_status - 128,
                     *last ? ": " : "", last);
        else
            snprintf(errors[k], sizeof errors[k], "exit status %d%s%s", c->exit_status,
                     *last ? ": " : "", last);
        specs[k].failed = true;
        specs[k].error = errors[k];
        failed++;
        fprintf(stderr, "clustersim: run %s failed: %s\n", names[k], errors[k]);
    }
    if (!cfg->quiet)
        fprintf(stderr, "clustersim compare: %zu of %zu runs completed in %.1f s\n",
                n_runs - failed, n_runs, study_wall_now() - t0);

    report_config rc_cfg = {
        .out_dir = cfg->out,
        .argc = cfg->argc,
        .argv = cfg->argv,
        .trace = cfg->trace,
        .format = cfg->format,
        .cluster = cfg->cluster,
        .catalog = cfg->catalog,
        .runs = specs,
        .n_runs = n_runs,
        .seeds_text = cfg->n_seeds > 1 ? cfg->seeds_text : NULL,
        .figures = cfg->figures,
        .jobs = cfg->jobs,
    };
    report_outcome o;
    sim_diag d = {0};
    int st = report_write(&rc_cfg, &o, &d);
    if (st != SIM_OK) {
        study_print_diag(&d);
        rc = 1;
        goto out;
    }
    if (o.runs_failed > failed)
        fprintf(stderr,
                "clustersim: %zu run(s) left outputs the report could not read (see "
                "its Runs table)\n",
                o.runs_failed - failed);
    if (o.gnuplot_missing)
        fprintf(stderr,
                "clustersim: warning: gnuplot is not installed, so no figure was drawn; "
                "the tables are written. Install it with: apt-get install %s\n",
                REPORT_GNUPLOT_PACKAGE);
    if (o.figures_failed)
        fprintf(stderr, "clustersim: warning: %zu figure(s) not drawn: %s\n", o.figures_failed,
                o.problem);
    printf("report: %s/report.md and %s/report.html", cfg->out, cfg->out);
    if (o.figures_drawn)
        printf(" (%zu figures in %s/figures/, PNG and SVG)", o.figures_drawn, cfg->out);
    printf("\n");
    rc = o.runs_failed ? 1 : 0;
out:
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
