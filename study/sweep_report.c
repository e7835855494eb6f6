/*
 * sweep_report.c: a sweep's results (sweep.h): sweep.csv with one row per cell, and the
 * report across the grid. A group is a policy variant in one configuration (trace,
 * cluster, option values) over the seeds; the grid's order puts the seed last, so a
 * group's cells are consecutive. Means and confidence intervals come from
 * report_mean_ci, the Markdown + HTML from the comparison report's writer.
 */
#include "study/sweep.h"

#include "study/proc.h"
#include "study/report_int.h"
#include "models/catalog.h"
#include "base/alloc.h"
#include "base/outfile.h"
#include "base/textout.h"

#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct metrics {
    char **names;
    size_t n, cap;
    double *v;       /* cell-major: v[cell * n + metric], NAN = absent or null */
    bool *null_seen; /* [metric]: some cell has the member as null */
} metrics;

static long metric_index(metrics *m, const char *name, bool add)
{
    for (size_t k = 0; k < m->n; k++)
        if (!strcmp(m->names[k], name))
            return (long)k;
    if (!add)
        return -1;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 32;
        char **nn = sim_reallocarray(m->names, cap, sizeof *nn);
        if (!nn)
            return -2;
        m->names = nn;
        m->cap = cap;
    }
    if (!(m->names[m->n] = sim_strdup(name)))
        return -2;
    return (long)m->n++;
}

/* Numeric members of o (nested objects as "a.b"; arrays and strings left out): added to
 * the names (pass 1, row NULL) or stored in row (pass 2). A null member (a figure the
 * cell does not have, such as the mean JCT of a run with no job done) is a column too,
 * left NaN: empty in sweep.csv, left out of means. */
static bool flatten(metrics *m, json_object *o, const char *prefix, double *row)
{
    json_object_object_foreach(o, key, v)
    {
        char name[256];
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", key);
        json_type t = json_object_get_type(v);
        if (t == json_type_object) {
            if (!flatten(m, v, name, row))
                return false;
            continue;
        }
        /* The seed is a column of its own already. */
        if ((t != json_type_int && t != json_type_double && t != json_type_null) ||
            !strcmp(name, "seed"))
            continue;
        long k = metric_index(m, name, row == NULL);
        if (k == -2)
            return false;
        if (row && k >= 0) {
            row[k] = t == json_type_null ? NAN : json_object_get_double(v);
            m->null_seen[k] |= t == json_type_null;
        }
    }
    return true;
}

static bool cell_ok(const sweep *s, size_t i)
{
    return s->cells[i].state == SWEEP_DONE || s->cells[i].state == SWEEP_SKIPPED;
}

static int load_metrics(const sweep *s, metrics *m, sim_diag *d)
{
    const grid *g = s->g;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t n = g->n_cells * (m->n ? m->n : 1);
            if (!(m->v = sim_malloc(n * sizeof *m->v)) ||
                !(m->null_seen = sim_calloc(m->n ? m->n : 1, sizeof *m->null_seen)))
                return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            for (size_t k = 0; k < n; k++)
                m->v[k] = NAN;
        }
        for (size_t i = 0; i < g->n_cells; i++) {
            if (!cell_ok(s, i))
                continue;
            char p[1400];
            snprintf(p, sizeof p, "%s/summary.json", s->cells[i].dir);
            json_object *o = json_object_from_file(p);
            bool ok = !o || !json_object_is_type(o, json_type_object) ||
                      flatten(m, o, "", pass ? m->v + i * m->n : NULL);
            json_object_put(o);
            if (!ok)
                return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
    }
    return SIM_OK;
}

static int write_csv(const sweep *s, const metrics *m, sim_diag *d)
{
    const grid *g = s->g;
    char path[1100];
    snprintf(path, sizeof path, "%s/sweep.csv", s->out);
    sim_outfile out;
    int st = sim_outfile_open(&out, path, d);
    FILE *f = st == SIM_OK ? sim_outfile_stream(&out, d) : NULL;
    if (!f) {
        sim_outfile_close(&out, false, 0, NULL);
        return st == SIM_OK ? SIM_ENOMEM : st;
    }
    fputs("cell,trace,cluster,policy,variant", f);
    for (size_t a = 0; a < g->n_axes; a++) {
        fputc(',', f);
        sim_csv_put_field(f, g->axes[a].name);
    }
    fputs(",seed,status,error", f);
    for (size_t k = 0; k < m->n; k++) {
        fputc(',', f);
        sim_csv_put_field(f, m->names[k]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < g->n_cells; i++) {
        const grid_cell *c = &g->cells[i];
        sim_csv_put_field(f, c->name);
        fputc(',', f);
        sim_csv_put_field(f, g->traces[c->trace].name);
        fputc(',', f);
        sim_csv_put_field(f, g->clusters[c->cluster].name);
        fprintf(f, ",%s,", g->policies[c->policy].policy);
        sim_csv_put_field(f, g->policies[c->policy].label);
        for (size_t a = 0; a < g->n_axes; a++) {
            fputc(',', f);
            sim_csv_put_field(f, g->axes[a].values[c->value[a]]);
        }
        fprintf(f, ",%llu,%s,", (unsigned long long)c->seed,
                cell_ok(s, i)                       ? "ok"
                : s->cells[i].state == SWEEP_FAILED ? "failed"
                                                    : "not run");
        sim_csv_put_field(f, s->cells[i].error);
        for (size_t k = 0; k < m->n; k++) {
            double v = m->v[i * m->n + k];
            if (isnan(v))
                fputc(',', f);
            else
                fprintf(f, ",%.10g", v);
        }
        fputc('\n', f);
    }
    return sim_outfile_close(&out, true, 0, d);
}

/* Groups: runs of consecutive cells that differ only in their seed. */
typedef struct group {
    size_t first, n; /* cells [first, first + n) */
    size_t config;   /* index into the configurations */
    uint32_t policy;
} group;

static bool same_group(const grid *g, const grid_cell *a, const grid_cell *b)
{
    if (a->trace != b->trace || a->cluster != b->cluster || a->policy != b->policy)
        return false;
    for (size_t k = 0; k < g->n_axes; k++)
        if (a->value[k] != b->value[k])
            return false;
    return true;
}

static bool same_config(const grid *g, const grid_cell *a, const grid_cell *b)
{
    if (a->trace != b->trace || a->cluster != b->cluster)
        return false;
    for (size_t k = 0; k < g->n_axes; k++)
        if (a->value[k] != b->value[k])
            return false;
    return true;
}

typedef struct stats {
    group *groups;
    size_t n_groups;
    size_t *config_cell; /* a cell of each configuration, in order of appearance */
    size_t n_configs;
    double *mean, *ci; /* [group * n_metrics + metric] */
    size_t *n_ok;      /* [group * n_metrics + metric] */
    long *by_cp;       /* [config * n_policies + policy]: its group, or -1 */
} stats;

static int build_stats(const sweep *s, const metrics *m, stats *st)
{
    const grid *g = s->g;
    size_t nm = m->n ? m->n : 1;
    st->groups = sim_calloc(g->n_cells, sizeof *st->groups);
    st->config_cell = sim_calloc(g->n_cells, sizeof *st->config_cell);
    double *v = sim_calloc(g->n_seeds, sizeof *v);
    if (!st->groups || !st->config_cell || !v) {
        sim_free(v);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < g->n_cells; i++) {
        if (i > 0 && same_group(g, &g->cells[i - 1], &g->cells[i])) {
            st->groups[st->n_groups - 1].n++;
            continue;
        }
        group *gr = &st->groups[st->n_groups++];
        *gr = (group){.first = i, .n = 1, .policy = g->cells[i].policy};
        size_t c = 0;
        while (c < st->n_configs && !same_config(g, &g->cells[st->config_cell[c]], &g->cells[i]))
            c++;
        if (c == st->n_configs)
            st->config_cell[st->n_configs++] = i;
        gr->config = c;
    }
    st->by_cp = sim_calloc(st->n_configs * g->n_policies, sizeof *st->by_cp);
    if (!st->by_cp) {
        sim_free(v);
        return SIM_ENOMEM;
    }
    for (size_t k = 0; k < st->n_configs * g->n_policies; k++)
        st->by_cp[k] = -1;
    for (size_t q = 0; q < st->n_groups; q++)
        st->by_cp[st->groups[q].config * g->n_policies + st->groups[q].policy] = (long)q;
    st->mean = sim_calloc(st->n_groups * nm, sizeof *st->mean);
    st->ci = sim_calloc(st->n_groups * nm, sizeof *st->ci);
    st->n_ok = sim_calloc(st->n_groups * nm, sizeof *st->n_ok);
    if (!st->mean || !st->ci || !st->n_ok) {
        sim_free(v);
        return SIM_ENOMEM;
    }
    for (size_t q = 0; q < st->n_groups; q++)
        for (size_t k = 0; k < m->n; k++) {
            size_t n = 0;
            for (size_t i = st->groups[q].first; i < st->groups[q].first + st->groups[q].n; i++)
                if (cell_ok(s, i) && isfinite(m->v[i * m->n + k]))
                    v[n++] = m->v[i * m->n + k];
            double sd;
            report_mean_ci(v, n, &st->mean[q * nm + k], &sd, &st->ci[q * nm + k]);
            st->n_ok[q * nm + k] = n;
        }
    sim_free(v);
    return SIM_OK;
}

static void free_stats(stats *st)
{
    sim_free(st->groups);
    sim_free(st->config_cell);
    sim_free(st->mean);
    sim_free(st->ci);
    sim_free(st->n_ok);
    sim_free(st->by_cp);
}

/* Whether metric k takes more than one value over the cells; null (no value, such as
 * the mean JCT of a cell with no job done) beside a number counts as another value. */
static bool varies(const metrics *m, size_t n_cells, size_t k)
{
    double first = NAN;
    for (size_t i = 0; i < n_cells; i++) {
        double v = m->v[i * m->n + k];
        if (isnan(v))
            continue;
        if (isnan(first))
            first = v;
        else if (v != first)
            return true;
    }
    return m->null_seen[k] && !isnan(first);
}

/* The metrics the report shows: the grid's list (those present), else every metric that
 * varies over the cells (sweep.csv has the constant ones). */
static size_t report_metrics(const grid *g, metrics *m, size_t *out)
{
    size_t n = 0;
    if (!g->n_metrics) {
        for (size_t k = 0; k < m->n; k++)
            if (varies(m, g->n_cells, k))
                out[n++] = k;
        return n;
    }
    for (size_t k = 0; k < g->n_metrics; k++) {
        long i = metric_index(m, g->metrics[k], false);
        if (i >= 0)
            out[n++] = (size_t)i;
    }
    return n;
}

static const group *find_group(const stats *st, size_t n_policies, size_t config, uint32_t policy)
{
    long q = st->by_cp[config * n_policies + policy];
    return q < 0 ? NULL : &st->groups[q];
}

/* Policy variants per table: the configuration column and at most this many. */
#define TABLE_VARIANTS (REPORT_MAX_COLS - 1)

/* The columns of policy variants [p0, p0 + np) of metric k's table, np <= TABLE_VARIANTS. */
static void metric_table_part(report_doc *doc, const sweep *s, const metrics *m, const stats *st,
                              size_t k, size_t p0, size_t np)
{
    const grid *g = s->g;
    const char *head[REPORT_MAX_COLS];
    char align[REPORT_MAX_COLS + 1];
    head[0] = "configuration";
    align[0] = 'l';
    for (size_t p = 0; p < np; p++) {
        head[p + 1] = g->policies[p0 + p].label;
        align[p + 1] = 'r';
    }
    align[np + 1] = '\0';
    report__doc_table(doc, (uint32_t)(np + 1), head, align);
    char text[REPORT_MAX_COLS][160];
    const char *cells[REPORT_MAX_COLS];
    size_t nm = m->n ? m->n : 1;
    for (size_t c = 0; c < st->n_configs; c++) {
        grid_cell_config(g, &g->cells[st->config_cell[c]], SIZE_MAX, text[0], sizeof text[0]);
        cells[0] = text[0];
        for (size_t p = 0; p < np; p++) {
            const group *gr = find_group(st, g->n_policies, c, (uint32_t)(p0 + p));
            size_t q = gr ? (size_t)(gr - st->groups) : 0;
            size_t n = gr ? st->n_ok[q * nm + k] : 0, n_cells = 0;
            for (size_t i = gr ? gr->first : 0; gr && i < gr->first + gr->n; i++)
                n_cells += cell_ok(s, i);
            /* A complete cell without the value (null: no job done, no sample) is n/a,
             * and a mean over fewer seeds than completed says over how many. */
            char part[64] = "";
            if (n && n < n_cells)
                snprintf(part, sizeof part, " (%zu of %zu seeds)", n, n_cells);
            if (!n)
                snprintf(text[p + 1], sizeof text[p + 1], n_cells ? "n/a" : "–");
            else if (n == 1 || !isfinite(st->ci[q * nm + k]))
                snprintf(text[p + 1], sizeof text[p + 1], "%.4g%s", st->mean[q * nm + k], part);
            else
                snprintf(text[p + 1], sizeof text[p + 1], "%.4g ± %.2g%s", st->mean[q * nm + k],
                         st->ci[q * nm + k], part);
            cells[p + 1] = text[p + 1];
        }
        report__doc_row(doc, cells);
    }
    report__doc_table_end(doc);
}

/* The table of metric k: one row per configuration, one column per policy variant. A
 * grid with more variants than a table holds gets several tables, each with every row,
 * so that every variant has its column. */
static void metric_table(report_doc *doc, const sweep *s, const metrics *m, const stats *st,
                         size_t k)
{
    const grid *g = s->g;
    report__doc_heading(doc, 3, m->names[k]);
    for (size_t p0 = 0; p0 < g->n_policies; p0 += TABLE_VARIANTS) {
        size_t np = g->n_policies - p0 < TABLE_VARIANTS ? g->n_policies - p0 : TABLE_VARIANTS;
        if (g->n_policies > TABLE_VARIANTS)
            report__doc_para(doc, "Policy variants %zu to %zu of %zu:", p0 + 1, p0 + np,
                             g->n_policies);
        metric_table_part(doc, s, m, st, k, p0, np);
    }
}

/* ---- figures: a metric against a numeric axis ------------------------------------ */

typedef struct figure {
    char base[96];
    char caption[300];
    report_gpfig gp; /* its files: scratch first, then copied into place */
} figure;

static void gp_assign(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s = '", name);
    for (const char *c = value; *c; c++)
        fprintf(f, *c == '\'' ? "''" : "%c", *c);
    fputs("'\n", f);
}

static double axis_number(const grid_axis *ax, uint32_t v)
{
    return strtod(ax->values[v], NULL);
}

/* Write the data and variables of one figure: metric k against axis a over the cells
 * that share cell `ref`'s parameters other than a, the policy and the seed. */
static bool figure_data(const sweep *s, const metrics *m, const stats *st, size_t k, size_t a,
                        size_t ref, report_gpfig *gp, FILE *vars, char *caption, size_t cn)
{
    const grid *g = s->g;
    const grid_axis *ax = &g->axes[a];
    const grid_cell *r = &g->cells[ref];
    FILE *f = report__gpfig_create(gp, REPORT_F_DAT);
    if (!f)
        return false;
    size_t nm = m->n ? m->n : 1;
    char names[2048] = "", colors[1024] = "";
    size_t nn = 0, nc = 0;
    for (size_t p = 0; p < g->n_policies && p < REPORT_MAX_POLICIES; p++) {
        fprintf(f, "# %s\n", g->policies[p].label);
        for (size_t q = 0; q < st->n_groups; q++) {
            const grid_cell *c = &g->cells[st->groups[q].first];
            if (c->policy != p || c->trace != r->trace || c->cluster != r->cluster)
                continue;
            bool same = true;
            for (size_t b = 0; b < g->n_axes && same; b++)
                same = b == a || c->value[b] == r->value[b];
            if (!same || !st->n_ok[q * nm + k])
                continue;
            double ci = st->ci[q * nm + k];
            fprintf(f, "%.10g %.10g %.10g\n", axis_number(ax, c->value[a]), st->mean[q * nm + k],
                    isfinite(ci) ? ci : 0.0);
        }
        fputs("\n\n", f);
        nn += (size_t)snprintf(names + nn, sizeof names - nn, "%s%s", p ? " " : "",
                               g->policies[p].name);
        nc += (size_t)snprintf(colors + nc, sizeof colors - nc, "%s%s", p ? " " : "",
                               report_palette[p]);
    }
    bool ok = fclose(f) == 0;
    char cfg[256], title[400];
    grid_cell_config(g, r, a, cfg, sizeof cfg);
    snprintf(title, sizeof title, "%s against %s (%s)", m->names[k], ax->name, cfg);
    /* The note is kept whole when a long title has to be cut. */
    char note[128] = "";
    if (g->n_policies > REPORT_MAX_POLICIES)
        snprintf(note, sizeof note,
                 " (the first %d of %zu policy variants; the Figures section names those left "
                 "out)",
                 REPORT_MAX_POLICIES, g->n_policies);
    size_t keep = strlen(note) < cn ? cn - 1 - strlen(note) : 0;
    snprintf(caption, cn, "%.*s%s", (int)keep, title, note);
    gp_assign(vars, "datafile", gp->final[REPORT_F_DAT]);
    gp_assign(vars, "names", names);
    gp_assign(vars, "colors", colors);
    gp_assign(vars, "plot_title", title);
    gp_assign(vars, "xlabel_text", ax->name);
    gp_assign(vars, "ylabel_text", m->names[k]);
    fprintf(vars, "n = %zu\n",
            g->n_policies < REPORT_MAX_POLICIES ? g->n_policies : (size_t)REPORT_MAX_POLICIES);
    return ok;
}

/* Draw the figures; returns how many are listed in figs (drawn or not). */
static size_t draw_figures(const sweep *s, const metrics *m, const stats *st, const size_t *shown,
                           size_t n_shown, unsigned jobs, figure *figs, bool *drawn,
                           sweep_outcome *o)
{
    const grid *g = s->g;
    char fdir[1100], ddir[1200];
    snprintf(fdir, sizeof fdir, "%s/figures", s->out);
    snprintf(ddir, sizeof ddir, "%s/data", fdir);
    if ((mkdir(fdir, 0777) != 0 && errno != EEXIST) || (mkdir(ddir, 0777) != 0 && errno != EEXIST))
        return 0;
    char script[1100];
    snprintf(script, sizeof script, "%s/plots/sweep.gp", model_data_dir());
    size_t nf = 0;
    for (size_t a = 0; a < g->n_axes && !o->figures_capped; a++) {
        if (!g->axes[a].numeric || g->axes[a].n_values < 2)
            continue;
        /* One figure per configuration of the other parameters: the first cell of each. */
        for (size_t c = 0; c < st->n_configs && !o->figures_capped; c++) {
            const grid_cell *ref = &g->cells[st->config_cell[c]];
            bool first = true;
            for (size_t e = 0; e < c && first; e++) {
                const grid_cell *x = &g->cells[st->config_cell[e]];
                bool same = x->trace == ref->trace && x->cluster == ref->cluster;
                for (size_t b = 0; b < g->n_axes && same; b++)
                    same = b == a || x->value[b] == ref->value[b];
                first = !same;
            }
            for (size_t j = 0; first && j < n_shown && !o->figures_capped; j++) {
                if (nf == SWEEP_MAX_FIGURES) {
                    o->figures_capped = true; /* one more was due: the report says so */
                    break;
                }
                figure *fg = &figs[nf];
                snprintf(fg->base, sizeof fg->base, "fig%02zu", nf + 1);
                report__gpfig_paths(&fg->gp, fdir, ddir, fg->base);
                FILE *vf = report__gpfig_create(&fg->gp, REPORT_F_VARS);
                if (!vf) {
                    report__gpfig_done(&fg->gp);
                    continue;
                }
                char outbase[1300];
                snprintf(outbase, sizeof outbase, "%s/%s", fdir, fg->base);
                gp_assign(vf, "outbase", outbase);
                bool ok = figure_data(s, m, st, shown[j], a, st->config_cell[c], &fg->gp, vf,
                                      fg->caption, sizeof fg->caption);
                if (fclose(vf) != 0 || !ok) {
                    report__gpfig_done(&fg->gp);
                    continue;
                }
                report__gpfig_command(&fg->gp, script);
                nf++;
            }
        }
    }
    if (nf == 0)
        return 0;
    if (!report_gnuplot_available()) {
        o->gnuplot_missing = true;
        for (size_t i = 0; i < nf; i++)
            report__gpfig_done(&figs[i].gp);
        return 0;
    }
    study_proc procs[SWEEP_MAX_FIGURES];
    for (size_t i = 0; i < nf; i++)
        procs[i] = (study_proc){.argv = figs[i].gp.argv,
                              .log_path = figs[i].gp.scratch[REPORT_F_LOG],
                              .search_path = true};
    /* An interrupt reaches gnuplot too; once it has ended the scratch files are removed
     * and the process ends by the signal. */
    study_forward_begin();
    if (study_procs_run(procs, nf, jobs, NULL, NULL) != 0)
        snprintf(o->problem, sizeof o->problem, "cannot start gnuplot: %s", strerror(errno));
    study_forward_end();
    for (size_t i = 0; i < nf; i++) {
        char last[400];
        sim_diag d = {0};
        int exit_status = procs[i].state == STUDY_PROC_DONE ? procs[i].exit_status : -1;
        if (report__gpfig_install(&figs[i].gp, exit_status, &drawn[i], last, sizeof last, &d) !=
            SIM_OK) {
            /* An output that cannot be written (a directory in its place): not drawn. */
            drawn[i] = false;
            char msg[600];
            snprintf(o->problem, sizeof o->problem, "%s", sim_diag_format(&d, msg, sizeof msg));
        }
        report__gpfig_done(&figs[i].gp);
        if (drawn[i]) {
            o->figures_drawn++;
            continue;
        }
        o->figures_failed++;
        if (!*o->problem)
            snprintf(o->problem, sizeof o->problem, "%s: %s", figs[i].base, last);
    }
    return nf;
}

/* Append to buf at *at (snprintf-style, never past size). */
static void appendf(char *buf, size_t size, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
    if (*at >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, size - *at, fmt, ap);
    va_end(ap);
    *at = n < 0 ? size : *at + (size_t)n;
}

void sweep_grid_size_text(const grid *g, char *buf, size_t size)
{
    size_t at = 0, combos = 1, product;
    buf[0] = '\0';
    for (size_t a = 0; a < g->n_axes; a++)
        combos *= g->axes[a].n_values;
    product = g->n_traces * g->n_clusters * g->n_policies * combos * g->n_seeds;
    appendf(buf, size, &at, "%zu trace%s x %zu cluster%s x %zu policy variant%s", g->n_traces,
            g->n_traces == 1 ? "" : "s", g->n_clusters, g->n_clusters == 1 ? "" : "s",
            g->n_policies, g->n_policies == 1 ? "" : "s");
    /* The option factor is the number of value combinations, not of axes, so that the
     * factors multiply to the cross product; each axis's count follows. */
    if (g->n_axes) {
        appendf(buf, size, &at, " x %zu option combination%s (", combos, combos == 1 ? "" : "s");
        for (size_t a = 0; a < g->n_axes; a++)
            appendf(buf, size, &at, "%s%s %zu", a ? " x " : "", g->axes[a].name,
                    g->axes[a].n_values);
        appendf(buf, size, &at, ")");
    }
    appendf(buf, size, &at, " x %zu seed%s = %zu", g->n_seeds, g->n_seeds == 1 ? "" : "s", product);
    if (g->n_excluded)
        appendf(buf, size, &at, " combinations, %zu excluded: %zu cell%s", g->n_excluded,
                g->n_cells, g->n_cells == 1 ? "" : "s");
    else
        appendf(buf, size, &at, " cell%s", product == 1 ? "" : "s");
}

static int write_report(const sweep *s, metrics *m, const stats *st, bool figures, unsigned jobs,
                        sweep_outcome *o, sim_diag *d)
{
    const grid *g = s->g;
    size_t *shown = sim_calloc(m->n ? m->n : 1, sizeof *shown);
    figure *figs = sim_calloc(SWEEP_MAX_FIGURES, sizeof *figs);
    bool drawn[SWEEP_MAX_FIGURES] = {false};
    char md[1100], html[1100];
    snprintf(md, sizeof md, "%s/report.md", s->out);
    snprintf(html, sizeof html, "%s/report.html", s->out);
    sim_outfile out_md, out_html;
    memset(&out_md, 0, sizeof out_md);
    memset(&out_html, 0, sizeof out_html);
    out_md.fd = out_html.fd = -1;
    report_doc doc = {0};
    int rc = SIM_OK;
    if (!shown || !figs) {
        rc = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    if ((rc = sim_outfile_open(&out_md, md, d)) != SIM_OK ||
        !(doc.md = sim_outfile_stream(&out_md, d)) ||
        (rc = sim_outfile_open(&out_html, html, d)) != SIM_OK ||
        !(doc.html = sim_outfile_stream(&out_html, d))) {
        if (rc == SIM_OK)
            rc = SIM_ENOMEM;
        goto out;
    }
    size_t n_shown = report_metrics(g, m, shown);
    size_t nf = figures ? draw_figures(s, m, st, shown, n_shown, jobs, figs, drawn, o) : 0;
    report__doc_begin(&doc, "Sweep report");
    char size_text[1024];
    sweep_grid_size_text(g, size_text, sizeof size_text);
    report__doc_para(&doc,
                     "Grid `%s`: `clustersim %s` cells, %s; %zu complete, %zu failed. Every "
                     "value is the mean over the seeds ± the half-width of its 95 %% "
                     "Student-t confidence interval; a single seed gives the value alone. "
                     "The data of every cell is in `sweep.csv`.",
                     g->path, grid_kind_name(g->kind), size_text, o->cells_ok, o->cells_failed);
    if (o->cells_failed) {
        report__doc_heading(&doc, 2, "Failed cells");
        size_t listed = 0;
        for (size_t i = 0; i < g->n_cells && listed < 100; i++)
            if (s->cells[i].state == SWEEP_FAILED) {
                report__doc_item(&doc, "`%s`: %s", g->cells[i].name, s->cells[i].error);
                listed++;
            }
        report__doc_list_end(&doc);
    }
    report__doc_heading(&doc, 2, "Metrics");
    for (size_t j = 0; j < n_shown; j++)
        metric_table(&doc, s, m, st, shown[j]);
    if (nf) {
        report__doc_heading(&doc, 2, "Figures");
        /* A figure has one colour per variant, from a palette of REPORT_MAX_POLICIES. */
        if (g->n_policies > REPORT_MAX_POLICIES)
            report__doc_para(&doc,
                             "Each figure draws the first %d of the %zu policy variants; it "
                             "leaves out variants %d to %zu (`%s` to `%s`), whose values are "
                             "in the tables above.",
                             REPORT_MAX_POLICIES, g->n_policies, REPORT_MAX_POLICIES + 1,
                             g->n_policies, g->policies[REPORT_MAX_POLICIES].label,
                             g->policies[g->n_policies - 1].label);
        if (o->figures_capped)
            report__doc_para(&doc,
                             "A report draws at most %d figures: these are the first; the "
                             "values of the further configurations and metrics are in the "
                             "tables above.",
                             SWEEP_MAX_FIGURES);
        for (size_t i = 0; i < nf; i++) {
            if (!drawn[i])
                continue;
            char png[1300], rel_png[200], rel_svg[200];
            snprintf(png, sizeof png, "%s/figures/%s.png", s->out, figs[i].base);
            snprintf(rel_png, sizeof rel_png, "figures/%s.png", figs[i].base);
            snprintf(rel_svg, sizeof rel_svg, "figures/%s.svg", figs[i].base);
            report__doc_figure(&doc, png, rel_png, rel_svg, figs[i].caption);
        }
    }
    report__doc_end(&doc);
out:;
    /* Both files are closed (or their temporaries removed) whatever happens to the other. */
    bool commit = rc == SIM_OK;
    int st_md = sim_outfile_close(&out_md, commit, 0, d);
    int st_html = sim_outfile_close(&out_html, commit, 0, d);
    if (rc == SIM_OK)
        rc = st_md != SIM_OK ? st_md : st_html;
    sim_free(shown);
    sim_free(figs);
    return rc;
}

int sweep_write_results(const sweep *s, bool figures, unsigned jobs, sweep_outcome *o, sim_diag *d)
{
    *o = (sweep_outcome){0};
    for (size_t i = 0; i < s->g->n_cells; i++) {
        o->cells_ok += cell_ok(s, i);
        o->cells_failed += s->cells[i].state == SWEEP_FAILED;
    }
    metrics m = {0};
    stats st = {0};
    int rc = load_metrics(s, &m, d);
    if (rc == SIM_OK)
        rc = write_csv(s, &m, d);
    if (rc == SIM_OK && build_stats(s, &m, &st) != SIM_OK)
        rc = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (rc == SIM_OK)
        rc = write_report(s, &m, &st, figures, jobs ? jobs : 1, o, d);
    o->metrics = m.n;
    free_stats(&st);
    for (size_t k = 0; k < m.n; k++)
        sim_free(m.names[k]);
    sim_free(m.names);
    sim_free(m.v);
    sim_free(m.null_seen);
    return rc;
}
