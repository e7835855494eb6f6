/*
 * paths.h: the files one run reads and writes, checked before anything is written so
 * that no output replaces an input or another output (`--trace o/jobs.csv --out o`, a
 * policy's output option naming the trace or one of the run's outputs, two output
 * options naming one file). Files that exist are compared by identity (device and inode,
 * symlinks followed, so hard links and links are caught); paths not yet created by
 * their normalised absolute form (the deepest existing directory resolved, "." and ".."
 * applied, a dangling symlink followed to its target).
 */
#ifndef STUDY_PATHS_H
#define STUDY_PATHS_H

#include "base/types.h"

#include <stddef.h>

typedef struct study_paths study_paths;

/* An empty set; NULL when out of memory. */
study_paths *study_paths_create(void);
void study_paths_destroy(study_paths *p);

/* A file the run reads: noun says what it is ("the trace"), what how the user named it
 * ("--trace g.csv"; for a shipped default, its path). Only existing regular files are
 * kept (standard input "-", a compact cluster spec, a missing file are not files an
 * output could replace). Strings are copied. SIM_ENOMEM when out of memory (the set
 * remembers it: study_paths_check fails too). */
int study_paths_input(study_paths *p, const char *noun, const char *what, const char *path);

/* A file the run writes: what names the option that asks for it ("--out o",
 * "--policy-opt trail=t.csv"). An existing FIFO or character device (written through,
 * never replaced: /dev/null may take several outputs) is not kept. SIM_ENOMEM as for
 * inputs. */
int study_paths_output(study_paths *p, const char *what, const char *path);

/* SIM_ENOMEM when a file could not be added; SIM_EINVAL with d filled when an output is the same
 * file as an input or as an earlier output ("--out o would write 'o/jobs.csv', which is the trace
 * (--trace o/jobs.csv): ..."); SIM_OK otherwise. O(inputs x outputs + outputs^2). */
int study_paths_check(const study_paths *p, sim_diag *d);

#endif
