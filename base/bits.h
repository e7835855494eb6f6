/*
 * bits.h: sets of small integers as words of 64 bits.
 */
#ifndef BASE_BITS_H
#define BASE_BITS_H

#include <stdint.h>

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
