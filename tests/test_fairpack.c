/*
 * test_fairpack.c: the Muri study's baselines themis and antman:
 *  - hand-computed schedules with exact completion times: themis' finish-time fairness
 *    ranking (a job that never ran goes first) and its min-max allocation; antman's
 *    opportunistic job at half speed beside a guaranteed one, at the simulator's
 *    stage-count speed with profiles, and no head-of-line blocking; online services at
 *    those speeds too;
 *  - properties on random traces (two GPU types, gangs, node failures): the invariants
 *    checked after every event, every job accounted for, identical bytes for identical
 *    seeds, and under antman every GPU job holding half a GPU (so no GPU hosts more
 *    than two jobs) and the same bytes whether a pass walks the pending list or merges
 *    the lists per shape, and whether a replica's first fit resumes where the last
 *    replica's stopped and skips nodes through a max tree or scans every node;
 *  - antman under fault injection: SIM_ENOMEM or success, and no block left allocated.
 */
#include "engine_world.h"

#include "policies/antman.h"

#include "base/alloc.h"

extern const policy_ops policy_themis, policy_antman;

/* One GPU. a (100 s) alone from 0: x = 1, rho = 1. At 60 b (200 s) arrives; a has 40
 * s left, its isolated time 60 + 40 = 100 (a = min(1, ceil(1/2) / 1) = 1), b's 200. The
 * min-max rho solves 40 / (100 rho - 60) + 200 / (200 rho) = 1: rho = 1 + sqrt(0.4),
 * x_a = 0.387, x_b = 0.613. b never ran, so it ranks first (x x 1e9 against x_a / 60 s)
 * and preempts a: b 60..260, a 260..300. (srtf would keep a.) */
static void test_themis(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 100, 1, 1000), job("b", 60, 200, 1, 1000)};
    run_opts o = {.pol = &policy_themis, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "60.000000");
    CHECK_FIELD(&r, "b", F_END, "260.000000");
    CHECK_FIELD(&r, "a", F_END, "300.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "1");
    CHECK_EQ_I64(r.sum.jobs_done, 2);
    run_out_free(&r);
    world_fini(&w);
}

/* Two GPUs, every job 1 GPU. a (0, 100 s) and b (0, 100 s) run. c (10, 50 s) arrives:
 * x is 1/2 or so for each, c never ran and ranks first; a and b ran 10 s each with the
 * same x, so the deficit (equal) and then arrival order keep a: b is preempted. c
 * 10..60, b resumes at 60 (90 s left): 60..150; a 0..100. */
static void test_themis_rank(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[3] = {job("a", 0, 100, 1, 1000), job("b", 0, 100, 1, 1000),
                        job("c", 10, 50, 1, 1000)};
    run_opts o = {.pol = &policy_themis, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "c", F_START, "10.000000");
    CHECK_FIELD(&r, "c", F_END, "60.000000");
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    CHECK_FIELD(&r, "b", F_END, "150.000000");
    CHECK_FIELD(&r, "b", F_PREEMPT, "1");
    run_out_free(&r);
    world_fini(&w);
}

static job_spec prio_job(const char *id, double submit_s, double work_s, uint32_t gpus,
                         int32_t priority)
{
    job_spec j = job(id, submit_s, work_s, gpus, 1000);
    j.priority = priority;
    return j;
}

/* One GPU, no profiles. Guaranteed g (0, 100 s) and opportunistic o (0, 60 s) share it,
 * o at half speed: 50 s of work by 100. Guaranteed g2 (10, 30 s) waits for g: 100..130,
 * o beside it still at half speed, its last 10 s take 20: o ends at 120. Opportunistic
 * o2 (5, 10 s) waits for o: 120..130 at half speed (5 s), then alone: ends at 135. */
static void test_antman_half(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[4] = {prio_job("g", 0, 100, 1, 0), prio_job("o", 0, 60, 1, 1),
                        prio_job("o2", 5, 10, 1, 1), prio_job("g2", 10, 30, 1, 0)};
    run_opts o = {.pol = &policy_antman, .seed = 1};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "g", F_END, "100.000000");
    CHECK_FIELD(&r, "g2", F_START, "100.000000");
    CHECK_FIELD(&r, "g2", F_END, "130.000000");
    CHECK_FIELD(&r, "o", F_END, "120.000000");
    CHECK_FIELD(&r, "o2", F_START, "120.000000");
    CHECK_FIELD(&r, "o2", F_END, "135.000000");
    CHECK_FIELD(&r, "o", F_SHARE, "500");
    CHECK_FIELD(&r, "g", F_SHARE, "500");
    CHECK_EQ_I64(r.sum.jobs_done, 4);
    run_out_free(&r);
    world_fini(&w);
}

static void profile(job_spec *j, double iter_ms, double cpu, double gpu, double net)
{
    const sim_attr a[4] = {SIM_ATTR_ITER_TIME_MS, SIM_ATTR_STAGE_CPU_MS, SIM_ATTR_STAGE_GPU_MS,
                           SIM_ATTR_STAGE_NET_MS};
    const double x[4] = {iter_ms, cpu, gpu, net};
    for (int i = 0; i < 4; i++) {
        j->attr[a[i]] = x[i];
        j->attr_present |= UINT64_C(1) << a[i];
    }
}

/* The simulator's stage count on one GPU: o (cpu 4, gpu 3, net 0 ms; 7 ms) beside g
 * (cpu 2, gpu 5, net 0; 7 ms): o's data stage spans 1 of g's iterations (4 < 5, with 4
 * left over), its GPU stage floor(3 / 2) = 1 more and 1 left over, 1 more: 3 x 7 = 21
 * ms, so o runs at 7/21 = 1/3: its 30 s take 90 s. */
static void test_antman_stages(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {prio_job("g", 0, 100, 1, 0), prio_job("o", 0, 30, 1, 1)};
    profile(&jobs[0], 7, 2, 5, 0);
    profile(&jobs[1], 7, 4, 3, 0);
    run_opts o = {.pol = &policy_antman, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "o", F_END, "90.000000");
    CHECK_FIELD(&r, "g", F_END, "100.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* Two GPUs, no profiles. Guaranteed g (0, 100 s) takes GPU 0; opportunistic o (0, 30 s)
 * takes the idle GPU 1 first, alone at full speed. No head-of-line blocking: the 2-GPU
 * guaranteed b (1) cannot start beside g, but the 1-GPU c (2, 10 s) behind it does, on
 * GPU 1 beside o: c 2..12, o at half speed 2..12 (7 s done at 12), then alone: ends at
 * 35. b waits for g: 100..110. */
static void test_antman_order(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[4] = {prio_job("g", 0, 100, 1, 0), prio_job("o", 0, 30, 1, 1),
                        prio_job("b", 1, 10, 2, 0), prio_job("c", 2, 10, 1, 0)};
    run_opts o = {.pol = &policy_antman, .seed = 1};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "o", F_END, "35.000000");
    CHECK_FIELD(&r, "c", F_START, "2.000000");
    CHECK_FIELD(&r, "c", F_END, "12.000000");
    CHECK_FIELD(&r, "b", F_START, "100.000000");
    CHECK_FIELD(&r, "b", F_END, "110.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* One GPU of 16 GiB. Guaranteed g (0, 100 s) asks 10000 MiB, so opportunistic o (0, 60
 * s, 10000 MiB) cannot join it and waits: alone 100..160. o2 (1, 20 s, 4000 MiB) fits
 * beside g at half speed: 1..41. (Placing o beside g used to end the run with an
 * invalid decision.) */
static void test_antman_gpu_mem(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[3] = {prio_job("g", 0, 100, 1, 0), prio_job("o", 0, 60, 1, 1),
                        prio_job("o2", 1, 20, 1, 1)};
    jobs[0].gpu_mem_mib = 10000;
    jobs[1].gpu_mem_mib = 10000;
    jobs[2].gpu_mem_mib = 4000;
    run_opts o = {.pol = &policy_antman, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "g", F_END, "100.000000");
    CHECK_FIELD(&r, "o2", F_START, "1.000000");
    CHECK_FIELD(&r, "o2", F_END, "41.000000");
    CHECK_FIELD(&r, "o", F_START, "100.000000");
    CHECK_FIELD(&r, "o", F_END, "160.000000");
    CHECK_EQ_I64(r.sum.jobs_done, 3);
    run_out_free(&r);
    world_fini(&w);
}

/* Online services (qos LS with a demand curve) run at their speed factor alone, which
 * the core caps by no share: on one GPU the guaranteed service s (100 s) runs at its
 * speed, 0..100, and the opportunistic service t (100 s, no iteration time: no stage
 * count) beside it at half speed, 50 s by 100, then alone: ends at 150, as batch jobs
 * would. They used to end at 50 and 75 s (the half-GPU share's cap divided out of their
 * factor). */
static void test_antman_services(void)
{
    check_put("am_svc.csv", "job_id,submit_time,duration,num_gpus,qos,priority\n"
                            "s,0,100,1,LS,0\nt,0,100,1,LS,1\n");
    check_put("am_svc_demand.csv", "service,time,replicas\ns,0,1\nt,0,1\n");
    CHECK_EQ_I64(check_sh("'%s' run --trace am_svc.csv --demand am_svc_demand.csv --cluster "
                          "1xV100M16:1 --policy antman --check-invariants --quiet --out am_svc_out "
                          ">/dev/null",
                          SIM_BINARY),
                 0);
    CHECK(check_file_has("am_svc_out/jobs.csv", "\ns,,LS,0,done,0.000000,0.000000,100.000000,"));
    CHECK(check_file_has("am_svc_out/jobs.csv", "\nt,,LS,1,done,0.000000,0.000000,150.000000,"));
}

/* The rate model's demand: every job uses half a GPU alone, whatever the type. */
static uint32_t half_demand(void *ctx, const job_spec *job, uint16_t gpu_type)
{
    (void)ctx;
    (void)job;
    (void)gpu_type;
    return SIM_MILLI_GPU / 2;
}

/* With the rate model's demand of half a GPU, a job holding half a GPU runs at full
 * speed (the core's share cap is 1): guaranteed g (100 s) ends at 100 s beside
 * opportunistic o (60 s), which runs at half its solo speed and ends at 110 s (50 s of
 * work by 100, the last 10 s alone). The speed factors divided out the share cap of the
 * trace's demand (a whole GPU), so both ran twice as fast as that. */
static void test_antman_demand(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {prio_job("g", 0, 100, 1, 0), prio_job("o", 0, 60, 1, 1)};
    sim_rate_model rate = {.name = "half", .demand = half_demand};
    run_opts o = {.pol = &policy_antman, .seed = 1, .rate = &rate};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "g", F_END, "100.000000");
    CHECK_FIELD(&r, "o", F_END, "110.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* A run that starts a guaranteed and an opportunistic job leaves no block allocated
 * (fini freed past the allocation hook, so its blocks stayed counted). Creation under
 * fault injection, for every policy, is test_engine's. */
static void test_antman_alloc(void)
{
    world w;
    world_init(&w, 2, 4);
    job_spec jobs[2] = {prio_job("g", 0, 10, 2, 0), prio_job("o", 0, 10, 1, 1)};
    int64_t base = sim_alloc_live();
    run_opts o = {.pol = &policy_antman, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_done, 2);
    run_out_free(&r);
    CHECK_EQ_I64(sim_alloc_live(), base);
    world_fini(&w);
}

/* Random traces with node failures: invariants after every event (the core's), every job
 * accounted for, identical bytes for identical seeds; antman: every GPU job held half of
 * each GPU, so no GPU hosted more than two jobs. */
static void test_properties(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[600];
    for (int round = 0; round < 4; round++) {
        gsl_rng_set(rng, 900 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round * 2, round % 2 ? 4 : 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 250 + 100 * (size_t)round);
        for (size_t i = 0; i < n; i++) {
            jobs[i].priority = (int32_t)gsl_rng_uniform_int(rng, 2);
            /* Gangs of up to six one-GPU replicas, over several nodes. */
            if (jobs[i].num_gpus == 1 && gsl_rng_uniform(rng) < 0.2) {
                uint32_t reps = 2 + (uint32_t)gsl_rng_uniform_int(rng, 5);
                jobs[i].replicas = reps;
                jobs[i].num_gpus = reps;
            }
        }
        const sim_time fail[2][3] = {{0, 3000000000, 3600000000}, {1, 5000000000, 5100000000}};
        const policy_ops *pols[3] = {&policy_themis, &policy_antman, &policy_antman};
        for (int p = 0; p < 3; p++) {
            run_opts o = {.pol = pols[p],
                          .seed = 7,
                          .sample_us = 60000000,
                          .failures = fail,
                          .n_failures = 2};
            if (p == 2) {
                o.opt_key = "priority";
                o.opt_value = "random";
            }
            run_out a = run(&w, jobs, n, &o);
            run_out b = run(&w, jobs, n, &o);
            CHECK_EQ_I64(a.status, SIM_OK);
            if (a.status != SIM_OK)
                fprintf(stderr, "%s: %s\n", pols[p]->name, a.d.msg);
            CHECK_EQ_I64(a.sum.jobs_arrived, n);
            CHECK_EQ_I64(a.sum.jobs_done + a.sum.jobs_rejected + a.sum.jobs_unfinished, n);
            CHECK_EQ_I64(count_lines(a.jobs), n + 1);
            CHECK(same_jobs(&a, &b));
            CHECK(same_summary(&a, &b));
            if (pols[p] == &policy_antman) {
                antman_shapes_enable(false);
                run_out c = run(&w, jobs, n, &o);
                antman_shapes_enable(true);
                CHECK_EQ_I64(c.status, SIM_OK);
                CHECK(same_jobs(&a, &c));
                CHECK(same_summary(&a, &c));
                run_out_free(&c);
                antman_fast_fit_enable(false);
                c = run(&w, jobs, n, &o);
                antman_fast_fit_enable(true);
                CHECK_EQ_I64(c.status, SIM_OK);
                CHECK(same_jobs(&a, &c));
                CHECK(same_summary(&a, &c));
                run_out_free(&c);
                uint32_t checked = 0, bad = 0;
                for (size_t i = 0; i < n; i++) {
                    char row[1024], f[64], st[64];
                    row_of(&a, jobs[i].id, row, sizeof row);
                    field(row, F_STATUS, st, sizeof st);
                    if (!jobs[i].num_gpus || strcmp(st, "done") != 0)
                        continue;
                    checked++;
                    bad += strcmp(field(row, F_SHARE, f, sizeof f), "500") != 0;
                }
                CHECK(checked > n / 2);
                CHECK_EQ_I64(bad, 0);
                /* Only CPU-only jobs are rejected. */
                CHECK(a.sum.jobs_rejected > 0);
            } else {
                CHECK_EQ_I64(a.sum.jobs_unfinished, 0);
            }
            run_out_free(&a);
            run_out_free(&b);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

int main(void)
{
    test_themis();
    test_themis_rank();
    test_antman_half();
    test_antman_stages();
    test_antman_order();
    test_antman_gpu_mem();
    test_antman_services();
    test_antman_demand();
    test_antman_alloc();
    test_properties();
    return check_done();
}
