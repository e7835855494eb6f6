/*
 * model_duration.c: the evaluation behind `clustersim model eval duration` — the
 * duration predictor's error
 * on a trace, in a chronological split, or the error of the predictions a policy
 * recorded in a run's jobs.csv.
 *
 * Trace mode replays the trace's own timeline: a job arrives at its submit time and
 * ends at submit + duration, and only then does the predictor learn its duration. The
 * models are trained at the split (the first job of the last 1 - split share of jobs, in
 * submit order) on the jobs finished by then, and tested on every later job; with
 * --retrain T they are also retrained every T seconds of trace time during the test, as
 * a replay does. Baselines use the same timeline: the tenant's mean log-duration and the
 * tenant's last job, over the jobs finished before the job arrives (the global mean when
 * the tenant has none).
 */
#include "study/model_duration.h"

#include "models/catalog.h"
#include "models/duration.h"
#include "models/fit_error.h"
#include "base/alloc.h"
#include "base/csvin.h"
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A job in flight in the trace's own timeline. */
typedef struct flight {
    sim_time end_us;
    uint64_t seq;
    double dur_s;
    model_dur_job job;
} flight;

typedef struct heap {
    flight *a;
    size_t n, cap;
} heap;

static bool heap_less(const flight *x, const flight *y)
{
    return x->end_us != y->end_us ? x->end_us < y->end_us : x->seq < y->seq;
}

static bool heap_push(heap *h, const flight *f)
{
    if (h->n == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 1024;
        flight *na = sim_reallocarray(h->a, ncap, sizeof *na);
        if (!na)
            return false;
        h->a = na;
        h->cap = ncap;
    }
    size_t i = h->n++;
    h->a[i] = *f;
    while (i > 0 && heap_less(&h->a[i], &h->a[(i - 1) / 2])) {
        flight t = h->a[i];
        h->a[i] = h->a[(i - 1) / 2];
        h->a[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return true;
}

static void heap_pop(heap *h, flight *out)
{
    *out = h->a[0];
    h->a[0] = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && heap_less(&h->a[l], &h->a[m]))
            m = l;
        if (r < h->n && heap_less(&h->a[r], &h->a[m]))
            m = r;
        if (m == i)
            break;
        flight t = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = t;
        i = m;
    }
}

/* Per-tenant history for the baselines. */
typedef struct base_rec {
    uint64_t n;
    double sum_log, last_log;
} base_rec;

/* One row of the error table: errors on log-duration and on seconds. */
typedef struct err_row {
    const char *name;
    model_fit_error lg, s;
} err_row;

static void row_add(err_row *r, double y_s, double p_s)
{
    if (!isfinite(p_s))
        return;
    model_fit_error_add(&r->lg, log(y_s), log(p_s));
    model_fit_error_add(&r->s, y_s, p_s);
}

static void print_table(FILE *out, const err_row *rows, int n)
{
    fprintf(out, "%-24s %8s  %8s %8s %7s  %11s %11s %7s\n", "predictor", "jobs", "MAE_log",
            "MSE_log", "R2_log", "MAE_s", "MSE_s", "R2_s");
    for (int i = 0; i < n; i++) {
        const err_row *r = &rows[i];
        fprintf(out, "%-24s %8llu  %8.4f %8.4f %7.4f  %11.1f %11.4g %7.4f\n", r->name,
                (unsigned long long)r->lg.n, model_fit_error_mae(&r->lg),
                model_fit_error_mse(&r->lg), model_fit_error_r2(&r->lg), model_fit_error_mae(&r->s),
                model_fit_error_mse(&r->s), model_fit_error_r2(&r->s));
    }
}

/* Count the jobs of the trace (first pass). */
static int count_jobs(const study_dur_eval *a, const trace_options *topt, uint64_t *n, sim_diag *d)
{
    trace_reader *r;
    int st = trace_reader_open(&r, a->trace, topt, d);
    if (st != SIM_OK)
        return st;
    job_spec j;
    *n = 0;
    while ((st = trace_reader_next(r, &j, d)) == 1)
        (*n)++;
    trace_reader_close(r);
    return st < 0 ? st : SIM_OK;
}

int study_dur_eval_trace(const study_dur_eval *a, FILE *out, sim_diag *d)
{
    if (trace_path_is_stream(a->trace))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "clustersim model eval --kind duration reads the trace twice: "
                            "give a file, not standard input or a pipe");
    model_catalog *cat = NULL;
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    model_duration *m[2] = {NULL, NULL};
    trace_reader *r = NULL;
    heap h = {0};
    base_rec *base = NULL;
    uint32_t base_cap = 0;
    int st = SIM_ENOMEM;
    if (!tenants || !models) {
        sim_diag_set(d, st, NULL, 0, 0, "out of memory");
        goto out;
    }
    if ((st = model_catalog_load(&cat, a->catalog ? a->catalog : model_catalog_default_path(),
                                 d)) != SIM_OK)
        goto out;
    trace_options topt = {.format = a->format,
                          .skip_bad_rows = a->skip_bad_rows,
                          .tenants = tenants,
                          .models = models,
                          .gpu_types = model_catalog_names(cat),
                          .opts = a->trace_opts,
                          .n_opts = a->n_trace_opts,
                          .data_dir = model_data_dir()};
    uint64_t n_jobs;
    if ((st = count_jobs(a, &topt, &n_jobs, d)) != SIM_OK)
        goto out;
    if (n_jobs < 2) {
        st = sim_diag_set(d, SIM_EINVAL, a->trace, 0, 0,
                          "the trace has %llu job(s); a split needs at least 2",
                          (unsigned long long)n_jobs);
        goto out;
    }
    uint64_t split = (uint64_t)floor(a->split * (double)n_jobs);
    if (split < 1)
        split = 1;
    if (split >= n_jobs)
        split = n_jobs - 1;
    for (int l = 0; l < 2; l++) {
        model_dur_config c = a->cfg;
        c.learner = l == 0 ? MODEL_DUR_GBT : MODEL_DUR_RIDGE;
        if ((st = model_duration_create(&m[l], &c, d)) != SIM_OK)
            goto out;
    }
    if ((st = trace_reader_open(&r, a->trace, &topt, d)) != SIM_OK)
        goto out;
    err_row rows[8] = {{.name = "gbt combined"},   {.name = "gbt global"},
                       {.name = "gbt per-tenant"}, {.name = "ridge combined"},
                       {.name = "ridge global"},   {.name = "ridge per-tenant"},
                       {.name = "tenant mean"},    {.name = "tenant last job"}};
    for (int i = 0; i < 8; i++) {
        model_fit_error_init(&rows[i].lg);
        model_fit_error_init(&rows[i].s);
    }
    uint64_t seq = 0, trained_on = 0, finished = 0;
    double glob_sum = 0, split_s = 0;
    sim_time next_train = SIM_TIME_NEVER;
    job_spec j;
    while ((st = trace_reader_next(r, &j, d)) == 1) {
        flight f;
        while (h.n && h.a[0].end_us <= j.submit_us) {
            heap_pop(&h, &f);
            for (int l = 0; l < 2; l++)
                model_duration_finish(m[l], &f.job, f.dur_s);
            double y = log(f.dur_s > 1 ? f.dur_s : 1);
            uint32_t t = f.job.slot;
            if (t >= base_cap) {
                uint32_t ncap = base_cap ? base_cap : 64;
                while (ncap <= t)
                    ncap *= 2;
                base_rec *nb = sim_reallocarray(base, ncap, sizeof *nb);
                if (!nb) {
                    st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                    goto out;
                }
                memset(nb + base_cap, 0, (ncap - base_cap) * sizeof *nb);
                base = nb;
                base_cap = ncap;
            }
            base[t].n++;
            base[t].sum_log += y;
            base[t].last_log = y;
            glob_sum += y;
            finished++;
        }
        if (seq == split) {
            split_s = (double)j.submit_us / 1e6;
            trained_on = model_duration_finished(m[0]);
            for (int l = 0; l < 2; l++)
                if ((st = model_duration_train(m[l])) != SIM_OK) {
                    sim_diag_set(d, st, NULL, 0, 0, "training the duration predictor failed");
                    goto out;
                }
            if (a->retrain_s > 0)
                next_train = j.submit_us + (sim_time)llround(a->retrain_s * 1e6);
        }
        if (seq > split && j.submit_us >= next_train) {
            for (int l = 0; l < 2; l++)
                if (model_duration_pending_rows(m[l]) &&
                    (st = model_duration_train(m[l])) != SIM_OK) {
                    sim_diag_set(d, st, NULL, 0, 0, "training the duration predictor failed");
                    goto out;
                }
            /* The training moments this arrival passed add no rows after the first: on to
             * the first one after it, in one step whatever the gap. */
            sim_time period = (sim_time)llround(a->retrain_s * 1e6);
            if (period < 1)
                period = 1;
            next_train += period * ((j.submit_us - next_train) / period + 1);
        }
        model_dur_input in;
        model_dur_input_of(&in, &j);
        model_duration_arrive(m[0], &in, &f.job);
        f.dur_s = j.work_s > 1 ? j.work_s : 1;
        f.end_us = j.submit_us + (sim_time)llround(j.work_s * 1e6);
        f.seq = seq;
        if (seq >= split) {
            for (int l = 0; l < 2; l++) {
                row_add(&rows[3 * l + 0], f.dur_s,
                        model_duration_predict(m[l], &f.job, MODEL_DUR_AUTO, NULL));
                row_add(&rows[3 * l + 1], f.dur_s,
                        model_duration_predict(m[l], &f.job, MODEL_DUR_GLOBAL, NULL));
                row_add(&rows[3 * l + 2], f.dur_s,
                        model_duration_predict(m[l], &f.job, MODEL_DUR_TENANT, NULL));
            }
            uint32_t t = f.job.slot;
            bool known = t < base_cap && base[t].n;
            double g = finished ? glob_sum / (double)finished : NAN;
            row_add(&rows[6], f.dur_s, exp(known ? base[t].sum_log / (double)base[t].n : g));
            row_add(&rows[7], f.dur_s, exp(known ? base[t].last_log : g));
        }
        if (!heap_push(&h, &f)) {
            st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto out;
        }
        seq++;
    }
    if (st < 0)
        goto out;
    st = SIM_OK;
    /* Training keeps the last `history` finished jobs. */
    uint64_t kept = trained_on < a->cfg.history ? trained_on : a->cfg.history;
    char trained[96];
    if (kept < trained_on)
        snprintf(trained, sizeof trained, "the last %llu (history) of the %llu",
                 (unsigned long long)kept, (unsigned long long)trained_on);
    else
        snprintf(trained, sizeof trained, "the %llu", (unsigned long long)trained_on);
    fprintf(out,
            "duration predictor on %s: %llu jobs; split at job %llu (t=%.0f s): trained on %s "
            "jobs finished by then, tested on the %llu jobs submitted from then on%s\n",
            a->trace, (unsigned long long)n_jobs, (unsigned long long)split, split_s, trained,
            (unsigned long long)(n_jobs - split),
            a->retrain_s > 0 ? " (retrained during the test)" : "");
    fputs("(a predictor that has no prediction for a job, before any job it learns from has "
          "finished, does not score it: `jobs` counts the jobs each one scored)\n",
          out);
    fprintf(out,
            "tenants with their own model: gbt %u, ridge %u (min_history %u); history %u, "
            "topics %u\n",
            model_duration_tenant_models(m[0]), model_duration_tenant_models(m[1]),
            a->cfg.min_history, a->cfg.history, a->cfg.topics);
    print_table(out, rows, 8);
out:
    trace_reader_close(r);
    for (int l = 0; l < 2; l++)
        model_duration_destroy(m[l]);
    sim_free(h.a);
    sim_free(base);
    model_catalog_destroy(cat);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    return st;
}

/* Errors of the predictions a run recorded: pred_duration_s against work_s. */
int study_dur_eval_jobs(const char *path, FILE *out, sim_diag *d)
{
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    static const char *const names[] = {"work_s", "pred_duration_s", "status"};
    int32_t ix[3];
    csvin_row row;
    err_row all = {.name = "recorded predictions"};
    model_fit_error_init(&all.lg);
    model_fit_error_init(&all.s);
    uint64_t rows = 0;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected a jobs.csv header");
    if (st < 0 || (st = csvin_map_header(in, &row, names, 3, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < 3; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected the header of a jobs.csv",
                              names[k]);
            goto out;
        }
    while ((st = csvin_next(in, &row, d)) == 1) {
        rows++;
        if (csvin_empty(&row, ix[1]))
            continue;
        double w, p;
        if ((st = csvin_double(in, &row, ix[0], "work_s", 0, 1e15, &w, d)) ||
            (st = csvin_double(in, &row, ix[1], "pred_duration_s", 0, 1e15, &p, d)))
            goto out;
        row_add(&all, w > 1 ? w : 1, p > 1 ? p : 1);
    }
    if (st < 0)
        goto out;
    st = SIM_OK;
    fprintf(out, "%s: %llu jobs, %llu with a recorded prediction\n", path, (unsigned long long)rows,
            (unsigned long long)all.lg.n);
    print_table(out, &all, 1);
out:
    csvin_close(in);
    return st;
}
