/*
 * csvin.c: sim_gzin_read -> per-line csv_parse -> one reusable row buffer; a line that
 * is whole in the buffer and has nothing libcsv would treat specially (quotes, spaces at
 * a field's ends, control or non-ASCII bytes) is split at its delimiters directly.
 *
 * Invariant: each call to csv_parse receives at most one row terminator, at the end of
 * its piece, so at most one row completes per piece and the physical line where the
 * current row began is known: it is recorded before each piece whenever libcsv's state
 * says no row has begun (pstate 0, ROW_NOT_BEGUN in libcsv.c). After a malformed row
 * the rest of its line is dropped and libcsv restarted, so a caller that skips bad rows
 * always makes progress.
 */
#include "base/csvin.h"

#include "base/alloc.h"
#include "base/gzin.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK (64u * 1024u)

struct csvin {
    char path[512];
    sim_gzin *gz;
    struct csv_parser p;
    unsigned char *chunk; /* CHUNK bytes */
    size_t chunk_size;    /* bytes requested per read */
    size_t pos, end;      /* unread part of chunk */
    bool eof, finished;
    uint32_t bom; /* bytes of a leading UTF-8 byte-order mark skipped so far (3 = done) */
    bool resync;  /* after a malformed row: drop the rest of its line, restart libcsv */
    char delim;
    unsigned char cls[256]; /* fast path: 0 plain, 1 delimiter, 2 line feed, 3 other,
                             * 4 a space (kept inside a field, trimmed at its ends) */
    long cur_line;          /* physical line of the next unread byte */
    bool after_cr;          /* the last byte taken was a CR: a LF next ends no new line */
    long row_line;          /* line where the current row began */
    /* The row being built. */
    char *buf;
    size_t buf_len, buf_cap;
    uint32_t *off, *lens;
    const char **ptrs;
    uint32_t nf, nf_cap;
    bool row_done;
    /* First error seen inside a callback. */
    int err;
    int err_col;
    char err_msg[160];
};

static void *csv_realloc_hook(void *p, size_t n)
{
    return sim_reallocarray(p, n, 1);
}

static int tab_is_space(unsigned char c)
{
    return c == ' ';
}

static void setup_parser(csvin *r)
{
    csv_set_realloc_func(&r->p, csv_realloc_hook);
    csv_set_free_func(&r->p, sim_free);
    csv_set_delim(&r->p, (unsigned char)r->delim);
    /* libcsv's built-in tests (space or tab; CR or LF) are inlined; a function is set
     * only where they are wrong: a tab delimiter is not a space. */
    if (r->delim == '\t')
        csv_set_space_func(&r->p, tab_is_space);
}

int csvin_open(csvin **out, const char *path, char delim, sim_diag *d)
{
    *out = NULL;
    csvin *r = sim_calloc(1, sizeof *r);
    if (!r)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    snprintf(r->path, sizeof r->path, "%s", path);
    r->chunk = sim_malloc(CHUNK);
    r->buf_cap = 1024;
    r->buf = sim_malloc(r->buf_cap);
    r->nf_cap = 64;
    r->off = sim_reallocarray(NULL, r->nf_cap, sizeof *r->off);
    r->lens = sim_reallocarray(NULL, r->nf_cap, sizeof *r->lens);
    r->ptrs = sim_reallocarray(NULL, r->nf_cap, sizeof *r->ptrs);
    if (!r->chunk || !r->buf || !r->off || !r->lens || !r->ptrs) {
        csvin_close(r);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    if (csv_init(&r->p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        csvin_close(r);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    r->delim = delim;
    setup_parser(r);
    for (unsigned c = 0; c < 256; c++)
        r->cls[c] = c >= 0x80 || c < 0x20 || c == '"' || c == 0x7f ? 3 : 0;
    r->cls[' '] = 4;
    if (delim != '\t')
        r->cls['\t'] = 4;
    r->cls[(unsigned char)delim] = 1;
    r->cls['\n'] = 2;
    r->chunk_size = CHUNK;
    r->cur_line = 1;
    r->row_line = 1;
    int st = sim_gzin_open(&r->gz, path, d);
    if (st != SIM_OK) {
        csvin_close(r);
        return st;
    }
    *out = r;
    return SIM_OK;
}

void csvin_close(csvin *r)
{
    if (!r)
        return;
    sim_gzin_close(r->gz);
    if (r->p.entry_buf || r->p.free_func)
        csv_free(&r->p);
    sim_free(r->chunk);
    sim_free(r->buf);
    sim_free(r->off);
    sim_free(r->lens);
    sim_free(r->ptrs);
    sim_free(r);
}

const char *csvin_path(const csvin *r)
{
    return r->path;
}

bool csvin_is_gzip(const csvin *r)
{
    return r->gz && sim_gzin_is_gzip(r->gz);
}

bool csvin_read_ahead(csvin *r)
{
    return sim_gzin_ahead(r->gz);
}

void csvin_set_chunk(csvin *r, size_t bytes)
{
    if (bytes < 1)
        bytes = 1;
    if (bytes > CHUNK)
        bytes = CHUNK;
    r->chunk_size = bytes;
}

/* Length of the valid UTF-8 prefix of s[0..len). */
static size_t utf8_valid_prefix(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (i + n >= len)
            return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* Reject overlong forms, surrogates and code points above U+10FFFF. */
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n + 1;
    }
    return len;
}

static void set_cb_error(csvin *r, int col, const char *msg)
{
    if (r->err)
        return;
    r->err = SIM_EPARSE;
    r->err_col = col;
    snprintf(r->err_msg, sizeof r->err_msg, "%s", msg);
}

static void on_field(void *data, size_t len, void *ctx)
{
    csvin *r = ctx;
    if (r->err)
        return;
    int col = (int)r->nf + 1;
    if (r->nf >= CSVIN_MAX_FIELDS) {
        set_cb_error(r, col, "too many fields in the row (limit 4096)");
        return;
    }
    if (len > CSVIN_MAX_FIELD) {
        set_cb_error(r, col, "field longer than 65536 bytes");
        return;
    }
    if (r->buf_len + len + 1 > CSVIN_MAX_ROW) {
        set_cb_error(r, col, "row longer than 262144 bytes");
        return;
    }
    const unsigned char *s = data ? data : (const unsigned char *)"";
    /* Most fields are plain ASCII without NUL: one pass decides. */
    unsigned char any_high = 0, any_nul = 0;
    for (size_t i = 0; i < len; i++) {
        any_high |= s[i] & 0x80;
        any_nul |= s[i] == 0;
    }
    if (any_nul) {
        set_cb_error(r, col, "NUL byte in field");
        return;
    }
    size_t ok = any_high ? utf8_valid_prefix(s, len) : len;
    if (ok != len) {
        char m[96];
        snprintf(m, sizeof m, "invalid UTF-8 at byte %zu of the field", ok + 1);
        set_cb_error(r, col, m);
        return;
    }
    if (r->nf == r->nf_cap) {
        uint32_t ncap = r->nf_cap * 2;
        uint32_t *no = sim_reallocarray(r->off, ncap, sizeof *no);
        if (no)
            r->off = no;
        uint32_t *nl = sim_reallocarray(r->lens, ncap, sizeof *nl);
        if (nl)
            r->lens = nl;
        const char **np = sim_reallocarray(r->ptrs, ncap, sizeof *np);
        if (np)
            r->ptrs = np;
        if (!no || !nl || !np) {
            r->err = SIM_ENOMEM;
            return;
        }
        r->nf_cap = ncap;
    }
    if (r->buf_len + len + 1 > r->buf_cap) {
        size_t ncap = r->buf_cap;
        while (ncap < r->buf_len + len + 1)
            ncap *= 2;
        char *nb = sim_reallocarray(r->buf, ncap, 1);
        if (!nb) {
            r->err = SIM_ENOMEM;
            return;
        }
        r->buf = nb;
        r->buf_cap = ncap;
    }
    memcpy(r->buf + r->buf_len, s, len);
    r->buf[r->buf_len + len] = '\0';
    r->off[r->nf] = (uint32_t)r->buf_len;
    r->lens[r->nf] = (uint32_t)len;
    r->nf++;
    r->buf_len += len + 1;
}

static void on_row(int term, void *ctx)
{
    (void)term;
    csvin *r = ctx;
    r->row_done = true;
}

static int parse_error(csvin *r, sim_diag *d);

static int fill(csvin *r, sim_diag *d)
{
    long n = sim_gzin_read(r->gz, r->chunk, r->chunk_size, d);
    if (n < 0)
        return (int)n;
    if (n == 0)
        r->eof = true;
    r->pos = 0;
    r->end = (size_t)n;
    /* Skip a byte-order mark at the start of the stream, even when it straddles reads. */
    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    while (r->bom < 3 && r->pos < r->end) {
        if (r->chunk[r->pos] != bom[r->bom]) {
            /* Not a mark: give back the bytes taken for one (they were a prefix). */
            if (r->bom && csv_parse(&r->p, bom, r->bom, on_field, on_row, r) != r->bom)
                return parse_error(r, d);
            r->bom = 3;
            break;
        }
        r->pos++;
        r->bom++;
    }
    return SIM_OK;
}

static void reset_row(csvin *r)
{
    r->nf = 0;
    r->buf_len = 0;
    r->row_done = false;
}

static int callback_error(csvin *r, sim_diag *d)
{
    int e = r->err;
    /* A row that is still open (a quoted field running over lines) is abandoned. */
    if (!r->row_done && r->p.pstate != 0)
        r->resync = true;
    if (e == SIM_ENOMEM)
        return sim_diag_set(d, SIM_ENOMEM, r->path, r->row_line, 0, "out of memory");
    return sim_diag_set(d, e, r->path, r->row_line, r->err_col, "%s", r->err_msg);
}

static int parse_error(csvin *r, sim_diag *d)
{
    int e = csv_error(&r->p);
    r->resync = true;
    if (e == CSV_ENOMEM || e == CSV_ETOOBIG)
        return sim_diag_set(d, SIM_ENOMEM, r->path, r->row_line, 0, "out of memory");
    return sim_diag_set(d, SIM_EPARSE, r->path, r->row_line, (int)r->nf + 1,
                        "malformed CSV: a quote inside an unquoted field, or text after a "
                        "closing quote");
}

static void finish_row(csvin *r, csvin_row *row)
{
    for (uint32_t i = 0; i < r->nf; i++)
        r->ptrs[i] = r->buf + r->off[i];
    row->n = r->nf;
    row->f = r->ptrs;
    row->len = r->lens;
    row->line = r->row_line;
}

/* The field from *start ends at the delimiter at `at` of line b: it becomes field *nf
 * (NUL-terminated in place). false when the row has too many fields or the field is too
 * long for the fast path. */
static inline bool cut_field(csvin *r, unsigned char *b, uint32_t at, uint32_t *start, uint32_t *nf)
{
    if (*nf == r->nf_cap || at - *start > CSVIN_MAX_FIELD)
        return false;
    b[at] = '\0';
    r->off[*nf] = *start;
    r->lens[*nf] = at - *start;
    (*nf)++;
    *start = at + 1;
    return true;
}

/* The fast path for the common line: complete in the chunk, not empty, free of quotes,
 * control and non-ASCII bytes (what needs checking), with no space at either end of a
 * field (what libcsv trims). Its fields are the pieces between delimiters, exactly as
 * libcsv would give them. Returns false, having consumed nothing, for any other line
 * (or one near a limit), which then goes through libcsv. */
static bool fast_row(csvin *r, csvin_row *row)
{
    const unsigned char *s = r->chunk + r->pos;
    size_t avail = r->end - r->pos;
    const unsigned char *nl = memchr(s, '\n', avail);
    if (!nl || nl == s)
        return false;
    size_t len = (size_t)(nl - s);
    if (len + 1 > CSVIN_MAX_ROW)
        return false;
    if (len + 1 > r->buf_cap) {
        size_t ncap = r->buf_cap;
        while (ncap < len + 1)
            ncap *= 2;
        char *nb = sim_reallocarray(r->buf, ncap, 1);
        if (!nb)
            return false; /* libcsv's path reports it */
        r->buf = nb;
        r->buf_cap = ncap;
    }
    unsigned char *b = (unsigned char *)r->buf;
    memcpy(b, s, len);
    b[len] = '\0';
    uint32_t nf = 0, start = 0, i = 0;
#if defined(__SSE2__)
    /* Sixteen bytes at a time while they last: the same tests as the loop below, as bit
     * masks (a byte's bit is set where the test holds). */
    const __m128i delim = _mm_set1_epi8((char)r->delim), quote = _mm_set1_epi8('"'),
                  del = _mm_set1_epi8(0x7f), ctl = _mm_set1_epi8(0x20), space = _mm_set1_epi8(' '),
                  tab = _mm_set1_epi8(r->delim == '\t' ? ' ' : '\t');
    for (; i + 16 <= len; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        uint32_t dm = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, delim));
        /* Spaces (and tabs, unless they delimit), then the bytes that need libcsv: bytes
         * >= 0x80 are negative to the signed compare, so below 0x20 too. */
        uint32_t sp = (uint32_t)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(x, tab)));
        __m128i other = _mm_or_si128(
            _mm_cmplt_epi8(x, ctl), _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, del)));
        if ((uint32_t)_mm_movemask_epi8(other) & ~dm & ~sp)
            return false;
        if (sp) {
            /* A space may not begin or end a field (libcsv trims it). */
            uint32_t first = dm << 1 | (uint32_t)(start == i);
            uint32_t last = dm >> 1 | (uint32_t)(i + 16 == len || b[i + 16] == r->delim) << 15;
            if (sp & (first | last))
                return false;
        }
        for (; dm; dm &= dm - 1)
            if (!cut_field(r, b, i + (uint32_t)__builtin_ctz(dm), &start, &nf))
                return false;
    }
#endif
    for (; i <= len; i++) {
        unsigned char k = i < len ? r->cls[b[i]] : 1;
        if (k == 0)
            continue;
        if (k == 4) {
            if (i == start || i + 1 == len || r->cls[b[i + 1]] == 1)
                return false;
            continue;
        }
        if (k != 1 || !cut_field(r, b, i, &start, &nf))
            return false;
    }
    r->nf = nf;
    r->buf_len = len + 1;
    r->row_line = r->cur_line++;
    r->after_cr = false;
    r->pos += len + 1;
    finish_row(r, row);
    return true;
}

/* Drop the input up to and including the next line break and restart libcsv, so a
 * caller that skips a malformed row goes on with the next line. */
static int resync(csvin *r, sim_diag *d)
{
    r->resync = false;
    for (;;) {
        if (r->pos == r->end) {
            if (r->eof)
                break;
            int st = fill(r, d);
            if (st != SIM_OK)
                return st;
            continue;
        }
        unsigned char c = r->chunk[r->pos++];
        bool lf_of_crlf = c == '\n' && r->after_cr;
        r->after_cr = c == '\r';
        if (lf_of_crlf)
            continue; /* the end of a line already counted */
        if (c == '\n' || c == '\r') {
            r->cur_line++;
            break;
        }
    }
    csv_free(&r->p);
    if (csv_init(&r->p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return sim_diag_set(d, SIM_ENOMEM, r->path, r->cur_line, 0, "out of memory");
    setup_parser(r);
    r->row_line = r->cur_line;
    return SIM_OK;
}

int csvin_next(csvin *r, csvin_row *row, sim_diag *d)
{
    if (r->finished)
        return 0;
    if (r->resync) {
        int st = resync(r, d);
        if (st != SIM_OK)
            return st;
    }
    reset_row(r);
    r->err = 0;
    for (;;) {
        if (r->pos == r->end) {
            if (r->eof) {
                /* The end is final, whether or not the last row is well formed. */
                r->finished = true;
                if (csv_fini(&r->p, on_field, on_row, r) != 0)
                    return sim_diag_set(d, SIM_EPARSE, r->path, r->row_line, (int)r->nf + 1,
                                        "unterminated quoted field at the end of the file");
                if (r->err)
                    return callback_error(r, d);
                if (r->row_done && r->nf > 0) {
                    finish_row(r, row);
                    return 1;
                }
                return 0;
            }
            int st = fill(r, d);
            if (st != SIM_OK)
                return st;
            continue;
        }
        if (r->p.pstate == 0 && fast_row(r, row))
            return 1;
        const unsigned char *s = r->chunk + r->pos;
        size_t avail = r->end - r->pos;
        size_t n = 0;
        while (n < avail && s[n] != '\n' && s[n] != '\r')
            n++;
        if (n < avail)
            n++; /* include the terminator */
        if (r->p.pstate == 0)
            r->row_line = r->cur_line;
        size_t used = csv_parse(&r->p, s, n, on_field, on_row, r);
        r->pos += used;
        if (used != n) {
            if (used)
                r->after_cr = false; /* the piece's last byte, its terminator, is not taken */
            /* A field completed before the malformed spot may be bad itself: its
             * error comes first in the line, whatever the size of the pieces read. */
            if (r->err) {
                r->resync = true;
                return callback_error(r, d);
            }
            return parse_error(r, d);
        }
        /* libcsv ends a row at a CR, a LF or both: a line ends at a CR, and at a LF
         * unless it follows a CR (a CRLF line end, its LF alone in its piece). */
        if (s[n - 1] == '\r' || (s[n - 1] == '\n' && !(n == 1 && r->after_cr)))
            r->cur_line++;
        r->after_cr = s[n - 1] == '\r';
        if (r->err)
            return callback_error(r, d);
        if (r->p.entry_pos > CSVIN_MAX_FIELD) {
            r->resync = true;
            r->err_col = (int)r->nf + 1;
            return sim_diag_set(d, SIM_EPARSE, r->path, r->row_line, r->err_col,
                                "field longer than 65536 bytes");
        }
        if (r->row_done) {
            finish_row(r, row);
            return 1;
        }
    }
}

int csvin_peek(csvin *r, int *c, sim_diag *d)
{
    for (;;) {
        for (size_t i = r->pos; i < r->end; i++) {
            unsigned char b = r->chunk[i];
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                *c = b;
                return SIM_OK;
            }
        }
        if (r->eof) {
            *c = -1;
            return SIM_OK;
        }
        /* A buffer of white space alone: pass it, counting its lines as csvin_next
         * would (blank lines are no rows). */
        for (; r->pos < r->end; r->pos++) {
            unsigned char b = r->chunk[r->pos];
            if (b == '\r' || (b == '\n' && !r->after_cr))
                r->cur_line++;
            r->after_cr = b == '\r';
        }
        int st = fill(r, d);
        if (st != SIM_OK)
            return st;
    }
}

long csvin_read_raw(csvin *r, void *buf, size_t n, sim_diag *d)
{
    if (r->pos < r->end) {
        size_t k = r->end - r->pos < n ? r->end - r->pos : n;
        memcpy(buf, r->chunk + r->pos, k);
        r->pos += k;
        return (long)k;
    }
    if (r->eof)
        return 0;
    return sim_gzin_read(r->gz, buf, n, d);
}

long csvin_line(const csvin *r)
{
    return r->cur_line;
}

static bool name_eq(const char *a, size_t alen, const char *b)
{
    while (alen && (*a == ' ' || *a == '\t')) {
        a++;
        alen--;
    }
    while (alen && (a[alen - 1] == ' ' || a[alen - 1] == '\t'))
        alen--;
    return strlen(b) == alen && strncasecmp(a, b, alen) == 0;
}

int csvin_map_header(const csvin *r, const csvin_row *hdr, const char *const *names, size_t n,
                     int32_t *idx, bool *unknown, sim_diag *d)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = -1;
    for (uint32_t c = 0; c < hdr->n; c++) {
        bool matched = false;
        for (size_t i = 0; i < n; i++) {
            if (!name_eq(hdr->f[c], hdr->len[c], names[i]))
                continue;
            if (idx[i] >= 0)
                return sim_diag_set(d, SIM_EPARSE, r->path, hdr->line, (int)c + 1,
                                    "column '%s' appears twice (first in column %d)", names[i],
                                    idx[i] + 1);
            idx[i] = (int32_t)c;
            matched = true;
        }
        if (unknown && c < CSVIN_MAX_FIELDS)
            unknown[c] = !matched;
    }
    return SIM_OK;
}

void csvin_quote(const char *s, size_t len, char *buf, size_t size)
{
    size_t o = 0;
    bool cut = len > 40;
    if (cut)
        len = 40;
    if (size < 8) {
        if (size)
            buf[0] = '\0';
        return;
    }
    buf[o++] = '"';
    for (size_t i = 0; i < len && o + 6 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7F) {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02X", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (cut && o + 5 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

int csvin_row_width(const csvin *r, const csvin_row *row, uint32_t n_header, sim_diag *d)
{
    if (!n_header || row->n == n_header)
        return SIM_OK;
    /* The column is the first field missing, or the first one too many. */
    uint32_t col = (row->n < n_header ? row->n : n_header) + 1;
    return sim_diag_set(d, SIM_EPARSE, csvin_path(r), row->line, (int)col,
                        "expected %u fields, as in the header, got %u", n_header, row->n);
}

int csvin_field_error(const csvin *r, const csvin_row *row, int32_t col, const char *name,
                      const char *what, sim_diag *d)
{
    char q[200];
    if (col < 0 || (uint32_t)col >= row->n)
        return sim_diag_set(d, SIM_EPARSE, r->path, row->line, col >= 0 ? col + 1 : 0,
                            "field '%s': expected %s, got nothing (the row has %u fields)", name,
                            what, row->n);
    const char *f = row->f[col];
    size_t len = row->len[col];
    csvin_quote(f, len, q, sizeof q);
    bool spaced = len && (f[0] == ' ' || f[0] == '\t' || f[len - 1] == ' ' || f[len - 1] == '\t');
    trim(&f, &len);
    double x;
    spaced = spaced && csvin_parse_double(f, len, &x);
    return sim_diag_set(d, SIM_EPARSE, r->path, row->line, col + 1,
                        "field '%s': expected %s, got %s%s", name, what, q,
                        spaced ? " (a number with spaces around it)" : "");
}

bool csvin_empty(const csvin_row *row, int32_t col)
{
    if (col < 0 || (uint32_t)col >= row->n)
        return true;
    const char *s = row->f[col];
    size_t len = row->len[col];
    trim(&s, &len);
    return len == 0;
}

bool csvin_parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len && *s == '+') {
        s++;
        len--;
    }
    if (!len)
        return false;
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - dgt) / 10)
            return false;
        v = v * 10 + dgt;
    }
    if (i == 0)
        return false;
    /* Accept a zero fraction ("8.0"), which some traces write for integers. */
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] == '0')
            i++;
    }
    if (i != len)
        return false;
    *out = v;
    return true;
}

bool csvin_parse_i64(const char *s, size_t len, int64_t *out)
{
    bool neg = len && *s == '-';
    if (neg) {
        s++;
        len--;
    }
    uint64_t u;
    if (!csvin_parse_u64(s, len, &u))
        return false;
    if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return true;
}

/* Plain decimals ("123", "-4.25") of at most 15 significant digits: the digits form an
 * integer m < 2^53 and the value is m / 10^k with 10^k exact, so one IEEE division gives
 * the correctly rounded result, as strtod would (Clinger's fast path). */
static bool parse_plain_decimal(const char *s, size_t len, double *out)
{
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    uint64_t m = 0;
    int sig = 0, k = 0;
    bool dot = false, any = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (dot)
                return false;
            dot = true;
            continue;
        }
        if (c < '0' || c > '9')
            return false;
        any = true;
        if (dot)
            k++;
        if (m == 0 && c == '0')
            continue; /* leading zeros are not significant */
        if (++sig > 15)
            return false;
        m = m * 10 + (uint64_t)(c - '0');
    }
    if (!any || k > 15)
        return false;
    double v = (double)m / pow10[k];
    *out = neg ? -v : v;
    return true;
}

/* A non-negative plain decimal with at most 6 fraction digits, as exact microseconds. */
static bool parse_plain_us(const char *s, size_t len, sim_time *out)
{
    uint64_t whole = 0, frac = 0;
    size_t i = 0;
    int nf = 0;
    bool dot = false, any = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (dot)
                return false;
            dot = true;
            continue;
        }
        if (c < '0' || c > '9')
            return false;
        any = true;
        if (dot) {
            if (++nf > 6)
                return false;
            frac = frac * 10 + (uint64_t)(c - '0');
        } else {
            if (whole > UINT64_C(100000000000000))
                return false;
            whole = whole * 10 + (uint64_t)(c - '0');
        }
    }
    if (!any || whole > UINT64_C(10000000000))
        return false;
    for (; nf < 6; nf++)
        frac *= 10;
    *out = (sim_time)(whole * 1000000 + frac);
    return true;
}

bool csvin_parse_double(const char *s, size_t len, double *out)
{
    if (!len || len > 64)
        return false;
    if (parse_plain_decimal(s, len, out))
        return true;
    char tmp[72];
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    /* strtod accepts hex, inf and nan; traces never mean those. */
    for (size_t i = 0; i < len; i++) {
        char c = tmp[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
            return false;
    }
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    if (end != tmp + len || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int csvin_u64(const csvin *r, const csvin_row *row, int32_t col, const char *name, uint64_t min,
              uint64_t max, uint64_t *out, sim_diag *d)
{
    uint64_t v;
    if (col < 0 || (uint32_t)col >= row->n || !csvin_parse_u64(row->f[col], row->len[col], &v) ||
        v < min || v > max) {
        char what[96];
        if (max == UINT64_MAX)
            snprintf(what, sizeof what, "an integer >= %llu", (unsigned long long)min);
        else
            snprintf(what, sizeof what, "an integer %llu..%llu", (unsigned long long)min,
                     (unsigned long long)max);
        return csvin_field_error(r, row, col, name, what, d);
    }
    *out = v;
    return SIM_OK;
}

int csvin_i64(const csvin *r, const csvin_row *row, int32_t col, const char *name, int64_t min,
              int64_t max, int64_t *out, sim_diag *d)
{
    int64_t v;
    if (col < 0 || (uint32_t)col >= row->n || !csvin_parse_i64(row->f[col], row->len[col], &v) ||
        v < min || v > max) {
        char what[96];
        snprintf(what, sizeof what, "an integer %lld..%lld", (long long)min, (long long)max);
        return csvin_field_error(r, row, col, name, what, d);
    }
    *out = v;
    return SIM_OK;
}

int csvin_double(const csvin *r, const csvin_row *row, int32_t col, const char *name, double min,
                 double max, double *out, sim_diag *d)
{
    double v;
    if (col < 0 || (uint32_t)col >= row->n || !csvin_parse_double(row->f[col], row->len[col], &v) ||
        v < min || v > max) {
        char what[96];
        if (max >= 1e300)
            snprintf(what, sizeof what, "a number >= %g", min);
        else
            snprintf(what, sizeof what, "a number in [%g, %g]", min, max);
        return csvin_field_error(r, row, col, name, what, d);
    }
    *out = v;
    return SIM_OK;
}

int csvin_seconds(const csvin *r, const csvin_row *row, int32_t col, const char *name, double min_s,
                  double max_s, sim_time *out, sim_diag *d)
{
    double v;
    if (max_s > SIM_TIME_LIMIT_S)
        max_s = SIM_TIME_LIMIT_S;
    if (col >= 0 && (uint32_t)col < row->n) {
        /* Exact: a decimal number of seconds read straight into microseconds. */
        const char *f = row->f[col];
        size_t len = row->len[col];
        sim_time us;
        /* The bounds in whole microseconds, compared as integers: a count of microseconds
         * past 2^53 rounds as a double, so a time one microsecond beyond max_s would pass
         * a comparison in seconds. us is at most 10^16 and max_s at most the limit. */
        double lo = ceil(min_s * 1e6), hi = floor(max_s * 1e6);
        if (parse_plain_us(f, len, &us) && (lo <= 0 || us >= (sim_time)lo) && hi >= 0 &&
            us <= (sim_time)hi) {
            *out = us;
            return SIM_OK;
        }
    }
    if (col < 0 || (uint32_t)col >= row->n || !csvin_parse_double(row->f[col], row->len[col], &v) ||
        v < min_s || v > max_s) {
        char what[96];
        snprintf(what, sizeof what, "a time in seconds in [%g, %g]", min_s, max_s);
        return csvin_field_error(r, row, col, name, what, d);
    }
    *out = (sim_time)llround(v * 1e6);
    return SIM_OK;
}
