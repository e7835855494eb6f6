/*
 * trace_int.h: what every trace format shares — the reader object, the format table,
 * and row helpers (GPU-type lists, common checks). Formats live in one file each and
 * fill a job_spec from one CSV row; trace.c does the rest (submit order, duplicate
 * ids, skipping bad rows, counting).
 */
#ifndef TRACES_TRACE_INT_H
#define TRACES_TRACE_INT_H

#include "base/csvin.h"
#include "traces/trace.h"

#define TRACE_MAX_COLS 64

typedef struct trace_format {
    const char *name;
    const char *summary;
    char delim;
    /* Read the header (if any) and map columns. */
    int (*open)(trace_reader *r, sim_diag *d);
    /* Map one row to *job: 1 = a job, 0 = not a job (skip silently, e.g. a row the
     * format documents as ignored), < 0 = error with d filled. NULL when `next` is
     * given. */
    int (*row)(trace_reader *r, const csvin_row *row, job_spec *job, sim_diag *d);
    /* Optional: produce jobs without the CSV row loop (layouts that are not CSV, or
     * joins). It counts r->rows and sets job->line itself. */
    int (*next)(trace_reader *r, job_spec *job, sim_diag *d);
    void (*close)(trace_reader *r);
    /* The published files are not in submit order: read them whole and sort (stable,
     * by submit time then file order); duplicate ids are found after the read. */
    bool in_memory;
    /* Format-specific option keys (NULL-terminated), or NULL when it has none. */
    const char *const *options;
    /* Headerless layouts: what an empty file should have held (an error names it). */
    const char *empty_expect;
} trace_format;

/* One job held by an in-memory reader; name and command live in the reader's arena. */
typedef struct trace__held {
    job_spec job;
    size_t name_off, command_off; /* offsets into the arena */
    uint64_t seq;                 /* file order */
    bool dropped;                 /* a skipped duplicate */
} trace__held;

/* 64 numbered ids sharing the text before their number and its digit count: a hash of
 * (that text, the count, number / 64) and a bit per id seen (bit number % 64). */
typedef struct trace__id_run {
    uint64_t key, seen;
} trace__id_run;

struct trace_reader {
    const trace_format *fmt;
    csvin *in;
    trace_options opt;
    char path[512];
    uint64_t skipped, rows;
    /* The last error leaves the input out of sync (a JSON syntax error): the read stops
     * there even with skip_bad_rows. */
    bool fatal;
    sim_time last_submit_us;
    long last_submit_line;
    bool have_last;
    int32_t col[TRACE_MAX_COLS]; /* format's column indices */
    /* Columns of the job id and the submit time (-1 = none, as in JSON), which the
     * checks across rows cite. */
    int32_t id_col, submit_col;
    bool unknown[CSVIN_MAX_FIELDS]; /* header columns no name matched */
    uint32_t n_header;
    long header_line;  /* physical line of the header row (after blank lines) */
    char ignored[512]; /* header columns the format does not use, comma-separated */
    /* Duplicate-id detection: 64-bit hashes of every id seen (open addressing), except
     * ids ending in digits, which are bits of runs of 64 numbers (trace.c). */
    uint64_t *ids;
    size_t ids_cap, ids_n;
    trace__id_run *runs;
    size_t runs_cap, runs_n;
    void *state; /* format-specific */
    uint64_t n_ignored; /* records the format documents as not being jobs */
    /* The last row's job group (native `group`): its id and submit time. */
    char last_group[SIM_ID_MAX];
    sim_time last_group_submit_us;
    bool has_groups;    /* the header has a group column */
    bool tenant_user;   /* option tenant=user: the user, not the VC, is the tenant */
    size_t chunk;       /* test hook: bytes per read (0 = 64 KiB) */
    /* Absolute timestamps (set by the format): after the whole read, times are shifted
     * to seconds since midnight of the day of the earliest submission. */
    bool rebase_day;
    sim_time tz_offset_us; /* local time - trace time, for the day boundary of rebase_day */
    /* In-memory formats: every job, sorted, and the next to yield. */
    bool loaded;
    trace__held *held;
    size_t held_n, held_cap, held_pos;
    char *arena;
    size_t arena_len, arena_cap;
};

/* Value of the format-specific option `key`, or NULL when not given. */
const char *trace__opt(const trace_reader *r, const char *key);

/* Parse a "YYYY-MM-DD HH:MM:SS" field into absolute microseconds (sets r->rebase_day);
 * a field error otherwise. */
int trace__timestamp(trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                     sim_time *out_us, sim_diag *d);

/* Parse a GPU-type list "A|B|C" (empty, "nan" or "*" = any) into a type mask; unknown
 * names are a field error listing the known names. */
int trace__gpu_mask(const trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                    uint64_t *mask, sim_diag *d);

/* Copy a job id (1..63 bytes) into job->id (and note its column); a field error
 * otherwise. */
int trace__job_id(trace_reader *r, const csvin_row *row, int32_t col, const char *name,
                  job_spec *job, sim_diag *d);

/* Record that a run of rows of job group `group` starts: 1 when the group is new, 0 when
 * its rows were seen before (they must be contiguous), SIM_ENOMEM. */
int trace__group_new(trace_reader *r, const char *group);

/* Intern a tenant/model name field (empty -> 0). */
int trace__intern(const trace_reader *r, sim_intern *t, const csvin_row *row, int32_t col,
                  uint32_t *out, sim_diag *d);

/* Reset *job to defaults (whole GPU request, any type, tenant 0, no attributes). */
void trace__job_defaults(job_spec *job);

/* Read the header row and map it to names; a missing required column (required[i])
 * prints the expected header. */
int trace__map_header(trace_reader *r, const char *const *names, const bool *required,
                      size_t n, const char *expected, sim_diag *d);

extern const trace_format trace_format_native;
extern const trace_format trace_format_alibaba2023;
extern const trace_format trace_format_philly;
extern const trace_format trace_format_helios;
extern const trace_format trace_format_alibaba2020;
extern const trace_format trace_format_gavel;
extern const trace_format trace_format_muri;
extern const trace_format trace_format_tiresias;
extern const trace_format trace_format_pollux;

#endif
