/*
 * sjf.c: shortest job first with an oracle — the classic lower bound on mean JCT for a
 * non-preemptive scheduler, and the baseline of Tiresias (Gu et al., NSDI'19). Pending
 * jobs are tried in order of their remaining reference work (the trace's duration, less
 * what a job did before a failure requeued it), shortest first, ties by arrival order;
 * each holds the share it asked for, on the most-allocated node and GPUs that fit, as
 * in binpack. With backfilling (the default) a job that does not fit is skipped;
 * without, the shortest job blocks the others. No preemption: a running job is never
 * stopped for a shorter one (`srtf`, policies/srtf.c, is the preemptive variant).
 *
 * The order is kept per shape (identical requests) in binary heaps of job ids, so a pass
 * costs O(shapes log shapes + started jobs x log) plus placement, not O(queue).
 */
#include "policies/place.h"

#include "base/alloc.h"

#include <math.h>
#include <string.h>

/* A queued job with its key, fixed when it was queued: its remaining reference work
 * (microseconds) and its arrival order (unique, so the order is total); and its entry
 * into the pending list, which tells a stale entry from a live one. */
typedef struct sjf_entry {
    uint64_t work_us, arrival, enqueued;
    sim_job_id id;
} sjf_entry;

typedef struct sjf_heap {
    sjf_entry *e;
    uint32_t n, cap;
} sjf_heap;

typedef struct sjf_state {
    place_ws ws;
    bool backfill;
    sjf_heap *heaps; /* per shape id */
    uint32_t n_heaps;
    bool oom; /* a heap could not grow: the next pass fails */
    place_order order;
} sjf_state;

static const policy_option sjf_options[] = {
    {"backfill", "true", "start a longer job when a shorter one does not fit"},
    {NULL, NULL, NULL},
};

static bool before(const sjf_entry *a, const sjf_entry *b)
{
    return a->work_us < b->work_us || (a->work_us == b->work_us && a->arrival < b->arrival);
}

static void heap_push(sjf_heap *h, sjf_entry x)
{
    uint32_t i = h->n++;
    while (i > 0 && before(&x, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
}

static void heap_pop(sjf_heap *h)
{
    sjf_entry last = h->e[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c]))
            c++;
        if (!before(&h->e[c], &last))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n)
        h->e[i] = last;
}

/* The shortest pending job of a shape. An entry whose job is no longer pending in this
 * shape under the same entry (started, requeued under another shape id, or its id
 * reused) is dropped on the way. */
static sim_job_id sjf_head(void *ctx, const sim_view *v, uint32_t shape, uint64_t *key,
                           uint64_t *key2)
{
    sjf_state *s = ctx;
    if (shape >= s->n_heaps)
        return SIM_JOB_NONE;
    sjf_heap *h = &s->heaps[shape];
    while (h->n) {
        const sjf_entry *top = &h->e[0];
        const sim_job *j = sim_view_job(v, top->id);
        if (j->state == SIM_JOB_PENDING && j->shape == shape &&
            j->enqueue_seq == top->enqueued) {
            *key = top->work_us;
            *key2 = top->arrival;
            return top->id;
        }
        heap_pop(h);
    }
    return SIM_JOB_NONE;
}

static void sjf_started(void *ctx, const sim_view *v, uint32_t shape, sim_job_id id)
{
    (void)v;
    (void)id;
    sjf_state *s = ctx;
    heap_pop(&s->heaps[shape]);
}

static int sjf_init(void *st, const policy_config *cfg, sim_diag *d)
{
    sjf_state *s = st;
    int rc = policy_config_bool(cfg, sjf_options, "backfill", &s->backfill, d);
    if (rc != SIM_OK)
        return rc;
    s->order = (place_order){.head = sjf_head, .started = sjf_started, .ctx = s};
    return place_ws_init(&s->ws, cfg, d);
}

static void sjf_fini(void *st)
{
    sjf_state *s = st;
    for (uint32_t i = 0; i < s->n_heaps; i++)
        sim_free(s->heaps[i].e);
    sim_free(s->heaps);
    place_ws_fini(&s->ws);
}

/* Queue a pending job under its shape; the tables grow at new peaks only. */
static void sjf_enqueue(void *st, const sim_view *v, sim_job_id id)
{
    sjf_state *s = st;
    uint32_t shape = sim_view_job(v, id)->shape;
    if (shape >= s->n_heaps) {
        uint32_t ncap = s->n_heaps ? s->n_heaps : 16;
        while (ncap <= shape)
            ncap *= 2;
        sjf_heap *nh = sim_reallocarray(s->heaps, ncap, sizeof *nh);
        if (!nh) {
            s->oom = true;
            return;
        }
        memset(nh + s->n_heaps, 0, (ncap - s->n_heaps) * sizeof *nh);
        s->heaps = nh;
        s->n_heaps = ncap;
    }
    sjf_heap *h = &s->heaps[shape];
    if (h->n == h->cap) {
        uint32_t ncap = h->cap ? h->cap * 2 : 8;
        sjf_entry *ne = sim_reallocarray(h->e, ncap, sizeof *ne);
        if (!ne) {
            s->oom = true;
            return;
        }
        h->e = ne;
        h->cap = ncap;
    }
    const sim_job *j = sim_view_job(v, id);
    double left = j->work_total_s - j->work_done_s;
    heap_push(h, (sjf_entry){.work_us = left > 0 ? (uint64_t)llround(left * 1e6) : 0,
                             .arrival = j->seq,
                             .enqueued = j->enqueue_seq,
                             .id = id});
}

static int sjf_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    sjf_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    return place_pass_run_ordered(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                                  PLACE_GPU_MOST_USED, !s->backfill, &s->order);
}

const policy_ops policy_sjf = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "sjf",
    .summary = "non-preemptive shortest remaining work first (oracle durations), requested "
               "shares, most-allocated node and GPU (srtf is the preemptive variant)",
    .state_size = sizeof(sjf_state),
    .options = sjf_options,
    .init = sjf_init,
    .fini = sjf_fini,
    .on_arrival = sjf_enqueue,
    .on_requeue = sjf_enqueue,
    .schedule = sjf_schedule,
};
