/*
 * tenantq.h: per-tenant job queues for multi-tenant policies, intrusive in the policy's
 * per-job state (a tenantq_link at a fixed offset), so queueing never allocates per
 * job. Each queue is a list kept sorted by (key, arrival order). A plain queue finds an
 * insertion's place by a walk from the tail: O(1) when keys grow with arrival time
 * (submit order), O(queue) at worst. An indexed queue also keeps its jobs in a treap
 * (Seidel and Aragon, 1996; priorities a hash of the job id, so runs repeat), found in
 * O(log queue) expected whatever the keys (predicted durations), removed in O(1)
 * expected. The table of queue heads grows geometrically when a new tenant appears (an
 * allocation at a new peak of tenants, not per event).
 */
#ifndef POLICIES_TENANTQ_H
#define POLICIES_TENANTQ_H

#include "base/bits.h"
#include "sim/view.h"

#include <stddef.h>

/* Membership of one job in one queue; lives in the policy's per-job state. */
typedef struct tenantq_link {
    uint32_t prev, next;      /* neighbours in the queue, SIM_JOB_NONE at the ends */
    uint32_t queue;           /* the queue it is in (valid while queued) */
    uint32_t up;              /* indexed queues: treap parent, or SIM_JOB_NONE */
    uint32_t left, right;     /* indexed queues: treap children, or SIM_JOB_NONE */
    double key;               /* sort key, smaller first; ties by the job's arrival order */
    bool queued;
} tenantq_link;

typedef struct tenantq {
    size_t link_offset; /* offset of the tenantq_link in the per-job state */
    bool indexed;       /* queues kept in treaps too */
    uint32_t cap;       /* queues allocated */
    uint32_t *head, *tail, *len;
    uint32_t *root; /* indexed only: per queue, its treap's root */
    uint64_t *busy; /* a bit per queue holding a job (cap / 64 words) */
} tenantq;

/* Empty table; links live link_offset bytes into each job's policy state; indexed:
 * queues found by treap (for keys that do not follow arrival), else by tail walk. */
void tenantq_init(tenantq *q, size_t link_offset, bool indexed);
void tenantq_fini(tenantq *q);

/* Make queues 0..n-1 exist. SIM_OK or SIM_ENOMEM (the table is unchanged then). */
int tenantq_reserve(tenantq *q, uint32_t n);

/* The link of job id. */
static inline tenantq_link *tenantq_link_of(const tenantq *q, const sim_view *v, sim_job_id id)
{
    return (tenantq_link *)(void *)((unsigned char *)sim_view_job_state(v, id) + q->link_offset);
}

/* Insert job id (not queued) into `queue` (< cap) at its place by (key, arrival).
 * Indexed: O(log queue) expected; plain: O(jobs after its place). */
void tenantq_insert(tenantq *q, const sim_view *v, uint32_t queue, sim_job_id id, double key);
/* Remove a queued job; nothing when it is not queued. O(1) (expected when indexed). */
void tenantq_remove(tenantq *q, const sim_view *v, sim_job_id id);

static inline uint32_t tenantq_head(const tenantq *q, uint32_t queue)
{
    return queue < q->cap ? q->head[queue] : SIM_JOB_NONE;
}

static inline uint32_t tenantq_len(const tenantq *q, uint32_t queue)
{
    return queue < q->cap ? q->len[queue] : 0;
}

/* The first queue at or after `from` that holds a job, or UINT32_MAX: a walk over the
 * queues holding jobs, in order, costs O(those + queues / 64). */
static inline uint32_t tenantq_busy_from(const tenantq *q, uint32_t from)
{
    return sim_bits_next(q->busy, sim_bits_words(q->cap), from);
}

static inline uint32_t tenantq_next(const tenantq *q, const sim_view *v, sim_job_id id)
{
    return tenantq_link_of(q, v, id)->next;
}

/* The treap priority of job id (larger nearer the root): a bijective mix of the id
 * (MurmurHash3's finaliser), so distinct jobs never tie. */
static inline uint32_t tenantq_prio(sim_job_id id)
{
    uint32_t x = id;
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/* An indexed queue's treap root, SIM_JOB_NONE when empty. */
static inline uint32_t tenantq_root(const tenantq *q, uint32_t queue)
{
    return q->indexed && queue < q->cap ? q->root[queue] : SIM_JOB_NONE;
}

#endif
