/*
 * maxtree.h: a max tree over an array of counts, to find the first index from a given
 * one whose count reaches a threshold in O(log n) (the first node with enough free
 * GPUs). The tree of L leaves (a power of two) is t[0 .. 2L): leaf i is t[L + i], each
 * inner t[i] (1 <= i < L) the larger of t[2i] and t[2i + 1]; t[0] is unused.
 */
#ifndef BASE_MAXTREE_H
#define BASE_MAXTREE_H

#include <stdint.h>

/* The leaves of a tree over n counts: the least power of two >= n (1 for n = 0). */
static inline uint32_t maxtree_leaves(uint32_t n)
{
    uint32_t L = 1;
    while (L < n)
        L *= 2;
    return L;
}

static inline uint32_t maxtree_kids(const uint32_t *t, uint32_t i)
{
    return t[2 * i] > t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
}

/* Every inner entry from the leaves. O(L). */
static inline void maxtree_build(uint32_t *t, uint32_t L)
{
    for (uint32_t i = L; i-- > 1;)
        t[i] = maxtree_kids(t, i);
}

/* Leaf i becomes v, and the entries above it as far as they change. O(log L). */
static inline void maxtree_set(uint32_t *t, uint32_t L, uint32_t i, uint32_t v)
{
    uint32_t k = L + i;
    t[k] = v;
    for (k /= 2; k >= 1 && t[k] != maxtree_kids(t, k); k /= 2)
        t[k] = maxtree_kids(t, k);
}

/* The first leaf from `from` on that holds at least `want`, or UINT32_MAX. O(log L): up
 * while the ranges right of the path hold less, then down to the leftmost leaf that holds
 * enough. */
static inline uint32_t maxtree_first(const uint32_t *t, uint32_t L, uint32_t from, uint32_t want)
{
    if (from >= L)
        return UINT32_MAX;
    uint32_t i = L + from;
    while (t[i] < want) {
        while (i & 1) { /* a right child: its parent's range ends with it */
            if (i == 1)
                return UINT32_MAX;
            i >>= 1;
        }
        i++; /* the range right after */
    }
    while (i < L)
        i = 2 * i + (t[2 * i] < want);
    return i - L;
}

/* maxtree_first(t, L, 0, want) for a caller whose leaves only fall between two resets
 * of *hint to 0 (a first fit filling an empty copy of a cluster): *hint is a leaf before
 * which none holds `want`, so the search starts there instead of climbing over the
 * leaves passed, and moves on to the leaf found (L when there is none). */
static inline uint32_t maxtree_first_hinted(const uint32_t *t, uint32_t L, uint32_t *hint,
                                            uint32_t want)
{
    uint32_t i = maxtree_first(t, L, *hint, want);
    *hint = i == UINT32_MAX ? L : i;
    return i;
}

#endif
