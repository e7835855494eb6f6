/*
 * gzin.h: byte input that is gzip-decompressed when it starts with the gzip magic and
 * passed through otherwise (shared by the CSV and JSON readers). Unlike zlib's gzread,
 * damage is located by byte offset in the file, and bytes after the last gzip member
 * that do not start another member are an error, not silently ignored.
 */
#ifndef BASE_GZIN_H
#define BASE_GZIN_H

#include "base/types.h"

#include <stddef.h>

typedef struct sim_gzin sim_gzin;

/* Open path ("-" = standard input). Errors: SIM_EIO (with strerror), SIM_ENOMEM. */
int sim_gzin_open(sim_gzin **out, const char *path, sim_diag *d);

/*
 * Read up to n bytes of (decompressed) data into buf. Returns the count, 0 at the end, or
 * a negative SIM_E* code with d filled (the path, no line): SIM_EIO for a read error
 * ("cannot read: <strerror>"), a corrupt or truncated gzip stream ("... at byte offset N")
 * and junk after the gzip stream; SIM_ENOMEM. An error is final, and comes after every
 * byte inflated before it, whatever the sizes of the reads.
 */
long sim_gzin_read(sim_gzin *g, void *buf, size_t n, sim_diag *d);

/* From here on, read and decompress ahead on a thread of its own, into a few blocks of
 * 256 KiB that sim_gzin_read then copies from: for a caller with a core to spare (the
 * parse of each block overlaps the inflating of the next). The bytes and the error a
 * reader gets are the same. Not for a stream that may block (a pipe, a terminal):
 * closing would wait for the thread's read. Returns whether the thread runs; without it
 * (no thread or no memory) the input is read in place. */
bool sim_gzin_ahead(sim_gzin *g);

/* True when the input is gzip (known after the first read). */
bool sim_gzin_is_gzip(const sim_gzin *g);

void sim_gzin_close(sim_gzin *g);

#endif
