/*
 * proc.h: run child processes in parallel, a bounded number at a time, each with its
 * standard output and error in a log file. `clustersim compare` runs its simulations
 * this way (one process per policy and seed, so a crash or a bad option loses one run,
 * not the comparison), and the report runs gnuplot this way.
 */
#ifndef STUDY_PROC_H
#define STUDY_PROC_H

#include <stdbool.h>
#include <stddef.h>

enum study_proc_state { STUDY_PROC_WAITING, STUDY_PROC_RUNNING, STUDY_PROC_DONE };

#define STUDY_PROC_NOT_STARTED 127 /* exit status of a child whose program could not run */

typedef struct study_proc {
    /* Set by the caller. */
    char *const *argv;    /* NULL-terminated; argv[0] is the program (borrowed) */
    const char *log_path; /* the child's stdout and stderr go here (NULL = /dev/null) */
    bool search_path;     /* look argv[0] up in PATH */
    /* Set by study_procs_run. */
    enum study_proc_state state;
    long pid;
    int exit_status;      /* 0..255; 128 + N when killed by signal N */
    double start_s;       /* monotonic clock, seconds */
    double wall_s;        /* wall time from start to exit */
} study_proc;

/* Called when a process starts (index i) or ends, and about every 0.25 s while any
 * runs (i = (size_t)-1), for a live display. */
typedef void (*study_proc_notify)(void *ctx, const study_proc *p, size_t n, size_t i);

/* Run procs p[0..n) in array order, at most `jobs` (>= 1) at once; returns when all have
 * ended. A child that cannot start exits with STUDY_PROC_NOT_STARTED after writing why to
 * its log. Returns 0, or -1 when fork itself fails (the processes already started are
 * waited for; the rest stay STUDY_PROC_WAITING). Only the children started here are
 * waited for. Inside study_forward_begin/end, a signal stops the starting of processes (the
 * rest stay STUDY_PROC_WAITING) and the running ones get it and are waited for. */
int study_procs_run(study_proc *p, size_t n, unsigned jobs, study_proc_notify notify, void *ctx);

/*
 * Interruption of a command that runs children. Between study_forward_begin() and
 * study_forward_end(), SIGINT, SIGTERM and SIGHUP are not acted on at once: each is sent
 * on to every child started with study_fork() (and by study_procs_run), and recorded, so the
 * command stops starting children, waits for those running, and marks what they left
 * unfinished. study_forward_end() then ends the process by the first signal recorded
 * (default action: exit status 128 + N), after removing temporary outputs. Signals the
 * caller ignores (nohup) stay ignored.
 */
void study_forward_begin(void);
/* The first signal recorded since study_forward_begin, 0 = none. */
int study_forward_signal(void);
void study_forward_end(void);
/* fork() for a child that signals are forwarded to; in the child, the signals have
 * their default actions again. */
long study_fork(void);
/* A child forked by study_fork has ended (waited for): stop forwarding to it. */
void study_forget_child(long pid);

/* Monotonic wall clock, seconds. */
double study_wall_now(void);

/* The last non-empty line of a text file (at most size-1 bytes, trailing spaces
 * removed) into buf; "" when the file is missing or empty. Returns buf. */
char *study_last_line(const char *path, char *buf, size_t size);

#endif
