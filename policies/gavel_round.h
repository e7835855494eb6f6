/*
 * gavel_round.h: the choice of one round of Gavel's scheduling mechanism on one GPU type
 * (stanford-futuredata/gavel, scheduler/scheduler.py, _schedule_jobs_on_workers_helper):
 * the jobs in the order of their priority (the allocation over the fraction of the
 * type's time received), then deficit, then allocation, each from the largest down, ties
 * in arrival order (Gavel's sort is stable), and each job chosen in that order where its
 * scale factor still fits the type's GPUs left.
 */
#ifndef POLICIES_GAVEL_ROUND_H
#define POLICIES_GAVEL_ROUND_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A job's entry on one type. key is the order, smallest first, compared as unsigned
 * integers one after another: gavel_key_desc(priority), gavel_key_desc(deficit),
 * gavel_key_desc(allocation), arrival number. */
typedef struct gavel_entry {
    uint64_t key[4];
    uint32_t pos; /* the job's index in the caller's job list (and in pick) */
    uint32_t sf;  /* scale factor (the job's GPUs), or GAVEL_NOT_OK where the job may not
                   * run on the type (Gavel: its throughput there is 0) */
} gavel_entry;

#define GAVEL_NOT_OK UINT32_MAX

/* A key that orders doubles from the largest down as unsigned integers go up (no NaN;
 * -0 counts as +0, as == has it). */
static inline uint64_t gavel_key_desc(double x)
{
    uint64_t u;
    x += 0.0; /* -0 becomes +0 */
    memcpy(&u, &x, sizeof u);
    /* The bits of a non-negative double go up with its value, those of a negative one
     * down: flipped into one ascending order, then inverted. */
    return u >> 63 ? u : ~(u | UINT64_C(1) << 63);
}

/* Whether entry a comes before entry b. */
static inline bool gavel_entry_before(const gavel_entry *a, const gavel_entry *b)
{
    const uint64_t *x = a->key, *y = b->key;
    /* No branch on the data: ties of the first keys are common. */
    return (x[0] < y[0]) | ((x[0] == y[0]) &
                            ((x[1] < y[1]) | ((x[1] == y[1]) &
                                              ((x[2] < y[2]) | ((x[2] == y[2]) & (x[3] < y[3]))))));
}

/*
 * Choose among the n entries a of one type with `left` GPUs free: in the order of their
 * keys (which must differ, as the arrival numbers of distinct jobs do), each entry that
 * may run on the type, whose scale factor is at most the GPUs left and whose job was not
 * chosen on an earlier type (pick[pos] == 0) is chosen: pick[pos] = mark and its GPUs
 * are taken. Returns the GPUs left. Scale factors are at least 1 (gavel gives a job
 * without GPUs GAVEL_NOT_OK on every type); `left` is below GAVEL_NOT_OK. The entries
 * are reordered; *rng is the state of the pivots' generator (any value but 0; the
 * choice does not depend on it).
 *
 * Cost: expected O(n) comparisons for each step of gavel_round.c (a weighted quickselect
 * over the entries that could still be chosen); each step chooses at least one entry
 * and leaves fewer GPUs than the scale factor of the entry that stopped it, so no more
 * steps are made than there are distinct scale factors, plus one. On the benchmark
 * (jobs of 1 to 8 GPUs) 1.1 steps a round.
 */
uint32_t gavel_choose(gavel_entry *a, uint32_t n, uint32_t left, uint8_t *pick, uint8_t mark,
                      uint64_t *rng);

#endif
