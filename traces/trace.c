/*
 * trace.c: the reader front end. Picks the format, drives the CSV row loop, and
 * applies the checks every format shares: submit times never decrease, job ids are
 * unique (the first occurrence's line is cited), and bad rows either stop the read or,
 * with skip_bad_rows, are skipped and counted.
 *
 * Duplicate detection keeps one 64-bit hash per job id (about 16 bytes per job at the
 * table's load factor), except for ids that end in digits: those are bits in runs of 64
 * numbers (a 64-bit hash of the text before the number, the digit count and number / 64,
 * beside a 64-bit mask), so a trace numbered in order (job-0000001, job-0000002, ...)
 * costs about a bit per job (ids numbered out of order, up to about twice a hash). On a
 * match the file is scanned again for the first line with that id, so the message is
 * exact and a hash collision is not an error; with skip_bad_rows the row is skipped
 * without that scan (its message is not shown), so a duplicate costs O(1), and a row
 * whose id only collides with an earlier one (a chance of about n^2 / 2^65) is skipped
 * and counted as a duplicate too.
 *
 * Formats marked in_memory are read whole, then sorted stably by (submit time, file
 * order) with qsort on an explicit sequence number; their duplicate ids are found by
 * sorting an index by (id, line). Absolute timestamps are shifted to seconds since
 * midnight of the earliest submission's day, which keeps the time of day.
 */
#include "traces/trace_int.h"

#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const trace_format *const formats[] = {
    &trace_format_native,
    &trace_format_alibaba2023,
    &trace_format_philly,
    &trace_format_helios,
    &trace_format_alibaba2020,
    &trace_format_gavel,
    &trace_format_muri,
    &trace_format_tiresias,
    &trace_format_pollux,
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

static const trace_format *find_format(const char *name)
{
    for (int i = 0; formats[i]; i++)
        if (strcmp(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

static void option_list(const trace_format *fmt, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; fmt->options && fmt->options[i] && o + 2 < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", fmt->options[i]);
}

const char *trace_format_options(const char *format)
{
    static char buf[256];
    const trace_format *fmt = find_format(format ? format : "native");
    if (!fmt)
        return NULL;
    option_list(fmt, buf, sizeof buf);
    return buf;
}

/* Every option must be KEY=VALUE with a key the format knows. */
static int check_options(const trace_format *fmt, const trace_options *opt, sim_diag *d)
{
    if (opt->n_opts > TRACE_MAX_OPTS)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "too many --trace-opt (at most %d)",
                            TRACE_MAX_OPTS);
    for (uint32_t i = 0; i < opt->n_opts; i++) {
        const char *kv = opt->opts[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--trace-opt '%s': expected KEY=VALUE",
                                kv);
        bool known = false;
        for (int k = 0; fmt->options && fmt->options[k]; k++)
            if (strlen(fmt->options[k]) == (size_t)(eq - kv) &&
                strncmp(fmt->options[k], kv, (size_t)(eq - kv)) == 0)
                known = true;
        if (!known) {
            char list[256];
            option_list(fmt, list, sizeof list);
            if (!list[0])
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "--trace-opt '%s': the %s format has no options", kv,
                                    fmt->name);
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--trace-opt '%s': unknown key for the %s format (known: %s)", kv,
                                fmt->name, list);
        }
    }
    return SIM_OK;
}

const char *trace__opt(const trace_reader *r, const char *key)
{
    size_t klen = strlen(key);
    const char *val = NULL;
    /* The last occurrence wins, as on most command lines. */
    for (uint32_t i = 0; i < r->opt.n_opts; i++)
        if (strncmp(r->opt.opts[i], key, klen) == 0 && r->opt.opts[i][klen] == '=')
            val = r->opt.opts[i] + klen + 1;
    return val;
}

int trace_reader_open(trace_reader **out, const char *path, const trace_options *opt,
                      sim_diag *d)
{
    *out = NULL;
    const char *fname = opt->format ? opt->format : "native";
    const trace_format *fmt = find_format(fname);
    if (!fmt)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "unknown trace format '%s' (known: %s)",
                            fname, trace_format_list());
    int cst = check_options(fmt, opt, d);
    if (cst != SIM_OK)
        return cst;
    trace_reader *r = sim_calloc(1, sizeof *r);
    if (!r)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    r->fmt = fmt;
    r->opt = *opt;
    snprintf(r->path, sizeof r->path, "%s", path);
    for (int i = 0; i < TRACE_MAX_COLS; i++)
        r->col[i] = -1;
    r->id_col = r->submit_col = -1;
    int st = csvin_open(&r->in, path, fmt->delim, d);
    if (st == SIM_OK)
        st = fmt->open(r, d);
    /* Only the CSV row loop reads r->in after the header (a format with its own `next`
     * may read elsewhere), and a stream could leave the thread waiting in a read. */
    if (st == SIM_OK && opt->read_ahead && !fmt->next && !trace_path_is_stream(path))
        csvin_read_ahead(r->in);
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
    sim_free(r->runs);
    sim_free(r->held);
    sim_free(r->arena);
    sim_free(r);
}

void trace_reader_set_chunk(trace_reader *r, size_t bytes)
{
    r->chunk = bytes;
    if (r->in)
        csvin_set_chunk(r->in, bytes);
}

uint64_t trace_reader_ignored(const trace_reader *r)
{
    return r->n_ignored;
}

uint64_t trace_reader_skipped(const trace_reader *r)
{
    return r->skipped;
}

uint64_t trace_reader_rows(const trace_reader *r)
{
    return r->rows;
}

bool trace_reader_has_groups(const trace_reader *r)
{
    return r->has_groups;
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

/* An id ending in digits, split into the text before its last (at most 18) digits, their
 * count and their number: the split is one-to-one (the id is the text followed by the
 * number written in that many digits), so two ids are equal exactly when the three are.
 * *key: the run of 64 numbers it falls in, *bit: its place there. false: no digit at the
 * end. */
static bool id_numbered(const char *s, uint64_t *key, uint32_t *bit)
{
    size_t len = strlen(s), k = 0;
    while (k < len && k < 18 && s[len - 1 - k] >= '0' && s[len - 1 - k] <= '9')
        k++;
    if (!k)
        return false;
    uint64_t num = 0, h = UINT64_C(1469598103934665603);
    for (size_t i = len - k; i < len; i++)
        num = num * 10 + (uint64_t)(s[i] - '0');
    for (size_t i = 0; i < len - k; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    /* (count, run) in 59 bits (number < 10^18 < 2^60): under one text, distinct pairs
     * give distinct keys (an odd multiplier and splitmix64's finaliser are one-to-one). */
    uint64_t z = h ^ (((uint64_t)k << 54 | num >> 6) * UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    *key = z ? z : 1; /* 0 marks an empty slot */
    *bit = (uint32_t)(num & 63);
    return true;
}

/* Set bit `bit` of run `key`; returns 1 when it was clear, 0 when set, negative on
 * failure. The table is at most 3/4 full. */
static int runs_insert(trace_reader *r, uint64_t key, uint32_t bit)
{
    if ((r->runs_n + 1) * 4 > r->runs_cap * 3) {
        size_t ncap = r->runs_cap ? r->runs_cap * 2 : 256;
        trace__id_run *n = sim_calloc(ncap, sizeof *n);
        if (!n)
            return SIM_ENOMEM;
        for (size_t i = 0; i < r->runs_cap; i++) {
            if (!r->runs[i].key)
                continue;
            size_t k = r->runs[i].key & (ncap - 1);
            while (n[k].key)
                k = (k + 1) & (ncap - 1);
            n[k] = r->runs[i];
        }
        sim_free(r->runs);
        r->runs = n;
        r->runs_cap = ncap;
    }
    size_t k = key & (r->runs_cap - 1);
    while (r->runs[k].key && r->runs[k].key != key)
        k = (k + 1) & (r->runs_cap - 1);
    trace__id_run *run = &r->runs[k];
    if (!run->key) {
        run->key = key;
        r->runs_n++;
    }
    uint64_t m = UINT64_C(1) << bit;
    if (run->seen & m)
        return 0;
    run->seen |= m;
    return 1;
}

/* Record a job id; returns 1 when it is new, 0 when seen before (or its hash collides
 * with one's), negative on failure. */
static int id_insert(trace_reader *r, const char *id)
{
    uint64_t key;
    uint32_t bit;
    return id_numbered(id, &key, &bit) ? runs_insert(r, key, bit) : ids_insert(r, id_hash(id));
}

/* The id check's slot is a cache miss on a large trace: ask for it while the row is
 * converted (a guess: the format may build the id otherwise). Numbered ids in order
 * fall in a few runs that stay in the cache. */
static void id_prefetch(const trace_reader *r, const char *id)
{
    size_t len = strlen(id);
    if (r->ids_cap && (!len || id[len - 1] < '0' || id[len - 1] > '9'))
        __builtin_prefetch(&r->ids[id_hash(id) & (r->ids_cap - 1)]);
}

size_t trace_reader_id_bytes(const trace_reader *r)
{
    return r->ids_cap * sizeof *r->ids + r->runs_cap * sizeof *r->runs;
}

int trace__group_new(trace_reader *r, const char *group)
{
    /* Group ids share the id table under a different hash, so they never meet job ids
     * (up to a 64-bit collision). */
    uint64_t h = id_hash(group) ^ UINT64_C(0x9e3779b97f4a7c15);
    return ids_insert(r, h ? h : 1);
}

/* Line of the first job with this id, found by reading the file again; 0 if none
 * (a hash collision). */
bool trace_path_is_stream(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode));
}

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
        trace__job_defaults(&j);
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
        return sim_diag_set(d, SIM_EPARSE, r->path, row->line, r->submit_col + 1,
                            "job '%s': submit time %.6f s is before %.6f s of line %ld; the "
                            "trace must be sorted by submit time",
                            job->id, (double)job->submit_us / 1e6, (double)r->last_submit_us / 1e6,
                            r->last_submit_line);
    /* A caller that uses only the requests needs no id check (nor its memory). */
    int ins = r->opt.shapes_only ? 1 : id_insert(r, job->id);
    if (ins < 0)
        return sim_diag_set(d, SIM_ENOMEM, r->path, row->line, 0, "out of memory");
    if (ins == 0) {
        /* A skipped row's message is not shown: finding the first line (a second read of
         * the file) would make each duplicate cost a read of the trace. */
        if (r->opt.skip_bad_rows)
            return sim_diag_set(d, SIM_EPARSE, r->path, row->line, r->id_col + 1,
                                "duplicate job id '%s'", job->id);
        /* A stream cannot be read again to cite the first line; the 64-bit hashes of
         * two different ids collide with a chance of about n^2 / 2^65. */
        if (trace_path_is_stream(r->path))
            return sim_diag_set(d, SIM_EPARSE, r->path, row->line, r->id_col + 1,
                                "duplicate job id '%s' (seen before; a stream cannot be read "
                                "again to find its first line)",
                                job->id);
        long first = first_line_of(r, job->id, row->line);
        if (first > 0)
            return sim_diag_set(d, SIM_EPARSE, r->path, row->line, r->id_col + 1,
                                "duplicate job id '%s' (first seen on line %ld)", job->id, first);
        /* Not found again (the file changed under us, or the hashes of two ids
         * collided): still refuse, since the row cannot be told apart safely. */
        return sim_diag_set(d, SIM_EPARSE, r->path, row->line, r->id_col + 1,
                            "duplicate job id '%s' (or one whose hash collides with it; its "
                            "first line was not found on a second read)",
                            job->id);
    }
    r->have_last = true;
    r->last_submit_us = job->submit_us;
    r->last_submit_line = row->line;
    job->line = (uint64_t)row->line;
    return SIM_OK;
}

/* The next record of the file, in file order, with bad rows skipped when asked, but
 * without the order and duplicate checks. */
static int raw_next(trace_reader *r, job_spec *job, sim_diag *d)
{
    for (;;) {
        int st;
        if (r->fmt->next) {
            st = r->fmt->next(r, job, d);
            if (st == SIM_EPARSE && r->opt.skip_bad_rows && !r->fatal) {
                r->skipped++;
                continue;
            }
            return st;
        }
        csvin_row row;
        st = csvin_next(r->in, &row, d);
        if (st == 0 && r->rows == 0 && r->fmt->empty_expect)
            return sim_diag_set(d, SIM_EPARSE, r->path, 1, 0, "empty file: expected %s",
                                r->fmt->empty_expect);
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
        if (!r->opt.shapes_only && r->id_col >= 0 && (uint32_t)r->id_col < row.n)
            id_prefetch(r, row.f[r->id_col]);
        trace__job_defaults(job);
        st = csvin_row_width(r->in, &row, r->n_header, d);
        if (st == SIM_OK)
            st = r->fmt->row(r, &row, job, d);
        if (st == 1) {
            job->line = (uint64_t)row.line;
            return 1;
        }
        if (st == 0)
            continue;
        if (st == SIM_EPARSE && r->opt.skip_bad_rows) {
            r->skipped++;
            continue;
        }
        return st;
    }
}

static int arena_put(trace_reader *r, const char *s, size_t *off)
{
    size_t len = strlen(s);
    *off = SIZE_MAX;
    if (!len)
        return SIM_OK;
    if (r->arena_len + len + 1 > r->arena_cap) {
        size_t ncap = r->arena_cap ? r->arena_cap : 1 << 16;
        while (ncap < r->arena_len + len + 1)
            ncap *= 2;
        char *na = sim_reallocarray(r->arena, ncap, 1);
        if (!na)
            return SIM_ENOMEM;
        r->arena = na;
        r->arena_cap = ncap;
    }
    memcpy(r->arena + r->arena_len, s, len + 1);
    *off = r->arena_len;
    r->arena_len += len + 1;
    return SIM_OK;
}

typedef struct sort_key {
    sim_time t;
    uint64_t seq;
} sort_key;

static int cmp_key(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the held jobs by (submit time, file order): 16-byte keys are sorted, then the
 * records moved once, which is much faster than sorting the records themselves. */
static int sort_held(trace_reader *r, sim_diag *d)
{
    size_t n = r->held_n;
    sort_key *k = sim_reallocarray(NULL, n, sizeof *k);
    trace__held *out = sim_reallocarray(NULL, n, sizeof *out);
    if (!k || !out) {
        sim_free(k);
        sim_free(out);
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (sort_key){.t = r->held[i].job.submit_us, .seq = r->held[i].seq};
    qsort(k, n, sizeof *k, cmp_key);
    for (size_t i = 0; i < n; i++)
        out[i] = r->held[k[i].seq];
    sim_free(k);
    sim_free(r->held);
    r->held = out;
    r->held_cap = n;
    return SIM_OK;
}

static const trace__held *sort_base;

static int cmp_index_id(const void *a, const void *b)
{
    const trace__held *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    int c = strcmp(x->job.id, y->job.id);
    if (c)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Find duplicate ids among the held jobs: an error naming the earliest repeated line,
 * or, with skip_bad_rows, drop every repeat and count it. */
static int held_duplicates(trace_reader *r, sim_diag *d)
{
    if (r->held_n < 2)
        return SIM_OK;
    size_t *ix = sim_reallocarray(NULL, r->held_n, sizeof *ix);
    if (!ix)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    for (size_t i = 0; i < r->held_n; i++)
        ix[i] = i;
    sort_base = r->held;
    qsort(ix, r->held_n, sizeof *ix, cmp_index_id);
    const trace__held *bad = NULL, *bad_first = NULL;
    size_t group = 0;
    for (size_t i = 1; i < r->held_n; i++) {
        trace__held *h = &r->held[ix[i]];
        if (strcmp(h->job.id, r->held[ix[group]].job.id) != 0) {
            group = i;
            continue;
        }
        h->dropped = true;
        r->skipped++;
        if (!bad || h->seq < bad->seq) {
            bad = h;
            bad_first = &r->held[ix[group]];
        }
    }
    sim_free(ix);
    if (bad && !r->opt.skip_bad_rows)
        return sim_diag_set(d, SIM_EPARSE, r->path, (long)bad->job.line, r->id_col + 1,
                            "duplicate job id '%s' (first seen on line %llu)", bad->job.id,
                            (unsigned long long)bad_first->job.line);
    return SIM_OK;
}

/* After the rebase, the jobs submitted past the simulator's limit (as the native reader
 * bounds submit_time): an error citing the first such row of the file, or, with
 * skip_bad_rows, each is dropped and counted. They are the last of the sorted jobs. */
static int held_too_late(trace_reader *r, sim_diag *d)
{
    const sim_time limit = (sim_time)SIM_TIME_LIMIT_S * SIM_US_PER_S;
    size_t cut = r->held_n;
    while (cut > 0 && r->held[cut - 1].job.submit_us > limit)
        cut--;
    if (cut == r->held_n)
        return SIM_OK;
    const trace__held *bad = &r->held[cut];
    for (size_t i = cut; i < r->held_n; i++)
        if (r->held[i].seq < bad->seq)
            bad = &r->held[i];
    if (!r->opt.skip_bad_rows)
        return sim_diag_set(d, SIM_EPARSE, r->path, (long)bad->job.line, r->submit_col + 1,
                            "job '%s': submitted %.0f s after midnight of the earliest "
                            "submission's day, more than the limit of 1e+10 s",
                            bad->job.id, (double)bad->job.submit_us / 1e6);
    r->skipped += r->held_n - cut;
    r->held_n = cut;
    return SIM_OK;
}

/* Read the whole file, sort it by submit time (stable), rebase absolute times. */
static int load_all(trace_reader *r, sim_diag *d)
{
    r->loaded = true;
    job_spec j;
    int st;
    while ((st = raw_next(r, &j, d)) == 1) {
        if (r->held_n == r->held_cap) {
            size_t ncap = r->held_cap ? r->held_cap * 2 : 1024;
            trace__held *nh = sim_reallocarray(r->held, ncap, sizeof *nh);
            if (!nh)
                return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
            r->held = nh;
            r->held_cap = ncap;
        }
        trace__held *h = &r->held[r->held_n];
        h->job = j;
        h->seq = r->held_n;
        h->dropped = false;
        if (arena_put(r, j.name ? j.name : "", &h->name_off) != SIM_OK ||
            arena_put(r, j.command ? j.command : "", &h->command_off) != SIM_OK)
            return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
        r->held_n++;
    }
    if (st < 0)
        return st;
    if (r->held_n && (st = sort_held(r, d)) != SIM_OK)
        return st;
    if (r->rebase_day && r->held_n) {
        /* Seconds since the local midnight before the first submission. */
        const sim_time day = 86400 * SIM_US_PER_S;
        sim_time first = r->held[0].job.submit_us + r->tz_offset_us;
        sim_time origin = first / day * day;
        if (first < 0 && first % day)
            origin -= day;
        for (size_t i = 0; i < r->held_n; i++)
            r->held[i].job.submit_us += r->tz_offset_us - origin;
        int st_late = held_too_late(r, d);
        if (st_late != SIM_OK)
            return st_late;
    }
    return held_duplicates(r, d);
}

static int held_next(trace_reader *r, job_spec *job, sim_diag *d)
{
    if (!r->loaded) {
        int st = load_all(r, d);
        if (st != SIM_OK) {
            /* A failed read leaves nothing to yield. */
            r->held_n = 0;
            return st;
        }
    }
    while (r->held_pos < r->held_n && r->held[r->held_pos].dropped)
        r->held_pos++;
    if (r->held_pos >= r->held_n)
        return 0;
    const trace__held *h = &r->held[r->held_pos++];
    *job = h->job;
    job->name = h->name_off == SIZE_MAX ? "" : r->arena + h->name_off;
    job->command = h->command_off == SIZE_MAX ? "" : r->arena + h->command_off;
    return 1;
}

int trace_reader_next(trace_reader *r, job_spec *job, sim_diag *d)
{
    if (r->fmt->in_memory)
        return held_next(r, job, d);
    if (r->fmt->next)
        return r->fmt->next(r, job, d);
    for (;;) {
        csvin_row row;
        int st = csvin_next(r->in, &row, d);
        if (st == 0 && r->rows == 0 && r->fmt->empty_expect)
            return sim_diag_set(d, SIM_EPARSE, r->path, 1, 0, "empty file: expected %s",
                                r->fmt->empty_expect);
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
        if (!r->opt.shapes_only && r->id_col >= 0 && (uint32_t)r->id_col < row.n)
            id_prefetch(r, row.f[r->id_col]);
        trace__job_defaults(job);
        st = csvin_row_width(r->in, &row, r->n_header, d);
        if (st == SIM_OK)
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

int trace__job_id(trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                  job_spec *job, sim_diag *d)
{
    r->id_col = col;
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

static bool has_column(const csvin_row *row, const char *name)
{
    for (uint32_t c = 0; c < row->n; c++)
        if (row->len[c] == strlen(name) && memcmp(row->f[c], name, row->len[c]) == 0)
            return true;
    return false;
}

/* When a native-format header fails, the published format its columns suggest. */
static const char *format_hint(const trace_reader *r, const csvin_row *hdr)
{
    static const struct {
        const char *col_a, *col_b, *hint;
    } sig[] = {
        {"creation_time", "gpu_milli", " (this header looks like --format alibaba2023)"},
        {"gpu_num", "vc", " (this header looks like --format helios)"},
        {"timestamp", "gpu_time", " (this header looks like --format philly)"},
        {"num_gpu", "resource_time_0", " (this header looks like --format muri)"},
        {"num_gpu", "interval", " (this header looks like --format tiresias)"},
    };
    if (r->fmt != &trace_format_native)
        return "";
    for (size_t k = 0; k < sizeof sig / sizeof sig[0]; k++)
        if (has_column(hdr, sig[k].col_a) && has_column(hdr, sig[k].col_b))
            return sig[k].hint;
    return "";
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
    r->header_line = row.line;
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
                                "header lacks column '%s'; expected a header with at least "
                                "%s%s",
                                names[i], expected, format_hint(r, &row));
    return SIM_OK;
}


bool trace_parse_timestamp(const char *s, size_t len, int64_t *out_s)
{
    while (len && *s == ' ') {
        s++;
        len--;
    }
    while (len && s[len - 1] == ' ')
        len--;
    /* Exactly "YYYY-MM-DD HH:MM:SS". */
    static const char shape[] = "dddd-dd-dd dd:dd:dd";
    if (len != sizeof shape - 1)
        return false;
    int v[6] = {0};
    int k = 0;
    for (size_t i = 0; i < len; i++) {
        if (shape[i] == 'd') {
            if (s[i] < '0' || s[i] > '9')
                return false;
            v[k] = v[k] * 10 + (s[i] - '0');
        } else {
            if (s[i] != shape[i])
                return false;
            k++;
        }
    }
    int y = v[0], m = v[1], dd = v[2];
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || dd < 1 || dd > mdays[m - 1] || v[3] > 23 || v[4] > 59 || v[5] > 60)
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && dd == 29 && !leap)
        return false;
    /* Days from civil (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"). */
    int yy = m <= 2 ? y - 1 : y;
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + dd - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    *out_s = days * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
    return true;
}

int trace__timestamp(trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                     sim_time *out_us, sim_diag *d)
{
    int64_t s;
    if (col < 0 || (uint32_t)col >= row->n ||
        !trace_parse_timestamp(row->f[col], row->len[col], &s))
        return csvin_field_error(r->in, row, col, name,
                                 "a time like 2017-10-09 07:01:55 (YYYY-MM-DD HH:MM:SS)", d);
    r->rebase_day = true;
    *out_us = (sim_time)s * SIM_US_PER_S;
    return SIM_OK;
}
