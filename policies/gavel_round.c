/*
 * gavel_round.c: the choice of one Gavel round on one GPU type (see gavel_round.h).
 *
 * The walk that defines it takes the entries in order and chooses each one whose GPUs
 * (its weight: its scale factor, or none where it may not run on the type or its job was
 * chosen on an earlier type) are at most the GPUs left. Two facts let it go without
 * ordering the entries:
 *  - the GPUs left only go down, so an entry that does not fit them now never will, and
 *    dropping it changes nothing the walk chooses;
 *  - when the first entries of the order weigh at most the GPUs left together, the walk
 *    chooses every one of them, whatever the order among them.
 * So each step drops the entries that cannot fit, finds the longest first part of the
 * order of those left whose weights add up to at most the GPUs left (a weighted
 * quickselect, unordered), and chooses it; the entry after that part then no longer fits
 * and is dropped by the next step. Each step chooses at least one entry. The order is
 * strict and total (the arrival numbers break every tie), so nothing depends on the
 * pivots. The entries themselves move: their keys are read in place.
 */
#include "policies/gavel_round.h"

#include <string.h>

static void entry_swap(gavel_entry *a, uint32_t i, uint32_t j)
{
    gavel_entry t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static uint32_t next_random(uint64_t *rng)
{
    uint64_t r = *rng;
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    *rng = r;
    return (uint32_t)(r >> 32);
}

/* Hoare's partition of a[lo..hi) (hi - lo >= 2) around the entry at place p: returns the
 * place that entry takes, every entry before it coming before it in the order and every
 * entry after it after. */
static uint32_t partition(gavel_entry *a, uint32_t lo, uint32_t hi, uint32_t p)
{
    entry_swap(a, lo, p);
    gavel_entry pv = a[lo];
    uint32_t i = lo, up = hi;
    for (;;) {
        do
            i++;
        while (i < hi && gavel_entry_before(&a[i], &pv));
        do
            up--;
        while (gavel_entry_before(&pv, &a[up]));
        if (i >= up)
            break;
        entry_swap(a, i, up);
    }
    entry_swap(a, lo, up);
    return up;
}

/* A pivot for the segment a[lo..hi) near the place where the scale factors along its
 * order reach `budget`: that place in a sorted sample of the segment (each sampled entry
 * standing for (hi - lo) / S), moved a few ranks toward the segment's middle so that the
 * place sought falls, most likely, on the smaller side (the next partition's). */
static uint32_t sampled_place(const gavel_entry *a, uint32_t lo, uint32_t hi, uint32_t budget,
                              uint64_t *rng)
{
    enum { S = 63, MARGIN = 5 };
    uint32_t idx[S], n = hi - lo;
    for (uint32_t k = 0; k < S; k++) {
        uint32_t x = lo + next_random(rng) % n, z = k;
        for (; z > 0 && gavel_entry_before(&a[x], &a[idx[z - 1]]); z--)
            idx[z] = idx[z - 1];
        idx[z] = x;
    }
    uint64_t sum = 0;
    int64_t r = 0;
    while (r < S - 1 && (sum += (uint64_t)a[idx[r]].sf * n) <= (uint64_t)budget * S)
        r++;
    r += 2 * r < S ? MARGIN : -MARGIN;
    return idx[r < 0 ? 0 : r >= S ? S - 1 : r];
}

/* Bring to the front of a[lo..hi), whose scale factors add up to `all`, in no particular
 * order, the longest first part of its order whose scale factors add up to at most
 * `budget`; returns the end of that part and adds its scale factors to *taken. A segment
 * is taken whole when all of it fits; else a long one is cut near the place where its
 * factors reach the budget (estimated from a sample), a short one at random. The sum of
 * the segment left follows from the part summed up to the cut. */
static uint32_t first_part(gavel_entry *a, uint32_t lo, uint32_t hi, uint32_t budget, uint64_t all,
                           uint32_t *taken, uint64_t *rng)
{
    uint32_t start_budget = budget;
    while (hi > lo) {
        if (all <= budget) {
            budget -= (uint32_t)all;
            lo = hi;
            break;
        }
        if (hi - lo == 1)
            break; /* the one entry left does not fit */
        uint32_t p = hi - lo >= 1024 ? sampled_place(a, lo, hi, budget, rng)
                                     : lo + next_random(rng) % (hi - lo);
        uint32_t q = partition(a, lo, hi, p);
        uint64_t w = 0;
        for (uint32_t e = lo; e <= q; e++)
            w += a[e].sf;
        if (w <= budget) {
            budget -= (uint32_t)w;
            all -= w;
            lo = q + 1;
        } else {
            all = w - a[q].sf;
            hi = q;
        }
    }
    *taken += start_budget - budget;
    return lo;
}

uint32_t gavel_choose(gavel_entry *a, uint32_t n, uint32_t left, uint8_t *pick, uint8_t mark,
                      uint64_t *rng)
{
    for (uint32_t lo = 0;;) {
        /* Keep in a[lo..n) only the entries that may still be chosen. */
        uint32_t m = lo;
        uint64_t all = 0;
        for (uint32_t e = lo; e < n; e++)
            if (a[e].sf <= left && !pick[a[e].pos]) { /* GAVEL_NOT_OK is larger */
                all += a[e].sf;
                entry_swap(a, m++, e);
            }
        n = m;
        if (lo == n || left == 0)
            return left;
        /* As in Gavel (max-min fairness, not FIFO), a job of priority 0 (no allocation
         * yet, or none on this type) still takes GPUs the others leave. */
        uint32_t taken = 0, end = first_part(a, lo, n, left, all, &taken, rng);
        for (; lo < end; lo++)
            pick[a[lo].pos] = mark;
        left -= taken;
    }
}
