/*
 * test_run_alloc.c: running out of memory in the middle of a run, under every policy.
 *
 * Each policy (fgd with the trace's shapes as its target workload) replays one random
 * trace (shares, gangs, typed jobs, per-job speeds and co-location slowdowns, a node
 * failure) once as it is, then again with the run's k-th allocation failing and every
 * later one, for k = 1, 2, ... until a run makes fewer than k allocations: so every
 * allocation a run makes (pools and tables growing, the policy's own arrays, the output
 * writer's blocks) fails, at its place in a real run. Then each of them fails alone, and
 * the first way again on the trace with a job no node holds and a horizon (rows for
 * rejected, unfinished and never-arrived jobs). Each run must end with SIM_OK and the
 * outputs of the run without failures (a failure got round), or SIM_ENOMEM with a
 * message saying so; its summary must still be written, and nothing may be left
 * allocated once the engine is destroyed. The sanitizer builds also check that nothing
 * reads freed or unset memory on the way out.
 */
#include "policies/frag.h"
#include "policies/registry.h"

#include "engine_world.h"

/* Per-job speeds on each type (many distinct rates: the preemptive policies' lanes
 * fill and grow); world_shared_slowdown slows them where a GPU is shared. */
static double job_speed(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    uint64_t h = (j->submit_us + t) * UINT64_C(0x9e3779b97f4a7c15);
    return 0.5 + (double)(h >> 58) / 64.0;
}

enum { N_JOBS = 240, MAX_FAILS = 4000 };

/* Fail the run's allocations one by one: the k-th and every later one (once: the k-th
 * alone) for k = 1, 2, ... up to `upto` (0: until a run makes fewer than k). Each run ends
 * in success, with ref's outputs, or out of memory, saying so; it writes its summary and
 * leaves nothing allocated. Returns the runs that ran out of memory, and the allocations
 * the run made in *made (sticky mode). */
static int fail_each(world *w, const job_spec *jobs, size_t n, run_opts o, const run_out *ref,
                     bool once, uint64_t upto, uint64_t *made)
{
    int64_t base = sim_alloc_live();
    int enomem = 0, bad = 0;
    uint64_t k = 1;
    o.fail_once = once;
    for (; k <= (upto ? upto : MAX_FAILS); k++) {
        o.fail_after = k;
        run_out r = run(w, jobs, n, &o);
        bool ok = r.status == SIM_OK;
        bool said = !ok && r.status == SIM_ENOMEM && strstr(r.d.msg, "out of memory");
        if (!ok && !said && bad++ == 0)
            fprintf(stderr, "  %s: allocation %llu failing%s gives status %d: %s\n", o.pol->name,
                    (unsigned long long)k, once ? " alone" : "", r.status, r.d.msg);
        CHECK(ok || said);
        CHECK(r.summary_len > 0);
        if (sim_alloc_live() != base && bad++ == 0)
            fprintf(stderr, "  %s: allocation %llu failing%s leaves %lld blocks\n", o.pol->name,
                    (unsigned long long)k, once ? " alone" : "",
                    (long long)(sim_alloc_live() - base));
        CHECK_EQ_I64(sim_alloc_live(), base);
        enomem += !ok;
        if (ok) {
            /* A failure the run got round (a memo it did without), or none: the
             * schedule is the run's without failures. */
            if (!same_jobs(&r, ref) || !same_summary(&r, ref))
                fprintf(stderr, "  %s: allocation %llu failing%s changes the outputs\n",
                        o.pol->name, (unsigned long long)k, once ? " alone" : "");
            CHECK(same_jobs(&r, ref));
            CHECK(same_summary(&r, ref));
        }
        run_out_free(&r);
        if (ok && !once)
            break; /* fewer than k allocations: every one failed in turn */
    }
    CHECK(upto || k <= MAX_FAILS);
    if (made)
        *made = k - 1;
    return enomem;
}

static void test_every_policy(void)
{
    sim_rate_model rm = {
        .name = "oom", .throughput = job_speed, .interference = world_shared_slowdown};
    static job_spec jobs[N_JOBS + 1];
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
    /* The second trace: a job no node holds first (rejected as it arrives), and the run
     * cut at a horizon (the jobs left and those yet to arrive written unfinished). */
    static job_spec cut[N_JOBS + 1];
    cut[0] = job("whole16", 0, 100, 16, 1000);
    cut[0].replicas = 1;
    memcpy(cut + 1, jobs, n * sizeof *jobs);
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
        run_out ref = run(&w, jobs, n, &o);
        if (ref.status != SIM_OK) {
            /* A policy that needs inputs this world lacks. */
            fprintf(stderr, "  %s: not run here (%s)\n", (*p)->name, ref.d.msg);
            run_out_free(&ref);
            continue;
        }
        policies++;
        uint64_t made = 0;
        int after = fail_each(&w, jobs, n, o, &ref, false, 0, &made);
        int alone = fail_each(&w, jobs, n, o, &ref, true, made, NULL);
        run_out_free(&ref);
        o.horizon_us = 2400 * SIM_US_PER_S;
        ref = run(&w, cut, n + 1, &o);
        CHECK_EQ_I64(ref.status, SIM_OK);
        CHECK(ref.sum.jobs_rejected >= 1 && ref.sum.jobs_unfinished > 0);
        int cut_after = fail_each(&w, cut, n + 1, o, &ref, false, 0, NULL);
        run_out_free(&ref);
        /* Some allocations in each policy's run, each failed: out of memory. */
        CHECK(after > 0 && cut_after > 0);
        printf("%-14s %4llu allocations during the run: %d out of memory failing each with "
               "the rest, %d failing it alone; cut at the horizon: %d\n",
               (*p)->name, (unsigned long long)made, after, alone, cut_after);
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
