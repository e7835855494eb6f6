/*
 * eventq.c: 4-ary heap (children of i are 4i+1..4i+4), which halves the depth of a
 * binary heap and keeps siblings in one cache line pair. Keys are compared as
 * (t, seq); seq is unique, so no two events compare equal.
 */
#include "sim/eventq.h"

#include "base/alloc.h"

static inline bool less(const sim_event *x, const sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int sim_eventq_init(sim_eventq *q, size_t cap)
{
    q->n = 0;
    q->next_seq = 0;
    q->cap = cap ? cap : 1;
    q->a = sim_reallocarray(NULL, q->cap, sizeof *q->a);
    return q->a ? SIM_OK : SIM_ENOMEM;
}

void sim_eventq_fini(sim_eventq *q)
{
    sim_free(q->a);
    q->a = NULL;
    q->n = q->cap = 0;
}

int sim_eventq_push(sim_eventq *q, sim_time t, uint32_t kind, uint32_t obj, uint32_t version)
{
    if (q->n == q->cap) {
        sim_event *na = sim_reallocarray(q->a, q->cap * 2, sizeof *na);
        if (!na)
            return SIM_ENOMEM;
        q->a = na;
        q->cap *= 2;
    }
    sim_event e = {.t = t, .seq = q->next_seq++, .kind = kind, .obj = obj, .version = version};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!less(&e, &q->a[parent]))
            break;
        q->a[i] = q->a[parent];
        i = parent;
    }
    q->a[i] = e;
    return SIM_OK;
}

/* Put x at hole i of the first n entries and sift it down to its place. */
static void sift_down(sim_event *a, size_t n, size_t i, sim_event x)
{
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (less(&a[k], &a[best]))
                best = k;
        if (!less(&a[best], &x))
            break;
        a[i] = a[best];
        i = best;
    }
    a[i] = x;
}

bool sim_eventq_pop(sim_eventq *q, sim_event *out)
{
    if (q->n == 0)
        return false;
    *out = q->a[0];
    sim_event last = q->a[--q->n];
    if (q->n)
        sift_down(q->a, q->n, 0, last);
    return true;
}

void sim_eventq_compact(sim_eventq *q, bool (*keep)(void *ctx, const sim_event *ev), void *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++)
        if (keep(ctx, &q->a[i]))
            q->a[n++] = q->a[i];
    q->n = n;
    if (n < 2)
        return;
    for (size_t i = (n - 2) / 4 + 1; i-- > 0;)
        sift_down(q->a, n, i, q->a[i]);
}
