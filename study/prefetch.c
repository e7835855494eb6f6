/*
 * prefetch.c: a single-producer single-consumer ring of parsed jobs. The producer fills
 * slots in order and publishes them in batches; the consumer takes them in order and
 * gives slots back in batches (the job it holds keeps its text until the next call).
 * The two meet under one mutex once per batch, and wake each other only when one of
 * them waits (a producer that found the ring full, once half of it is free again), so
 * the steady state makes no system call per job. Each slot owns text
 * buffers that grow to the longest name and command seen, so steady-state reading
 * allocates nothing. The inner source's final status (end or error, with its
 * diagnostic) is delivered after the last job.
 */
#include "study/prefetch.h"

#include "base/alloc.h"

#include <pthread.h>
#include <string.h>

#define BATCH 64u

typedef struct slot {
    job_spec job;
    char *text; /* name, NUL, command, NUL */
    size_t text_cap;
} slot;

struct prefetch {
    sim_source inner;
    slot *ring;
    uint32_t n;
    pthread_mutex_t mu;
    pthread_cond_t can_put, can_take;
    /* Shared, under mu: jobs published by the producer, slots given back by the
     * consumer (both monotonic), and the end. */
    uint64_t put, taken;
    bool done, stop, prod_waiting, cons_waiting;
    int final;
    sim_diag final_diag;
    /* The consumer's own: next job to hand out, jobs it knows are published, slots it
     * has finished with but not yet given back. */
    uint64_t cur, limit;
    bool holding;
    bool started;
    pthread_t thread;
};

/* Copy the job's borrowed text into the slot's own buffer. */
static int keep_text(slot *s)
{
    const char *name = s->job.name ? s->job.name : "";
    const char *cmd = s->job.command ? s->job.command : "";
    size_t ln = strlen(name), lc = strlen(cmd), need = ln + lc + 2;
    if (need > s->text_cap) {
        size_t cap = s->text_cap ? s->text_cap : 64;
        while (cap < need)
            cap *= 2;
        char *t = sim_reallocarray(s->text, cap, 1);
        if (!t)
            return SIM_ENOMEM;
        s->text = t;
        s->text_cap = cap;
    }
    memcpy(s->text, name, ln + 1);
    memcpy(s->text + ln + 1, cmd, lc + 1);
    s->job.name = s->text;
    s->job.command = s->text + ln + 1;
    return SIM_OK;
}

/* Publish the first `filled` jobs (mu held). */
static void publish(prefetch *p, uint64_t filled)
{
    p->put = filled;
    if (p->cons_waiting)
        pthread_cond_signal(&p->can_take);
}

static void *producer(void *arg)
{
    prefetch *p = arg;
    sim_diag d;
    memset(&d, 0, sizeof d);
    uint64_t filled = 0, known_taken = 0;
    for (;;) {
        if (filled - known_taken >= p->n) {
            /* The ring looks full: publish, then wait for half of it to come back (one
             * wakeup per half ring, not per batch). */
            pthread_mutex_lock(&p->mu);
            publish(p, filled);
            while (filled - p->taken > p->n / 2 && !p->stop) {
                p->prod_waiting = true;
                pthread_cond_wait(&p->can_put, &p->mu);
                p->prod_waiting = false;
            }
            known_taken = p->taken;
            bool stop = p->stop;
            pthread_mutex_unlock(&p->mu);
            if (stop)
                return NULL;
        }
        slot *s = &p->ring[filled % p->n];
        int st = p->inner.next(p->inner.ctx, &s->job, &d);
        if (st == 1 && keep_text(s) != SIM_OK)
            st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        if (st == 1)
            filled++;
        if (st != 1 || filled % BATCH == 0) {
            pthread_mutex_lock(&p->mu);
            if (st != 1) {
                p->done = true;
                p->final = st;
                p->final_diag = d;
            }
            publish(p, filled);
            known_taken = p->taken;
            bool stop = p->stop;
            pthread_mutex_unlock(&p->mu);
            if (st != 1 || stop)
                return NULL;
        }
    }
}

int prefetch_create(prefetch **out, const sim_source *inner, uint32_t slots, sim_diag *d)
{
    *out = NULL;
    prefetch *p = sim_calloc(1, sizeof *p);
    if (!p)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    p->inner = *inner;
    p->n = slots > BATCH ? slots : BATCH;
    p->ring = sim_calloc(p->n, sizeof *p->ring);
    if (!p->ring || pthread_mutex_init(&p->mu, NULL) != 0) {
        sim_free(p->ring);
        sim_free(p);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    pthread_cond_init(&p->can_put, NULL);
    pthread_cond_init(&p->can_take, NULL);
    if (pthread_create(&p->thread, NULL, producer, p) != 0) {
        prefetch_destroy(p);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "cannot start the trace reader thread");
    }
    p->started = true;
    *out = p;
    return SIM_OK;
}

int prefetch_next(void *ctx, job_spec *job, sim_diag *d)
{
    prefetch *p = ctx;
    if (p->holding) {
        p->cur++;
        p->holding = false;
    }
    if (p->cur == p->limit || p->cur % BATCH == 0) {
        /* Give back the slots before cur; learn what was published, waiting if none. */
        pthread_mutex_lock(&p->mu);
        p->taken = p->cur;
        if (p->prod_waiting && p->put - p->taken <= p->n / 2)
            pthread_cond_signal(&p->can_put);
        while (p->put == p->cur && !p->done) {
            p->cons_waiting = true;
            pthread_cond_wait(&p->can_take, &p->mu);
            p->cons_waiting = false;
        }
        p->limit = p->put;
        int st = p->final;
        if (p->cur == p->limit && st < 0 && d)
            *d = p->final_diag;
        pthread_mutex_unlock(&p->mu);
        if (p->cur == p->limit)
            return st;
    }
    *job = p->ring[p->cur % p->n].job;
    p->holding = true;
    /* The next job was written on the reader's core: its lines are fetched now, while
     * this one is simulated, instead of at the next call. */
    if (p->cur + 1 < p->limit) {
        const char *nx = (const char *)&p->ring[(p->cur + 1) % p->n].job;
        for (size_t off = 0; off < sizeof(job_spec); off += 64)
            __builtin_prefetch(nx + off);
    }
    return 1;
}

void prefetch_destroy(prefetch *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_signal(&p->can_put);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    pthread_cond_destroy(&p->can_put);
    pthread_cond_destroy(&p->can_take);
    pthread_mutex_destroy(&p->mu);
    for (uint32_t i = 0; i < p->n; i++)
        sim_free(p->ring[i].text);
    sim_free(p->ring);
    sim_free(p);
}
