/*
 * test_shapeq.c: per-tenant queues split by shape, against a plain model. Random
 * inserts and removals (many tenants and shapes, so the tables and the hash grow, and
 * sublists empty and come back); after each step every tenant's list names exactly the
 * shapes it has queued jobs of, once each, and each sublist holds exactly those jobs in
 * (key, arrival) order; the walks over the tenants and the sublists holding jobs
 * (shapeq_busy_from, tenantq_busy_from) name exactly those, in order; and each
 * sublist's treap holds its jobs in the same order (in order of a walk from left to
 * right), each under a parent of larger priority that it names as its own.
 */
#include "policies/shapeq.h"

#include "check.h"

#include <stddef.h>

enum { JOBS = 3000, TENANTS = 150, SHAPES = 37, STEPS = 40000 };

typedef struct jstate {
    uint64_t pad; /* the link need not come first */
    tenantq_link sub;
} jstate;

static sim_job jobs[JOBS];
static jstate st[JOBS];
static uint32_t tenant_of[JOBS];
static double key_of[JOBS];
static bool in_q[JOBS];

static uint64_t rng = 88172645463325252u;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static bool before(uint32_t a, uint32_t b)
{
    return key_of[a] != key_of[b] ? key_of[a] < key_of[b] : jobs[a].seq < jobs[b].seq;
}

/* Subtree x of a treap (its parent up) against the list from *at on, which it must match
 * in order; advances *at past it. Returns the number of mismatches. */
static int verify_treap(const tenantq *q, const sim_view *v, uint32_t x, uint32_t up, uint32_t *at,
                        uint32_t depth)
{
    if (x == SIM_JOB_NONE)
        return 0;
    if (depth > JOBS)
        return 1; /* a cycle */
    const tenantq_link *l = tenantq_link_of(q, v, x);
    int bad = l->up != up || (up != SIM_JOB_NONE && tenantq_prio(up) < tenantq_prio(x));
    bad += verify_treap(q, v, l->left, x, at, depth + 1);
    if (*at != x)
        bad++;
    else
        *at = l->next;
    return bad + verify_treap(q, v, l->right, x, at, depth + 1);
}

/* Everything the queues say against the model; returns the number of mismatches. */
static int verify(const shapeq *q, const sim_view *v)
{
    int bad = 0;
    static uint32_t expect[JOBS];
    uint32_t busy = shapeq_busy_from(q, 0);
    for (uint32_t t = 0; t < TENANTS; t++) {
        bool seen[SHAPES] = {false};
        uint32_t listed = 0;
        for (uint32_t b = shapeq_first(q, t); b != SHAPEQ_NONE; b = shapeq_next(q, b)) {
            uint32_t sh = q->shape[b];
            if (q->tenant[b] != t || sh >= SHAPES || seen[sh]) {
                bad++;
                continue;
            }
            seen[sh] = true;
            /* The model's jobs of (t, sh), sorted. */
            uint32_t n = 0;
            for (uint32_t i = 0; i < JOBS; i++)
                if (in_q[i] && tenant_of[i] == t && jobs[i].shape == sh) {
                    uint32_t k = n++;
                    while (k > 0 && before(i, expect[k - 1])) {
                        expect[k] = expect[k - 1];
                        k--;
                    }
                    expect[k] = i;
                }
            uint32_t k = 0;
            for (sim_job_id id = shapeq_head(q, b); id != SIM_JOB_NONE;
                 id = tenantq_next(&q->q, v, id))
                bad += k >= n || expect[k++] != id;
            bad += k != n || n == 0;
            uint32_t at = shapeq_head(q, b);
            bad += verify_treap(&q->q, v, tenantq_root(&q->q, b), SIM_JOB_NONE, &at, 0);
            bad += at != SIM_JOB_NONE;
            listed += n;
        }
        uint32_t queued = 0;
        for (uint32_t i = 0; i < JOBS; i++)
            queued += in_q[i] && tenant_of[i] == t;
        bad += listed != queued;
        if (queued) {
            bad += busy != t;
            busy = shapeq_busy_from(q, t + 1);
        }
    }
    bad += busy != UINT32_MAX;
    uint32_t sub = tenantq_busy_from(&q->q, 0);
    for (uint32_t b = 0; b < q->q.cap; b++)
        if (tenantq_len(&q->q, b)) {
            bad += sub != b;
            sub = tenantq_busy_from(&q->q, b + 1);
        }
    bad += sub != UINT32_MAX;
    return bad;
}

int main(void)
{
    sim_view v;
    memset(&v, 0, sizeof v);
    v.jobs = jobs;
    v.job_state_base = (unsigned char *)st;
    v.job_state_size = sizeof *st;
    for (uint32_t i = 0; i < JOBS; i++)
        jobs[i].seq = rnd(1u << 30); /* arrival order, not the id's */
    shapeq q;
    shapeq_init(&q, offsetof(jstate, sub));
    int bad = 0, failed_ops = 0;
    uint32_t n_in = 0, peak = 0;
    for (uint32_t step = 0; step < STEPS; step++) {
        uint32_t id = rnd(JOBS);
        /* Phases that fill and drain the queues, so sublists empty and return. */
        bool filling = (step / 5000) % 2 == 0;
        if (!in_q[id] && (filling || rnd(4) == 0)) {
            tenant_of[id] = rnd(step < 2000 ? 3 : TENANTS);
            jobs[id].shape = rnd(SHAPES);
            key_of[id] = (double)rnd(50); /* ties, broken by arrival */
            if (shapeq_insert(&q, &v, tenant_of[id], id, key_of[id]) != SIM_OK)
                failed_ops++;
            else
                in_q[id] = true, n_in++;
        } else if (in_q[id] && (!filling || rnd(4) == 0)) {
            shapeq_remove(&q, &v, id);
            in_q[id] = false;
            n_in--;
        } else if (!in_q[id]) {
            shapeq_remove(&q, &v, id); /* not queued: nothing happens */
        }
        if (n_in > peak)
            peak = n_in;
        if (step % 97 == 0 || step == STEPS - 1)
            bad += verify(&q, &v);
    }
    CHECK(failed_ops == 0);
    CHECK(bad == 0);
    CHECK(peak > JOBS / 2); /* the tables grew past their first size */
    /* Drained: no tenant lists a sublist, and every id is free again. */
    for (uint32_t i = 0; i < JOBS; i++)
        if (in_q[i])
            shapeq_remove(&q, &v, i);
    uint32_t listed = 0;
    for (uint32_t t = 0; t < TENANTS; t++)
        listed += shapeq_first(&q, t) != SHAPEQ_NONE;
    CHECK(listed == 0);
    CHECK(q.n_free == q.cap);
    for (uint32_t i = 0; i < q.n_slots; i++)
        CHECK(q.slots[i] == SHAPEQ_NONE);
    shapeq_fini(&q);
    return check_done();
}
