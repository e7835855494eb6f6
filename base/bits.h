/*
 * bits.h: sets of small integers as words of 64 bits.
 */
#ifndef BASE_BITS_H
#define BASE_BITS_H

#include "base/alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Words that hold n bits. */
static inline uint32_t sim_bits_words(uint32_t n)
{
    return n / 64 + (n % 64 != 0);
}

static inline void sim_bits_set(uint64_t *w, uint32_t i)
{
    w[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline void sim_bits_clear(uint64_t *w, uint32_t i)
{
    w[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static inline bool sim_bits_test(const uint64_t *w, uint32_t i)
{
    return (w[i / 64] >> (i % 64)) & 1;
}

/* Grow the set *w from `had` to `bits` members' room (bits >= had), the new ones
 * absent. False when out of memory (*w is unchanged then). */
static inline bool sim_bits_grow(uint64_t **w, uint32_t had, uint32_t bits)
{
    uint32_t had_w = sim_bits_words(had), new_w = sim_bits_words(bits);
    uint64_t *b = sim_reallocarray(*w, new_w ? new_w : 1, sizeof *b);
    if (!b)
        return false;
    memset(b + had_w, 0, (size_t)(new_w - had_w) * sizeof *b);
    *w = b;
    return true;
}

/* The first member at or after `from` of the set in words w[0..n_words), or UINT32_MAX
 * when there is none. */
static inline uint32_t sim_bits_next(const uint64_t *w, uint32_t n_words, uint32_t from)
{
    uint32_t k = from / 64;
    if (k >= n_words)
        return UINT32_MAX;
    uint64_t m = w[k] & (~UINT64_C(0) << (from % 64));
    while (!m) {
        if (++k >= n_words)
            return UINT32_MAX;
        m = w[k];
    }
    return k * 64 + (uint32_t)__builtin_ctzll(m);
}

#endif
