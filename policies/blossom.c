/*
 * blossom.c: Edmonds' maximum-weight matching (primal-dual, blossoms shrunk and
 * expanded, O(V^3)) on a dense adjacency matrix. Internally vertices are 1..n and
 * blossoms n+1..2n; edge (u, v) of a blossom keeps the endpoints of the original edge
 * it stands for. Weights are doubled inside so that every dual stays an integer.
 */
#include "policies/blossom.h"

#include "base/alloc.h"

#include <stdbool.h>
#include <string.h>

struct blossom_ws {
    uint32_t cap, m;  /* m = 2 cap + 1: rows of the matrices */
    uint32_t n, n_x;  /* vertices, highest id in use (vertices and blossoms) */
    int32_t *eu, *ev; /* m x m: original endpoints of the edge between x and y */
    int64_t *ew;      /* m x m: doubled weight (0 = none) */
    int64_t *lab;     /* dual variables */
    int32_t *match, *slack, *st, *pa, *S, *vis;
    int32_t *flower, *flen; /* m x m: the sub-blossoms of each blossom, in cycle order */
    int32_t *from;          /* m x (cap + 1): the sub-blossom holding each vertex */
    int32_t *q, qh, qt, qcap;
    int32_t *tmp;
    int32_t stamp;
};

#define E(b, x, y) ((size_t)(x) * (b)->m + (size_t)(y))
#define FROM(b, x, y) ((size_t)(x) * ((b)->cap + 1) + (size_t)(y))

blossom_ws *blossom_new(uint32_t cap)
{
    if (cap == 0 || cap > 8192)
        return NULL;
    blossom_ws *b = sim_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->cap = cap;
    b->m = 2 * cap + 1;
    size_t mm = (size_t)b->m * b->m;
    b->qcap = (int32_t)(4 * b->m);
    b->eu = sim_calloc(mm, sizeof *b->eu);
    b->ev = sim_calloc(mm, sizeof *b->ev);
    b->ew = sim_calloc(mm, sizeof *b->ew);
    b->flower = sim_calloc(mm, sizeof *b->flower);
    b->from = sim_calloc((size_t)b->m * (cap + 1), sizeof *b->from);
    b->lab = sim_calloc(b->m, sizeof *b->lab);
    b->match = sim_calloc(b->m, sizeof *b->match);
    b->slack = sim_calloc(b->m, sizeof *b->slack);
    b->st = sim_calloc(b->m, sizeof *b->st);
    b->pa = sim_calloc(b->m, sizeof *b->pa);
    b->S = sim_calloc(b->m, sizeof *b->S);
    b->vis = sim_calloc(b->m, sizeof *b->vis);
    b->flen = sim_calloc(b->m, sizeof *b->flen);
    b->tmp = sim_calloc(b->m, sizeof *b->tmp);
    b->q = sim_calloc((size_t)b->qcap, sizeof *b->q);
    if (!b->eu || !b->ev || !b->ew || !b->flower || !b->from || !b->lab || !b->match || !b->slack ||
        !b->st || !b->pa || !b->S || !b->vis || !b->flen || !b->tmp || !b->q) {
        blossom_free(b);
        return NULL;
    }
    return b;
}

void blossom_free(blossom_ws *b)
{
    if (!b)
        return;
    sim_free(b->eu);
    sim_free(b->ev);
    sim_free(b->ew);
    sim_free(b->flower);
    sim_free(b->from);
    sim_free(b->lab);
    sim_free(b->match);
    sim_free(b->slack);
    sim_free(b->st);
    sim_free(b->pa);
    sim_free(b->S);
    sim_free(b->vis);
    sim_free(b->flen);
    sim_free(b->tmp);
    sim_free(b->q);
    sim_free(b);
}

uint32_t blossom_cap(const blossom_ws *b)
{
    return b->cap;
}

void blossom_reset(blossom_ws *b, uint32_t n)
{
    b->n = n;
    for (uint32_t u = 1; u <= 2 * n && u < b->m; u++)
        for (uint32_t v = 1; v <= 2 * n && v < b->m; v++) {
            size_t k = E(b, u, v);
            b->eu[k] = (int32_t)u;
            b->ev[k] = (int32_t)v;
            b->ew[k] = 0;
        }
}

void blossom_set(blossom_ws *b, uint32_t u, uint32_t v, int64_t w)
{
    b->ew[E(b, u + 1, v + 1)] = 2 * w;
    b->ew[E(b, v + 1, u + 1)] = 2 * w;
}

/* Slack of the edge stored at (x, y): lab[u] + lab[v] - w of its original endpoints. */
static int64_t delta(const blossom_ws *b, int32_t x, int32_t y)
{
    size_t k = E(b, x, y);
    return b->lab[b->eu[k]] + b->lab[b->ev[k]] - b->ew[k] * 2;
}

static void update_slack(blossom_ws *b, int32_t u, int32_t x)
{
    if (!b->slack[x] || delta(b, u, x) < delta(b, b->slack[x], x))
        b->slack[x] = u;
}

static void set_slack(blossom_ws *b, int32_t x)
{
    b->slack[x] = 0;
    for (int32_t u = 1; u <= (int32_t)b->n; u++)
        if (b->ew[E(b, u, x)] > 0 && b->st[u] != x && b->S[b->st[u]] == 0)
            update_slack(b, u, x);
}

static void q_push(blossom_ws *b, int32_t x)
{
    if (x <= (int32_t)b->n) {
        b->q[b->qt] = x;
        b->qt = (b->qt + 1) % b->qcap;
        return;
    }
    for (int32_t i = 0; i < b->flen[x]; i++)
        q_push(b, b->flower[E(b, x, i)]);
}

static void set_st(blossom_ws *b, int32_t x, int32_t s)
{
    b->st[x] = s;
    if (x > (int32_t)b->n)
        for (int32_t i = 0; i < b->flen[x]; i++)
            set_st(b, b->flower[E(b, x, i)], s);
}

static void reverse(int32_t *a, int32_t lo, int32_t hi) /* [lo, hi) */
{
    for (hi--; lo < hi; lo++, hi--) {
        int32_t t = a[lo];
        a[lo] = a[hi];
        a[hi] = t;
    }
}

/* Position of xr in blossom bl's cycle, the cycle reversed if needed so that it is even. */
static int32_t get_pr(blossom_ws *b, int32_t bl, int32_t xr)
{
    int32_t *f = &b->flower[E(b, bl, 0)];
    int32_t pr = 0;
    while (f[pr] != xr)
        pr++;
    if (pr % 2 == 1) {
        reverse(f, 1, b->flen[bl]);
        return b->flen[bl] - pr;
    }
    return pr;
}

static void set_match(blossom_ws *b, int32_t u, int32_t v)
{
    size_t k = E(b, u, v);
    b->match[u] = b->ev[k];
    if (u <= (int32_t)b->n)
        return;
    int32_t xr = b->from[FROM(b, u, b->eu[k])];
    int32_t pr = get_pr(b, u, xr);
    int32_t *f = &b->flower[E(b, u, 0)];
    for (int32_t i = 0; i < pr; i++)
        set_match(b, f[i], f[i ^ 1]);
    set_match(b, xr, v);
    /* rotate left by pr */
    int32_t len = b->flen[u];
    for (int32_t i = 0; i < len; i++)
        b->tmp[i] = f[(i + pr) % len];
    memcpy(f, b->tmp, (size_t)len * sizeof *f);
}

static void augment(blossom_ws *b, int32_t u, int32_t v)
{
    for (;;) {
        int32_t xnv = b->st[b->match[u]];
        set_match(b, u, v);
        if (!xnv)
            return;
        set_match(b, xnv, b->st[b->pa[xnv]]);
        u = b->st[b->pa[xnv]];
        v = xnv;
    }
}

static int32_t get_lca(blossom_ws *b, int32_t u, int32_t v)
{
    for (++b->stamp; u || v;) {
        if (u) {
            if (b->vis[u] == b->stamp)
                return u;
            b->vis[u] = b->stamp;
            u = b->st[b->match[u]];
            if (u)
                u = b->st[b->pa[u]];
        }
        int32_t t = u;
        u = v;
        v = t;
    }
    return 0;
}

static void add_blossom(blossom_ws *b, int32_t u, int32_t lca, int32_t v)
{
    int32_t n = (int32_t)b->n;
    int32_t bl = n + 1;
    while (bl <= (int32_t)b->n_x && b->st[bl])
        ++bl;
    if (bl > (int32_t)b->n_x)
        ++b->n_x;
    b->lab[bl] = 0;
    b->S[bl] = 0;
    b->match[bl] = b->match[lca];
    int32_t *f = &b->flower[E(b, bl, 0)];
    int32_t len = 0;
    f[len++] = lca;
    for (int32_t x = u, y; x != lca; x = b->st[b->pa[y]]) {
        f[len++] = x;
        f[len++] = y = b->st[b->match[x]];
        q_push(b, y);
    }
    reverse(f, 1, len);
    for (int32_t x = v, y; x != lca; x = b->st[b->pa[y]]) {
        f[len++] = x;
        f[len++] = y = b->st[b->match[x]];
        q_push(b, y);
    }
    b->flen[bl] = len;
    set_st(b, bl, bl);
    for (int32_t x = 1; x <= (int32_t)b->n_x; x++) {
        b->ew[E(b, bl, x)] = b->ew[E(b, x, bl)] = 0;
    }
    for (int32_t x = 1; x <= n; x++)
        b->from[FROM(b, bl, x)] = 0;
    for (int32_t i = 0; i < len; i++) {
        int32_t xs = f[i];
        for (int32_t x = 1; x <= (int32_t)b->n_x; x++)
            if (b->ew[E(b, bl, x)] == 0 || delta(b, xs, x) < delta(b, bl, x)) {
                size_t k1 = E(b, bl, x), k2 = E(b, xs, x), k3 = E(b, x, bl), k4 = E(b, x, xs);
                b->eu[k1] = b->eu[k2];
                b->ev[k1] = b->ev[k2];
                b->ew[k1] = b->ew[k2];
                b->eu[k3] = b->eu[k4];
                b->ev[k3] = b->ev[k4];
                b->ew[k3] = b->ew[k4];
            }
        for (int32_t x = 1; x <= n; x++)
            if (b->from[FROM(b, xs, x)])
                b->from[FROM(b, bl, x)] = xs;
    }
    set_slack(b, bl);
}

static void expand_blossom(blossom_ws *b, int32_t bl)
{
    int32_t *f = &b->flower[E(b, bl, 0)];
    for (int32_t i = 0; i < b->flen[bl]; i++)
        set_st(b, f[i], f[i]);
    int32_t xr = b->from[FROM(b, bl, b->eu[E(b, bl, b->pa[bl])])];
    int32_t pr = get_pr(b, bl, xr);
    for (int32_t i = 0; i < pr; i += 2) {
        int32_t xs = f[i], xns = f[i + 1];
        b->pa[xs] = b->eu[E(b, xns, xs)];
        b->S[xs] = 1;
        b->S[xns] = 0;
        b->slack[xs] = 0;
        set_slack(b, xns);
        q_push(b, xns);
    }
    b->S[xr] = 1;
    b->pa[xr] = b->pa[bl];
    for (int32_t i = pr + 1; i < b->flen[bl]; i++) {
        int32_t xs = f[i];
        b->S[xs] = -1;
        set_slack(b, xs);
    }
    b->st[bl] = 0;
}

/* An edge (x, y) of zero slack was found; true when it completed an augmenting path. */
static bool on_found_edge(blossom_ws *b, int32_t x, int32_t y)
{
    size_t k = E(b, x, y);
    int32_t u = b->st[b->eu[k]], v = b->st[b->ev[k]];
    if (b->S[v] == -1) {
        b->pa[v] = b->eu[k];
        b->S[v] = 1;
        int32_t nu = b->st[b->match[v]];
        b->slack[v] = b->slack[nu] = 0;
        b->S[nu] = 0;
        q_push(b, nu);
    } else if (b->S[v] == 0) {
        int32_t lca = get_lca(b, u, v);
        if (!lca) {
            augment(b, u, v);
            augment(b, v, u);
            return true;
        }
        add_blossom(b, u, lca, v);
    }
    return false;
}

static bool matching(blossom_ws *b)
{
    int32_t n = (int32_t)b->n, nx;
    for (int32_t x = 1; x <= (int32_t)b->n_x; x++) {
        b->S[x] = -1;
        b->slack[x] = 0;
    }
    b->qh = b->qt = 0;
    for (int32_t x = 1; x <= (int32_t)b->n_x; x++)
        if (b->st[x] == x && !b->match[x]) {
            b->pa[x] = 0;
            b->S[x] = 0;
            q_push(b, x);
        }
    if (b->qh == b->qt)
        return false;
    for (;;) {
        while (b->qh != b->qt) {
            int32_t u = b->q[b->qh];
            b->qh = (b->qh + 1) % b->qcap;
            if (b->S[b->st[u]] == 1)
                continue;
            /* Between two vertices (not blossoms) the stored edge is the original one,
             * so its slack is read directly; st[u] is read each time, as a blossom may
             * form around u during the scan. */
            const int64_t *row = &b->ew[E(b, u, 0)];
            int64_t lu = b->lab[u]; /* duals change only between scans */
            for (int32_t v = 1; v <= n; v++)
                if (row[v] > 0 && b->st[u] != b->st[v]) {
                    if (lu + b->lab[v] - row[v] * 2 == 0) {
                        if (on_found_edge(b, u, v))
                            return true;
                    } else
                        update_slack(b, u, b->st[v]);
                }
        }
        int64_t d = INT64_MAX;
        nx = (int32_t)b->n_x;
        for (int32_t bl = n + 1; bl <= nx; bl++)
            if (b->st[bl] == bl && b->S[bl] == 1 && b->lab[bl] / 2 < d)
                d = b->lab[bl] / 2;
        for (int32_t x = 1; x <= nx; x++)
            if (b->st[x] == x && b->slack[x]) {
                int64_t e = delta(b, b->slack[x], x);
                if (b->S[x] == -1 && e < d)
                    d = e;
                else if (b->S[x] == 0 && e / 2 < d)
                    d = e / 2;
            }
        /* An even vertex whose dual would reach 0 ends the search: the matching is
         * optimal (checked before any dual moves, so none overflows). */
        for (int32_t u = 1; u <= n; u++)
            if (b->S[b->st[u]] == 0 && b->lab[u] <= d)
                return false;
        for (int32_t u = 1; u <= n; u++) {
            if (b->S[b->st[u]] == 0)
                b->lab[u] -= d;
            else if (b->S[b->st[u]] == 1)
                b->lab[u] += d;
        }
        for (int32_t bl = n + 1; bl <= nx; bl++)
            if (b->st[bl] == bl) {
                if (b->S[bl] == 0)
                    b->lab[bl] += d * 2;
                else if (b->S[bl] == 1)
                    b->lab[bl] -= d * 2;
            }
        b->qh = b->qt = 0;
        for (int32_t x = 1; x <= nx; x++)
            if (b->st[x] == x && b->slack[x] && b->st[b->slack[x]] != x &&
                delta(b, b->slack[x], x) == 0)
                if (on_found_edge(b, b->slack[x], x))
                    return true;
        for (int32_t bl = n + 1; bl <= nx; bl++)
            if (b->st[bl] == bl && b->S[bl] == 1 && b->lab[bl] == 0)
                expand_blossom(b, bl);
    }
}

int64_t blossom_solve(blossom_ws *b, uint32_t *mate)
{
    int32_t n = (int32_t)b->n;
    b->n_x = b->n;
    int64_t wmax = 0;
    for (int32_t u = 0; u <= 2 * n; u++) {
        b->st[u] = u;
        b->flen[u] = 0;
        b->match[u] = 0;
        b->lab[u] = 0;
    }
    for (int32_t u = 1; u <= n; u++)
        for (int32_t v = 1; v <= n; v++) {
            b->from[FROM(b, u, v)] = u == v ? u : 0;
            if (b->ew[E(b, u, v)] > wmax)
                wmax = b->ew[E(b, u, v)];
        }
    for (int32_t u = 1; u <= n; u++)
        b->lab[u] = wmax;
    /* Warm start: with every dual at wmax, the edges of weight wmax are tight, so any set
     * of disjoint ones is a valid first matching (free vertices keep equal duals). */
    for (int32_t u = 1; u <= n; u++)
        for (int32_t v = u + 1; v <= n && !b->match[u]; v++)
            if (!b->match[v] && b->ew[E(b, u, v)] == wmax && wmax > 0) {
                b->match[u] = v;
                b->match[v] = u;
            }
    while (matching(b))
        ;
    int64_t total = 0;
    for (int32_t u = 1; u <= n; u++) {
        int32_t v = b->match[u];
        mate[u - 1] = v ? (uint32_t)(v - 1) : UINT32_MAX;
        if (v && v < u)
            total += b->ew[E(b, u, v)] / 2;
    }
    return total;
}
