/*
 * cmd_trace.c: the trace tools.
 *   trace stats FILE     what a trace contains (text, or --json)
 *   trace convert        any format to the native one, with filters and load scaling
 *   trace gen            a seeded synthetic trace, parametric or fitted to a real one
 * Load scaling follows the "workload tuning" of fragmentation studies (Weng et al.,
 * "Beware of Fragmentation", ATC'23): jobs are drawn from the trace with replacement
 * until their summed GPU request reaches a share of the cluster's GPUs.
 */
#include "cli/cli.h"

#include "models/catalog.h"
#include "models/zoo.h"
#include "sim/alloc.h"
#include "sim/intern.h"
#include "sim/textout.h"
#include "traces/curves.h"
#include "traces/cluster.h"
#include "traces/stats.h"
#include "traces/writer.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every trace tool reads: a trace with its format and options. */
typedef struct trace_src {
    const char *path;
    const char *format;
    const char *opts[TRACE_MAX_OPTS];
    uint32_t n_opts;
    bool skip_bad_rows;
    const char *catalog;
} trace_src;

/* Shared state of one tool run: catalog, name tables, the reader. */
typedef struct tool {
    model_catalog *cat;
    sim_intern *tenants, *models;
    trace_reader *reader;
} tool;

static void tool_fini(tool *t)
{
    trace_reader_close(t->reader);
    sim_intern_destroy(t->tenants);
    sim_intern_destroy(t->models);
    model_catalog_destroy(t->cat);
    memset(t, 0, sizeof *t);
}

static int tool_open(tool *t, const trace_src *src, sim_diag *d)
{
    memset(t, 0, sizeof *t);
    int st = model_catalog_load(&t->cat, src->catalog ? src->catalog : model_catalog_default_path(),
                                d);
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
        fprintf(stderr, "clustersim: warning: %s: ignoring column(s) the %s format does not use: "
                        "%s\n",
                src->path, src->format ? src->format : "native",
                trace_reader_ignored_columns(t->reader));
    return st;
}

/* Options every trace tool takes: 1 = consumed, 0 = not one, -1 = error (printed). */
static int src_option(trace_src *s, int argc, char **argv, int *i, const char *trace_opt_name)
{
    const char *v;
    int m;
    if (cli_flag(argv, *i, "--skip-bad-rows")) {
        s->skip_bad_rows = true;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, trace_opt_name, &v)) != 0) {
        if (m < 0)
            return -1;
        s->path = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--format", &v)) != 0) {
        if (m < 0)
            return -1;
        s->format = v;
        return 1;
    }
    if ((m = cli_opt(argc, argv, i, "--trace-opt", &v)) != 0)
        return m < 0 || !cli_trace_opt(s->opts, &s->n_opts, v) ? -1 : 1;
    if ((m = cli_opt(argc, argv, i, "--catalog", &v)) != 0) {
        if (m < 0)
            return -1;
        s->catalog = v;
        return 1;
    }
    return 0;
}

static int fail(int st, sim_diag *d)
{
    if (st == SIM_ENOMEM && !d->msg[0])
        sim_diag_set(d, st, NULL, 0, 0, "out of memory");
    cli_print_diag(d);
    return cli_exit_code(st);
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

static void print_stats(FILE *f, const trace_stats *s, const tool *t, const char *path,
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
                (unsigned long long)rows, (unsigned long long)skipped,
                (unsigned long long)ignored, (double)s->first_submit_us / 1e6,
                (double)s->last_submit_us / 1e6, span_s, trace_stats_rate_h(s));
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
        fprintf(f, "},\n  \"duration_s\": {\"mean\": %.6f, \"min\": %.6f", s->dur_mean,
                s->dur_min);
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
                    (unsigned long long)s->tenant_jobs[order[k]],
                    s->tenant_gpu_s[order[k]] / 3600);
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
            (unsigned long long)s->jobs, (unsigned long long)s->cpu_only,
            (unsigned long long)rows, (unsigned long long)skipped, (unsigned long long)ignored);
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
static int read_stats(tool *t, trace_stats *s, sim_diag *d)
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

static int trace_stats_cmd(int argc, char **argv)
{
    trace_src src = {0};
    bool json = false;
    for (int i = 3; i < argc; i++) {
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace stats FILE [--format NAME] [--trace-opt K=V]...\n"
                   "       [--json] [--skip-bad-rows] [--catalog FILE]\n"
                   "Jobs, time span, arrivals by hour of day and per day, GPU-count and\n"
                   "duration distributions, GPU share mix, GPU time by tenant, fields present.\n"
                   "Trace formats: %s\n",
                   trace_format_list());
            return 0;
        }
        if (cli_flag(argv, i, "--json")) {
            json = true;
            continue;
        }
        int m = src_option(&src, argc, argv, &i, "--trace");
        if (m < 0)
            return 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("unknown option '%s' for 'clustersim trace stats'", argv[i]);
        if (src.path)
            return cli_usage_error("clustersim trace stats takes one FILE");
        src.path = argv[i];
    }
    if (!src.path)
        return cli_usage_error("clustersim trace stats needs a FILE");
    sim_diag d = {0};
    tool t;
    trace_stats s;
    trace_stats_init(&s);
    int st = tool_open(&t, &src, &d);
    if (st == SIM_OK)
        st = read_stats(&t, &s, &d);
    if (st == SIM_OK)
        print_stats(stdout, &s, &t, src.path, src.format, json);
    trace_stats_fini(&s);
    tool_fini(&t);
    return st == SIM_OK ? 0 : fail(st, &d);
}

/* ---- trace convert -------------------------------------------------------------- */

typedef struct held_job {
    job_spec j;
    char *name, *command;
} held_job;

/* The tenants --tenants names, and which of them some job of the trace carries: a name
 * no job carries is a typo or the wrong trace, never a wish for an empty output. */
typedef struct tenant_sel {
    sim_intern *names; /* the listed names (id 0, "", is never listed) */
    bool *seen;        /* by id of names */
    uint32_t missing;  /* listed names no job read so far carries */
} tenant_sel;

typedef struct filters {
    double from_s, to_s; /* submit window [from, to) */
    bool has_from, has_to;
    tenant_sel *tenants; /* NULL = every tenant */
    uint64_t min_gpus, max_gpus;
    uint64_t first;      /* 0 = all */
} filters;

static void tenant_sel_destroy(tenant_sel *ts)
{
    if (!ts)
        return;
    sim_intern_destroy(ts->names);
    sim_free(ts->seen);
    sim_free(ts);
}

/* Parse "A,B,..." into *out. SIM_EINVAL for an empty name, SIM_ENOMEM; d says why. */
static int tenant_sel_parse(tenant_sel **out, const char *list, sim_diag *d)
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
static uint32_t tenant_sel_find(const tenant_sel *ts, const char *name)
{
    uint32_t id = sim_intern_find(ts->names, name, strlen(name));
    return id == 0 ? SIM_INTERN_NONE : id;
}

/* Note that a job of the trace carries tenant `name`. */
static void tenant_sel_note(tenant_sel *ts, const char *name)
{
    uint32_t id = tenant_sel_find(ts, name);
    if (id != SIM_INTERN_NONE && !ts->seen[id]) {
        ts->seen[id] = true;
        ts->missing--;
    }
}

/* The error for listed tenants no job carries, naming them. */
static int tenant_sel_error(const tenant_sel *ts, const char *trace, sim_diag *d)
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

static bool keep(const filters *f, const job_spec *j, const sim_intern *tenants)
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

static void free_held(held_job *h, size_t n)
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
static int write_scaled(trace_writer *w, const held_job *h, size_t n, double target_gpus,
                        uint64_t seed, uint64_t *written, sim_diag *d)
{
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
        if (j.num_gpus == 0 && k > 100 * n) {
            st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                              "--load: the selected jobs ask for no GPU");
            break;
        }
    }
    gsl_rng_free(rng);
    return st;
}

static int trace_convert_cmd(int argc, char **argv)
{
    trace_src src = {0};
    filters f = {.max_gpus = UINT64_MAX};
    const char *out = NULL, *cluster = NULL, *cluster_type = NULL, *tenants_arg = NULL;
    double load_pct = 0;
    uint64_t seed = 1;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace convert --trace FILE [--format NAME] [--trace-opt K=V]...\n"
                   "       --out FILE[.gz] [--from T] [--to T] [--tenants A,B,...]\n"
                   "       [--min-gpus N] [--max-gpus N] [--first N]\n"
                   "       [--load PCT --cluster FILE|SPEC [--cluster-gpu-type T] [--seed N]]\n"
                   "       [--skip-bad-rows] [--catalog FILE]\n"
                   "Writes the native format (gzip when the name ends in .gz). Filters apply in\n"
                   "this order: window of submit times [from, to), tenants, GPU count range,\n"
                   "first N. --load PCT draws the kept jobs with replacement (seeded) until\n"
                   "their summed GPU request reaches PCT %% of the cluster's GPUs.\n"
                   "Trace formats: %s\n",
                   trace_format_list());
            return 0;
        }
        if ((m = src_option(&src, argc, argv, &i, "--trace")) != 0) {
            if (m < 0)
                return 2;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--from")) {
            if (m < 0 || !cli_seconds("--from", v, &f.from_s))
                return 2;
            f.has_from = true;
        } else if (OPT("--to")) {
            if (m < 0 || !cli_seconds("--to", v, &f.to_s))
                return 2;
            f.has_to = true;
        } else if (OPT("--tenants")) {
            if (m < 0)
                return 2;
            tenants_arg = v;
        } else if (OPT("--min-gpus")) {
            if (m < 0 || !cli_u64("--min-gpus", v, 0, 65536, &f.min_gpus))
                return 2;
        } else if (OPT("--max-gpus")) {
            if (m < 0 || !cli_u64("--max-gpus", v, 0, 65536, &f.max_gpus))
                return 2;
        } else if (OPT("--first")) {
            if (m < 0 || !cli_u64("--first", v, 1, UINT64_C(1) << 40, &f.first))
                return 2;
        } else if (OPT("--load")) {
            if (m < 0 || !cli_double("--load", v, 0.001, 100000, &load_pct))
                return 2;
        } else if (OPT("--cluster-gpu-type")) {
            if (m < 0)
                return 2;
            cluster_type = v;
        } else if (OPT("--cluster")) {
            if (m < 0)
                return 2;
            cluster = v;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &seed))
                return 2;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace convert'", argv[i]);
        }
#undef OPT
    }
    if (!src.path || !out)
        return cli_usage_error("clustersim trace convert needs --trace FILE and --out FILE");
    if (f.min_gpus > f.max_gpus)
        return cli_usage_error("--min-gpus is larger than --max-gpus");
    if (f.has_from && f.has_to && f.to_s <= f.from_s)
        return cli_usage_error("--to must be after --from");
    if (load_pct > 0 && !cluster)
        return cli_usage_error("--load needs --cluster FILE|SPEC (its GPUs are the capacity)");
    sim_diag d = {0};
    int st = tenants_arg ? tenant_sel_parse(&f.tenants, tenants_arg, &d) : SIM_OK;
    if (st != SIM_OK) {
        tenant_sel_destroy(f.tenants);
        return fail(st, &d);
    }
    tool t;
    cluster_spec *cl = NULL;
    trace_writer *w = NULL;
    held_job *held = NULL;
    size_t n_held = 0, cap_held = 0;
    uint64_t read = 0, written = 0;
    st = tool_open(&t, &src, &d);
    if (st == SIM_OK && cluster)
        st = cluster_spec_load_typed(&cl, cluster, model_catalog_names(t.cat), cluster_type, &d);
    /* Load scaling fills a share of the cluster's GPUs: none, and it would write nothing. */
    if (st == SIM_OK && load_pct > 0 && cluster_spec_gpus(cl) == 0)
        st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0,
                          "--load: the cluster '%s' has no GPU (the load is a share of its GPUs)",
                          cluster);
    if (st == SIM_OK)
        st = trace_writer_open(&w, out, t.tenants, t.models, model_catalog_names(t.cat), &d);
    job_spec j;
    bool stopped = false; /* --first reached before the end of the trace */
    while (st == SIM_OK && (st = trace_reader_next(t.reader, &j, &d)) == 1) {
        st = SIM_OK;
        read++;
        if (f.tenants)
            tenant_sel_note(f.tenants, sim_intern_name(t.tenants, j.tenant));
        if (!keep(&f, &j, t.tenants))
            continue;
        if (f.first && (load_pct > 0 ? n_held : written) >= f.first) {
            stopped = true;
            break;
        }
        if (load_pct <= 0) {
            if ((st = trace_writer_put(w, &j)) != SIM_OK)
                sim_diag_set(&d, st, out, 0, 0, "cannot write");
            written++;
            continue;
        }
        if (n_held == cap_held) {
            size_t ncap = cap_held ? cap_held * 2 : 1024;
            held_job *nh = sim_reallocarray(held, ncap, sizeof *nh);
            if (!nh) {
                st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            held = nh;
            cap_held = ncap;
        }
        held[n_held].j = j;
        held[n_held].name = sim_strdup(j.name ? j.name : "");
        held[n_held].command = sim_strdup(j.command ? j.command : "");
        n_held++;
        if (!held[n_held - 1].name || !held[n_held - 1].command)
            st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (st == 0)
        st = SIM_OK;
    /* Only a listed tenant that never shows up is an error, so after --first read on
     * while one is still missing. */
    while (st == SIM_OK && stopped && f.tenants && f.tenants->missing &&
           (st = trace_reader_next(t.reader, &j, &d)) == 1) {
        st = SIM_OK;
        read++;
        tenant_sel_note(f.tenants, sim_intern_name(t.tenants, j.tenant));
    }
    if (st == 0)
        st = SIM_OK;
    if (st == SIM_OK && f.tenants && f.tenants->missing)
        st = tenant_sel_error(f.tenants, src.path, &d);
    if (st == SIM_OK && load_pct > 0) {
        if (n_held == 0)
            st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "--load: the filters keep no job");
        else
            st = write_scaled(w, held, n_held, load_pct / 100 * (double)cluster_spec_gpus(cl),
                              seed, &written, &d);
    }
    int cst = trace_writer_close(w, st == SIM_OK, &d);
    if (st == SIM_OK)
        st = cst;
    if (st == SIM_OK)
        fprintf(stderr, "clustersim: %s: read %llu jobs, wrote %llu to %s\n", src.path,
                (unsigned long long)read, (unsigned long long)written, out);
    free_held(held, n_held);
    cluster_spec_destroy(cl);
    tenant_sel_destroy(f.tenants);
    tool_fini(&t);
    return st == SIM_OK ? 0 : fail(st, &d);
}

/* ---- trace gen ------------------------------------------------------------------ */

/* Options whose distribution --like takes from its FILE instead, with what it takes:
 * given with --like they would be silently ignored, so they are refused. --rate is not
 * here: it scales the FILE's hour-of-day rates. */
static const char *const like_fitted[][2] = {
    {"--diurnal", "arrivals follow the hour-of-day rates of the --like FILE (--rate scales them)"},
    {"--peak-hour",
     "arrivals follow the hour-of-day rates of the --like FILE (--rate scales them)"},
    {"--duration-median", "durations are drawn from those of the --like FILE"},
    {"--duration-sigma", "durations are drawn from those of the --like FILE"},
    {"--duration-pareto", "durations are drawn from those of the --like FILE"},
    {"--tenants", "tenants are those of the --like FILE, with their shares of the jobs"},
    {"--frac-share", "GPU counts and shares are drawn from the mix of the --like FILE"},
    {"--frac-multi", "GPU counts and shares are drawn from the mix of the --like FILE"},
    {"--frac-cpu", "GPU counts and shares are drawn from the mix of the --like FILE"},
};

/* Index in like_fitted of the option arg ("--name" or "--name=value"); -1 when absent. */
static int like_fitted_find(const char *arg)
{
    size_t n = strcspn(arg, "=");
    for (size_t k = 0; k < sizeof like_fitted / sizeof like_fitted[0]; k++)
        if (strlen(like_fitted[k][0]) == n && strncmp(arg, like_fitted[k][0], n) == 0)
            return (int)k;
    return -1;
}

static int trace_gen_cmd(int argc, char **argv)
{
    trace_gen_config c;
    trace_gen_config_default(&c);
    trace_src like = {0};
    const char *out = NULL, *zoo_ref = "V100M16";
    bool jobs_given = false, zoo_on = false, constrained_given = false, zoo_opt = false;
    int fitted = -1; /* an option --like replaces, when given */
    double zoo_slo = 2;
    for (int i = 3; i < argc; i++) {
        const char *v;
        int m;
        if (fitted < 0)
            fitted = like_fitted_find(argv[i]);
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace gen --out FILE [--jobs N] [--seed N] [--rate JOBS_PER_H]\n"
                   "       [--diurnal A] [--peak-hour H] [--duration-median T]\n"
                   "       [--duration-sigma X] [--duration-pareto ALPHA] [--tenants N]\n"
                   "       [--frac-share X] [--frac-multi X] [--frac-cpu X] [--frac-ls X]\n"
                   "       [--over-request X] [--gpu-types A|B] [--frac-constrained X]\n"
                   "       [--like FILE [--format NAME] [--trace-opt K=V]... [--skip-bad-rows]]\n"
                   "       [--catalog FILE]\n"
                   "       [--zoo [--zoo-ref TYPE] [--zoo-slo X]]\n"
                   "--like FILE takes arrivals by hour of day, durations, the GPU mix and the\n"
                   "tenants from FILE (--rate then scales its rates to that daily mean); the\n"
                   "options that would set those are refused with it.\n"
                   "--zoo gives each GPU job a model class of the zoo with its graph and\n"
                   "execution features, iterations and true demand (synthetic), and LS jobs\n"
                   "an slo_s of X (default 2) times their duration on TYPE (default V100M16).\n");
            return 0;
        }
        if (cli_flag(argv, i, "--zoo")) {
            zoo_on = true;
            continue;
        }
        if ((m = src_option(&like, argc, argv, &i, "--like")) != 0) {
            if (m < 0)
                return 2;
            continue;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--jobs")) {
            if (m < 0 || !cli_u64("--jobs", v, 1, UINT64_C(1) << 40, &c.jobs))
                return 2;
            jobs_given = true;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &c.seed))
                return 2;
        } else if (OPT("--rate")) {
            if (m < 0 || !cli_double("--rate", v, 1e-6, 1e12, &c.arrival_rate_h))
                return 2;
            c.like_rate_h = c.arrival_rate_h; /* with --like: scales its rates */
        } else if (OPT("--diurnal")) {
            if (m < 0 || !cli_double("--diurnal", v, 0, 1, &c.diurnal_amplitude))
                return 2;
        } else if (OPT("--peak-hour")) {
            if (m < 0 || !cli_double("--peak-hour", v, 0, 24, &c.diurnal_peak_h))
                return 2;
        } else if (OPT("--duration-median")) {
            if (m < 0 || !cli_seconds("--duration-median", v, &c.duration_median_s))
                return 2;
        } else if (OPT("--duration-sigma")) {
            if (m < 0 || !cli_double("--duration-sigma", v, 0, 10, &c.duration_sigma))
                return 2;
        } else if (OPT("--duration-pareto")) {
            if (m < 0 || !cli_double("--duration-pareto", v, 0.1, 100, &c.duration_pareto))
                return 2;
        } else if (OPT("--tenants")) {
            uint64_t tn;
            if (m < 0 || !cli_u64("--tenants", v, 1, 100000, &tn))
                return 2;
            c.tenants = (uint32_t)tn;
        } else if (OPT("--frac-share")) {
            if (m < 0 || !cli_double("--frac-share", v, 0, 1, &c.frac_share))
                return 2;
        } else if (OPT("--frac-multi")) {
            if (m < 0 || !cli_double("--frac-multi", v, 0, 1, &c.frac_multi))
                return 2;
        } else if (OPT("--frac-cpu")) {
            if (m < 0 || !cli_double("--frac-cpu", v, 0, 1, &c.frac_cpu_only))
                return 2;
        } else if (OPT("--frac-ls")) {
            if (m < 0 || !cli_double("--frac-ls", v, 0, 1, &c.frac_ls))
                return 2;
        } else if (OPT("--over-request")) {
            if (m < 0 || !cli_double("--over-request", v, 1, 100, &c.over_request))
                return 2;
        } else if (OPT("--gpu-types")) {
            if (m < 0)
                return 2;
            c.gpu_types = v;
        } else if (OPT("--frac-constrained")) {
            if (m < 0 || !cli_double("--frac-constrained", v, 0, 1, &c.frac_constrained))
                return 2;
            constrained_given = true;
        } else if (OPT("--zoo-ref")) {
            if (m < 0)
                return 2;
            zoo_ref = v;
            zoo_opt = true;
        } else if (OPT("--zoo-slo")) {
            if (m < 0 || !cli_double("--zoo-slo", v, 0, 1e6, &zoo_slo))
                return 2;
            zoo_opt = true;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace gen'", argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim trace gen needs --out FILE");
    if (c.frac_cpu_only + c.frac_multi + c.frac_share > 1)
        return cli_usage_error("--frac-cpu + --frac-multi + --frac-share must not exceed 1");
    /* Each of the pair means nothing without the other: constrained to which types, or
     * how many jobs are. */
    if (c.frac_constrained > 0 && !c.gpu_types)
        return cli_usage_error("--frac-constrained needs --gpu-types A|B|... (the types a "
                               "constrained job is restricted to)");
    if (c.gpu_types && !constrained_given)
        return cli_usage_error("--gpu-types needs --frac-constrained X (the fraction of GPU "
                               "jobs restricted to one of the types)");
    if (!like.path && (like.format || like.n_opts || like.skip_bad_rows))
        return cli_usage_error("--format, --trace-opt and --skip-bad-rows describe the --like "
                               "FILE; give --like");
    if (like.path && fitted >= 0)
        return cli_usage_error("%s cannot be combined with --like: %s", like_fitted[fitted][0],
                               like_fitted[fitted][1]);
    if (zoo_opt && !zoo_on)
        return cli_usage_error("--zoo-ref and --zoo-slo describe the annotation of --zoo; "
                               "give --zoo");
    sim_diag d = {0};
    tool t;
    trace_stats s;
    trace_stats_init(&s);
    trace_gen *g = NULL;
    trace_writer *w = NULL;
    sim_intern *tenants = NULL;
    model_zoo *zoo = NULL;
    model_zoo_annotator ann;
    int st = tool_open(&t, &like, &d);
    if (st == SIM_OK && zoo_on) {
        uint32_t rt = sim_intern_find(model_catalog_names(t.cat), zoo_ref, strlen(zoo_ref));
        if (rt == SIM_INTERN_NONE || rt == 0)
            st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "--zoo-ref: unknown GPU type '%s'",
                              zoo_ref);
        else if ((st = model_zoo_create(&zoo, t.cat, &d)) == SIM_OK) {
            ann = (model_zoo_annotator){.zoo = zoo,
                                        .models = t.models,
                                        .ref_type = (uint16_t)rt,
                                        .draw_over = true,
                                        .over_request = c.over_request,
                                        .slo_factor = zoo_slo};
            c.annotate = model_zoo_annotate;
            c.annotate_ctx = &ann;
        }
    }
    if (st == SIM_OK && like.path) {
        st = read_stats(&t, &s, &d);
        c.like = &s;
        c.like_tenants = t.tenants;
        if (!jobs_given)
            c.jobs = s.jobs;
    }
    /* The generated names go to a table of their own, so --like's names stay intact. */
    if (st == SIM_OK && !(tenants = sim_intern_create(false)))
        st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (st == SIM_OK)
        st = trace_gen_create(&g, &c, tenants, t.models, model_catalog_names(t.cat), &d);
    if (st == SIM_OK)
        st = trace_writer_open(&w, out, tenants, t.models, model_catalog_names(t.cat), &d);
    /* Without the zoo, the generator gives a job no attribute but its batch size. */
    if (st == SIM_OK && !zoo_on)
        trace_writer_limit_attrs(w, UINT64_C(1) << SIM_ATTR_BATCH_SIZE);
    job_spec j;
    while (st == SIM_OK && trace_gen_next(g, &j) == 1)
        if ((st = trace_writer_put(w, &j)) != SIM_OK)
            sim_diag_set(&d, st, out, 0, 0, "cannot write");
    if (w) {
        int cst = trace_writer_close(w, st == SIM_OK, &d);
        if (st == SIM_OK)
            st = cst;
    }
    trace_gen_destroy(g);
    model_zoo_destroy(zoo);
    sim_intern_destroy(tenants);
    trace_stats_fini(&s);
    tool_fini(&t);
    return st == SIM_OK ? 0 : fail(st, &d);
}

/* clustersim trace curves: diurnal demand curves of online services. */
static int trace_curves_cmd(int argc, char **argv)
{
    trace_diurnal p = {.services = 2,
                       .prefix = "svc",
                       .peak = 16,
                       .trough = 4,
                       .period_s = 86400,
                       .step_s = 600,
                       .length_s = 86400,
                       .noise = 0.1,
                       .seed = 1};
    const char *out = NULL, *v;
    uint64_t u;
    for (int i = 3; i < argc; i++) {
        int m;
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim trace curves --out FILE [--services N] [--peak R]\n"
                   "       [--trough R] [--period T] [--step T] [--length T] [--noise X]\n"
                   "       [--seed N] [--prefix NAME]\n"
                   "Diurnal demand curves of online services, CSV service,time,replicas:\n"
                   "replicas(t) = trough + (peak - trough) (1 - cos(2 pi (t/period + phase)))/2,\n"
                   "times (1 + noise N(0,1)), rounded, clamped to 0..peak, one point per step\n"
                   "from 0 to length; a seeded random phase per service. Services are named\n"
                   "PREFIX0, PREFIX1, ... (defaults: 2 services svc*, peak 16, trough 4, period\n"
                   "1d, step 10m, length 1d, noise 0.1, seed 1).\n");
            return 0;
        }
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--services")) {
            if (m < 0 || !cli_u64("--services", v, 1, 100000, &u))
                return 2;
            p.services = (uint32_t)u;
        } else if (OPT("--peak")) {
            if (m < 0 || !cli_u64("--peak", v, 0, 1000000, &u))
                return 2;
            p.peak = (uint32_t)u;
        } else if (OPT("--trough")) {
            if (m < 0 || !cli_u64("--trough", v, 0, 1000000, &u))
                return 2;
            p.trough = (uint32_t)u;
        } else if (OPT("--period")) {
            if (m < 0 || !cli_seconds("--period", v, &p.period_s))
                return 2;
        } else if (OPT("--step")) {
            if (m < 0 || !cli_seconds("--step", v, &p.step_s))
                return 2;
        } else if (OPT("--length")) {
            if (m < 0 || !cli_seconds("--length", v, &p.length_s))
                return 2;
        } else if (OPT("--noise")) {
            if (m < 0 || !cli_double("--noise", v, 0, 10, &p.noise))
                return 2;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &p.seed))
                return 2;
        } else if (OPT("--prefix")) {
            if (m < 0)
                return 2;
            p.prefix = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim trace curves'", argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim trace curves needs --out FILE");
    if (p.trough > p.peak)
        return cli_usage_error("--trough %u is above --peak %u", p.trough, p.peak);
    if (p.period_s <= 0 || p.step_s <= 0)
        return cli_usage_error("--period and --step must be positive");
    cli_outfile o;
    if (!cli_out_open_path(&o, out))
        return 2;
    sim_diag d = {0};
    int st = trace_curves_diurnal_write(o.f, &p, &d);
    if (!cli_out_close(&o, st == SIM_OK))
        return 2;
    return st == SIM_OK ? 0 : fail(st, &d);
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 3 || cli_flag(argv, 2, "--help") || cli_flag(argv, 2, "-h")) {
        printf("usage: clustersim trace stats|convert|gen|curves ...   (clustersim trace CMD "
               "--help)\n");
        return argc < 3 ? 2 : 0;
    }
    if (!strcmp(argv[2], "gen"))
        return trace_gen_cmd(argc, argv);
    if (!strcmp(argv[2], "stats"))
        return trace_stats_cmd(argc, argv);
    if (!strcmp(argv[2], "convert"))
        return trace_convert_cmd(argc, argv);
    if (!strcmp(argv[2], "curves"))
        return trace_curves_cmd(argc, argv);
    return cli_usage_error("unknown trace command '%s' (stats, convert, gen, curves)", argv[2]);
}
