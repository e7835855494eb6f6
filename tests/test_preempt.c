/*
 * test_preempt.c: the preemptive priority policies (srtf, srsf, gittins, las in both
 * modes) and their shared pass (policies/preempt.c):
 *  - hand-computed schedules with exact completion times, one per policy, and one where
 *    las mode=tiresias (running jobs ahead of pending ones in a queue) and the default
 *    mode (arrival order) differ;
 *  - the Gittins index against a hand computation on a four-sample distribution;
 *  - properties on random traces (two GPU types, shares, gangs, node failures): the
 *    invariants checked after every event, every job accounted for, identical bytes for
 *    identical seeds;
 *  - admission by sums over the running jobs' treap gives the walk's schedule exactly;
 *  - themis' re-key of every job, its running jobs left to passes where not all fit,
 *    gives the schedule of re-keying them at once;
 *  - admission by GPU type tests the admitted requests together (hand-computed schedules
 *    where taking them type by type made jobs wait or be preempted).
 */
#include "policies/gittins.h"
#include "policies/preempt.h"

#include "engine_world.h"

extern const policy_ops policy_srtf, policy_srsf, policy_gittins, policy_las, policy_themis;

/* srtf on one GPU: b (30 s) preempts a (90 s left) at 10; c (50 s) waits for b, then
 * goes before a (90 s): b 10..40, c 40..90, a 90..180. */
static void test_srtf(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[3] = {job("a", 0, 100, 1, 1000), job("b", 10, 30, 1, 1000),
                        job("c", 20, 50, 1, 1000)};
    run_opts o = {.pol = &policy_srtf, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_END, "40.000000");
    CHECK_FIELD(&r, "c", F_START, "40.000000");
    CHECK_FIELD(&r, "c", F_END, "90.000000");
    CHECK_FIELD(&r, "a", F_END, "180.000000");
    CHECK_FIELD(&r, "a", F_JCT, "180.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "1");
    CHECK_FIELD(&r, "a", F_LOST, "0.000000");
    CHECK_EQ_I64(r.sum.jobs_done, 3);
    run_out_free(&r);
    /* Without checkpoints a loses its 10 s: 100 s left at 90, it ends at 190. */
    o.opt_key = "checkpoint";
    o.opt_value = "false";
    r = run(&w, jobs, 3, &o);
    CHECK_FIELD(&r, "a", F_END, "190.000000");
    CHECK_FIELD(&r, "a", F_LOST, "10.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* Two GPUs: a (2 GPUs, 100 s) and b (1 GPU, 95 s, at 10). srtf keeps a (90 s left <
 * 95): a ends at 100, b runs 100..195. srsf weighs by GPUs: a's 180 GPU-s left exceed
 * b's 95, so b runs 10..105 and a, which no longer fits beside it, waits: 105..195. */
static void test_srsf(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[2] = {job("a", 0, 100, 2, 1000), job("b", 10, 95, 1, 1000)};
    run_opts o = {.pol = &policy_srtf, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    CHECK_FIELD(&r, "b", F_START, "100.000000");
    CHECK_FIELD(&r, "b", F_END, "195.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "0");
    run_out_free(&r);
    o.pol = &policy_srsf;
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "10.000000");
    CHECK_FIELD(&r, "b", F_END, "105.000000");
    CHECK_FIELD(&r, "a", F_END, "195.000000");
    CHECK_FIELD(&r, "a", F_JCT, "195.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "1");
    run_out_free(&r);
    world_fini(&w);
}

/* Samples 10, 20, 30, 40 GPU-s, delta 15, by hand (the reference's formula):
 *  at 9:  i0 = 0, i1 = first > 24 = 2, P = 2/4, E = (10 + 20 + 15 x 2) / 4 = 15;
 *  at 19: i0 = 1, i1 = first > 34 = 3, P = 2/3, E = (20 + 30 + 15) / 3 = 65/3;
 *  at 29: i0 = 2, 44 > 39 so i1 = m - 1 = 3, P = 1/2, E = (30 + 15) / 2 = 22.5;
 *  at 39: i0 = 3 = i1, P = 0; past 39: 0. */
static void test_gittins_index(void)
{
    const double data[4] = {10, 20, 30, 40}, sum[5] = {0, 10, 30, 60, 100};
    CHECK_NEAR(policy_gittins_index(data, sum, 4, 15, 9), 0.5e6 / 15, 1e-12);
    /* At 0 itself: i0 = 0, i1 = first > 15 = 1, P = 1/4, E = (10 + 15 x 3) / 4. */
    CHECK_NEAR(policy_gittins_index(data, sum, 4, 15, 0), 0.25e6 / 13.75, 1e-12);
    CHECK_NEAR(policy_gittins_index(data, sum, 4, 15, 19), 2e6 / 65, 1e-12);
    CHECK_NEAR(policy_gittins_index(data, sum, 4, 15, 29), 0.5e6 / 22.5, 1e-12);
    CHECK_EQ_I64((int64_t)policy_gittins_index(data, sum, 4, 15, 39), 0);
    CHECK_EQ_I64((int64_t)policy_gittins_index(data, sum, 4, 15, 39.5), 0);
    CHECK_EQ_I64((int64_t)policy_gittins_index(data, sum, 0, 15, 1), 0);
}

/* gittins on one GPU, delta 5: a (100 s) runs alone; b (20 s) arrives at 10 and the
 * table is rebuilt from {20, 100}: g = 0.5e6 / ((20 + 5) / 2) below 20 GPU-s, 0 from 20
 * on. a and b tie at 10 (a first, by arrival); at 20 a's service reaches the sample 20,
 * its index falls to 0, and b runs 20..40; a resumes 40..120. With the default delta
 * (3250) a's next quantum lies beyond its end: it is never re-keyed, and b waits. */
static void test_gittins(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 100, 1, 1000), job("b", 10, 20, 1, 1000)};
    run_opts o = {.pol = &policy_gittins, .seed = 1, .opt_key = "delta", .opt_value = "5"};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "20.000000");
    CHECK_FIELD(&r, "b", F_END, "40.000000");
    CHECK_FIELD(&r, "a", F_END, "120.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "1");
    run_out_free(&r);
    o.opt_key = NULL;
    r = run(&w, jobs, 2, &o);
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    CHECK_FIELD(&r, "b", F_END, "120.000000");
    run_out_free(&r);
    o.opt_key = "delta";
    o.opt_value = "0";
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EINVAL);
    run_out_free(&r);
    world_fini(&w);
}

/* gittins, 3 GPUs, delta 300, three 3-GPU jobs: C (328.179657 s) then A and B (5000 s).
 * Samples 984.538971, 15000, 15000 GPU-s: A's index is 631.1 below 984.538971 GPU-s and
 * 65.4 from there, B's 631.1. A starts at 328.179657 and reaches the sample at
 * 656.359314 (plus the microseconds of rounding: 656.359315 as the engine counts), where
 * B takes over, not at A's next multiple of delta (1200 GPU-s, 728.179657 s). The sample
 * time computed from the service is one microsecond short here: the service read then is
 * just below the sample, and the key would keep the old index. */
static void test_gittins_sample_point(void)
{
    world w;
    world_init(&w, 1, 3);
    job_spec jobs[3] = {job("C", 0, 328.179657, 3, 1000), job("A", 0, 5000, 3, 1000),
                        job("B", 0, 5000, 3, 1000)};
    run_opts o = {.pol = &policy_gittins, .seed = 1, .opt_key = "delta", .opt_value = "300"};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "A", F_START, "328.179657");
    CHECK_FIELD(&r, "B", F_START, "656.359315");
    CHECK_FIELD(&r, "A", F_PREEMPT, "1");
    run_out_free(&r);
    world_fini(&w);
}

/* Two GPUs, one queue in reach (thresholds far away). x (1 GPU, 50 s) runs; p (2 GPUs,
 * 10 s, at 1) does not fit beside it; r (1 GPU, 100 s, at 2) does and runs. When x ends
 * at 50, the default mode goes by arrival: p first, so r is preempted (48 s done), p
 * runs 50..60 and r 60..112. mode=tiresias keeps the running r ahead of the pending p in
 * the queue: r goes on to 102, and p runs 102..112. */
static void test_las_tiresias(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[3] = {job("x", 0, 50, 1, 1000), job("p", 1, 10, 2, 1000),
                        job("r", 2, 100, 1, 1000)};
    run_opts o = {.pol = &policy_las, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "p", F_START, "50.000000");
    CHECK_FIELD(&r, "p", F_END, "60.000000");
    CHECK_FIELD(&r, "r", F_END, "112.000000");
    CHECK_FIELD(&r, "r", F_PREEMPT, "1");
    run_out_free(&r);
    o.opt_key = "mode";
    o.opt_value = "tiresias";
    r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "r", F_END, "102.000000");
    CHECK_FIELD(&r, "r", F_PREEMPT, "0");
    CHECK_FIELD(&r, "p", F_START, "102.000000");
    CHECK_FIELD(&r, "p", F_END, "112.000000");
    CHECK_FIELD(&r, "p", F_JCT, "111.000000");
    run_out_free(&r);
    /* The thresholds still split the queues: with one at 50 GPU-s the test of
     * test_engine's las gives the same schedule in both modes (b at 40 waits for a to
     * cross 50, then runs 50..80). */
    world_fini(&w);
    world_init(&w, 1, 1);
    job_spec two[2] = {job("a", 0, 200, 1, 1000), job("b", 40, 30, 1, 1000)};
    o.opt_key2 = "thresholds";
    o.opt_value2 = "50";
    r = run(&w, two, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "50.000000");
    CHECK_FIELD(&r, "b", F_END, "80.000000");
    CHECK_FIELD(&r, "a", F_END, "230.000000");
    run_out_free(&r);
    o.opt_value = "fast";
    r = run(&w, two, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EINVAL);
    run_out_free(&r);
    world_fini(&w);
}

/* mode=tiresias, threshold 10 GPU-s, starve=1, one GPU: a (30 s) runs 0..10 (b, 100 s,
 * arrived at 5, waits behind it in queue 0) and drops to queue 1; b runs 10..20 and drops
 * behind a; a has waited 10 s after running 10 s, so it returns to queue 0 and runs
 * 20..30, drops again, and b, which has waited 10 s after running 10 s, returns and runs
 * 30..40; a returns and ends at 50; b returns at 50 and runs its last 80 s alone. */
static void test_las_tiresias_starve(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 30, 1, 1000), job("b", 5, 100, 1, 1000)};
    run_opts o = {.pol = &policy_las,
                  .seed = 1,
                  .opt_key = "mode",
                  .opt_value = "tiresias",
                  .opt_key2 = "thresholds",
                  .opt_value2 = "10"};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    /* Without the guard: a 0..10, 20..40; b 10..20, 40..130. */
    CHECK_FIELD(&r, "a", F_END, "40.000000");
    CHECK_FIELD(&r, "b", F_END, "130.000000");
    CHECK_FIELD(&r, "b", F_PREEMPT, "1");
    run_out_free(&r);
    o.opt_key3 = "starve";
    o.opt_value3 = "1";
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_END, "50.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "2");
    CHECK_FIELD(&r, "b", F_END, "130.000000");
    CHECK_FIELD(&r, "b", F_PREEMPT, "2");
    run_out_free(&r);
    world_fini(&w);
}

/* Default mode, threshold 10.0000005 GPU-s (crossed at the first microsecond past it),
 * starve=1.5, one GPU: a (30 s) runs 0..10.000001 and drops to queue 1; b (100 s, at 5)
 * runs until it drops too, at 20.000002, where a, first by arrival, takes the GPU. b has
 * run 10,000,001 us, so it may wait 15,000,001.5 us: at 35.000004 it returns to the
 * first queue and runs ahead of a until 45.000005; a ends at 50.000003, b at 130.000001.
 * The limit's half microsecond once made its due time fall at the moment of promotion,
 * and the run re-keyed b forever. */
static void test_las_starve_fraction(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 30, 1, 1000), job("b", 5, 100, 1, 1000)};
    run_opts o = {.pol = &policy_las,
                  .seed = 1,
                  .opt_key = "thresholds",
                  .opt_value = "10.0000005",
                  .opt_key2 = "starve",
                  .opt_value2 = "1.5"};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_END, "50.000003");
    CHECK_FIELD(&r, "a", F_PREEMPT, "2");
    CHECK_FIELD(&r, "b", F_END, "130.000001");
    CHECK_FIELD(&r, "b", F_PREEMPT, "2");
    run_out_free(&r);
    o.opt_value2 = "0"; /* without the guard a runs on from 20.000002 and ends at 40.000002 */
    r = run(&w, jobs, 2, &o);
    CHECK_FIELD(&r, "a", F_END, "40.000002");
    CHECK_FIELD(&r, "b", F_PREEMPT, "1");
    run_out_free(&r);
    world_fini(&w);
}

/* The thresholds of mode=tiresias default to the references' 3250,7200: a (4000 s) runs
 * ahead of b (50 s, at 100) in the first queue until it has 3250 GPU-s; b runs
 * 3250..3300 and a ends at 4050. The default mode's first threshold is 3600. */
static void test_las_tiresias_thresholds(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 4000, 1, 1000), job("b", 100, 50, 1, 1000)};
    run_opts o = {.pol = &policy_las, .seed = 1, .opt_key = "mode", .opt_value = "tiresias"};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "3250.000000");
    CHECK_FIELD(&r, "b", F_END, "3300.000000");
    CHECK_FIELD(&r, "a", F_END, "4050.000000");
    run_out_free(&r);
    o.opt_key = NULL;
    r = run(&w, jobs, 2, &o);
    CHECK_FIELD(&r, "b", F_START, "3600.000000");
    CHECK_FIELD(&r, "a", F_END, "4050.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* mode=tiresias with one threshold at 10 GPU-s on one GPU: a (100 s) runs 0..10 and
 * drops to queue 1 as b (100 s) arrives; b runs 10..20 and drops behind a, in queue 1's
 * tail, as c (5 s) arrives; c runs 20..25; then a, first in queue 1, runs 25..115 and b
 * 115..205. */
static void test_las_queues(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[3] = {job("a", 0, 100, 1, 1000), job("b", 10, 100, 1, 1000),
                        job("c", 20, 5, 1, 1000)};
    run_opts o = {.pol = &policy_las,
                  .seed = 1,
                  .opt_key = "mode",
                  .opt_value = "tiresias",
                  .opt_key2 = "thresholds",
                  .opt_value2 = "10"};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "c", F_START, "20.000000");
    CHECK_FIELD(&r, "c", F_END, "25.000000");
    CHECK_FIELD(&r, "a", F_END, "115.000000");
    CHECK_FIELD(&r, "b", F_END, "205.000000");
    run_out_free(&r);
    world_fini(&w);
}

typedef struct variant {
    const policy_ops *pol;
    const char *key, *value;
} variant;

static void test_properties(void)
{
    const variant vs[] = {
        {&policy_srtf, NULL, NULL},
        {&policy_srsf, NULL, NULL},
        {&policy_gittins, NULL, NULL},
        {&policy_gittins, "delta", "30"},
        {&policy_las, NULL, NULL},
        {&policy_las, "mode", "tiresias"},
        {&policy_srtf, "checkpoint", "false"},
    };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[600];
    for (int round = 0; round < 4; round++) {
        gsl_rng_set(rng, 500 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round * 2, round % 2 ? 4 : 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 250 + 100 * (size_t)round);
        const sim_time fail[2][3] = {{0, 3000000000, 3600000000}, {1, 5000000000, 5100000000}};
        for (size_t p = 0; p < sizeof vs / sizeof vs[0]; p++) {
            run_opts o = {.pol = vs[p].pol,
                          .seed = 7,
                          .sample_us = 60000000,
                          .opt_key = vs[p].key,
                          .opt_value = vs[p].value,
                          .failures = fail,
                          .n_failures = 2};
            if (vs[p].pol == &policy_las && round % 2) {
                o.opt_key2 = "starve";
                o.opt_value2 = round == 1 ? "2" : "1.37"; /* a whole and a fractional limit */
            }
            run_out a = run(&w, jobs, n, &o);
            run_out b = run(&w, jobs, n, &o);
            CHECK_EQ_I64(a.status, SIM_OK);
            if (a.status != SIM_OK)
                fprintf(stderr, "%s: %s\n", vs[p].pol->name, a.d.msg);
            CHECK_EQ_I64(a.sum.jobs_arrived, n);
            CHECK_EQ_I64(a.sum.jobs_done + a.sum.jobs_rejected + a.sum.jobs_unfinished, n);
            CHECK_EQ_I64(a.sum.jobs_unfinished, 0);
            CHECK_EQ_I64(count_lines(a.jobs), n + 1);
            CHECK(same_jobs(&a, &b));
            CHECK(same_summary(&a, &b));
            if (!same_summary(&a, &b))
                fprintf(stderr, "%s %s: summaries differ\n%s\n%s\n", vs[p].pol->name,
                        vs[p].value ? vs[p].value : "", a.summary, b.summary);
            run_out_free(&a);
            run_out_free(&b);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

/* Speeds that differ by job (so srtf and srsf file running jobs in several lanes) and
 * change with a GPU's other residents (so the engine's speed log moves them between
 * lanes while they run); with fractional durations, keys tie only by chance. */
static double eq_throughput(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    (void)t;
    return 0.5 + 0.25 * (double)(j->num_gpus % 4);
}

/* Speeds of 64 values, by job: more drifts at once than preempt.h's lanes. */
/* One of 2^bits speeds from 0.5 on, by the job's arrival, dyadic so that lane keys stay
 * exact. */
static double speed_by_arrival(const job_spec *j, unsigned bits)
{
    uint64_t h = j->submit_us * UINT64_C(0x9e3779b97f4a7c15);
    return 0.5 + (double)(h >> (64 - bits)) / (double)(UINT64_C(1) << bits);
}

static double eq_many_speeds(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    (void)t;
    return speed_by_arrival(j, 6);
}

/* Run o with a shortcut on (the default) and off (enable(false)), and check that both ran
 * and gave the same jobs.csv and summary (what: named in a message when not). Returns the
 * run with the shortcut, for the caller to free. */
static run_out ways_agree(world *w, const job_spec *jobs, size_t n, const run_opts *o,
                          void (*enable)(bool), const char *what)
{
    run_out a = run(w, jobs, n, o);
    enable(false);
    run_out b = run(w, jobs, n, o);
    enable(true);
    CHECK_EQ_I64(a.status, SIM_OK);
    CHECK_EQ_I64(b.status, SIM_OK);
    CHECK(same_jobs(&a, &b));
    CHECK(same_summary(&a, &b));
    if (!same_jobs(&a, &b))
        fprintf(stderr, "%s: the two ways differ\n", what);
    run_out_free(&b);
    return a;
}

/* The admission by sums against the walk over every running job (ways_agree). */
static run_out admissions_agree(world *w, const job_spec *jobs, size_t n, const run_opts *o,
                                const char *what)
{
    return ways_agree(w, jobs, n, o, preempt_fast_enable, what);
}

/* srtf and srsf under options o (its policy set here) both ways (admissions_agree): each
 * must preempt more than min_pre times and, where one_lane_runs >= 0, fall back to the
 * one lane that many times over its two runs. */
static void srtf_srsf_agree(world *w, const job_spec *jobs, size_t n, run_opts o, uint64_t min_pre,
                            int64_t one_lane_runs)
{
    const policy_ops *pols[2] = {&policy_srtf, &policy_srsf};
    for (int p = 0; p < 2; p++) {
        uint64_t ran = preempt_one_lane_runs();
        o.pol = pols[p];
        run_out a = admissions_agree(w, jobs, n, &o, pols[p]->name);
        CHECK(a.sum.preemptions > min_pre);
        if (one_lane_runs >= 0)
            CHECK_EQ_I64((int64_t)(preempt_one_lane_runs() - ran), one_lane_runs);
        run_out_free(&a);
    }
}

/* A job restarting under a restart penalty has more work left than when it waited, so
 * its key (srtf: the work left; srsf: times its GPUs) rises as it starts. With more
 * drifts than lanes (every running job in one lane, keys as last read, which only fall
 * while jobs run), the key it is filed with must be read after the penalty: admission
 * by sums then gives the walk's schedule. 3 nodes of 4 GPUs, two node failures, speeds
 * that differ by job. */
static void test_fast_restart_penalty(void)
{
    sim_rate_model many = {
        .name = "many", .throughput = eq_many_speeds, .interference = world_shared_slowdown};
    static job_spec jobs[200];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 900399);
    world w;
    world_init(&w, 3, 4);
    size_t n = random_trace(rng, jobs, 200);
    for (size_t i = 0; i < n; i++) {
        jobs[i].gpu_type_mask = 0;
        jobs[i].work_s += gsl_rng_uniform_pos(rng);
    }
    const sim_time fail[2][3] = {{1, 3147000000, 3884000000}, {2, 1933000000, 2853000000}};
    srtf_srsf_agree(
        &w, jobs, n,
        (run_opts){
            .seed = 222, .rate = &many, .restart_penalty_s = 30, .failures = fail, .n_failures = 2},
        0, -1);
    world_fini(&w);
    gsl_rng_free(rng);
}

static double eq_128_speeds(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    (void)t;
    return speed_by_arrival(j, 7);
}

/* Far more lanes than 64 at once (a set of lanes is more than one machine word): 32
 * nodes of 8 GPUs, a job every 2 s of 300 to 3,000 s, 128 speeds. Admission by the
 * lanes' sums gives the walk's schedule under srtf and srsf, and no job goes to the one
 * lane. */
static void test_many_lanes(void)
{
    sim_rate_model m128 = {
        .name = "m128", .throughput = eq_128_speeds, .interference = world_shared_slowdown};
    static job_spec jobs[1500];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 4242);
    world w;
    world_init(&w, 32, 8);
    size_t n = random_trace(rng, jobs, 1500);
    for (size_t i = 0; i < n; i++) {
        jobs[i].gpu_type_mask = 0;
        jobs[i].submit_us = (sim_time)i * 2000000;
        jobs[i].work_s = 300 + 2700 * gsl_rng_uniform(rng);
    }
    srtf_srsf_agree(&w, jobs, n, (run_opts){.seed = 5, .rate = &m128}, 100, 0);
    world_fini(&w);
    gsl_rng_free(rng);
}

/* Where every job accepts every GPU type, admission by sums over the treaps gives the
 * schedule of the walk over every running job (its keys read afresh), byte for byte;
 * with speeds that differ and change too (rounds 4 and 5: lanes, also without the
 * engine's speed log, every running job filed again at each pass; rounds 6 and 7: 64
 * drifts in as many lanes, and more drifts than lanes, where a pass moves the running
 * jobs whose keys passed others'). */
static void test_fast_equivalence(void)
{
    sim_rate_model rm = {
        .name = "test", .throughput = eq_throughput, .interference = world_shared_slowdown};
    sim_rate_model many = {
        .name = "many", .throughput = eq_many_speeds, .interference = world_shared_slowdown};
    const variant vs[] = {
        {&policy_las, NULL, NULL},     {&policy_las, "mode", "tiresias"},
        {&policy_gittins, NULL, NULL}, {&policy_gittins, "delta", "30"},
        {&policy_srtf, NULL, NULL},    {&policy_srsf, NULL, NULL},
    };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[900];
    /* Each class's first jobs are checked against its heap at every pass. */
    preempt_first_check_enable(true);
    uint64_t checked = preempt_first_checked(), errors = preempt_first_errors();
    uint64_t lane_errors = preempt_lane_errors();
    uint64_t moves = preempt_one_lane_moves();
    for (int round = 0; round < 8; round++) {
        gsl_rng_set(rng, 900 + (unsigned long)round);
        world w;
        world_init(&w, 2 + (uint32_t)round % 4, round % 2 ? 4 : 8);
        size_t n = random_trace(rng, jobs, 500 + 120 * (size_t)(round % 4));
        for (size_t i = 0; i < n; i++) {
            jobs[i].gpu_type_mask = 0;
            /* Under speeds that change, keys tie only by chance: no whole durations. */
            if (round >= 4)
                jobs[i].work_s += gsl_rng_uniform_pos(rng);
        }
        /* Rounds 6 and 7 give the running jobs 64 drifts: each in a lane of its own, and
         * in one lane where only 16 lanes are allowed. */
        for (size_t p = 0; p < sizeof vs / sizeof vs[0] * (round >= 6 ? 2 : 1); p++) {
            size_t vi = p % (sizeof vs / sizeof vs[0]);
            bool one_lane = p >= sizeof vs / sizeof vs[0];
            preempt_rate_lanes_set(one_lane ? 16 : 0);
            run_opts o = {.pol = vs[vi].pol,
                          .seed = 3,
                          .opt_key = vs[vi].key,
                          .opt_value = vs[vi].value,
                          .rate = round >= 6   ? &many
                                  : round >= 4 ? &rm
                                               : NULL};
            if (round % 2 && round >= 3) {
                o.opt_key2 = "checkpoint";
                o.opt_value2 = "false";
            }
            char what[80];
            snprintf(what, sizeof what, "round %d, %s %s%s", round, vs[vi].pol->name,
                     vs[vi].value ? vs[vi].value : "", one_lane ? ", one lane" : "");
            uint64_t ran = preempt_one_lane_runs();
            run_out a = admissions_agree(&w, jobs, n, &o, what);
            CHECK_EQ_I64(a.sum.jobs_unfinished, 0);
            /* srtf's and srsf's 64 drifts have their lanes, unless only 16 are allowed
             * (then both runs of admissions_agree take the one lane). */
            bool drifts = vs[vi].pol == &policy_srtf || vs[vi].pol == &policy_srsf;
            if (round >= 6)
                CHECK_EQ_I64((int64_t)(preempt_one_lane_runs() - ran),
                             (one_lane && drifts ? 2 : 0));
            if (round == 4 || round == 5) {
                preempt_speed_log_enable(false);
                run_out c = run(&w, jobs, n, &o);
                preempt_speed_log_enable(true);
                CHECK(same_jobs(&a, &c));
                run_out_free(&c);
            }
            run_out_free(&a);
        }
        preempt_rate_lanes_set(0);
        world_fini(&w);
    }
    preempt_first_check_enable(false);
    /* Rounds 6 and 7 re-key the one lane with jobs moving in its treap. */
    CHECK(preempt_one_lane_moves() > moves + 200);
    CHECK(preempt_first_checked() > checked + 10000);
    CHECK_EQ_I64((int64_t)(preempt_first_errors() - errors), 0);
    CHECK_EQ_I64((int64_t)(preempt_lane_errors() - lane_errors), 0);
    gsl_rng_free(rng);
}

/* A pass that would decide nothing is skipped (preempt_settled_enable), after passes
 * that started or preempted jobs too, and whichever way the running jobs' keys moved:
 * the same schedule as making every pass, on random traces with node failures, typed
 * requests, starvation limits, thresholds crossed often and gittins' indices. */
static void test_settled_equivalence(void)
{
    const variant vs[] = {
        {&policy_las, NULL, NULL},          {&policy_las, "starve", "1.37"},
        {&policy_las, "thresholds", "40,400"}, {&policy_gittins, NULL, NULL},
        {&policy_gittins, "delta", "30"},
    };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[900];
    uint64_t skips = preempt_settled_skips();
    for (int round = 0; round < 6; round++) {
        gsl_rng_set(rng, 1300 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round, round % 2 ? 4 : 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 400 + 100 * (size_t)(round % 3));
        if (round < 4) /* typed requests only in the last rounds */
            for (size_t i = 0; i < n; i++)
                jobs[i].gpu_type_mask = 0;
        const sim_time fail[2][3] = {{0, 2000000000, 2600000000}, {1, 4000000000, 4100000000}};
        for (size_t p = 0; p < sizeof vs / sizeof vs[0]; p++) {
            run_opts o = {.pol = vs[p].pol,
                          .seed = 5,
                          .opt_key = vs[p].key,
                          .opt_value = vs[p].value,
                          .failures = round % 2 ? fail : NULL,
                          .n_failures = round % 2 ? 2 : 0};
            char what[80];
            snprintf(what, sizeof what, "settled passes skipped, round %d, %s %s", round,
                     vs[p].pol->name, vs[p].value ? vs[p].value : "");
            run_out a = ways_agree(&w, jobs, n, &o, preempt_settled_enable, what);
            run_out_free(&a);
        }
        world_fini(&w);
    }
    /* Not vacuous: passes were skipped. */
    CHECK(preempt_settled_skips() > skips + 100);
    gsl_rng_free(rng);
}

/* themis re-keys every job at every pass; where admission counts free GPUs, the running
 * jobs are re-keyed only by passes where not every job fits. Random traces with node
 * failures, on clusters from 3 to 6 nodes (so both kinds of pass occur), both ways: the
 * same jobs.csv and summary. */
static void test_lazy_rekey_equivalence(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[800];
    uint64_t left = preempt_rekeys_left(), late = preempt_rekeys_late();
    for (int round = 0; round < 8; round++) {
        gsl_rng_set(rng, 2700 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round % 4, round % 2 ? 4 : 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 300 + 60 * (size_t)(round % 5));
        const sim_time fail[2][3] = {{0, 2000000000, 2600000000}, {1, 4000000000, 4100000000}};
        run_opts o = {.pol = &policy_themis,
                      .seed = 7,
                      .opt_key = round % 4 == 3 ? "checkpoint" : NULL,
                      .opt_value = round % 4 == 3 ? "false" : NULL,
                      .failures = round % 2 ? fail : NULL,
                      .n_failures = round % 2 ? 2 : 0};
        char what[80];
        snprintf(what, sizeof what, "running jobs' re-key left to the pass, round %d", round);
        run_out a = ways_agree(&w, jobs, n, &o, preempt_lazy_rekey_enable, what);
        CHECK(a.sum.preemptions > 0);
        run_out_free(&a);
        world_fini(&w);
    }
    /* Not vacuous: re-keys were left to passes, and both kinds of pass occurred. */
    uint64_t n_left = preempt_rekeys_left() - left, n_late = preempt_rekeys_late() - late;
    CHECK(n_late > 100);
    CHECK(n_left > n_late + 100);
    gsl_rng_free(rng);
}

/* A job finishing at the moment a node comes back: the pass admits afresh (the finish
 * alone would change no admission, the capacity does). Two nodes of 4 GPUs, n1 down
 * from 0.5 s to 100 s; a (1 GPU, 100 s) and c (3 GPUs, 1000 s) fill n0; b (4 GPUs)
 * waits from 1 s, 4 GPUs short. At 100 a ends and n1 is back: b fits the 8 GPUs beside
 * c and starts on n1 then, not when c ends. */
static void test_finish_with_node_back(void)
{
    world w;
    world_init(&w, 2, 4);
    job_spec jobs[3] = {job("a", 0, 100, 1, 1000), job("c", 0, 1000, 3, 1000),
                        job("b", 1, 50, 4, 1000)};
    const sim_time fail[1][3] = {{1, 500000, 100000000}};
    run_opts o = {.pol = &policy_las, .seed = 1, .failures = fail, .n_failures = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    CHECK_FIELD(&r, "b", F_START, "100.000000");
    CHECK_FIELD(&r, "b", F_END, "150.000000");
    CHECK_FIELD(&r, "c", F_END, "1000.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* GPU types A (1), B (2) and, where a test adds it, C (3): a job's mask has bit t for
 * each type t it accepts. */
#define TYPE_A (UINT64_C(1) << 1)
#define TYPE_B (UINT64_C(1) << 2)
#define TYPE_C (UINT64_C(1) << 3)

static job_spec typed_job(const char *id, double submit_s, double work_s, uint32_t gpus,
                          uint64_t mask)
{
    job_spec j = job(id, submit_s, work_s, gpus, 1000);
    j.gpu_type_mask = mask;
    return j;
}

/* Admission by GPU type tests the requests together. n0: 2 GPUs of type A, n1: 2 of B.
 * j0 (1 GPU, B only) runs from 0 on n1; j1 (1 GPU, any type) comes at 1 and joins it on
 * n1; j2 (2 GPUs, A only) comes at 2: the three fit together (j1 on B), so j2 starts at
 * once on n0 and ends at 102 under las (arrival order within a queue: j2 is weighed
 * last) and gittins alike. Taking j1's request from type A first (the lowest type id)
 * left j2 waiting 999 s for j1 to end. */
static void test_typed_admission_wait(void)
{
    world w;
    world_init(&w, 2, 2);
    w.nodes[1].gpu_type = 2;
    job_spec jobs[3] = {typed_job("j0", 0, 1000, 1, TYPE_B), typed_job("j1", 1, 1000, 1, 0),
                        typed_job("j2", 2, 100, 2, TYPE_A)};
    const policy_ops *pols[2] = {&policy_las, &policy_gittins};
    for (int p = 0; p < 2; p++) {
        run_opts o = {.pol = pols[p], .seed = 1};
        run_out r = run(&w, jobs, 3, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_FIELD(&r, "j0", F_END, "1000.000000");
        CHECK_FIELD(&r, "j1", F_START, "1.000000");
        CHECK_FIELD(&r, "j1", F_NODE, "n1");
        CHECK_FIELD(&r, "j2", F_START, "2.000000");
        CHECK_FIELD(&r, "j2", F_END, "102.000000");
        CHECK_FIELD(&r, "j2", F_NODE, "n0");
        CHECK_EQ_I64(r.sum.jobs_done, 3);
        run_out_free(&r);
    }
    world_fini(&w);
}

/* n0: 2 GPUs of type A, n1: 2 of B. j2 (2 GPUs, A only, 1000 s) runs on n0 from 0; j1
 * (2 GPUs, any type, 100 s) comes at 10 and goes first under srtf and srsf: it fits n1
 * beside j2, so nothing is preempted: j1 runs 10..110, j2 ends at 1000. Counting j1
 * against type A preempted j2 for 100 s (it ended at 1100). */
static void test_typed_admission_preempt(void)
{
    world w;
    world_init(&w, 2, 2);
    w.nodes[1].gpu_type = 2;
    job_spec jobs[2] = {typed_job("j2", 0, 1000, 2, TYPE_A), typed_job("j1", 10, 100, 2, 0)};
    const policy_ops *pols[2] = {&policy_srtf, &policy_srsf};
    for (int p = 0; p < 2; p++) {
        run_opts o = {.pol = pols[p], .seed = 1};
        run_out r = run(&w, jobs, 2, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_FIELD(&r, "j1", F_START, "10.000000");
        CHECK_FIELD(&r, "j1", F_END, "110.000000");
        CHECK_FIELD(&r, "j1", F_NODE, "n1");
        CHECK_FIELD(&r, "j2", F_END, "1000.000000");
        CHECK_FIELD(&r, "j2", F_PREEMPT, "0");
        run_out_free(&r);
    }
    world_fini(&w);
}

/* Three types, nested masks: n0 has 2 GPUs of type C, n1 2 of B, n2 2 of A. Under las
 * (arrival order): x (2 GPUs, any type) runs on n0 from 0, y (2 GPUs, A or B) on n1
 * from 1; z (2 GPUs, A only, 100 s) at 2 fits with them (x on C, y on B) and runs on n2
 * 2..102; w (1 GPU, A or B, 50 s) at 3 does not: y, z and w ask 5 GPUs of A and B,
 * which have 4. It waits, preempting nothing, until z ends: 102..152 on n2. Taking requests
 * type by type (A first) counted x against A and y against B, so z waited for them
 * until 1050. */
static void test_typed_admission_nested(void)
{
    world w;
    world_init(&w, 3, 2);
    sim_intern_add(w.types, "C", 1, 0);
    w.type_mem[3] = 16384;
    w.nodes[0].gpu_type = 3;
    w.nodes[1].gpu_type = 2;
    w.nodes[2].gpu_type = 1;
    job_spec jobs[4] = {typed_job("x", 0, 1000, 2, 0), typed_job("y", 1, 1000, 2, TYPE_A | TYPE_B),
                        typed_job("z", 2, 100, 2, TYPE_A),
                        typed_job("w", 3, 50, 1, TYPE_A | TYPE_B)};
    run_opts o = {.pol = &policy_las, .seed = 1};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "x", F_NODE, "n0");
    CHECK_FIELD(&r, "x", F_END, "1000.000000");
    CHECK_FIELD(&r, "y", F_NODE, "n1");
    CHECK_FIELD(&r, "y", F_END, "1001.000000");
    CHECK_FIELD(&r, "z", F_START, "2.000000");
    CHECK_FIELD(&r, "z", F_END, "102.000000");
    CHECK_FIELD(&r, "w", F_START, "102.000000");
    CHECK_FIELD(&r, "w", F_END, "152.000000");
    CHECK_FIELD(&r, "w", F_NODE, "n2");
    for (int i = 0; i < 4; i++)
        CHECK_FIELD(&r, jobs[i].id, F_PREEMPT, "0");
    CHECK_EQ_I64(r.sum.jobs_done, 4);
    run_out_free(&r);
    world_fini(&w);
}

/* Where jobs are tied to GPU types, admission by the treaps' sums (running jobs filed by
 * the types they accept, Hall's condition over their sums) gives the schedule of the walk
 * over every running job, byte for byte: three types, masks of one, two or every type,
 * node failures, restarts without checkpoints, and speeds that differ by job (so srtf's
 * and srsf's lanes are of one drift and one mask; in the last rounds also with at most 8
 * such lanes, fewer than they need, so that some jobs go to lanes of mixed types and the
 * passes walk). The passes so decided are counted: the test is not vacuous. */
static void test_typed_sums_equivalence(void)
{
    sim_rate_model rm = {
        .name = "test", .throughput = eq_throughput, .interference = world_shared_slowdown};
    sim_rate_model many = {
        .name = "many", .throughput = eq_many_speeds, .interference = world_shared_slowdown};
    const variant vs[] = {
        {&policy_las, NULL, NULL},  {&policy_gittins, NULL, NULL}, {&policy_gittins, "delta", "30"},
        {&policy_srtf, NULL, NULL}, {&policy_srsf, NULL, NULL},
    };
    const uint64_t masks[6] = {0, TYPE_A, TYPE_B, TYPE_C, TYPE_A | TYPE_B, TYPE_B | TYPE_C};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[900];
    uint64_t fast = preempt_hall_fast_passes(), mixed = preempt_mixed_passes();
    uint64_t preempted = 0;
    for (int round = 0; round < 8; round++) {
        gsl_rng_set(rng, 4400 + (unsigned long)round);
        world w;
        world_init(&w, 4 + (uint32_t)round % 3, round % 2 ? 4 : 8);
        sim_intern_add(w.types, "C", 1, 0);
        w.type_mem[3] = 16384;
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 3);
        size_t n = random_trace(rng, jobs, 500 + 100 * (size_t)(round % 3));
        for (size_t i = 0; i < n; i++) {
            jobs[i].gpu_type_mask = masks[gsl_rng_uniform_int(rng, 6)];
            if (round >= 2) /* under speeds that change, keys tie only by chance */
                jobs[i].work_s += gsl_rng_uniform_pos(rng);
        }
        const sim_time fail[2][3] = {{0, 2000000000, 2600000000}, {2, 4000000000, 4100000000}};
        for (size_t p = 0; p < sizeof vs / sizeof vs[0]; p++) {
            run_opts o = {.pol = vs[p].pol,
                          .seed = 9,
                          .opt_key = vs[p].key,
                          .opt_value = vs[p].value,
                          .rate = round >= 4   ? &many
                                  : round >= 2 ? &rm
                                               : NULL,
                          .failures = round % 2 ? fail : NULL,
                          .n_failures = round % 2 ? 2 : 0};
            preempt_mask_lanes_set(round >= 6 ? 8 : 0);
            if (round == 3) {
                o.opt_key2 = "checkpoint";
                o.opt_value2 = "false";
            }
            char what[80];
            snprintf(what, sizeof what, "typed, round %d, %s %s", round, vs[p].pol->name,
                     vs[p].value ? vs[p].value : "");
            run_out a = admissions_agree(&w, jobs, n, &o, what);
            CHECK_EQ_I64(a.sum.jobs_unfinished, 0);
            preempted += a.sum.preemptions;
            if (round >= 6) {
                /* Every running job filed again at every pass (as when the speed log
                 * wraps) from lanes of mixed types: the same schedule, and the count of
                 * jobs in mixed lanes starts again from none. */
                uint64_t lane_err = preempt_lane_errors(), checked = preempt_first_checked();
                preempt_first_check_enable(true);
                run_out b = run(&w, jobs, n, &o);
                preempt_speed_log_enable(false);
                run_out c = run(&w, jobs, n, &o);
                preempt_speed_log_enable(true);
                preempt_first_check_enable(false);
                CHECK(preempt_first_checked() > checked);
                CHECK_EQ_I64((int64_t)(preempt_lane_errors() - lane_err), 0);
                CHECK(same_jobs(&b, &c));
                run_out_free(&b);
                run_out_free(&c);
            }
            run_out_free(&a);
            /* With the lanes they need, no job is in a lane of mixed types. */
            if (round == 5 && p + 1 == sizeof vs / sizeof vs[0])
                CHECK_EQ_I64((int64_t)(preempt_mixed_passes() - mixed), 0);
        }
        preempt_mask_lanes_set(0);
        world_fini(&w);
    }
    CHECK(preempt_hall_fast_passes() > fast + 10000);
    CHECK(preempt_mixed_passes() > mixed + 100);
    CHECK(preempted > 1000);
    gsl_rng_free(rng);
}

static double eq_4096_speeds(void *ctx, const job_spec *j, uint16_t t)
{
    (void)ctx;
    (void)t;
    return speed_by_arrival(j, 12);
}

/* Drifts that come and go: 4,096 speeds over the run, a few dozen at once (16 nodes of 8
 * GPUs, a job every 4 s of 100 to 1,000 s). The lanes emptied are taken over by new
 * drifts (their hash table entries moved), and admission by the lanes' sums still gives
 * the walk's schedule under srtf and srsf, without the one lane; so it does where the
 * jobs are also tied to GPU types (one lane per drift and set of types). */
static void test_lane_takeover(void)
{
    sim_rate_model m4096 = {
        .name = "m4096", .throughput = eq_4096_speeds, .interference = world_shared_slowdown};
    static job_spec jobs[2000];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 515);
    for (int typed = 0; typed < 2; typed++) {
        world w;
        world_init(&w, 16, 8);
        for (uint32_t i = 0; typed && i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 2000);
        for (size_t i = 0; i < n; i++) {
            jobs[i].gpu_type_mask = typed ? (i % 3 == 0 ? TYPE_A : i % 3 == 1 ? TYPE_B : 0) : 0;
            jobs[i].submit_us = (sim_time)i * 4000000;
            jobs[i].work_s = 100 + 900 * gsl_rng_uniform(rng);
        }
        uint64_t took = preempt_lane_takeovers(), fast = preempt_hall_fast_passes();
        srtf_srsf_agree(&w, jobs, n, (run_opts){.seed = 6, .rate = &m4096}, 50, 0);
        CHECK(preempt_lane_takeovers() > took + 1000);
        if (typed)
            CHECK(preempt_hall_fast_passes() > fast + 1000);
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

int main(void)
{
    test_srtf();
    test_srsf();
    test_gittins_index();
    test_gittins();
    test_gittins_sample_point();
    test_las_tiresias();
    test_las_queues();
    test_las_tiresias_thresholds();
    test_las_tiresias_starve();
    test_las_starve_fraction();
    test_properties();
    test_fast_equivalence();
    test_many_lanes();
    test_lane_takeover();
    test_fast_restart_penalty();
    test_settled_equivalence();
    test_lazy_rekey_equivalence();
    test_finish_with_node_back();
    test_typed_admission_wait();
    test_typed_admission_preempt();
    test_typed_admission_nested();
    test_typed_sums_equivalence();
    return check_done();
}
