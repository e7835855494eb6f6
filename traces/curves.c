/*
 * curves.c: the demand-curve reader and the diurnal generator (see curves.h). The file
 * is read with the shared CSV reader, so every error names file:line:column; points are
 * grouped by service (file order kept within a service) after the read.
 */
#include "traces/curves.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct raw_pt {
    uint32_t svc;
    sim_time t_us;
    uint32_t replicas;
    long line;
} raw_pt;

static int by_service(const void *a, const void *b)
{
    const raw_pt *x = a, *y = b;
    if (x->svc != y->svc)
        return x->svc < y->svc ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

void trace_curves_free(sim_curves *c)
{
    if (!c)
        return;
    for (uint32_t s = 0; s < c->n; s++)
        sim_free(c->names[s]);
    sim_free(c->names);
    sim_free(c->first);
    sim_free(c->count);
    sim_free(c->pts);
    sim_free((char *)c->path);
    sim_free((long *)c->line);
    memset(c, 0, sizeof *c);
}

int trace_curves_load(sim_curves *out, const char *path, sim_diag *d)
{
    memset(out, 0, sizeof *out);
    csvin *in = NULL;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    raw_pt *raw = NULL;
    size_t n_raw = 0, cap_raw = 0;
    uint32_t cap_names = 0;
    csvin_row row;
    static const char *const names[3] = {"service", "time", "replicas"};
    int32_t col[3];
    st = csvin_next(in, &row, d);
    if (st == 0) {
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "empty file: expected the header service,time,replicas");
        goto out_close;
    }
    if (st < 0)
        goto out_close;
    if ((st = csvin_map_header(in, &row, names, 3, col, NULL, d)) != SIM_OK)
        goto out_close;
    for (int k = 0; k < 3; k++)
        if (col[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "missing column '%s': expected the header service,time,replicas",
                              names[k]);
            goto out_close;
        }
    uint32_t n_header = row.n;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = csvin_row_width(in, &row, n_header, d)) != SIM_OK)
            goto out_close;
        const char *name = row.f[col[0]];
        size_t len = row.len[col[0]];
        if (len == 0 || len >= SIM_ID_MAX) {
            char what[64];
            snprintf(what, sizeof what, "a service (job id) of 1..%d bytes", SIM_ID_MAX - 1);
            st = csvin_field_error(in, &row, col[0], "service", what, d);
            goto out_close;
        }
        sim_time t;
        uint64_t rep;
        if ((st = csvin_seconds(in, &row, col[1], "time", 0, SIM_TIME_LIMIT_S, &t, d)) ||
            (st = csvin_u64(in, &row, col[2], "replicas", 0, 1000000, &rep, d)))
            goto out_close;
        /* Services are few: a linear search by name. */
        uint32_t s = 0;
        while (s < out->n && strcmp(out->names[s], name) != 0)
            s++;
        if (s == out->n) {
            if (out->n == cap_names) {
                uint32_t nc = cap_names ? 2 * cap_names : 16;
                char **nn = sim_reallocarray(out->names, nc, sizeof *nn);
                if (!nn)
                    goto out_nomem;
                out->names = nn;
                cap_names = nc;
            }
            out->names[out->n] = sim_strdup(name);
            if (!out->names[out->n])
                goto out_nomem;
            out->n++;
        }
        if (n_raw == cap_raw) {
            size_t nc = cap_raw ? 2 * cap_raw : 256;
            raw_pt *nr = sim_reallocarray(raw, nc, sizeof *nr);
            if (!nr)
                goto out_nomem;
            raw = nr;
            cap_raw = nc;
        }
        /* Times of one service must increase: compare with its previous point. */
        for (size_t k = n_raw; k-- > 0;)
            if (raw[k].svc == s) {
                if (t <= raw[k].t_us) {
                    char q[64];
                    csvin_quote(row.f[col[1]], row.len[col[1]], q, sizeof q);
                    st = sim_diag_set(d, SIM_EPARSE, path, row.line, col[1] + 1,
                                      "field 'time': expected a time after %.6f s (line %ld, "
                                      "the previous point of service '%s'), got %s",
                                      (double)raw[k].t_us / 1e6, raw[k].line, name, q);
                    goto out_close;
                }
                break;
            }
        raw[n_raw++] = (raw_pt){.svc = s, .t_us = t, .replicas = (uint32_t)rep, .line = row.line};
    }
    if (st < 0)
        goto out_close;
    if (n_raw == 0) {
        /* A header alone: --demand names a file that has no curve at all. */
        st = sim_diag_set(d, SIM_EPARSE, path, 2, 0,
                          "no demand point: expected rows service,time,replicas after the "
                          "header");
        goto out_close;
    }
    st = SIM_OK;
    qsort(raw, n_raw, sizeof *raw, by_service);
    out->pts = sim_calloc(n_raw ? n_raw : 1, sizeof *out->pts);
    out->first = sim_calloc(out->n ? out->n : 1, sizeof *out->first);
    out->count = sim_calloc(out->n ? out->n : 1, sizeof *out->count);
    long *lines = sim_calloc(out->n ? out->n : 1, sizeof *lines);
    out->line = lines;
    out->path = sim_strdup(path);
    if (!out->pts || !out->first || !out->count || !lines || !out->path)
        goto out_nomem;
    for (size_t k = 0; k < n_raw; k++) {
        if (out->count[raw[k].svc] == 0) {
            out->first[raw[k].svc] = (uint32_t)k;
            lines[raw[k].svc] = raw[k].line;
        }
        out->count[raw[k].svc]++;
        out->pts[k] = (sim_curve_point){.t_us = raw[k].t_us, .replicas = raw[k].replicas};
    }
    out->n_pts = (uint32_t)n_raw;
    goto out_close;
out_nomem:
    st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
out_close:
    sim_free(raw);
    csvin_close(in);
    if (st != SIM_OK)
        trace_curves_free(out);
    return st;
}

int trace_curves_diurnal_write(FILE *f, const trace_diurnal *p, sim_diag *d)
{
    if (p->services == 0 || p->peak < p->trough || p->period_s <= 0 || !(p->step_s >= 1e-6) ||
        p->length_s < 0 || p->noise < 0)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "diurnal curves need services >= 1, trough <= peak, period > 0, "
                            "step >= 1e-6 s, length >= 0 and noise >= 0");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    gsl_rng_set(rng, (unsigned long)p->seed);
    fputs("service,time,replicas\n", f);
    for (uint32_t s = 0; s < p->services; s++) {
        double phase = gsl_rng_uniform(rng);
        /* Times are k x step (a running sum drifts), written to the microsecond the
         * reader keeps: a step of at least 1 us keeps them increasing. */
        for (uint64_t k = 0; (double)k * p->step_s <= p->length_s + 1e-9; k++) {
            double t = (double)k * p->step_s;
            double x = (1.0 - cos(2.0 * 3.14159265358979323846 * (t / p->period_s + phase))) / 2.0;
            double r = (double)p->trough + (double)(p->peak - p->trough) * x;
            if (p->noise > 0)
                r *= 1.0 + p->noise * gsl_ran_gaussian(rng, 1.0);
            long v = lround(r);
            if (v < 0)
                v = 0;
            if (v > (long)p->peak)
                v = (long)p->peak;
            long long t_us = llround(t * 1e6);
            if (t_us % 1000000 == 0)
                fprintf(f, "%s%u,%lld,%ld\n", p->prefix ? p->prefix : "svc", s, t_us / 1000000, v);
            else
                fprintf(f, "%s%u,%lld.%06lld,%ld\n", p->prefix ? p->prefix : "svc", s,
                        t_us / 1000000, t_us % 1000000, v);
        }
    }
    gsl_rng_free(rng);
    return ferror(f) ? sim_diag_set(d, SIM_EIO, NULL, 0, 0, "write error") : SIM_OK;
}
