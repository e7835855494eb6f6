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
 * qssf: Helios' quasi-shortest-service-first (Hu et al., SC'21; the QSSF service of
 * S-Lab-System-Group/HeliosArtifact, policies/qssf.py): the same non-preemptive pass, but
 * the key is the predicted GPU service, predicted duration x GPUs, from the per-tenant
 * duration predictor (models/duration.h) at arrival: a job ends, its duration enters the
 * history; the models are refitted every `retrain_interval` simulated seconds. Without
 * backfilling by default, as the reference stops at the first job that does not fit.
 * A job that arrives before any job has finished has no prediction: key 0 (it goes first,
 * in arrival order). A job without GPUs (the reference keeps GPU jobs only) is keyed as
 * if it held one GPU.
 *
 * The order is kept per shape (identical requests) in binary heaps of job ids, so a pass
 * costs O(shapes log shapes + started jobs x log) plus placement, not O(queue).
 */
#include "policies/place.h"

#include "base/alloc.h"
#include "models/duration.h"

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

/* qssf's per-job state: the predictor's view of the job and its predicted duration. */
typedef struct qssf_job {
    model_dur_job feat;
    double pred_s;     /* NaN: none */
    uint32_t rep_next; /* next in the list of predictions to record */
} qssf_job;

typedef struct sjf_state {
    place_ws ws;
    bool backfill;
    /* qssf only (pred == NULL for sjf). */
    model_duration *pred;
    double retrain_s;
    uint64_t min_new; /* finished jobs a retraining needs since the last one */
    sim_time next_train_us;
    bool started;
    uint32_t rep_head; /* jobs whose prediction is to be recorded, or SIM_JOB_NONE */
    sjf_heap *heaps;   /* per shape id */
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
        if (j->state == SIM_JOB_PENDING && j->shape == shape && j->enqueue_seq == top->enqueued) {
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
    if (s->pred) {
        /* Predicted GPU service (predictions are at most 1e9 s); none yet: 0, first. */
        double p = ((const qssf_job *)sim_view_job_state(v, id))->pred_s;
        left = isnan(p) ? 0 : fmin(p, 1e9) * (j->spec.num_gpus ? j->spec.num_gpus : 1);
    }
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

/* ---- qssf ---------------------------------------------------------------------------- */

static const policy_option qssf_options[] = {
    {"backfill", "false", "start a job when one with a smaller predicted service does not fit"},
    {"retrain_interval", "86400",
     "seconds of simulated time between refits of the duration models (skipped while under "
     "1 % of the history is new)"},
    {"history", "16384", "finished jobs kept for training"},
    {"min_history", "50", "a tenant's finished jobs needed for a model of its own"},
    {"learner", "gbt", "duration model: gbt (boosted trees) or ridge"},
    {NULL, NULL, NULL},
};

static int qssf_init(void *st, const policy_config *cfg, sim_diag *d)
{
    sjf_state *s = st;
    static const char *const learner[] = {"gbt", "ridge", NULL};
    const policy_option *o = qssf_options;
    uint64_t hist, min_hist;
    int lrn, rc;
    if ((rc = policy_config_bool(cfg, o, "backfill", &s->backfill, d)) ||
        (rc = policy_config_double(cfg, o, "retrain_interval", 1, 1e9, &s->retrain_s, d)) ||
        (rc = policy_config_u64(cfg, o, "history", 1, 1u << 24, &hist, d)) ||
        (rc = policy_config_u64(cfg, o, "min_history", 1, 1u << 24, &min_hist, d)) ||
        (rc = policy_config_choice(cfg, o, "learner", learner, &lrn, d)))
        return rc;
    s->min_new = hist / 100 > 1 ? hist / 100 : 1;
    s->next_train_us = SIM_TIME_NEVER;
    s->rep_head = SIM_JOB_NONE;
    model_dur_config mc;
    model_dur_config_default(&mc);
    mc.learner = lrn == 0 ? MODEL_DUR_GBT : MODEL_DUR_RIDGE;
    mc.history = (uint32_t)hist;
    mc.min_history = (uint32_t)min_hist;
    mc.seed = cfg->seed;
    if ((rc = model_duration_create(&s->pred, &mc, d)) != SIM_OK)
        return rc;
    s->order = (place_order){.head = sjf_head, .started = sjf_started, .ctx = s};
    if ((rc = place_ws_init(&s->ws, cfg, d)) != SIM_OK) {
        model_duration_destroy(s->pred);
        s->pred = NULL;
    }
    return rc;
}

static void qssf_fini(void *st)
{
    sjf_state *s = st;
    model_duration_destroy(s->pred);
    s->pred = NULL;
    sjf_fini(st);
}

/* Predict the job's duration from what is known at submission, then queue it. */
static void qssf_arrival(void *st, const sim_view *v, sim_job_id id)
{
    sjf_state *s = st;
    const sim_job *j = sim_view_job(v, id);
    qssf_job *q = sim_view_job_state(v, id);
    if (!s->started) {
        s->started = true;
        s->next_train_us = j->spec.submit_us + (sim_time)llround(s->retrain_s * 1e6);
    }
    model_dur_input in;
    model_dur_input_of(&in, &j->spec);
    model_duration_arrive(s->pred, &in, &q->feat);
    q->pred_s = model_duration_predict(s->pred, &q->feat, MODEL_DUR_AUTO, NULL);
    q->rep_next = s->rep_head;
    s->rep_head = id;
    sjf_enqueue(st, v, id);
}

static void qssf_finish(void *st, const sim_view *v, sim_job_id id)
{
    sjf_state *s = st;
    /* The job's duration is known now, and only now. */
    model_duration_finish(s->pred, &((qssf_job *)sim_view_job_state(v, id))->feat,
                          sim_view_job(v, id)->spec.work_s);
}

static int qssf_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    sjf_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    int rc;
    if (now >= s->next_train_us) {
        if (model_duration_pending_rows(s->pred) >= s->min_new &&
            (rc = model_duration_train(s->pred)) != SIM_OK)
            return rc;
        sim_time iv = (sim_time)llround(s->retrain_s * 1e6);
        s->next_train_us += ((now - s->next_train_us) / iv + 1) * iv;
    }
    /* Record the predictions made since the last pass (jobs.csv pred_duration_s). */
    for (uint32_t id = s->rep_head; id != SIM_JOB_NONE;) {
        const qssf_job *q = sim_view_job_state(v, id);
        uint32_t next = q->rep_next;
        if (sim_view_job(v, id)->state == SIM_JOB_PENDING &&
            (rc = sim_decide_predict(out, id, q->pred_s, NAN)) != SIM_OK)
            return rc;
        id = next;
    }
    s->rep_head = SIM_JOB_NONE;
    return sjf_schedule(st, v, now, out);
}

static sim_time qssf_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)v;
    (void)now;
    const sjf_state *s = st;
    return model_duration_pending_rows(s->pred) >= s->min_new ? s->next_train_us : SIM_TIME_NEVER;
}

const policy_ops policy_qssf = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "qssf",
    .summary = "Helios' quasi-shortest-service-first: non-preemptive, smallest predicted GPU "
               "service (per-tenant duration predictor x GPUs) first",
    .state_size = sizeof(sjf_state),
    .job_state_size = sizeof(qssf_job),
    .options = qssf_options,
    .init = qssf_init,
    .fini = qssf_fini,
    .on_arrival = qssf_arrival,
    .on_requeue = sjf_enqueue,
    .on_finish = qssf_finish,
    .schedule = qssf_schedule,
    .next_wakeup = qssf_wakeup,
};
