/*
 * preempt.c: the priority-ordered admission, preemption and placement pass shared by the
 * preemptive policies (see preempt.h). Invariants: every job in the system has a listed
 * entry in its policy state; a pending job is in exactly one class heap (except while a
 * pass holds it as admitted), a running one in the treap of its lane (the key of a job
 * in a treap never changes: it is taken out, re-keyed and put back); a pending job
 * with a due time is in the heap of due times, a running one with a key change ahead in
 * the heap of key changes.
 */
#include "policies/preempt.h"

#include "base/alloc.h"

#include <string.h>

#define NONE UINT32_MAX

static sim_job_id adm_head(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key,
                           uint64_t *key2);
static void adm_started(void *ctx, const sim_view *v, uint32_t shape, sim_job_id id);

static preempt_entry *entry(const sim_view *v, sim_job_id id)
{
    return preempt_entry_of(v, id);
}

/* ---- Class heaps: pending jobs by key, each entry knowing its slot. A slot holds the
 * job's key beside its id, so the heap's comparisons and the admission frontier read the
 * heap's own array, not the jobs' states. ---- */

static void cls_set(preempt_class *c, const sim_view *v, uint32_t i, preempt_slot e)
{
    c->heap[i] = e;
    entry(v, e.id)->slot = i;
}

static void cls_up(preempt_class *c, const sim_view *v, uint32_t i)
{
    preempt_slot e = c->heap[i];
    while (i > 0 && preempt_before(&e.key, &c->heap[(i - 1) / 2].key)) {
        cls_set(c, v, i, c->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    cls_set(c, v, i, e);
}

static void cls_down(preempt_class *c, const sim_view *v, uint32_t i)
{
    preempt_slot e = c->heap[i];
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= c->n)
            break;
        if (ch + 1 < c->n && preempt_before(&c->heap[ch + 1].key, &c->heap[ch].key))
            ch++;
        if (!preempt_before(&c->heap[ch].key, &e.key))
            break;
        cls_set(c, v, i, c->heap[ch]);
        i = ch;
    }
    cls_set(c, v, i, e);
}

/* ---- A class's first jobs (preempt_class.first), kept beside its heap. ---- */

/* The index in c->first of the first job at or after key k. */
static uint32_t first_lower(const preempt_class *c, const preempt_key *k)
{
    uint32_t lo = 0, hi = c->n_first;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (preempt_before(&c->first[mid].key, k))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* e joined the class: it is among the first when it comes before the last of them (a
 * full array loses its last, so it stays the smallest). */
static void first_insert(preempt_class *c, preempt_slot e)
{
    if (!c->n_first || !preempt_before(&e.key, &c->first[c->n_first - 1].key))
        return;
    uint32_t i = first_lower(c, &e.key);
    uint32_t n = c->n_first < c->first_cap ? c->n_first + 1 : c->n_first;
    memmove(c->first + i + 1, c->first + i, (size_t)(n - 1 - i) * sizeof *c->first);
    c->first[i] = e;
    c->n_first = n;
}

/* e (its key as the class knew it) left the class. Keys are unique (arrival breaks
 * ties), so a key up to the last of the first is one of them. */
static void first_erase(preempt_class *c, const preempt_slot *e)
{
    if (!c->n_first || preempt_before(&c->first[c->n_first - 1].key, &e->key))
        return;
    uint32_t i = first_lower(c, &e->key);
    if (i >= c->n_first || c->first[i].id != e->id) {
        c->n_first = 0; /* not reached; empty is always right */
        return;
    }
    memmove(c->first + i, c->first + i + 1, (size_t)(c->n_first - 1 - i) * sizeof *c->first);
    c->n_first--;
}

/* Pending x in its class heap at its key. Room was reserved at arrival (a class heap
 * holds at most the jobs in the system). */
static void cls_push(preempt_class *c, const sim_view *v, const preempt_entry *x)
{
    preempt_slot e = {x->key, x->id, sim_view_job(v, x->id)->shape};
    c->heap[c->n++] = e;
    cls_up(c, v, c->n - 1);
    first_insert(c, e);
}

/* The job at slot i has a new key (already in its state): move it to its place. */
static void cls_rekey(preempt_class *c, const sim_view *v, uint32_t i)
{
    first_erase(c, &c->heap[i]);
    c->heap[i].key = entry(v, c->heap[i].id)->key;
    first_insert(c, c->heap[i]);
    cls_up(c, v, i);
    cls_down(c, v, entry(v, c->heap[i].id)->slot);
}

static void cls_remove(preempt_class *c, const sim_view *v, uint32_t i)
{
    first_erase(c, &c->heap[i]);
    entry(v, c->heap[i].id)->slot = NONE;
    if (--c->n == i)
        return;
    preempt_slot moved = c->heap[c->n];
    cls_set(c, v, i, moved);
    cls_down(c, v, i);
    cls_up(c, v, entry(v, moved.id)->slot);
}

/* ---- Heaps of times: the pending jobs' due times and the running jobs' key changes.
 * One code for both: `run` picks the entry's fields (rdue and rslot, or due and dslot).
 * ---- */

typedef struct theap {
    sim_job_id *ids;
    uint32_t *n;
    bool run;
} theap;

static theap due_heap(preempt_sched *s)
{
    return (theap){s->dheap, &s->n_due, false};
}

static theap rdue_heap(preempt_sched *s)
{
    return (theap){s->rheap, &s->n_rdue, true};
}

static sim_time th_time(const theap *h, const sim_view *v, sim_job_id id)
{
    const preempt_entry *x = entry(v, id);
    return h->run ? x->rdue : x->due;
}

static uint32_t *th_slot(const theap *h, preempt_entry *x)
{
    return h->run ? &x->rslot : &x->dslot;
}

static void th_set(const theap *h, const sim_view *v, uint32_t i, sim_job_id id)
{
    h->ids[i] = id;
    *th_slot(h, entry(v, id)) = i;
}

static void th_up(const theap *h, const sim_view *v, uint32_t i)
{
    sim_job_id id = h->ids[i];
    sim_time t = th_time(h, v, id);
    while (i > 0 && t < th_time(h, v, h->ids[(i - 1) / 2])) {
        th_set(h, v, i, h->ids[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    th_set(h, v, i, id);
}

static void th_down(const theap *h, const sim_view *v, uint32_t i)
{
    sim_job_id id = h->ids[i];
    sim_time t = th_time(h, v, id);
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= *h->n)
            break;
        if (ch + 1 < *h->n && th_time(h, v, h->ids[ch + 1]) < th_time(h, v, h->ids[ch]))
            ch++;
        if (th_time(h, v, h->ids[ch]) >= t)
            break;
        th_set(h, v, i, h->ids[ch]);
        i = ch;
    }
    th_set(h, v, i, id);
}

/* Take x out of the heap (if in it); its time becomes SIM_TIME_NEVER. */
static void th_remove(const theap *h, const sim_view *v, preempt_entry *x)
{
    uint32_t *slot = th_slot(h, x), i = *slot;
    if (h->run)
        x->rdue = SIM_TIME_NEVER;
    else
        x->due = SIM_TIME_NEVER;
    if (i == NONE)
        return;
    *slot = NONE;
    if (--*h->n == i)
        return;
    sim_job_id moved = h->ids[*h->n];
    th_set(h, v, i, moved);
    th_down(h, v, i);
    th_up(h, v, *th_slot(h, entry(v, moved)));
}

/* File x at time t (nowhere when SIM_TIME_NEVER), replacing its old time. Room was
 * reserved at arrival (a heap holds at most the jobs in the system). */
static void th_file(const theap *h, const sim_view *v, preempt_entry *x, sim_time t)
{
    th_remove(h, v, x);
    if (t == SIM_TIME_NEVER)
        return;
    if (h->run)
        x->rdue = t;
    else
        x->due = t;
    h->ids[(*h->n)++] = x->id;
    th_up(h, v, *h->n - 1);
}

static void due_remove(preempt_sched *s, const sim_view *v, preempt_entry *x)
{
    theap h = due_heap(s);
    th_remove(&h, v, x);
}

/* x just became pending (or was re-keyed): file its due time. */
static void due_file(preempt_sched *s, const sim_view *v, preempt_entry *x, sim_time now)
{
    theap h = due_heap(s);
    th_file(&h, v, x, s->hooks->due ? s->hooks->due(s->ctx, x, now) : SIM_TIME_NEVER);
}

static void rdue_remove(preempt_sched *s, const sim_view *v, preempt_entry *x)
{
    theap h = rdue_heap(s);
    th_remove(&h, v, x);
}

/* File running x's next key change at now. */
static void rdue_file(preempt_sched *s, const sim_view *v, preempt_entry *x, sim_time now)
{
    theap h = rdue_heap(s);
    th_file(&h, v, x,
            s->hooks->next_change ? s->hooks->next_change(s->ctx, x, now) : SIM_TIME_NEVER);
}

/* ---- Treap of running jobs by key, with GPU requests summed per subtree. ---- */

static uint64_t tsum(const sim_view *v, uint32_t t)
{
    return t == NONE ? 0 : entry(v, t)->tsum;
}

static void pull(const sim_view *v, preempt_entry *x)
{
    x->tsum = x->need + tsum(v, x->tl) + tsum(v, x->tr);
}

/* Split t into the jobs before key k (*l) and the others (*r). */
static void split(const sim_view *v, uint32_t t, const preempt_key *k, uint32_t *l, uint32_t *r)
{
    if (t == NONE) {
        *l = *r = NONE;
        return;
    }
    preempt_entry *x = entry(v, t);
    if (preempt_before(&x->key, k)) {
        split(v, x->tr, k, &x->tr, r);
        *l = t;
    } else {
        split(v, x->tl, k, l, &x->tl);
        *r = t;
    }
    pull(v, x);
}

/* Join a and b, every key of a before every key of b. */
static uint32_t join(const sim_view *v, uint32_t a, uint32_t b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    preempt_entry *x = entry(v, a), *y = entry(v, b);
    if (x->tprio > y->tprio) {
        x->tr = join(v, x->tr, b);
        pull(v, x);
        return a;
    }
    y->tl = join(v, a, y->tl);
    pull(v, y);
    return b;
}

/* x into the treap at t, returning its root: down the path of x's key to the first job
 * of lower priority, where the subtree is split around x. */
static uint32_t insert_rec(const sim_view *v, uint32_t t, preempt_entry *x)
{
    if (t == NONE || x->tprio > entry(v, t)->tprio) {
        split(v, t, &x->key, &x->tl, &x->tr);
        pull(v, x);
        return x->id;
    }
    preempt_entry *y = entry(v, t);
    if (preempt_before(&x->key, &y->key))
        y->tl = insert_rec(v, y->tl, x);
    else
        y->tr = insert_rec(v, y->tr, x);
    y->tsum += x->need; /* what pull() would find, without reading the other child */
    return t;
}

/* Lane l (past 0) went from holding jobs to none: it may be taken over. */
static void lane_emptied(preempt_sched *s, uint32_t l)
{
    preempt_lane *ln = &s->lane[l];
    s->lanes_used[ln->mask != 0]--;
    if (!ln->freed) {
        ln->freed = true;
        s->lane_free[s->n_free++] = l;
    }
}

/* Lane l's sum and last job read from its treap (after a rebuild). */
static void lane_tail_read(preempt_sched *s, const sim_view *v, uint32_t l)
{
    preempt_lane *ln = &s->lane[l];
    uint64_t was = ln->sum;
    ln->sum = tsum(v, ln->root);
    s->run_need += ln->sum - was;
    if (ln->root == NONE)
        return;
    uint32_t t = ln->root;
    while (entry(v, t)->tr != NONE)
        t = entry(v, t)->tr;
    ln->last_id = t;
    ln->last = entry(v, t)->key;
}

/* Insert running x into the treap of its lane (x->lane). */
static void tree_insert(preempt_sched *s, const sim_view *v, preempt_entry *x)
{
    preempt_lane *ln = &s->lane[x->lane];
    if (ln->n == 0 || preempt_before(&ln->last, &x->key)) {
        ln->last = x->key;
        ln->last_id = x->id;
    }
    ln->sum += x->need;
    s->run_need += x->need;
    ln->root = insert_rec(v, ln->root, x);
    if (ln->n++ == 0 && x->lane)
        s->lanes_used[ln->mask != 0]++;
    s->n_mixed += x->mask && !ln->mask;
}

static uint32_t erase_rec(const sim_view *v, uint32_t t, const preempt_entry *x)
{
    if (t == x->id)
        return join(v, x->tl, x->tr);
    preempt_entry *y = entry(v, t);
    if (preempt_before(&x->key, &y->key))
        y->tl = erase_rec(v, y->tl, x);
    else
        y->tr = erase_rec(v, y->tr, x);
    y->tsum -= x->need; /* what pull() would find, without reading the other child */
    return t;
}

/* erase_rec by x's place in the last in-order listing (rank) instead of its key: for a
 * treap whose keys changed since, every job of it listed then. */
static uint32_t erase_at_rank(const sim_view *v, uint32_t t, const preempt_entry *x)
{
    if (t == x->id)
        return join(v, x->tl, x->tr);
    preempt_entry *y = entry(v, t);
    if (x->rank < y->rank)
        y->tl = erase_at_rank(v, y->tl, x);
    else
        y->tr = erase_at_rank(v, y->tr, x);
    y->tsum -= x->need;
    return t;
}

static void tree_erase(preempt_sched *s, const sim_view *v, preempt_entry *x)
{
    preempt_lane *ln = &s->lane[x->lane];
    ln->root = erase_rec(v, ln->root, x);
    ln->sum -= x->need;
    s->run_need -= x->need;
    if (x->id == ln->last_id && ln->root != NONE)
        lane_tail_read(s, v, x->lane);
    if (--ln->n == 0 && x->lane)
        lane_emptied(s, x->lane);
    s->n_mixed -= x->mask && !ln->mask;
    x->tl = x->tr = NONE;
}

/* GPU requests of the jobs of the treap at root before key k (all of them when k is
 * NULL); the first job at or after k goes to *succ (NONE when there is none) if succ is
 * given. */
static uint64_t tree_prefix_succ(const sim_view *v, uint32_t root, const preempt_key *k,
                                 uint32_t *succ)
{
    uint32_t after = NONE;
    uint64_t sum = 0;
    if (!k) {
        sum = tsum(v, root);
    } else {
        for (uint32_t t = root; t != NONE;) {
            const preempt_entry *x = entry(v, t);
            if (preempt_before(&x->key, k)) {
                sum += tsum(v, x->tl) + x->need;
                t = x->tr;
            } else {
                after = t;
                t = x->tl;
            }
        }
    }
    if (succ)
        *succ = after;
    return sum;
}

/* The last job of the treap at t before key k (before every key when k is NULL: the
 * last) that requests GPUs, or NONE. */
static uint32_t prev_need_rec(const sim_view *v, uint32_t t, const preempt_key *k)
{
    if (t == NONE || tsum(v, t) == 0)
        return NONE;
    const preempt_entry *x = entry(v, t);
    if (!k || preempt_before(&x->key, k)) {
        uint32_t r = prev_need_rec(v, x->tr, k);
        if (r != NONE)
            return r;
        if (x->need)
            return t;
    }
    return prev_need_rec(v, x->tl, k);
}

/* In-order list of the subtree at t into s->sorted from index n; returns the new count. */
static uint32_t tree_list_at(preempt_sched *s, const sim_view *v, uint32_t t, uint32_t n)
{
    uint32_t sp = 0;
    sim_job_id *stack = s->pre; /* free at this point of a pass */
    while (t != NONE || sp) {
        while (t != NONE) {
            stack[sp++] = t;
            const preempt_entry *x = entry(v, t);
            if (x->tr != NONE) /* read when the walk comes back up to x */
                __builtin_prefetch(entry(v, x->tr));
            t = x->tl;
        }
        t = stack[--sp];
        s->sorted[n++] = entry(v, t);
        t = entry(v, t)->tr;
    }
    return n;
}

static uint32_t tree_list(preempt_sched *s, const sim_view *v, uint32_t t)
{
    return tree_list_at(s, v, t, 0);
}

/* A treap of e[0..n), in key order; returns its root. O(n). The stack holds the right
 * spine of the treap built so far; a job leaving it has its subtree complete (its right
 * child left just before it), so its sum is taken then, children first. */
static uint32_t tree_build(preempt_sched *s, const sim_view *v, preempt_entry *const *e, uint32_t n)
{
    uint32_t sp = 0;
    sim_job_id *stack = s->pre;
    for (uint32_t i = 0; i < n; i++) {
        preempt_entry *x = e[i];
        uint32_t last = NONE;
        while (sp && entry(v, stack[sp - 1])->tprio < x->tprio) {
            last = stack[--sp];
            pull(v, entry(v, last));
        }
        x->tl = last;
        x->tr = NONE;
        if (sp)
            entry(v, stack[sp - 1])->tr = x->id;
        stack[sp++] = x->id;
    }
    uint32_t root = sp ? stack[0] : NONE;
    while (sp)
        pull(v, entry(v, stack[--sp]));
    return root;
}

/* ---- Set-up and bookkeeping. ---- */

static bool fast_on = true;
static bool settled_on = true;
static bool lazy_rekey_on = true;

static uint64_t settled_skips; /* counted atomically: the runs of a sweep share it */
static uint64_t hall_fast_passes; /* the same */
static uint64_t one_lane_moves;   /* the same */
static uint64_t one_lane_runs;    /* the same */
static uint64_t lane_takeovers;   /* the same */
static uint64_t mixed_passes;     /* the same */
static uint64_t rekeys_left;      /* the same */
static uint64_t rekeys_late;      /* the same */

void preempt_settled_enable(bool on)
{
    settled_on = on;
}

uint64_t preempt_settled_skips(void)
{
    return __atomic_load_n(&settled_skips, __ATOMIC_RELAXED);
}

void preempt_lazy_rekey_enable(bool on)
{
    lazy_rekey_on = on;
}

uint64_t preempt_rekeys_left(void)
{
    return __atomic_load_n(&rekeys_left, __ATOMIC_RELAXED);
}

uint64_t preempt_rekeys_late(void)
{
    return __atomic_load_n(&rekeys_late, __ATOMIC_RELAXED);
}

uint64_t preempt_one_lane_moves(void)
{
    return __atomic_load_n(&one_lane_moves, __ATOMIC_RELAXED);
}

uint64_t preempt_one_lane_runs(void)
{
    return __atomic_load_n(&one_lane_runs, __ATOMIC_RELAXED);
}

uint64_t preempt_lane_takeovers(void)
{
    return __atomic_load_n(&lane_takeovers, __ATOMIC_RELAXED);
}

uint64_t preempt_mixed_passes(void)
{
    return __atomic_load_n(&mixed_passes, __ATOMIC_RELAXED);
}

uint64_t preempt_hall_fast_passes(void)
{
    return __atomic_load_n(&hall_fast_passes, __ATOMIC_RELAXED);
}

void preempt_fast_enable(bool on)
{
    fast_on = on;
}

static uint32_t rate_lanes = PREEMPT_RATE_LANES;

void preempt_rate_lanes_set(uint32_t n)
{
    rate_lanes = n >= 2 && n <= PREEMPT_RATE_LANES ? n : PREEMPT_RATE_LANES;
}

static uint32_t mask_lanes_max = PREEMPT_MASK_LANES;

void preempt_mask_lanes_set(uint32_t n)
{
    mask_lanes_max = n >= 1 && n <= PREEMPT_MASK_LANES ? n : PREEMPT_MASK_LANES;
}

/* Where the probe for (rate, mask) starts in the lanes' hash table. Rate 0 is hashed as
 * +0 (== holds for -0 too). */
static uint32_t lane_home(const preempt_sched *s, double rate, uint64_t mask)
{
    uint64_t b = 0;
    if (rate != 0)
        memcpy(&b, &rate, sizeof b);
    uint64_t h = (b ^ mask * UINT64_C(0x9e3779b97f4a7c15)) * UINT64_C(0xbf58476d1ce4e5b9);
    return (uint32_t)(h >> 32) & (s->lane_slots - 1);
}

/* The table's slot of (rate, mask): where its lane is, or the free slot ending its probe. */
static uint32_t lane_slot(const preempt_sched *s, double rate, uint64_t mask)
{
    uint32_t m = s->lane_slots - 1;
    for (uint32_t i = lane_home(s, rate, mask);; i = (i + 1) & m) {
        uint32_t l = s->lane_table[i];
        if (l == NONE || (s->lane[l].rate == rate && s->lane[l].mask == mask))
            return i;
    }
}

/* Take lane l's (rate, mask) out of the table (backward-shift deletion: each later lane
 * of the probe run whose home is not between the hole and it moves into the hole). */
static void lane_unhash(preempt_sched *s, uint32_t l)
{
    uint32_t m = s->lane_slots - 1, i = lane_slot(s, s->lane[l].rate, s->lane[l].mask);
    if (s->lane_table[i] != l)
        return; /* not in it (a rate equal to nothing: NaN) */
    for (uint32_t j = (i + 1) & m;; j = (j + 1) & m) {
        uint32_t k = s->lane_table[j];
        if (k == NONE)
            break;
        uint32_t h = lane_home(s, s->lane[k].rate, s->lane[k].mask);
        if (((j - h) & m) < ((j - i) & m))
            continue; /* its home lies after the hole: it stays */
        s->lane_table[i] = k;
        s->lane_table[j] = NONE;
        i = j;
    }
    s->lane_table[i] = NONE;
}

static void lanes_free(preempt_sched *s)
{
    sim_free(s->lane);
    sim_free(s->lane_table);
    sim_free(s->lane_free);
    sim_free(s->act);
    sim_free(s->moved);
    s->lane = NULL;
    s->lane_table = s->lane_free = s->act = s->moved = NULL;
    s->lane_cap = s->lane_slots = 0;
}

/* Room for n lanes (and their scratch), the table rebuilt when it grows. */
static bool lanes_grow(preempt_sched *s, uint32_t n)
{
    if (n <= s->lane_cap)
        return true;
    uint32_t cap = s->lane_cap;
    if (!sim_reserve((void **)&s->lane, &cap, n, sizeof *s->lane))
        return false;
    uint32_t c2 = s->lane_cap, c3 = s->lane_cap, c4 = s->lane_cap;
    if (!sim_reserve((void **)&s->lane_free, &c2, cap, sizeof *s->lane_free) ||
        !sim_reserve((void **)&s->act, &c3, cap, sizeof *s->act) ||
        !sim_reserve((void **)&s->moved, &c4, cap, sizeof *s->moved))
        return false;
    uint32_t slots = 4 * cap;
    uint32_t *t = sim_reallocarray(NULL, slots, sizeof *t);
    if (!t)
        return false;
    sim_free(s->lane_table);
    s->lane_table = t;
    s->lane_slots = slots;
    s->lane_cap = cap;
    memset(t, 0xff, (size_t)slots * sizeof *t);
    for (uint32_t l = 1; l < s->n_lane; l++)
        s->lane_table[lane_slot(s, s->lane[l].rate, s->lane[l].mask)] = l;
    return true;
}

int preempt_init(preempt_sched *s, const policy_config *cfg, const preempt_hooks *h, void *ctx,
                 bool checkpoint, sim_diag *d)
{
    s->hooks = h;
    s->ctx = ctx;
    s->checkpoint = checkpoint;
    if (h->drift && (h->next_change || h->pass_begin))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "preemptive policy: drifting keys cannot also change on schedule");
    if (!lanes_grow(s, 64)) {
        lanes_free(s);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "preemptive policy: out of memory");
    }
    s->lane[0] = (preempt_lane){.rate = 0, .root = NONE, .succ = NONE, .cur = NONE};
    s->n_lane = 1;
    s->now = SIM_TIME_NEVER;
    s->wake_at = SIM_TIME_NEVER;
    s->cap_epoch = UINT64_MAX; /* no capacity summed yet */
    s->n_miss = UINT32_MAX;    /* no pass yet */
    s->order = (place_order){.head = adm_head, .started = adm_started, .ctx = s};
    int rc = place_ws_init(&s->ws, cfg, d);
    if (rc != SIM_OK)
        lanes_free(s);
    return rc;
}

void preempt_fini(preempt_sched *s)
{
    for (uint32_t c = 0; c < s->n_cls; c++) {
        sim_free(s->cls[c].heap);
        sim_free(s->cls[c].first);
    }
    sim_free(s->hread);
    sim_free(s->cls);
    sim_free(s->rheap);
    sim_free(s->fresh);
    sim_free(s->req);
    sim_free(s->adm);
    sim_free(s->adm_link);
    sim_free(s->pre);
    sim_free(s->pre_short);
    sim_free(s->sorted);
    sim_free(s->front);
    sim_free(s->miss);
    sim_free(s->dheap);
    sim_free(s->shape_first);
    sim_free(s->walk);
    sim_free(s->walk2);
    lanes_free(s);
    place_ws_fini(&s->ws);
}

/* The class of (need, mask), added if new; NONE when the table cannot grow. The classes
 * are few (distinct GPU requests), so a linear search serves. */
static uint32_t class_of(preempt_sched *s, uint64_t need, uint64_t mask)
{
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].need == need && s->cls[c].mask == mask)
            return c;
    if (!sim_reserve((void **)&s->cls, &s->cls_cap, s->n_cls + 1, sizeof *s->cls))
        return NONE;
    s->cls[s->n_cls] = (preempt_class){.need = need, .mask = mask};
    return s->n_cls++;
}

/* The lane of drift `rate` and accepted GPU types `mask` (0: any; always 0 when admitting
 * by count): lane 0 for neither, else the one of both, else an emptied one taken over,
 * else a new one; NONE when PREEMPT_RATE_LANES (preempt_rate_lanes_set) lanes of any type
 * (lane 0 among them), or PREEMPT_MASK_LANES of one set of types, hold jobs (or when the
 * lanes cannot grow, or for a NaN drift). */
static uint32_t lane_of(preempt_sched *s, double rate, uint64_t mask)
{
    if (rate == 0 && mask == 0)
        return 0;
    if (rate != rate)
        return NONE; /* NaN (no speed the engine sets): its entry could never be found */
    uint32_t i = lane_slot(s, rate, mask);
    if (s->lane_table[i] != NONE)
        return s->lane_table[i];
    bool typed = mask != 0;
    if (s->lanes_used[typed] + 1 >= (typed ? mask_lanes_max + 1 : rate_lanes))
        return NONE;
    uint32_t l = NONE;
    while (s->n_free && l == NONE) {
        uint32_t f = s->lane_free[--s->n_free];
        s->lane[f].freed = false;
        if (s->lane[f].n == 0)
            l = f; /* else it holds jobs of its drift again */
    }
    if (l != NONE) {
        lane_unhash(s, l);
        __atomic_fetch_add(&lane_takeovers, 1, __ATOMIC_RELAXED);
    } else {
        if (!lanes_grow(s, s->n_lane + 1))
            return NONE;
        l = s->n_lane++;
    }
    s->lane[l] =
        (preempt_lane){.rate = rate, .mask = mask, .root = NONE, .succ = NONE, .cur = NONE};
    s->lane_table[lane_slot(s, rate, mask)] = l;
    return l;
}

/* Whether a policy without drift files its running jobs by the GPU types they accept
 * (see preempt_lane). */
static bool mask_lanes(const preempt_sched *s)
{
    return !s->by_count && !s->hooks->drift;
}

/* k in the terms of lane l at the pass's time: in a lane with drift, (key + drift x
 * time in seconds) x 1e6, computed as key x 1e6 + drift x time in microseconds: exact
 * where keys and times are whole microseconds and drifts dyadic (1, 2, 0.5 ...), so jobs
 * whose keys tie keep their tie (broken by arrival) as when read afresh. */
static preempt_key lane_key(const preempt_sched *s, uint32_t l, const preempt_key *k)
{
    preempt_key q = *k;
    if (s->lane[l].rate != 0)
        q.k0 = q.k0 * 1e6 + s->lane[l].rate * s->now_us;
    return q;
}

/* Running x's key at the pass's time, x 1e6 (to order jobs of different lanes). */
static preempt_key key_now(const preempt_sched *s, const preempt_entry *x)
{
    preempt_key q = x->key;
    if (s->lane[x->lane].rate != 0)
        q.k0 -= s->lane[x->lane].rate * s->now_us;
    else
        q.k0 *= 1e6;
    return q;
}

/* A well-mixed 32-bit priority from the arrival order (splitmix64's finaliser). */
static uint32_t mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (uint32_t)(z ^ (z >> 31));
}

void preempt_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    preempt_sched *s = st;
    const sim_job *j = sim_view_job(v, id);
    uint64_t need = (uint64_t)j->nominal_replicas * j->gpus_per_replica * j->spec.gpu_milli;
    uint32_t c = class_of(s, need, s->by_count ? 0 : j->spec.gpu_type_mask);
    uint32_t n = s->n_sys + 1;
    if (c == NONE ||
        !sim_reserve((void **)&s->cls[c].heap, &s->cls[c].cap, s->cls[c].members + 1,
                     sizeof(preempt_slot)) ||
        !sim_reserve((void **)&s->rheap, &s->rdue_cap, n, sizeof *s->rheap) ||
        !sim_reserve((void **)&s->fresh, &s->fresh_cap, n, sizeof *s->fresh) ||
        !sim_reserve((void **)&s->req, &s->req_cap, n, sizeof *s->req) ||
        !sim_reserve((void **)&s->sorted, &s->sorted_cap, n, sizeof *s->sorted) ||
        !sim_reserve((void **)&s->pre, &s->pre_cap, n, sizeof *s->pre) ||
        !sim_reserve((void **)&s->pre_short, &s->pre_short_cap, n, sizeof *s->pre_short) ||
        !sim_reserve((void **)&s->adm, &s->adm_cap, n, sizeof *s->adm) ||
        !sim_reserve((void **)&s->adm_link, &s->adm_link_cap, n, sizeof *s->adm_link) ||
        !sim_reserve((void **)&s->walk, &s->walk_cap, n, sizeof *s->walk) ||
        !sim_reserve((void **)&s->walk2, &s->walk2_cap, n, sizeof *s->walk2) ||
        !sim_reserve((void **)&s->dheap, &s->due_cap, n, sizeof *s->dheap) ||
        !sim_reserve((void **)&s->front, &s->front_cap, s->n_cls, sizeof *s->front) ||
        !sim_reserve((void **)&s->miss, &s->miss_cap, s->n_cls, sizeof *s->miss) ||
        !sim_reserve((void **)&s->shape_first, &s->shape_cap, v->n_shapes,
                     sizeof *s->shape_first)) {
        s->oom = true;
        return;
    }
    s->n_sys++;
    s->cls[c].members++;
    preempt_entry *x = entry(v, id);
    *x = (preempt_entry){
        .t0 = v->now,
        .waiting = v->now,
        .due = SIM_TIME_NEVER,
        .rdue = SIM_TIME_NEVER,
        .seq = j->seq,
        .need = need,
        .mask = j->spec.gpu_type_mask,
        .id = id,
        .cls = c,
        .slot = NONE,
        .dslot = NONE,
        .tl = NONE,
        .tr = NONE,
        .tprio = mix(j->seq),
        .rslot = NONE,
        .listed = true,
    };
    if (!s->by_count && x->mask)
        s->n_masked++;
    s->hooks->key(s->ctx, v, x, v->now);
    cls_push(&s->cls[c], v, x);
    due_file(s, v, x, v->now);
    s->settled = false;
}

/* The classes turned away after key lo and before hi (NULL: to the last) find `need`
 * milli-GPUs more (more_room) or less: their shortfalls change by it. false, with the
 * shortfalls partly changed, when one of them would then fit. */
static bool misses_shift(preempt_sched *s, const preempt_key *lo, const preempt_key *hi,
                         uint64_t need, bool more_room)
{
    for (uint32_t i = 0; i < s->n_miss; i++) {
        preempt_miss *m = &s->miss[i];
        if (!preempt_before(lo, &m->key) || (hi && !preempt_before(&m->key, hi)))
            continue;
        if (!more_room)
            m->short_by += need;
        else if (m->short_by > need)
            m->short_by -= need;
        else
            return false;
    }
    return true;
}

/* Whether running x finishing, where a pass now would decide nothing and the capacity
 * is one number, leaves that pass's admissions as they were (then the shortfalls of the
 * classes turned away after it become a pass's now): it leaves its request to every job
 * after it, so those admitted are still, and a class turned away there is still when it
 * lacked more than x's request. Its GPUs, released, may fit an admitted job now. */
static bool finish_keeps(preempt_sched *s, const preempt_entry *x)
{
    return s->n_miss != UINT32_MAX && misses_shift(s, &x->key, NULL, x->need, true);
}

void preempt_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    preempt_sched *s = st;
    preempt_entry *x = entry(v, id);
    if (!x->listed)
        return;
    bool keeps = x->running && s->settled && finish_keeps(s, x);
    if (x->running) {
        tree_erase(s, v, x);
        rdue_remove(s, v, x);
        s->n_run--;
    } else if (x->slot != NONE) {
        cls_remove(&s->cls[x->cls], v, x->slot);
    }
    due_remove(s, v, x);
    if (!s->by_count && x->mask)
        s->n_masked--;
    s->cls[x->cls].members--;
    s->n_sys--;
    x->listed = false;
    s->settled = keeps;
    s->place_only |= keeps;
}

/* A failed node sent the job back to the queue: the next pass takes it back. */
void preempt_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    preempt_sched *s = st;
    preempt_entry *x = entry(v, id);
    if (x->listed && x->running && !x->requeued && s->n_req < s->req_cap) {
        x->requeued = true;
        s->req[s->n_req++] = id;
    }
    s->settled = false;
}

/* x stops running (or is made to wait again) at now, with a GPU-seconds attained. */
static void stop(preempt_entry *x, double a, sim_time now)
{
    if (x->running)
        x->ran_us += now - x->t0;
    x->a0 = a;
    x->t0 = x->waiting = now;
    x->rate = 0;
    x->running = false;
}

/* Running x, the i-th of k jobs taken off their GPUs at now in priority order, becomes
 * pending with a GPU-seconds attained: out of the running set, keyed and queued. */
static void make_pending(preempt_sched *s, const sim_view *v, preempt_entry *x, double a,
                         sim_time now, uint32_t i, uint32_t k)
{
    tree_erase(s, v, x);
    rdue_remove(s, v, x);
    s->n_run--;
    stop(x, a, now);
    s->hooks->key(s->ctx, v, x, now);
    if (s->hooks->preempted)
        s->hooks->preempted(s->ctx, x, i, k);
    cls_push(&s->cls[x->cls], v, x);
    due_file(s, v, x, now);
}

static void sort_entries(preempt_entry **e, uint32_t n)
{
    /* Insertion sort: the order is the last pass's, with few jobs out of place. */
    for (uint32_t i = 1; i < n; i++) {
        preempt_entry *x = e[i];
        uint32_t k = i;
        while (k > 0 && preempt_before(&x->key, &e[k - 1]->key)) {
            e[k] = e[k - 1];
            k--;
        }
        e[k] = x;
    }
}

/* Re-key every running job (for a policy without drift: its lanes are at rate 0) and
 * rebuild the treaps. O(R + moves). */
static void rekey_running_all(preempt_sched *s, const sim_view *v, sim_time now)
{
    for (uint32_t l = 0; l < s->n_lane; l++) {
        uint32_t n = tree_list(s, v, s->lane[l].root);
        for (uint32_t i = 0; i < n; i++)
            s->hooks->key(s->ctx, v, s->sorted[i], now);
        sort_entries(s->sorted, n);
        s->lane[l].root = tree_build(s, v, s->sorted, n);
        lane_tail_read(s, v, l);
        if (s->hooks->next_change)
            for (uint32_t i = 0; i < n; i++)
                rdue_file(s, v, s->sorted[i], now);
    }
}

void preempt_rekey_all(preempt_sched *s, const sim_view *v, sim_time now)
{
    for (uint32_t c = 0; c < s->n_cls; c++) {
        preempt_class *k = &s->cls[c];
        for (uint32_t i = 0; i < k->n; i++) {
            preempt_entry *x = entry(v, k->heap[i].id);
            s->hooks->key(s->ctx, v, x, now);
            k->heap[i].key = x->key;
        }
        for (uint32_t i = k->n / 2; i-- > 0;)
            cls_down(k, v, i);
        k->n_first = 0;
    }
    /* One lane at drift 0 and one capacity: while every job fits, every running job is
     * admitted whatever its key, so the pass re-keys them only when not all fit. The
     * treap stays ordered by the keys it holds. */
    if (lazy_rekey_on && s->by_count && !s->one_lane && !s->hooks->drift &&
        !s->hooks->next_change && !s->hooks->pass_begin) {
        s->rekey_running = true;
        __atomic_fetch_add(&rekeys_left, 1, __ATOMIC_RELAXED);
    } else
        rekey_running_all(s, v, now);
    s->settled = false;
}

/* ---- The pass. ---- */

/* What is left of the up GPUs' capacity, per type (or all in slot 0 when admitting by
 * count), in milli-GPU; `types` has a bit for each slot with some left. */
typedef struct capacity {
    uint64_t left[SIM_MAX_GPU_TYPES];
    uint64_t types;
} capacity;

/* Take x's request from what is left of the types it accepts, in type order, if it fits:
 * exact where every job accepts every type or admission counts free GPUs (one capacity);
 * with jobs tied to types, the rule only past HALL_TYPES types (see hall). O(types with
 * capacity left). */
static bool admit(capacity *c, uint64_t need, uint64_t mask)
{
    if (need == 0)
        return true;
    uint64_t usable = c->types & (mask ? mask : ~UINT64_C(0));
    uint64_t have = 0;
    for (uint64_t m = usable; m && have < need; m &= m - 1)
        have += c->left[__builtin_ctzll(m)];
    if (have < need)
        return false;
    for (uint64_t m = usable; need; m &= m - 1) {
        int t = __builtin_ctzll(m);
        uint64_t take = c->left[t] < need ? c->left[t] : need;
        c->left[t] -= take;
        need -= take;
        if (!c->left[t])
            c->types &= ~(UINT64_C(1) << t);
    }
    return true;
}

/* Admission of jobs tied to GPU types, exact: the jobs admitted so far as demand on the
 * subsets of the GPU types present. A set of requests, each split at will over the types
 * its job accepts, can be served together iff for every subset U of the types the
 * requests of the jobs accepting only types in U sum to at most U's capacity (Hall's
 * condition for this transportation problem); taking requests type by type in type order
 * instead can count a job that accepts any type against the only type a later one
 * accepts, and turn that one away with room to spare. Kept per subset U (bit i: the i-th
 * type present) as U's capacity less those requests, its slack; a job accepting the
 * types m fits iff every superset of m has its request in slack: 2^(types present - |m|)
 * subsets (one for a job accepting every type). With more than HALL_TYPES types with
 * capacity, admission takes requests type by type as above (admit). */
#define HALL_TYPES 10
typedef struct hall {
    uint64_t present;                 /* types with capacity (type-id bits) */
    uint32_t full;                    /* the same, one bit per type present: 2^n - 1 */
    uint8_t bit[SIM_MAX_GPU_TYPES];   /* type id -> its bit among those present */
    uint64_t slack[1u << HALL_TYPES]; /* per subset of the types present, milli-GPU */
} hall;

/* Set h up for the capacity `left` of the types `types`; false when there are more than
 * HALL_TYPES of them. O(2^types). */
static bool hall_init(hall *h, const uint64_t *left, uint64_t types)
{
    uint32_t n = (uint32_t)__builtin_popcountll(types);
    if (n > HALL_TYPES)
        return false;
    h->present = types;
    h->full = (UINT32_C(1) << n) - 1;
    uint64_t cap[HALL_TYPES];
    uint32_t i = 0;
    for (uint64_t m = types; m; m &= m - 1, i++) {
        int t = __builtin_ctzll(m);
        h->bit[t] = (uint8_t)i;
        cap[i] = left[t];
    }
    h->slack[0] = 0;
    for (uint32_t u = 1; u <= h->full; u++)
        h->slack[u] = h->slack[u & (u - 1)] + cap[__builtin_ctz(u)];
    return true;
}

/* The bits among the types present of the types `mask` accepts (0 = any); 0 when none
 * of them is present. */
static uint32_t hall_bits(const hall *h, uint64_t mask)
{
    if (!mask)
        return h->full;
    uint32_t m = 0;
    for (uint64_t r = mask & h->present; r; r &= r - 1)
        m |= UINT32_C(1) << h->bit[__builtin_ctzll(r)];
    return m;
}

/* Admit a request of `need` milli-GPU accepting the types `mask` (0 = any) if it can be
 * served together with those admitted so far. O(2^(types present - types accepted)). */
static bool hall_admit(hall *h, uint64_t need, uint64_t mask)
{
    if (need == 0)
        return true;
    uint32_t m = hall_bits(h, mask);
    if (!m)
        return false;
    uint32_t rest = h->full & ~m;
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        if (h->slack[m | sub] < need)
            return false;
        if (!sub)
            break;
    }
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        h->slack[m | sub] -= need;
        if (!sub)
            break;
    }
    return true;
}

/* Admit x's request by h when there is one (jobs tied to GPU types), else by c. */
static bool admit_by(capacity *c, hall *h, uint64_t need, uint64_t mask)
{
    return h ? hall_admit(h, need, mask) : admit(c, need, mask);
}

/* The admitted pending jobs in priority order, per shape, for the placement pass. */
static sim_job_id adm_head(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key,
                           uint64_t *key2)
{
    (void)v;
    const preempt_sched *s = ctx;
    uint32_t i = shape < s->shape_cap ? s->shape_first[shape] : NONE;
    if (i == NONE)
        return SIM_JOB_NONE;
    *key = i;
    *key2 = 0;
    return s->adm[i];
}

static void adm_started(void *ctx, const sim_view *v, uint32_t shape, sim_job_id id)
{
    preempt_sched *s = ctx;
    preempt_entry *x = entry(v, id);
    s->n_started++;
    s->shape_first[shape] = s->adm_link[s->shape_first[shape]].next;
    cls_remove(&s->cls[x->cls], v, x->slot);
    if (s->hooks->started)
        s->hooks->started(s->ctx, x, s->now);
    x->t0 = s->now;
    x->rate = (double)x->need / SIM_MILLI_GPU;
    x->running = x->started = true;
    due_remove(s, v, x);
    /* With its pending key until its speed is known (refile_drifting), except in one
     * lane, where keys are kept as last read and only fall while jobs run: its key is
     * read now, after the engine added any restart penalty to its work. */
    x->lane = 0;
    if (mask_lanes(s)) { /* lane 0 takes the rest when all are in use (mixed) */
        uint32_t l = lane_of(s, 0, x->mask);
        x->lane = l == NONE ? 0 : l;
    }
    if (s->one_lane)
        s->hooks->key(s->ctx, v, x, s->now);
    tree_insert(s, v, x);
    s->n_run++;
    rdue_file(s, v, x, s->now);
    if (s->hooks->pass_begin)
        s->fresh[s->n_fresh++] = id;
}

/* Sort w[0..n) by key, tmp as room: a natural merge sort, O(n log r) for r ascending
 * runs (the lanes' orders, a few jobs out of place). */
static void walk_sort(preempt_walk *w, preempt_walk *tmp, uint32_t n)
{
    uint32_t k = 1;
    while (k < n && !preempt_before(&w[k].key, &w[k - 1].key))
        k++;
    if (k >= n)
        return; /* one run: sorted */
    for (;;) {
        uint32_t runs = 0, o = 0;
        for (uint32_t i = 0; i < n;) {
            uint32_t m = i + 1;
            while (m < n && !preempt_before(&w[m].key, &w[m - 1].key))
                m++;
            uint32_t e = m;
            if (m < n) {
                e = m + 1;
                while (e < n && !preempt_before(&w[e].key, &w[e - 1].key))
                    e++;
            }
            uint32_t a = i, b = m;
            while (a < m && b < e)
                tmp[o++] = preempt_before(&w[b].key, &w[a].key) ? w[b++] : w[a++];
            while (a < m)
                tmp[o++] = w[a++];
            while (b < e)
                tmp[o++] = w[b++];
            runs++;
            i = e;
        }
        memcpy(w, tmp, (size_t)n * sizeof *w);
        if (runs <= 1)
            return;
    }
}

/* Every running job into s->sorted, lane by lane (each in key order); the lanes are
 * emptied when `take`. Returns the count. */
static uint32_t list_running(preempt_sched *s, const sim_view *v, bool take)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < s->n_lane; l++) {
        n = tree_list_at(s, v, s->lane[l].root, n);
        if (take) {
            s->run_need -= s->lane[l].sum;
            if (l && s->lane[l].n)
                lane_emptied(s, l);
            s->lane[l].root = NONE;
            s->lane[l].n = 0;
            s->lane[l].sum = 0;
        }
    }
    if (take)
        s->n_mixed = 0; /* no job is in a lane now */
    return n;
}

/* More drifts at once than lanes: every running job goes to lane 0 with its key read
 * now, for the rest of the run (see preempt_lane). */
static void to_one_lane(preempt_sched *s, const sim_view *v, sim_time now)
{
    uint32_t n = list_running(s, v, true);
    for (uint32_t i = 0; i < n; i++) {
        preempt_entry *x = s->sorted[i];
        s->hooks->key(s->ctx, v, x, now);
        x->lane = 0;
        s->walk[i] = (preempt_walk){x->key, x};
    }
    walk_sort(s->walk, s->walk2, n);
    for (uint32_t i = 0; i < n; i++)
        s->sorted[i] = s->walk[i].x;
    s->lane[0].root = tree_build(s, v, s->sorted, n);
    s->lane[0].n = n;
    s->n_lane = 1;
    s->n_free = 0;
    memset(s->lane_table, 0xff, (size_t)s->lane_slots * sizeof *s->lane_table);
    s->one_lane = true;
    __atomic_fetch_add(&one_lane_runs, 1, __ATOMIC_RELAXED);
}

/* File running x (in no treap) in the lane of its present drift, keyed at now. */
static void file_drifting(preempt_sched *s, const sim_view *v, preempt_entry *x, sim_time now)
{
    s->hooks->key(s->ctx, v, x, now);
    uint32_t l = 0;
    if (!s->one_lane) {
        /* Lanes of one drift and one mask; when all are in use, of that drift alone (its
         * jobs then mixed, see preempt_lane). */
        double rate = s->hooks->drift(s->ctx, v, x);
        l = lane_of(s, rate, s->by_count ? 0 : x->mask);
        if (l == NONE)
            l = lane_of(s, rate, 0);
    }
    if (l == NONE) {
        to_one_lane(s, v, now);
        l = 0;
    }
    x->lane = l;
    if (!s->one_lane)
        x->key = lane_key(s, l, &x->key);
    tree_insert(s, v, x);
}

/* Speed log on (the default) or off (every running job filed again at every pass, as
 * when the log wraps): to test the two against each other. */
static bool speed_log_on = true;

void preempt_speed_log_enable(bool on)
{
    speed_log_on = on;
}

/* File again the running jobs whose speed changed since the last pass (every running job
 * when the engine's log has wrapped since). */
static void refile_drifting(preempt_sched *s, const sim_view *v, sim_time now)
{
    uint64_t e = v->speed_epoch;
    if (s->one_lane) { /* keys as last read: the passes re-read them */
        s->speed_seen = e;
        return;
    }
    if (e - s->speed_seen > SIM_SPEED_RING || !v->speed_ring || !speed_log_on) {
        uint32_t n = list_running(s, v, true);
        /* Out of s->sorted, which to_one_lane may reuse while they are filed. */
        for (uint32_t i = 0; i < n; i++)
            s->adm[i] = s->sorted[i]->id;
        for (uint32_t i = 0; i < n; i++)
            file_drifting(s, v, entry(v, s->adm[i]), now);
    } else {
        for (uint64_t q = s->speed_seen + 1; q <= e; q++) {
            preempt_entry *x = entry(v, v->speed_ring[q % SIM_SPEED_RING]);
            if (!x->listed || !x->running)
                continue;
            tree_erase(s, v, x);
            file_drifting(s, v, x, now);
        }
    }
    s->speed_seen = e;
}

/* Bring the running jobs up to date at now: take back those a failure requeued, let the
 * policy renumber the last pass's fresh ones, re-key those whose key changes now, and
 * file again those whose drift changed. */
static const preempt_key *head_key(const preempt_sched *s, uint32_t c);

/* Whether key k comes before every pending job's. */
static bool before_pending(const preempt_sched *s, const preempt_key *k)
{
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].n && !preempt_before(k, head_key(s, c)))
            return false;
    return true;
}

/* Whether, where a pass now would decide nothing and the capacity is one number,
 * running x re-keyed from `was` to its present key leaves that so; if it does, the
 * shortfalls of the classes turned away where it passed (s->miss) become a pass's now
 * (when it does not, the pass to come records them afresh). Every running job is
 * admitted. Moved earlier, x takes its request from what each job it now passes finds,
 * and each of those admitted has room for it as well (x fitted after them), while those
 * turned away lack still more: the same jobs are admitted. Moved later, x leaves its
 * request to the jobs it passes: those admitted are still, and so is x, last; a class
 * turned away there is still when it lacked more than x's request. */
static bool rekey_keeps(preempt_sched *s, const preempt_entry *x, const preempt_key *was)
{
    bool later = preempt_before(was, &x->key);
    if (s->n_miss == UINT32_MAX)
        return !later || before_pending(s, &x->key);
    return later ? misses_shift(s, was, &x->key, x->need, true)
                 : misses_shift(s, &x->key, was, x->need, false);
}

/* *quiet: cleared when a running job's new key may change what the last pass decided
 * (rekey_keeps). */
static void update_running(preempt_sched *s, const sim_view *v, sim_time now, bool *quiet)
{
    for (uint32_t i = 0; i < s->n_req; i++) {
        preempt_entry *x = entry(v, s->req[i]);
        if (!x->listed || !x->requeued)
            continue;
        x->requeued = false;
        make_pending(s, v, x, sim_view_attained(v, x->id), now, 0, 1);
    }
    s->n_req = 0;
    uint32_t nf = 0;
    for (uint32_t i = 0; i < s->n_fresh; i++) {
        preempt_entry *x = entry(v, s->fresh[i]);
        if (x->listed && x->running) {
            tree_erase(s, v, x);
            s->sorted[nf++] = x;
        }
    }
    s->n_fresh = 0;
    if (nf) {
        sort_entries(s->sorted, nf);
        s->hooks->pass_begin(s->ctx, v, s->sorted, nf);
        for (uint32_t i = 0; i < nf; i++)
            tree_insert(s, v, s->sorted[i]);
    }
    while (s->n_rdue && entry(v, s->rheap[0])->rdue <= now) {
        preempt_entry *x = entry(v, s->rheap[0]);
        tree_erase(s, v, x);
        preempt_key was = x->key;
        s->hooks->key(s->ctx, v, x, now);
        tree_insert(s, v, x);
        rdue_file(s, v, x, now);
        if (*quiet && !rekey_keeps(s, x, &was))
            *quiet = false;
        if (s->hooks->pass_begin)
            s->fresh[s->n_fresh++] = x->id;
    }
    if (s->hooks->drift)
        refile_drifting(s, v, now);
}

/* ---- One lane (more drifts than lanes): every running job in lane 0, its key as
 * last read, which is at or after its present key (keys only fall while jobs run). ---- */

static const preempt_key *head_key(const preempt_sched *s, uint32_t c)
{
    return &s->cls[c].heap[0].key;
}

static uint64_t prefix0(const preempt_sched *s, const sim_view *v, const preempt_key *k)
{
    return tree_prefix_succ(v, s->lane[0].root, k, NULL);
}

/* Whether every job in the system fits the capacity `left` at once: then every one is
 * admitted whatever the order of the running ones. O(classes). */
static bool all_fit(const preempt_sched *s, const sim_view *v, uint64_t left)
{
    uint64_t need = tsum(v, s->lane[0].root);
    for (uint32_t c = 0; c < s->n_cls && need <= left; c++)
        need += s->cls[c].need * s->cls[c].n;
    return need <= left;
}

/* Whether some waiting job that requests GPUs may be admitted from a capacity `left`:
 * the running jobs before it by their keys as last read are among those before it now,
 * so if it does not fit beside those, it does not fit now, whatever the running jobs'
 * present keys; and when no such job fits, every running job stays. O(classes log n). */
static bool any_may_fit(const preempt_sched *s, const sim_view *v, uint64_t left)
{
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].n && s->cls[c].need && prefix0(s, v, head_key(s, c)) + s->cls[c].need <= left)
            return true;
    return false;
}

/* A running job whose key (as last read) is before every pending job's is still before
 * them all: where the capacity is one number, its place among those makes no
 * difference. Re-key the others only, unless the jobs before every pending one no longer
 * fit together (capacity lost to a failure), when their order matters. O(K log n) for
 * the K re-keyed. */
static void rekey_one_lane(preempt_sched *s, const sim_view *v, sim_time now, uint64_t left)
{
    preempt_lane *ln = &s->lane[0];
    const preempt_key *kmin = NULL;
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].n && (!kmin || preempt_before(head_key(s, c), kmin)))
            kmin = head_key(s, c);
    if (kmin && prefix0(s, v, kmin) <= left) {
        uint32_t l, r;
        split(v, ln->root, kmin, &l, &r);
        uint32_t n = tree_list(s, v, r);
        for (uint32_t i = 0; i < n; i++)
            s->hooks->key(s->ctx, v, s->sorted[i], now);
        /* The jobs whose new keys still ascend, in the old order, after the last job
         * before kmin (taken greedily) keep their places; the others (to s->adm) move.
         * Where many move (keys that fall at rates far apart, as srsf's), a rebuild
         * costs less, and the next 32 re-keyings rebuild without looking. */
        bool few = false;
        uint32_t moved = 0;
        if (s->one_lane_skip) {
            s->one_lane_skip--;
        } else {
            const preempt_key *last = NULL;
            for (uint32_t t = l; t != NONE; t = entry(v, t)->tr)
                last = &entry(v, t)->key;
            for (uint32_t i = 0; i < n; i++) {
                preempt_entry *x = s->sorted[i];
                x->rank = i;
                if (last && !preempt_before(last, &x->key))
                    s->adm[moved++] = x->id;
                else
                    last = &x->key;
            }
            few = 64 * (uint64_t)moved <= (uint64_t)n + 128;
            if (!few)
                s->one_lane_skip = 32;
        }
        if (few) {
            /* Few move: out of the treap by their places in the listing (the treap is
             * in the old keys' order), then back in by their new keys, in which the
             * others are in order. The same keys give the same treap as a rebuild. */
            for (uint32_t i = 0; i < moved; i++)
                r = erase_at_rank(v, r, entry(v, s->adm[i]));
            ln->root = join(v, l, r);
            for (uint32_t i = 0; i < moved; i++)
                ln->root = insert_rec(v, ln->root, entry(v, s->adm[i]));
            __atomic_fetch_add(&one_lane_moves, moved, __ATOMIC_RELAXED);
        } else {
            sort_entries(s->sorted, n);
            ln->root = l;
            ln->n -= n;
            uint32_t i = 0;
            for (; i < n && preempt_before(&s->sorted[i]->key, kmin); i++)
                tree_insert(s, v, s->sorted[i]);
            ln->root = join(v, ln->root, tree_build(s, v, s->sorted + i, n - i));
            ln->n += n - i;
        }
        if (prefix0(s, v, kmin) <= left)
            return;
    } else if (!kmin && tsum(v, ln->root) <= left) {
        return; /* nothing waits: every running job stays */
    }
    rekey_running_all(s, v, now);
}

/* Re-key the pending jobs whose due time has come; whether there were any. */
static bool rekey_due(preempt_sched *s, const sim_view *v, sim_time now)
{
    bool any = false;
    while (s->n_due && entry(v, s->dheap[0])->due <= now) {
        any = true;
        preempt_entry *x = entry(v, s->dheap[0]);
        due_remove(s, v, x);
        preempt_class *c = &s->cls[x->cls];
        s->hooks->key(s->ctx, v, x, now);
        cls_rekey(c, v, x->slot);
        due_file(s, v, x, now);
    }
    return any;
}

/* The up GPUs' capacity (s->cap_left, cap_types), summed again only after a node went
 * down or came back. */
static void up_capacity(preempt_sched *s, const sim_view *v)
{
    if (s->cap_epoch == v->up_epoch)
        return;
    memset(s->cap_left, 0, sizeof s->cap_left);
    s->cap_types = 0;
    for (uint32_t nd = 0; nd < v->n_nodes; nd++)
        if (v->node_up[nd] && v->node_gpu_count[nd] && v->node_gpu_type[nd] > 0 &&
            v->node_gpu_type[nd] < SIM_MAX_GPU_TYPES) {
            uint32_t t = s->by_count ? 0 : v->node_gpu_type[nd];
            s->cap_left[t] += (uint64_t)v->node_gpu_count[nd] * SIM_MILLI_GPU;
            s->cap_types |= UINT64_C(1) << t;
        }
    s->cap_epoch = v->up_epoch;
}

/* ---- Admission order: the pending jobs of the classes still in the pass, by key: each
 * class's first jobs (its `first`) merged by a heap of the classes. A class read past
 * its first gets longer ones, read in order from its heap (a frontier of heap slots:
 * the root, then the children of each slot taken), about twice as many, so the reads
 * are paid back by the passes that then need none. ---- */

/* Make c's first its first `want` jobs (want <= c->n). false when the arrays cannot
 * grow (s->oom set). O(want log want). */
static bool first_fill(preempt_sched *s, preempt_class *c, uint32_t want)
{
    if (!sim_reserve((void **)&c->first, &c->first_cap, want, sizeof *c->first) ||
        !sim_reserve((void **)&s->hread, &s->hread_cap, want + 1, sizeof *s->hread)) {
        s->oom = true;
        return false;
    }
    preempt_hslot *h = s->hread;
    uint32_t nh = 1;
    h[0] = (preempt_hslot){c->heap[0].key, 0};
    for (uint32_t k = 0; k < want; k++) {
        uint32_t slot = h[0].slot;
        c->first[k] = c->heap[slot];
        /* Take the root out (the last slot sifted down from it) ... */
        preempt_hslot e = h[--nh];
        uint32_t i = 0;
        for (;;) {
            uint32_t ch = 2 * i + 1;
            if (ch >= nh)
                break;
            if (ch + 1 < nh && preempt_before(&h[ch + 1].key, &h[ch].key))
                ch++;
            if (!preempt_before(&h[ch].key, &e.key))
                break;
            h[i] = h[ch];
            i = ch;
        }
        if (nh)
            h[i] = e;
        /* ... and put its children in. */
        for (uint32_t kid = 2 * slot + 1; kid <= 2 * slot + 2 && kid < c->n; kid++) {
            preempt_hslot f = {c->heap[kid].key, kid};
            uint32_t j = nh++;
            while (j > 0 && preempt_before(&f.key, &h[(j - 1) / 2].key)) {
                h[j] = h[(j - 1) / 2];
                j = (j - 1) / 2;
            }
            h[j] = f;
        }
    }
    c->n_first = want;
    return true;
}

static bool first_check;
static uint64_t first_checked, first_errors;

void preempt_first_check_enable(bool on)
{
    first_check = on;
}

uint64_t preempt_first_checked(void)
{
    return first_checked;
}

uint64_t preempt_first_errors(void)
{
    return first_errors;
}

static uint64_t lane_errors;

uint64_t preempt_lane_errors(void)
{
    return lane_errors;
}

/* The jobs of subtree t that accept some GPU types only, in a lane of any type. */
static uint32_t count_mixed(const sim_view *v, uint32_t t, uint64_t lane_mask)
{
    if (t == NONE)
        return 0;
    const preempt_entry *x = entry(v, t);
    return (x->mask && !lane_mask) + count_mixed(v, x->tl, lane_mask) +
           count_mixed(v, x->tr, lane_mask);
}

/* The lanes' records against their treaps (with first_verify): the count of jobs in lanes
 * of mixed types, and each lane's sum (outside the one lane, which keeps none). */
static void lanes_verify(preempt_sched *s, const sim_view *v)
{
    uint32_t mixed = 0;
    uint64_t need = 0;
    for (uint32_t l = 0; l < s->n_lane; l++) {
        const preempt_lane *ln = &s->lane[l];
        mixed += count_mixed(v, ln->root, ln->mask);
        lane_errors += !s->one_lane && ln->sum != tsum(v, ln->root);
        lane_errors += !s->one_lane && !ln->n != (ln->root == NONE);
        need += ln->sum;
    }
    lane_errors += mixed != s->n_mixed;
    lane_errors += !s->one_lane && need != s->run_need;
}

/* Read each class's first jobs afresh and count those that differ (see
 * preempt_first_check_enable). */
static void first_verify(preempt_sched *s)
{
    for (uint32_t c = 0; c < s->n_cls; c++) {
        preempt_class *k = &s->cls[c];
        uint32_t n = k->n_first;
        if (!n)
            continue;
        preempt_slot *was = sim_reallocarray(NULL, n, sizeof *was);
        if (!was) {
            s->oom = true;
            return;
        }
        memcpy(was, k->first, (size_t)n * sizeof *was);
        bool ok = n <= k->n && first_fill(s, k, n);
        for (uint32_t i = 0; ok && i < n; i++)
            ok = was[i].id == k->first[i].id && was[i].shape == k->first[i].shape &&
                 !preempt_before(&was[i].key, &k->first[i].key) &&
                 !preempt_before(&k->first[i].key, &was[i].key);
        if (!ok && n > k->n)
            k->n_first = 0;
        first_checked++;
        first_errors += !ok;
        sim_free(was);
    }
}

/* Sift the class at place i of the line down to its place. */
static void front_down(preempt_sched *s, uint32_t i)
{
    preempt_front f = s->front[i];
    uint32_t n = s->n_front;
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= n)
            break;
        if (ch + 1 < n && preempt_before(&s->front[ch + 1].key, &s->front[ch].key))
            ch++;
        if (!preempt_before(&s->front[ch].key, &f.key))
            break;
        s->front[i] = s->front[ch];
        i = ch;
    }
    s->front[i] = f;
}

/* Every class with pending jobs enters the pass with its first job. */
static void front_init(preempt_sched *s)
{
    s->n_front = 0;
    for (uint32_t c = 0; c < s->n_cls; c++) {
        preempt_class *k = &s->cls[c];
        k->cur = 0;
        if (!k->n || (!k->n_first && !first_fill(s, k, k->n < 8 ? k->n : 8)))
            continue;
        s->front[s->n_front++] = (preempt_front){k->first[0].key, c};
    }
    for (uint32_t i = s->n_front / 2; i-- > 0;)
        front_down(s, i);
}

/* After a pass: a class's first jobs are cut to about twice what the pass read when they
 * are far more, so a job coming or going before their last moves no more than passes
 * read. */
static void first_trim(preempt_sched *s)
{
    for (uint32_t c = 0; c < s->n_cls; c++) {
        preempt_class *k = &s->cls[c];
        uint32_t keep = 2 * k->cur + 8;
        if (k->n_first / 4 > keep)
            k->n_first = keep;
    }
}

/* The next pending job in line (its class in ->cls), or NULL when none is left. */
static const preempt_front *front_top(preempt_sched *s)
{
    return s->n_front ? &s->front[0] : NULL;
}

/* Class c's next job in key order is admitted (to s->adm); c's first jobs are read further
 * when the pass reached their end. Whether c has a next job after it. */
static bool take_next(preempt_sched *s, preempt_class *c, uint32_t *n_adm)
{
    const preempt_slot *e = &c->first[c->cur++];
    s->adm_link[*n_adm].shape = e->shape;
    s->adm[(*n_adm)++] = e->id;
    if (c->cur == c->n_first && c->n_first < c->n) {
        uint64_t want = 2 * (uint64_t)c->n_first + 8;
        first_fill(s, c, want < c->n ? (uint32_t)want : c->n);
    }
    return c->cur < c->n_first;
}

/* The class at the top of the line steps on: its next job comes in line (more), or it
 * leaves the line. */
static void front_step(preempt_sched *s, const preempt_class *c, bool more)
{
    if (more)
        s->front[0].key = c->first[c->cur].key;
    else if (--s->n_front)
        s->front[0] = s->front[s->n_front];
    else
        return;
    front_down(s, 0);
}

/* The job in line is admitted (true), and the next of its class comes in line; or its
 * class leaves the line: it will not fit later in this pass. */
static void front_done(preempt_sched *s, bool admitted, uint32_t *n_adm)
{
    preempt_class *c = &s->cls[s->front[0].cls];
    front_step(s, c, admitted && take_next(s, c, n_adm));
}

/* The job in line and the jobs of its class right behind it (those before every other
 * class's next job) are admitted while each needs no more than *room, as that many calls
 * of front_done(s, true, ...) would admit them, with one step of the line for the run.
 * *room and *left lose what they take. The top of the line must fit *room. */
static void front_run(preempt_sched *s, uint64_t *room, uint64_t *left, uint32_t *n_adm)
{
    preempt_class *c = &s->cls[s->front[0].cls];
    uint64_t need = c->need;
    /* The next job of any other class: the smaller of the line's second and third. */
    const preempt_key *bound = NULL;
    if (s->n_front > 1) {
        bound = &s->front[1].key;
        if (s->n_front > 2 && preempt_before(&s->front[2].key, bound))
            bound = &s->front[2].key;
    }
    bool more;
    do {
        *room -= need;
        *left -= need;
        more = take_next(s, c, n_adm);
    } while (more && need <= *room && (!bound || preempt_before(&c->first[c->cur].key, bound)));
    front_step(s, c, more);
}

/* Admission walking every running job in key order (keys as of now), merged with the
 * heads of the class heaps: admitted pending jobs leave their heap for s->adm, running
 * jobs not admitted go to s->pre. Requests fit by h where not NULL (see hall), else by
 * cap. Returns the number admitted. O(R log L + (A + C) log C), times 2^(types present)
 * at most by h. */
static uint32_t admit_walk(preempt_sched *s, const sim_view *v, capacity *cap, hall *h,
                           uint32_t *n_pre)
{
    uint32_t n_run = list_running(s, v, false);
    /* Drifting keys are read afresh (the policy's own reading, not the lanes'), and
     * the lanes' orders merged; without drift, the keys are as filed, and the mask
     * lanes' orders merged where there are several. */
    bool fresh = s->hooks->drift != NULL, merged = fresh || s->n_lane > 1;
    if (merged) {
        for (uint32_t i = 0; i < n_run; i++) {
            preempt_entry *x = s->sorted[i];
            preempt_key filed = x->key;
            if (fresh)
                s->hooks->key(s->ctx, v, x, s->now);
            s->walk[i] = (preempt_walk){x->key, x};
            x->key = filed;
        }
        walk_sort(s->walk, s->walk2, n_run);
        if (fresh && s->one_lane) {
            /* The one lane holds every running job keyed as last read: read now, the
             * keys file it in the order just sorted, so that the next pass lists it
             * nearly in order (its sort meets few runs, not one per drift). */
            for (uint32_t i = 0; i < n_run; i++) {
                s->walk[i].x->key = s->walk[i].key;
                s->sorted[i] = s->walk[i].x;
            }
            s->lane[0].root = tree_build(s, v, s->sorted, n_run);
        }
    }
    uint32_t n_adm = 0, ri = 0;
    *n_pre = 0;
    s->n_miss = UINT32_MAX;
    front_init(s);
    for (;;) {
        const preempt_front *f = front_top(s);
        const preempt_key *kr = ri >= n_run ? NULL
                                : merged    ? &s->walk[ri].key
                                            : &s->sorted[ri]->key;
        if (kr && (!f || preempt_before(kr, &f->key))) {
            preempt_entry *x = merged ? s->walk[ri].x : s->sorted[ri];
            ri++;
            if (!admit_by(cap, h, x->need, s->by_count ? 0 : x->mask))
                s->pre[(*n_pre)++] = x->id;
            continue;
        }
        if (!f)
            break;
        const preempt_class *c = &s->cls[f->cls];
        front_done(s, admit_by(cap, h, c->need, c->mask), &n_adm);
    }
    return n_adm;
}

/* Lane l's last job requesting GPUs before k (lane terms; NULL: the last), or NONE when
 * there is none at or after pending key kp (NULL: no bound). */
static uint32_t lane_prev(const preempt_sched *s, const sim_view *v, uint32_t l,
                          const preempt_key *k, const preempt_key *kp)
{
    uint32_t t = prev_need_rec(v, s->lane[l].root, k);
    if (t != NONE && kp) {
        preempt_key q = lane_key(s, l, kp);
        if (preempt_before(&entry(v, t)->key, &q))
            t = NONE;
    }
    return t;
}

/* One step of a walk back through the lanes of s->moved (each at its `cur`): the job of
 * the latest present key among them goes to s->walk[(*n)++], and its lane steps back to
 * its job before it (at or after pending key kp). NULL when every lane is done. */
static const preempt_entry *step_back(preempt_sched *s, const sim_view *v, const preempt_key *kp,
                                      uint32_t *n)
{
    uint32_t best = NONE;
    preempt_key kb = {0, 0, 0};
    for (uint32_t i = 0; i < s->n_moved; i++) {
        uint32_t l = s->moved[i];
        if (s->lane[l].cur == NONE)
            continue;
        preempt_key k = key_now(s, entry(v, s->lane[l].cur));
        if (best == NONE || preempt_before(&kb, &k)) {
            best = l;
            kb = k;
        }
    }
    if (best == NONE)
        return NULL;
    preempt_entry *x = entry(v, s->lane[best].cur);
    s->walk[(*n)++].x = x;
    s->lane[best].cur = lane_prev(s, v, best, &x->key, kp);
    return x;
}

/* Of the running jobs requesting GPUs after key kp (from the first when NULL) and before
 * kh (to the last when NULL), `run` milli-GPUs in all, those in key order whose requests
 * summed pass `left`: the one at which the sum passes it and every one after it. They
 * are found from the last one back (the jobs before them are admitted by their sum), so
 * the cost is theirs: O(E M log n) for E jobs. Only the M lanes of s->moved hold jobs in
 * the range. Their order goes to s->walk (last first); returns E. */
static uint32_t walk_tail(preempt_sched *s, const sim_view *v, const preempt_key *kp,
                          const preempt_key *kh, uint64_t run, uint64_t left)
{
    for (uint32_t i = 0; i < s->n_moved; i++) {
        uint32_t l = s->moved[i];
        preempt_key q;
        if (kh)
            q = lane_key(s, l, kh);
        s->lane[l].cur = lane_prev(s, v, l, kh ? &q : NULL, kp);
    }
    uint32_t n = 0;
    for (uint64_t after = 0; after < run - left;) {
        const preempt_entry *x = step_back(s, v, kp, &n);
        if (!x)
            break; /* not reached: the range holds `run` */
        after += x->need;
    }
    return n;
}

/* Lane l's requests before pending head kh (NULL: all) at a pass's first head, its
 * first job at or after kh to its succ: by its sum, without a look into its treap, when
 * its last job comes before kh (not in the one lane, whose keys change in place). */
static uint64_t lane_first_prefix(preempt_sched *s, const sim_view *v, uint32_t l,
                                  const preempt_key *kh)
{
    preempt_lane *ln = &s->lane[l];
    preempt_key q;
    if (kh)
        q = lane_key(s, l, kh);
    if (!s->one_lane && (!kh || preempt_before(&ln->last, &q))) {
        ln->succ = NONE;
        return ln->sum;
    }
    return tree_prefix_succ(v, ln->root, kh ? &q : NULL, &ln->succ);
}

/* The GPU requests of lane l's jobs. */
static uint64_t lane_sum(const preempt_sched *s, const sim_view *v, uint32_t l)
{
    return s->one_lane ? tsum(v, s->lane[l].root) : s->lane[l].sum;
}

/* The running jobs' requests before pending head kh (NULL: all), from those before the
 * last head (`base`, each lane's in its pre, its first job after it in succ; none when
 * !known). Only the lanes with jobs after the last head (s->act) are looked at, and a
 * lane whose first job after it is not before kh has the same jobs before kh: its sum is
 * looked up again only otherwise, and the lanes so looked up go to s->moved. O(L log n)
 * for the first head, O(act + moved log n) for the next. */
static uint64_t lanes_ahead(preempt_sched *s, const sim_view *v, bool known, const preempt_key *kh,
                            uint64_t base)
{
    s->n_moved = 0;
    if (!known) {
        uint64_t upto = 0;
        s->n_act = 0;
        for (uint32_t l = 0; l < s->n_lane; l++) {
            preempt_lane *ln = &s->lane[l];
            ln->pre = 0;
            if (ln->root == NONE)
                continue;
            ln->pre = lane_first_prefix(s, v, l, kh);
            s->moved[s->n_moved++] = l;
            if (ln->succ != NONE)
                s->act[s->n_act++] = l;
            upto += ln->pre;
        }
        return upto;
    }
    uint64_t upto = base;
    for (uint32_t i = 0; i < s->n_act;) {
        uint32_t l = s->act[i];
        preempt_lane *ln = &s->lane[l];
        preempt_key q;
        if (kh)
            q = lane_key(s, l, kh);
        if (kh && !preempt_before(&entry(v, ln->succ)->key, &q)) {
            i++;
            continue;
        }
        uint64_t was = ln->pre;
        ln->pre = tree_prefix_succ(v, ln->root, kh ? &q : NULL, &ln->succ);
        upto += ln->pre - was;
        s->moved[s->n_moved++] = l;
        if (ln->succ == NONE)
            s->act[i] = s->act[--s->n_act]; /* no job after kh: done for the pass */
        else
            i++;
    }
    return upto;
}

/* The same admission when the capacity is one number, `left`: between two pending heads,
 * the running jobs are admitted by their sum when it fits; otherwise those before the
 * first one that does not fit are, and from there on each requesting job is visited.
 * O((A + C + K + V) L log n), V the jobs still fitting behind the first that does not. */
static uint32_t admit_sums(preempt_sched *s, const sim_view *v, uint64_t left, uint32_t *n_pre)
{
    uint32_t n_adm = 0;
    uint64_t base = 0;          /* the requests of the running jobs before the last head ... */
    bool known = false;         /* ... (each lane's in its pre, its first job after it in succ) */
    preempt_key kp = {0, 0, 0}; /* the last head */
    /* `room`: what the running jobs' whole request and the pending jobs admitted so far
     * leave. A pending job that fits in it fits wherever the running jobs fall among
     * the jobs before it (and every running job still fits after it), so it is admitted
     * without looking up their sums; the next head looked up takes the running jobs in
     * between as one run, which then fits. */
    uint64_t run_all = s->one_lane ? tsum(v, s->lane[0].root) : s->run_need;
    uint64_t room = left > run_all ? left - run_all : 0;
    *n_pre = 0;
    s->n_miss = 0;
    front_init(s);
    for (;;) {
        const preempt_front *f = front_top(s);
        if (f && s->cls[f->cls].need <= room) {
            front_run(s, &room, &left, &n_adm);
            continue;
        }
        const preempt_key *kh = f ? &f->key : NULL;
        uint64_t upto = lanes_ahead(s, v, known, kh, base);
        uint64_t run = upto - base;
        if (run <= left) {
            left -= run;
        } else {
            uint32_t n = walk_tail(s, v, known ? &kp : NULL, kh, run, left);
            uint64_t tail = 0;
            for (uint32_t i = 0; i < n; i++)
                tail += s->walk[i].x->need;
            left -= run - tail; /* the jobs before the tail fit */
            for (uint32_t i = n; i-- > 0;) {
                preempt_entry *x = s->walk[i].x;
                if (x->need <= left) {
                    left -= x->need;
                } else {
                    s->pre_short[*n_pre] = x->need - left;
                    s->pre[(*n_pre)++] = x->id;
                }
            }
        }
        if (!f)
            break;
        base = upto;
        known = true;
        kp = *kh;
        uint64_t need = s->cls[f->cls].need;
        bool fits = need <= left;
        if (fits) {
            left -= need;
            room = room > need ? room - need : 0;
        } else {
            s->miss[s->n_miss++] = (preempt_miss){*kh, need - left, f->cls};
        }
        front_done(s, fits, &n_adm);
    }
    return n_adm;
}

/* Slack of Hall's condition as admit_hall_sums keeps it, per subset of the types present
 * (h's bits), signed: whether a request of `need` on the types of bits m fits it. */
static bool slack_fits(const int64_t *sl, uint32_t full, uint32_t m, uint64_t need)
{
    if (need == 0)
        return true;
    if (!m)
        return false;
    uint32_t rest = full & ~m;
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        if (sl[m | sub] < (int64_t)need)
            return false;
        if (!sub)
            return true;
    }
}

/* Add d to the slack of every subset holding the types of bits m; returns how many
 * subsets went from no deficit to one, less how many went back. */
static int slack_add(int64_t *sl, uint32_t full, uint32_t m, int64_t d)
{
    int neg = 0;
    uint32_t rest = full & ~m;
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        int64_t was = sl[m | sub];
        sl[m | sub] = was + d;
        neg += (sl[m | sub] < 0) - (was < 0);
        if (!sub)
            return neg;
    }
}

/* admit_walk's admission by h, without the walk, where the running jobs are filed by the
 * GPU types they accept (lanes of one set of types each, none mixed): admit_sums with
 * Hall's condition for the one number. The running jobs hold GPUs of the types they
 * accept, so they can be served together, and `room` (what all of them and the pending
 * jobs admitted so far leave) admits a pending job wherever it falls among them: no
 * running job is turned away for it. Another pending job is weighed where it falls: the
 * running jobs since the last one so weighed are taken by their sums, lane by lane (each
 * lane's as a request on its set of types), when they fit; otherwise from the last back
 * until those before fit, and the ones so found are weighed one by one in key order, as
 * the walk does. false when the running jobs do not fit the GPUs up (the walk decides).
 * O((A + C) 2^T + H L log R + (E + V) (L + log R) 2^T): A admitted, C classes, H jobs
 * weighed where they fall, E turned away, V fitting behind them. */
static bool admit_hall_sums(preempt_sched *s, const sim_view *v, const hall *h, uint32_t *n_adm,
                            uint32_t *n_pre)
{
    uint32_t full = h->full;
    int64_t left[1u << HALL_TYPES], room[1u << HALL_TYPES];
    /* Sums by set of types (bits): slack_add is linear, and a slack once short stays
     * so as requests are taken off, so the lanes' requests are taken off set by set. */
    uint64_t by_bits[1u << HALL_TYPES];
    for (uint32_t u = 0; u <= full; u++) {
        left[u] = room[u] = (int64_t)h->slack[u];
        by_bits[u] = 0;
    }
    for (uint32_t l = 0; l < s->n_lane; l++) {
        preempt_lane *ln = &s->lane[l];
        ln->lm = hall_bits(h, ln->mask);
        uint64_t all = ln->root == NONE ? 0 : lane_sum(s, v, l);
        if (all && !ln->lm)
            return false;
        by_bits[ln->lm] += all;
    }
    for (uint32_t u = 1; u <= full; u++)
        if (by_bits[u])
            slack_add(room, full, u, -(int64_t)by_bits[u]);
    for (uint32_t u = 0; u <= full; u++)
        if (room[u] < 0)
            return false; /* the running jobs do not fit (the walk decides) */
    *n_adm = *n_pre = 0;
    s->n_miss = UINT32_MAX;
    front_init(s);
    const preempt_key *kp = NULL; /* the last pending job weighed where it falls */
    preempt_key kpv;
    for (;;) {
        const preempt_front *f = front_top(s);
        const preempt_class *c = f ? &s->cls[f->cls] : NULL;
        uint32_t cm = c ? hall_bits(h, c->mask) : 0;
        if (c && slack_fits(room, full, cm, c->need)) {
            slack_add(room, full, cm, -(int64_t)c->need);
            slack_add(left, full, cm, -(int64_t)c->need);
            front_done(s, true, n_adm);
            continue;
        }
        /* The running jobs since kp, before f (to the last without f), lane by lane: as
         * in admit_sums, only the lanes with jobs between kp and kh are looked up. */
        const preempt_key *kh = f ? &f->key : NULL;
        int neg = 0;
        for (uint32_t u = 0; u <= full; u++)
            neg += left[u] < 0;
        uint32_t m = 0;
        if (!kp) {
            s->n_act = 0;
            for (uint32_t u = 0; u <= full; u++)
                by_bits[u] = 0;
            for (uint32_t l = 0; l < s->n_lane; l++) {
                preempt_lane *ln = &s->lane[l];
                ln->pre = 0;
                if (ln->root == NONE)
                    continue;
                ln->pre = lane_first_prefix(s, v, l, kh);
                if (ln->succ != NONE)
                    s->act[s->n_act++] = l;
                if (ln->pre) {
                    by_bits[ln->lm] += ln->pre;
                    s->moved[m++] = l;
                }
            }
            for (uint32_t u = 1; u <= full; u++)
                if (by_bits[u])
                    neg += slack_add(left, full, u, -(int64_t)by_bits[u]);
        } else {
            for (uint32_t i = 0; i < s->n_act;) {
                uint32_t l = s->act[i];
                preempt_lane *ln = &s->lane[l];
                preempt_key q;
                if (kh)
                    q = lane_key(s, l, kh);
                if (kh && !preempt_before(&entry(v, ln->succ)->key, &q)) {
                    i++;
                    continue;
                }
                uint64_t was = ln->pre;
                ln->pre = tree_prefix_succ(v, ln->root, kh ? &q : NULL, &ln->succ);
                if (ln->pre > was) {
                    neg += slack_add(left, full, ln->lm, -(int64_t)(ln->pre - was));
                    s->moved[m++] = l;
                }
                if (ln->succ == NONE)
                    s->act[i] = s->act[--s->n_act];
                else
                    i++;
            }
        }
        s->n_moved = m;
        /* From the last back until those before fit (each lane's last before kh; keys
         * compared as at the pass's time). */
        uint32_t n = 0;
        if (neg > 0)
            for (uint32_t i = 0; i < m; i++) {
                uint32_t l = s->moved[i];
                preempt_key q;
                if (kh)
                    q = lane_key(s, l, kh);
                s->lane[l].cur = lane_prev(s, v, l, kh ? &q : NULL, kp);
            }
        while (neg > 0) {
            const preempt_entry *x = step_back(s, v, kp, &n);
            if (!x)
                return false; /* not reached: the jobs since kp hold what is missing */
            neg += slack_add(left, full, s->lane[x->lane].lm, (int64_t)x->need);
        }
        for (uint32_t i = n; i-- > 0;) {
            preempt_entry *x = s->walk[i].x;
            uint32_t xm = s->lane[x->lane].lm;
            if (slack_fits(left, full, xm, x->need))
                slack_add(left, full, xm, -(int64_t)x->need);
            else
                s->pre[(*n_pre)++] = x->id;
        }
        if (!f)
            return true;
        kpv = *kh;
        kp = &kpv;
        bool fits = slack_fits(left, full, cm, c->need);
        if (fits) {
            slack_add(left, full, cm, -(int64_t)c->need);
            slack_add(room, full, cm, -(int64_t)c->need);
        }
        front_done(s, fits, n_adm);
    }
}

/* Whether x, the i-th job preempted by the pass, waits with the key it was weighed by
 * (`was`): then a pass now would turn it away where the pass just made did (it did not
 * fit there), as a waiting job of its class, which leaves the line there unless it left
 * before; s->miss becomes that pass's. */
static bool preempted_keeps(preempt_sched *s, const preempt_entry *x, const preempt_key *was,
                            uint32_t i)
{
    if (preempt_before(&x->key, was) || preempt_before(was, &x->key))
        return false;
    if (s->n_miss == UINT32_MAX)
        return true;
    uint32_t k = 0;
    while (k < s->n_miss && s->miss[k].cls != x->cls)
        k++;
    if (k < s->n_miss && preempt_before(&s->miss[k].key, &x->key))
        return true;
    s->miss[k] = (preempt_miss){x->key, s->pre_short[i], x->cls};
    s->n_miss += k == s->n_miss;
    return true;
}

/* Start the admitted jobs (s->adm, linked shape by shape) that find a node; `same`: the
 * jobs preempted before wait with the keys they were weighed by (preempted_keeps). The
 * admitted jobs that start leave their heaps; the others wait there still. A pass now
 * would then decide nothing (settled) when the jobs started run with the keys they were
 * admitted by: it would admit the same jobs, and each admitted job left waiting has a
 * shape that failed after the last release (the starts release nothing). */
static int place_admitted(preempt_sched *s, const sim_view *v, policy_decisions *out, bool same)
{
    int rc = place_pass_run_ordered(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                                    PLACE_GPU_MOST_USED, false, &s->order);
    s->wake_at = preempt_next_wakeup(s, v, SIM_TIME_NEVER);
    s->settled = rc == SIM_OK && same && (s->n_started == 0 || !s->hooks->started);
    s->settled_change = v->change_epoch;
    return rc;
}

int preempt_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    preempt_sched *s = st;
    if (s->oom ||
        !sim_reserve((void **)&s->shape_first, &s->shape_cap, v->n_shapes, sizeof *s->shape_first))
        return SIM_ENOMEM;
    s->now = now;
    s->now_us = (double)now;
    /* A pass that would decide nothing: a pass made right after the last one would
     * have decided nothing (the last one admitted every running job, or the jobs it
     * preempted wait with the keys they were weighed by, and the jobs it started run
     * with theirs: the same jobs would be admitted, and each admitted waiting job's
     * shape failed after the last release); since then no job came or went, no node
     * changed (so no shape that failed can fit) and no waiting job's key changed; each
     * running job whose key changed moved where it changes no admission (rekey_keeps).
     * Keys that drift with time and policies renumbering at each pass are left to the
     * full pass. */
    bool quiet = settled_on && s->settled && !s->hooks->drift && !s->hooks->pass_begin &&
                 (s->by_count || s->n_masked == 0);
    /* Only finishes that change no admission since (finish_keeps), and no node went
     * down or came back: the last pass's admitted jobs, left waiting, are admitted
     * again, and only their placement is left to do. */
    bool place_only = quiet && s->place_only && v->up_epoch == s->cap_epoch;
    s->place_only = false;
    quiet = quiet && (place_only || v->change_epoch == s->settled_change);
    update_running(s, v, now, &quiet);
    if (rekey_due(s, v, now))
        quiet = false;
    s->n_started = 0;
    if (quiet && place_only)
        return place_admitted(s, v, out, true);
    if (quiet) {
        __atomic_fetch_add(&settled_skips, 1, __ATOMIC_RELAXED);
        s->wake_at = preempt_next_wakeup(s, v, SIM_TIME_NEVER);
        return SIM_OK;
    }
    up_capacity(s, v);
    if (s->rekey_running) {
        s->rekey_running = false;
        if (!all_fit(s, v, s->cap_left[0])) {
            rekey_running_all(s, v, now);
            __atomic_fetch_add(&rekeys_late, 1, __ATOMIC_RELAXED);
        }
    }
    if (first_check) {
        first_verify(s);
        lanes_verify(s, v);
    }
    uint32_t n_pre, n_adm;
    if (fast_on && (s->by_count || s->n_masked == 0)) {
        uint64_t left = 0;
        for (uint64_t m = s->cap_types; m; m &= m - 1)
            left += s->cap_left[__builtin_ctzll(m)];
        if (s->one_lane && !all_fit(s, v, left) && any_may_fit(s, v, left))
            rekey_one_lane(s, v, now, left);
        n_adm = admit_sums(s, v, left, &n_pre);
    } else {
        capacity cap = {.types = s->cap_types};
        memcpy(cap.left, s->cap_left, sizeof cap.left);
        /* Where jobs are tied to GPU types, their requests are tested together (hall);
         * otherwise (or with too many types) type by type. */
        hall h;
        bool exact = !s->by_count && s->n_masked > 0 && hall_init(&h, s->cap_left, s->cap_types);
        n_pre = 0;
        if (fast_on && exact && !s->one_lane && s->n_mixed == 0 &&
            admit_hall_sums(s, v, &h, &n_adm, &n_pre))
            __atomic_fetch_add(&hall_fast_passes, 1, __ATOMIC_RELAXED);
        else {
            if (fast_on && exact && s->n_mixed)
                __atomic_fetch_add(&mixed_passes, 1, __ATOMIC_RELAXED);
            n_adm = admit_walk(s, v, &cap, exact ? &h : NULL, &n_pre);
        }
    }
    if (s->oom)
        return SIM_ENOMEM; /* a class's first jobs could not be read */
    first_trim(s);
    /* Preemptions first, so the jobs admitted in their place find the room. */
    bool same = !s->hooks->preempted;
    for (uint32_t i = 0; i < n_pre; i++) {
        preempt_entry *x = entry(v, s->pre[i]);
        int rc = sim_decide_preempt(out, x->id, s->checkpoint);
        if (rc != SIM_OK)
            return rc;
        preempt_key was = x->key;
        make_pending(s, v, x, preempt_attained(x, now), now, i, n_pre);
        if (same)
            same = preempted_keeps(s, x, &was, i);
    }
    /* Start the admitted pending jobs in priority order: the shared pass tries one job
     * per shape at a time and drops a shape at its first failure. */
    for (uint32_t k = 0; k < v->n_active_shapes; k++)
        if (v->active_shapes[k] < s->shape_cap)
            s->shape_first[v->active_shapes[k]] = NONE;
    for (uint32_t i = n_adm; i-- > 0;) {
        preempt_link *a = &s->adm_link[i];
        a->next = NONE;
        if (a->shape >= s->shape_cap)
            continue;
        a->next = s->shape_first[a->shape];
        s->shape_first[a->shape] = i;
    }
    return place_admitted(s, v, out, same);
}

/* The next moment a key changes on its own: a running job's (next_change) or a pending
 * one's (due). Between those, only arrivals and departures change anything, and they
 * call schedule() anyway. */
sim_time preempt_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const preempt_sched *s = st;
    if (now == s->now)
        return s->wake_at; /* gathered by the pass just made */
    sim_time next = SIM_TIME_NEVER;
    if (s->n_rdue)
        next = entry(v, s->rheap[0])->rdue;
    if (s->n_due && entry(v, s->dheap[0])->due < next)
        next = entry(v, s->dheap[0])->due;
    return next;
}
