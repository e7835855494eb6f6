/*
 * tenantq.c: sorted intrusive per-tenant queues (see tenantq.h).
 */
#include "policies/tenantq.h"

#include "base/alloc.h"

#include <string.h>

void tenantq_init(tenantq *q, size_t link_offset, bool indexed)
{
    memset(q, 0, sizeof *q);
    q->link_offset = link_offset;
    q->indexed = indexed;
}

void tenantq_fini(tenantq *q)
{
    sim_free(q->head);
    sim_free(q->tail);
    sim_free(q->len);
    sim_free(q->root);
    sim_free(q->busy);
    size_t off = q->link_offset;
    bool indexed = q->indexed;
    memset(q, 0, sizeof *q);
    q->link_offset = off;
    q->indexed = indexed;
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
    if (q->indexed) {
        uint32_t *r = sim_reallocarray(q->root, ncap, sizeof *r);
        if (!r)
            return SIM_ENOMEM;
        q->root = r;
    }
    if (!sim_bits_grow(&q->busy, q->cap, ncap))
        return SIM_ENOMEM;
    for (uint32_t i = q->cap; i < ncap; i++) {
        q->head[i] = q->tail[i] = SIM_JOB_NONE;
        if (q->indexed)
            q->root[i] = SIM_JOB_NONE;
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

/*
 * Put job id into queue's treap; returns the last job that goes before it (its
 * predecessor), or SIM_JOB_NONE. Down from the root while the nodes' priorities exceed
 * its own, then the subtree found is split by its key into its two children: the walk
 * is the search path of its key, so the last node it passed on the left is the
 * predecessor.
 */
static uint32_t treap_insert(tenantq *q, const sim_view *v, uint32_t queue, sim_job_id id)
{
    tenantq_link *l = tenantq_link_of(q, v, id);
    uint32_t prio = tenantq_prio(id), pred = SIM_JOB_NONE, up = SIM_JOB_NONE;
    uint32_t *slot = &q->root[queue];
    while (*slot != SIM_JOB_NONE && tenantq_prio(*slot) > prio) {
        up = *slot;
        tenantq_link *t = tenantq_link_of(q, v, up);
        if (before(v, t->key, up, l->key, id)) {
            pred = up;
            slot = &t->right;
        } else {
            slot = &t->left;
        }
    }
    uint32_t sub = *slot;
    *slot = id;
    l->up = up;
    /* The split: ls and rs are the slots that take the next node less or greater than
     * the key, under lp and rp. */
    uint32_t *ls = &l->left, *rs = &l->right, lp = id, rp = id;
    while (sub != SIM_JOB_NONE) {
        tenantq_link *t = tenantq_link_of(q, v, sub);
        if (before(v, t->key, sub, l->key, id)) {
            *ls = sub;
            t->up = lp;
            lp = pred = sub;
            ls = &t->right;
            sub = t->right;
        } else {
            *rs = sub;
            t->up = rp;
            rp = sub;
            rs = &t->left;
            sub = t->left;
        }
    }
    *ls = *rs = SIM_JOB_NONE;
    return pred;
}

/* Take job id out of its queue's treap: its children merged in its place. */
static void treap_remove(tenantq *q, const sim_view *v, sim_job_id id)
{
    const tenantq_link *l = tenantq_link_of(q, v, id);
    uint32_t up = l->up, a = l->left, b = l->right;
    uint32_t *slot = &q->root[l->queue];
    if (up != SIM_JOB_NONE) {
        tenantq_link *p = tenantq_link_of(q, v, up);
        slot = p->left == id ? &p->left : &p->right;
    }
    while (a != SIM_JOB_NONE && b != SIM_JOB_NONE) {
        /* The root of the merge is the child of larger priority; the rest of the merge
         * goes under it, on the side facing the other. */
        uint32_t x = tenantq_prio(a) > tenantq_prio(b) ? a : b;
        tenantq_link *t = tenantq_link_of(q, v, x);
        *slot = x;
        t->up = up;
        up = x;
        if (x == a) {
            slot = &t->right;
            a = t->right;
        } else {
            slot = &t->left;
            b = t->left;
        }
    }
    uint32_t rest = a != SIM_JOB_NONE ? a : b;
    *slot = rest;
    if (rest != SIM_JOB_NONE)
        tenantq_link_of(q, v, rest)->up = up;
}

void tenantq_insert(tenantq *q, const sim_view *v, uint32_t queue, sim_job_id id, double key)
{
    tenantq_link *l = tenantq_link_of(q, v, id);
    l->key = key;
    l->queue = queue;
    l->queued = true;
    uint32_t after;
    if (q->indexed) {
        after = treap_insert(q, v, queue, id);
    } else {
        /* Walk back from the tail to the last job that goes before this one. */
        after = q->tail[queue];
        while (after != SIM_JOB_NONE) {
            const tenantq_link *la = tenantq_link_of(q, v, after);
            if (before(v, la->key, after, key, id))
                break;
            after = la->prev;
        }
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
    if (q->indexed)
        treap_remove(q, v, id);
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
