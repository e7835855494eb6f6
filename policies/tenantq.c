/*
 * tenantq.c: sorted intrusive per-tenant queues (see tenantq.h).
 */
#include "policies/tenantq.h"

#include "base/alloc.h"

#include <string.h>

void tenantq_init(tenantq *q, size_t link_offset)
{
    memset(q, 0, sizeof *q);
    q->link_offset = link_offset;
}

void tenantq_fini(tenantq *q)
{
    sim_free(q->head);
    sim_free(q->tail);
    sim_free(q->len);
    sim_free(q->busy);
    size_t off = q->link_offset;
    memset(q, 0, sizeof *q);
    q->link_offset = off;
}

int tenantq_reserve(tenantq *q, uint32_t n)
{
    if (n <= q->cap)
        return SIM_OK;
    uint32_t ncap = q->cap ? q->cap : 16;
    while (ncap < n) {
        if (ncap > UINT32_MAX / 2)
            return SIM_ENOMEM;
        ncap *= 2;
    }
    uint32_t *h = sim_reallocarray(q->head, ncap, sizeof *h);
    if (!h)
        return SIM_ENOMEM;
    q->head = h;
    uint32_t *t = sim_reallocarray(q->tail, ncap, sizeof *t);
    if (!t)
        return SIM_ENOMEM;
    q->tail = t;
    uint32_t *l = sim_reallocarray(q->len, ncap, sizeof *l);
    if (!l)
        return SIM_ENOMEM;
    q->len = l;
    if (!sim_bits_grow(&q->busy, q->cap, ncap))
        return SIM_ENOMEM;
    for (uint32_t i = q->cap; i < ncap; i++) {
        q->head[i] = q->tail[i] = SIM_JOB_NONE;
        q->len[i] = 0;
    }
    q->cap = ncap;
    return SIM_OK;
}

/* Whether job a goes before job b. */
static bool before(const sim_view *v, double ka, sim_job_id a, double kb, sim_job_id b)
{
    if (ka != kb)
        return ka < kb;
    return sim_view_job(v, a)->seq < sim_view_job(v, b)->seq;
}

void tenantq_insert(tenantq *q, const sim_view *v, uint32_t queue, sim_job_id id, double key)
{
    tenantq_link *l = tenantq_link_of(q, v, id);
    l->key = key;
    l->queue = queue;
    l->queued = true;
    /* Walk back from the tail to the last job that goes before this one. */
    uint32_t after = q->tail[queue];
    while (after != SIM_JOB_NONE) {
        const tenantq_link *la = tenantq_link_of(q, v, after);
        if (before(v, la->key, after, key, id))
            break;
        after = la->prev;
    }
    l->prev = after;
    l->next = after == SIM_JOB_NONE ? q->head[queue] : tenantq_link_of(q, v, after)->next;
    if (l->prev == SIM_JOB_NONE)
        q->head[queue] = id;
    else
        tenantq_link_of(q, v, l->prev)->next = id;
    if (l->next == SIM_JOB_NONE)
        q->tail[queue] = id;
    else
        tenantq_link_of(q, v, l->next)->prev = id;
    if (q->len[queue]++ == 0)
        sim_bits_set(q->busy, queue);
}

void tenantq_remove(tenantq *q, const sim_view *v, sim_job_id id)
{
    tenantq_link *l = tenantq_link_of(q, v, id);
    if (!l->queued)
        return;
    uint32_t queue = l->queue;
    if (l->prev == SIM_JOB_NONE)
        q->head[queue] = l->next;
    else
        tenantq_link_of(q, v, l->prev)->next = l->next;
    if (l->next == SIM_JOB_NONE)
        q->tail[queue] = l->prev;
    else
        tenantq_link_of(q, v, l->next)->prev = l->prev;
    if (--q->len[queue] == 0)
        sim_bits_clear(q->busy, queue);
    l->queued = false;
    l->prev = l->next = SIM_JOB_NONE;
}
