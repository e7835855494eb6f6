/*
 * bench_util.h: what the benchmarks share: a monotonic clock in seconds, the order of
 * doubles for qsort (medians), and a seeded xorshift generator of uniform numbers in
 * [0, 1) for benchmarks whose inputs need no library generator.
 */
#ifndef BENCH_BENCH_UTIL_H
#define BENCH_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The next uniform number in [0, 1) of the xorshift state *s (nonzero). */
static inline double bench_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

#endif
