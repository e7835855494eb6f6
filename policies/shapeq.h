/*
 * shapeq.h: per-tenant job queues split by shape. The queued jobs of one tenant and one
 * shape (sim_job.shape: jobs that fit exactly where each other fit) form a sublist kept
 * in the queue's order (key, then arrival; see tenantq.h), so a pass that finds a shape
 * unplaceable passes over all of its jobs at once: the tenant's next job that may start
 * is the first, in that order, of the heads of the sublists still in the pass. The
 * sublists are indexed tenantq queues, so an insertion costs O(log sublist). Each
 * tenant's sublists form a list; a hash finds the sublist of a (tenant, shape). A
 * sublist lives while it holds jobs (a pending job keeps its shape id, so the pair
 * names one sublist). Nothing is allocated per job: the tables grow geometrically at a
 * new peak of sublists or tenants.
 */
#ifndef POLICIES_SHAPEQ_H
#define POLICIES_SHAPEQ_H

#include "policies/tenantq.h"

#define SHAPEQ_NONE UINT32_MAX

typedef struct shapeq {
    tenantq q;    /* one queue per sublist, indexed by sublist id */
    uint32_t cap; /* sublist ids allocated */
    /* Per sublist: its tenant and shape, and its neighbours in the tenant's list. */
    uint32_t *tenant, *shape, *next, *prev;
    uint32_t *free_ids; /* sublist ids not in use (a stack of n_free) */
    uint32_t n_free;
    uint32_t *first; /* per tenant: its first sublist, SHAPEQ_NONE when it has none */
    uint64_t *busy;  /* a bit per tenant with a sublist (t_cap / 64 words) */
    uint32_t t_cap;
    uint32_t *slots; /* open addressing over (tenant, shape): sublist ids or NONE */
    uint32_t n_slots;
} shapeq;

/* Empty queues; links live link_offset bytes into each job's policy state. */
void shapeq_init(shapeq *q, size_t link_offset);
void shapeq_fini(shapeq *q);

/* Insert pending job id (not queued here) of `tenant` by (key, arrival) among its shape's
 * queued jobs. SIM_OK or SIM_ENOMEM (nothing changed then). */
int shapeq_insert(shapeq *q, const sim_view *v, uint32_t tenant, sim_job_id id, double key);
/* Remove a queued job; nothing when it is not queued. O(1), or O(probe) when its
 * sublist empties. */
void shapeq_remove(shapeq *q, const sim_view *v, sim_job_id id);

/* The tenant's sublists, in no particular order: first, then next, to SHAPEQ_NONE. */
static inline uint32_t shapeq_first(const shapeq *q, uint32_t tenant)
{
    return tenant < q->t_cap ? q->first[tenant] : SHAPEQ_NONE;
}

/* The first tenant at or after `from` with a queued job, or UINT32_MAX. */
static inline uint32_t shapeq_busy_from(const shapeq *q, uint32_t from)
{
    return sim_bits_next(q->busy, sim_bits_words(q->t_cap), from);
}

static inline uint32_t shapeq_next(const shapeq *q, uint32_t sub)
{
    return q->next[sub];
}

/* The first job of a sublist (never SIM_JOB_NONE for a listed sublist). */
static inline sim_job_id shapeq_head(const shapeq *q, uint32_t sub)
{
    return tenantq_head(&q->q, sub);
}

#endif
