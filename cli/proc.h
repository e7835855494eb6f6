/*
 * proc.h: run child processes in parallel, a bounded number at a time, each with its
 * standard output and error in a log file. `clustersim compare` runs its simulations
 * this way (one process per policy and seed, so a crash or a bad option loses one run,
 * not the comparison), and the report runs gnuplot this way.
 */
#ifndef CLI_PROC_H
#define CLI_PROC_H

#include <stdbool.h>
#include <stddef.h>

enum cli_proc_state { CLI_PROC_WAITING, CLI_PROC_RUNNING, CLI_PROC_DONE };

#define CLI_PROC_NOT_STARTED 127 /* exit status of a child whose program could not run */

typedef struct cli_proc {
    /* Set by the caller. */
    char *const *argv;    /* NULL-terminated; argv[0] is the program (borrowed) */
    const char *log_path; /* the child's stdout and stderr go here (NULL = /dev/null) */
    bool search_path;     /* look argv[0] up in PATH */
    /* Set by cli_procs_run. */
    enum cli_proc_state state;
    long pid;
    int exit_status;      /* 0..255; 128 + N when killed by signal N */
    double start_s;       /* monotonic clock, seconds */
    double wall_s;        /* wall time from start to exit */
} cli_proc;

/* Called when a process starts (index i) or ends, and about every 0.25 s while any
 * runs (i = (size_t)-1), for a live display. */
typedef void (*cli_proc_notify)(void *ctx, const cli_proc *p, size_t n, size_t i);

/* Run procs p[0..n) in array order, at most `jobs` (>= 1) at once; returns when all have
 * ended. A child that cannot start exits with CLI_PROC_NOT_STARTED after writing why to
 * its log. Returns 0, or -1 when fork itself fails (the processes already started are
 * waited for; the rest stay CLI_PROC_WAITING). Only the children started here are
 * waited for. */
int cli_procs_run(cli_proc *p, size_t n, unsigned jobs, cli_proc_notify notify, void *ctx);

/* Monotonic wall clock, seconds. */
double cli_wall_now(void);

/* The last non-empty line of a text file (at most size-1 bytes, trailing spaces
 * removed) into buf; "" when the file is missing or empty. Returns buf. */
char *cli_last_line(const char *path, char *buf, size_t size);

#endif
