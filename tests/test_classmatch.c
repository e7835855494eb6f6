/*
 * test_classmatch: the class-level matching of policies/classmatch.c against Edmonds'
 * blossom on the whole graph (policies/blossom.cc, itself checked against exhaustive
 * search in test_blossom): random graphs of 1 to 9 classes of up to 40 twins each, dense
 * and sparse, few and many distinct weights (ties), thousands of seeds; the pairs it
 * returns must form a matching of the graph (no class over its count, pairs only on
 * edges) whose weight is the returned total, and that total must equal the blossom's.
 * Also hand-made cases with a known answer.
 */
#include "policies/blossom.h"
#include "policies/classmatch.h"

#include "check.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum { MAXC = 9, CAP = 360 };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t W[MAXC * MAXC];
static uint32_t count[MAXC], pairs[MAXC * MAXC], cls[CAP], mate[CAP];

/* The whole graph through the blossom. */
static int64_t whole(blossom_ws *b, uint32_t n)
{
    uint32_t nv = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t k = 0; k < count[a]; k++)
            cls[nv++] = a;
    if (nv < 2)
        return 0;
    blossom_reset(b, nv);
    for (uint32_t u = 0; u < nv; u++)
        for (uint32_t v = u + 1; v < nv; v++)
            if (W[cls[u] * n + cls[v]] > 0)
                blossom_set(b, u, v, W[cls[u] * n + cls[v]]);
    return blossom_solve(b, mate);
}

/* The pairs form a matching of the graph of that weight. */
static void check_pairs(uint32_t n, int64_t total)
{
    int64_t sum = 0;
    bool ok = true;
    for (uint32_t a = 0; a < n; a++) {
        uint64_t deg = 0;
        for (uint32_t b = 0; b < n; b++) {
            uint32_t p = pairs[a * n + b];
            if (p != pairs[b * n + a] || (p && W[a * n + b] <= 0) || (p && a == b && count[a] < 2))
                ok = false;
            deg += (uint64_t)p * (a == b ? 2 : 1);
            if (b >= a)
                sum += (int64_t)p * W[a * n + b];
        }
        if (deg > count[a])
            ok = false;
    }
    CHECK(ok);
    CHECK_EQ_I64(sum, total);
}

int main(void)
{
    blossom_ws *b = blossom_new(CAP);
    cmatch_ws *c = b ? cmatch_new(CAP, b) : NULL;
    CHECK(c != NULL);
    if (!c)
        return check_done();

    /* One class of 5 twins, weight 7: two pairs (14), one left. */
    W[0] = 7;
    count[0] = 5;
    CHECK_EQ_I64(cmatch_solve(c, 1, count, W, pairs), 14);
    CHECK_EQ_I64(pairs[0], 2);
    /* A single vertex has no loop. */
    count[0] = 1;
    CHECK_EQ_I64(cmatch_solve(c, 1, count, W, pairs), 0);
    CHECK_EQ_I64(pairs[0], 0);
    /* Three classes of one vertex, a triangle 5, 6, 4: the fractional optimum (7.5) is
     * not integral; the best matching takes the 6. */
    memset(W, 0, sizeof W);
    count[0] = count[1] = count[2] = 1;
    W[0 * 3 + 1] = W[1 * 3 + 0] = 5;
    W[1 * 3 + 2] = W[2 * 3 + 1] = 6;
    W[0 * 3 + 2] = W[2 * 3 + 0] = 4;
    CHECK_EQ_I64(cmatch_solve(c, 3, count, W, pairs), 6);
    CHECK_EQ_I64(pairs[1 * 3 + 2], 1);
    /* Two complementary classes of 30 and 10 (a-b 10, a-a 3, b-b 1): 10 a-b pairs and
     * 10 a-a pairs = 130. */
    memset(W, 0, sizeof W);
    count[0] = 30;
    count[1] = 10;
    W[0] = 3;
    W[1] = W[2] = 10;
    W[3] = 1;
    CHECK_EQ_I64(cmatch_solve(c, 2, count, W, pairs), 130);
    CHECK_EQ_I64(pairs[1], 10);
    CHECK_EQ_I64(pairs[0], 10);

    /* Random graphs against the whole-graph blossom. */
    uint32_t residual_max = 0, exact_rounded = 0, runs = 0;
    for (int seed = 0; seed < 3000; seed++) {
        uint32_t n = 1 + (uint32_t)(next() % MAXC);
        uint32_t maxcount = seed % 3 == 0 ? 4 : seed % 3 == 1 ? 12 : 40;
        uint32_t levels = seed % 4 == 0 ? 3 : 1000000; /* few weights: many ties */
        uint32_t density = (uint32_t)(next() % 4);     /* 0: complete; else some edges missing */
        uint32_t total = 0;
        for (uint32_t a = 0; a < n; a++) {
            count[a] = (uint32_t)(next() % (maxcount + 1));
            if (total + count[a] > CAP)
                count[a] = CAP - total;
            total += count[a];
        }
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t bb = a; bb < n; bb++) {
                int64_t wt = 1 + (int64_t)(next() % levels);
                if (density && next() % 4 < density)
                    wt = 0;
                W[a * n + bb] = W[bb * n + a] = wt;
            }
        int64_t got = cmatch_solve(c, n, count, W, pairs);
        check_pairs(n, got);
        CHECK_EQ_I64(got, whole(b, n));
        runs++;
        if (cmatch_residual(c) > residual_max)
            residual_max = cmatch_residual(c);
        exact_rounded += cmatch_residual(c) == 0;
    }
    printf("%u random graphs; largest residual %u vertices; %u solved without the blossom\n", runs,
           residual_max, exact_rounded);
    cmatch_free(c);
    blossom_free(b);
    return check_done();
}
