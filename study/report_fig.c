/*
 * report_fig.c: the report's figures. For each figure this file writes the data gnuplot
 * draws (figures/data/<name>.dat) and a few gnuplot variable assignments
 * (figures/data/<name>.vars.gp), then runs `gnuplot <vars> plots/<script>.gp`, which
 * writes figures/<name>.png and figures/<name>.svg; the figures are drawn in parallel.
 * Every file is first written under a scratch name beside its final one (".<name>.<pid>.*",
 * gnuplot reads and writes only those), then copied to its final path as every output is
 * written (sim_outfile_copy: a symlink keeps its link, a FIFO or device is written
 * through, a directory is refused), so a path the user set up is never replaced and an
 * interrupted report leaves no half-written figure.
 *
 * Reductions: a CDF is drawn from each run's quantile grid; with several seeds the
 * curve is the mean of the seeds' quantile functions (Vincent averaging). A time series
 * is cut into at most 800 equal time buckets between the first submission and the last
 * sample, and each bucket shows the mean of the samples (over all seeds) inside it.
 * Tenant shares are the tenant's allocated GPUs over the cluster's GPUs, averaged the
 * same way; a tenant without a tenants.csv row at a sample held nothing then, or, in a
 * run made with --tenant-rows changed, what its last row says.
 */
#include "study/report_int.h"

#include "study/proc.h"
#include "models/catalog.h"
#include "base/alloc.h"
#include "base/csvin.h"
#include "base/outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUCKETS 800
#define MAX_TENANT_PANELS 8
#define MAX_FIGS 8
#define CDF_FLOOR_S 1.0

typedef struct fig {
    const char *base;   /* output name */
    const char *script; /* plots/<script>.gp */
    char caption[256];
    char script_path[1300], outbase[1300];
    report_gpfig gp;
} fig;

static const char *const fig_ext[REPORT_F_N] = {"dat", "vars.gp", "log", "png", "svg"};

void report__gpfig_paths(report_gpfig *f, const char *fdir, const char *ddir, const char *base)
{
    long pid = (long)getpid();
    for (int k = 0; k < REPORT_F_N; k++) {
        const char *dir = k >= REPORT_F_PNG ? fdir : ddir;
        snprintf(f->final[k], sizeof f->final[k], "%s/%s.%s", dir, base, fig_ext[k]);
        snprintf(f->scratch[k], sizeof f->scratch[k], "%s/.%s.%ld.%s", dir, base, pid, fig_ext[k]);
        sim_outfile_track(f->scratch[k]);
    }
    f->tracked = true;
    snprintf(f->s_outbase, sizeof f->s_outbase, "%s/.%s.%ld", fdir, base, pid);
}

void report__gpfig_done(report_gpfig *f)
{
    if (!f->tracked)
        return;
    for (int k = 0; k < REPORT_F_N; k++) {
        unlink(f->scratch[k]);
        sim_outfile_untrack(f->scratch[k]);
    }
    f->tracked = false;
}

FILE *report__gpfig_create(report_gpfig *f, int k)
{
    /* One left by an earlier process of the same pid is replaced. */
    unlink(f->scratch[k]);
    return fopen(f->scratch[k], "wx");
}

void report__remove_stale(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        unlink(path);
}

/* v as the inside of a gnuplot single-quoted string (a quote doubled). */
static void gp_quote(char *out, size_t size, const char *v)
{
    size_t n = 0;
    for (; *v && n + 3 < size; v++) {
        if (*v == '\n')
            continue;
        if (*v == '\'')
            out[n++] = '\'';
        out[n++] = *v;
    }
    out[n] = '\0';
}

void report__gpfig_command(report_gpfig *f, const char *script)
{
    char qd[1500], qo[1500];
    gp_quote(qd, sizeof qd, f->scratch[REPORT_F_DAT]);
    gp_quote(qo, sizeof qo, f->s_outbase);
    snprintf(f->expr, sizeof f->expr, "datafile = '%s'; outbase = '%s'", qd, qo);
    f->argv[0] = "gnuplot";
    f->argv[1] = f->scratch[REPORT_F_VARS];
    f->argv[2] = "-e";
    f->argv[3] = f->expr;
    f->argv[4] = (char *)script;
    f->argv[5] = NULL;
}

int report__gpfig_install(report_gpfig *f, int exit_status, bool *drawn, char *last,
                          size_t last_size, sim_diag *d)
{
    struct stat sp, ss;
    *drawn = exit_status == 0 && stat(f->scratch[REPORT_F_PNG], &sp) == 0 && sp.st_size > 0 &&
             stat(f->scratch[REPORT_F_SVG], &ss) == 0 && ss.st_size > 0;
    study_last_line(f->scratch[REPORT_F_LOG], last, last_size);
    int st = SIM_OK;
    for (int k = 0; k < REPORT_F_N && st == SIM_OK; k++)
        if (k < REPORT_F_PNG || *drawn)
            st = sim_outfile_copy(f->final[k], f->scratch[k], d);
    if (st == SIM_OK && !*drawn) {
        report__remove_stale(f->final[REPORT_F_PNG]);
        report__remove_stale(f->final[REPORT_F_SVG]);
    }
    return st;
}

typedef struct grid {
    double t0, w;       /* first bucket start, bucket width (s) */
    double unit_s;      /* x unit */
    const char *unit;
} grid;

static void gp_string(FILE *f, const char *name, const char *v)
{
    fprintf(f, "%s = '", name);
    for (; *v; v++) {
        if (*v == '\'')
            fputc('\'', f);
        if (*v != '\n')
            fputc(*v, f);
    }
    fputs("'\n", f);
}

/* The variables every script reads: data, output, policies and their colours. */
static bool write_vars(const report *r, fig *fg, const char *title, const char *xlabel,
                       const char *ylabel, FILE **keep)
{
    FILE *f = report__gpfig_create(&fg->gp, REPORT_F_VARS);
    if (!f)
        return false;
    gp_string(f, "datafile", fg->gp.final[REPORT_F_DAT]);
    gp_string(f, "outbase", fg->outbase);
    fprintf(f, "n = %zu\n", r->n_groups);
    char names[2048] = "", colors[256] = "";
    size_t on = 0, oc = 0;
    for (size_t g = 0; g < r->n_groups; g++) {
        on += (size_t)snprintf(names + on, on < sizeof names ? sizeof names - on : 0, "%s%s",
                               g ? " " : "", r->groups[g].policy);
        oc += (size_t)snprintf(colors + oc, oc < sizeof colors ? sizeof colors - oc : 0, "%s%s",
                               g ? " " : "", report_palette[r->groups[g].color]);
    }
    gp_string(f, "names", names);
    gp_string(f, "colors", colors);
    gp_string(f, "plot_title", title);
    gp_string(f, "xlabel_text", xlabel);
    gp_string(f, "ylabel_text", ylabel);
    if (keep) {
        *keep = f;
        return true;
    }
    return fclose(f) == 0;
}

static const report_run *run_of(const report *r, const report_group *g, size_t i)
{
    return &r->runs[g->runs[i]];
}

/* A CDF of the mean quantile function of each policy's runs. Returns false when no
 * policy has a value. */
static bool cdf_data(const report *r, FILE *f, bool wait)
{
    bool any = false;
    for (size_t g = 0; g < r->n_groups; g++) {
        const report_group *gr = &r->groups[g];
        if (g)
            fputs("\n\n", f);
        size_t k = 0;
        for (size_t i = 0; i < gr->n_runs; i++) {
            const report_run *run = run_of(r, gr, i);
            k += run->ok && (wait ? run->waits : run->jobs_done) > 0;
        }
        if (!k) {
            /* An empty block keeps the policy's index and colour. */
            fputs("NaN NaN\n", f);
            continue;
        }
        any = true;
        for (int q = 0; q < REPORT_QGRID; q++) {
            double s = 0;
            for (size_t i = 0; i < gr->n_runs; i++) {
                const report_run *run = run_of(r, gr, i);
                if (run->ok && (wait ? run->waits : run->jobs_done) > 0)
                    s += wait ? run->wait_q[q] : run->jct_q[q];
            }
            double x = s / (double)k;
            fprintf(f, "%.6g %.6f\n", x > CDF_FLOOR_S ? x : CDF_FLOOR_S,
                    (double)q / (REPORT_QGRID - 1));
        }
    }
    return any;
}

static grid make_grid(const report *r)
{
    double t0 = INFINITY, t1 = -INFINITY;
    size_t most = 1;
    for (size_t i = 0; i < r->n_runs; i++) {
        const report_run *run = &r->runs[i];
        if (!run->ok || !run->n_samples)
            continue;
        if (run->jobs_total && run->first_submit_s < t0)
            t0 = run->first_submit_s;
        if (run->ts_time[run->n_samples - 1] > t1)
            t1 = run->ts_time[run->n_samples - 1];
        if (run->n_samples > most)
            most = run->n_samples;
    }
    if (!isfinite(t0))
        t0 = 0;
    if (!(t1 > t0))
        t1 = t0 + 1;
    size_t b = most < BUCKETS ? most : BUCKETS;
    grid gr = {.t0 = t0, .w = (t1 - t0) / (double)b};
    double span = t1 - t0;
    if (span < 2 * 3600.0)
        gr.unit_s = 60, gr.unit = "min";
    else if (span < 3 * 86400.0)
        gr.unit_s = 3600, gr.unit = "h";
    else
        gr.unit_s = 86400, gr.unit = "days";
    return gr;
}

static long bucket_of(const grid *gd, double t)
{
    if (t < gd->t0)
        return -1;
    long b = (long)((t - gd->t0) / gd->w);
    return b >= BUCKETS ? BUCKETS - 1 : b;
}

/* Sample i of a run's series; ctx is what the series needs (a column name). */
typedef double (*sample_fn)(const report_run *run, size_t i, const void *ctx);

static double s_pending(const report_run *run, size_t i, const void *ctx)
{
    (void)ctx;
    return run->ts_pending[i];
}

static double s_alloc(const report_run *run, size_t i, const void *ctx)
{
    (void)ctx;
    return 100 * run->ts_alloc[i];
}

static double s_eff(const report_run *run, size_t i, const void *ctx)
{
    (void)ctx;
    return 100 * run->ts_eff[i];
}

/* Column index of the fragmentation column `name` in run, or -1. */
static int frag_index(const report_run *run, const char *name)
{
    for (uint32_t k = 0; k < run->n_frag; k++)
        if (strcmp(run->frag_col[k], name) == 0)
            return (int)k;
    return -1;
}

static double s_frag(const report_run *run, size_t i, const void *ctx)
{
    int k = frag_index(run, ctx);
    return k >= 0 ? run->ts_frag[k][i] : NAN;
}

/* Online services: GPUs their demand curves ask for, and GPUs they hold. */
static double s_demand(const report_run *run, size_t i, const void *ctx)
{
    (void)ctx;
    return s_frag(run, i, "online_demand");
}

static double s_granted(const report_run *run, size_t i, const void *ctx)
{
    (void)ctx;
    return s_frag(run, i, "online_granted");
}

/* Bucket means of up to two series per policy, one data block per policy. */
static void series_data(const report *r, const grid *gd, FILE *f, sample_fn a, sample_fn b,
                        const void *ctx, double *sum, double *sum2, double *tsum, double *cnt)
{
    for (size_t g = 0; g < r->n_groups; g++) {
        const report_group *gr = &r->groups[g];
        memset(sum, 0, BUCKETS * sizeof *sum);
        memset(sum2, 0, BUCKETS * sizeof *sum2);
        memset(tsum, 0, BUCKETS * sizeof *tsum);
        memset(cnt, 0, BUCKETS * sizeof *cnt);
        for (size_t i = 0; i < gr->n_runs; i++) {
            const report_run *run = run_of(r, gr, i);
            if (!run->ok)
                continue;
            for (size_t s = 0; s < run->n_samples; s++) {
                long k = bucket_of(gd, run->ts_time[s]);
                double x = a(run, s, ctx);
                if (k < 0 || !isfinite(x))
                    continue;
                sum[k] += x;
                if (b)
                    sum2[k] += b(run, s, ctx);
                tsum[k] += run->ts_time[s];
                cnt[k]++;
            }
        }
        if (g)
            fputs("\n\n", f);
        bool any = false;
        for (int k = 0; k < BUCKETS; k++) {
            if (!cnt[k])
                continue;
            any = true;
            double t = (tsum[k] / cnt[k] - gd->t0) / gd->unit_s;
            if (b)
                fprintf(f, "%.6g %.6g %.6g\n", t, sum[k] / cnt[k], sum2[k] / cnt[k]);
            else
                fprintf(f, "%.6g %.6g\n", t, sum[k] / cnt[k]);
        }
        if (!any)
            fputs(b ? "NaN NaN NaN\n" : "NaN NaN\n", f);
    }
}

/* Add the picked tenants' allocated GPUs at sample s of run (held[p]) to their buckets. */
static void tenant_sample(const report_run *run, size_t s, const grid *gd, const double *held,
                          size_t np, double *acc)
{
    long k = bucket_of(gd, run->ts_time[s]);
    for (size_t p = 0; p < np && k >= 0; p++)
        acc[p * BUCKETS + (size_t)k] += held[p];
}

/* tenants.csv of one run into per-(panel, bucket) sums of allocated GPUs, one term per
 * timeseries.csv sample. Rows are written at samples only, in time order. In "all" mode a
 * tenant without a row at a sample held nothing then; in "changed" mode its last row
 * still holds (a row of zeros ends it). held has room for np values. */
static int tenant_sums(const report *r, const report_run *run, const grid *gd, const uint32_t *pick,
                       size_t np, double *acc, double *held, sim_diag *d)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/tenants.csv", run->spec.dir);
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    static const char *const names[] = {"time_s", "tenant", "alloc_gpus"};
    int32_t ix[3];
    csvin_row row;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected the tenants.csv header");
    if (st < 0 || (st = csvin_map_header(in, &row, names, 3, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < 3; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0, "header lacks column '%s'",
                              names[k]);
            goto out;
        }
    memset(held, 0, np * sizeof *held);
    size_t s = 0; /* the next sample to add */
    double last_t = -INFINITY;
    while ((st = csvin_next(in, &row, d)) == 1) {
        double t, a;
        if ((st = csvin_double(in, &row, ix[0], "time_s", -1e300, 1e300, &t, d)))
            goto out;
        if (t < last_t) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, ix[0] + 1,
                              "field 'time_s': %.6f is before the previous row's %.6f", t, last_t);
            goto out;
        }
        last_t = t;
        /* The samples before this row are complete. */
        for (; s < run->n_samples && run->ts_time[s] < t; s++) {
            tenant_sample(run, s, gd, held, np, acc);
            if (!run->tenant_rows_changed)
                memset(held, 0, np * sizeof *held);
        }
        const char *tn = (uint32_t)ix[1] < row.n ? row.f[ix[1]] : "";
        uint32_t id = sim_intern_find(r->tenants, tn, strlen(tn));
        size_t p = 0;
        while (p < np && pick[p] != id)
            p++;
        if (p == np)
            continue;
        if ((st = csvin_double(in, &row, ix[2], "alloc_gpus", 0, 1e300, &a, d)))
            goto out;
        held[p] = a;
    }
    if (st < 0)
        goto out;
    st = SIM_OK;
    for (; s < run->n_samples; s++) {
        tenant_sample(run, s, gd, held, np, acc);
        if (!run->tenant_rows_changed)
            memset(held, 0, np * sizeof *held);
    }
out:
    csvin_close(in);
    return st;
}

static int tenant_data(const report *r, const grid *gd, FILE *f, FILE *vars,
                       const uint32_t *pick, size_t np, double *acc, sim_diag *d)
{
    fprintf(vars, "ntenants = %zu\narray tenant[%zu]\n", np, np);
    for (size_t p = 0; p < np; p++) {
        char nm[32];
        snprintf(nm, sizeof nm, "tenant[%zu]", p + 1);
        gp_string(vars, nm, sim_intern_name(r->tenants, pick[p]));
    }
    double *sums = sim_calloc(np * BUCKETS * r->n_groups, sizeof *sums);
    double *cnts = sim_calloc(BUCKETS * r->n_groups, sizeof *cnts);
    double *ts = sim_calloc(BUCKETS * r->n_groups, sizeof *ts);
    double *gpus = sim_calloc(r->n_groups, sizeof *gpus);
    double *held = sim_calloc(np, sizeof *held);
    int st = SIM_OK;
    if (!sums || !cnts || !ts || !gpus || !held) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < r->n_groups; g++) {
        const report_group *gr = &r->groups[g];
        for (size_t i = 0; i < gr->n_runs; i++) {
            const report_run *run = run_of(r, gr, i);
            if (!run->ok)
                continue;
            gpus[g] = run->gpus;
            memset(acc, 0, np * BUCKETS * sizeof *acc);
            if ((st = tenant_sums(r, run, gd, pick, np, acc, held, d)) != SIM_OK)
                goto out;
            for (size_t k = 0; k < np * BUCKETS; k++)
                sums[g * np * BUCKETS + k] += acc[k];
            for (size_t s = 0; s < run->n_samples; s++) {
                long k = bucket_of(gd, run->ts_time[s]);
                if (k < 0)
                    continue;
                cnts[g * BUCKETS + (size_t)k]++;
                ts[g * BUCKETS + (size_t)k] += run->ts_time[s];
            }
        }
    }
    for (size_t p = 0; p < np; p++)
        for (size_t g = 0; g < r->n_groups; g++) {
            if (p || g)
                fputs("\n\n", f);
            bool any = false;
            for (size_t k = 0; k < BUCKETS; k++) {
                double c = cnts[g * BUCKETS + k];
                if (!c || !(gpus[g] > 0))
                    continue;
                any = true;
                fprintf(f, "%.6g %.6g\n", (ts[g * BUCKETS + k] / c - gd->t0) / gd->unit_s,
                        100 * sums[(g * np + p) * BUCKETS + k] / c / gpus[g]);
            }
            if (!any)
                fputs("NaN NaN\n", f);
        }
out:
    sim_free(sums);
    sim_free(cnts);
    sim_free(ts);
    sim_free(gpus);
    sim_free(held);
    return st;
}

/* Mean JCT per size class: one row per class present in the trace, one column per
 * policy; "?" marks a class without finished jobs. Returns false (no figure) when no
 * policy finished a job: bars of nothing but "?" have no range to draw. */
static bool bars_data(const report *r, FILE *f, char *unit_name, size_t un)
{
    double mean[RC_COUNT][REPORT_MAX_POLICIES];
    bool present[RC_COUNT] = {false};
    double mx = 0;
    for (int c = 0; c < RC_COUNT; c++)
        for (size_t g = 0; g < r->n_groups && g < REPORT_MAX_POLICIES; g++) {
            const report_group *gr = &r->groups[g];
            double s = 0;
            size_t k = 0;
            for (size_t i = 0; i < gr->n_runs; i++) {
                const report_run *run = run_of(r, gr, i);
                if (!run->ok)
                    continue;
                if (run->class_jobs[c])
                    present[c] = true;
                if (run->class_done[c]) {
                    s += run->class_jct_sum[c] / (double)run->class_done[c];
                    k++;
                }
            }
            mean[c][g] = k ? s / (double)k : NAN;
            if (k && mean[c][g] > mx)
                mx = mean[c][g];
        }
    report_unit u = report__unit_for(mx);
    double us = u.s;
    snprintf(unit_name, un, "%s", u.name);
    fputs("\"size\"", f);
    for (size_t g = 0; g < r->n_groups; g++)
        fprintf(f, " \"%s\"", r->groups[g].policy);
    fputc('\n', f);
    bool any = false;
    for (int c = 0; c < RC_COUNT; c++)
        for (size_t g = 0; g < r->n_groups && g < REPORT_MAX_POLICIES; g++)
            any |= present[c] && isfinite(mean[c][g]);
    for (int c = 0; c < RC_COUNT && any; c++) {
        if (!present[c])
            continue;
        fprintf(f, "\"%s\"", report_class_name[c]);
        for (size_t g = 0; g < r->n_groups && g < REPORT_MAX_POLICIES; g++) {
            if (isfinite(mean[c][g]))
                fprintf(f, " %.6g", mean[c][g] / us);
            else
                fputs(" ?", f);
        }
        fputc('\n', f);
    }
    return any;
}

static bool make_dir(const char *p)
{
    return mkdir(p, 0777) == 0 || errno == EEXIST;
}

int report__draw_figures(const report *r, const char *out_dir, unsigned jobs,
                         report_figure *drawn, size_t max, report_outcome *o, sim_diag *d)
{
    static const char *const bases[] = {"jct_cdf",       "wait_cdf",     "utilisation", "queue",
                                        "fragmentation", "tenant_share", "jct_by_size", "online"};
    char fdir[1100], ddir[1200];
    snprintf(fdir, sizeof fdir, "%s/figures", out_dir);
    snprintf(ddir, sizeof ddir, "%s/data", fdir);
    if (!make_dir(fdir) || !make_dir(ddir))
        return sim_diag_set(d, SIM_EIO, fdir, 0, 0, "cannot create the directory: %s",
                            strerror(errno));
    fig figs[MAX_FIGS];
    size_t nf = 0;
    bool made[sizeof bases / sizeof bases[0]] = {false};
    double *buf = sim_calloc(4 * BUCKETS, sizeof *buf);
    double *acc = sim_calloc(MAX_TENANT_PANELS * BUCKETS, sizeof *acc);
    int st = SIM_OK;
    if (!buf || !acc) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    /* A time series needs two samples at least: with none (--sample-interval 0) or one
     * (every job rejected at once: the only sample is at time 0) it has no x range, so
     * its figures are left out and the outcome says why. */
    bool series = false;
    for (size_t i = 0; i < r->n_runs; i++)
        series |= r->runs[i].ok && r->runs[i].n_samples >= 2;
    grid gd = make_grid(r);
    char xlabel[128];
    snprintf(xlabel, sizeof xlabel, "time since the first submission (%s)", gd.unit);
    const char *data_dir = model_data_dir();
    for (size_t b = 0; b < sizeof bases / sizeof bases[0] && nf < MAX_FIGS; b++) {
        fig *fg = &figs[nf];
        memset(fg, 0, sizeof *fg);
        fg->base = bases[b];
        report__gpfig_paths(&fg->gp, fdir, ddir, fg->base);
        snprintf(fg->outbase, sizeof fg->outbase, "%s/%s", fdir, fg->base);
        FILE *f = report__gpfig_create(&fg->gp, REPORT_F_DAT);
        if (!f) {
            st = sim_diag_set(d, SIM_EIO, fg->gp.scratch[REPORT_F_DAT], 0, 0,
                              "cannot create the file: %s", strerror(errno));
            report__gpfig_done(&fg->gp);
            goto out;
        }
        bool keep = true, ok = true;
        FILE *vars = NULL;
        bool timeseries = b >= 2 && b != 6;
        if (timeseries && !series) {
            keep = false;
            snprintf(o->note, sizeof o->note,
                     "no time-series figure (utilisation, queue, fragmentation, tenant share) "
                     "is drawn: timeseries.csv has fewer than two samples (--sample-interval "
                     "0, or a run that ended at its first sample)");
        }
        switch (timeseries && !series ? -1 : (int)b) {
        case 0:
        case 1:
            fg->script = "cdf";
            keep = cdf_data(r, f, b == 1);
            snprintf(fg->caption, sizeof fg->caption,
                     b ? "CDF of the wait (first start - submit) of started jobs, log scale"
                       : "CDF of the job completion time (JCT) of finished jobs, log scale");
            ok = write_vars(r, fg,
                            b ? "Wait before the first start (CDF)"
                              : "Job completion time (CDF)",
                            b ? "wait (log scale; waits under 1 s drawn at 1 s)"
                              : "JCT (log scale; under 1 s drawn at 1 s)",
                            "fraction of jobs", NULL);
            break;
        case 2:
            fg->script = "timeseries";
            series_data(r, &gd, f, s_alloc, s_eff, NULL, buf, buf + BUCKETS, buf + 2 * BUCKETS,
                        buf + 3 * BUCKETS);
            snprintf(fg->caption, sizeof fg->caption,
                     "GPU utilisation over time: the share of all GPUs allocated to jobs "
                     "(top) and really used by them (bottom)");
            ok = write_vars(r, fg, "GPU utilisation", xlabel, "GPU utilisation (% of all GPUs)",
                            &vars);
            if (ok) {
                fputs("ymax = 100\nncols = 2\ncol1 = 'allocated: share of all GPUs held by jobs'\n"
                      "col2 = 'effective: share really used, min(share, true demand)'\n",
                      vars);
                ok = fclose(vars) == 0;
            }
            break;
        case 3:
            fg->script = "timeseries";
            series_data(r, &gd, f, s_pending, NULL, NULL, buf, buf + BUCKETS, buf + 2 * BUCKETS,
                        buf + 3 * BUCKETS);
            snprintf(fg->caption, sizeof fg->caption, "Jobs waiting in the queue over time");
            ok = write_vars(r, fg, "Queue length", xlabel, "pending jobs", &vars);
            if (ok) {
                fputs("ymax = 0\nncols = 1\ncol1 = ''\ncol2 = ''\n", vars);
                ok = fclose(vars) == 0;
            }
            break;
        case 4: {
            const char *frag_column = NULL;
            for (size_t i = 0; i < r->n_runs && !frag_column; i++)
                for (uint32_t k = 0; r->runs[i].ok && k < r->runs[i].n_frag && !frag_column; k++)
                    if (strncasecmp(r->runs[i].frag_col[k], "frag", 4) == 0)
                        frag_column = r->runs[i].frag_col[k];
            if (!frag_column) {
                keep = false;
                break;
            }
            fg->script = "timeseries";
            series_data(r, &gd, f, s_frag, NULL, frag_column, buf, buf + BUCKETS, buf + 2 * BUCKETS,
                        buf + 3 * BUCKETS);
            snprintf(fg->caption, sizeof fg->caption, "Fragmentation over time (`%s`)",
                     frag_column);
            char yl[96];
            snprintf(yl, sizeof yl, "fragmentation (%s)", frag_column);
            ok = write_vars(r, fg, "Fragmentation", xlabel, yl, &vars);
            if (ok) {
                fputs("ymax = 0\nncols = 1\ncol1 = ''\ncol2 = ''\n", vars);
                ok = fclose(vars) == 0;
            }
            break;
        }
        case 5: {
            uint32_t *pick = sim_calloc(sim_intern_count(r->tenants), sizeof *pick);
            long ranked = pick ? report__rank_tenants(r, pick) : -1;
            if (ranked < 0) {
                sim_free(pick);
                fclose(f);
                report__gpfig_done(&fg->gp);
                st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                goto out;
            }
            size_t np = r->has_tenants ? (size_t)ranked : 0;
            if (np > MAX_TENANT_PANELS)
                np = MAX_TENANT_PANELS;
            if (!np) {
                sim_free(pick);
                keep = false;
                break;
            }
            fg->script = "tenant_share";
            snprintf(fg->caption, sizeof fg->caption,
                     "Share of the cluster's GPUs held by each tenant over time%s",
                     (size_t)ranked > np ? " (the 8 tenants with the most GPU-hours)" : "");
            ok = write_vars(r, fg, "GPU share per tenant", xlabel,
                            "GPUs held (% of the cluster)", &vars);
            if (ok) {
                st = tenant_data(r, &gd, f, vars, pick, np, acc, d);
                ok = fclose(vars) == 0;
            }
            sim_free(pick);
            if (st != SIM_OK) {
                fclose(f);
                report__gpfig_done(&fg->gp);
                goto out;
            }
            break;
        }
        case 6: {
            fg->script = "bars";
            char un[16];
            keep = bars_data(r, f, un, sizeof un);
            snprintf(fg->caption, sizeof fg->caption,
                     "Mean JCT by job size (GPUs asked in total)");
            char yl[64];
            snprintf(yl, sizeof yl, "mean JCT (%s)", un);
            ok = write_vars(r, fg, "Mean JCT by job size", "job size (GPUs asked in total)", yl,
                            NULL);
            break;
        }
        case 7: {
            keep = false;
            for (size_t i = 0; i < r->n_runs && !keep; i++)
                keep = r->runs[i].ok && frag_index(&r->runs[i], "online_demand") >= 0;
            if (!keep)
                break;
            fg->script = "timeseries";
            series_data(r, &gd, f, s_demand, s_granted, NULL, buf, buf + BUCKETS, buf + 2 * BUCKETS,
                        buf + 3 * BUCKETS);
            snprintf(fg->caption, sizeof fg->caption,
                     "Online services: GPUs their demand curves ask for (top) and GPUs granted "
                     "to them (bottom)");
            ok = write_vars(r, fg, "Online demand and grant", xlabel, "GPUs", &vars);
            if (ok) {
                fputs("ymax = 0\nncols = 2\ncol1 = 'online demand'\ncol2 = 'online granted'\n",
                      vars);
                ok = fclose(vars) == 0;
            }
            break;
        }
        }
        int werr = errno;
        bool wrote = fclose(f) == 0;
        if (!wrote)
            werr = errno;
        if (!keep) {
            report__gpfig_done(&fg->gp);
            continue;
        }
        if (!ok || !wrote) {
            st = sim_diag_set(d, SIM_EIO, ddir, 0, 0, "cannot write the figure data: %s",
                              strerror(werr));
            report__gpfig_done(&fg->gp);
            goto out;
        }
        snprintf(fg->script_path, sizeof fg->script_path, "%s/plots/%s.gp", data_dir,
                 fg->script);
        report__gpfig_command(&fg->gp, fg->script_path);
        made[b] = true;
        nf++;
    }
    study_proc procs[MAX_FIGS];
    for (size_t i = 0; i < nf; i++)
        procs[i] = (study_proc){
            .argv = figs[i].gp.argv, .log_path = figs[i].gp.scratch[REPORT_F_LOG], .search_path = true};
    /* An interrupt reaches gnuplot too and is acted on once it has ended: the scratch
     * files are removed and nothing is copied into place. */
    study_forward_begin();
    int run_rc = study_procs_run(procs, nf, jobs, NULL, NULL);
    int run_errno = errno;
    study_forward_end();
    if (run_rc != 0) {
        st = sim_diag_set(d, SIM_EIO, NULL, 0, 0, "cannot start gnuplot: %s",
                          strerror(run_errno));
        goto out;
    }
    size_t n_drawn = 0;
    for (size_t i = 0; i < nf && st == SIM_OK; i++) {
        fig *fg = &figs[i];
        bool good;
        char last[512];
        st = report__gpfig_install(&fg->gp, procs[i].exit_status, &good, last, sizeof last, d);
        if (st != SIM_OK)
            break;
        if (good && n_drawn < max) {
            snprintf(drawn[n_drawn].base, sizeof drawn[n_drawn].base, "%s", figs[i].base);
            snprintf(drawn[n_drawn].caption, sizeof drawn[n_drawn].caption, "%s",
                     figs[i].caption);
            n_drawn++;
            o->figures_drawn++;
            continue;
        }
        o->figures_failed++;
        if (!*o->problem) {
            if (access(figs[i].script_path, R_OK) != 0)
                snprintf(o->problem, sizeof o->problem,
                         "%.500s is missing (set CLUSTERSIM_DATA to the directory that holds "
                         "plots/)",
                         figs[i].script_path);
            else
                snprintf(o->problem, sizeof o->problem, "%s: gnuplot exit status %d: %s",
                         figs[i].base, procs[i].exit_status, last);
        }
    }
    if (st == SIM_OK)
        st = (int)n_drawn;
    /* A figure this report does not draw must not survive from an earlier report. */
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (int k = 0; k < REPORT_F_N && !made[b] && st >= 0; k++) {
            char p[1300];
            snprintf(p, sizeof p, "%s/%s.%s", k >= REPORT_F_PNG ? fdir : ddir, bases[b],
                     fig_ext[k]);
            report__remove_stale(p);
        }
out:
    for (size_t i = 0; i < nf; i++)
        report__gpfig_done(&figs[i].gp);
    sim_free(buf);
    sim_free(acc);
    return st;
}
