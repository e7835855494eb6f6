/*
 * test_alloc.c: the allocation hook's growth on cache lines (sim_grow_lines): every
 * growth returns a line-aligned array that holds the data it held before, whatever
 * offset realloc's new block has; a failed growth (fault injection) leaves the block and
 * its data as they were; the block is one live allocation, freed by sim_free.
 */
#include "base/alloc.h"

#include "check.h"

#include <stdint.h>

int main(void)
{
    int64_t live = sim_alloc_live();
    void *raw = NULL;
    uint32_t *a = NULL;
    size_t n = 0;
    int misaligned = 0, lost = 0;
    /* From a few bytes to 8 MiB (past realloc's switch to page mappings), uneven sizes
     * so that the new block's offset changes from one growth to the next. */
    for (size_t want = 3; want < (size_t)2 << 20; want = want * 2 + 5) {
        uint32_t *b = sim_grow_lines(&raw, n * sizeof *a, want * sizeof *a);
        CHECK(b != NULL);
        if (!b)
            break;
        misaligned += ((uintptr_t)b % SIM_CACHE_LINE) != 0;
        for (size_t i = 0; i < n; i++)
            lost += b[i] != (uint32_t)(i * 2654435761u);
        for (size_t i = n; i < want; i++)
            b[i] = (uint32_t)(i * 2654435761u);
        a = b;
        n = want;
    }
    CHECK_EQ_I64(misaligned, 0);
    CHECK_EQ_I64(lost, 0);
    CHECK_EQ_I64(sim_alloc_live(), live + 1);
    /* A growth that fails leaves the block and what it holds. */
    void *before = raw;
    sim_alloc_fail_after(1);
    CHECK(sim_grow_lines(&raw, n * sizeof *a, 2 * n * sizeof *a) == NULL);
    sim_alloc_fail_after(0);
    CHECK(raw == before);
    int changed = 0;
    for (size_t i = 0; i < n; i++)
        changed += a[i] != (uint32_t)(i * 2654435761u);
    CHECK_EQ_I64(changed, 0);
    /* Shrinking the data below what it held is refused, as is a size that overflows. */
    CHECK(sim_grow_lines(&raw, n * sizeof *a, sizeof *a) == NULL);
    CHECK(sim_grow_lines(&raw, n * sizeof *a, SIZE_MAX - 8) == NULL);
    CHECK(raw == before);
    sim_free(raw);
    CHECK_EQ_I64(sim_alloc_live(), live);
    /* The k-th allocation and every later one fail, or the k-th alone. */
    for (int once = 0; once < 2; once++) {
        if (once)
            sim_alloc_fail_once(2);
        else
            sim_alloc_fail_after(2);
        void *p[4];
        for (int i = 0; i < 4; i++)
            p[i] = sim_malloc(8);
        sim_alloc_fail_after(0);
        CHECK(p[0] != NULL && p[1] == NULL);
        CHECK((p[2] != NULL) == (once == 1) && (p[3] != NULL) == (once == 1));
        for (int i = 0; i < 4; i++)
            sim_free(p[i]);
        CHECK_EQ_I64(sim_alloc_live(), live);
    }
    return check_done();
}
