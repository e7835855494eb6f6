/*
 * outfile.h: opening an output file without harming what is already at its path. Every
 * output of every command goes through here:
 *  - a new path or a regular file is written under a temporary name beside it and renamed
 *    into place on commit, so an interrupted write never leaves a file that looks
 *    complete (and a regular file keeps its permission bits);
 *  - a symlink is followed: its target is written (replaced as above), the link stays;
 *  - a FIFO or a character device (/dev/null, /dev/full, a terminal) is written through,
 *    never replaced;
 *  - a directory, block device or socket is refused.
 * Errors name the path and the system's reason (strerror). The temporaries still open
 * are listed for a signal handler (sim_outfile_remove_temporaries).
 */
#ifndef BASE_OUTFILE_H
#define BASE_OUTFILE_H

#include "base/types.h"

#include <stdio.h>

typedef struct sim_outfile {
    char path[1024];   /* as given (named in messages) */
    char target[1024]; /* what is replaced on commit: path, or the end of its symlinks */
    char tmp[1100];    /* the temporary name; "" when written through */
    int fd;            /* open for writing; -1 once handed to a stream or closed */
    FILE *f;           /* the stream of sim_outfile_stream, or NULL */
} sim_outfile;

/* Open path for writing as described above. Errors: SIM_EIO with d filled ("cannot
 * create the file: Permission denied", "is a directory", an empty path, ...). */
int sim_outfile_open(sim_outfile *o, const char *path, sim_diag *d);

/* A buffered stream on the file (owned by o: closed by sim_outfile_close), without
 * stdio's per-call locking: one thread at a time writes it. NULL when out of memory (d
 * filled; the file is still open). */
FILE *sim_outfile_stream(sim_outfile *o, sim_diag *d);

/* Give the descriptor to another writer (gzdopen): o no longer closes it; the caller
 * reports how its writes and its close went through sim_outfile_close's write_errno. */
int sim_outfile_take_fd(sim_outfile *o);

/*
 * Close (the stream or the descriptor, if still o's), then rename the temporary into
 * place when commit, else remove it. write_errno is an error a writer that took the
 * descriptor met (0 = none). Errors (only when commit): SIM_EIO naming the path and the
 * reason ("cannot write: No space left on device"). Safe on a zeroed or closed o.
 */
int sim_outfile_close(sim_outfile *o, bool commit, int write_errno, sim_diag *d);

/* Remove every temporary file still open (async-signal-safe: for signal handlers). */
void sim_outfile_remove_temporaries(void);

/* Copy the file src to path as an output opened here would be written (the rules
 * above: a regular file or new path is replaced by rename, a symlink's target is
 * written, a FIFO or character device is written through, a directory refused). For
 * outputs another program (gnuplot) writes into a scratch file first. Errors: SIM_EIO
 * naming path (or src when it cannot be read) and the reason. */
int sim_outfile_copy(const char *path, const char *src, sim_diag *d);

/* List a scratch file (one this process or its child writes) with the temporaries that
 * sim_outfile_remove_temporaries removes, until sim_outfile_untrack; the string must
 * stay valid until then. */
void sim_outfile_track(const char *path);
void sim_outfile_untrack(const char *path);

#endif
