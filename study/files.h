/*
 * files.h: the files a run or a study writes — output files written under a temporary
 * name and renamed on success, directories, checksums of inputs, and the path of this
 * executable for the studies that run it as child processes. The helpers that can fail
 * print their error as "clustersim: error: ..." on stderr and return false.
 */
#ifndef STUDY_FILES_H
#define STUDY_FILES_H

#include "base/outfile.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Create directory `dir` and its parents; false with a printed error. */
bool study_mkdirs(const char *dir);

/* An output file (base/outfile.h: a temporary renamed on commit; FIFOs and devices
 * written through; symlinks followed). */
typedef struct study_outfile {
    FILE *f;
    sim_outfile o;
} study_outfile;
/* Open DIR/NAME under a temporary name; false (printed) when it cannot be created. A
 * caller reports that as bad input: exit status 2. */
bool study_out_open(study_outfile *o, const char *dir, const char *name);
/* The same for a path (its directory part, else the current directory). */
bool study_out_open_path(study_outfile *o, const char *path);
/* Close; rename into place when commit, else remove. false (printed: the path and the
 * system's reason) on error. */
bool study_out_close(study_outfile *o, bool commit);

/* CRC-32 and size of a file, for run.json. false when it cannot be read, or when *stop
 * (NULL: never) turns true before the end (checked between blocks of 64 KiB). */
bool study_file_crc(const char *path, uint32_t *crc, uint64_t *bytes, const atomic_bool *stop);

/* The path of this executable (to run it as a child process) into buf; false after
 * printing why when it cannot be found. */
bool study_self_exe(char *buf, size_t size, const char *argv0);

/* Process exit status for an error status code, for the studies whose workers report
 * by exit status: 1 when the run failed (SIM_EPOLICY, SIM_ENOMEM), 2 for bad input,
 * options or files (every other code). */
int study_exit_status(int status);

/* Print d as "clustersim: file:line:col: error: msg" to stderr; nothing for a diag with
 * an empty message (the error was printed where it happened). */
void study_print_diag(const sim_diag *d);
/* Print "clustersim: error: <fmt>" to stderr. */
void study_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void study_verror(const char *fmt, va_list ap);

#endif
