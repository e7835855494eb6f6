/*
 * trace.h: streaming trace readers. A reader yields jobs one at a time in
 * non-decreasing submit order, holding only a bounded buffer of the file (64 KiB of
 * decompressed input plus the current row), so memory does not grow with the trace.
 * gzip is detected by content (magic bytes), not by name.
 *
 * Every malformed row is reported as file:line:column with the field name, what was
 * expected and the value found (quoted, at most 40 bytes); with skip_bad_rows the row
 * is skipped and counted instead. Formats: see trace_format_list().
 */
#ifndef TRACES_TRACE_H
#define TRACES_TRACE_H

#include "sim/intern.h"
#include "sim/types.h"

typedef struct trace_reader trace_reader;

typedef struct trace_options {
    const char *format;         /* "native" (default when NULL), "alibaba2023", ... */
    bool skip_bad_rows;         /* skip and count malformed rows instead of failing */
    sim_intern *tenants;        /* interns tenant names (borrowed, required) */
    sim_intern *models;         /* interns model-class names (borrowed, required) */
    const sim_intern *gpu_types; /* known GPU type names and aliases (borrowed, required) */
    bool shapes_only;           /* the caller uses only the jobs' resource requests: rows
                                   need not be in submit order, and a format's time columns
                                   may be absent (alibaba2023: submit time and work 0) */
} trace_options;

/*
 * Open path ("-" = standard input) for reading with the given options. On success
 * *out owns the file. Errors: SIM_EIO (cannot open), SIM_EPARSE (bad header),
 * SIM_EINVAL (unknown format), SIM_ENOMEM; d says which.
 */
int trace_reader_open(trace_reader **out, const char *path, const trace_options *opt,
                      sim_diag *d);

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

/* Header columns the format does not use ("" when none), for a warning. */
const char *trace_reader_ignored_columns(const trace_reader *r);

void trace_reader_close(trace_reader *r);

/* Test hook: read the input in pieces of `bytes` (1..65536). */
void trace_reader_set_chunk(trace_reader *r, size_t bytes);

/* Names of the supported formats, comma-separated. */
const char *trace_format_list(void);

#endif
