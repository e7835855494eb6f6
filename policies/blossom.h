/*
 * blossom.h: maximum-weight matching on a general graph for integer edge weights, by
 * LEMON's MaxWeightedMatching (Edmonds' blossom algorithm with dual variables and
 * priority queues, O(nm log n)).
 *
 * The workspace holds the weights of up to `cap` vertices (O(cap^2) memory) and is
 * reused; each solve builds LEMON's graph of the edges set. Weights are int64, >= 0;
 * weight 0 means no edge. Vertices are 0-based. The matching maximises the total weight
 * (not the number of pairs).
 */
#ifndef POLICIES_BLOSSOM_H
#define POLICIES_BLOSSOM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* implemented in C++ (blossom.cc) */
#endif

typedef struct blossom_ws blossom_ws;

/* A workspace for graphs of up to cap vertices; NULL when out of memory. */
blossom_ws *blossom_new(uint32_t cap);
void blossom_free(blossom_ws *b);
uint32_t blossom_cap(const blossom_ws *b);

/* Start a graph of n <= cap vertices, no edges. */
void blossom_reset(blossom_ws *b, uint32_t n);
/* Set the weight of edge {u, v} (u != v, w >= 0; 0 removes it). */
void blossom_set(blossom_ws *b, uint32_t u, uint32_t v, int64_t w);
/* Solve: mate[u] = the vertex matched with u, or UINT32_MAX. Returns the total weight,
 * or -1 when out of memory (the solver allocates its graph on each call). */
int64_t blossom_solve(blossom_ws *b, uint32_t *mate);

#ifdef __cplusplus
}
#endif

#endif
