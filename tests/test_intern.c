/*
 * test_intern.c: string interning — dense ids in first-seen order, aliases, case
 * folding, limits, growth past many rehashes, listing, and allocation failures.
 */
#include "base/alloc.h"
#include "base/intern.h"
#include "sim/types.h"

#include "check.h"

int main(void)
{
    sim_intern *t = sim_intern_create(false);
    CHECK(t != NULL);
    CHECK_EQ_I64(sim_intern_count(t), 1);
    CHECK_STR(sim_intern_name(t, 0), "");
    CHECK_EQ_I64(sim_intern_find(t, "", 0), 0);
    CHECK_EQ_I64(sim_intern_add(t, "alice", 5, 0), 1);
    CHECK_EQ_I64(sim_intern_add(t, "bob", 3, 0), 2);
    CHECK_EQ_I64(sim_intern_add(t, "alice", 5, 0), 1);
    CHECK_EQ_I64(sim_intern_find(t, "Alice", 5), SIM_INTERN_NONE);
    CHECK_EQ_I64(sim_intern_add(t, "carol", 5, 3), SIM_INTERN_NONE); /* limit reached */
    CHECK_EQ_I64(sim_intern_alias(t, "al", 2, 1), SIM_OK);
    CHECK_EQ_I64(sim_intern_find(t, "al", 2), 1);
    CHECK_EQ_I64(sim_intern_alias(t, "bob", 3, 1), SIM_EINVAL); /* name of another id */
    CHECK_EQ_I64(sim_intern_alias(t, "x", 1, 99), SIM_EINVAL);
    char buf[64];
    sim_intern_list(t, ", ", buf, sizeof buf);
    CHECK_STR(buf, "alice, bob");
    sim_intern_list(t, ", ", buf, 6);
    CHECK_STR(buf, "alice");
    /* Growth: ids stay dense and stable through many rehashes. */
    char name[32];
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof name, "tenant-%d", i);
        if (sim_intern_add(t, name, strlen(name), 0) != (uint32_t)(i + 3))
            bad++;
    }
    for (int i = 0; i < 20000; i += 7) {
        snprintf(name, sizeof name, "tenant-%d", i);
        if (sim_intern_find(t, name, strlen(name)) != (uint32_t)(i + 3) ||
            strcmp(sim_intern_name(t, (uint32_t)(i + 3)), name) != 0)
            bad++;
    }
    CHECK(bad == 0);
    CHECK_EQ_I64(sim_intern_find(t, "al", 2), 1);
    sim_intern_destroy(t);
    sim_intern_destroy(NULL);

    sim_intern *f = sim_intern_create(true);
    CHECK_EQ_I64(sim_intern_add(f, "V100M32", 7, 0), 1);
    CHECK_EQ_I64(sim_intern_find(f, "v100m32", 7), 1);
    CHECK_EQ_I64(sim_intern_alias(f, "v100M32", 7, 1), SIM_OK); /* same name folded */
    CHECK_STR(sim_intern_name(f, 1), "V100M32");
    sim_intern_destroy(f);

    /* Every allocation failure is reported and leaks nothing. */
    int64_t base = sim_alloc_live();
    int failed = 0;
    for (uint64_t k = 1; k < 40; k++) {
        sim_alloc_fail_after(k);
        sim_intern *g = sim_intern_create(false);
        bool ok = g != NULL;
        for (int i = 0; ok && i < 100; i++) {
            snprintf(name, sizeof name, "n%d", i);
            ok = sim_intern_add(g, name, strlen(name), 0) != SIM_INTERN_NONE;
        }
        sim_alloc_fail_after(0);
        failed += !ok;
        sim_intern_destroy(g);
        CHECK_EQ_I64(sim_alloc_live(), base);
    }
    CHECK(failed > 0);
    return check_done();
}
