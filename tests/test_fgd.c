/*
 * test_fgd.c: the packing policies in the engine. FGD's choices in small hand-checked
 * cases (GPU inside a node, node by GPU share, node by CPU) against binpack's; then, for
 * fgd, bestfit, dotprod, gpupacking, gpuclustering, random, binpack and fifo, random
 * heterogeneous workloads with type constraints, several replicas and fractional
 * shares: the run succeeds (no invalid decision), the cluster's conservation invariants
 * hold at every sample, every allocation is on an allowed GPU type, every job ends, and
 * two runs with the same seed write byte-identical jobs.csv (for fgd, also with its
 * cache off or tiny).
 */
#include "policies/frag.h"
#include "policies/registry.h"
#include "base/alloc.h"
#include "sim/engine.h"
#include "base/intern.h"

#include "array_source.h"
#include "check.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

/* A world of the given nodes; GPU types "", "A", "B", "C" (ids 1..3). */
typedef struct world {
    sim_intern *types, *tenants;
    cluster_spec cl;
    uint64_t type_mem[4];
} world;

static void world_init(world *w, node_spec *nodes, uint32_t n)
{
    w->types = sim_intern_create(true);
    w->tenants = sim_intern_create(false);
    sim_intern_add(w->types, "A", 1, 0);
    sim_intern_add(w->types, "B", 1, 0);
    sim_intern_add(w->types, "C", 1, 0);
    w->cl.n_nodes = n;
    w->cl.nodes = nodes;
    for (int t = 0; t < 4; t++)
        w->type_mem[t] = 16384;
}

static void world_fini(world *w)
{
    sim_intern_destroy(w->types);
    sim_intern_destroy(w->tenants);
}

static node_spec node(const char *name, uint16_t type, uint32_t gpus, uint64_t cpu)
{
    node_spec n = {.cpu_milli = cpu, .mem_mib = 262144, .num_gpus = gpus, .gpu_type = type};
    snprintf(n.name, sizeof n.name, "%s", name);
    return n;
}

static job_spec job(const char *id, sim_time at, uint32_t gpus, uint32_t milli, uint64_t cpu)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    j.submit_us = at;
    j.work_s = 1e6;
    j.num_gpus = gpus;
    j.gpu_milli = gpus ? milli : 0;
    j.true_milli = j.gpu_milli;
    j.replicas = 1;
    j.cpu_milli = cpu;
    j.name = "";
    j.command = "";
    return j;
}

/* Run `policy` on the jobs until time `horizon_us`; returns the engine (the caller
 * inspects its view and destroys it) or NULL. */
static sim_engine *run_until(world *w, const char *policy, const job_spec *jobs, uint32_t n,
                             const frag_workload *wl, sim_time horizon_us)
{
    sim_config cfg = {.seed = 7, .horizon_us = horizon_us};
    sim_world sw = {.cluster = &w->cl, .gpu_types = w->types, .gpu_type_mem_mib = w->type_mem,
                    .tenants = w->tenants};
    policy_config pc = {.policy = policy, .workload = wl};
    sim_engine *e;
    sim_diag d = {0};
    if (sim_engine_create(&e, &cfg, &sw, policy_find(policy), &pc, &d) != SIM_OK) {
        fprintf(stderr, "create %s: %s\n", policy, d.msg);
        return NULL;
    }
    array_source src = {.jobs = jobs, .n = n};
    sim_source s = {.ctx = &src, .next = array_next};
    if (sim_engine_run(e, &s, &d) != SIM_OK) {
        fprintf(stderr, "run %s: %s\n", policy, d.msg);
        sim_engine_destroy(e);
        return NULL;
    }
    return e;
}

static frag_workload *one_shape(uint32_t gpus, uint32_t milli, uint64_t cpu)
{
    frag_workload *wl;
    if (frag_workload_create(&wl, 4) != SIM_OK)
        return NULL;
    frag_shape s = {.cpu_milli = cpu, .gpus = gpus, .milli = milli};
    frag_workload_add(wl, &s, 1);
    return wl;
}

/* GPU inside a node. One node, 2 GPUs. j0 takes 200 of both; j1 400 (both GPUs alike:
 * the first) -> free 400 and 800; j2 asks 300. With M = {0.35-GPU tasks}: on GPU 0 the
 * node would be free (100, 800): 100 < 350 is a fragment; on GPU 1 (400, 500): none.
 * FGD takes GPU 1; binpack the most used GPU 0. */
static void test_gpu_choice(void)
{
    node_spec nodes[1] = {node("n0", 1, 2, 32000)};
    world w;
    world_init(&w, nodes, 1);
    job_spec jobs[3] = {job("j0", 0, 2, 200, 0), job("j1", 1, 1, 400, 0),
                        job("j2", 2, 1, 300, 0)};
    frag_workload *wl = one_shape(1, 350, 0);
    sim_engine *e = run_until(&w, "fgd", jobs, 3, wl, 3);
    CHECK(e != NULL);
    if (e) {
        const sim_view *v = sim_engine_view(e);
        CHECK_EQ_I64(v->gpu_used_milli[0], 600);
        CHECK_EQ_I64(v->gpu_used_milli[1], 500);
        sim_engine_destroy(e);
    }
    e = run_until(&w, "binpack", jobs, 3, wl, 3);
    CHECK(e != NULL);
    if (e) {
        const sim_view *v = sim_engine_view(e);
        CHECK_EQ_I64(v->gpu_used_milli[0], 900);
        CHECK_EQ_I64(v->gpu_used_milli[1], 200);
        sim_engine_destroy(e);
    }
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* Node by GPU share. Two 1-GPU nodes; j0 (500) goes to n0 (a tie); j1 asks 400. With
 * M = {0.3-GPU tasks}: on n0 (free 500 -> 100) the node's fragmentation grows by 100
 * (the task no longer fits); on n1 (1000 -> 600) it stays 0. FGD takes n1; binpack n0. */
static void test_node_choice(void)
{
    node_spec nodes[2] = {node("n0", 1, 1, 32000), node("n1", 1, 1, 32000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[2] = {job("j0", 0, 1, 500, 0), job("j1", 1, 1, 400, 0)};
    frag_workload *wl = one_shape(1, 300, 0);
    sim_engine *e = run_until(&w, "fgd", jobs, 2, wl, 2);
    CHECK(e != NULL);
    if (e) {
        const sim_view *v = sim_engine_view(e);
        CHECK_EQ_I64(v->node_used_milli[0], 500);
        CHECK_EQ_I64(v->node_used_milli[1], 400);
        sim_engine_destroy(e);
    }
    e = run_until(&w, "binpack", jobs, 2, wl, 2);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ_I64(sim_engine_view(e)->node_used_milli[0], 900);
        sim_engine_destroy(e);
    }
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* Node by CPU. n0 (8500 milli-CPU) and n1 (16000), 2 GPUs each, M = {whole GPU with
 * 8000 milli-CPU}. j0, CPU-only 9000, fits n1 only: n1's GPUs are stranded (7000 left).
 * j1, one whole GPU with 1000 CPU: on n0 the node's fragmentation grows by 1000 (7500
 * left: M no longer fits, its idle GPU is lost); on n1 it falls by 1000 (one stranded GPU
 * used). FGD takes n1; binpack (no GPU allocated anywhere: a tie) n0. */
static void test_cpu_choice(void)
{
    node_spec nodes[2] = {node("n0", 1, 2, 8500), node("n1", 1, 2, 16000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[2] = {job("j0", 0, 0, 0, 9000), job("j1", 1, 1, 1000, 1000)};
    frag_workload *wl = one_shape(1, 1000, 8000);
    sim_engine *e = run_until(&w, "fgd", jobs, 2, wl, 2);
    CHECK(e != NULL);
    if (e) {
        const sim_view *v = sim_engine_view(e);
        CHECK_EQ_I64(v->node_cpu_used[1], 10000);
        CHECK_EQ_I64(v->node_used_milli[1], 1000);
        CHECK_EQ_I64(v->node_used_milli[0], 0);
        sim_engine_destroy(e);
    }
    e = run_until(&w, "binpack", jobs, 2, wl, 2);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ_I64(sim_engine_view(e)->node_used_milli[0], 1000);
        sim_engine_destroy(e);
    }
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* ---- Properties on random workloads ---------------------------------------------- */

typedef struct watch {
    sim_engine *e;
    uint64_t samples, bad_check, bad_type;
    char first[800];
} watch;

static const char *const watch_names[1] = {"checks"};

/* A probe that checks the invariants and the type constraints at every sample. */
static void watch_sample(void *ctx, const sim_view *v, double *out)
{
    watch *w = ctx;
    out[0] = 0;
    if (!w->e)
        return;
    w->samples++;
    sim_diag d = {0};
    if (sim_engine_check(w->e, &d) != SIM_OK) {
        if (!w->bad_check++)
            snprintf(w->first, sizeof w->first, "%s", d.msg);
    }
    for (sim_job_id id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
            const sim_alloc_rec *r = &v->allocs[a];
            if (r->gpu != SIM_GPU_NONE && !sim_job_type_ok(j, v->node_gpu_type[r->node]))
                w->bad_type++;
        }
    }
}

static uint32_t random_jobs(gsl_rng *r, job_spec *jobs, uint32_t n)
{
    sim_time t = 0;
    for (uint32_t i = 0; i < n; i++) {
        t += (sim_time)(gsl_rng_uniform(r) * 40e6);
        char id[16];
        snprintf(id, sizeof id, "r%u", i);
        static const uint32_t counts[6] = {0, 1, 1, 1, 2, 4};
        uint32_t gpus = counts[gsl_rng_uniform_int(r, 6)];
        uint32_t milli = gsl_rng_uniform(r) < 0.4
                             ? 1000
                             : 50 + 10 * (uint32_t)gsl_rng_uniform_int(r, 90);
        jobs[i] = job(id, t, gpus, milli, 500 + 100 * gsl_rng_uniform_int(r, 120));
        jobs[i].work_s = 60 + gsl_rng_uniform(r) * 3000;
        jobs[i].mem_mib = 1024 * gsl_rng_uniform_int(r, 64);
        /* A third of GPU jobs constrained to one or two of the three types. */
        if (gpus && gsl_rng_uniform(r) < 0.33)
            jobs[i].gpu_type_mask = (uint64_t)(1 + gsl_rng_uniform_int(r, 6)) << 1;
        /* Some 4-GPU jobs in two replicas; some 2-GPU ones left to the core. */
        if (gpus == 4 && gsl_rng_uniform(r) < 0.5)
            jobs[i].replicas = 2;
        else if (gpus == 2 && gsl_rng_uniform(r) < 0.5)
            jobs[i].replicas = 0;
    }
    return n;
}

/* Run `policy` on the random jobs with the watch probe; jobs.csv into *csv (malloc'd). */
static void run_random(world *w, const char *policy, const job_spec *jobs, uint32_t n,
                       const frag_workload *wl, const char *cache, char **csv)
{
    watch wt = {0};
    sim_probe probe = {.n = 1, .names = watch_names, .ctx = &wt, .sample = watch_sample};
    FILE *f = tmpfile();
    sim_config cfg = {.seed = 11, .sample_interval_us = 20 * SIM_US_PER_S,
                      .horizon_us = SIM_TIME_NEVER, .jobs_csv = f, .probes = &probe,
                      .n_probes = 1};
    sim_world sw = {.cluster = &w->cl, .gpu_types = w->types, .gpu_type_mem_mib = w->type_mem,
                    .tenants = w->tenants};
    policy_config pc = {.policy = policy, .workload = wl};
    if (cache) {
        pc.n = 1;
        snprintf(pc.key[0], sizeof pc.key[0], "cache");
        pc.value[0] = cache;
    }
    sim_engine *e;
    sim_diag d = {0};
    int st = sim_engine_create(&e, &cfg, &sw, policy_find(policy), &pc, &d);
    CHECK(st == SIM_OK);
    if (st != SIM_OK) {
        fclose(f);
        return;
    }
    wt.e = e;
    array_source src = {.jobs = jobs, .n = n};
    sim_source s = {.ctx = &src, .next = array_next};
    st = sim_engine_run(e, &s, &d);
    if (st != SIM_OK)
        fprintf(stderr, "%s: %s\n", policy, d.msg);
    CHECK(st == SIM_OK);
    CHECK(sim_engine_check(e, &d) == SIM_OK);
    const sim_summary *sum = sim_engine_summary(e);
    CHECK_EQ_I64(sum->jobs_arrived, n);
    CHECK_EQ_I64(sum->jobs_done + sum->jobs_rejected, n);
    CHECK(sum->jobs_done > n / 2);
    CHECK(wt.samples > 100);
    if (wt.bad_check)
        fprintf(stderr, "%s: %s\n", policy, wt.first);
    CHECK_EQ_I64(wt.bad_check, 0);
    CHECK_EQ_I64(wt.bad_type, 0);
    sim_engine_destroy(e);
    long len = ftell(f);
    *csv = malloc((size_t)len + 1);
    rewind(f);
    size_t got = *csv ? fread(*csv, 1, (size_t)len, f) : 0;
    if (*csv)
        (*csv)[got] = '\0';
    CHECK_EQ_I64(got, len);
    fclose(f);
}

static void test_random_workloads(void)
{
    node_spec nodes[9] = {node("a0", 1, 8, 96000), node("a1", 1, 8, 64000),
                          node("b0", 2, 4, 48000), node("b1", 2, 4, 48000),
                          node("b2", 2, 2, 32000), node("c0", 3, 2, 24000),
                          node("c1", 3, 1, 16000), node("c2", 3, 1, 16000),
                          node("x0", 0, 0, 64000)};
    world w;
    world_init(&w, nodes, 9);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2024);
    enum { N = 600 };
    static job_spec jobs[N];
    random_jobs(r, jobs, N);
    /* The target workload: the jobs' own shapes (replicas as given, or the core's
     * choice for 2 GPUs on 8-GPU nodes: one replica). */
    frag_workload *wl;
    CHECK(frag_workload_create(&wl, 4) == SIM_OK);
    for (uint32_t i = 0; i < N; i++) {
        frag_shape s;
        frag_shape_of_job(&jobs[i], frag_replicas_of_job(&jobs[i], 8), &s);
        CHECK(frag_workload_add(wl, &s, 1) == SIM_OK);
    }
    static const char *const policies[] = {"fgd",           "bestfit", "dotprod", "gpupacking",
                                           "gpuclustering", "random",  "binpack", "fifo"};
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        char *a = NULL, *b = NULL;
        run_random(&w, policies[p], jobs, N, wl, NULL, &a);
        run_random(&w, policies[p], jobs, N, wl, NULL, &b);
        CHECK(a && b && strcmp(a, b) == 0);
        free(b);
        /* fgd's caches return what a recomputation would: the same run without the
         * node-fragmentation cache, and with a tiny one, places every job the same. */
        for (int k = 0; p == 0 && k < 2; k++) {
            char *c = NULL;
            run_random(&w, policies[p], jobs, N, wl, k ? "4" : "0", &c);
            CHECK(a && c && strcmp(a, c) == 0);
            free(c);
        }
        free(a);
    }
    frag_workload_destroy(wl);
    gsl_rng_free(r);
    world_fini(&w);
}

/* fgd refuses to start without a target workload or with a bad cache size. */
static void test_fgd_options(void)
{
    node_spec nodes[1] = {node("n0", 1, 2, 32000)};
    world w;
    world_init(&w, nodes, 1);
    sim_config cfg = {.seed = 1, .horizon_us = SIM_TIME_NEVER};
    sim_world sw = {.cluster = &w.cl, .gpu_types = w.types, .gpu_type_mem_mib = w.type_mem,
                    .tenants = w.tenants};
    policy_config pc = {.policy = "fgd"};
    sim_engine *e = NULL;
    sim_diag d = {0};
    CHECK(sim_engine_create(&e, &cfg, &sw, policy_find("fgd"), &pc, &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "policy 'fgd' needs the run's target workload (task shapes and their "
                     "popularity), and none was given");
    frag_workload *wl = one_shape(1, 500, 0);
    pc.workload = wl;
    pc.n = 1;
    snprintf(pc.key[0], sizeof pc.key[0], "cache");
    pc.value[0] = "1000";
    CHECK(sim_engine_create(&e, &cfg, &sw, policy_find("fgd"), &pc, &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "policy 'fgd': option 'cache': expected 0 or a power of two, got 1000");
    /* Allocation failures in fgd's init: SIM_ENOMEM and nothing leaked. */
    pc.n = 0;
    int64_t live0 = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 60; k++) {
        sim_alloc_fail_after(k);
        int st = sim_engine_create(&e, &cfg, &sw, policy_find("fgd"), &pc, &d);
        sim_alloc_fail_after(0);
        if (st == SIM_OK) {
            sim_engine_destroy(e);
        } else {
            failures++;
            CHECK_EQ_I64(st, SIM_ENOMEM);
        }
        CHECK_EQ_I64(sim_alloc_live(), live0);
    }
    CHECK(failures > 30);
    frag_workload_destroy(wl);
    world_fini(&w);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_gpu_choice();
    test_node_choice();
    test_cpu_choice();
    test_random_workloads();
    test_fgd_options();
    return check_done();
}
