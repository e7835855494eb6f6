/*
 * test_eventq.c: the heap pops in non-decreasing (time, seq) order under random pushes
 * and interleaved pops, checked against a sorted reference; equal times pop in push order;
 * compaction keeps exactly the events asked for, in the same pop order.
 */
#include "sim/eventq.h"

#include "check.h"

#include <stdlib.h>

typedef struct ref {
    sim_time t;
    uint64_t seq;
} ref;

static int cmp_ref(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keep the events whose obj is not a multiple of *ctx. */
static bool keep_not_multiple(void *ctx, const sim_event *ev)
{
    return ev->obj % *(uint32_t *)ctx != 0;
}

/* Random pushes with pops between them, then a compaction that drops every event whose
 * obj is a multiple of m: what pops after it is the reference less those, in order. */
static void test_compact(void)
{
    for (int round = 0; round < 40; round++) {
        sim_eventq q;
        CHECK(sim_eventq_init(&q, 1) == SIM_OK);
        size_t n = (size_t)(rand() % 2000) + 1, n_ref = 0;
        ref *r = malloc(n * sizeof *r);
        for (size_t i = 0; i < n; i++) {
            r[n_ref].t = rand() % (round % 2 ? 10 : 100000);
            r[n_ref].seq = i;
            CHECK(sim_eventq_push(&q, r[n_ref].t, 1, (uint32_t)i, 0) == SIM_OK);
            n_ref++;
        }
        qsort(r, n_ref, sizeof *r, cmp_ref);
        size_t popped = (size_t)rand() % (n / 2 + 1), bad = 0;
        for (size_t i = 0; i < popped; i++) {
            sim_event e;
            if (!sim_eventq_pop(&q, &e) || e.seq != r[i].seq)
                bad++;
        }
        uint32_t m = (uint32_t)(round % 5) + 1; /* m = 1 drops everything */
        sim_eventq_compact(&q, keep_not_multiple, &m);
        for (size_t i = 1; i < q.n; i++) { /* every entry after its parent */
            const sim_event *c = &q.a[i], *p = &q.a[(i - 1) / 4];
            if (c->t < p->t || (c->t == p->t && c->seq < p->seq))
                bad++;
        }
        size_t want = 0;
        for (size_t i = popped; i < n_ref; i++) {
            if (r[i].seq % m == 0)
                continue;
            sim_event e;
            if (!sim_eventq_pop(&q, &e) || e.seq != r[i].seq || e.t != r[i].t)
                bad++;
            want++;
        }
        CHECK_EQ_I64((int64_t)bad, 0);
        CHECK(sim_eventq_empty(&q));
        CHECK(m > 1 || want == 0);
        free(r);
        sim_eventq_fini(&q);
    }
}

int main(void)
{
    srand(12345);
    for (int round = 0; round < 50; round++) {
        sim_eventq q;
        CHECK(sim_eventq_init(&q, 1) == SIM_OK);
        size_t n = (size_t)(rand() % 3000) + 1;
        ref *r = malloc(n * sizeof *r);
        /* Narrow time range forces many ties. */
        for (size_t i = 0; i < n; i++) {
            r[i].t = rand() % (round % 2 ? 10 : 100000);
            r[i].seq = i;
            CHECK(sim_eventq_push(&q, r[i].t, 1, (uint32_t)i, 0) == SIM_OK);
        }
        qsort(r, n, sizeof *r, cmp_ref);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            sim_event e;
            if (!sim_eventq_pop(&q, &e) || e.t != r[i].t || e.seq != r[i].seq || e.obj != r[i].seq)
                bad++;
        }
        CHECK(bad == 0);
        CHECK(sim_eventq_empty(&q));
        free(r);
        sim_eventq_fini(&q);
    }
    /* Interleaved pushes and pops never go back in time for pushes at or after the
     * last popped time, as the engine does. */
    sim_eventq q;
    sim_eventq_init(&q, 4);
    sim_time last = 0;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        if (rand() % 3 && !sim_eventq_empty(&q)) {
            sim_event e;
            sim_eventq_pop(&q, &e);
            if (e.t < last)
                bad++;
            last = e.t;
        } else {
            sim_eventq_push(&q, last + rand() % 1000, 1, 0, 0);
        }
    }
    CHECK(bad == 0);
    CHECK_EQ_I64(sim_eventq_top_time(&q) >= last || sim_eventq_empty(&q), 1);
    sim_eventq_fini(&q);
    sim_eventq empty;
    sim_eventq_init(&empty, 1);
    CHECK_EQ_I64(sim_eventq_top_time(&empty), SIM_TIME_NEVER);
    sim_eventq_fini(&empty);
    test_compact();
    return check_done();
}
