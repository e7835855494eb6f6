/*
 * types.h: the plain data of the base layer — time, status codes and diagnostics.
 *
 * Time is an integer count of microseconds (sim_time).
 */
#ifndef BASE_TYPES_H
#define BASE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t sim_time; /* microseconds since the trace's time origin */
#define SIM_TIME_NEVER INT64_MAX
#define SIM_US_PER_S INT64_C(1000000)
/* Submit times and durations are at most this many seconds (317 years), so any sum of
 * the two, in microseconds, stays far inside int64_t. */
#define SIM_TIME_LIMIT_S 1e10
/* Simulated time ends here, twice that limit (634 years): a job's end that its speed puts
 * further (or past what int64_t holds) is not reached, and a run still going stops here as
 * at a horizon, its jobs left unfinished. Any job of a trace alone at full speed ends
 * before it. */
#define SIM_CLOCK_END_S (2 * SIM_TIME_LIMIT_S)

/* The project-wide status codes: SIM_OK or a negative error. */
enum sim_status {
    SIM_OK = 0,
    SIM_EINVAL = -1,  /* invalid argument or invalid decision */
    SIM_ENOMEM = -2,  /* allocation failed */
    SIM_EIO = -3,     /* file could not be opened, read or written */
    SIM_EPARSE = -4,  /* malformed input; the sim_diag says where */
    SIM_ELIMIT = -5,  /* a configured limit was exceeded; the sim_diag names the knob */
    SIM_EPOLICY = -6, /* a policy failed: an invalid decision, or an error it returned */
};

/* Name of a status code ("SIM_EPARSE"); never NULL. */
const char *sim_strerror(int status);

/*
 * A diagnostic: where the problem is and what it is. Library code fills one and
 * returns an error; only main() prints it, as
 *   file:line:column: error: message      (line/column omitted when 0)
 */
typedef struct sim_diag {
    char file[512]; /* file name, or "" when the problem has no file */
    long line;      /* 1-based physical line of the decompressed stream; 0 = none */
    int column;     /* 1-based field index; 0 = none */
    char msg[768];  /* what was expected and what was found */
} sim_diag;

/* Fill d (if not NULL) with a printf-style message. Returns `status` for tail calls.
 * file NULL: the message names no file; an empty file name is shown as `"" (an empty
 * file name)`, since it names one that is not there. */
int sim_diag_set(sim_diag *d, int status, const char *file, long line, int column, const char *fmt,
                 ...) __attribute__((format(printf, 6, 7)));

/* Format d as one line into buf ("file:line:col: error: msg"); returns buf. */
const char *sim_diag_format(const sim_diag *d, char *buf, size_t size);

#endif
