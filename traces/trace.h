/*
 * trace.h: streaming trace readers. A reader yields jobs one at a time in
 * non-decreasing submit order, holding only a bounded buffer of the file (64 KiB of
 * decompressed input plus the current row), so memory does not grow with the trace.
 * gzip is detected by content (magic bytes), not by name.
 *
 * Every malformed row is reported as file:line:column with the field name, what was
 * expected and the value found (quoted, at most 40 bytes); with skip_bad_rows the row
 * is skipped and counted instead. Formats: see trace_format_list().
 *
 * Exception to streaming: formats whose published files are not in submit order
 * (philly, helios, alibaba2020) are read whole at the first trace_reader_next() and
 * sorted in memory, stably by submit time then file order; their absolute timestamps
 * become seconds since midnight of the day of the earliest submission.
 */
#ifndef TRACES_TRACE_H
#define TRACES_TRACE_H

#include "base/intern.h"
#include "sim/types.h"

typedef struct trace_reader trace_reader;

typedef struct trace_options {
    const char *format;         /* "native" (default when NULL), "alibaba2023", ... */
    bool skip_bad_rows;         /* skip and count malformed rows instead of failing */
    sim_intern *tenants;        /* interns tenant names (borrowed, required) */
    sim_intern *models;         /* interns model-class names (borrowed, required) */
    const sim_intern *gpu_types; /* known GPU type names and aliases (borrowed, required) */
    bool shapes_only;           /* the caller uses only the jobs' resource requests: rows
                                   need not be in submit order, job ids are not checked for
                                   duplicates, and a format's time columns may be absent
                                   (alibaba2023: submit time and work 0) */
    const char *const *opts;    /* format-specific "KEY=VALUE" options (borrowed), or NULL */
    uint32_t n_opts;            /* entries in opts */
    const char *data_dir;       /* root of shipped data tables (default tables), or NULL */
    bool read_ahead;            /* decompress on a thread of its own (csvin_read_ahead):
                                   for a caller with a core to spare; CSV formats read by
                                   rows, and not for standard input or a FIFO */
} trace_options;

#define TRACE_MAX_OPTS 16 /* most format-specific options per reader */

/*
 * Open path ("-" = standard input) for reading with the given options. On success
 * *out owns the file. Errors: SIM_EIO (cannot open), SIM_EPARSE (bad header),
 * SIM_EINVAL (unknown format), SIM_ENOMEM; d says which.
 */
int trace_reader_open(trace_reader **out, const char *path, const trace_options *opt,
                      sim_diag *d);

/* Whether path can be read only once: "-" (standard input), a pipe, a FIFO, a device;
 * not a regular file. Such a trace is read once, without look-back. */
bool trace_path_is_stream(const char *path);

/*
 * Read the next job into *job. Returns 1 when a job was read, 0 at the end of the
 * trace, or a negative SIM_E* code with d filled. The strings job->name and
 * job->command stay valid until the next call.
 */
int trace_reader_next(trace_reader *r, job_spec *job, sim_diag *d);

/* Rows skipped as malformed so far (only with skip_bad_rows). */
uint64_t trace_reader_skipped(const trace_reader *r);
/* Rows read so far, good and bad (the header excluded). */
uint64_t trace_reader_rows(const trace_reader *r);
/* Bytes the duplicate-id check holds now. */
size_t trace_reader_id_bytes(const trace_reader *r);
/* Well-formed records the format documents as not being jobs (for example PAI jobs
 * still running when the trace was cut, Philly jobs without any scheduling attempt),
 * left out and counted so far. */
uint64_t trace_reader_ignored(const trace_reader *r);

/* Whether the trace has a job-group column (native `group`), known once it is open. */
bool trace_reader_has_groups(const trace_reader *r);

/* Header columns the format does not use ("" when none), for a warning. */
const char *trace_reader_ignored_columns(const trace_reader *r);

void trace_reader_close(trace_reader *r);

/* Test hook: read the input in pieces of `bytes` (1..65536) instead of 64 KiB. Call
 * before the first trace_reader_next(). */
void trace_reader_set_chunk(trace_reader *r, size_t bytes);

/* Names of the supported formats, comma-separated. */
const char *trace_format_list(void);

/* The format-specific option keys of `format`, comma-separated ("" when it has none,
 * NULL for an unknown format). */
const char *trace_format_options(const char *format);

/* Parse "YYYY-MM-DD HH:MM:SS" (s[0..len), surrounding spaces ignored) into seconds
 * since 1970-01-01 00:00:00 of the same (unstated) time zone. false when malformed. */
bool trace_parse_timestamp(const char *s, size_t len, int64_t *out_s);

#endif
