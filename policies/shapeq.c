/*
 * shapeq.c: per-tenant queues split by shape (see shapeq.h). The hash is open
 * addressing with linear probing and backward-shift deletion (Knuth, TAOCP vol. 3,
 * 6.4 Algorithm R), at most half full.
 */
#include "policies/shapeq.h"

#include "base/alloc.h"

#include <string.h>

void shapeq_init(shapeq *q, size_t link_offset)
{
    memset(q, 0, sizeof *q);
    tenantq_init(&q->q, link_offset, true);
}

void shapeq_fini(shapeq *q)
{
    tenantq_fini(&q->q);
    sim_free(q->tenant);
    sim_free(q->shape);
    sim_free(q->next);
    sim_free(q->prev);
    sim_free(q->free_ids);
    sim_free(q->first);
    sim_free(q->busy);
    sim_free(q->slots);
    size_t off = q->q.link_offset;
    memset(q, 0, sizeof *q);
    q->q.link_offset = off;
}

static uint32_t home(const shapeq *q, uint32_t tenant, uint32_t shape)
{
    uint64_t z = ((uint64_t)tenant << 32 | shape) * UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(z >> 32) & (q->n_slots - 1);
}

/* The slot of (tenant, shape), or the empty slot where it would go. */
static uint32_t find(const shapeq *q, uint32_t tenant, uint32_t shape)
{
    uint32_t mask = q->n_slots - 1;
    for (uint32_t i = home(q, tenant, shape);; i = (i + 1) & mask) {
        uint32_t s = q->slots[i];
        if (s == SHAPEQ_NONE || (q->tenant[s] == tenant && q->shape[s] == shape))
            return i;
    }
}

/* Room for sublists (doubling) and a hash twice their number, rebuilt from the
 * tenants' lists. */
static int grow(shapeq *q)
{
    if (q->cap > UINT32_MAX / 4)
        return SIM_ENOMEM;
    uint32_t ncap = q->cap ? 2 * q->cap : 16, nslots = 2 * ncap;
    uint32_t **arrays[] = {&q->tenant, &q->shape, &q->next, &q->prev, &q->free_ids};
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) {
        uint32_t *p = sim_reallocarray(*arrays[a], ncap, sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        *arrays[a] = p;
    }
    uint32_t *slots = sim_reallocarray(NULL, nslots, sizeof *slots);
    if (!slots || tenantq_reserve(&q->q, ncap) != SIM_OK) {
        sim_free(slots);
        return SIM_ENOMEM;
    }
    sim_free(q->slots);
    q->slots = slots;
    q->n_slots = nslots;
    memset(q->slots, 0xff, (size_t)nslots * sizeof *q->slots);
    for (uint32_t t = 0; t < q->t_cap; t++)
        for (uint32_t s = q->first[t]; s != SHAPEQ_NONE; s = q->next[s])
            q->slots[find(q, t, q->shape[s])] = s;
    /* New ids on the stack, the lowest on top. */
    for (uint32_t s = ncap; s-- > q->cap;)
        q->free_ids[q->n_free++] = s;
    q->cap = ncap;
    return SIM_OK;
}

static int grow_tenants(shapeq *q, uint32_t tenant)
{
    uint32_t ncap = q->t_cap ? q->t_cap : 16;
    while (ncap <= tenant) {
        if (ncap > UINT32_MAX / 2)
            return SIM_ENOMEM;
        ncap *= 2;
    }
    if (!sim_bits_grow(&q->busy, q->t_cap, ncap))
        return SIM_ENOMEM;
    uint32_t *f = sim_reallocarray(q->first, ncap, sizeof *f);
    if (!f)
        return SIM_ENOMEM;
    for (uint32_t t = q->t_cap; t < ncap; t++)
        f[t] = SHAPEQ_NONE;
    q->first = f;
    q->t_cap = ncap;
    return SIM_OK;
}

int shapeq_insert(shapeq *q, const sim_view *v, uint32_t tenant, sim_job_id id, double key)
{
    uint32_t shape = sim_view_job(v, id)->shape;
    if (tenant >= q->t_cap && grow_tenants(q, tenant) != SIM_OK)
        return SIM_ENOMEM;
    if (!q->n_free && grow(q) != SIM_OK)
        return SIM_ENOMEM;
    uint32_t i = find(q, tenant, shape), sub = q->slots[i];
    if (sub == SHAPEQ_NONE) {
        sub = q->free_ids[--q->n_free];
        q->slots[i] = sub;
        q->tenant[sub] = tenant;
        q->shape[sub] = shape;
        q->prev[sub] = SHAPEQ_NONE;
        q->next[sub] = q->first[tenant];
        if (q->next[sub] != SHAPEQ_NONE)
            q->prev[q->next[sub]] = sub;
        q->first[tenant] = sub;
        sim_bits_set(q->busy, tenant);
    }
    tenantq_insert(&q->q, v, sub, id, key);
    return SIM_OK;
}

void shapeq_remove(shapeq *q, const sim_view *v, sim_job_id id)
{
    const tenantq_link *l = tenantq_link_of(&q->q, v, id);
    if (!l->queued)
        return;
    uint32_t sub = l->queue;
    tenantq_remove(&q->q, v, id);
    if (tenantq_len(&q->q, sub))
        return;
    /* The sublist is empty: out of its tenant's list and of the hash. */
    if (q->prev[sub] != SHAPEQ_NONE)
        q->next[q->prev[sub]] = q->next[sub];
    else if ((q->first[q->tenant[sub]] = q->next[sub]) == SHAPEQ_NONE)
        sim_bits_clear(q->busy, q->tenant[sub]);
    if (q->next[sub] != SHAPEQ_NONE)
        q->prev[q->next[sub]] = q->prev[sub];
    uint32_t mask = q->n_slots - 1, i = find(q, q->tenant[sub], q->shape[sub]);
    for (uint32_t j = (i + 1) & mask; q->slots[j] != SHAPEQ_NONE; j = (j + 1) & mask) {
        uint32_t s = q->slots[j], k = home(q, q->tenant[s], q->shape[s]);
        /* The entry at j may move back to i when its home is not in (i, j]. */
        if (((j - k) & mask) >= ((j - i) & mask)) {
            q->slots[i] = s;
            i = j;
        }
    }
    q->slots[i] = SHAPEQ_NONE;
    q->free_ids[q->n_free++] = sub;
}
