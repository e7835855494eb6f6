/*
 * report_fig.c: the report's figures. For each figure this file writes the data gnuplot
 * draws (figures/data/<name>.dat) and a few gnuplot variable assignments
 * (figures/data/<name>.vars.gp), then runs `gnuplot <vars> plots/<script>.gp`, which
 * writes figures/<name>.png and figures/<name>.svg; the figures are drawn in parallel.
 *
 * Reductions: a CDF is drawn from each run's quantile grid; with several seeds the
 * curve is the mean of the seeds' quantile functions (Vincent averaging). A time series
 * is cut into at most 800 equal time buckets between the first submission and the last
 * sample, and each bucket shows the mean of the samples (over all seeds) inside it.
 * Tenant shares are the tenant's allocated GPUs over the cluster's GPUs, averaged the
 * same way; tenants absent from a sample held nothing then.
 */
#include "study/report_int.h"

#include "study/proc.h"
#include "models/catalog.h"
#include "base/alloc.h"
#include "base/csvin.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
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
    char vars[1300], dat[1300], log[1300], script_path[1300], outbase[1300];
    char *argv[4];
} fig;

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
    FILE *f = fopen(fg->vars, "w");
    if (!f)
        return false;
    gp_string(f, "datafile", fg->dat);
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

/* tenants.csv of one run into per-(panel, bucket) sums of allocated GPUs. */
static int tenant_sums(const report *r, const report_run *run, const grid *gd,
                       const uint32_t *pick, size_t np, double *acc, sim_diag *d)
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
    while ((st = csvin_next(in, &row, d)) == 1) {
        const char *tn = (uint32_t)ix[1] < row.n ? row.f[ix[1]] : "";
        uint32_t id = sim_intern_find(r->tenants, tn, strlen(tn));
        size_t p = 0;
        while (p < np && pick[p] != id)
            p++;
        if (p == np)
            continue;
        double t, a;
        if ((st = csvin_double(in, &row, ix[0], "time_s", -1e300, 1e300, &t, d)) ||
            (st = csvin_double(in, &row, ix[2], "alloc_gpus", 0, 1e300, &a, d)))
            goto out;
        long k = bucket_of(gd, t);
        if (k >= 0)
            acc[p * BUCKETS + (size_t)k] += a;
    }
    st = st < 0 ? st : SIM_OK;
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
    int st = SIM_OK;
    if (!sums || !cnts || !ts || !gpus) {
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
            if ((st = tenant_sums(r, run, gd, pick, np, acc, d)) != SIM_OK)
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
    return st;
}

/* Mean JCT per size class: one row per class present in the trace, one column per
 * policy; "?" marks a class without finished jobs. */
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
    for (int c = 0; c < RC_COUNT; c++) {
        if (!present[c])
            continue;
        any = true;
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
    static const char *const bases[] = {"jct_cdf",       "wait_cdf",     "utilisation",
                                        "queue",         "fragmentation", "tenant_share",
                                        "jct_by_size"};
    char fdir[1100], ddir[1200];
    snprintf(fdir, sizeof fdir, "%s/figures", out_dir);
    snprintf(ddir, sizeof ddir, "%s/data", fdir);
    if (!make_dir(fdir) || !make_dir(ddir))
        return sim_diag_set(d, SIM_EIO, fdir, 0, 0, "cannot create the directory: %s",
                            strerror(errno));
    /* A figure this report does not draw must not survive from an earlier report. */
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        char p[1300];
        snprintf(p, sizeof p, "%s/%s.png", fdir, bases[i]);
        remove(p);
        snprintf(p, sizeof p, "%s/%s.svg", fdir, bases[i]);
        remove(p);
    }
    fig figs[MAX_FIGS];
    size_t nf = 0;
    double *buf = sim_calloc(4 * BUCKETS, sizeof *buf);
    double *acc = sim_calloc(MAX_TENANT_PANELS * BUCKETS, sizeof *acc);
    int st = SIM_OK;
    if (!buf || !acc) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    grid gd = make_grid(r);
    char xlabel[128];
    snprintf(xlabel, sizeof xlabel, "time since the first submission (%s)", gd.unit);
    const char *data_dir = model_data_dir();
    for (size_t b = 0; b < sizeof bases / sizeof bases[0] && nf < MAX_FIGS; b++) {
        fig *fg = &figs[nf];
        memset(fg, 0, sizeof *fg);
        fg->base = bases[b];
        snprintf(fg->dat, sizeof fg->dat, "%s/%s.dat", ddir, fg->base);
        snprintf(fg->vars, sizeof fg->vars, "%s/%s.vars.gp", ddir, fg->base);
        snprintf(fg->log, sizeof fg->log, "%s/%s.log", ddir, fg->base);
        snprintf(fg->outbase, sizeof fg->outbase, "%s/%s", fdir, fg->base);
        FILE *f = fopen(fg->dat, "w");
        if (!f) {
            st = sim_diag_set(d, SIM_EIO, fg->dat, 0, 0, "cannot create: %s", strerror(errno));
            goto out;
        }
        bool keep = true, ok = true;
        FILE *vars = NULL;
        switch (b) {
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
                if (r->runs[i].ok && r->runs[i].n_frag)
                    frag_column = r->runs[i].frag_col[0];
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
        }
        bool wrote = fclose(f) == 0;
        if (!keep) {
            remove(fg->dat);
            remove(fg->vars);
            continue;
        }
        if (!ok || !wrote) {
            st = sim_diag_set(d, SIM_EIO, ddir, 0, 0, "cannot write the figure data");
            goto out;
        }
        snprintf(fg->script_path, sizeof fg->script_path, "%s/plots/%s.gp", data_dir,
                 fg->script);
        fg->argv[0] = "gnuplot";
        fg->argv[1] = fg->vars;
        fg->argv[2] = fg->script_path;
        fg->argv[3] = NULL;
        nf++;
    }
    study_proc procs[MAX_FIGS];
    for (size_t i = 0; i < nf; i++)
        procs[i] = (study_proc){.argv = figs[i].argv, .log_path = figs[i].log, .search_path = true};
    if (study_procs_run(procs, nf, jobs, NULL, NULL) != 0) {
        st = sim_diag_set(d, SIM_EIO, NULL, 0, 0, "cannot start gnuplot: %s", strerror(errno));
        goto out;
    }
    size_t n_drawn = 0;
    for (size_t i = 0; i < nf; i++) {
        char png[1300], svg[1300];
        snprintf(png, sizeof png, "%s/%s.png", fdir, figs[i].base);
        snprintf(svg, sizeof svg, "%s/%s.svg", fdir, figs[i].base);
        struct stat sp, ss;
        bool good = procs[i].exit_status == 0 && stat(png, &sp) == 0 && sp.st_size > 0 &&
                    stat(svg, &ss) == 0 && ss.st_size > 0;
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
            char last[512];
            study_last_line(figs[i].log, last, sizeof last);
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
    st = (int)n_drawn;
out:
    sim_free(buf);
    sim_free(acc);
    return st;
}
