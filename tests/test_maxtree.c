/*
 * test_maxtree.c: the max tree of base/maxtree.h against a scan of the counts: on random
 * counts of random lengths (1 to 200 leaves, so powers of two and not; counts drawn from
 * few values so that ties and thresholds at a count abound), after building and after
 * random single changes, maxtree_first from every start and for every threshold is the
 * first index a scan finds, and every inner entry is the larger of its two; and
 * maxtree_first_hinted finds what a search from 0 finds while the leaves only fall.
 */
#include "base/maxtree.h"

#include "check.h"

#include <gsl/gsl_rng.h>

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    static uint32_t t[2 * 256], c[256];
    uint64_t wrong = 0, bad_inner = 0, asked = 0;
    CHECK_EQ_I64(maxtree_leaves(0), 1);
    CHECK_EQ_I64(maxtree_leaves(1), 1);
    CHECK_EQ_I64(maxtree_leaves(5), 8);
    CHECK_EQ_I64(maxtree_leaves(8), 8);
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + (uint32_t)gsl_rng_uniform_int(r, 200), L = maxtree_leaves(n);
        for (uint32_t i = 0; i < 2 * L; i++)
            t[i] = 0;
        for (uint32_t i = 0; i < n; i++)
            t[L + i] = c[i] = (uint32_t)gsl_rng_uniform_int(r, 5) * 2;
        maxtree_build(t, L);
        for (int step = 0; step < 20; step++) {
            if (step) {
                uint32_t i = (uint32_t)gsl_rng_uniform_int(r, n);
                c[i] = (uint32_t)gsl_rng_uniform_int(r, 5) * 2;
                maxtree_set(t, L, i, c[i]);
            }
            for (uint32_t i = 1; i < L; i++)
                bad_inner += t[i] != (t[2 * i] > t[2 * i + 1] ? t[2 * i] : t[2 * i + 1]);
            for (uint32_t from = 0; from <= L; from++)
                for (uint32_t want = 0; want <= 9; want++) {
                    uint32_t expect = UINT32_MAX;
                    for (uint32_t i = from; i < n && expect == UINT32_MAX; i++)
                        if (c[i] >= want)
                            expect = i;
                    /* Leaves past n hold 0, which a threshold of 0 finds. */
                    if (expect == UINT32_MAX && want == 0 && from < L)
                        expect = from;
                    wrong += maxtree_first(t, L, from, want) != expect;
                    asked++;
                }
        }
    }
    CHECK_EQ_I64(wrong, 0);
    CHECK_EQ_I64(bad_inner, 0);
    CHECK(asked > 1000000);

    /* maxtree_first_hinted while the leaves only fall (a first fit taking from the leaf
     * it finds): the leaf a search from 0 finds, for every threshold in turn. */
    uint64_t hinted_wrong = 0, hinted_asked = 0;
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + (uint32_t)gsl_rng_uniform_int(r, 200), L = maxtree_leaves(n);
        for (uint32_t i = 0; i < 2 * L; i++)
            t[i] = 0;
        for (uint32_t i = 0; i < n; i++)
            t[L + i] = (uint32_t)gsl_rng_uniform_int(r, 9);
        maxtree_build(t, L);
        uint32_t hint[9] = {0};
        for (int step = 0; step < 400; step++) {
            uint32_t want = 1 + (uint32_t)gsl_rng_uniform_int(r, 8);
            uint32_t expect = maxtree_first(t, L, 0, want);
            uint32_t got = maxtree_first_hinted(t, L, &hint[want], want);
            hinted_wrong += got != expect;
            hinted_asked++;
            if (got != UINT32_MAX && got < n)
                maxtree_set(t, L, got, t[L + got] - (uint32_t)gsl_rng_uniform_int(r, want + 1));
        }
    }
    CHECK_EQ_I64(hinted_wrong, 0);
    CHECK(hinted_asked > 100000);
    gsl_rng_free(r);
    return check_done();
}
