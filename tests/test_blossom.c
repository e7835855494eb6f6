/*
 * test_blossom: the maximum-weight matching of policies/blossom.cc against an exhaustive
 * search, on random graphs of 1 to 12 vertices (dense and sparse, small and large
 * weights, many ties), thousands of seeds; and a few hand-made graphs.
 */
#include "policies/blossom.h"

#include "check.h"

#include <stdbool.h>
#include <stdint.h>

static uint64_t rng_state;

static uint64_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t W[12][12];

/* Best total weight of a matching over the vertices in mask (exhaustive). */
static int64_t brute(uint32_t n, uint32_t mask)
{
    if (!mask)
        return 0;
    uint32_t u = (uint32_t)__builtin_ctz(mask);
    uint32_t rest = mask & ~(1u << u);
    int64_t best = brute(n, rest); /* u unmatched */
    for (uint32_t v = u + 1; v < n; v++)
        if ((rest >> v & 1u) && W[u][v] > 0) {
            int64_t t = W[u][v] + brute(n, rest & ~(1u << v));
            if (t > best)
                best = t;
        }
    return best;
}

/* The matching is valid (symmetric, on edges) and its weight is what solve returned. */
static int64_t check_matching(uint32_t n, const uint32_t *mate, int64_t total)
{
    int64_t sum = 0;
    bool ok = true;
    for (uint32_t u = 0; u < n; u++) {
        if (mate[u] == UINT32_MAX)
            continue;
        uint32_t v = mate[u];
        if (v >= n || mate[v] != u || v == u || W[u][v] <= 0)
            ok = false;
        else if (u < v)
            sum += W[u][v];
    }
    CHECK(ok);
    CHECK_EQ_I64(sum, total);
    return sum;
}

int main(void)
{
    blossom_ws *b = blossom_new(12);
    CHECK(b != NULL);
    if (!b)
        return check_done();
    uint32_t mate[12];

    /* Hand-made: a triangle 0-1-2 with a pendant 3 on 2; the best takes 0-1 and 2-3. */
    memset(W, 0, sizeof W);
    blossom_reset(b, 4);
    int64_t hw[][3] = {{0, 1, 5}, {1, 2, 6}, {0, 2, 4}, {2, 3, 3}};
    for (size_t i = 0; i < 4; i++) {
        W[hw[i][0]][hw[i][1]] = W[hw[i][1]][hw[i][0]] = hw[i][2];
        blossom_set(b, (uint32_t)hw[i][0], (uint32_t)hw[i][1], hw[i][2]);
    }
    CHECK_EQ_I64(blossom_solve(b, mate), 8);
    CHECK_EQ_I64(mate[0], 1);
    CHECK_EQ_I64(mate[2], 3);
    /* Maximum weight, not cardinality: a heavy middle edge beats two light ones. */
    memset(W, 0, sizeof W);
    blossom_reset(b, 4);
    blossom_set(b, 0, 1, 2);
    blossom_set(b, 1, 2, 10);
    blossom_set(b, 2, 3, 2);
    W[0][1] = W[1][0] = 2;
    W[1][2] = W[2][1] = 10;
    W[2][3] = W[3][2] = 2;
    CHECK_EQ_I64(blossom_solve(b, mate), 10);
    CHECK_EQ_I64(mate[0], UINT32_MAX);
    CHECK_EQ_I64(mate[1], 2);
    /* A five-cycle with a chord (an odd cycle: a blossom must form). */
    memset(W, 0, sizeof W);
    blossom_reset(b, 6);
    int64_t cw[][3] = {{0, 1, 7}, {1, 2, 7}, {2, 3, 7}, {3, 4, 7}, {4, 0, 7}, {4, 5, 1}};
    for (size_t i = 0; i < 6; i++) {
        W[cw[i][0]][cw[i][1]] = W[cw[i][1]][cw[i][0]] = cw[i][2];
        blossom_set(b, (uint32_t)cw[i][0], (uint32_t)cw[i][1], cw[i][2]);
    }
    CHECK_EQ_I64(blossom_solve(b, mate), 15);

    /* Random graphs against the exhaustive search. */
    int mismatches = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 6000; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ull;
        uint32_t n = 1 + (uint32_t)(next() % 12);
        uint32_t density = 20 + (uint32_t)(next() % 81); /* percent of edges present */
        int64_t wmax = (next() & 1) ? 5 : 1000000;       /* many ties, or few */
        memset(W, 0, sizeof W);
        blossom_reset(b, n);
        for (uint32_t u = 0; u < n; u++)
            for (uint32_t v = u + 1; v < n; v++)
                if (next() % 100 < density) {
                    int64_t w = 1 + (int64_t)(next() % (uint64_t)wmax);
                    W[u][v] = W[v][u] = w;
                    blossom_set(b, u, v, w);
                }
        int64_t got = blossom_solve(b, mate);
        int64_t want = brute(n, (1u << n) - 1);
        check_matching(n, mate, got);
        if (got != want) {
            if (mismatches++ < 5)
                fprintf(stderr, "seed %llu n %u: blossom %lld, exhaustive %lld\n",
                        (unsigned long long)seed, n, (long long)got, (long long)want);
        }
        runs++;
    }
    CHECK_EQ_I64(mismatches, 0);
    CHECK_EQ_I64(runs, 6000);
    /* An edge given as (v, u) is {u, v}; weight 0 takes it out again. */
    blossom_reset(b, 3);
    blossom_set(b, 1, 0, 4);
    blossom_set(b, 2, 1, 9);
    blossom_set(b, 1, 2, 0);
    CHECK_EQ_I64(blossom_solve(b, mate), 4);
    CHECK_EQ_I64(mate[0], 1);
    CHECK_EQ_I64(mate[2], UINT32_MAX);
    blossom_free(b);
    return check_done();
}
