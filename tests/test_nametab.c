/*
 * test_nametab.c: the index by name of base/nametab.h against a list of the names filed:
 * random inserts and erases of names from a small pool in tables of 8 to 64 slots, so
 * that probes collide and wrap around the end; after every operation each name of the
 * pool is found exactly where the list has it (or not at all), and every slot in use
 * lies on its entry's probe with no empty slot between.
 */
#include "base/nametab.h"

#include "check.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>

enum { POOL = 96 };
static char names[POOL][16];

static const char *name_of(const void *ctx, uint32_t idx)
{
    (void)ctx;
    return names[idx];
}

int main(void)
{
    for (int i = 0; i < POOL; i++)
        snprintf(names[i], sizeof names[i], "g%d", i);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 23);
    static uint32_t slots[64];
    bool filed[POOL];
    uint64_t wrong = 0, off_probe = 0, erased = 0;
    for (int round = 0; round < 200; round++) {
        uint32_t cap = 8u << gsl_rng_uniform_int(r, 4);
        nametab t = {slots, cap - 1};
        memset(slots, 0, sizeof slots);
        memset(filed, 0, sizeof filed);
        uint32_t n = 0;
        for (int op = 0; op < 400; op++) {
            uint32_t k = (uint32_t)gsl_rng_uniform_int(r, POOL);
            if (!filed[k] && n + 1 < cap && gsl_rng_uniform(r) < 0.55) {
                nametab_insert(&t, k, names[k]);
                filed[k] = true;
                n++;
            } else if (filed[k]) {
                nametab_erase(&t, k, names[k], name_of, NULL);
                filed[k] = false;
                n--;
                erased++;
            }
            for (uint32_t q = 0; q < POOL; q++)
                wrong += nametab_find(&t, names[q], name_of, NULL) != (filed[q] ? q : UINT32_MAX);
            uint32_t used = 0;
            for (uint32_t i = 0; i < cap; i++) {
                if (!slots[i])
                    continue;
                used++;
                for (uint32_t p = nametab_hash(names[slots[i] - 1]) & t.mask; p != i;
                     p = (p + 1) & t.mask)
                    off_probe += slots[p] == 0;
            }
            /* As many slots in use as names filed (else an insert may find no room). */
            CHECK_EQ_I64(used, n);
            if (used != n)
                break;
        }
    }
    CHECK_EQ_I64((int64_t)wrong, 0);
    CHECK_EQ_I64((int64_t)off_probe, 0);
    CHECK(erased > 10000);
    /* Erasing a name not filed changes nothing. */
    nametab t = {slots, 7};
    memset(slots, 0, 8 * sizeof *slots);
    nametab_insert(&t, 3, names[3]);
    nametab_erase(&t, 4, names[4], name_of, NULL);
    CHECK_EQ_I64(nametab_find(&t, names[3], name_of, NULL), 3);
    gsl_rng_free(r);
    return check_done();
}
