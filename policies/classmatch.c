/*
 * classmatch.c: maximum-weight matching over classes of twin vertices.
 *
 * Let the classes be the vertices of a small graph H with capacities count[a] and loops
 * (a, a) of weight w_aa where a class has two vertices or more. A matching of the whole
 * graph is, up to renaming twins, an integral b-matching m of H (m_ab pairs between a and
 * b, a loop counted twice at its class) and the other way round.
 *
 * 1. Fractional optimum. The transportation problem between a left and a right copy of
 *    the classes (supply and demand count[a], profit w_ab on every edge and loop, not
 *    necessarily saturated) is solved by successive shortest paths, stopping when no
 *    path gains; y is its integral optimum and x = (y + y^T) / 2 is a maximum-weight
 *    fractional b-matching of H (its value W(y) / 2 meets the dual bound sum count[a] u_a
 *    with u = (pi + rho) / 2 averaged from the optimal transportation duals, which is
 *    optimal because the problem is symmetric). Every edge in the support of x is tight
 *    for u: u_a + u_b = w_ab.
 * 2. f = floor(x) is an integral b-matching on tight edges; r_a = count[a] - deg_f(a)
 *    vertices of class a are left, R = sum r_a.
 * 3. Proximity. For any integral m, weight(m) = sum count[a] u_a - loss(m), loss(m) =
 *    sum over unmatched vertices of u + sum over matched pairs of their slack >= 0. Take
 *    an optimal m nearest to f (L1). Split m - f into trails alternating between pairs
 *    m has in excess and pairs f has in excess. A closed alternating trail could be
 *    switched back to f's pairs without raising the loss (f's pairs have no slack,
 *    degrees unchanged): none exists, so a trail visits no class three times (between the
 *    first and third visit lies an even closed alternating trail) and a trail uses each
 *    edge of f at most twice. A trail whose two ends both lack a pair in m could also be
 *    switched (the loss falls by the two ends' duals and the removed slack): each trail
 *    has an end where m has more pairs than f, and there are at most R such ends. So m
 *    keeps at least f_e - min(f_e, 2R) of f's pairs on every edge e.
 * 4. Those pairs are fixed; the vertices left (R plus two per freed pair) are matched
 *    exactly by the blossom on their twins' weights. Its optimum plus the fixed pairs is
 *    optimal for the whole graph.
 */
#include "policies/classmatch.h"

#include "base/alloc.h"

#include <stdbool.h>
#include <string.h>

#define INF INT64_MAX
#define CM_SMALL 64u

struct cmatch_ws {
    uint32_t cap; /* classes */
    blossom_ws *bl;
    blossom_ws *small;   /* for remainders of up to CM_SMALL vertices: denser in cache */
    int64_t *y;          /* cap x cap: transportation flow, left a to right b */
    uint32_t *sup, *dem; /* per class: left supply and right demand used */
    int64_t *dl, *dr;    /* shortest distances to left and right nodes */
    int32_t *pl, *pr;    /* predecessors: pl[a] = right node (-1: source), pr[b] = left */
    uint32_t *rc, *rv;   /* residual count per class, class of each residual vertex */
    uint32_t *mate;      /* blossom result */
    uint8_t *kept;       /* cap x cap: half edges on odd cycles */
    uint32_t *path;
    int32_t *pos;
    uint32_t residual;
};

cmatch_ws *cmatch_new(uint32_t cap, blossom_ws *bl)
{
    if (cap == 0 || !bl)
        return NULL;
    uint32_t nv = blossom_cap(bl);
    cmatch_ws *c = sim_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cap = cap;
    c->bl = bl;
    c->small = blossom_new(CM_SMALL);
    c->y = sim_calloc((size_t)cap * cap, sizeof *c->y);
    c->sup = sim_calloc(cap, sizeof *c->sup);
    c->dem = sim_calloc(cap, sizeof *c->dem);
    c->dl = sim_calloc(cap, sizeof *c->dl);
    c->dr = sim_calloc(cap, sizeof *c->dr);
    c->pl = sim_calloc(cap, sizeof *c->pl);
    c->pr = sim_calloc(cap, sizeof *c->pr);
    c->rc = sim_calloc(cap, sizeof *c->rc);
    c->rv = sim_calloc(nv, sizeof *c->rv);
    c->mate = sim_calloc(nv, sizeof *c->mate);
    c->kept = sim_calloc((size_t)cap * cap, sizeof *c->kept);
    c->path = sim_calloc(cap + 1, sizeof *c->path);
    c->pos = sim_calloc(cap, sizeof *c->pos);
    if (!c->y || !c->sup || !c->dem || !c->dl || !c->dr || !c->pl || !c->pr || !c->rc || !c->rv ||
        !c->mate || !c->kept || !c->path || !c->pos || !c->small) {
        cmatch_free(c);
        return NULL;
    }
    return c;
}

void cmatch_free(cmatch_ws *c)
{
    if (!c)
        return;
    blossom_free(c->small);
    sim_free(c->y);
    sim_free(c->sup);
    sim_free(c->dem);
    sim_free(c->dl);
    sim_free(c->dr);
    sim_free(c->pl);
    sim_free(c->pr);
    sim_free(c->rc);
    sim_free(c->rv);
    sim_free(c->mate);
    sim_free(c->kept);
    sim_free(c->path);
    sim_free(c->pos);
    sim_free(c);
}

uint32_t cmatch_residual(const cmatch_ws *c)
{
    return c->residual;
}

/* Weight of an edge of H: a loop needs two vertices in its class. */
static int64_t hw(uint32_t n, const uint32_t *count, const int64_t *w, uint32_t a, uint32_t b)
{
    if (a == b && count[a] < 2)
        return 0;
    return w[(size_t)a * n + b];
}

/* Step 1: maximum-profit transportation by successive shortest paths (Bellman-Ford on
 * the residual network: no negative cycle arises), augmenting by the bottleneck. */
static void transport(cmatch_ws *c, uint32_t n, const uint32_t *count, const int64_t *w)
{
    int64_t *y = c->y;
    memset(y, 0, (size_t)n * n * sizeof *y);
    memset(c->sup, 0, n * sizeof *c->sup);
    memset(c->dem, 0, n * sizeof *c->dem);
    for (;;) {
        for (uint32_t a = 0; a < n; a++) {
            c->dl[a] = c->sup[a] < count[a] ? 0 : INF;
            c->pl[a] = -1;
            c->dr[a] = INF;
            c->pr[a] = -1;
        }
        bool changed = true;
        while (changed) {
            changed = false;
            for (uint32_t a = 0; a < n; a++) {
                if (c->dl[a] == INF)
                    continue;
                for (uint32_t b = 0; b < n; b++) {
                    int64_t wt = hw(n, count, w, a, b);
                    if (wt > 0 && c->dl[a] - wt < c->dr[b]) {
                        c->dr[b] = c->dl[a] - wt;
                        c->pr[b] = (int32_t)a;
                        changed = true;
                    }
                }
            }
            for (uint32_t b = 0; b < n; b++) {
                if (c->dr[b] == INF)
                    continue;
                for (uint32_t a = 0; a < n; a++) {
                    if (y[(size_t)a * n + b] > 0 && c->dr[b] + hw(n, count, w, a, b) < c->dl[a]) {
                        c->dl[a] = c->dr[b] + hw(n, count, w, a, b);
                        c->pl[a] = (int32_t)b;
                        changed = true;
                    }
                }
            }
        }
        uint32_t end = UINT32_MAX;
        for (uint32_t b = 0; b < n; b++)
            if (c->dem[b] < count[b] && c->dr[b] < 0 &&
                (end == UINT32_MAX || c->dr[b] < c->dr[end]))
                end = b;
        if (end == UINT32_MAX)
            return;
        int64_t amt = count[end] - c->dem[end];
        uint32_t b = end, a;
        for (;;) {
            a = (uint32_t)c->pr[b];
            if (c->pl[a] < 0)
                break;
            uint32_t b2 = (uint32_t)c->pl[a];
            if (y[(size_t)a * n + b2] < amt)
                amt = y[(size_t)a * n + b2];
            b = b2;
        }
        if ((int64_t)(count[a] - c->sup[a]) < amt)
            amt = count[a] - c->sup[a];
        c->sup[a] += (uint32_t)amt;
        c->dem[end] += (uint32_t)amt;
        for (b = end;;) {
            a = (uint32_t)c->pr[b];
            y[(size_t)a * n + b] += amt;
            if (c->pl[a] < 0)
                break;
            uint32_t b2 = (uint32_t)c->pl[a];
            y[(size_t)a * n + b2] -= amt;
            b = b2;
        }
    }
}

/* The half edges of x (odd z_ab, a != b) are rounded along every even cycle and every
 * path they form, alternately up and down, until only odd cycles are left: degrees stay
 * (a path ends at classes whose degree is not an integer, hence not saturated), so the
 * moves are feasible both ways and the optimum's weight does not change; fewer vertices
 * are left over in step 2. */
static void round_even(cmatch_ws *c, uint32_t n)
{
    int64_t *z = c->y;
    uint8_t *kept = c->kept;
    memset(kept, 0, (size_t)n * n);
#define HALF(a, b) ((z[(size_t)(a)*n + (b)] & 1) && !kept[(size_t)(a)*n + (b)])
    for (;;) {
        /* Start at a class of odd half degree if any, else at any with a half edge. */
        uint32_t start = UINT32_MAX;
        for (uint32_t a = 0; a < n; a++) {
            uint32_t d = 0;
            for (uint32_t b = 0; b < n; b++)
                d += b != a && HALF(a, b);
            if (d && (start == UINT32_MAX || d % 2))
                start = a;
            if (d % 2)
                break;
        }
        if (start == UINT32_MAX)
            break;
        for (uint32_t a = 0; a < n; a++)
            c->pos[a] = -1;
        uint32_t len = 0, cur = start, prev = UINT32_MAX;
        c->path[len] = start;
        c->pos[start] = (int32_t)len++;
        for (;;) {
            uint32_t next = UINT32_MAX;
            for (uint32_t b = 0; b < n && next == UINT32_MAX; b++)
                if (b != cur && b != prev && HALF(cur, b))
                    next = b;
            uint32_t from = 0, to = len - 1;
            bool cycle = false;
            if (next != UINT32_MAX && c->pos[next] >= 0) {
                from = (uint32_t)c->pos[next];
                cycle = true;
            } else if (next != UINT32_MAX) {
                prev = cur;
                cur = next;
                c->path[len] = cur;
                c->pos[cur] = (int32_t)len++;
                continue;
            }
            /* The path from..to, closed back to path[from] when a cycle. */
            uint32_t edges = to - from + (cycle ? 1 : 0);
            for (uint32_t i = 0; i < edges; i++) {
                uint32_t a = c->path[from + i];
                uint32_t b = from + i + 1 <= to ? c->path[from + i + 1] : c->path[from];
                if (cycle && edges % 2) {
                    kept[(size_t)a * n + b] = kept[(size_t)b * n + a] = 1;
                    continue;
                }
                int64_t d = i % 2 ? -1 : 1;
                z[(size_t)a * n + b] += d;
                z[(size_t)b * n + a] += d;
            }
            break;
        }
    }
#undef HALF
}

uint32_t cmatch_prepare(cmatch_ws *c, uint32_t n, const uint32_t *count, const int64_t *w,
                        uint32_t *pairs)
{
    c->residual = 0;
    if (n == 0)
        return 0;
    transport(c, n, count, w);
    /* z = y + y^T (2x; a loop keeps y_aa = 2 x_aa), then rounded where that keeps it
     * optimal (round_even). */
    int64_t *z = c->y;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            z[(size_t)a * n + b] = z[(size_t)b * n + a] =
                z[(size_t)a * n + b] + z[(size_t)b * n + a];
    round_even(c, n);
    /* Step 2: f = floor(z / 2), into pairs; R. */
    uint64_t R = 0;
    for (uint32_t a = 0; a < n; a++) {
        uint64_t deg = 0;
        for (uint32_t b = 0; b < n; b++) {
            int64_t f = z[(size_t)a * n + b] / 2;
            pairs[(size_t)a * n + b] = (uint32_t)f;
            deg += (uint64_t)f * (a == b ? 2 : 1);
        }
        R += count[a] - deg;
    }
    /* Step 3: free min(f_e, 2R) pairs of every edge, min(f_e, R) of a loop (a trail
     * that takes a loop spends both its visits of the class on it). */
    for (uint32_t a = 0; a < n; a++)
        c->rc[a] = count[a];
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a; b < n; b++) {
            uint32_t *p = &pairs[(size_t)a * n + b];
            uint64_t bound = a == b ? R : 2 * R;
            uint32_t freed = *p < bound ? *p : (uint32_t)bound;
            *p -= freed;
            pairs[(size_t)b * n + a] = *p;
            c->rc[a] -= *p;
            c->rc[b] -= *p;
        }
    for (uint32_t a = 0; a < n; a++)
        c->residual += c->rc[a];
    return c->residual;
}

const uint32_t *cmatch_left(const cmatch_ws *c)
{
    return c->rc;
}

bool cmatch_finish(cmatch_ws *c, uint32_t n, const int64_t *w, uint32_t *pairs)
{
    /* Step 4: the blossom on what is left. */
    uint32_t nr = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t k = 0; k < c->rc[a]; k++)
            c->rv[nr++] = a;
    if (nr < 2)
        return true;
    bool any = false;
    blossom_ws *bl = nr <= CM_SMALL ? c->small : c->bl;
    blossom_reset(bl, nr);
    for (uint32_t u = 0; u < nr; u++)
        for (uint32_t v = u + 1; v < nr; v++) {
            int64_t wt = w[(size_t)c->rv[u] * n + c->rv[v]];
            if (wt > 0) {
                blossom_set(bl, u, v, wt);
                any = true;
            }
        }
    if (!any)
        return true;
    if (blossom_solve(bl, c->mate) < 0)
        return false;
    for (uint32_t u = 0; u < nr; u++) {
        uint32_t v = c->mate[u];
        if (v == UINT32_MAX || v < u)
            continue;
        uint32_t a = c->rv[u], b = c->rv[v];
        pairs[(size_t)a * n + b]++;
        if (a != b)
            pairs[(size_t)b * n + a]++;
    }
    return true;
}

int64_t cmatch_solve(cmatch_ws *c, uint32_t n, const uint32_t *count, const int64_t *w,
                     uint32_t *pairs)
{
    cmatch_prepare(c, n, count, w, pairs);
    if (!cmatch_finish(c, n, w, pairs))
        return -1;
    int64_t total = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a; b < n; b++)
            total += (int64_t)pairs[(size_t)a * n + b] * w[(size_t)a * n + b];
    return total;
}
