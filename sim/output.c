/*
 * output.c: the engine's streamed outputs — one jobs.csv row per job as it ends, one
 * timeseries.csv row (plus one tenants row per active tenant) per sample — and
 * summary.json at the end. Every number is printed with a fixed format, so identical
 * runs give identical bytes.
 */
#include "sim/engine_int.h"
#include "base/alloc.h"
#include "base/line.h"
#include "base/numfmt.h"
#include "base/textout.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

const char sim_jobs_csv_header[] =
    "job_id,tenant,qos,priority,status,submit_s,start_s,end_s,wait_s,queued_s,jct_s,run_s,"
    "work_s,num_gpus,replicas,gpu_milli,share_milli,true_milli,gpu_type,node,preemptions,"
    "lost_work_s,pred_duration_s,pred_milli,reason";
const char sim_jobs_csv_elastic[] = ",replicas_min,replicas_max,replicas_mean,scale_events";

static const char ts_header[] = "time_s,pending,running,alloc_gpus,alloc_ratio,effective_gpus,"
                                "effective_ratio,cpu_alloc_ratio,nodes_down";

/* us as seconds with 6 decimals. Exact: integer seconds and microseconds, no floating
 * point. Formatted by hand: this is the most frequent number of every output. */
static void put_time(sim_line *l, sim_time us)
{
    if (!sim_line_room(l, 2 * SIM_FMT_U64_MAX + 2))
        return;
    char *p = l->buf + l->len;
    uint64_t u = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    if (us < 0)
        *p++ = '-';
    p += sim_fmt_u64(p, u / 1000000);
    *p++ = '.';
    /* The microseconds with their leading zeros: the digits of 10^6 + frac after its 1. */
    char frac[SIM_FMT_U64_MAX];
    sim_fmt_u64(frac, 1000000 + u % 1000000);
    memcpy(p, frac + 1, 6);
    l->len = (size_t)(p + 6 - l->buf);
}

/* x as printf("%.6f") writes it. When x * 1e6 rounds to an integer K below 2^43, the
 * exact product lies within 2^-11 of K, so printf would round it to K too: K is written
 * with integer arithmetic (the common case: durations of whole or decimal seconds). */
static void put_fixed6(sim_line *l, double x)
{
    double y = x * 1e6;
    if (y >= 0 && y < 8796093022208.0 && y == floor(y)) {
        put_time(l, (sim_time)y);
        return;
    }
    sim_line_fixed(l, x, 6);
}

/* The elastic and online-service figures are written only for runs that have them. */
static bool elastic_columns(const sim_engine *e)
{
    return e->cfg.elastic_outputs || (e->world.curves && e->world.curves->n);
}

/* Sampled: GPUs the services want and hold, the shortfall, trainers of offline elastic
 * jobs, kept as the jobs enter, leave and change (sim__list_append and the others). */
static void online_sample(const sim_engine *e, double out[4])
{
    for (int c = 0; c < 4; c++)
        out[c] = (double)e->online[c];
}

int sim__write_headers(sim_engine *e)
{
    if (e->cfg.jobs_csv) {
        fputs(sim_jobs_csv_header, e->cfg.jobs_csv);
        if (e->cfg.elastic_outputs)
            fputs(sim_jobs_csv_elastic, e->cfg.jobs_csv);
        if (e->pol->job_column && e->pol->job_value)
            fprintf(e->cfg.jobs_csv, ",%s", e->pol->job_column);
        if (e->cfg.job_groups)
            fputs(",group", e->cfg.jobs_csv);
        fputc('\n', e->cfg.jobs_csv);
    }
    if (e->cfg.timeseries_csv) {
        fputs(ts_header, e->cfg.timeseries_csv);
        for (uint32_t p = 0; p < e->cfg.n_probes; p++)
            for (uint32_t k = 0; k < e->cfg.probes[p].n; k++)
                fprintf(e->cfg.timeseries_csv, ",%s", e->cfg.probes[p].names[k]);
        if (elastic_columns(e))
            fputs(",online_demand,online_granted,shortfall,offline_trainers",
                  e->cfg.timeseries_csv);
        fputc('\n', e->cfg.timeseries_csv);
    }
    if (e->cfg.tenants_csv)
        fputs("time_s,tenant,alloc_gpus,running,pending,quota_gpus\n", e->cfg.tenants_csv);
    return SIM_OK;
}

/*
 * Job rows are formatted and written by a thread of their own: the simulating thread
 * copies what a row needs into a record (numbers, and the strings that may not outlive
 * the call: id, tenant, reason, the policy's column, group) and goes on; the writer
 * formats the records in order with the functions below. Records fill blocks of a ring;
 * a full block is handed over, and the simulating thread waits only when every block
 * is still being written. Same bytes as formatting in place, in the same order.
 */
enum { ROW_STRS = 5, ROW_BLOCK = 1 << 18, ROW_BLOCKS = 4 };
enum { S_ID, S_TENANT, S_REASON, S_POLICY, S_GROUP };

typedef struct row_rec {
    uint32_t size; /* bytes of the record with its strings, a multiple of 8 */
    uint8_t spec;  /* a job that never entered the system: no run figures */
    uint8_t qos, started, done, has_alloc, has_pol;
    uint32_t len[ROW_STRS]; /* the strings' bytes, stored after the record in this order */
    const char *status, *gpu_type, *node; /* literals and the run's fixed tables */
    int64_t priority;
    sim_time submit_us, first_start_us, now, placed_us;
    double work_s, lost_work_s, pred_duration_s, pred_milli, rep_mean;
    uint64_t num_gpus, replicas, gpu_milli, share_milli, truem, preemptions, rep_min, rep_max,
        scale_events;
} row_rec;

typedef struct sim_rows sim_rows;

struct sim_rows {
    /* Read only for the run's fixed configuration; its distributions of done jobs
     * (sim__count_done) are the writer's while it runs. */
    sim_engine *e;
    FILE *f;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a block was handed over, or taken back, or stop */
    unsigned char *blk[ROW_BLOCKS];
    size_t used[ROW_BLOCKS]; /* bytes of records; a block's, set while it is filled */
    /* Under mu: the blocks handed over, first .. first + filled - 1 (the writer moves
     * first), whether to stop, and the writer's first error. */
    uint32_t first, filled;
    bool stop;
    int err;
    uint32_t fill;  /* the block being filled: the simulating thread's alone */
    sim_line line;  /* the writer's row */
};

static const char *row_str(const row_rec *r, int k)
{
    const char *p = (const char *)(r + 1);
    for (int i = 0; i < k; i++)
        p += r->len[i] + 1;
    return p;
}

/* "ID,TENANT,QOS,PRIORITY,STATUS,SUBMIT" of a job row. */
static void put_head(sim_line *l, const row_rec *r)
{
    sim_line_csv(l, row_str(r, S_ID));
    sim_line_char(l, ',');
    sim_line_csv(l, row_str(r, S_TENANT));
    sim_line_char(l, ',');
    sim_line_str(l, sim_qos_name((sim_qos)r->qos));
    sim_line_char(l, ',');
    sim_line_i64(l, r->priority);
    sim_line_char(l, ',');
    sim_line_str(l, r->status);
    sim_line_char(l, ',');
    put_time(l, r->submit_us);
}

/* ",u" */
static void put_cu(sim_line *l, uint64_t u)
{
    sim_line_char(l, ',');
    sim_line_u64(l, u);
}

/* ",x" with the given decimals */
static void put_cfixed(sim_line *l, double x, unsigned digits)
{
    sim_line_char(l, ',');
    sim_line_fixed(l, x, digits);
}

static void put_opt(sim_line *l, double x)
{
    if (isfinite(x))
        put_fixed6(l, x);
}

/* The row of record r, from its first field to its newline. */
static void format_row(const sim_engine *e, sim_line *l, const row_rec *r)
{
    put_head(l, r);
    if (r->spec) {
        sim_line_str(l, ",,,,,,0.000000");
        put_cfixed(l, r->work_s, 6);
        put_cu(l, r->num_gpus);
        put_cu(l, r->replicas);
        put_cu(l, r->gpu_milli);
        sim_line_str(l, ",0");
        put_cu(l, r->truem);
        sim_line_str(l, ",,,0,0.000000,,,");
        sim_line_csv(l, row_str(r, S_REASON));
        if (e->cfg.elastic_outputs)
            sim_line_str(l, ",0,0,0.000000,0");
    } else {
        sim_line_char(l, ',');
        if (r->started)
            put_time(l, r->first_start_us);
        sim_line_char(l, ',');
        if (r->done)
            put_time(l, r->now);
        sim_line_char(l, ',');
        if (r->started)
            put_time(l, r->first_start_us - r->submit_us);
        sim_line_char(l, ',');
        if (r->done) {
            put_time(l, r->now - r->submit_us - r->placed_us);
            sim_line_char(l, ',');
            put_time(l, r->now - r->submit_us);
        } else {
            sim_line_char(l, ',');
        }
        sim_line_char(l, ',');
        put_time(l, r->placed_us);
        sim_line_char(l, ',');
        put_fixed6(l, r->work_s);
        put_cu(l, r->num_gpus);
        put_cu(l, r->replicas);
        put_cu(l, r->gpu_milli);
        put_cu(l, r->share_milli);
        put_cu(l, r->truem);
        sim_line_char(l, ',');
        if (r->has_alloc) {
            sim_line_str(l, r->gpu_type);
            sim_line_char(l, ',');
            sim_line_csv(l, r->node);
        } else {
            sim_line_char(l, ',');
        }
        put_cu(l, r->preemptions);
        sim_line_char(l, ',');
        put_fixed6(l, r->lost_work_s);
        sim_line_char(l, ',');
        put_opt(l, r->pred_duration_s);
        sim_line_char(l, ',');
        put_opt(l, r->pred_milli);
        sim_line_char(l, ',');
        sim_line_csv(l, row_str(r, S_REASON));
        if (e->cfg.elastic_outputs) {
            put_cu(l, r->rep_min);
            put_cu(l, r->rep_max);
            sim_line_char(l, ',');
            put_fixed6(l, r->rep_mean);
            put_cu(l, r->scale_events);
        }
    }
    /* The policy's own column and the group column, when the run has them. */
    if (r->has_pol) {
        sim_line_char(l, ',');
        sim_line_csv(l, row_str(r, S_POLICY));
    }
    if (e->cfg.job_groups) {
        sim_line_char(l, ',');
        sim_line_csv(l, row_str(r, S_GROUP));
    }
    sim_line_char(l, '\n');
}

/* A done job's row counts it in the run's distributions (see sim__count_done). */
static void count_row(sim_engine *e, const row_rec *r)
{
    if (r->done)
        sim__count_done(e, r->submit_us, r->first_start_us, r->now, (sim_qos)r->qos);
}

/* Format and write the records of a block; returns the first error. */
static int write_block(sim_rows *w, const unsigned char *b, size_t used)
{
    int err = SIM_OK;
    for (size_t off = 0; off < used;) {
        const row_rec *r = (const row_rec *)(const void *)(b + off);
        count_row(w->e, r);
        format_row(w->e, &w->line, r);
        int st = sim_line_put(&w->line, w->f);
        if (st != SIM_OK && err == SIM_OK)
            err = st;
        off += r->size;
    }
    return err;
}

static void *writer_main(void *arg)
{
    sim_rows *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->filled && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->filled)
            break;
        uint32_t b = w->first;
        pthread_mutex_unlock(&w->mu);
        int st = write_block(w, w->blk[b], w->used[b]);
        pthread_mutex_lock(&w->mu);
        if (st != SIM_OK && w->err == SIM_OK)
            w->err = st;
        w->first = (w->first + 1) % ROW_BLOCKS;
        w->filled--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Hand the block being filled (if it holds records) to the writer and wait until `keep`
 * (< ROW_BLOCKS) blocks at most are still to be written, so the next block is free;
 * returns the writer's first error. */
static int hand_over(sim_rows *w, uint32_t keep)
{
    pthread_mutex_lock(&w->mu);
    if (w->used[w->fill]) {
        w->filled++;
        w->fill = (w->fill + 1) % ROW_BLOCKS;
        pthread_cond_broadcast(&w->cv);
    }
    while (w->filled > keep)
        pthread_cond_wait(&w->cv, &w->mu);
    int st = w->err;
    pthread_mutex_unlock(&w->mu);
    w->used[w->fill] = 0;
    return st;
}

static void rows_free(sim_rows *w)
{
    for (int b = 0; b < ROW_BLOCKS; b++)
        sim_free(w->blk[b]);
    sim_line_free(&w->line);
    sim_free(w);
}

/* The writer, started at the first row. NULL when out of memory or threads. */
static sim_rows *rows_start(sim_engine *e)
{
    sim_rows *w = sim_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->e = e;
    w->f = e->cfg.jobs_csv;
    bool ok = true;
    for (int b = 0; b < ROW_BLOCKS; b++)
        ok = ok && (w->blk[b] = sim_malloc(ROW_BLOCK)) != NULL;
    if (ok && pthread_mutex_init(&w->mu, NULL) == 0) {
        if (pthread_cond_init(&w->cv, NULL) == 0) {
            if (pthread_create(&w->thread, NULL, writer_main, w) == 0)
                return w;
            pthread_cond_destroy(&w->cv);
        }
        pthread_mutex_destroy(&w->mu);
    }
    rows_free(w);
    return NULL;
}

int sim__rows_finish(sim_engine *e)
{
    sim_rows *w = e->rows;
    if (!w)
        return SIM_OK;
    pthread_mutex_lock(&w->mu);
    if (w->used[w->fill])
        w->filled++;
    w->stop = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    int st = w->err;
    rows_free(w);
    e->rows = NULL;
    return st;
}

/* Room for a record of `size` bytes in the block being filled: NULL with *st set on an
 * error, or with *st SIM_OK when the record is larger than a block (the writer is then
 * idle, every record before written) or when the writer could not start: the caller
 * then writes this row itself. */
static row_rec *rec_alloc(sim_engine *e, size_t size, int *st)
{
    *st = SIM_OK;
    if (!e->rows && !e->rows_inline && (e->cfg.jobs_csv_inline || !(e->rows = rows_start(e))))
        e->rows_inline = true; /* no thread (or no memory for it): rows written in place */
    sim_rows *w = e->rows;
    if (!w)
        return NULL;
    if (size > ROW_BLOCK) {
        *st = hand_over(w, 0);
        return NULL;
    }
    if (w->used[w->fill] + size > ROW_BLOCK && (*st = hand_over(w, ROW_BLOCKS - 1)))
        return NULL;
    uint32_t b = w->fill;
    row_rec *r = (row_rec *)(void *)(w->blk[b] + w->used[b]);
    w->used[b] += size;
    memset(r, 0, sizeof *r);
    r->size = (uint32_t)size;
    return r;
}

/* A record for a row of job spec s: its strings copied after it, the rest filled by
 * the caller. In *big, a record too large for a block, in e->line's room (NULL
 * returned only on an error, *st set). */
static row_rec *rec_new(sim_engine *e, const job_spec *s, const char *status, const char *reason,
                        bool *big, int *st)
{
    const char *pol = NULL;
    if (e->pol->job_column && e->pol->job_value) {
        pol = e->pol->job_value(e->pst, s);
        if (!pol)
            pol = "";
    }
    const char *str[ROW_STRS] = {s->id, sim_intern_name(e->world.tenants, s->tenant), reason,
                                 pol ? pol : "", e->cfg.job_groups ? s->group : ""};
    size_t len[ROW_STRS], size = sizeof(row_rec);
    for (int k = 0; k < ROW_STRS; k++)
        size += (len[k] = strlen(str[k])) + 1;
    size = (size + 7) & ~(size_t)7;
    row_rec *r = rec_alloc(e, size, st);
    *big = false;
    if (!r) {
        if (*st != SIM_OK)
            return NULL;
        if (size > UINT32_MAX || !sim_reserve(&e->big_rec, &e->big_cap, (uint32_t)size, 1)) {
            *st = SIM_ENOMEM;
            return NULL;
        }
        /* Built aside and written here: larger than a block, the writer being idle, or
         * no writer. */
        r = e->big_rec;
        memset(r, 0, sizeof *r);
        r->size = (uint32_t)size;
        *big = true;
    }
    char *p = (char *)(r + 1);
    for (int k = 0; k < ROW_STRS; k++) {
        r->len[k] = (uint32_t)len[k];
        memcpy(p, str[k], len[k]);
        p[len[k]] = '\0';
        p += len[k] + 1;
    }
    r->has_pol = pol != NULL;
    r->status = status;
    r->qos = (uint8_t)s->qos;
    r->priority = s->priority;
    r->submit_us = s->submit_us;
    r->work_s = s->work_s;
    r->num_gpus = s->num_gpus;
    r->gpu_milli = s->gpu_milli;
    return r;
}

/* A record built aside is written at once (the writer, if any, is idle). */
static int rec_done(sim_engine *e, const row_rec *r, bool big)
{
    if (!big)
        return SIM_OK;
    count_row(e, r);
    format_row(e, &e->line, r);
    return sim_line_put(&e->line, e->cfg.jobs_csv);
}

int sim__write_job_row(sim_engine *e, const sim_job *j, const char *status, const char *reason)
{
    if (!e->cfg.jobs_csv)
        return SIM_OK;
    const job_spec *s = &j->spec;
    bool big;
    int st;
    row_rec *r = rec_new(e, s, status, reason, &big, &st);
    if (!r)
        return st;
    r->done = strcmp(status, "done") == 0;
    r->started = j->first_start_us != SIM_TIME_NEVER;
    r->first_start_us = j->first_start_us;
    r->now = e->now;
    r->placed_us = j->placed_us;
    r->replicas = j->nominal_replicas;
    r->share_milli = j->share_milli;
    /* With a demand model, the true demand is the one on the GPU type the job ran on. */
    r->truem = s->true_milli ? s->true_milli : s->gpu_milli;
    if (e->rate.demand && j->alloc_head != NIL && e->allocs[j->alloc_head].gpu != SIM_GPU_NONE)
        r->truem = e->allocs[j->alloc_head].demand;
    /* The first allocation names the GPU type and node the job last ran on. */
    if (j->alloc_head != NIL) {
        const sim_alloc_rec *a = &e->allocs[j->alloc_head];
        r->has_alloc = 1;
        r->gpu_type = e->v.gpu_type_name(&e->v, e->node_gpu_type[a->node]);
        r->node = e->node_name[a->node];
    }
    r->preemptions = j->preemptions;
    r->lost_work_s = j->lost_work_s;
    r->pred_duration_s = j->pred_duration_s;
    r->pred_milli = j->pred_milli;
    if (e->cfg.elastic_outputs) {
        /* Time-weighted mean over the time the job held resources; a job that held them
         * for no time (zero work) reports its max, the count it held (0 when
         * it never started). */
        double rs = j->rep_seconds + (double)j->replicas * (double)(e->now - j->rep_since_us) / 1e6;
        r->rep_min = j->rep_min;
        r->rep_max = j->rep_max;
        r->rep_mean = j->placed_us > 0 ? rs / ((double)j->placed_us / 1e6) : (double)j->rep_max;
        r->scale_events = j->scale_events;
    }
    return rec_done(e, r, big);
}

int sim__write_spec_row(sim_engine *e, const job_spec *s, uint32_t replicas, const char *status,
                        const char *reason)
{
    if (!e->cfg.jobs_csv)
        return SIM_OK;
    bool big;
    int st;
    row_rec *r = rec_new(e, s, status, reason, &big, &st);
    if (!r)
        return st;
    r->spec = 1;
    r->replicas = replicas;
    r->truem = s->true_milli ? s->true_milli : s->gpu_milli;
    return rec_done(e, r, big);
}

int sim__write_sample(sim_engine *e)
{
    e->samples++;
    uint32_t col = 0;
    for (uint32_t p = 0; p < e->cfg.n_probes; p++) {
        e->cfg.probes[p].sample(e->cfg.probes[p].ctx, &e->v, e->probe_vals + col);
        col += e->cfg.probes[p].n;
    }
    for (uint32_t c = 0; c < e->n_probe_cols; c++)
        e->probe_sums[c] += e->probe_vals[c];
    e->probe_samples++;
    FILE *f = e->cfg.timeseries_csv;
    if (f) {
        double gpus = (double)e->n_gpus;
        double alloc = (double)e->used_milli_total / 1000.0;
        double eff = (double)e->eff_milli_total / 1000.0;
        sim_line *l = &e->line;
        put_time(l, e->now);
        const double cols[5] = {
            alloc, gpus ? alloc / gpus : 0, eff, gpus ? eff / gpus : 0,
            e->cpu_total_all ? (double)e->cpu_used_all / (double)e->cpu_total_all : 0};
        static const unsigned places[5] = {3, 6, 3, 6, 6};
        put_cu(l, e->v.n_pending);
        put_cu(l, e->v.n_running);
        for (int c = 0; c < 5; c++)
            put_cfixed(l, cols[c], places[c]);
        put_cu(l, e->n_down);
        for (uint32_t c = 0; c < e->n_probe_cols; c++)
            put_cfixed(l, e->probe_vals[c], 6);
        if (elastic_columns(e)) {
            double o[4];
            online_sample(e, o);
            for (int c = 0; c < 4; c++)
                put_cfixed(l, o[c], c < 3 ? 3 : 0);
        }
        sim_line_char(l, '\n');
        int st = sim_line_put(l, f);
        if (st != SIM_OK)
            return st;
    }
    FILE *t = e->cfg.tenants_csv;
    if (t) {
        for (uint32_t k = 0; k < e->tenant_cap; k++) {
            tenant_stats *ts = &e->tstats[k];
            uint32_t running = e->tenant_running[k], pending = e->tenant_pending[k];
            bool active = running || pending || e->tenant_used_milli[k];
            if (e->cfg.tenant_rows_changed) {
                /* Only what changed since the tenant's last row (a tenant that goes idle
                 * gets one row of zeros). */
                bool same = ts->row_written
                                ? ts->row_used == e->tenant_used_milli[k] &&
                                      ts->row_running == running && ts->row_pending == pending &&
                                      ts->row_quota == e->tenant_quota[k]
                                : !active;
                if (same)
                    continue;
                ts->row_used = e->tenant_used_milli[k];
                ts->row_running = running;
                ts->row_pending = pending;
                ts->row_quota = e->tenant_quota[k];
                ts->row_written = true;
            } else if (!active) {
                continue;
            }
            sim_line *l = &e->line;
            put_time(l, e->now);
            sim_line_char(l, ',');
            sim_line_csv(l, sim_intern_name(e->world.tenants, k));
            put_cfixed(l, (double)e->tenant_used_milli[k] / 1000.0, 3);
            put_cu(l, running);
            put_cu(l, pending);
            put_cfixed(l, e->tenant_quota[k], 3);
            sim_line_char(l, '\n');
            int st = sim_line_put(l, t);
            if (st != SIM_OK)
                return st;
        }
    }
    return SIM_OK;
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.6f", x);
    else
        fputs("null", f);
}

/* A distribution: its count, then mean, median, p95, p99 and max, each null when the
 * count is 0 (the histogram gives NaN then): no value is not a value of 0. */
static void json_dist(FILE *f, const char *name, const sim_hist *h)
{
    fprintf(f, "  \"%s\": {\"count\": %llu, \"mean\": ", name,
            (unsigned long long)sim_hist_count(h));
    json_num(f, sim_hist_mean(h));
    fputs(", \"median\": ", f);
    json_num(f, sim_hist_quantile(h, 0.5));
    fputs(", \"p95\": ", f);
    json_num(f, sim_hist_quantile(h, 0.95));
    fputs(", \"p99\": ", f);
    json_num(f, sim_hist_quantile(h, 0.99));
    fputs(", \"max\": ", f);
    json_num(f, sim_hist_max(h));
    fputs("},\n", f);
}

int sim_engine_write_summary(const sim_engine *e, FILE *f, const char *extra)
{
    const sim_summary *s = &e->sum;
    fputs("{\n", f);
    fputs("  \"policy\": ", f);
    sim_json_put_string(f, e->pol ? e->pol->name : "");
    fputs(",\n  \"rate_model\": ", f);
    sim_json_put_string(f, e->rate.name);
    fprintf(f, ",\n  \"seed\": %llu,\n", (unsigned long long)e->cfg.seed);
    fprintf(f, "  \"cluster\": {\"nodes\": %u, \"gpus\": %u},\n", e->n_nodes, e->n_gpus);
    fprintf(f,
            "  \"jobs\": {\"arrived\": %llu, \"done\": %llu, \"rejected\": %llu, "
            "\"unfinished\": %llu},\n  \"jobs_not_arrived\": %llu,\n",
            (unsigned long long)s->jobs_arrived, (unsigned long long)s->jobs_done,
            (unsigned long long)s->jobs_rejected, (unsigned long long)s->jobs_unfinished,
            (unsigned long long)s->jobs_not_arrived);
    json_dist(f, "jct_s", e->h_jct);
    json_dist(f, "wait_s", e->h_wait);
    double span = s->first_submit_us == SIM_TIME_NEVER
                      ? 0
                      : (double)(s->last_end_us - s->first_submit_us) / 1e6;
    fputs("  \"makespan_s\": ", f);
    json_num(f, span);
    if (e->cfg.job_groups) {
        /* Exact figures over the done groups (their last member's end minus their
         * arrival). */
        fprintf(f, ",\n  \"job_groups\": {\"arrived\": %llu, \"done\": %llu, \"mean_s\": ",
                (unsigned long long)s->groups_arrived, (unsigned long long)s->groups_done);
        json_num(f, s->group_mean_s);
        fputs(", \"p50_s\": ", f);
        json_num(f, s->group_median_s);
        fputs(", \"p99_s\": ", f);
        json_num(f, s->group_p99_s);
        fputs(", \"max_s\": ", f);
        json_num(f, s->group_max_s);
        fputc('}', f);
    }
    fputs(",\n  \"gpu_util\": {\"allocated\": ", f);
    json_num(f, s->gpu_alloc_avg);
    fputs(", \"effective\": ", f);
    json_num(f, s->gpu_effective_avg);
    fputs("},\n  \"gpu_hours\": {\"allocated\": ", f);
    json_num(f, s->gpu_seconds_alloc / 3600.0);
    fputs(", \"effective\": ", f);
    json_num(f, s->gpu_seconds_effective / 3600.0);
    fprintf(f, "},\n  \"preemptions\": %llu,\n  \"failures\": %llu,\n  \"lost_work_s\": ",
            (unsigned long long)s->preemptions, (unsigned long long)s->failures);
    json_num(f, s->lost_work_s);
    fputs(",\n  \"lost_gpu_hours\": ", f);
    json_num(f, s->lost_gpu_seconds / 3600.0);
    if (elastic_columns(e)) {
        fprintf(f, ",\n  \"elastic\": {\"scale_events\": %llu, \"scale_in_lost_work_s\": ",
                (unsigned long long)s->scale_events);
        json_num(f, s->scale_lost_work_s);
        fprintf(f, ", \"offline_done\": %llu, \"offline_jct_mean_s\": ",
                (unsigned long long)s->offline_done);
        json_num(f, s->offline_done ? s->offline_jct_sum_s / (double)s->offline_done : NAN);
        fputs(", \"cpu_util_allocated\": ", f);
        json_num(f, s->cpu_alloc_avg);
        fprintf(f, "},\n  \"online\": {\"services\": %llu, \"demand_gpu_hours\": ",
                (unsigned long long)s->services);
        json_num(f, s->demand_gpu_s / 3600.0);
        fputs(", \"shortfall_gpu_seconds\": ", f);
        json_num(f, s->short_gpu_s);
        fprintf(f, ", \"shortfall_periods\": %llu}", (unsigned long long)s->short_periods);
    }
    fprintf(f, ",\n  \"slo\": {\"jobs\": %llu, \"violations\": %llu},\n",
            (unsigned long long)s->slo_jobs, (unsigned long long)s->slo_violations);
    fputs("  \"by_qos\": {", f);
    bool first = true;
    for (int q = 0; q < SIM_QOS_COUNT; q++) {
        const qos_stats *qs = &e->qstats[q];
        if (!qs->done)
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        sim_json_put_string(f, q == SIM_QOS_NONE ? "none" : sim_qos_name((sim_qos)q));
        fprintf(f, ": {\"done\": %llu, \"jct_mean\": ", (unsigned long long)qs->done);
        json_num(f, qs->jct_sum_s / (double)qs->done);
        fputs(", \"jct_p95\": ", f);
        json_num(f, sim_hist_quantile(qs->jct, 0.95));
        fputs(", \"wait_mean\": ", f);
        json_num(f, qs->wait_sum_s / (double)qs->done);
        fputc('}', f);
        first = false;
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"tenants\": {", f);
    first = true;
    uint32_t nt = sim_intern_count(e->world.tenants);
    for (uint32_t t = 0; t < nt && t < e->tenant_cap; t++) {
        const tenant_stats *ts = &e->tstats[t];
        if (!ts->done && !ts->rejected && !e->tenant_running[t] && !e->tenant_pending[t])
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        sim_json_put_string(f, sim_intern_name(e->world.tenants, t));
        fprintf(f, ": {\"done\": %llu, \"rejected\": %llu, \"jct_mean\": ",
                (unsigned long long)ts->done, (unsigned long long)ts->rejected);
        /* Means over no done job are null (NAN), not 0, which would read as instant
         * service. */
        json_num(f, ts->done ? ts->jct_sum_s / (double)ts->done : NAN);
        fputs(", \"wait_mean\": ", f);
        json_num(f, ts->done ? ts->wait_sum_s / (double)ts->done : NAN);
        fputs(", \"gpu_hours\": ", f);
        json_num(f, ts->gpu_s / 3600.0);
        fputs(", \"quota_gpus\": ", f);
        json_num(f, e->tenant_quota[t]);
        fputc('}', f);
        first = false;
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"probes\": {", f);
    uint32_t col = 0;
    first = true;
    for (uint32_t p = 0; p < e->cfg.n_probes; p++)
        for (uint32_t k = 0; k < e->cfg.probes[p].n; k++, col++) {
            fprintf(f, "%s\"%s_mean\": ", first ? "" : ", ", e->cfg.probes[p].names[k]);
            /* Without a sample (--sample-interval 0) a probe has no mean: null, not 0. */
            json_num(f, e->probe_samples ? e->probe_sums[col] / (double)e->probe_samples : NAN);
            first = false;
        }
    fprintf(f, "},\n  \"samples\": %llu,\n  \"events\": %llu", (unsigned long long)e->samples,
            (unsigned long long)s->events);
    if (extra && *extra)
        fprintf(f, ",\n  %s", extra);
    fputs("\n}\n", f);
    return ferror(f) ? SIM_EIO : SIM_OK;
}
