/*
 * alloc.c: the allocation hook. A countdown lets tests fail the k-th allocation; a
 * live-block counter lets them check for leaks without a leak checker.
 */
#include "base/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: the trace prefetcher allocates on its own thread. */
static _Atomic uint64_t fail_countdown; /* 0 = never fail */
static _Atomic int failing;
static _Atomic int fail_sticky; /* every allocation after the failed one fails too */
static _Atomic int64_t live_blocks;

void sim_alloc_fail_after(uint64_t k)
{
    fail_countdown = k;
    fail_sticky = 1;
    failing = 0;
}

void sim_alloc_fail_once(uint64_t k)
{
    fail_countdown = k;
    fail_sticky = 0;
    failing = 0;
}

int64_t sim_alloc_live(void)
{
    return live_blocks;
}

static int should_fail(void)
{
    if (failing)
        return 1;
    if (fail_countdown == 0)
        return 0;
    if (atomic_fetch_sub(&fail_countdown, 1) == 1) {
        failing = fail_sticky;
        return 1;
    }
    return 0;
}

void *sim_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p)
        live_blocks++;
    return p;
}

void *sim_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p)
        live_blocks++;
    return p;
}

void *sim_reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (!sim_mul_ok(n, size, &bytes))
        return NULL;
    if (should_fail())
        return NULL;
    void *q = realloc(p, bytes ? bytes : 1);
    if (q && !p)
        live_blocks++;
    return q;
}

void *sim_grow_lines(void **raw, size_t old_bytes, size_t new_bytes)
{
    size_t line = SIM_CACHE_LINE, old_off = *raw ? (0 - (uintptr_t)*raw) & (line - 1) : 0;
    if (new_bytes > SIZE_MAX - line || old_bytes > new_bytes)
        return NULL;
    unsigned char *q = sim_reallocarray(*raw, new_bytes + line - 1, 1);
    if (!q)
        return NULL;
    size_t off = (0 - (uintptr_t)q) & (line - 1);
    if (off != old_off && old_bytes)
        memmove(q + off, q + old_off, old_bytes);
    *raw = q;
    return q + off;
}

bool sim_reserve(void **p, uint32_t *cap, uint32_t n, size_t sz)
{
    if (n <= *cap)
        return true;
    uint32_t ncap = *cap ? *cap : 64;
    while (ncap < n)
        ncap *= 2;
    void *np = sim_reallocarray(*p, ncap, sz);
    if (!np)
        return false;
    *p = np;
    *cap = ncap;
    return true;
}

void sim_free(void *p)
{
    if (p) {
        live_blocks--;
        free(p);
    }
}

char *sim_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sim_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
