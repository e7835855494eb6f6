/*
 * engine_world.h: a small world for tests that drive the engine directly: a cluster of
 * identical nodes (GPU types A and B), job specs, a run with its outputs in memory
 * (invariants checked after every event), the fields of jobs.csv, and random traces.
 */
#ifndef TESTS_ENGINE_WORLD_H
#define TESTS_ENGINE_WORLD_H

#include "sim/policy.h"
#include "base/alloc.h"
#include "sim/engine.h"

#include "array_source.h"
#include "check.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A small world ------------------------------------------------------------------ */

typedef struct world {
    sim_intern *types, *tenants;
    uint64_t type_mem[4];
    cluster_spec cl;
    node_spec nodes[64];
} world;

static void world_init(world *w, uint32_t n_nodes, uint32_t gpus_per_node)
{
    memset(w, 0, sizeof *w);
    w->types = sim_intern_create(true);
    sim_intern_add(w->types, "A", 1, 0);
    sim_intern_add(w->types, "B", 1, 0);
    w->type_mem[1] = 16384;
    w->type_mem[2] = 32768;
    w->tenants = sim_intern_create(false);
    w->cl.n_nodes = n_nodes;
    w->cl.nodes = w->nodes;
    for (uint32_t i = 0; i < n_nodes; i++) {
        snprintf(w->nodes[i].name, sizeof w->nodes[i].name, "n%u", i);
        w->nodes[i].cpu_milli = 64000;
        w->nodes[i].mem_mib = 262144;
        w->nodes[i].num_gpus = gpus_per_node;
        w->nodes[i].gpu_type = gpus_per_node ? 1 : 0;
    }
}

static void world_fini(world *w)
{
    sim_intern_destroy(w->types);
    sim_intern_destroy(w->tenants);
}

static job_spec job(const char *id, double submit_s, double work_s, uint32_t gpus,
                    uint32_t milli)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    j.submit_us = (sim_time)llround(submit_s * 1e6);
    j.work_s = work_s;
    j.num_gpus = gpus;
    j.gpu_milli = gpus ? milli : 0;
    j.true_milli = j.gpu_milli;
    j.replicas = gpus ? 0 : 1;
    j.name = "";
    j.command = "";
    return j;
}

typedef struct run_out {
    int status;
    sim_diag d;
    char *jobs, *ts, *summary;
    size_t jobs_len, ts_len, summary_len;
    sim_summary sum;
} run_out;

static void run_out_free(run_out *o)
{
    free(o->jobs);
    free(o->ts);
    free(o->summary);
}

/* Whether two runs wrote the same jobs.csv bytes; the same summary bytes. */
static inline bool same_jobs(const run_out *a, const run_out *b)
{
    return a->jobs_len == b->jobs_len && memcmp(a->jobs, b->jobs, a->jobs_len) == 0;
}

static inline bool same_summary(const run_out *a, const run_out *b)
{
    return a->summary_len == b->summary_len && memcmp(a->summary, b->summary, a->summary_len) == 0;
}

typedef struct run_opts {
    const policy_ops *pol;
    uint64_t seed;
    double checkpoint_s, restart_penalty_s;
    sim_time sample_us;
    const sim_rate_model *rate;
    const sim_time (*failures)[3]; /* node, down, up */
    int n_failures;
    const char *opt_key, *opt_value; /* one policy option, or NULL */
    const char *opt_key2, *opt_value2; /* a second one, or NULL */
    const char *opt_key3, *opt_value3; /* a third one, or NULL */
    sim_time horizon_us;             /* 0 = none */
    bool inline_rows;                /* jobs.csv rows on the simulating thread */
    uint64_t fail_after; /* not 0: the run's fail_after-th allocation fails, and every later one */
    bool fail_once;      /* ... or that one alone */
    const struct frag_workload *workload; /* the target workload (fgd), or NULL */
} run_opts;

static run_out run(world *w, const job_spec *jobs, size_t n, const run_opts *o)
{
    run_out r;
    memset(&r, 0, sizeof r);
    FILE *fj = open_memstream(&r.jobs, &r.jobs_len);
    FILE *ft = open_memstream(&r.ts, &r.ts_len);
    sim_config cfg = {.seed = o->seed,
                      .sample_interval_us = o->sample_us,
                      .horizon_us = o->horizon_us ? o->horizon_us : SIM_TIME_NEVER,
                      .checkpoint_interval_s = o->checkpoint_s,
                      .restart_penalty_s = o->restart_penalty_s,
                      .jobs_csv = fj,
                      .jobs_csv_inline = o->inline_rows,
                      .timeseries_csv = ft,
                      .check_invariants = true};
    sim_world sw = {.cluster = &w->cl,
                    .gpu_types = w->types,
                    .gpu_type_mem_mib = w->type_mem,
                    .tenants = w->tenants,
                    .rate = o->rate};
    policy_config pc = {.policy = o->pol->name, .workload = o->workload};
    if (o->opt_key) {
        snprintf(pc.key[0], sizeof pc.key[0], "%s", o->opt_key);
        pc.value[0] = o->opt_value;
        pc.n = 1;
    }
    const char *more[2][2] = {{o->opt_key2, o->opt_value2}, {o->opt_key3, o->opt_value3}};
    for (int k = 0; k < 2; k++)
        if (more[k][0]) {
            snprintf(pc.key[pc.n], sizeof pc.key[pc.n], "%s", more[k][0]);
            pc.value[pc.n++] = more[k][1];
        }
    sim_engine *e;
    r.status = sim_engine_create(&e, &cfg, &sw, o->pol, &pc, &r.d);
    if (r.status == SIM_OK) {
        for (int k = 0; k < o->n_failures; k++)
            sim_engine_add_failure(e, (uint32_t)o->failures[k][0], o->failures[k][1],
                                   o->failures[k][2], &r.d);
        array_source as = {.jobs = jobs, .n = n};
        sim_source src = {.ctx = &as, .next = array_next};
        if (o->fail_once)
            sim_alloc_fail_once(o->fail_after);
        else
            sim_alloc_fail_after(o->fail_after);
        r.status = sim_engine_run(e, &src, &r.d);
        sim_alloc_fail_after(0);
        r.sum = *sim_engine_summary(e);
        FILE *fs = open_memstream(&r.summary, &r.summary_len);
        sim_engine_write_summary(e, fs, NULL);
        fclose(fs);
        sim_engine_destroy(e);
    }
    fclose(fj);
    fclose(ft);
    return r;
}

/* The row of job `id` in jobs.csv, up to (excluding) the newline, in buf. */
static const char *row_of(const run_out *r, const char *id, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!r->jobs)
        return buf;
    char key[80];
    snprintf(key, sizeof key, "\n%.63s,", id);
    const char *p = strstr(r->jobs, key);
    if (!p)
        return buf;
    p++;
    size_t len = strcspn(p, "\n");
    if (len >= size)
        len = size - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* Field k (0-based) of a CSV row without quotes. */
static const char *field(const char *row, int k, char *buf, size_t size)
{
    const char *p = row;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    buf[0] = '\0';
    if (!p)
        return buf;
    size_t len = strcspn(p, ",");
    if (len >= size)
        len = size - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* jobs.csv columns. */
enum { F_ID, F_TENANT, F_QOS, F_PRIO, F_STATUS, F_SUBMIT, F_START, F_END, F_WAIT, F_QUEUED,
       F_JCT, F_RUN, F_WORK, F_GPUS, F_REPLICAS, F_MILLI, F_SHARE, F_TRUE, F_TYPE, F_NODE,
       F_PREEMPT, F_LOST, F_PRED, F_PREDM, F_REASON };

static inline void check_field(const run_out *r, const char *id, int k, const char *want, int line)
{
    char row[1024], f[256];
    row_of(r, id, row, sizeof row);
    field(row, k, f, sizeof f);
    if (strcmp(f, want) == 0) {
        check_passed++;
    } else {
        check_failed++;
        fprintf(stderr, "%s:%d: job %s field %d: got '%s', expected '%s'\n  row: %s\n",
                __FILE__, line, id, k, f, want, row);
    }
}
#define CHECK_FIELD(r, id, k, want) check_field(r, id, k, want, __LINE__)

static size_t random_trace(gsl_rng *rng, job_spec *jobs, size_t n)
{
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "r%zu", i);
        t += gsl_ran_exponential(rng, 20);
        double u = gsl_rng_uniform(rng);
        uint32_t g = u < 0.1 ? 0 : u < 0.7 ? 1 : u < 0.85 ? 2 : u < 0.95 ? 4 : 8;
        uint32_t m = g == 1 && gsl_rng_uniform(rng) < 0.5
                         ? 50 * (1 + (uint32_t)gsl_rng_uniform_int(rng, 20))
                         : 1000;
        jobs[i] = job(id, floor(t), floor(gsl_ran_exponential(rng, 300)), g, m);
        jobs[i].true_milli = g ? 1 + (uint32_t)gsl_rng_uniform_int(rng, m) : 0;
        jobs[i].cpu_milli = 1000 * (1 + gsl_rng_uniform_int(rng, 16));
        jobs[i].mem_mib = 1024 * (1 + gsl_rng_uniform_int(rng, 64));
        if (g && gsl_rng_uniform(rng) < 0.2)
            jobs[i].gpu_type_mask = 1u << (1 + gsl_rng_uniform_int(rng, 2));
        if (g >= 4 && gsl_rng_uniform(rng) < 0.5)
            jobs[i].replicas = g / 2;
    }
    return n;
}

/* A co-location slowdown for rate models of tests: a job sharing its GPU with one other
 * runs at 0.75 of its speed, with more at 0.5. */
static inline double world_shared_slowdown(void *ctx, const job_spec *self, uint32_t self_milli,
                                           const sim_resident *others, uint32_t n, uint16_t t)
{
    (void)ctx;
    (void)self;
    (void)self_milli;
    (void)others;
    (void)t;
    return n == 1 ? 0.75 : 0.5;
}

static inline size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

#endif
