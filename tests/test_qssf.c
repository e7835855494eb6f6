/*
 * test_qssf.c: Helios' quasi-shortest-service-first (policies/sjf.c):
 *  - a hand-computed schedule on two GPUs where the predictions come from the duration
 *    history (no model fitted yet: a tenant's mean, else the global one), with and
 *    without backfilling, and the predictions recorded in jobs.csv;
 *  - properties on random traces with node failures: the invariants checked after every
 *    event, every job accounted for, identical bytes for identical seeds.
 */
#include "engine_world.h"

extern const policy_ops policy_qssf;

/* One node of 2 GPUs. x (A, 100 s, 1 GPU) and y (B, 20 s, 1 GPU) start at 0. z (A,
 * 200 s, 2 GPUs) arrives at 1 with no job finished: no prediction, key 0. y ends at 20
 * (history: B = 20). v (B, 10 s, 2 GPUs) at 35: B's mean 20 s x 2 GPUs = 40. w (B, 50 s,
 * 1 GPU) at 40: 20 x 1 = 20. u (C, 10 s, 1 GPU) at 45: C has no history, the global
 * mean 20 -> 20. Order: z (0), w (20, earlier), u (20), v (40); arrival order (FIFO)
 * would put v before w and u.
 * Without backfilling z blocks the free GPU until x ends at 100: z 100..300, then w
 * 300..350 and u 300..310, and v (two GPUs) waits for w: 350..360.
 * With backfilling w takes the free GPU at 40 (40..90), u the one w frees (90..100),
 * z 100..300, v 300..310. */
static void test_hand(void)
{
    for (int backfill = 0; backfill < 2; backfill++) {
        world w;
        world_init(&w, 1, 2);
        uint32_t a = sim_intern_add(w.tenants, "A", 1, 0), b = sim_intern_add(w.tenants, "B", 1, 0),
                 c = sim_intern_add(w.tenants, "C", 1, 0);
        job_spec jobs[6] = {job("x", 0, 100, 1, 1000), job("y", 0, 20, 1, 1000),
                            job("z", 1, 200, 2, 1000), job("v", 35, 10, 2, 1000),
                            job("w", 40, 50, 1, 1000), job("u", 45, 10, 1, 1000)};
        const uint32_t ten[6] = {a, b, a, b, b, c};
        for (int i = 0; i < 6; i++)
            jobs[i].tenant = ten[i];
        run_opts o = {.pol = &policy_qssf,
                      .seed = 1,
                      .opt_key = "backfill",
                      .opt_value = backfill ? "true" : "false"};
        run_out r = run(&w, jobs, 6, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        if (r.status != SIM_OK)
            fprintf(stderr, "%s\n", r.d.msg);
        CHECK_FIELD(&r, "x", F_END, "100.000000");
        CHECK_FIELD(&r, "y", F_END, "20.000000");
        CHECK_FIELD(&r, "z", F_PRED, "");
        CHECK_FIELD(&r, "w", F_PRED, "20.000000");
        CHECK_FIELD(&r, "u", F_PRED, "20.000000");
        CHECK_FIELD(&r, "v", F_PRED, "20.000000");
        CHECK_FIELD(&r, "z", F_START, "100.000000");
        CHECK_FIELD(&r, "z", F_END, "300.000000");
        if (!backfill) {
            CHECK_FIELD(&r, "w", F_START, "300.000000");
            CHECK_FIELD(&r, "w", F_END, "350.000000");
            CHECK_FIELD(&r, "u", F_START, "300.000000");
            CHECK_FIELD(&r, "u", F_END, "310.000000");
            CHECK_FIELD(&r, "v", F_START, "350.000000");
            CHECK_FIELD(&r, "v", F_END, "360.000000");
        } else {
            CHECK_FIELD(&r, "w", F_START, "40.000000");
            CHECK_FIELD(&r, "w", F_END, "90.000000");
            CHECK_FIELD(&r, "u", F_START, "90.000000");
            CHECK_FIELD(&r, "u", F_END, "100.000000");
            CHECK_FIELD(&r, "v", F_START, "300.000000");
            CHECK_FIELD(&r, "v", F_END, "310.000000");
        }
        run_out_free(&r);
        world_fini(&w);
    }
}

/* A job without GPUs is keyed as if it held one GPU. One node of 2 GPUs: x (A, 100 s, 1
 * GPU), y (B, 20 s, 1 GPU) and z (C, 10 s, no GPU) start at 0 (no history: key 0); z ends
 * at 10 (C = 10), y at 20 (B = 20). p (C, 10 s, 2 GPUs) at 30: 10 x 2 = 20; it does not
 * fit beside x and, without backfilling, blocks. c (B, 10 s, no GPU) at 31: 20 x 1 = 20,
 * after p (earlier arrival): both wait for x to end at 100 (keyed by 20 x 0 = 0, c
 * would go first and start at 31). */
static void test_no_gpu_key(void)
{
    world w;
    world_init(&w, 1, 2);
    uint32_t a = sim_intern_add(w.tenants, "A", 1, 0), b = sim_intern_add(w.tenants, "B", 1, 0),
             c = sim_intern_add(w.tenants, "C", 1, 0);
    job_spec jobs[5] = {job("x", 0, 100, 1, 1000), job("y", 0, 20, 1, 1000), job("z", 0, 10, 0, 0),
                        job("p", 30, 10, 2, 1000), job("c", 31, 10, 0, 0)};
    const uint32_t ten[5] = {a, b, c, c, b};
    for (int i = 0; i < 5; i++)
        jobs[i].tenant = ten[i];
    run_opts o = {.pol = &policy_qssf, .seed = 1};
    run_out r = run(&w, jobs, 5, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "z", F_END, "10.000000");
    CHECK_FIELD(&r, "p", F_PRED, "10.000000");
    CHECK_FIELD(&r, "c", F_PRED, "20.000000");
    CHECK_FIELD(&r, "p", F_START, "100.000000");
    CHECK_FIELD(&r, "c", F_START, "100.000000");
    CHECK_FIELD(&r, "c", F_END, "110.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* Random traces with node failures (and a refit every simulated hour): invariants after
 * every event, every job accounted for, identical bytes for identical seeds. */
static void test_properties(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[600];
    for (int round = 0; round < 3; round++) {
        gsl_rng_set(rng, 700 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round * 2, round % 2 ? 4 : 8);
        uint32_t t[3] = {sim_intern_add(w.tenants, "t0", 2, 0),
                         sim_intern_add(w.tenants, "t1", 2, 0),
                         sim_intern_add(w.tenants, "t2", 2, 0)};
        size_t n = random_trace(rng, jobs, 250 + 150 * (size_t)round);
        for (size_t i = 0; i < n; i++)
            jobs[i].tenant = t[gsl_rng_uniform_int(rng, 3)];
        const sim_time fail[2][3] = {{0, 3000000000, 3600000000}, {1, 5000000000, 5100000000}};
        run_opts o = {.pol = &policy_qssf,
                      .seed = 7,
                      .sample_us = 60000000,
                      .failures = fail,
                      .n_failures = 2,
                      .opt_key = "retrain_interval",
                      .opt_value = "3600",
                      .opt_key2 = "backfill",
                      .opt_value2 = round == 1 ? "true" : "false"};
        run_out a = run(&w, jobs, n, &o);
        run_out b = run(&w, jobs, n, &o);
        CHECK_EQ_I64(a.status, SIM_OK);
        if (a.status != SIM_OK)
            fprintf(stderr, "qssf: %s\n", a.d.msg);
        CHECK_EQ_I64(a.sum.jobs_arrived, n);
        CHECK_EQ_I64(a.sum.jobs_done + a.sum.jobs_rejected + a.sum.jobs_unfinished, n);
        CHECK_EQ_I64(count_lines(a.jobs), n + 1);
        CHECK(same_jobs(&a, &b));
        CHECK(same_summary(&a, &b));
        run_out_free(&a);
        run_out_free(&b);
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

int main(void)
{
    test_hand();
    test_no_gpu_key();
    test_properties();
    return check_done();
}
