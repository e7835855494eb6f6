/*
 * test_run_alloc.c: running out of memory in the middle of a run, under every policy.
 *
 * Each policy (fgd with the trace's shapes as its target workload) replays one random
 * trace (shares, gangs, typed jobs, per-job speeds and co-location slowdowns, a node
 * failure) once as it is, then again with the run's k-th
 * allocation failing (and every later one), for k = 1, 2, ... until a run makes fewer
 * than k allocations: so every allocation a run makes (pools and tables growing, the
 * policy's own arrays, the output writer's blocks) fails once, at its place in a real
 * run. Each such run must end with SIM_OK or SIM_ENOMEM and a message, its summary must
 * still be written, and nothing may be left allocated once the engine is destroyed; the
 * sanitizer builds also check that nothing reads freed or unset memory on the way out.
 * The run where no allocation failed gives the first run's bytes.
 */
#include "policies/frag.h"
#include "policies/registry.h"

#include "engine_world.h"

/* Per-job speeds on each type (many distinct rates: the preemptive policies' lanes
 * fill and grow), slowed where a GPU is shared. */
static double job_speed(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    uint64_t h = (j->submit_us + t) * UINT64_C(0x9e3779b97f4a7c15);
    return 0.5 + (double)(h >> 58) / 64.0;
}

static double shared_slowdown(void *ctx, const job_spec *self, uint32_t self_milli,
                              const sim_resident *others, uint32_t n, uint16_t t)
{
    (void)ctx;
    (void)self;
    (void)self_milli;
    (void)others;
    (void)t;
    return n == 1 ? 0.8 : 0.6;
}

enum { N_JOBS = 240, MAX_FAILS = 4000 };

static void test_every_policy(void)
{
    sim_rate_model rm = {.name = "oom", .throughput = job_speed, .interference = shared_slowdown};
    static job_spec jobs[N_JOBS];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 31337);
    world w;
    world_init(&w, 6, 8);
    /* Types the GPU catalog knows, for the predictive policy's features. */
    sim_intern_destroy(w.types);
    w.types = sim_intern_create(true);
    sim_intern_add(w.types, "V100M16", 7, 0);
    sim_intern_add(w.types, "V100M32", 7, 0);
    for (uint32_t i = 0; i < w.cl.n_nodes; i++)
        w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
    size_t n = random_trace(rng, jobs, N_JOBS);
    /* Execution features, for the predictive policy's models; a third latency-sensitive. */
    for (size_t i = 0; i < n; i++) {
        jobs[i].attr[SIM_ATTR_BATCH_SIZE] = (double)(16 << gsl_rng_uniform_int(rng, 5));
        jobs[i].attr[SIM_ATTR_ITERATIONS] = 100 + jobs[i].work_s;
        jobs[i].attr[SIM_ATTR_INPUT_SIZE] = 100;
        jobs[i].attr_present = (UINT64_C(1) << SIM_ATTR_BATCH_SIZE) |
                               (UINT64_C(1) << SIM_ATTR_ITERATIONS) |
                               (UINT64_C(1) << SIM_ATTR_INPUT_SIZE);
        jobs[i].qos = i % 3 ? SIM_QOS_BE : SIM_QOS_LS;
    }
    const sim_time fail[1][3] = {{2, 900000000, 2400000000}};
    /* fgd's target workload: the trace's replica shapes. */
    frag_workload *wl = NULL;
    CHECK_EQ_I64(frag_workload_create(&wl, 3), SIM_OK);
    for (size_t i = 0; wl && i < n; i++) {
        frag_shape sh;
        frag_shape_of_job(&jobs[i], frag_replicas_of_job(&jobs[i], 8), &sh);
        CHECK_EQ_I64(frag_workload_add(wl, &sh, 1), SIM_OK);
    }
    int policies = 0;
    for (const policy_ops *const *p = policy_all; *p; p++) {
        run_opts o = {.pol = *p,
                      .seed = 3,
                      .sample_us = 300000000,
                      .rate = &rm,
                      .failures = fail,
                      .n_failures = 1,
                      .workload = wl};
        int64_t base = sim_alloc_live();
        run_out ref = run(&w, jobs, n, &o);
        if (ref.status != SIM_OK) {
            /* A policy that needs inputs this world lacks (fgd: a target workload). */
            fprintf(stderr, "  %s: not run here (%s)\n", (*p)->name, ref.d.msg);
            run_out_free(&ref);
            continue;
        }
        policies++;
        uint64_t k = 1;
        int enomem = 0, bad = 0;
        for (; k <= MAX_FAILS; k++) {
            o.fail_after = k;
            run_out r = run(&w, jobs, n, &o);
            bool ok = r.status == SIM_OK;
            if (!ok && (r.status != SIM_ENOMEM || r.d.msg[0] == 0))
                fprintf(stderr, "  %s: allocation %llu failing gives status %d: %s\n", (*p)->name,
                        (unsigned long long)k, r.status, r.d.msg);
            CHECK(ok || (r.status == SIM_ENOMEM && r.d.msg[0] != '\0'));
            CHECK(r.summary_len > 0);
            if (sim_alloc_live() != base && bad++ == 0)
                fprintf(stderr, "  %s: allocation %llu failing leaves %lld blocks\n", (*p)->name,
                        (unsigned long long)k, (long long)(sim_alloc_live() - base));
            CHECK_EQ_I64(sim_alloc_live(), base);
            enomem += r.status == SIM_ENOMEM;
            if (ok) {
                /* Fewer than k allocations: none failed, and the run is the first one. */
                CHECK(same_jobs(&r, &ref));
                CHECK(same_summary(&r, &ref));
                run_out_free(&r);
                break;
            }
            run_out_free(&r);
        }
        /* Every allocation of the run failed once, and some did in each policy. */
        CHECK(k <= MAX_FAILS);
        CHECK(enomem > 0);
        printf("%-14s %4d allocations during the run, each failed once\n", (*p)->name, enomem);
        run_out_free(&ref);
    }
    CHECK(policies >= 28);
    frag_workload_destroy(wl);
    world_fini(&w);
    gsl_rng_free(rng);
}

int main(void)
{
    test_every_policy();
    return check_done();
}
