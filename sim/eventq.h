/*
 * eventq.h: the event queue — an array-backed 4-ary min-heap ordered by (time, seq).
 * seq is an insertion counter, so the order is total and every run is deterministic.
 * Entries carry their payload inline (no pointer per event); the array grows
 * geometrically, so pushes allocate only when the queue reaches a new peak size.
 * Stale entries are not deleted one by one: their owner drops them by a version stamp
 * on pop, or all at once with sim_eventq_compact.
 */
#ifndef SIM_EVENTQ_H
#define SIM_EVENTQ_H

#include "sim/types.h"

typedef struct sim_event {
    sim_time t;       /* when */
    uint64_t seq;     /* tie-break: insertion order */
    uint32_t kind;    /* event kind (the engine's enum) */
    uint32_t obj;     /* job id, node id, ... */
    uint32_t version; /* the owner's version stamp at push time */
} sim_event;

typedef struct sim_eventq {
    sim_event *a;
    size_t n, cap;
    uint64_t next_seq;
} sim_eventq;

/* Storage provided by the caller; `cap` initial slots (>= 1). Returns SIM_ENOMEM. */
int sim_eventq_init(sim_eventq *q, size_t cap);
void sim_eventq_fini(sim_eventq *q);

/* Push an event; seq is assigned here. O(log n). Returns SIM_OK or SIM_ENOMEM. */
int sim_eventq_push(sim_eventq *q, sim_time t, uint32_t kind, uint32_t obj, uint32_t version);

/* Remove the least (t, seq) event into *out; false when empty. O(log n). */
bool sim_eventq_pop(sim_eventq *q, sim_event *out);

/* Keep only the events for which keep(ctx, ev) is true and restore the heap: O(n). The
 * events kept pop in the same order as before (the order is (t, seq), a total one). */
void sim_eventq_compact(sim_eventq *q, bool (*keep)(void *ctx, const sim_event *ev), void *ctx);

static inline bool sim_eventq_empty(const sim_eventq *q)
{
    return q->n == 0;
}

/* Time of the least event, SIM_TIME_NEVER when empty. */
static inline sim_time sim_eventq_top_time(const sim_eventq *q)
{
    return q->n ? q->a[0].t : SIM_TIME_NEVER;
}

#endif
