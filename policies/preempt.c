/*
 * preempt.c: the priority-ordered admission, preemption and placement pass shared by the
 * preemptive policies (see preempt.h). Invariants: every job in the system has a listed
 * entry in its policy state; a pending job is in exactly one class heap (except while a
 * pass holds it as admitted), a running one in the running list; a pending job with a
 * due time is in the heap of due times.
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

/* ---- Class heaps: pending jobs by key, each entry knowing its slot. ---- */

static void cls_set(preempt_class *c, const sim_view *v, uint32_t i, sim_job_id id)
{
    c->heap[i] = id;
    entry(v, id)->slot = i;
}

static void cls_up(preempt_class *c, const sim_view *v, uint32_t i)
{
    sim_job_id id = c->heap[i];
    const preempt_key *k = &entry(v, id)->key;
    while (i > 0 && preempt_before(k, &entry(v, c->heap[(i - 1) / 2])->key)) {
        cls_set(c, v, i, c->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    cls_set(c, v, i, id);
}

static void cls_down(preempt_class *c, const sim_view *v, uint32_t i)
{
    sim_job_id id = c->heap[i];
    const preempt_key *k = &entry(v, id)->key;
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= c->n)
            break;
        if (ch + 1 < c->n &&
            preempt_before(&entry(v, c->heap[ch + 1])->key, &entry(v, c->heap[ch])->key))
            ch++;
        if (!preempt_before(&entry(v, c->heap[ch])->key, k))
            break;
        cls_set(c, v, i, c->heap[ch]);
        i = ch;
    }
    cls_set(c, v, i, id);
}

/* Room was reserved at arrival (a class heap holds at most the jobs in the system). */
static void cls_push(preempt_class *c, const sim_view *v, sim_job_id id)
{
    c->heap[c->n++] = id;
    cls_up(c, v, c->n - 1);
}

static void cls_remove(preempt_class *c, const sim_view *v, uint32_t i)
{
    entry(v, c->heap[i])->slot = NONE;
    if (--c->n == i)
        return;
    sim_job_id moved = c->heap[c->n];
    cls_set(c, v, i, moved);
    cls_down(c, v, i);
    cls_up(c, v, entry(v, moved)->slot);
}

/* ---- Heap of due times. ---- */

static void due_set(preempt_sched *s, const sim_view *v, uint32_t i, sim_job_id id)
{
    s->dheap[i] = id;
    entry(v, id)->dslot = i;
}

static void due_up(preempt_sched *s, const sim_view *v, uint32_t i)
{
    sim_job_id id = s->dheap[i];
    sim_time t = entry(v, id)->due;
    while (i > 0 && t < entry(v, s->dheap[(i - 1) / 2])->due) {
        due_set(s, v, i, s->dheap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    due_set(s, v, i, id);
}

static void due_down(preempt_sched *s, const sim_view *v, uint32_t i)
{
    sim_job_id id = s->dheap[i];
    sim_time t = entry(v, id)->due;
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= s->n_due)
            break;
        if (ch + 1 < s->n_due && entry(v, s->dheap[ch + 1])->due < entry(v, s->dheap[ch])->due)
            ch++;
        if (entry(v, s->dheap[ch])->due >= t)
            break;
        due_set(s, v, i, s->dheap[ch]);
        i = ch;
    }
    due_set(s, v, i, id);
}

static void due_remove(preempt_sched *s, const sim_view *v, preempt_entry *x)
{
    uint32_t i = x->dslot;
    x->due = SIM_TIME_NEVER;
    if (i == NONE)
        return;
    x->dslot = NONE;
    if (--s->n_due == i)
        return;
    sim_job_id moved = s->dheap[s->n_due];
    due_set(s, v, i, moved);
    due_down(s, v, i);
    due_up(s, v, entry(v, moved)->dslot);
}

/* x just became pending (or was re-keyed): file its due time. */
static void due_file(preempt_sched *s, const sim_view *v, preempt_entry *x, sim_time now)
{
    due_remove(s, v, x);
    x->due = s->hooks->due ? s->hooks->due(s->ctx, x, now) : SIM_TIME_NEVER;
    if (x->due == SIM_TIME_NEVER)
        return;
    s->dheap[s->n_due++] = x->id;
    due_up(s, v, s->n_due - 1);
}

/* ---- Set-up and bookkeeping. ---- */

int preempt_init(preempt_sched *s, const policy_config *cfg, const preempt_hooks *h, void *ctx,
                 bool checkpoint, sim_diag *d)
{
    s->hooks = h;
    s->ctx = ctx;
    s->checkpoint = checkpoint;
    s->now = SIM_TIME_NEVER;
    s->wake_at = SIM_TIME_NEVER;
    s->order = (place_order){.head = adm_head, .started = adm_started, .ctx = s};
    return place_ws_init(&s->ws, cfg, d);
}

void preempt_fini(preempt_sched *s)
{
    for (uint32_t c = 0; c < s->n_cls; c++)
        sim_free(s->cls[c].heap);
    sim_free(s->cls);
    sim_free(s->run);
    sim_free(s->adm);
    sim_free(s->pre);
    sim_free(s->sorted);
    sim_free(s->chead);
    sim_free(s->dheap);
    sim_free(s->shape_first);
    place_ws_fini(&s->ws);
}

/* Grow *p (elements of size sz, capacity *cap) to hold at least n. */
static bool reserve(void **p, uint32_t *cap, uint32_t n, size_t sz)
{
    if (n <= *cap)
        return true;
    uint32_t ncap = *cap ? *cap : 64;
    while (ncap < n)
        ncap *= 2;
    void *np = sim_reallocarray(*p, ncap, sz);
    if (!np)
        return false;
    *p = np;
    *cap = ncap;
    return true;
}

/* The class of (need, mask), added if new; NONE when the table cannot grow. The classes
 * are few (distinct GPU requests), so a linear search serves. */
static uint32_t class_of(preempt_sched *s, uint64_t need, uint64_t mask)
{
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].need == need && s->cls[c].mask == mask)
            return c;
    if (!reserve((void **)&s->cls, &s->cls_cap, s->n_cls + 1, sizeof *s->cls) ||
        !reserve((void **)&s->chead, &s->chead_cap, s->n_cls + 1, sizeof *s->chead))
        return NONE;
    s->cls[s->n_cls] = (preempt_class){.need = need, .mask = mask};
    return s->n_cls++;
}

void preempt_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    preempt_sched *s = st;
    const sim_job *j = sim_view_job(v, id);
    uint64_t need = (uint64_t)j->nominal_replicas * j->gpus_per_replica * j->spec.gpu_milli;
    uint32_t c = class_of(s, need, s->by_count ? 0 : j->spec.gpu_type_mask);
    uint32_t n = s->n_sys + 1;
    if (c == NONE ||
        !reserve((void **)&s->cls[c].heap, &s->cls[c].cap, s->cls[c].members + 1,
                 sizeof(sim_job_id)) ||
        !reserve((void **)&s->run, &s->run_cap, n, sizeof *s->run) ||
        !reserve((void **)&s->sorted, &s->sorted_cap, n, sizeof *s->sorted) ||
        !reserve((void **)&s->pre, &s->pre_cap, n, sizeof *s->pre) ||
        !reserve((void **)&s->adm, &s->adm_cap, n, sizeof *s->adm) ||
        !reserve((void **)&s->dheap, &s->due_cap, n, sizeof *s->dheap) ||
        !reserve((void **)&s->shape_first, &s->shape_cap, v->n_shapes,
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
        .seq = j->seq,
        .need = need,
        .mask = j->spec.gpu_type_mask,
        .id = id,
        .cls = c,
        .slot = NONE,
        .dslot = NONE,
        .listed = true,
    };
    s->hooks->key(s->ctx, v, x, v->now);
    cls_push(&s->cls[c], v, id);
    due_file(s, v, x, v->now);
}

static void run_remove(preempt_sched *s, const sim_view *v, uint32_t i)
{
    memmove(s->run + i, s->run + i + 1, (s->n_run - i - 1) * sizeof *s->run);
    s->n_run--;
    for (; i < s->n_run; i++)
        entry(v, s->run[i])->slot = i;
}

void preempt_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    preempt_sched *s = st;
    preempt_entry *x = entry(v, id);
    if (!x->listed)
        return;
    if (x->running)
        run_remove(s, v, x->slot);
    else if (x->slot != NONE)
        cls_remove(&s->cls[x->cls], v, x->slot);
    due_remove(s, v, x);
    s->cls[x->cls].members--;
    s->n_sys--;
    x->listed = false;
}

/* A failed node sent the job back to the queue: the next pass takes it back. */
void preempt_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    (void)st;
    entry(v, id)->requeued = true;
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

/* x, the i-th of k jobs taken off their GPUs at now in priority order, becomes pending:
 * keyed and queued. */
static void queue_pending(preempt_sched *s, const sim_view *v, preempt_entry *x, sim_time now,
                          uint32_t i, uint32_t k)
{
    s->hooks->key(s->ctx, v, x, now);
    if (s->hooks->preempted)
        s->hooks->preempted(s->ctx, x, i, k);
    cls_push(&s->cls[x->cls], v, x->id);
    due_file(s, v, x, now);
}

void preempt_rekey_all(preempt_sched *s, const sim_view *v, sim_time now)
{
    for (uint32_t c = 0; c < s->n_cls; c++) {
        preempt_class *k = &s->cls[c];
        for (uint32_t i = 0; i < k->n; i++)
            s->hooks->key(s->ctx, v, entry(v, k->heap[i]), now);
        for (uint32_t i = k->n / 2; i-- > 0;)
            cls_down(k, v, i);
    }
}

/* ---- The pass. ---- */

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

/* What is left of the up GPUs' capacity, per type (or all in slot 0 when admitting by
 * count), in milli-GPU; `types` has a bit for each slot with some left. */
typedef struct capacity {
    uint64_t left[SIM_MAX_GPU_TYPES];
    uint64_t types;
} capacity;

/* Take x's request from what is left of the types it accepts, in type order, if it fits.
 * O(types with capacity left). */
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

static const preempt_key *head_key(const preempt_sched *s, const sim_view *v, uint32_t c)
{
    return &entry(v, s->cls[c].heap[0])->key;
}

static void chead_down(preempt_sched *s, const sim_view *v, uint32_t n, uint32_t i)
{
    uint32_t c = s->chead[i];
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= n)
            break;
        if (ch + 1 < n &&
            preempt_before(head_key(s, v, s->chead[ch + 1]), head_key(s, v, s->chead[ch])))
            ch++;
        if (!preempt_before(head_key(s, v, s->chead[ch]), head_key(s, v, c)))
            break;
        s->chead[i] = s->chead[ch];
        i = ch;
    }
    s->chead[i] = c;
}

static void note_wake(preempt_sched *s, const preempt_entry *x, sim_time now)
{
    if (!s->hooks->next_change)
        return;
    sim_time t = s->hooks->next_change(s->ctx, x, now);
    if (t < s->wake_at)
        s->wake_at = t;
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
    s->shape_first[shape] = x->next;
    if (s->hooks->started)
        s->hooks->started(s->ctx, x, s->now);
    x->t0 = s->now;
    x->rate = (double)x->need / SIM_MILLI_GPU;
    x->running = x->started = true;
    due_remove(s, v, x);
    x->slot = s->n_run;
    s->run[s->n_run++] = id;
    note_wake(s, x, s->now);
}

/* Take back the running jobs a failure requeued, re-key the others and sort them. */
static void rekey_running(preempt_sched *s, const sim_view *v, sim_time now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_run; i++) {
        preempt_entry *x = entry(v, s->run[i]);
        if (x->requeued) {
            x->requeued = false;
            stop(x, sim_view_attained(v, x->id), now);
            queue_pending(s, v, x, now, 0, 1);
            continue;
        }
        s->sorted[n++] = x;
    }
    s->n_run = n;
    sort_entries(s->sorted, n);
    if (s->hooks->pass_begin)
        s->hooks->pass_begin(s->ctx, v, s->sorted, n);
    for (uint32_t i = 0; i < n; i++)
        s->hooks->key(s->ctx, v, s->sorted[i], now);
    sort_entries(s->sorted, n);
    for (uint32_t i = 0; i < n; i++) {
        s->run[i] = s->sorted[i]->id;
        s->sorted[i]->slot = i;
    }
}

/* Re-key the pending jobs whose due time has come. */
static void rekey_due(preempt_sched *s, const sim_view *v, sim_time now)
{
    while (s->n_due && entry(v, s->dheap[0])->due <= now) {
        preempt_entry *x = entry(v, s->dheap[0]);
        due_remove(s, v, x);
        preempt_class *c = &s->cls[x->cls];
        s->hooks->key(s->ctx, v, x, now);
        cls_up(c, v, x->slot);
        cls_down(c, v, x->slot);
        due_file(s, v, x, now);
    }
}

static capacity up_capacity(const preempt_sched *s, const sim_view *v)
{
    capacity cap = {.types = 0};
    for (uint32_t nd = 0; nd < v->n_nodes; nd++)
        if (v->node_up[nd] && v->node_gpu_count[nd] && v->node_gpu_type[nd] > 0 &&
            v->node_gpu_type[nd] < SIM_MAX_GPU_TYPES) {
            uint32_t t = s->by_count ? 0 : v->node_gpu_type[nd];
            cap.left[t] += (uint64_t)v->node_gpu_count[nd] * SIM_MILLI_GPU;
            cap.types |= UINT64_C(1) << t;
        }
    return cap;
}

/* Merge the running jobs with the heads of the class heaps in key order and admit while
 * the requests fit: admitted pending jobs leave their heap for s->adm, running jobs not
 * admitted go to s->pre. Returns the number admitted. */
static uint32_t admit_all(preempt_sched *s, const sim_view *v, capacity *cap, uint32_t *n_pre)
{
    uint32_t nch = 0, n_adm = 0, ri = 0;
    *n_pre = 0;
    for (uint32_t c = 0; c < s->n_cls; c++)
        if (s->cls[c].n)
            s->chead[nch++] = c;
    for (uint32_t i = nch / 2; i-- > 0;)
        chead_down(s, v, nch, i);
    while (ri < s->n_run || nch) {
        if (ri < s->n_run &&
            (!nch || preempt_before(&s->sorted[ri]->key, head_key(s, v, s->chead[0])))) {
            preempt_entry *x = s->sorted[ri++];
            if (!admit(cap, x->need, s->by_count ? 0 : x->mask))
                s->pre[(*n_pre)++] = x->id;
            continue;
        }
        preempt_class *c = &s->cls[s->chead[0]];
        if (admit(cap, c->need, c->mask)) {
            s->adm[n_adm++] = c->heap[0];
            cls_remove(c, v, 0);
            if (c->n) {
                chead_down(s, v, nch, 0);
                continue;
            }
        }
        /* The class is empty, or does not fit: it will not fit later in this pass. */
        s->chead[0] = s->chead[--nch];
        if (nch)
            chead_down(s, v, nch, 0);
    }
    return n_adm;
}

int preempt_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    preempt_sched *s = st;
    if (s->oom || !reserve((void **)&s->shape_first, &s->shape_cap, v->n_shapes,
                           sizeof *s->shape_first))
        return SIM_ENOMEM;
    s->now = now;
    s->wake_at = SIM_TIME_NEVER;
    rekey_running(s, v, now);
    rekey_due(s, v, now);
    capacity cap = up_capacity(s, v);
    uint32_t n_pre, n_adm = admit_all(s, v, &cap, &n_pre);
    /* Preemptions first, so the jobs admitted in their place find the room. */
    for (uint32_t i = 0; i < n_pre; i++) {
        preempt_entry *x = entry(v, s->pre[i]);
        int rc = sim_decide_preempt(out, x->id, s->checkpoint);
        if (rc != SIM_OK)
            return rc;
        run_remove(s, v, x->slot);
        stop(x, preempt_attained(x, now), now);
        queue_pending(s, v, x, now, i, n_pre);
    }
    for (uint32_t i = 0; i < s->n_run; i++)
        note_wake(s, entry(v, s->run[i]), now);
    /* Start the admitted pending jobs in priority order: the shared pass tries one job
     * per shape at a time and drops a shape at its first failure. */
    for (uint32_t k = 0; k < v->n_active_shapes; k++)
        if (v->active_shapes[k] < s->shape_cap)
            s->shape_first[v->active_shapes[k]] = NONE;
    for (uint32_t i = n_adm; i-- > 0;) {
        preempt_entry *x = entry(v, s->adm[i]);
        uint32_t shape = sim_view_job(v, x->id)->shape;
        x->next = NONE;
        if (shape >= s->shape_cap)
            continue;
        x->next = s->shape_first[shape];
        s->shape_first[shape] = i;
    }
    int rc = place_pass_run_ordered(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                                    PLACE_GPU_MOST_USED, false, &s->order);
    /* The admitted jobs that found no room wait in their heaps again. */
    for (uint32_t i = 0; i < n_adm; i++) {
        preempt_entry *x = entry(v, s->adm[i]);
        if (!x->running)
            cls_push(&s->cls[x->cls], v, x->id);
    }
    if (s->n_due && entry(v, s->dheap[0])->due < s->wake_at)
        s->wake_at = entry(v, s->dheap[0])->due;
    return rc;
}

sim_time preempt_next_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const preempt_sched *s = st;
    if (now == s->now)
        return s->wake_at; /* gathered by the pass just made */
    sim_time next = SIM_TIME_NEVER;
    if (s->hooks->next_change)
        for (uint32_t i = 0; i < s->n_run; i++) {
            sim_time t = s->hooks->next_change(s->ctx, entry(v, s->run[i]), now);
            if (t < next)
                next = t;
        }
    if (s->n_due && entry(v, s->dheap[0])->due < next)
        next = entry(v, s->dheap[0])->due;
    return next;
}
