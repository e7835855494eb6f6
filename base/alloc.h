/*
 * alloc.h: every allocation in clustersim goes through these, so that tests can fail
 * the Nth allocation (fault injection) and check that each create path returns
 * SIM_ENOMEM without leaking. Allocation happens at setup and on geometric growth of
 * pools, never per event.
 */
#ifndef BASE_ALLOC_H
#define BASE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *sim_malloc(size_t size);
void *sim_calloc(size_t n, size_t size);
/* Like realloc, but returns NULL (leaving p valid) when n*size overflows. */
void *sim_reallocarray(void *p, size_t n, size_t size);
/* The cache line that arrays of records may be aligned to. */
#define SIM_CACHE_LINE 64
/* Grow the block *raw (from this function, or NULL), whose first cache-line-aligned byte
 * starts old_bytes of data, to hold new_bytes from such a byte, which it returns with the
 * data moved there; NULL, *raw untouched, when out of memory, when new_bytes is less
 * than old_bytes or when the size overflows. A record whose size is a
 * multiple of the line then keeps its fields on the lines they were laid out for
 * (realloc's large blocks start 16 bytes into a page). *raw is freed with sim_free. */
void *sim_grow_lines(void **raw, size_t old_bytes, size_t new_bytes);
void sim_free(void *p);
/* Room for n elements of sz bytes in the array *p of capacity *cap (doubling, from 64);
 * false, the array untouched, when out of memory. */
bool sim_reserve(void **p, uint32_t *cap, uint32_t n, size_t sz);
/* strdup through the hook. */
char *sim_strdup(const char *s);

/*
 * Fault injection for tests: after sim_alloc_fail_after(k), the k-th following
 * allocation (1-based) and every later one fail until sim_alloc_fail_after(0); after
 * sim_alloc_fail_once(k), the k-th alone. sim_alloc_live() counts blocks allocated and
 * not yet freed.
 */
void sim_alloc_fail_after(uint64_t k);
void sim_alloc_fail_once(uint64_t k);
int64_t sim_alloc_live(void);

/* n*size without overflow: false when it overflows. */
static inline int sim_mul_ok(size_t n, size_t size, size_t *out)
{
    if (size && n > SIZE_MAX / size)
        return 0;
    *out = n * size;
    return 1;
}

#endif
