/*
 * trace.c: the reader front end. Picks the format, drives the CSV row loop, and
 * applies the checks every format shares: submit times never decrease, job ids are
 * unique (the first occurrence's line is cited), and bad rows either stop the read or,
 * with skip_bad_rows, are skipped and counted.
 *
 * Duplicate detection keeps one 64-bit hash per job id (about 16 bytes per job at the
 * table's load factor); on a hash match the file is scanned again for the first line
 * with that id, so the message is exact and a hash collision is not an error.
 */
#include "traces/trace_int.h"

#include "sim/alloc.h"

#include <stdio.h>
#include <string.h>

static const trace_format *const formats[] = {
    &trace_format_native,
    &trace_format_alibaba2023,
    NULL,
};

const char *trace_format_list(void)
{
    static char buf[256];
    size_t o = 0;
    for (int i = 0; formats[i] && o + 40 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? ", " : "", formats[i]->name);
    return buf;
}

int trace_reader_open(trace_reader **out, const char *path, const trace_options *opt,
                      sim_diag *d)
{
    *out = NULL;
    const char *fname = opt->format ? opt->format : "native";
    const trace_format *fmt = NULL;
    for (int i = 0; formats[i]; i++)
        if (strcmp(formats[i]->name, fname) == 0)
            fmt = formats[i];
    if (!fmt)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "unknown trace format '%s' (known: %s)",
                            fname, trace_format_list());
    trace_reader *r = sim_calloc(1, sizeof *r);
    if (!r)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    r->fmt = fmt;
    r->opt = *opt;
    snprintf(r->path, sizeof r->path, "%s", path);
    for (int i = 0; i < TRACE_MAX_COLS; i++)
        r->col[i] = -1;
    int st = csvin_open(&r->in, path, fmt->delim, d);
    if (st == SIM_OK)
        st = fmt->open(r, d);
    if (st != SIM_OK) {
        trace_reader_close(r);
        return st;
    }
    *out = r;
    return SIM_OK;
}

void trace_reader_close(trace_reader *r)
{
    if (!r)
        return;
    if (r->fmt && r->fmt->close)
        r->fmt->close(r);
    csvin_close(r->in);
    sim_free(r->ids);
    sim_free(r);
}

uint64_t trace_reader_skipped(const trace_reader *r)
{
    return r->skipped;
}

uint64_t trace_reader_rows(const trace_reader *r)
{
    return r->rows;
}

void trace_reader_set_chunk(trace_reader *r, size_t bytes)
{
    if (r->in)
        csvin_set_chunk(r->in, bytes);
}

const char *trace_reader_ignored_columns(const trace_reader *r)
{
    return r->ignored;
}

static uint64_t id_hash(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    /* 0 marks an empty slot. */
    return h ? h : 1;
}

/* Insert h; returns 1 when it was new, 0 when present, negative on failure. */
static int ids_insert(trace_reader *r, uint64_t h)
{
    if ((r->ids_n + 1) * 2 > r->ids_cap) {
        size_t ncap = r->ids_cap ? r->ids_cap * 2 : 4096;
        uint64_t *n = sim_calloc(ncap, sizeof *n);
        if (!n)
            return SIM_ENOMEM;
        for (size_t i = 0; i < r->ids_cap; i++) {
            if (!r->ids[i])
                continue;
            size_t k = r->ids[i] & (ncap - 1);
            while (n[k])
                k = (k + 1) & (ncap - 1);
            n[k] = r->ids[i];
        }
        sim_free(r->ids);
        r->ids = n;
        r->ids_cap = ncap;
    }
    size_t k = h & (r->ids_cap - 1);
    while (r->ids[k]) {
        if (r->ids[k] == h)
            return 0;
        k = (k + 1) & (r->ids_cap - 1);
    }
    r->ids[k] = h;
    r->ids_n++;
    return 1;
}

/* Line of the first job with this id, found by reading the file again; 0 if none
 * (a hash collision). */
static long first_line_of(const trace_reader *r, const char *id, long before)
{
    trace_options o = r->opt;
    o.skip_bad_rows = true;
    trace_reader *again;
    sim_diag d;
    if (trace_reader_open(&again, r->path, &o, &d) != SIM_OK)
        return 0;
    long line = 0;
    job_spec j;
    csvin_row row;
    while (csvin_next(again->in, &row, &d) == 1 && row.line < before) {
        if (again->fmt->row(again, &row, &j, &d) == 1 && strcmp(j.id, id) == 0) {
            line = row.line;
            break;
        }
    }
    trace_reader_close(again);
    return line;
}

static int common_checks(trace_reader *r, const csvin_row *row, job_spec *job, sim_diag *d)
{
    if (r->have_last && job->submit_us < r->last_submit_us && !r->opt.shapes_only)
        return sim_diag_set(d, SIM_EPARSE, r->path, row->line, 0,
                            "job '%s': submit time %.6f s is before %.6f s of line %ld; the "
                            "trace must be sorted by submit time",
                            job->id, (double)job->submit_us / 1e6,
                            (double)r->last_submit_us / 1e6, r->last_submit_line);
    int ins = ids_insert(r, id_hash(job->id));
    if (ins < 0)
        return sim_diag_set(d, SIM_ENOMEM, r->path, row->line, 0, "out of memory");
    if (ins == 0) {
        long first = first_line_of(r, job->id, row->line);
        if (first > 0)
            return sim_diag_set(d, SIM_EPARSE, r->path, row->line, 0,
                                "duplicate job id '%s' (first seen on line %ld)", job->id, first);
    }
    r->have_last = true;
    r->last_submit_us = job->submit_us;
    r->last_submit_line = row->line;
    job->line = (uint64_t)row->line;
    return SIM_OK;
}

int trace_reader_next(trace_reader *r, job_spec *job, sim_diag *d)
{
    if (r->fmt->next)
        return r->fmt->next(r, job, d);
    for (;;) {
        csvin_row row;
        int st = csvin_next(r->in, &row, d);
        if (st <= 0) {
            /* A malformed CSV row (quotes, NUL, UTF-8) can be skipped too; I/O cannot. */
            if (st == SIM_EPARSE && r->opt.skip_bad_rows) {
                r->rows++;
                r->skipped++;
                continue;
            }
            return st;
        }
        r->rows++;
        trace__job_defaults(job);
        st = r->fmt->row(r, &row, job, d);
        if (st == 1)
            st = common_checks(r, &row, job, d);
        else if (st == 0)
            continue;
        if (st == SIM_OK || st == 1)
            return 1;
        if (st == SIM_EPARSE && r->opt.skip_bad_rows) {
            r->skipped++;
            continue;
        }
        return st;
    }
}

void trace__job_defaults(job_spec *job)
{
    memset(job, 0, sizeof *job);
    job->ref_gpu_type = SIM_GPU_TYPE_NONE;
    job->name = "";
    job->command = "";
}

int trace__job_id(const trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                  job_spec *job, sim_diag *d)
{
    if (csvin_empty(row, col) || row->len[col] >= SIM_ID_MAX)
        return csvin_field_error(r->in, row, col, name, "a job id of 1..63 bytes", d);
    memcpy(job->id, row->f[col], row->len[col]);
    job->id[row->len[col]] = '\0';
    return SIM_OK;
}

int trace__intern(const trace_reader *r, sim_intern *t, const csvin_row *row, int32_t col,
                  uint32_t *out, sim_diag *d)
{
    *out = 0;
    if (csvin_empty(row, col))
        return SIM_OK;
    uint32_t id = sim_intern_add(t, row->f[col], row->len[col], 0);
    if (id == SIM_INTERN_NONE)
        return sim_diag_set(d, SIM_ENOMEM, r->path, row->line, col + 1, "out of memory");
    *out = id;
    return SIM_OK;
}

int trace__gpu_mask(const trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                    uint64_t *mask, sim_diag *d)
{
    *mask = 0;
    if (csvin_empty(row, col))
        return SIM_OK;
    const char *s = row->f[col];
    size_t len = row->len[col];
    if ((len == 3 && strncmp(s, "nan", 3) == 0) || (len == 1 && *s == '*'))
        return SIM_OK;
    size_t i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && s[j] != '|')
            j++;
        const char *p = s + i;
        size_t plen = j - i;
        while (plen && *p == ' ')
            p++, plen--;
        while (plen && p[plen - 1] == ' ')
            plen--;
        uint32_t t = plen ? sim_intern_find(r->opt.gpu_types, p, plen) : SIM_INTERN_NONE;
        if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
            char known[600];
            sim_intern_list(r->opt.gpu_types, ", ", known, sizeof known);
            char what[700];
            snprintf(what, sizeof what, "GPU types separated by '|' (known: %s)", known);
            return csvin_field_error(r->in, row, col, name, what, d);
        }
        *mask |= UINT64_C(1) << t;
        i = j + 1;
    }
    return SIM_OK;
}

int trace__map_header(trace_reader *r, const char *const *names, const bool *required, size_t n,
                      const char *expected, sim_diag *d)
{
    csvin_row row;
    int st = csvin_next(r->in, &row, d);
    if (st == 0)
        return sim_diag_set(d, SIM_EPARSE, r->path, 1, 0, "empty file: expected the header %s",
                            expected);
    if (st < 0)
        return st;
    r->n_header = row.n;
    if ((st = csvin_map_header(r->in, &row, names, n, r->col, r->unknown, d)) != SIM_OK)
        return st;
    size_t o = 0;
    for (uint32_t c = 0; c < row.n && c < CSVIN_MAX_FIELDS; c++)
        if (r->unknown[c] && o + row.len[c] + 3 < sizeof r->ignored)
            o += (size_t)snprintf(r->ignored + o, sizeof r->ignored - o, "%s%s", o ? ", " : "",
                                  row.f[c]);
    for (size_t i = 0; i < n; i++)
        if (required[i] && r->col[i] < 0)
            return sim_diag_set(d, SIM_EPARSE, r->path, row.line, 0,
                                "header lacks column '%s'; expected a header with at least %s",
                                names[i], expected);
    return SIM_OK;
}
