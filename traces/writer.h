/*
 * writer.h: writes jobs in the native trace format (gzip when the file name ends in
 * ".gz"), to a temporary name renamed into place on close, so an interrupted write
 * never leaves a file that looks complete.
 */
#ifndef TRACES_WRITER_H
#define TRACES_WRITER_H

#include "base/intern.h"
#include "sim/types.h"

typedef struct trace_writer trace_writer;

/* Create path (not yet visible under its name). Names are resolved through the given
 * tables when writing. Errors: SIM_EIO, SIM_ENOMEM. */
int trace_writer_open(trace_writer **out, const char *path, const sim_intern *tenants,
                      const sim_intern *models, const sim_intern *gpu_types, sim_diag *d);
/* Write only the attribute columns in `attrs` (bit a = sim_attr a; all by default), for
 * smaller files when the caller knows which attributes its jobs can carry. Call before
 * the first trace_writer_put(); attributes outside the mask are not written. */
void trace_writer_limit_attrs(trace_writer *w, uint64_t attrs);
int trace_writer_put(trace_writer *w, const job_spec *j);
/* Finish and rename into place (commit) or remove the temporary file (!commit). */
int trace_writer_close(trace_writer *w, bool commit, sim_diag *d);

#endif
