/*
 * line.h: a row of text assembled in memory and handed to its stream with one fwrite.
 * The outputs write millions of rows of some twenty fields each; a stdio call per field
 * (even unlocked) cost more than the formatting itself. Appends make room first: the
 * buffer grows and is kept between rows, so steady-state writing allocates nothing.
 * Numbers come out byte for byte as printf writes them (base/numfmt.h), fields as
 * base/textout.h quotes them.
 */
#ifndef BASE_LINE_H
#define BASE_LINE_H

#include "base/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sim_line {
    char *buf;
    size_t len, cap;
    bool oom; /* an append found no memory: the row is incomplete */
} sim_line;

/* Make room for n more bytes; false (and oom set) when there is no memory. */
bool sim_line_grow(sim_line *l, size_t n);

static inline bool sim_line_room(sim_line *l, size_t n)
{
    return l->cap - l->len >= n || sim_line_grow(l, n);
}

static inline void sim_line_char(sim_line *l, char c)
{
    if (sim_line_room(l, 1))
        l->buf[l->len++] = c;
}

/* s as it is; as a CSV field (quoted only when it must be). */
void sim_line_str(sim_line *l, const char *s);
void sim_line_csv(sim_line *l, const char *s);

/* u as "%llu", i as "%lld", x as "%.*f" with the given digits. */
void sim_line_u64(sim_line *l, uint64_t u);
void sim_line_i64(sim_line *l, int64_t i);
void sim_line_fixed(sim_line *l, double x, unsigned digits);

/* Write the row to f and empty the line. SIM_OK, SIM_ENOMEM when an append failed (the
 * row is not written), SIM_EIO when f is in error. */
int sim_line_put(sim_line *l, FILE *f);

void sim_line_free(sim_line *l);

#endif
