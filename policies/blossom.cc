/*
 * blossom.cc: blossom.h's maximum-weight matching, solved by LEMON's MaxWeightedMatching
 * (Edmonds' algorithm with priority queues, O(nm log n); Debian liblemon-dev). The
 * weights wait in a dense matrix until blossom_solve builds the graph: its nodes in
 * vertex order, its edges in (u, v) order, u < v, so equal inputs give equal matchings.
 */
#include "policies/blossom.h"

#include <lemon/matching.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <new>
#include <utility>
#include <vector>

struct blossom_ws {
    uint32_t cap, n;
    std::vector<int64_t> w; /* cap x cap, upper triangle: weight of {u, v}, 0 = none */
    lemon::SmartGraph g;
    std::vector<lemon::SmartGraph::Node> node;
};

blossom_ws *blossom_new(uint32_t cap)
{
    if (cap == 0 || cap > 8192)
        return nullptr;
    try {
        blossom_ws *b = new blossom_ws;
        b->cap = cap;
        b->n = 0;
        b->w.assign((size_t)cap * cap, 0);
        b->node.reserve(cap);
        return b;
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

void blossom_free(blossom_ws *b)
{
    delete b;
}

uint32_t blossom_cap(const blossom_ws *b)
{
    return b ? b->cap : 0;
}

void blossom_reset(blossom_ws *b, uint32_t n)
{
    for (uint32_t u = 0; u < b->n; u++)
        std::fill_n(b->w.begin() + (ptrdiff_t)u * b->cap, b->n, 0);
    b->n = n <= b->cap ? n : b->cap;
}

void blossom_set(blossom_ws *b, uint32_t u, uint32_t v, int64_t w)
{
    if (u == v || u >= b->n || v >= b->n || w < 0)
        return;
    if (u > v)
        std::swap(u, v);
    b->w[(size_t)u * b->cap + v] = w;
}

int64_t blossom_solve(blossom_ws *b, uint32_t *mate)
{
    using Graph = lemon::SmartGraph;
    try {
        Graph &g = b->g;
        g.clear();
        b->node.clear();
        for (uint32_t u = 0; u < b->n; u++)
            b->node.push_back(g.addNode());
        Graph::EdgeMap<int64_t> weight(g);
        for (uint32_t u = 0; u < b->n; u++)
            for (uint32_t v = u + 1; v < b->n; v++) {
                int64_t w = b->w[(size_t)u * b->cap + v];
                if (w > 0)
                    weight.set(g.addEdge(b->node[u], b->node[v]), w);
            }
        lemon::MaxWeightedMatching<Graph, Graph::EdgeMap<int64_t>> mwm(g, weight);
        mwm.run();
        for (uint32_t u = 0; u < b->n; u++) {
            Graph::Node m = mwm.mate(b->node[u]);
            mate[u] = m == lemon::INVALID ? UINT32_MAX : (uint32_t)g.id(m);
        }
        return mwm.matchingWeight();
    } catch (const std::bad_alloc &) {
        return -1;
    }
}
