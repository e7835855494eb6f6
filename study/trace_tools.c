/*
 * trace_tools.c: the work behind the trace tools (`clustersim trace stats|convert`):
 * opening a trace with its catalog and name tables, its statistics as text or JSON,
 * the filters of convert and its load scaling. Load scaling follows the "workload
 * tuning" of fragmentation studies (Weng et al., "Beware of Fragmentation", ATC'23):
 * jobs are drawn from the trace with replacement until their summed GPU request
 * reaches a share of the cluster's GPUs.
 */
#include "study/trace_tools.h"

#include "base/alloc.h"
#include "base/textout.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void trace_tool_fini(trace_tool *t)
{
    trace_reader_close(t->reader);
    sim_intern_destroy(t->tenants);
    sim_intern_destroy(t->models);
    model_catalog_destroy(t->cat);
    memset(t, 0, sizeof *t);
}

int trace_tool_open(trace_tool *t, const trace_src *src, sim_diag *d)
{
    memset(t, 0, sizeof *t);
    int st =
        model_catalog_load(&t->cat, src->catalog ? src->catalog : model_catalog_default_path(), d);
    if (st != SIM_OK)
        return st;
    t->tenants = sim_intern_create(false);
    t->models = sim_intern_create(false);
    if (!t->tenants || !t->models)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (!src->path)
        return SIM_OK;
    trace_options o = {.format = src->format,
                       .skip_bad_rows = src->skip_bad_rows,
                       .tenants = t->tenants,
                       .models = t->models,
                       .gpu_types = model_catalog_names(t->cat),
                       .opts = src->opts,
                       .n_opts = src->n_opts,
                       .data_dir = model_data_dir()};
    st = trace_reader_open(&t->reader, src->path, &o, d);
    if (st == SIM_OK && *trace_reader_ignored_columns(t->reader))
        fprintf(stderr,
                "clustersim: warning: %s: ignoring column(s) the %s format does not use: "
                "%s\n",
                src->path, src->format ? src->format : "native",
                trace_reader_ignored_columns(t->reader));
    return st;
}

/* ---- trace stats ---------------------------------------------------------------- */

static int cmp_tenant_desc(const void *a, const void *b, const trace_stats *s)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (s->tenant_gpu_s[x] != s->tenant_gpu_s[y])
        return s->tenant_gpu_s[x] > s->tenant_gpu_s[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static const trace_stats *sort_stats;

static int cmp_tenant(const void *a, const void *b)
{
    return cmp_tenant_desc(a, b, sort_stats);
}

static const char *const milli_label[11] = {"1-100",   "101-200", "201-300", "301-400",
                                            "401-500", "501-600", "601-700", "701-800",
                                            "801-900", "901-999", "1000"};

void trace_tool_print_stats(FILE *f, const trace_stats *s, const trace_tool *t, const char *path,
                            const char *format, bool json)
{
    uint32_t nt = 0;
    uint32_t *order = NULL;
    if (s->n_tenants)
        order = sim_reallocarray(NULL, s->n_tenants, sizeof *order);
    for (uint32_t i = 0; order && i < s->n_tenants; i++)
        if (s->tenant_jobs[i])
            order[nt++] = i;
    sort_stats = s;
    if (order)
        qsort(order, nt, sizeof *order, cmp_tenant);
    double span_s = (double)(s->last_submit_us - s->first_submit_us) / 1e6;
    uint64_t gpu_jobs = s->jobs - s->cpu_only;
    uint64_t rows = trace_reader_rows(t->reader), skipped = trace_reader_skipped(t->reader),
             ignored = trace_reader_ignored(t->reader);
    if (json) {
        fputs("{\n  \"trace\": ", f);
        sim_json_put_string(f, path);
        fputs(",\n  \"format\": ", f);
        sim_json_put_string(f, format ? format : "native");
        fprintf(f,
                ",\n  \"jobs\": %llu,\n  \"cpu_only_jobs\": %llu,\n  \"rows\": %llu,\n"
                "  \"rows_skipped\": %llu,\n  \"records_ignored\": %llu,\n"
                "  \"first_submit_s\": %.6f,\n  \"last_submit_s\": %.6f,\n  \"span_s\": %.6f,\n"
                "  \"rate_per_hour\": %.6f,\n  \"arrivals_by_hour\": [",
                (unsigned long long)s->jobs, (unsigned long long)s->cpu_only,
                (unsigned long long)rows, (unsigned long long)skipped, (unsigned long long)ignored,
                (double)s->first_submit_us / 1e6, (double)s->last_submit_us / 1e6, span_s,
                trace_stats_rate_h(s));
        for (int h = 0; h < 24; h++)
            fprintf(f, "%s%llu", h ? ", " : "", (unsigned long long)s->by_hour[h]);
        fputs("],\n  \"arrivals_by_day\": [", f);
        for (uint32_t k = 0; k < s->n_days; k++)
            fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)s->by_day[k]);
        fputs("],\n  \"num_gpus\": {", f);
        for (uint32_t k = 0; k < s->n_gpu_values; k++)
            fprintf(f, "%s\"%u\": %llu", k ? ", " : "", s->gpu_value[k],
                    (unsigned long long)s->gpu_count[k]);
        if (s->gpu_other)
            fprintf(f, "%s\"other\": %llu", s->n_gpu_values ? ", " : "",
                    (unsigned long long)s->gpu_other);
        fprintf(f, "},\n  \"duration_s\": {\"mean\": %.6f, \"min\": %.6f", s->dur_mean, s->dur_min);
        for (int q = 0; q < TRACE_STATS_QN; q++)
            fprintf(f, ", \"p%g\": %.6f", 100 * trace_stats_quantile_p[q], s->dur_q[q]);
        fprintf(f, ", \"max\": %.6f},\n  \"gpu_milli\": {", s->dur_max);
        for (int k = 0; k < 11; k++)
            fprintf(f, "%s\"%s\": %llu", k ? ", " : "", milli_label[k],
                    (unsigned long long)s->milli_bins[k]);
        fprintf(f, "},\n  \"gpu_hours\": %.6f,\n  \"tenants\": [", s->gpu_seconds / 3600);
        for (uint32_t k = 0; k < nt; k++) {
            fputs(k ? ",\n    {\"tenant\": " : "\n    {\"tenant\": ", f);
            sim_json_put_string(f, sim_intern_name(t->tenants, order[k]));
            fprintf(f, ", \"jobs\": %llu, \"gpu_hours\": %.6f}",
                    (unsigned long long)s->tenant_jobs[order[k]], s->tenant_gpu_s[order[k]] / 3600);
        }
        fputs(nt ? "\n  ],\n  \"fields_present\": [" : "],\n  \"fields_present\": [", f);
        bool first = true;
        for (int k = 0; k < TRACE_F_COUNT; k++)
            if ((s->fields >> k) & 1u) {
                fputs(first ? "" : ", ", f);
                sim_json_put_string(f, trace_field_name((enum trace_field)k));
                first = false;
            }
        for (int a = 0; a < SIM_ATTR_COUNT; a++)
            if ((s->attrs >> a) & 1u) {
                fputs(first ? "" : ", ", f);
                sim_json_put_string(f, sim_attr_name((sim_attr)a));
                first = false;
            }
        fputs("]\n}\n", f);
        sim_free(order);
        return;
    }
    fprintf(f, "trace      %s (format %s)\n", path, format ? format : "native");
    fprintf(f, "jobs       %llu (%llu CPU-only); rows read %llu, skipped %llu, ignored %llu\n",
            (unsigned long long)s->jobs, (unsigned long long)s->cpu_only, (unsigned long long)rows,
            (unsigned long long)skipped, (unsigned long long)ignored);
    fprintf(f, "span       %.0f s .. %.0f s (%.2f days); mean rate %.2f jobs/h\n",
            (double)s->first_submit_us / 1e6, (double)s->last_submit_us / 1e6, span_s / 86400,
            trace_stats_rate_h(s));
    fputs("arrivals by hour of day (jobs):\n", f);
    for (int h = 0; h < 24; h++)
        fprintf(f, "  %02d h %8llu%s", h, (unsigned long long)s->by_hour[h],
                h % 4 == 3 ? "\n" : "");
    fputs("arrivals per day (jobs, from day 0):\n", f);
    for (uint32_t k = 0; k < s->n_days; k++)
        fprintf(f, "%s%6llu%s", k % 10 ? "" : "  ", (unsigned long long)s->by_day[k],
                k % 10 == 9 || k + 1 == s->n_days ? "\n" : "");
    fputs("GPUs per job:\n", f);
    for (uint32_t k = 0; k < s->n_gpu_values; k++)
        fprintf(f, "  %6u %8llu  %6.2f %%\n", s->gpu_value[k], (unsigned long long)s->gpu_count[k],
                100.0 * (double)s->gpu_count[k] / (double)s->jobs);
    if (s->gpu_other)
        fprintf(f, "  other  %8llu\n", (unsigned long long)s->gpu_other);
    fprintf(f, "duration (s): mean %.1f  min %.1f", s->dur_mean, s->dur_min);
    for (int q = 0; q < TRACE_STATS_QN; q++)
        fprintf(f, "  p%g %.1f", 100 * trace_stats_quantile_p[q], s->dur_q[q]);
    fprintf(f, "  max %.1f\n", s->dur_max);
    fputs("GPU share per GPU (gpu_milli) of GPU jobs:\n", f);
    for (int k = 0; k < 11; k++)
        if (s->milli_bins[k])
            fprintf(f, "  %-8s %8llu  %6.2f %%\n", milli_label[k],
                    (unsigned long long)s->milli_bins[k],
                    100.0 * (double)s->milli_bins[k] / (double)(gpu_jobs ? gpu_jobs : 1));
    fprintf(f, "GPU time: %.1f GPU-hours; by tenant (largest first):\n", s->gpu_seconds / 3600);
    for (uint32_t k = 0; k < nt && k < 25; k++) {
        const char *name = sim_intern_name(t->tenants, order[k]);
        fprintf(f, "  %-20s %8llu jobs %12.1f GPU-h  %6.2f %%\n", *name ? name : "(none)",
                (unsigned long long)s->tenant_jobs[order[k]], s->tenant_gpu_s[order[k]] / 3600,
                s->gpu_seconds > 0 ? 100 * s->tenant_gpu_s[order[k]] / s->gpu_seconds : 0);
    }
    if (nt > 25)
        fprintf(f, "  (%u more tenants)\n", nt - 25);
    fputs("fields present:", f);
    for (int k = 0; k < TRACE_F_COUNT; k++)
        if ((s->fields >> k) & 1u)
            fprintf(f, " %s", trace_field_name((enum trace_field)k));
    for (int a = 0; a < SIM_ATTR_COUNT; a++)
        if ((s->attrs >> a) & 1u)
            fprintf(f, " %s", sim_attr_name((sim_attr)a));
    fputc('\n', f);
    sim_free(order);
}

/* Read the whole trace into s. */
int trace_tool_read_stats(trace_tool *t, trace_stats *s, sim_diag *d)
{
    job_spec j;
    int st;
    while ((st = trace_reader_next(t->reader, &j, d)) == 1)
        if (trace_stats_add(s, &j) != SIM_OK)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (st < 0)
        return st;
    trace_stats_finish(s);
    return SIM_OK;
}

/* ---- trace convert -------------------------------------------------------------- */

void tenant_sel_destroy(tenant_sel *ts)
{
    if (!ts)
        return;
    sim_intern_destroy(ts->names);
    sim_free(ts->seen);
    sim_free(ts);
}

/* Parse "A,B,..." into *out. SIM_EINVAL for an empty name, SIM_ENOMEM; d says why. */
int tenant_sel_parse(tenant_sel **out, const char *list, sim_diag *d)
{
    tenant_sel *ts = *out = sim_calloc(1, sizeof *ts);
    if (!ts || !(ts->names = sim_intern_create(false)))
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--tenants '%s': empty tenant name in the list", list);
        if (sim_intern_add(ts->names, p, len, 0) == SIM_INTERN_NONE)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        if (!comma)
            break;
        p = comma + 1;
    }
    ts->missing = sim_intern_count(ts->names) - 1;
    if (!(ts->seen = sim_calloc(sim_intern_count(ts->names), sizeof *ts->seen)))
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

/* Id of a job's tenant in the list; SIM_INTERN_NONE when not listed. */
uint32_t tenant_sel_find(const tenant_sel *ts, const char *name)
{
    uint32_t id = sim_intern_find(ts->names, name, strlen(name));
    return id == 0 ? SIM_INTERN_NONE : id;
}

/* Note that a job of the trace carries tenant `name`. */
void tenant_sel_note(tenant_sel *ts, const char *name)
{
    uint32_t id = tenant_sel_find(ts, name);
    if (id != SIM_INTERN_NONE && !ts->seen[id]) {
        ts->seen[id] = true;
        ts->missing--;
    }
}

/* The error for listed tenants no job carries, naming them. */
int tenant_sel_error(const tenant_sel *ts, const char *trace, sim_diag *d)
{
    char names[512] = "";
    size_t o = 0;
    for (uint32_t id = 1; id < sim_intern_count(ts->names) && o < sizeof names; id++)
        if (!ts->seen[id])
            o += (size_t)snprintf(names + o, sizeof names - o, "%s'%s'", o ? ", " : "",
                                  sim_intern_name(ts->names, id));
    return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--tenants: no job of %s has tenant %s", trace,
                        names);
}

bool trace_filters_keep(const trace_filters *f, const job_spec *j, const sim_intern *tenants)
{
    double t = (double)j->submit_us / 1e6;
    if ((f->has_from && t < f->from_s) || (f->has_to && t >= f->to_s))
        return false;
    if (j->num_gpus < f->min_gpus || j->num_gpus > f->max_gpus)
        return false;
    if (f->tenants &&
        tenant_sel_find(f->tenants, sim_intern_name(tenants, j->tenant)) == SIM_INTERN_NONE)
        return false;
    return true;
}

void held_jobs_free(held_job *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sim_free(h[i].name);
        sim_free(h[i].command);
    }
    sim_free(h);
}

/* Load scaling: draw jobs with replacement until their summed GPU request reaches
 * target_gpus; the k-th draw takes the k-th arrival time of the source (cycled with a
 * period of the source's span plus its mean gap), so the arrival pattern is kept. */
int trace_write_scaled(trace_writer *w, const held_job *h, size_t n, double target_gpus,
                       uint64_t seed, uint64_t *written, sim_diag *d)
{
    /* The draws reach the target only if some job asks for GPUs. */
    size_t gpu_jobs = 0;
    for (size_t i = 0; i < n; i++)
        gpu_jobs += h[i].j.num_gpus > 0 && h[i].j.gpu_milli > 0;
    if (gpu_jobs == 0)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--load: the selected jobs ask for no GPU");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    gsl_rng_set(rng, seed);
    sim_time first = h[0].j.submit_us, last = h[n - 1].j.submit_us;
    sim_time gap = n > 1 ? (last - first) / (sim_time)(n - 1) : SIM_US_PER_S;
    sim_time period = last - first + (gap > 0 ? gap : SIM_US_PER_S);
    double demand = 0;
    int st = SIM_OK;
    for (uint64_t k = 0; demand < target_gpus; k++) {
        const held_job *src = &h[gsl_rng_uniform_int(rng, n)];
        job_spec j = src->j;
        j.name = src->name;
        j.command = src->command;
        j.submit_us = h[k % n].j.submit_us + (sim_time)(k / n) * period;
        char id[SIM_ID_MAX];
        snprintf(id, sizeof id, "%.40s-%llu", src->j.id, (unsigned long long)k);
        memcpy(j.id, id, sizeof id);
        demand += j.num_gpus * (j.gpu_milli / 1000.0);
        if ((st = trace_writer_put(w, &j)) != SIM_OK) {
            sim_diag_set(d, st, NULL, 0, 0, "cannot write the output");
            break;
        }
        (*written)++;
    }
    gsl_rng_free(rng);
    return st;
}
