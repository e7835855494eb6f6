/*
 * trace_tools.h: the trace tools' library part — a trace opened with its catalog and
 * name tables, its statistics, the filters and load scaling of `trace convert`.
 */
#ifndef STUDY_TRACE_TOOLS_H
#define STUDY_TRACE_TOOLS_H

#include "base/intern.h"
#include "models/catalog.h"
#include "traces/stats.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include <stdbool.h>
#include <stdio.h>

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
typedef struct trace_tool {
    model_catalog *cat;
    sim_intern *tenants, *models;
    trace_reader *reader;
} trace_tool;

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

typedef struct trace_filters {
    double from_s, to_s; /* submit window [from, to) */
    bool has_from, has_to;
    tenant_sel *tenants; /* NULL = every tenant */
    uint64_t min_gpus, max_gpus;
    uint64_t first; /* 0 = all */
} trace_filters;

/* Open the catalog, the name tables and (when src->path is set) the trace; a warning
 * on stderr names the columns the format ignores. */
void trace_tool_fini(trace_tool *t);
int trace_tool_open(trace_tool *t, const trace_src *src, sim_diag *d);
void trace_tool_print_stats(FILE *f, const trace_stats *s, const trace_tool *t, const char *path,
                            const char *format, bool json);
int trace_tool_read_stats(trace_tool *t, trace_stats *s, sim_diag *d);
void tenant_sel_destroy(tenant_sel *ts);
int tenant_sel_parse(tenant_sel **out, const char *list, sim_diag *d);
uint32_t tenant_sel_find(const tenant_sel *ts, const char *name);
void tenant_sel_note(tenant_sel *ts, const char *name);
int tenant_sel_error(const tenant_sel *ts, const char *trace, sim_diag *d);
bool trace_filters_keep(const trace_filters *f, const job_spec *j, const sim_intern *tenants);
void held_jobs_free(held_job *h, size_t n);
int trace_write_scaled(trace_writer *w, const held_job *h, size_t n, double target_gpus,
                       uint64_t seed, uint64_t *written, sim_diag *d);

#endif
