/*
 * csvin.h: streaming CSV input shared by every reader (traces, clusters, model tables).
 * sim_gzin_read() fills a 64 KiB buffer (gzip is detected by content; gzip damage and
 * junk after the stream are errors at a byte offset); libcsv splits it into fields, which are
 * copied into one reusable row buffer, NUL-terminated. Memory is bounded by the longest row.
 * A line with nothing libcsv treats specially (no quote, no space at a field's ends, no
 * control or non-ASCII byte) is split at its delimiters without libcsv, with the same
 * result (tests/test_csvin compares the two on random lines).
 *
 * libcsv does not track positions, so input is fed to it one physical line at a time
 * and the parser's state is read before each line: a row's line is the physical line
 * (1-based, of the decompressed stream, counting newlines inside quoted fields) where
 * the row began; a line ends at a LF, a CRLF or a lone CR (as libcsv ends rows). Fields
 * are checked for NUL bytes and invalid UTF-8.
 */
#ifndef BASE_CSVIN_H
#define BASE_CSVIN_H

#include "base/types.h"

#define CSVIN_MAX_FIELD (64u * 1024u)  /* longest accepted field, bytes */
#define CSVIN_MAX_ROW (256u * 1024u)   /* longest accepted row, bytes */
#define CSVIN_MAX_FIELDS 4096u         /* most fields in a row */

typedef struct csvin csvin;

typedef struct csvin_row {
    uint32_t n;            /* number of fields */
    const char *const *f;  /* f[i]: field i, NUL-terminated (borrowed until next call) */
    const uint32_t *len;   /* len[i]: bytes of field i */
    long line;             /* physical line where the row began */
} csvin_row;

/* Open path ("-" = stdin) with the given delimiter (',' or '\t'). Errors: SIM_EIO,
 * SIM_ENOMEM. */
int csvin_open(csvin **out, const char *path, char delim, sim_diag *d);

/* Read the next non-blank row. Returns 1, 0 at the end, or SIM_EPARSE / SIM_EIO /
 * SIM_ENOMEM with d filled (file, line, column and what is wrong). */
int csvin_next(csvin *r, csvin_row *row, sim_diag *d);

/* The path as given to csvin_open (used in diagnostics). */
const char *csvin_path(const csvin *r);

/* True when the input is gzip-compressed (known after the first read). */
bool csvin_is_gzip(const csvin *r);

/* Test hook: read the input in pieces of `bytes` (1..65536) instead of 64 KiB. */
void csvin_set_chunk(csvin *r, size_t bytes);

/* From here on, decompress ahead on a thread of its own (sim_gzin_ahead): not for a
 * stream. Returns whether the thread runs. */
bool csvin_read_ahead(csvin *r);

void csvin_close(csvin *r);

/* For a reader that tells layouts apart by content: *c = the first byte that is not
 * white space (space, tab, CR, LF) or a leading byte-order mark, or -1 at the end,
 * without taking it. White space before it stays unread unless more than a buffer of it
 * must be passed (its lines are counted). Works on a stream, which cannot be reopened.
 * Returns SIM_OK or the read error. */
int csvin_peek(csvin *r, int *c, sim_diag *d);

/* For a layout that is not CSV, read after csvin_peek instead of csvin_next: up to n
 * bytes, those already buffered first (a leading byte-order mark dropped). Returns the
 * count, 0 at the end, or a negative SIM_E* code (as sim_gzin_read). */
long csvin_read_raw(csvin *r, void *buf, size_t n, sim_diag *d);

/* Physical line of the next unread byte (1-based). */
long csvin_line(const csvin *r);

/*
 * Map a header row to column indices: idx[i] = column of names[i], or -1 when absent.
 * A duplicated column name is SIM_EPARSE. Matching ignores ASCII case and surrounding
 * spaces. When `unknown` is not NULL, unknown[c] is set true for each header column c
 * (c < CSVIN_MAX_FIELDS) that matches no name.
 */
int csvin_map_header(const csvin *r, const csvin_row *hdr, const char *const *names,
                     size_t n, int32_t *idx, bool *unknown, sim_diag *d);

/* Field accessors. Each fails with SIM_EPARSE and a diagnostic of the form
 *   file:line:col: error: field 'name': expected ..., got "value"
 * libcsv drops the spaces around unquoted fields; a number with spaces left around it
 * (quoted) is an error that says so. */
bool csvin_empty(const csvin_row *row, int32_t col); /* absent column or empty field */
int csvin_u64(const csvin *r, const csvin_row *row, int32_t col, const char *name,
              uint64_t min, uint64_t max, uint64_t *out, sim_diag *d);
int csvin_i64(const csvin *r, const csvin_row *row, int32_t col, const char *name,
              int64_t min, int64_t max, int64_t *out, sim_diag *d);
int csvin_double(const csvin *r, const csvin_row *row, int32_t col, const char *name,
                 double min, double max, double *out, sim_diag *d);
/* Seconds (a decimal number) to microseconds, rounded to nearest, in [min_s, max_s]. */
int csvin_seconds(const csvin *r, const csvin_row *row, int32_t col, const char *name,
                  double min_s, double max_s, sim_time *out, sim_diag *d);

/* A generic field error: 'name': expected <what>, got "value". Returns SIM_EPARSE. */
int csvin_field_error(const csvin *r, const csvin_row *row, int32_t col, const char *name,
                      const char *what, sim_diag *d);
/* A data row of a file with a header has as many fields as the header (n_header; 0 =
 * no header, anything goes); otherwise SIM_EPARSE "file:line:col: expected N fields...",
 * col being the first missing field or the first one too many. */
int csvin_row_width(const csvin *r, const csvin_row *row, uint32_t n_header, sim_diag *d);

/* Quote s[0..len) for a message: at most 40 bytes, non-printables as \xHH. */
void csvin_quote(const char *s, size_t len, char *buf, size_t size);

/* Parse helpers on plain strings (no diagnostics); false when invalid, spaces around the
 * number included. */
bool csvin_parse_u64(const char *s, size_t len, uint64_t *out);
bool csvin_parse_i64(const char *s, size_t len, int64_t *out);
bool csvin_parse_double(const char *s, size_t len, double *out);

#endif
