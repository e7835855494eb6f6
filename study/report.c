/*
 * report.c: the comparison report — groups the runs by policy, aggregates each metric
 * over a policy's seeds (mean, sample standard deviation, and the 95 % Student-t
 * interval mean +- t(0.975, n-1) sd / sqrt(n), via GSL), and writes report.md and
 * report.html side by side through report_doc.c. The first policy with a completed run
 * is the baseline; every other cell carries its change against it in percent,
 * (x - baseline) / |baseline|. Durations are shown in one unit per row, chosen from the
 * row's largest value, so a row reads at a glance.
 */
#include "study/report_int.h"

#include "study/files.h"
#include "study/study.h"
#include "models/catalog.h"
#include "base/alloc.h"
#include "traces/cluster.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum metric_kind { MK_COUNT, MK_DURATION, MK_RATIO, MK_RAW, MK_INDEX } metric_kind;

static const struct {
    const char *label;
    metric_kind kind;
} metric_info[RM_COUNT] = {
    [RM_JOBS_DONE] = {"jobs done", MK_COUNT},
    [RM_JOBS_REJECTED] = {"jobs rejected", MK_COUNT},
    [RM_JOBS_UNFINISHED] = {"jobs unfinished", MK_COUNT},
    [RM_JCT_MEAN] = {"JCT mean", MK_DURATION},
    [RM_JCT_MEDIAN] = {"JCT median", MK_DURATION},
    [RM_JCT_P95] = {"JCT p95", MK_DURATION},
    [RM_JCT_P99] = {"JCT p99", MK_DURATION},
    [RM_WAIT_MEAN] = {"wait mean", MK_DURATION},
    [RM_WAIT_MEDIAN] = {"wait median", MK_DURATION},
    [RM_WAIT_P95] = {"wait p95", MK_DURATION},
    [RM_WAIT_P99] = {"wait p99", MK_DURATION},
    [RM_MAKESPAN] = {"makespan", MK_DURATION},
    [RM_GROUPS_DONE] = {"job groups done", MK_COUNT},
    [RM_GROUP_MEAN] = {"group completion mean", MK_DURATION},
    [RM_GROUP_P50] = {"group completion p50", MK_DURATION},
    [RM_GROUP_P99] = {"group completion p99", MK_DURATION},
    [RM_UTIL_ALLOC] = {"GPU utilisation, allocated", MK_RATIO},
    [RM_UTIL_EFF] = {"GPU utilisation, effective", MK_RATIO},
    [RM_FRAG] = {"fragmentation", MK_RAW},
    [RM_PREEMPTIONS] = {"preemptions", MK_COUNT},
    [RM_SLO_VIOLATIONS] = {"SLO violations", MK_COUNT},
    [RM_FAIRNESS] = {"fairness (Jain)", MK_INDEX},
};

typedef report_unit unit;

static void fmt_count(char *b, size_t n, double x)
{
    if (x == floor(x) && fabs(x) < 1e15)
        snprintf(b, n, "%.0f", x);
    else
        snprintf(b, n, "%.1f", x);
}

/* A value in the row's display form (without spread or change). */
static void fmt_value(char *b, size_t n, report_metric m, double x, unit u)
{
    if (!isfinite(x)) {
        snprintf(b, n, "n/a");
        return;
    }
    switch (metric_info[m].kind) {
    case MK_COUNT: fmt_count(b, n, x); break;
    case MK_DURATION: snprintf(b, n, "%.2f", x / u.s); break;
    case MK_RATIO: snprintf(b, n, "%.2f", 100 * x); break;
    case MK_RAW: snprintf(b, n, "%.4g", x); break;
    case MK_INDEX: snprintf(b, n, "%.3f", x); break;
    }
}

static void fmt_spread(char *b, size_t n, report_metric m, double sd, unit u)
{
    switch (metric_info[m].kind) {
    case MK_COUNT: snprintf(b, n, "%.1f", sd); break;
    case MK_DURATION: snprintf(b, n, "%.2f", sd / u.s); break;
    case MK_RATIO: snprintf(b, n, "%.2f", 100 * sd); break;
    case MK_RAW: snprintf(b, n, "%.2g", sd); break;
    case MK_INDEX: snprintf(b, n, "%.3f", sd); break;
    }
}

/* " (+12.3 %)" against the baseline, or "" when it cannot be computed. */
static void fmt_change(char *b, size_t n, double x, double base)
{
    if (!isfinite(x) || !isfinite(base))
        b[0] = '\0';
    else if (base == 0)
        snprintf(b, n, x == 0 ? " (+0.0 %%)" : " (n/a %%)");
    else
        snprintf(b, n, " (%+.1f %%)", 100 * (x - base) / fabs(base));
}

static void fmt_duration_text(char *b, size_t n, double s)
{
    unit u = report__unit_for(s);
    static const char *const longname[] = {"s", "minutes", "hours", "days"};
    int k = u.s == 1 ? 0 : u.s == 60 ? 1 : u.s == 3600 ? 2 : 3;
    snprintf(b, n, "%.1f %s", s / u.s, longname[k]);
}

static void aggregate(report *r)
{
    for (size_t g = 0; g < r->n_groups; g++) {
        report_group *gr = &r->groups[g];
        double v[4096];
        for (int m = 0; m < RM_COUNT; m++) {
            size_t k = 0;
            for (size_t i = 0; i < gr->n_runs && k < 4096; i++) {
                const report_run *run = &r->runs[gr->runs[i]];
                if (run->ok && isfinite(run->m[m]))
                    v[k++] = run->m[m];
            }
            report_mean_ci(v, k, &gr->mean[m], &gr->sd[m], &gr->ci[m]);
        }
    }
}

void report_mean_ci(const double *v, size_t k, double *mean, double *sd, double *ci)
{
    *mean = k ? gsl_stats_mean(v, 1, k) : NAN;
    *sd = k > 1 ? gsl_stats_sd(v, 1, k) : NAN;
    *ci = k > 1 ? gsl_cdf_tdist_Pinv(0.975, (double)(k - 1)) * *sd / sqrt((double)k) : NAN;
}

static const report_group *baseline(const report *r)
{
    for (size_t g = 0; g < r->n_groups; g++)
        if (r->groups[g].n_ok)
            return &r->groups[g];
    return NULL;
}

static const report_run *first_ok(const report *r, const report_group *g)
{
    if (!g)
        return NULL;
    for (size_t i = 0; i < g->n_runs; i++)
        if (r->runs[g->runs[i]].ok)
            return &r->runs[g->runs[i]];
    return NULL;
}

/* Quote an argument for a POSIX shell when it needs it. */
static size_t shell_quote(char *b, size_t n, const char *s)
{
    size_t o = 0;
    bool plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-",
                    *p))
            plain = false;
    if (plain)
        return (size_t)snprintf(b, n, "%s", s);
    if (o + 1 < n)
        b[o++] = '\'';
    for (const char *p = s; *p && o + 5 < n; p++) {
        if (*p == '\'') {
            memcpy(b + o, "'\\''", 4);
            o += 4;
        } else {
            b[o++] = *p;
        }
    }
    if (o + 1 < n)
        b[o++] = '\'';
    b[o < n ? o : n - 1] = '\0';
    return o;
}

static void command_text(char *b, size_t n, int argc, char **argv)
{
    size_t o = (size_t)snprintf(b, n, "clustersim");
    for (int i = 1; i < argc && o + 2 < n; i++) {
        b[o++] = ' ';
        b[o] = '\0';
        o += shell_quote(b + o, n - o, argv[i]);
    }
}

static void write_inputs(report_doc *doc, const report_config *c, const report *r)
{
    const report_group *bg = baseline(r);
    const report_run *b = first_ok(r, bg);
    char cmd[4096];
    command_text(cmd, sizeof cmd, c->argc, c->argv);
    report__doc_heading(doc, 2, "Inputs");
    report__doc_item(doc, "Command: `%s`", cmd);
    report__doc_item(doc, "clustersim version %s", STUDY_VERSION);
    char pol[1024] = "";
    size_t o = 0;
    for (size_t g = 0; g < r->n_groups && o < sizeof pol; g++)
        o += (size_t)snprintf(pol + o, sizeof pol - o, "%s`%s`%s", g ? ", " : "",
                              r->groups[g].policy, &r->groups[g] == bg ? " (baseline)" : "");
    report__doc_item(doc, "Policies: %s", pol);
    if (c->seeds_text)
        report__doc_item(doc, "Seeds: %s (%zu runs per policy)", c->seeds_text,
                         r->n_groups ? r->groups[0].n_runs : 0);
    else if (r->n_runs)
        report__doc_item(doc, "Seed: %llu", (unsigned long long)r->runs[0].spec.seed);
    if (c->trace)
        report__doc_item(doc, "Trace: `%s` (format %s)", c->trace, c->format ? c->format : "native");
    else if (c->trace_note)
        report__doc_item(doc, "Trace: %s", c->trace_note);
    if (b) {
        char span[64];
        double sp = b->last_submit_s - b->first_submit_s;
        fmt_duration_text(span, sizeof span, sp > 0 ? sp : 0);
        uint32_t nt = 0;
        for (uint32_t t = 1; t < b->n_tenants; t++)
            nt += b->tenants[t].present;
        char tenants[64];
        if (nt)
            snprintf(tenants, sizeof tenants, "%u tenants", nt);
        else
            snprintf(tenants, sizeof tenants, "no tenants");
        report__doc_item(doc, "Jobs: %llu, submitted over %s; %s", (unsigned long long)b->jobs_total,
                         span, tenants);
        if (sp > 0 && b->gpus > 0)
            report__doc_item(doc,
                             "Offered load: the jobs ask for %.1f GPU-hours of work, %.1f %% "
                             "of the cluster's GPU capacity over the submission span",
                             b->req_gpu_s / 3600, 100 * b->req_gpu_s / ((double)b->gpus * sp));
    }
    report__doc_item(doc, "Cluster: `%s`%s", c->cluster ? c->cluster : "",
                     b ? "" : " (no run completed)");
    report__doc_list_end(doc);
    if (!b)
        return;

    /* The cluster's GPU types, when the cluster can be read again here. */
    model_catalog *cat = NULL;
    cluster_spec *cl = NULL;
    sim_diag d = {0};
    if (c->cluster &&
        model_catalog_load(&cat, c->catalog ? c->catalog : model_catalog_default_path(), &d) ==
            SIM_OK &&
        cluster_spec_load(&cl, c->cluster, model_catalog_names(cat), &d) == SIM_OK) {
        uint32_t nodes[SIM_MAX_GPU_TYPES] = {0};
        uint64_t gpus[SIM_MAX_GPU_TYPES] = {0};
        for (uint32_t i = 0; i < cl->n_nodes; i++) {
            nodes[cl->nodes[i].gpu_type]++;
            gpus[cl->nodes[i].gpu_type] += cl->nodes[i].num_gpus;
        }
        static const char *const head[] = {"GPU type", "nodes", "GPUs"};
        report__doc_table(doc, 3, head, "lrr");
        for (uint32_t t = 0; t < SIM_MAX_GPU_TYPES; t++) {
            if (!nodes[t])
                continue;
            char a[64], bn[32], cg[32];
            const model_gpu_type *ty = model_catalog_type(cat, (uint16_t)t);
            snprintf(a, sizeof a, "%s", t == 0 || !ty ? "(no GPU)" : ty->name);
            snprintf(bn, sizeof bn, "%u", nodes[t]);
            snprintf(cg, sizeof cg, "%llu", (unsigned long long)gpus[t]);
            const char *row[] = {a, bn, cg};
            report__doc_row(doc, row);
        }
        char a[32], bn[32];
        snprintf(a, sizeof a, "%u", cl->n_nodes);
        snprintf(bn, sizeof bn, "%llu", (unsigned long long)cluster_spec_gpus(cl));
        const char *row[] = {"total", a, bn};
        report__doc_row(doc, row);
        report__doc_table_end(doc);
    } else {
        report__doc_para(doc, "The cluster has %u nodes and %u GPUs.", b->nodes, b->gpus);
    }
    cluster_spec_destroy(cl);
    model_catalog_destroy(cat);

    static const char *const jh[] = {"job size (GPUs asked in total)", "jobs", "share"};
    report__doc_table(doc, 3, jh, "lrr");
    for (int k = 0; k < RC_COUNT; k++) {
        if (!b->class_jobs[k])
            continue;
        char n[32], s[32];
        snprintf(n, sizeof n, "%llu", (unsigned long long)b->class_jobs[k]);
        snprintf(s, sizeof s, "%.1f %%", 100.0 * (double)b->class_jobs[k] / (double)b->jobs_total);
        const char *row[] = {report_class_name[k], n, s};
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);

    if (b->n_inputs) {
        static const char *const ih[] = {"input", "path", "size and checksum"};
        report__doc_table(doc, 3, ih, "lll");
        for (uint32_t i = 0; i < b->n_inputs; i++) {
            char p[1100];
            snprintf(p, sizeof p, "`%s`", b->inputs[i][1]);
            const char *row[] = {b->inputs[i][0], p, b->inputs[i][2]};
            report__doc_row(doc, row);
        }
        if (b->n_inputs_more) {
            char more[64];
            snprintf(more, sizeof more, "%u more in run.json", b->n_inputs_more);
            const char *row[] = {"...", more, ""};
            report__doc_row(doc, row);
        }
        report__doc_table_end(doc);
    }
}

static void write_runs(report_doc *doc, const report *r)
{
    report__doc_heading(doc, 2, "Runs");
    size_t failed = 0;
    for (size_t i = 0; i < r->n_runs; i++)
        failed += !r->runs[i].ok;
    if (failed)
        report__doc_para(doc, "%zu of %zu runs failed; their policies are compared on the runs "
                              "that completed, or left out when none did.",
                         failed, r->n_runs);
    else
        report__doc_para(doc, "All %zu runs completed.", r->n_runs);
    static const char *const head[] = {"run", "policy", "seed", "status", "jobs done", "events"};
    report__doc_table(doc, 6, head, "llrlrr");
    for (size_t i = 0; i < r->n_runs; i++) {
        const report_run *run = &r->runs[i];
        char name[200], pol[100], seed[32], status[900], done[32], ev[32];
        snprintf(name, sizeof name, "`%s`", run->spec.name);
        snprintf(pol, sizeof pol, "`%s`", run->spec.policy);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)run->spec.seed);
        if (run->ok) {
            snprintf(status, sizeof status, "ok");
            snprintf(done, sizeof done, "%llu", (unsigned long long)run->jobs_done);
            if (isfinite(run->events))
                snprintf(ev, sizeof ev, "%.0f", run->events);
            else
                snprintf(ev, sizeof ev, "n/a");
        } else {
            snprintf(status, sizeof status, "failed: %s", run->error);
            snprintf(done, sizeof done, "-");
            snprintf(ev, sizeof ev, "-");
        }
        const char *row[] = {name, pol, seed, status, done, ev};
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);
}

/* The display unit of a metric's row (durations: from the row's largest mean). */
static unit row_unit(const report *r, report_metric m)
{
    double mx = 0;
    for (size_t g = 0; g < r->n_groups; g++)
        if (isfinite(r->groups[g].mean[m]) && r->groups[g].mean[m] > mx)
            mx = r->groups[g].mean[m];
    return report__unit_for(mx);
}

static void unit_label(char *b, size_t n, const report *r, report_metric m, unit u)
{
    const report_group *bg = baseline(r);
    const report_run *br = first_ok(r, bg);
    switch (metric_info[m].kind) {
    case MK_COUNT:
        if (m == RM_SLO_VIOLATIONS && br && br->slo_jobs > 0)
            snprintf(b, n, "jobs (of %.0f with a target)", br->slo_jobs);
        else
            snprintf(b, n, m == RM_PREEMPTIONS ? "count" : m == RM_GROUPS_DONE ? "groups" : "jobs");
        break;
    case MK_DURATION: snprintf(b, n, "%s", u.name); break;
    case MK_RATIO: snprintf(b, n, "%%"); break;
    case MK_RAW:
        snprintf(b, n, "%s", br && *br->frag_name ? br->frag_name : "-");
        break;
    case MK_INDEX: snprintf(b, n, "0..1"); break;
    }
}

/* The job-group rows appear only when some run had job groups (a trace with a group
 * column), so reports of other traces are unchanged. */
static bool has_job_groups(const report *r)
{
    for (size_t g = 0; g < r->n_groups; g++)
        if (isfinite(r->groups[g].mean[RM_GROUPS_DONE]))
            return true;
    return false;
}

static bool row_shown(const report *r, int m)
{
    return (m < RM_GROUPS_DONE || m > RM_GROUP_P99) || has_job_groups(r);
}

static void write_summary(report_doc *doc, const report *r)
{
    const report_group *bg = baseline(r);
    report__doc_heading(doc, 2, "Summary");
    if (!bg) {
        report__doc_para(doc, "No run completed: there is nothing to compare.");
        return;
    }
    bool seeds = false;
    for (size_t g = 0; g < r->n_groups; g++)
        if (r->groups[g].n_ok > 1)
            seeds = true;
    report__doc_para(doc,
                     "`%s` is the baseline: every other cell gives the policy's value and, in "
                     "brackets, its change against `%s` in percent.%s",
                     bg->policy, bg->policy,
                     seeds ? " With several seeds a cell is the mean over the seeds ± the "
                             "sample standard deviation; 95 % intervals follow the table."
                           : "");
    if (bg != &r->groups[0])
        report__doc_para(doc, "The first policy given, `%s`, has no completed run, so `%s` "
                              "is the baseline.",
                         r->groups[0].policy, bg->policy);
    const char *head[REPORT_MAX_COLS];
    char align[REPORT_MAX_COLS + 1];
    uint32_t cols = 2;
    head[0] = "metric";
    head[1] = "unit";
    align[0] = 'l';
    align[1] = 'l';
    char names[REPORT_MAX_POLICIES][80];
    for (size_t g = 0; g < r->n_groups && cols < REPORT_MAX_COLS; g++) {
        snprintf(names[g], sizeof names[g], "`%s`", r->groups[g].policy);
        head[cols] = names[g];
        align[cols++] = 'r';
    }
    align[cols] = '\0';
    report__doc_table(doc, cols, head, align);
    for (int m = 0; m < RM_COUNT; m++) {
        if (!row_shown(r, m))
            continue;
        unit u = row_unit(r, (report_metric)m);
        char label[128], ulabel[128];
        snprintf(label, sizeof label, "%s", metric_info[m].label);
        unit_label(ulabel, sizeof ulabel, r, (report_metric)m, u);
        char cells[REPORT_MAX_POLICIES][160];
        const char *row[REPORT_MAX_COLS];
        row[0] = label;
        row[1] = ulabel;
        for (size_t g = 0; g < r->n_groups && g + 2 < REPORT_MAX_COLS; g++) {
            const report_group *gr = &r->groups[g];
            if (!gr->n_ok) {
                snprintf(cells[g], sizeof cells[g], "failed");
            } else {
                char v[48], sd[48] = "", ch[48] = "";
                fmt_value(v, sizeof v, (report_metric)m, gr->mean[m], u);
                if (gr->n_ok > 1 && isfinite(gr->sd[m])) {
                    char s[40];
                    fmt_spread(s, sizeof s, (report_metric)m, gr->sd[m], u);
                    snprintf(sd, sizeof sd, " ± %s", s);
                }
                if (gr != bg)
                    fmt_change(ch, sizeof ch, gr->mean[m], bg->mean[m]);
                snprintf(cells[g], sizeof cells[g], "%s%s%s", v, sd, ch);
            }
            row[g + 2] = cells[g];
        }
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);

    const report_run *br = first_ok(r, bg);
    if (!isfinite(bg->mean[RM_FRAG]) && br && *br->frag_name)
        report__doc_para(doc,
                         "Fragmentation: `n/a`, the runs took no sample (`--sample-interval "
                         "0`), so their probe `%s` has no mean (`null` in summary.json).",
                         br->frag_name);
    else if (!isfinite(bg->mean[RM_FRAG]))
        report__doc_para(doc, "Fragmentation: not measured by these runs (their summary.json "
                              "has no fragmentation probe, `probes.frag*_mean`).");
    bool none_done = false;
    for (size_t i = 0; i < r->n_runs; i++)
        none_done |= r->runs[i].ok && !isfinite(r->runs[i].m[RM_JCT_MEAN]);
    if (none_done)
        report__doc_para(doc,
                         "JCT and wait: `n/a` where no job finished (summary.json has "
                         "`null` for them), and no change is computed against it.%s",
                         seeds ? " With several seeds, a mean is over the seeds in which a job "
                                 "finished."
                               : "");
    if (has_job_groups(r))
        report__doc_para(doc, "Job groups: a group's completion time is its last member's end "
                              "minus its arrival; mean and nearest-rank p50/p99 over the groups "
                              "whose every member is done.");
    if (br && br->slo_jobs == 0)
        report__doc_para(doc, "SLO violations: no job of the trace has a completion-time target "
                              "(`slo_s`).");
    if (!isfinite(bg->mean[RM_FAIRNESS]))
        report__doc_para(doc, "Fairness: not defined, the trace has fewer than two tenants with a "
                              "finished job.");
    else
        report__doc_para(doc, "Fairness is Jain's index over tenants of %s (1 = all tenants "
                              "treated alike).",
                         br && br->fair_by_quota
                             ? "GPU-hours divided by the tenant's quota"
                             : "the mean bounded slowdown max(1, JCT / max(work, 10 s))");

    if (!seeds)
        return;
    report__doc_heading(doc, 3, "95 % confidence intervals");
    report__doc_para(doc, "Student-t intervals of the mean over each policy's seeds, in the "
                          "units of the summary table.");
    report__doc_table(doc, cols, head, align);
    for (int m = 0; m < RM_COUNT; m++) {
        if (!row_shown(r, m))
            continue;
        unit u = row_unit(r, (report_metric)m);
        char label[128], ulabel[128];
        snprintf(label, sizeof label, "%s", metric_info[m].label);
        unit_label(ulabel, sizeof ulabel, r, (report_metric)m, u);
        char cells[REPORT_MAX_POLICIES][160];
        const char *row[REPORT_MAX_COLS];
        row[0] = label;
        row[1] = ulabel;
        for (size_t g = 0; g < r->n_groups && g + 2 < REPORT_MAX_COLS; g++) {
            const report_group *gr = &r->groups[g];
            if (gr->n_ok < 2 || !isfinite(gr->ci[m])) {
                snprintf(cells[g], sizeof cells[g], gr->n_ok < 2 ? "n/a (%zu run)" : "n/a",
                         gr->n_ok);
            } else {
                char lo[48], hi[48];
                fmt_value(lo, sizeof lo, (report_metric)m, gr->mean[m] - gr->ci[m], u);
                fmt_value(hi, sizeof hi, (report_metric)m, gr->mean[m] + gr->ci[m], u);
                snprintf(cells[g], sizeof cells[g], "[%s, %s]", lo, hi);
            }
            row[g + 2] = cells[g];
        }
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);
}

/* Elastic jobs and online services: a table of their figures (mean over each policy's
 * runs), only when the runs recorded them. */
static void write_elastic(report_doc *doc, const report *r)
{
    bool any = false;
    for (size_t i = 0; i < r->n_runs; i++)
        any |= r->runs[i].ok && isfinite(r->runs[i].el[REL_SCALE_EVENTS]);
    if (!any)
        return;
    static const char *const labels[REL_COUNT] = {
        [REL_OFFLINE_JCT] = "offline JCT mean (s)",
        [REL_SCALE_EVENTS] = "scale events",
        [REL_SCALE_LOST] = "work lost to scale-in (reference s)",
        [REL_DEMAND_GPUH] = "online demand (GPU-hours)",
        [REL_SHORT_GPU_S] = "online shortfall (GPU-seconds)",
        [REL_SHORT_PERIODS] = "periods with a shortfall",
        [REL_CPU_UTIL] = "CPU utilisation, allocated (%)",
    };
    report__doc_heading(doc, 2, "Elastic jobs and online services");
    report__doc_para(doc, "From each run's summary.json (`elastic`, `online`): the mean JCT of "
                          "the jobs that are not services, grow and shrink decisions, the "
                          "reference work lost when a scale-in restarts a job from its last "
                          "checkpoint, and the GPU time the services wanted and did not get "
                          "(a period is one service's interval between two points of its "
                          "demand curve); the CPU held, parameter servers and masters "
                          "included, as a time-averaged share of the cluster's.");
    const char *head[REPORT_MAX_COLS];
    char align[REPORT_MAX_COLS + 1];
    char names[REPORT_MAX_POLICIES][80];
    uint32_t cols = 1;
    head[0] = "metric";
    align[0] = 'l';
    for (size_t g = 0; g < r->n_groups && cols < REPORT_MAX_COLS; g++) {
        snprintf(names[g], sizeof names[g], "`%s`", r->groups[g].policy);
        head[cols] = names[g];
        align[cols++] = 'r';
    }
    align[cols] = '\0';
    report__doc_table(doc, cols, head, align);
    for (int k = 0; k < REL_COUNT; k++) {
        char cells[REPORT_MAX_POLICIES][48];
        const char *row[REPORT_MAX_COLS];
        row[0] = labels[k];
        for (size_t g = 0; g < r->n_groups && g + 1 < REPORT_MAX_COLS; g++) {
            double sum = 0;
            size_t n = 0;
            for (size_t i = 0; i < r->n_runs; i++)
                if (r->runs[i].ok && strcmp(r->runs[i].spec.policy, r->groups[g].policy) == 0 &&
                    isfinite(r->runs[i].el[k])) {
                    sum += r->runs[i].el[k];
                    n++;
                }
            if (n)
                snprintf(cells[g], sizeof cells[g], "%.1f",
                         sum / (double)n * (k == REL_CPU_UTIL ? 100 : 1));
            else
                snprintf(cells[g], sizeof cells[g], "n/a");
            row[g + 1] = cells[g];
        }
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);
}

/* A per-policy table: rows given by a callback value(group, row) -> mean over ok runs. */
typedef double (*row_value)(const report *r, const report_run *run, size_t row);

static double group_mean(const report *r, const report_group *g, row_value fn, size_t row)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < g->n_runs; i++) {
        const report_run *run = &r->runs[g->runs[i]];
        if (!run->ok)
            continue;
        double x = fn(r, run, row);
        if (isfinite(x)) {
            s += x;
            k++;
        }
    }
    return k ? s / (double)k : NAN;
}

static void policy_table(report_doc *doc, const report *r, const char *first_head,
                         const char *const *row_names, const size_t *rows, size_t n_rows,
                         row_value fn, bool duration, const char *fixed_unit)
{
    const report_group *bg = baseline(r);
    double mx = 0;
    for (size_t i = 0; i < n_rows; i++)
        for (size_t g = 0; g < r->n_groups; g++) {
            double x = group_mean(r, &r->groups[g], fn, rows[i]);
            if (isfinite(x) && x > mx)
                mx = x;
        }
    unit u = duration ? report__unit_for(mx) : (unit){fixed_unit, 1};
    const char *head[REPORT_MAX_COLS];
    char names[REPORT_MAX_POLICIES][96], h0[128];
    char align[REPORT_MAX_COLS + 1];
    uint32_t cols = 1;
    snprintf(h0, sizeof h0, "%s", first_head);
    head[0] = h0;
    align[0] = 'l';
    for (size_t g = 0; g < r->n_groups && cols < REPORT_MAX_COLS; g++) {
        snprintf(names[g], sizeof names[g], "`%s` (%s)", r->groups[g].policy, u.name);
        head[cols] = names[g];
        align[cols++] = 'r';
    }
    align[cols] = '\0';
    report__doc_table(doc, cols, head, align);
    for (size_t i = 0; i < n_rows; i++) {
        char cells[REPORT_MAX_POLICIES][96];
        const char *row[REPORT_MAX_COLS];
        row[0] = row_names[i];
        double base = bg ? group_mean(r, bg, fn, rows[i]) : NAN;
        for (size_t g = 0; g < r->n_groups && g + 1 < REPORT_MAX_COLS; g++) {
            const report_group *gr = &r->groups[g];
            double x = group_mean(r, gr, fn, rows[i]);
            char v[48], ch[48] = "";
            if (!gr->n_ok)
                snprintf(v, sizeof v, "failed");
            else if (!isfinite(x))
                snprintf(v, sizeof v, "n/a");
            else if (duration)
                snprintf(v, sizeof v, "%.2f", x / u.s);
            else
                snprintf(v, sizeof v, "%.4g", x);
            if (gr != bg && gr->n_ok)
                fmt_change(ch, sizeof ch, x, base);
            snprintf(cells[g], sizeof cells[g], "%s%s", v, ch);
            row[g + 1] = cells[g];
        }
        report__doc_row(doc, row);
    }
    report__doc_table_end(doc);
}

static double class_jct(const report *r, const report_run *run, size_t c)
{
    (void)r;
    return run->class_done[c] ? run->class_jct_sum[c] / (double)run->class_done[c] : NAN;
}

static double tenant_jct(const report *r, const report_run *run, size_t t)
{
    (void)r;
    return t < run->n_tenants && run->tenants[t].present && run->tenants[t].done > 0
               ? run->tenants[t].jct_mean_s
               : NAN;
}

static double tenant_wait(const report *r, const report_run *run, size_t t)
{
    (void)r;
    return t < run->n_tenants && run->tenants[t].present && run->tenants[t].done > 0
               ? run->tenants[t].wait_mean_s
               : NAN;
}

static double tenant_gpuh(const report *r, const report_run *run, size_t t)
{
    (void)r;
    return t < run->n_tenants && run->tenants[t].present ? run->tenants[t].gpu_hours : NAN;
}

static void write_sizes(report_doc *doc, const report *r)
{
    const report_run *b = first_ok(r, baseline(r));
    if (!b)
        return;
    report__doc_heading(doc, 2, "JCT by job size");
    report__doc_para(doc, "Mean JCT of the finished jobs of each size class (GPUs asked in "
                          "total: num_gpus x gpu_milli / 1000).");
    const char *names[RC_COUNT];
    char buf[RC_COUNT][96];
    size_t rows[RC_COUNT], n = 0;
    for (int k = 0; k < RC_COUNT; k++) {
        if (!b->class_jobs[k])
            continue;
        snprintf(buf[n], sizeof buf[n], "%s (%llu job%s)", report_class_name[k],
                 (unsigned long long)b->class_jobs[k], b->class_jobs[k] == 1 ? "" : "s");
        names[n] = buf[n];
        rows[n++] = (size_t)k;
    }
    policy_table(doc, r, "job size", names, rows, n, class_jct, true, NULL);
}

#define REPORT_MAX_TENANT_ROWS 30

static int write_tenants(report_doc *doc, const report *r)
{
    if (!r->has_tenants || !baseline(r))
        return SIM_OK;
    uint32_t nt = sim_intern_count(r->tenants);
    uint32_t *ids = sim_calloc(nt, sizeof *ids);
    size_t *rows = sim_calloc(nt, sizeof *rows);
    const char **names = sim_calloc(nt, sizeof *names);
    char(*lab)[96] = sim_calloc(nt, sizeof *lab);
    long ranked = ids ? report__rank_tenants(r, ids) : -1;
    if (ranked < 0 || !rows || !names || !lab) {
        sim_free(ids);
        sim_free(rows);
        sim_free(names);
        sim_free(lab);
        return SIM_ENOMEM;
    }
    size_t n = (size_t)ranked;
    size_t shown = n < REPORT_MAX_TENANT_ROWS ? n : REPORT_MAX_TENANT_ROWS;
    for (size_t i = 0; i < shown; i++) {
        rows[i] = ids[i];
        snprintf(lab[i], sizeof lab[i], "`%s`", sim_intern_name(r->tenants, ids[i]));
        names[i] = lab[i];
    }
    report__doc_heading(doc, 2, "Per tenant");
    if (shown < n)
        report__doc_para(doc, "The %zu tenants with the most GPU-hours of %zu, in decreasing "
                              "order of GPU-hours.",
                         shown, n);
    else
        report__doc_para(doc, "%zu tenants, in decreasing order of GPU-hours.", n);
    report__doc_heading(doc, 3, "Mean JCT by tenant");
    policy_table(doc, r, "tenant", names, rows, shown, tenant_jct, true, NULL);
    report__doc_heading(doc, 3, "Mean wait by tenant");
    policy_table(doc, r, "tenant", names, rows, shown, tenant_wait, true, NULL);
    report__doc_heading(doc, 3, "GPU-hours by tenant");
    policy_table(doc, r, "tenant", names, rows, shown, tenant_gpuh, false, "GPU-h");
    sim_free(ids);
    sim_free(rows);
    sim_free(names);
    sim_free(lab);
    return SIM_OK;
}

static void write_figures(report_doc *doc, const report_config *c, const report_figure *figs,
                          size_t n, const report_outcome *o)
{
    report__doc_heading(doc, 2, "Figures");
    if (!c->figures) {
        report__doc_para(doc, "Figures were not drawn: they were turned off for this report.");
        return;
    }
    if (o->gnuplot_missing) {
        report__doc_para(doc, "Figures were not drawn: gnuplot is not installed. Install it "
                              "(`apt-get install %s`) and run the command again.",
                         REPORT_GNUPLOT_PACKAGE);
        return;
    }
    if (o->figures_failed)
        report__doc_para(doc, "%zu figure(s) could not be drawn: %s", o->figures_failed,
                         o->problem);
    if (*o->note)
        report__doc_para(doc, "Note: %s.", o->note);
    report__doc_para(doc, "Each policy keeps its colour in every figure. Each figure is also "
                          "in `figures/` as SVG; the data gnuplot drew is in `figures/data/`.");
    for (size_t i = 0; i < n; i++) {
        char png[1200], rel_png[64], rel_svg[64];
        snprintf(png, sizeof png, "%.1100s/figures/%.31s.png", c->out_dir, figs[i].base);
        snprintf(rel_png, sizeof rel_png, "figures/%.31s.png", figs[i].base);
        snprintf(rel_svg, sizeof rel_svg, "figures/%.31s.svg", figs[i].base);
        report__doc_figure(doc, png, rel_png, rel_svg, figs[i].caption);
    }
}

static void write_definitions(report_doc *doc)
{
    report__doc_heading(doc, 2, "Definitions");
    report__doc_item(doc, "JCT (job completion time): end - submit of a finished job. Wait: first "
                          "start - submit. Means, medians and percentiles are over finished jobs, "
                          "n/a when none finished (the wait CDF figure: over started jobs); "
                          "percentiles come from the runs' logarithmic histograms and are within "
                          "0.1 %% of the exact order statistic.");
    report__doc_item(doc, "Makespan: from the first admitted job's submission to the last job's "
                          "end, or to where the run stopped when it was cut (horizon, stall).");
    report__doc_item(doc, "GPU utilisation, allocated: time-averaged share of all GPUs held by "
                          "jobs. Effective: the share really used, min(share, true demand).");
    report__doc_item(doc, "Fragmentation: the time average of the runs' fragmentation probe "
                          "(`frag*` column of timeseries.csv), when the runs measure it.");
    report__doc_item(doc, "SLO violations: finished jobs with a target `slo_s` whose JCT "
                          "exceeded it.");
    report__doc_item(doc, "Fairness: Jain's index (sum x)^2 / (n sum x^2) over the tenants with "
                          "a finished job; x is GPU-hours / quota when every such tenant has a "
                          "quota, else the tenant's mean bounded slowdown.");
    report__doc_item(doc, "Change: (policy - baseline) / |baseline| in percent. Lower is better "
                          "for times, preemptions and violations; higher for utilisation and "
                          "fairness.");
    report__doc_list_end(doc);
}

bool report_gnuplot_available(void)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return false;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char f[1200];
        snprintf(f, sizeof f, "%.*s/gnuplot", (int)(n ? n : 1), n ? path : ".");
        if (access(f, X_OK) == 0)
            return true;
        path += n + (colon ? 1 : 0);
    }
    return false;
}

static int build_groups(report *r)
{
    r->groups = sim_calloc(r->n_runs, sizeof *r->groups);
    size_t *idx = sim_calloc(r->n_runs, sizeof *idx);
    if (!r->groups || !idx) {
        sim_free(idx);
        return SIM_ENOMEM;
    }
    /* All groups share one index array, filled policy by policy. */
    size_t used = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const char *p = r->runs[i].spec.policy;
        bool seen = false;
        for (size_t g = 0; g < r->n_groups; g++)
            if (strcmp(r->groups[g].policy, p) == 0)
                seen = true;
        if (seen)
            continue;
        report_group *g = &r->groups[r->n_groups];
        g->policy = p;
        g->color = (uint32_t)(r->n_groups % REPORT_MAX_POLICIES);
        g->runs = idx + used;
        for (size_t k = i; k < r->n_runs; k++)
            if (strcmp(r->runs[k].spec.policy, p) == 0) {
                g->runs[g->n_runs++] = k;
                g->n_ok += r->runs[k].ok;
            }
        used += g->n_runs;
        r->n_groups++;
    }
    return SIM_OK;
}

static void free_report(report *r)
{
    for (size_t i = 0; i < r->n_runs; i++)
        report__free_run(&r->runs[i]);
    sim_free(r->runs);
    if (r->groups && r->n_groups)
        sim_free(r->groups[0].runs);
    sim_free(r->groups);
    sim_intern_destroy(r->tenants);
}

/* Load the runs and group them. */
static int prepare(report *r, const report_run_spec *runs, size_t n, sim_diag *d)
{
    memset(r, 0, sizeof *r);
    r->tenants = sim_intern_create(false);
    r->runs = sim_calloc(n ? n : 1, sizeof *r->runs);
    if (!r->tenants || !r->runs)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    r->n_runs = n;
    for (size_t i = 0; i < n; i++) {
        report_run *run = &r->runs[i];
        run->spec = runs[i];
        if (runs[i].failed) {
            run->ok = false;
            snprintf(run->error, sizeof run->error, "%s", runs[i].error ? runs[i].error : "");
            for (int k = 0; k < RM_COUNT; k++)
                run->m[k] = NAN;
            continue;
        }
        if (report__load_run(r, run) != SIM_OK)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (build_groups(r) != SIM_OK)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    aggregate(r);
    return SIM_OK;
}

int report_write(const report_config *c, report_outcome *o, sim_diag *d)
{
    memset(o, 0, sizeof *o);
    report r;
    report_figure figs[16];
    size_t n_figs = 0;
    study_outfile md = {0}, html = {0};
    int st = prepare(&r, c->runs, c->n_runs, d);
    if (st != SIM_OK)
        goto out;
    for (size_t i = 0; i < r.n_runs; i++) {
        if (r.runs[i].ok)
            o->runs_ok++;
        else
            o->runs_failed++;
    }
    if (c->figures && baseline(&r)) {
        if (!report_gnuplot_available()) {
            o->gnuplot_missing = true;
        } else {
            st = report__draw_figures(&r, c->out_dir, c->jobs, figs, 16, o, d);
            if (st < 0)
                goto out;
            n_figs = (size_t)st;
            st = SIM_OK;
        }
    }
    if (!study_out_open(&md, c->out_dir, "report.md") ||
        !study_out_open(&html, c->out_dir, "report.html")) {
        st = sim_diag_set(d, SIM_EIO, c->out_dir, 0, 0, "cannot write the report");
        goto out;
    }
    report_doc doc = {.md = md.f, .html = html.f};
    report__doc_begin(&doc, "clustersim policy comparison");
    write_inputs(&doc, c, &r);
    write_runs(&doc, &r);
    write_summary(&doc, &r);
    write_elastic(&doc, &r);
    write_sizes(&doc, &r);
    if ((st = write_tenants(&doc, &r)) != SIM_OK) {
        sim_diag_set(d, st, NULL, 0, 0, "out of memory");
        goto out;
    }
    write_figures(&doc, c, figs, n_figs, o);
    write_definitions(&doc);
    report__doc_end(&doc);
out:;
    bool commit = st == SIM_OK;
    /* Both files are closed (or removed) whatever happens to the other. */
    bool ok_md = study_out_close(&md, commit);
    bool ok_html = study_out_close(&html, commit);
    bool ok = ok_md && ok_html;
    if (commit && !ok)
        st = sim_diag_set(d, SIM_EIO, c->out_dir, 0, 0, "cannot write the report");
    free_report(&r);
    return st;
}

int report_plot_run(const char *run_dir, unsigned jobs, report_outcome *o, sim_diag *d)
{
    memset(o, 0, sizeof *o);
    report_run_spec spec = {.name = "", .policy = "", .seed = 0, .dir = run_dir};
    report r;
    report_figure figs[16];
    int st = prepare(&r, &spec, 1, d);
    if (st != SIM_OK)
        goto out;
    report_run *run = &r.runs[0];
    if (!run->ok) {
        *d = run->diag;
        st = run->load_status;
        goto out;
    }
    o->runs_ok = 1;
    /* One run: its group is named after the policy its summary.json names. */
    r.groups[0].policy = *run->summary_policy ? run->summary_policy : "run";
    if (!report_gnuplot_available()) {
        o->gnuplot_missing = true;
        goto out;
    }
    st = report__draw_figures(&r, run_dir, jobs, figs, 16, o, d);
    if (st > 0)
        st = SIM_OK;
out:
    free_report(&r);
    return st;
}
