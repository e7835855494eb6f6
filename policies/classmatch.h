/*
 * classmatch.h: maximum-weight matching on a graph whose vertices fall into classes of
 * twins (vertices of one class have the same edge weights to every other vertex), as the
 * interleave policy's matching graphs do: many packs share a stage profile.
 *
 * The matching is exact (the same total weight as Edmonds' blossom on the whole graph),
 * found at the level of the classes: a maximum-weight fractional matching from a
 * transportation problem between two copies of the classes (successive shortest paths),
 * its rounded-down part kept except for a bounded number of pairs per class pair, and
 * the rest solved exactly by the blossom (policies/blossom.cc) on the few vertices left.
 * Why that is exact is argued in classmatch.c.
 *
 * The workspace is sized once for up to `cap` classes; solving allocates nothing but
 * the blossom's graph of the vertices left. It borrows a blossom workspace, whose size
 * bounds the vertices in all.
 */
#ifndef POLICIES_CLASSMATCH_H
#define POLICIES_CLASSMATCH_H

#include "policies/blossom.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct cmatch_ws cmatch_ws;

/* A workspace for up to cap classes and blossom_cap(bl) vertices in all, solving the
 * remainder on bl; NULL when out of memory. */
cmatch_ws *cmatch_new(uint32_t cap, blossom_ws *bl);
void cmatch_free(cmatch_ws *c);

/* Match n classes (n <= cap) of count[a] vertices each (sum <= blossom_cap(bl)). Two vertices of
 * classes a and b (a == b: two of class a) are joined with weight w[a * n + b]
 * (symmetric, >= 0; 0 = no edge). On return pairs[a * n + b] = pairs[b * n + a] is the
 * number of matched pairs between classes a and b (pairs[a * n + a]: inside class a).
 * Returns the total weight, the maximum over all matchings of the graph; -1 when the
 * matching of the remainder could not allocate. */
int64_t cmatch_solve(cmatch_ws *c, uint32_t n, const uint32_t *count, const int64_t *w,
                     uint32_t *pairs);

/* The two steps of cmatch_solve, for a caller that remembers the matchings of the
 * remainders: prepare sets pairs to the pairs kept from the fractional optimum and
 * returns how many vertices are left, cmatch_left(c)[a] of class a (valid until the next
 * call); finish adds to pairs a maximum-weight matching of the vertices left. The pairs
 * kept plus any maximum-weight matching of the vertices left are a maximum-weight
 * matching of the whole graph. finish is false when the matching could not allocate. */
uint32_t cmatch_prepare(cmatch_ws *c, uint32_t n, const uint32_t *count, const int64_t *w,
                        uint32_t *pairs);
const uint32_t *cmatch_left(const cmatch_ws *c);
bool cmatch_finish(cmatch_ws *c, uint32_t n, const int64_t *w, uint32_t *pairs);

/* Vertices the last solve left to the blossom (0: the rounded fractional matching was
 * optimal as it stood). */
uint32_t cmatch_residual(const cmatch_ws *c);

#endif
