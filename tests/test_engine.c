/*
 * test_engine.c: the discrete-event core.
 *  - hand-computed schedules: sharing and share speed, FIFO blocking, gang replicas,
 *    rejection with a reason, node failures with and without checkpoints, preemption,
 *    share changes, pause/resume, speed factors (a scripted test policy);
 *  - invalid decisions end the run naming the policy, the decision and the reason;
 *  - properties on random traces for every policy: conservation after every event
 *    (check_invariants), every job accounted for, identical bytes for identical seeds;
 *  - the shape-indexed placement pass gives exactly the schedule of an exhaustive scan;
 *  - allocation failures in sim_engine_create return SIM_ENOMEM without leaks.
 */
#include "policies/place.h"
#include "policies/registry.h"
#include "base/alloc.h"
#include "sim/engine.h"
#include "sim/engine_int.h"

#include "engine_world.h"

extern const policy_ops policy_fifo, policy_binpack, policy_random, policy_sjf, policy_las;

/* ---- Hand-computed schedules -------------------------------------------------------- */

static void test_sharing(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[3] = {job("j1", 0, 100, 1, 500), job("j2", 10, 50, 1, 500),
                        job("j3", 20, 10, 1, 1000)};
    jobs[1].true_milli = 1000; /* uses a whole GPU alone: at 500 it runs at half speed */
    run_opts o = {.pol = &policy_binpack, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "j1", F_END, "100.000000");
    CHECK_FIELD(&r, "j2", F_START, "10.000000");
    CHECK_FIELD(&r, "j2", F_END, "110.000000");
    CHECK_FIELD(&r, "j3", F_START, "110.000000");
    CHECK_FIELD(&r, "j3", F_WAIT, "90.000000");
    CHECK_FIELD(&r, "j3", F_END, "120.000000");
    CHECK_FIELD(&r, "j3", F_JCT, "100.000000");
    CHECK_FIELD(&r, "j2", F_STATUS, "done");
    CHECK_FIELD(&r, "j1", F_TYPE, "A");
    CHECK_FIELD(&r, "j1", F_NODE, "n0");
    CHECK_EQ_I64(r.sum.jobs_done, 3);
    /* Allocated GPU-time: 100 x 0.5 + 100 x 0.5 + 10 x 1 = 110 GPU-s over 120 s. */
    CHECK_NEAR(r.sum.gpu_seconds_alloc, 110, 1e-9);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 110.0 / 120.0, 1e-9);
    /* Effective: min(share, demand) = the same here. */
    CHECK_NEAR(r.sum.gpu_seconds_effective, 110, 1e-9);
    run_out_free(&r);

    /* FIFO holds whole GPUs: j2 waits for j1, and runs at full speed. */
    o.pol = &policy_fifo;
    r = run(&w, jobs, 3, &o);
    CHECK_FIELD(&r, "j2", F_START, "100.000000");
    CHECK_FIELD(&r, "j2", F_END, "150.000000");
    CHECK_FIELD(&r, "j2", F_SHARE, "1000");
    CHECK_FIELD(&r, "j3", F_END, "160.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* Two replicas of one job never share a GPU, fractional or not: on one GPU a job of two
 * half-GPU replicas is rejected at admission (it used to be admitted and wait to the end
 * of the run), while two one-replica half-GPU jobs share the GPU. */
static void test_fractional_replicas(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[3] = {job("pair", 0, 10, 2, 500), job("h1", 0, 10, 1, 500),
                        job("h2", 0, 10, 1, 500)};
    jobs[0].replicas = 2;
    run_opts o = {.pol = &policy_binpack, .seed = 1};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "pair", F_STATUS, "rejected");
    CHECK_FIELD(&r, "pair", F_REASON,
                "the whole cluster can hold only 1 of the job's 2 replicas at once");
    CHECK_FIELD(&r, "h1", F_END, "10.000000");
    CHECK_FIELD(&r, "h2", F_END, "10.000000");
    CHECK_EQ_I64(r.sum.jobs_unfinished, 0);
    run_out_free(&r);
    world_fini(&w);
}

static void test_gangs_and_rejection(void)
{
    world w;
    world_init(&w, 3, 8);
    w.nodes[2].gpu_type = 2;
    job_spec jobs[6] = {job("big", 0, 10, 16, 1000), job("huge", 1, 10, 32, 1000),
                        job("one", 2, 10, 16, 1000), job("typed", 3, 10, 1, 1000),
                        job("cpu", 4, 10, 0, 0), job("cpuhog", 5, 10, 0, 0)};
    jobs[2].replicas = 1;              /* 16 GPUs on one node: impossible */
    jobs[3].gpu_type_mask = 1u << 2;   /* only type B */
    jobs[4].cpu_milli = 1000;
    jobs[5].cpu_milli = 65000;         /* more than any node */
    run_opts o = {.pol = &policy_binpack, .seed = 1};
    run_out r = run(&w, jobs, 6, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "big", F_STATUS, "done");
    CHECK_FIELD(&r, "big", F_REPLICAS, "2");
    CHECK_FIELD(&r, "huge", F_STATUS, "rejected");
    CHECK_FIELD(&r, "huge", F_REASON,
                "the whole cluster can hold only 3 of the job's 4 replicas at once");
    CHECK_FIELD(&r, "one", F_STATUS, "rejected");
    CHECK_FIELD(&r, "one", F_REASON,
                "a replica needs 16 GPUs on one node; the largest eligible node has 8");
    CHECK_FIELD(&r, "typed", F_NODE, "n2");
    CHECK_FIELD(&r, "typed", F_TYPE, "B");
    CHECK_FIELD(&r, "cpu", F_STATUS, "done");
    CHECK_FIELD(&r, "cpuhog", F_REASON,
                "a replica needs 65000 milli-CPU; the largest eligible node has 64000");
    CHECK_EQ_I64(r.sum.jobs_rejected, 3);
    CHECK_EQ_I64(r.sum.jobs_done, 3);
    run_out_free(&r);
    world_fini(&w);
}

static void test_failures(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[1] = {job("j", 0, 100, 1, 1000)};
    const sim_time fail[1][3] = {{0, 50000000, 60000000}};
    run_opts o = {.pol = &policy_binpack, .seed = 1, .failures = fail, .n_failures = 1};
    /* No checkpoints: the 50 s done are lost; it restarts at 60 and ends at 160. */
    run_out r = run(&w, jobs, 1, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "j", F_END, "160.000000");
    CHECK_FIELD(&r, "j", F_PREEMPT, "0"); /* a failure is not a preemption */
    CHECK_EQ_I64(r.sum.preemptions, 0);
    CHECK_EQ_I64(r.sum.failures, 1);
    CHECK_FIELD(&r, "j", F_LOST, "50.000000");
    CHECK_FIELD(&r, "j", F_RUN, "150.000000");
    CHECK_FIELD(&r, "j", F_QUEUED, "10.000000");
    CHECK_EQ_I64(r.sum.failures, 1);
    run_out_free(&r);
    /* Checkpoints every 30 s: 20 s lost; 30 s of work remain... 70 s after 60. */
    o.checkpoint_s = 30;
    o.restart_penalty_s = 5;
    r = run(&w, jobs, 1, &o);
    CHECK_FIELD(&r, "j", F_LOST, "20.000000");
    CHECK_FIELD(&r, "j", F_END, "135.000000");
    run_out_free(&r);
    /* Overlapping outages: the node is down from 10 s until the later one ends, 150 s;
     * the 10 s done are lost and the job runs 150..250. */
    const sim_time two[2][3] = {{0, 10000000, 100000000}, {0, 50000000, 150000000}};
    o.failures = two;
    o.n_failures = 2;
    o.checkpoint_s = 0;
    o.restart_penalty_s = 0;
    r = run(&w, jobs, 1, &o);
    CHECK_FIELD(&r, "j", F_START, "0.000000");
    CHECK_FIELD(&r, "j", F_END, "250.000000");
    CHECK_FIELD(&r, "j", F_LOST, "10.000000");
    CHECK_EQ_I64(r.sum.failures, 1);
    run_out_free(&r);
    world_fini(&w);
}

/* A scripted policy: binpack placement, plus actions at given times. */
typedef struct act {
    double t_s;
    char what; /* p = preempt (arg 1 = checkpoint), s = set share, z = pause, r = resume,
                  f = speed factor (arg / 1000), x = reject, g = grow by one replica,
                  G = grow by one replica on the GPU the job's first replica holds,
                  k = shrink to arg replicas, q = record what the view reports,
                  u = record when the job's progress was last brought up to date,
                  P = preempt the job id arg itself (not an arrival's) */
    int job;   /* arrival index */
    uint32_t arg;
} act;

static const act *script;
static int script_n;
static double q_done, q_left, q_attained; /* the view's figures at the last 'q' */
static sim_time q_update;                 /* the job's last_update_us at the last 'u' */

typedef struct scripted {
    place_ws ws;
    sim_job_id ids[16];
    int n;
    int next;
} scripted;

static int sc_init(void *st, const policy_config *cfg, sim_diag *d)
{
    scripted *s = st;
    return place_ws_init(&s->ws, cfg, d);
}

static void sc_fini(void *st)
{
    scripted *s = st;
    place_ws_fini(&s->ws);
}

static void sc_arrival(void *st, const sim_view *v, sim_job_id id)
{
    (void)v;
    scripted *s = st;
    if (s->n < 16)
        s->ids[s->n++] = id;
}

static int sc_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    scripted *s = st;
    while (s->next < script_n && (sim_time)llround(script[s->next].t_s * 1e6) <= now) {
        const act *a = &script[s->next++];
        sim_job_id id = s->ids[a->job];
        int rc = SIM_OK;
        switch (a->what) {
        case 'p': rc = sim_decide_preempt(out, id, a->arg != 0); break;
        case 's': rc = sim_decide_set_share(out, id, a->arg); break;
        case 'z': rc = sim_decide_pause(out, id); break;
        case 'r': rc = sim_decide_resume(out, id); break;
        case 'f': rc = sim_decide_speed_factor(out, id, a->arg / 1000.0); break;
        case 'x': rc = sim_decide_reject(out, id, "scripted"); break;
        case 'g': {
            /* Grow by one replica on the first idle GPU. */
            uint32_t node = 0, gpu = 0;
            while (gpu < v->n_gpus && v->gpu_used_milli[gpu])
                gpu++;
            node = v->gpu_node[gpu < v->n_gpus ? gpu : 0];
            sim_placement gp = {.replicas = 1, .nodes = &node, .gpus = &gpu};
            rc = sim_decide_grow(out, id, &gp);
            break;
        }
        case 'G': {
            uint32_t first = sim_view_job(v, id)->alloc_head;
            uint32_t node = v->allocs[first].node, gpu = v->allocs[first].gpu;
            sim_placement gp = {.replicas = 1, .nodes = &node, .gpus = &gpu};
            rc = sim_decide_grow(out, id, &gp);
            break;
        }
        case 'k': rc = sim_decide_shrink(out, id, a->arg); break;
        case 'P': rc = sim_decide_preempt(out, a->arg, false); break;
        case 'q':
            q_done = sim_view_work_done(v, id);
            q_left = sim_view_work_left(v, id);
            q_attained = sim_view_attained(v, id);
            break;
        case 'u':
            q_update = sim_view_job(v, id)->last_update_us;
            break;
        default: break;
        }
        if (rc != SIM_OK)
            return rc;
    }
    return place_pass_run(&s->ws, v, out, 0, place_score_most_allocated, NULL,
                          PLACE_GPU_MOST_USED, false);
}

static sim_time sc_wakeup(const void *st, const sim_view *v, sim_time now)
{
    (void)v;
    (void)now;
    const scripted *s = st;
    return s->next < script_n ? (sim_time)llround(script[s->next].t_s * 1e6) : SIM_TIME_NEVER;
}

static const policy_ops policy_scripted = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "scripted",
    .state_size = sizeof(scripted),
    .init = sc_init,
    .fini = sc_fini,
    .on_arrival = sc_arrival,
    .schedule = sc_schedule,
    .next_wakeup = sc_wakeup,
};

static void test_scripted(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[2] = {job("a", 0, 100, 1, 500), job("b", 0, 100, 1, 1000)};
    jobs[0].true_milli = 1000;
    /* a holds 500 of a GPU it would use fully: speed 0.5. At 20 s (10 s of work done)
     * it grows to 1000: speed 1, 90 s left -> ends at 110. b waits until then. */
    static const act s1[] = {{12, 'q', 0, 0}, {20, 's', 0, 1000}};
    script = s1;
    script_n = 2;
    run_opts o = {.pol = &policy_scripted, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    /* At 12 s: 6 s of work done at speed 0.5, 94 left, 12 s x 0.5 GPU = 6 GPU-s attained. */
    CHECK(fabs(q_done - 6) < 1e-9 && fabs(q_left - 94) < 1e-9 && fabs(q_attained - 6) < 1e-9);
    CHECK_FIELD(&r, "a", F_END, "110.000000");
    CHECK_FIELD(&r, "a", F_SHARE, "1000");
    CHECK_FIELD(&r, "b", F_START, "110.000000");
    run_out_free(&r);

    /* Pause a from 10 to 30 s, then a speed factor of 2 from 40 s:
     * work 10 by t=10, paused 20 s, 10 more by t=40, then 80 left at speed 1 -> t=80. */
    jobs[0].gpu_milli = 1000;
    static const act s2[] = {{10, 'z', 0, 0}, {30, 'r', 0, 0}, {40, 'f', 0, 2000}};
    script = s2;
    script_n = 3;
    r = run(&w, jobs, 1, &o);
    CHECK_FIELD(&r, "a", F_END, "80.000000");
    CHECK_FIELD(&r, "a", F_RUN, "80.000000");
    run_out_free(&r);

    /* The factor a job has already is no change: its progress is not brought up to date
     * (a policy may set every running job's factor at every point); another factor is. */
    static const act s2b[] = {{10, 'f', 0, 1000}, {12, 'u', 0, 0},    {20, 'f', 0, 2000},
                              {22, 'u', 0, 0},    {30, 'f', 0, 2000}, {32, 'u', 0, 0}};
    script = s2b;
    script_n = 2;
    r = run(&w, jobs, 1, &o);
    CHECK_EQ_I64(q_update, 0);
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    run_out_free(&r);
    script_n = 6;
    r = run(&w, jobs, 1, &o);
    CHECK_EQ_I64(q_update, 20000000);
    CHECK_FIELD(&r, "a", F_END, "60.000000");
    run_out_free(&r);

    /* Preempt with a checkpoint at 30 s: no work lost; without, 30 s lost. */
    static const act s3[] = {{30, 'p', 0, 1}};
    script = s3;
    script_n = 1;
    r = run(&w, jobs, 1, &o);
    CHECK_FIELD(&r, "a", F_END, "100.000000");
    CHECK_FIELD(&r, "a", F_PREEMPT, "1");
    CHECK_FIELD(&r, "a", F_LOST, "0.000000");
    run_out_free(&r);
    static const act s4[] = {{30, 'p', 0, 0}};
    script = s4;
    r = run(&w, jobs, 1, &o);
    CHECK_FIELD(&r, "a", F_END, "130.000000");
    CHECK_FIELD(&r, "a", F_LOST, "30.000000");
    run_out_free(&r);

    /* Elastic: one replica (speed 1) until 10 s, two (speed 2, by default scaling) until
     * 30 s, then one again: 10 + 40 + 50 s of work -> ends at 80 s. Growing past
     * max_replicas, or shrinking below min_replicas, is refused. */
    world w4;
    world_init(&w4, 1, 4);
    job_spec el = job("el", 0, 100, 1, 1000);
    el.attr[SIM_ATTR_MIN_REPLICAS] = 1;
    el.attr[SIM_ATTR_MAX_REPLICAS] = 2;
    el.attr_present = (UINT64_C(1) << SIM_ATTR_MIN_REPLICAS) | (UINT64_C(1) << SIM_ATTR_MAX_REPLICAS);
    static const act s8[] = {{10, 'g', 0, 0}, {30, 'k', 0, 1}};
    script = s8;
    script_n = 2;
    r = run(&w4, &el, 1, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "el", F_END, "80.000000");
    run_out_free(&r);
    static const act s9[] = {{10, 'g', 0, 0}, {20, 'g', 0, 0}};
    script = s9;
    r = run(&w4, &el, 1, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK(strstr(r.d.msg, "decision GROW job 'el'") && strstr(r.d.msg, "exceeds max_replicas 2"));
    run_out_free(&r);
    static const act s10[] = {{10, 'k', 0, 1}};
    script = s10;
    script_n = 1;
    r = run(&w4, &el, 1, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK(strstr(r.d.msg, "goes below min_replicas 1"));
    run_out_free(&r);
    /* Two replicas of one job never share a GPU: a growth onto a GPU the job holds is
     * refused, fractional share or not (it was applied, and the job ran twice as fast
     * on the same GPU). */
    job_spec elf = el;
    elf.gpu_milli = elf.true_milli = 300;
    static const act s11[] = {{10, 'G', 0, 0}};
    script = s11;
    r = run(&w4, &elf, 1, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK(strstr(r.d.msg, "decision GROW job 'el'") &&
          strstr(r.d.msg, "already holds a replica of the job"));
    run_out_free(&r);
    world_fini(&w4);

    /* A job rejected by the policy is written with its reason. */
    static const act s5[] = {{0, 'x', 1, 0}};
    script = s5;
    r = run(&w, jobs, 2, &o);
    CHECK_FIELD(&r, "b", F_STATUS, "rejected");
    CHECK_FIELD(&r, "b", F_REASON, "policy scripted: scripted");
    CHECK_EQ_I64(r.sum.jobs_rejected, 1);
    run_out_free(&r);

    /* Invalid decisions end the run, naming the policy, the decision and the reason. */
    static const act s6[] = {{50, 's', 0, 1001}};
    script = s6;
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK_STR(r.d.msg, "policy 'scripted': decision SET_SHARE job 'a' (id 0) at t=50.000000 s: "
                       "share 1001 milli-GPU is outside 1..1000");
    run_out_free(&r);
    static const act s7[] = {{1, 'r', 1, 0}};
    script = s7;
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK(strstr(r.d.msg, "decision RESUME job 'b'") && strstr(r.d.msg, "the job is pending"));
    run_out_free(&r);
    /* Ids no job holds: one the pool has room for but never handed out, and one past
     * the pool. */
    static const uint32_t bad_ids[2] = {100, 5000};
    for (int k = 0; k < 2; k++) {
        act bad[1] = {{1, 'P', 0, bad_ids[k]}};
        script = bad;
        script_n = 1;
        r = run(&w, jobs, 2, &o);
        CHECK_EQ_I64(r.status, SIM_EPOLICY);
        char want[256];
        snprintf(want, sizeof want,
                 "policy 'scripted': decision PREEMPT job '?' (id %u) at t=1.000000 s: no job in "
                 "flight has this id",
                 bad_ids[k]);
        CHECK_STR(r.d.msg, want);
        run_out_free(&r);
    }
    world_fini(&w);
}

/* A policy that over-commits: starts every pending job on GPU 0. */
static int greedy_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)st;
    (void)now;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE;) {
        sim_job_id next = sim_view_next(v, id);
        uint32_t node = 0, gpu = 0;
        sim_placement p = {.replicas = 1, .nodes = &node, .gpus = &gpu, .gpu_mem_mib = UINT64_MAX};
        int rc = sim_decide_start(out, id, &p);
        if (rc != SIM_OK)
            return rc;
        id = next;
    }
    return SIM_OK;
}

static int nop_init(void *st, const policy_config *cfg, sim_diag *d)
{
    (void)st;
    (void)cfg;
    (void)d;
    return SIM_OK;
}

static const policy_ops policy_greedy = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "greedy",
    .init = nop_init,
    .schedule = greedy_schedule,
};

static void test_overcommit_refused(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[2] = {job("a", 0, 10, 1, 700), job("b", 0, 10, 1, 400)};
    run_opts o = {.pol = &policy_greedy, .seed = 1};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EPOLICY);
    CHECK_STR(r.d.msg, "policy 'greedy': decision START job 'b' (id 1) at t=0.000000 s: GPU 0 "
                       "(node n0) has 300 milli-GPU free, the job needs 400");
    run_out_free(&r);
    world_fini(&w);
}

/* ---- The view's lists ------------------------------------------------------------------ */

static uint64_t list_passes, list_errors;

/* Each list linked both ways from its head to its tail with its count of jobs; the pending
 * list in strictly increasing enqueue_seq, below the view's enqueue_count. */
static void check_lists(const sim_view *v)
{
    for (int running = 0; running < 2; running++) {
        sim_job_id last = SIM_JOB_NONE;
        uint32_t n = 0;
        for (sim_job_id id = running ? v->running_head : v->pending_head; id != SIM_JOB_NONE;
             id = sim_view_next(v, id)) {
            const sim_job *j = sim_view_job(v, id);
            list_errors += j->list_prev != last;
            if (!running)
                list_errors +=
                    j->enqueue_seq >= v->enqueue_count ||
                    (last != SIM_JOB_NONE && j->enqueue_seq <= sim_view_job(v, last)->enqueue_seq);
            last = id;
            n++;
        }
        list_errors += last != (running ? v->running_tail : v->pending_tail);
        list_errors += n != (running ? v->n_running : v->n_pending);
    }
    list_passes++;
}

static policy_ops policy_listcheck;

static int listcheck_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    check_lists(v);
    return policy_las.schedule(st, v, now, out);
}

/* las (whose preempted jobs enter the pending list again) with the lists checked at every
 * pass, on random traces with node failures. */
static void test_view_lists(void)
{
    policy_listcheck = policy_las;
    policy_listcheck.name = "listcheck";
    policy_listcheck.schedule = listcheck_schedule;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[400];
    const sim_time fail[2][3] = {{0, 1000000000, 1500000000}, {1, 2000000000, 3000000000}};
    for (int round = 0; round < 3; round++) {
        gsl_rng_set(rng, 77 + (unsigned long)round);
        world w;
        world_init(&w, 3 + (uint32_t)round, 4);
        size_t n = random_trace(rng, jobs, 400);
        for (size_t i = 0; i < n; i++)
            jobs[i].gpu_type_mask = 0;
        run_opts o = {.pol = &policy_listcheck, .seed = 3, .failures = fail, .n_failures = 2};
        run_out r = run(&w, jobs, n, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK(r.sum.preemptions > 10);
        run_out_free(&r);
        world_fini(&w);
    }
    CHECK(list_passes > 500);
    CHECK_EQ_I64((int64_t)list_errors, 0);
    gsl_rng_free(rng);
}

/* ---- Properties on random traces ------------------------------------------------------ */

static void test_properties(void)
{
    const policy_ops *pols[] = {&policy_fifo, &policy_binpack, &policy_random, &policy_sjf,
                                &policy_las};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[600];
    for (int round = 0; round < 6; round++) {
        gsl_rng_set(rng, 1000 + (unsigned long)round);
        world w;
        world_init(&w, 4 + (uint32_t)round * 3, round % 2 ? 4 : 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++)
            w.nodes[i].gpu_type = (uint16_t)(1 + i % 2);
        size_t n = random_trace(rng, jobs, 200 + 80 * (size_t)round);
        for (int p = 0; p < 5; p++) {
            run_opts o = {.pol = pols[p], .seed = 7, .sample_us = 60000000};
            run_out a = run(&w, jobs, n, &o);
            run_out b = run(&w, jobs, n, &o);
            CHECK_EQ_I64(a.status, SIM_OK);
            if (a.status != SIM_OK)
                fprintf(stderr, "%s: %s\n", pols[p]->name, a.d.msg);
            /* Every job accounted for, each exactly once. */
            CHECK_EQ_I64(a.sum.jobs_arrived, n);
            CHECK_EQ_I64(a.sum.jobs_done + a.sum.jobs_rejected + a.sum.jobs_unfinished, n);
            CHECK_EQ_I64(count_lines(a.jobs), n + 1);
            /* Identical inputs and seed: identical bytes. */
            CHECK(same_jobs(&a, &b));
            CHECK(a.ts_len == b.ts_len && memcmp(a.ts, b.ts, a.ts_len) == 0);
            CHECK(same_summary(&a, &b));
            run_out_free(&a);
            run_out_free(&b);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

/* An exhaustive binpack: every pending job in enqueue order on every node, no shape
 * index, no release log, no block bounds. */
typedef struct exhaustive {
    place_ws ws;
} exhaustive;

static int ex_init(void *st, const policy_config *cfg, sim_diag *d)
{
    exhaustive *s = st;
    return place_ws_init(&s->ws, cfg, d);
}

static void ex_fini(void *st)
{
    exhaustive *s = st;
    place_ws_fini(&s->ws);
}

static double plain_score(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    return place_score_most_allocated(ctx, v, j, n);
}

static int ex_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    exhaustive *s = st;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE;) {
        sim_job_id next = sim_view_next(v, id);
        sim_placement p;
        /* A score function other than place_score_most_allocated takes the plain scan. */
        if (place_gang(&s->ws, v, id, 0, UINT64_MAX, plain_score, NULL, PLACE_GPU_MOST_USED,
                       NULL, 0, &p)) {
            int rc = sim_decide_start(out, id, &p);
            if (rc != SIM_OK)
                return rc;
        }
        id = next;
    }
    return SIM_OK;
}

static const policy_ops policy_exhaustive = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "binpack",
    .state_size = sizeof(exhaustive),
    .init = ex_init,
    .fini = ex_fini,
    .schedule = ex_schedule,
};

/* The same walk with each job placed through the shape memo (place_shape_try): a job of
 * a shape that fitted nowhere is not tried again until something is released, and then
 * a one-replica one only on the nodes released since. */
static int memo_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    exhaustive *s = st;
    if (place_memo_reserve(&s->ws, v) != SIM_OK)
        return SIM_ENOMEM;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE;) {
        sim_job_id next = sim_view_next(v, id);
        sim_placement p;
        if (place_shape_try(&s->ws, v, id, 0, place_score_most_allocated, NULL,
                            PLACE_GPU_MOST_USED, &p)) {
            int rc = sim_decide_start(out, id, &p);
            if (rc != SIM_OK)
                return rc;
        }
        id = next;
    }
    return SIM_OK;
}

static const policy_ops policy_memo_walk = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "binpack",
    .state_size = sizeof(exhaustive),
    .init = ex_init,
    .fini = ex_fini,
    .schedule = memo_schedule,
};

/* SJF the slow way: every pending job, sorted by (remaining work, arrival), tried on
 * every node. */
static bool ex_strict;

static const sim_view *sort_view;

static int by_work(const void *a, const void *b)
{
    const sim_view *v = sort_view;
    const sim_job *x = sim_view_job(v, *(const sim_job_id *)a);
    const sim_job *y = sim_view_job(v, *(const sim_job_id *)b);
    uint64_t wx = (uint64_t)llround((x->work_total_s - x->work_done_s) * 1e6);
    uint64_t wy = (uint64_t)llround((y->work_total_s - y->work_done_s) * 1e6);
    if (wx != wy)
        return wx < wy ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ex_sjf_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    exhaustive *s = st;
    static sim_job_id ids[4096];
    size_t n = 0;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE && n < 4096;
         id = sim_view_next(v, id))
        ids[n++] = id;
    sort_view = v;
    qsort(ids, n, sizeof *ids, by_work);
    for (size_t i = 0; i < n; i++) {
        sim_placement p;
        if (!place_gang(&s->ws, v, ids[i], 0, UINT64_MAX, plain_score, NULL,
                        PLACE_GPU_MOST_USED, NULL, 0, &p)) {
            if (ex_strict)
                break;
            continue;
        }
        int rc = sim_decide_start(out, ids[i], &p);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static const policy_ops policy_exhaustive_sjf = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "sjf",
    .state_size = sizeof(exhaustive),
    .init = ex_init,
    .fini = ex_fini,
    .schedule = ex_sjf_schedule,
};

/* SJF by hand on one GPU: a (100 s) runs; b (50), c (10) and d (30) wait and then run
 * shortest first: c 100-110, d 110-140, b 140-190. Without backfilling on two GPUs, a
 * 2-GPU job shorter than the rest blocks them; with it, they pass. */
static void test_sjf(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[4] = {job("a", 0, 100, 1, 1000), job("b", 1, 50, 1, 1000),
                        job("c", 2, 10, 1, 1000), job("d", 3, 30, 1, 1000)};
    run_opts o = {.pol = &policy_sjf, .seed = 1};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "c", F_START, "100.000000");
    CHECK_FIELD(&r, "d", F_START, "110.000000");
    CHECK_FIELD(&r, "b", F_START, "140.000000");
    CHECK_FIELD(&r, "b", F_END, "190.000000");
    run_out_free(&r);
    /* A job a failure requeues is ordered by what it has left: a (100 s) runs 0..50
     * with a checkpoint at 30, so 70 s remain when the node is back at 60; b (60 s)
     * goes first, 60..120, then a, 120..190. */
    const sim_time fail[1][3] = {{0, 50000000, 60000000}};
    job_spec j1[2] = {job("a", 0, 100, 1, 1000), job("b", 1, 60, 1, 1000)};
    run_opts of = {.pol = &policy_sjf, .seed = 1, .failures = fail, .n_failures = 1,
                   .checkpoint_s = 30};
    r = run(&w, j1, 2, &of);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "b", F_START, "60.000000");
    CHECK_FIELD(&r, "a", F_END, "190.000000");
    run_out_free(&r);
    world_fini(&w);
    /* Ties go by arrival, also for a job a failure requeued: a (1000 s, node 0) fails
     * at 10 and loses its work; when the node is back at 20, a and b (both 1000 s left)
     * wait, and a, which arrived first, runs first: 20..1020, then b. */
    world_init(&w, 2, 1);
    job_spec j3[3] = {job("a", 0, 1000, 1, 1000), job("c", 0.5, 5000, 1, 1000),
                      job("b", 1, 1000, 1, 1000)};
    const sim_time fail0[1][3] = {{0, 10000000, 20000000}};
    run_opts ot = {.pol = &policy_sjf, .seed = 1, .failures = fail0, .n_failures = 1};
    r = run(&w, j3, 3, &ot);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_END, "1020.000000");
    CHECK_FIELD(&r, "b", F_START, "1020.000000");
    run_out_free(&r);
    world_fini(&w);

    world_init(&w, 1, 2);
    job_spec j2[3] = {job("a", 0, 100, 1, 1000), job("big", 1, 5, 2, 1000),
                      job("small", 2, 50, 1, 1000)};
    r = run(&w, j2, 3, &o);
    CHECK_FIELD(&r, "small", F_START, "2.000000");
    CHECK_FIELD(&r, "big", F_START, "100.000000");
    run_out_free(&r);
    o.opt_key = "backfill";
    o.opt_value = "false";
    r = run(&w, j2, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "big", F_START, "100.000000");
    CHECK_FIELD(&r, "small", F_START, "105.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* LAS by hand on one GPU with one threshold at 50 GPU-seconds. b arriving at 60 finds
 * a (200 s) already past the threshold, so b takes the GPU at once (60..90) and a,
 * preempted with a checkpoint, resumes with 140 s left: 90..230. b arriving at 40
 * waits behind a, in the same queue and earlier, until a crosses the threshold at 50:
 * b runs 50..80, a ends at 230 again. Two jobs in the last queue keep arrival order. */
static void test_las(void)
{
    world w;
    world_init(&w, 1, 1);
    run_opts o = {.pol = &policy_las, .seed = 1, .opt_key = "thresholds", .opt_value = "50"};
    for (int k = 0; k < 2; k++) {
        job_spec jobs[2] = {job("a", 0, 200, 1, 1000), job("b", k ? 40 : 60, 30, 1, 1000)};
        run_out r = run(&w, jobs, 2, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_FIELD(&r, "b", F_START, k ? "50.000000" : "60.000000");
        CHECK_FIELD(&r, "b", F_END, k ? "80.000000" : "90.000000");
        CHECK_FIELD(&r, "a", F_END, "230.000000");
        CHECK_FIELD(&r, "a", F_PREEMPT, "1");
        CHECK_FIELD(&r, "a", F_LOST, "0.000000");
        run_out_free(&r);
    }
    job_spec both[2] = {job("a", 0, 100, 1, 1000), job("b", 1, 100, 1, 1000)};
    o.opt_value = "10";
    run_out r = run(&w, both, 2, &o);
    CHECK_FIELD(&r, "b", F_START, "10.000000");
    CHECK_FIELD(&r, "a", F_END, "110.000000");
    CHECK_FIELD(&r, "b", F_END, "200.000000");
    run_out_free(&r);
    /* A starvation limit far beyond the range of time: no overflow (UBSan would stop). */
    job_spec late[2] = {job("a", 0, 20000, 1, 1000), job("b", 10000, 50, 1, 1000)};
    run_opts os = {.pol = &policy_las, .seed = 1, .opt_key = "starve",
                   .opt_value = "922337203.68"};
    r = run(&w, late, 2, &os);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_done, 2);
    run_out_free(&r);
    o.opt_value = "10,5";
    r = run(&w, both, 2, &o);
    CHECK_EQ_I64(r.status, SIM_EINVAL);
    CHECK_STR(r.d.msg, "policy 'las': option 'thresholds': expected up to 15 increasing "
                       "positive numbers separated by commas, got \"10,5\"");
    run_out_free(&r);
    world_fini(&w);
}

static void test_pass_equivalence(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static job_spec jobs[1500];
    for (int round = 0; round < 4; round++) {
        gsl_rng_set(rng, 77 + (unsigned long)round);
        world w;
        world_init(&w, 40 + 7 * (uint32_t)round, 8);
        for (uint32_t i = 0; i < w.cl.n_nodes; i++) {
            w.nodes[i].gpu_type = (uint16_t)(1 + (i * 7) % 2);
            w.nodes[i].num_gpus = 2 + (i % 4) * 2;
        }
        /* Dense arrivals: long queues, many releases. */
        size_t n = random_trace(rng, jobs, 1500);
        for (size_t i = 0; i < n; i++)
            jobs[i].submit_us /= 8;
        /* binpack and the walk through the shape memo against the exhaustive scan;
         * sjf, with and without backfilling, against the exhaustive sort. */
        for (int k = 0; k < 4; k++) {
            run_opts o = {.pol = k == 3 ? &policy_memo_walk : k ? &policy_sjf : &policy_binpack,
                          .seed = 3};
            ex_strict = k == 2;
            if (ex_strict) {
                o.opt_key = "backfill";
                o.opt_value = "false";
            }
            run_out a = run(&w, jobs, n, &o);
            o.pol = k == 1 || k == 2 ? &policy_exhaustive_sjf : &policy_exhaustive;
            o.opt_key = NULL;
            run_out b = run(&w, jobs, n, &o);
            CHECK_EQ_I64(a.status, SIM_OK);
            CHECK_EQ_I64(b.status, SIM_OK);
            CHECK(same_jobs(&a, &b));
            CHECK(same_summary(&a, &b));
            CHECK(a.sum.jobs_done > n / 2);
            run_out_free(&a);
            run_out_free(&b);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

/* work_s is written as printf("%.6f") would, whatever its value. */
static void test_number_format(void)
{
    world w;
    world_init(&w, 1, 8);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    static job_spec jobs[400];
    static const double fixed[] = {0.1, 1e-7, 5e-7, 2.0000005, 1234567.8910115, 0.3333333333,
                                   8796093.022208, 8796093.0222085, 123456789.1234565, 0};
    size_t n = 0;
    for (; n < sizeof fixed / sizeof *fixed; n++) {
        char id[32];
        snprintf(id, sizeof id, "f%zu", n);
        jobs[n] = job(id, 0, fixed[n], 0, 0);
    }
    for (; n < 400; n++) {
        char id[32];
        snprintf(id, sizeof id, "f%zu", n);
        double x = n % 2 ? gsl_rng_uniform(rng) * pow(10, (double)(n % 10)) - 1 : 0;
        if (x < 0)
            x = gsl_rng_uniform(rng);
        if (n % 3 == 0)
            x = round(x * 1e6) / 1e6;
        jobs[n] = job(id, 0, x, 0, 0);
    }
    run_opts o = {.pol = &policy_binpack, .seed = 1};
    run_out r = run(&w, jobs, n, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    /* The rows written on the simulating thread are the writer thread's bytes. */
    run_opts oi = o;
    oi.inline_rows = true;
    run_out ri = run(&w, jobs, n, &oi);
    CHECK_EQ_I64(ri.status, SIM_OK);
    CHECK(r.jobs && ri.jobs && r.jobs_len == ri.jobs_len &&
          memcmp(r.jobs, ri.jobs, r.jobs_len) == 0);
    run_out_free(&ri);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char want[64];
        snprintf(want, sizeof want, "%.6f", jobs[i].work_s);
        char row[1024], f[256];
        row_of(&r, jobs[i].id, row, sizeof row);
        field(row, F_WORK, f, sizeof f);
        if (strcmp(f, want) != 0 && bad++ < 5)
            fprintf(stderr, "work %.17g written %s, printf %s\n", jobs[i].work_s, f, want);
    }
    CHECK(bad == 0);
    run_out_free(&r);
    gsl_rng_free(rng);
    world_fini(&w);
}

/* Jobs named slow-* run at a thousandth of the speed. */
static double slow_throughput(void *ctx, const job_spec *j, uint16_t gpu_type)
{
    (void)ctx;
    (void)gpu_type;
    return strncmp(j->id, "slow-", 5) == 0 ? 1e-3 : 1;
}

/* Simulated time ends at SIM_CLOCK_END_S: a job whose speed puts its end past it (here at
 * 1e11 s), or past what a time holds (1e13 s), is left unfinished there as at a horizon,
 * the samples stop there, and a job that ends before it is done. */
static void test_clock_end(void)
{
    world w;
    world_init(&w, 1, 3);
    job_spec jobs[3] = {job("slow-past", 0, 1e8, 1, 1000), job("slow-overflow", 0, 1e10, 1, 1000),
                        job("ends", 0, 1e10, 1, 1000)};
    sim_rate_model slow = {.name = "slow", .throughput = slow_throughput};
    run_opts o = {.pol = &policy_fifo, .seed = 1, .sample_us = (sim_time)1e15, .rate = &slow};
    run_out r = run(&w, jobs, 3, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK(r.sum.clock_ended);
    CHECK_FIELD(&r, "ends", F_STATUS, "done");
    CHECK_FIELD(&r, "slow-past", F_STATUS, "unfinished");
    CHECK_FIELD(&r, "slow-past", F_RUN, "20000000000.000000");
    CHECK_FIELD(&r, "slow-past", F_REASON,
                "still running at the end of simulated time (20000000000 s)");
    CHECK_FIELD(&r, "slow-overflow", F_STATUS, "unfinished");
    CHECK_FIELD(&r, "slow-overflow", F_REASON,
                "still running at the end of simulated time (20000000000 s)");
    CHECK_EQ_I64(r.sum.jobs_done, 1);
    CHECK_EQ_I64(r.sum.jobs_unfinished, 2);
    CHECK_EQ_I64(r.sum.last_end_us, (sim_time)SIM_CLOCK_END_S * SIM_US_PER_S);
    /* Samples at 0, 1e9 s, ..., 2e10 s, none after. */
    CHECK_EQ_I64(count_lines(r.ts), 1 + 21);
    run_out_free(&r);
    /* Without samples the run ends there too: no event is left while a job progresses. */
    o.sample_us = 0;
    r = run(&w, jobs + 1, 1, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK(r.sum.clock_ended);
    CHECK_FIELD(&r, "slow-overflow", F_RUN, "20000000000.000000");
    run_out_free(&r);
    /* A horizon before the end is a horizon. */
    o.horizon_us = 1000000;
    r = run(&w, jobs, 3, &o);
    CHECK(!r.sum.clock_ended);
    CHECK_FIELD(&r, "slow-past", F_REASON, "still running at the horizon");
    run_out_free(&r);
    world_fini(&w);
}

/* A run stopped at the horizon counts time up to the horizon, not up to the last event
 * before it, and lists the jobs submitted after it, so every trace row is accounted for. */
static void test_horizon(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec jobs[4] = {job("long", 0, 3600, 1, 1000), job("waits", 40, 10, 1, 1000),
                        job("late", 200, 10, 1, 1000), job("later", 300, 10, 1, 1000)};
    run_opts o = {.pol = &policy_fifo, .seed = 1, .horizon_us = 100000000};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "long", F_STATUS, "unfinished");
    CHECK_FIELD(&r, "long", F_RUN, "100.000000");
    CHECK_FIELD(&r, "long", F_REASON, "still running at the horizon");
    CHECK_FIELD(&r, "waits", F_STATUS, "unfinished");
    CHECK_FIELD(&r, "waits", F_RUN, "0.000000");
    CHECK_FIELD(&r, "waits", F_REASON, "still waiting at the horizon");
    CHECK_FIELD(&r, "late", F_STATUS, "unfinished");
    CHECK_FIELD(&r, "late", F_SUBMIT, "200.000000");
    CHECK_FIELD(&r, "late", F_REASON, "not arrived: submitted after the horizon");
    CHECK_FIELD(&r, "later", F_STATUS, "unfinished");
    CHECK_EQ_I64(count_lines(r.jobs), 5);
    CHECK_EQ_I64(r.sum.jobs_arrived, 2);
    CHECK_EQ_I64(r.sum.jobs_not_arrived, 2);
    CHECK_EQ_I64(r.sum.jobs_unfinished, 4);
    CHECK_EQ_I64(r.sum.jobs_done + r.sum.jobs_rejected + r.sum.jobs_unfinished,
                 r.sum.jobs_arrived + r.sum.jobs_not_arrived);
    /* One GPU held from 0 to the horizon: 100 GPU-s over a 100 s makespan. */
    CHECK_NEAR(r.sum.gpu_seconds_alloc, 100, 1e-12);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 1, 1e-12);
    CHECK_EQ_I64(r.sum.last_end_us - r.sum.first_submit_us, 100000000);
    CHECK(r.summary && strstr(r.summary, "\"jobs_not_arrived\": 2") != NULL);
    CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 100.000000") != NULL);
    run_out_free(&r);

    /* Node failures need a horizon: the failure process stops there too. The job runs
     * 0..30, loses the node 30..60 (no checkpoint: its 30 s are lost), runs 60..100. */
    const sim_time fail[1][3] = {{0, 30000000, 60000000}};
    job_spec one[1] = {job("j", 0, 500, 1, 1000)};
    o.failures = fail;
    o.n_failures = 1;
    r = run(&w, one, 1, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "j", F_RUN, "70.000000");
    CHECK_NEAR(r.sum.gpu_seconds_alloc, 70, 1e-12);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 0.7, 1e-12);
    run_out_free(&r);
    world_fini(&w);
}

/* The time-weighted mean of timeseries.csv's alloc_ratio from the first sample to end_s,
 * each sample holding until the next. */
static double ts_alloc_mean(const char *ts, double end_s)
{
    double sum = 0, t_prev = 0, a_prev = 0, t0 = 0;
    bool first = true;
    const char *p = ts ? strchr(ts, '\n') : NULL;
    while (p && p[1]) {
        p++;
        double t, a;
        if (sscanf(p, "%lf,%*[^,],%*[^,],%*[^,],%lf", &t, &a) != 2)
            break;
        if (first)
            t0 = t;
        else
            sum += a_prev * (t - t_prev);
        first = false;
        t_prev = t;
        a_prev = a;
        p = strchr(p, '\n');
    }
    sum += a_prev * (end_s - t_prev);
    return end_s > t0 ? sum / (end_s - t0) : 0;
}

/* With a horizon the window of makespan and utilisation ends at the horizon whenever the
 * run is cut by it, whether a job is in flight at that moment or only yet to arrive; and
 * the timeseries, sampled up to it, agrees with the utilisation. A run that ends before
 * the horizon ends at its last job's end. */
static void test_horizon_window(void)
{
    world w;
    world_init(&w, 1, 8);
    /* A 4-GPU job 0..100 s and one submitted after the horizon; with `cpu`, a CPU-only
     * job also in flight at the horizon. */
    job_spec jobs[3] = {job("a", 0, 100, 4, 1000), job("cpu", 4990, 100, 0, 0),
                        job("b", 10000, 100, 4, 1000)};
    jobs[1].cpu_milli = 1000;
    job_spec no_cpu[2] = {jobs[0], jobs[2]};
    run_opts o = {.pol = &policy_fifo, .seed = 1, .horizon_us = 5000000000, .sample_us = 1000000};
    for (int with_cpu = 0; with_cpu < 2; with_cpu++) {
        run_out r = with_cpu ? run(&w, jobs, 3, &o) : run(&w, no_cpu, 2, &o);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_EQ_I64(r.sum.jobs_not_arrived, 1);
        CHECK_EQ_I64(r.sum.last_end_us - r.sum.first_submit_us, 5000000000);
        CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 5000.000000") != NULL);
        /* 400 GPU-s over 5000 s on 8 GPUs. */
        CHECK_NEAR(r.sum.gpu_alloc_avg, 0.01, 1e-12);
        CHECK_NEAR(ts_alloc_mean(r.ts, 5000), r.sum.gpu_alloc_avg, 1e-9);
        run_out_free(&r);
    }
    /* Everything done before the horizon: the window ends at the last end. */
    o.horizon_us = 9000000000;
    run_out r = run(&w, no_cpu, 1, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 100.000000") != NULL);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 0.5, 1e-12);
    CHECK_NEAR(ts_alloc_mean(r.ts, 100), r.sum.gpu_alloc_avg, 1e-9);
    run_out_free(&r);
    world_fini(&w);
}

/* The makespan window spans the admitted jobs, from the first one's submission to the
 * last end: a job rejected at admission neither opens nor ends it, and with no admitted
 * job it is empty, never negative. */
static void test_makespan_rejections(void)
{
    world w;
    world_init(&w, 1, 8);
    job_spec jobs[3] = {job("a", 10, 100, 16, 1000), job("b", 20, 100, 1, 1000),
                        job("c", 30, 100, 9, 1000)};
    run_opts o = {.pol = &policy_fifo, .seed = 1};
    /* Every job rejected. */
    job_spec rej[2] = {jobs[0], jobs[2]};
    run_out r = run(&w, rej, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_rejected, 2);
    CHECK(r.sum.last_end_us >= r.sum.first_submit_us);
    CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 0.000000") != NULL);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 0, 0);
    run_out_free(&r);
    /* The same, cut by a horizon with a job yet to arrive. */
    job_spec rej_late[2] = {jobs[0], job("late", 500, 10, 1, 1000)};
    o.horizon_us = 100000000;
    r = run(&w, rej_late, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_not_arrived, 1);
    CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 0.000000") != NULL);
    run_out_free(&r);
    o.horizon_us = 0;
    /* A rejected first job does not stretch the window: b runs 20..120 on 1 of 8 GPUs. */
    r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_STATUS, "rejected");
    CHECK_EQ_I64(r.sum.first_submit_us, 20000000);
    CHECK(r.summary && strstr(r.summary, "\"makespan_s\": 100.000000") != NULL);
    CHECK_NEAR(r.sum.gpu_alloc_avg, 0.125, 1e-12);
    run_out_free(&r);
    world_fini(&w);
}

/* A sample at time t shows the state after every event at t, including the finish of a
 * job that started at t with no work to do (its finish event is put at t after the
 * moment's scheduling pass). */
static void test_sample_after_zero_jobs(void)
{
    world w;
    world_init(&w, 1, 4);
    job_spec jobs[4] = {job("w", 0, 1000, 1, 1000), job("x", 600, 0, 3, 1000),
                        job("y", 600, 100, 3, 1000), job("z", 1200, 0, 4, 1000)};
    run_opts o = {.pol = &policy_fifo, .seed = 1, .sample_us = 600000000};
    run_out r = run(&w, jobs, 4, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "x", F_END, "600.000000");
    CHECK_FIELD(&r, "y", F_START, "600.000000");
    CHECK_FIELD(&r, "z", F_END, "1200.000000");
    /* At 600 x has come and gone and y runs beside w; at 1200 z has come and gone. */
    CHECK(r.ts && strstr(r.ts, "\n600.000000,0,2,4.000,1.000000,") != NULL);
    CHECK(r.ts && strstr(r.ts, "\n1200.000000,0,0,0.000,0.000000,") != NULL);
    CHECK_EQ_I64(count_lines(r.ts), 4);
    run_out_free(&r);
    world_fini(&w);
}

/* Per-tenant GPU-hours count the GPU time of every job, finished or not, so they sum to
 * the run's; a tenant with no finished job has no mean JCT or wait (null, not 0). */
static void test_tenant_gpu_hours(void)
{
    world w;
    world_init(&w, 1, 8);
    uint32_t t1 = sim_intern_add(w.tenants, "t1", 2, 0), t2 = sim_intern_add(w.tenants, "t2", 2, 0);
    job_spec jobs[2] = {job("a", 0, 1000, 4, 1000), job("b", 0, 100, 4, 1000)};
    jobs[0].tenant = t1;
    jobs[1].tenant = t2;
    run_opts o = {.pol = &policy_fifo, .seed = 1, .horizon_us = 500000000};
    run_out r = run(&w, jobs, 2, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_FIELD(&r, "a", F_STATUS, "unfinished");
    /* 4 GPUs x 500 s for t1 (still running at the horizon), 4 x 100 s for t2. */
    CHECK_NEAR(r.sum.gpu_seconds_alloc, 2400, 1e-12);
    CHECK(r.summary &&
          strstr(r.summary, "\"t1\": {\"done\": 0, \"rejected\": 0, \"jct_mean\": "
                            "null, \"wait_mean\": null, \"gpu_hours\": 0.555556,") != NULL);
    CHECK(r.summary && strstr(r.summary, "\"t2\": {\"done\": 1, \"rejected\": 0, \"jct_mean\": "
                                         "100.000000, \"wait_mean\": 0.000000, \"gpu_hours\": "
                                         "0.111111,") != NULL);
    run_out_free(&r);
    world_fini(&w);
}

/* The invariant check finds a job holding a GPU twice and a job holding a down node:
 * states the decisions refuse (a grow onto a GPU the job holds), made here by hand. */
static void test_check_finds(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec jobs[1] = {job("j", 0, 100, 2, 1000)};
    sim_config cfg = {.seed = 1, .horizon_us = 50 * 1000000};
    sim_world sw = {.cluster = &w.cl,
                    .gpu_types = w.types,
                    .gpu_type_mem_mib = w.type_mem,
                    .tenants = w.tenants};
    policy_config pc = {.policy = "fifo"};
    sim_engine *e = NULL;
    sim_diag d;
    CHECK_EQ_I64(sim_engine_create(&e, &cfg, &sw, &policy_fifo, &pc, &d), SIM_OK);
    if (!e)
        return;
    array_source as = {.jobs = jobs, .n = 1};
    sim_source src = {.ctx = &as, .next = array_next};
    CHECK_EQ_I64(sim_engine_run(e, &src, &d), SIM_OK);
    CHECK_EQ_I64(sim_engine_check(e, &d), SIM_OK);
    /* j holds GPUs 0 and 1, one allocation each. */
    uint32_t a = e->gpu_first_res[0], b = e->gpu_first_res[1];
    CHECK(a != UINT32_MAX && b != UINT32_MAX);
    if (a == UINT32_MAX || b == UINT32_MAX) {
        sim_engine_destroy(e);
        world_fini(&w);
        return;
    }
    e->node_up[0] = false;
    CHECK_EQ_I64(sim_engine_check(e, &d), SIM_EINVAL);
    CHECK_STR(d.msg, "job 'j' holds down node n0");
    e->node_up[0] = true;
    /* b moved beside a on GPU 0. */
    e->allocs[b].gpu = 0;
    e->allocs[a].next_on_gpu = b;
    e->allocs[b].prev_on_gpu = a;
    CHECK_EQ_I64(sim_engine_check(e, &d), SIM_EINVAL);
    CHECK_STR(d.msg, "GPU 0 holds two allocations of job 'j'");
    e->allocs[b].gpu = 1;
    e->allocs[a].next_on_gpu = UINT32_MAX;
    e->allocs[b].prev_on_gpu = UINT32_MAX;
    CHECK_EQ_I64(sim_engine_check(e, &d), SIM_OK);
    sim_engine_destroy(e);
    world_fini(&w);
}

/* Every policy's engine created with each allocation in turn failing: SIM_OK or
 * SIM_ENOMEM, and nothing left allocated either way (a failed init frees what it took;
 * the core calls no fini after it). */
static void test_create_alloc_failures(void)
{
    world w;
    world_init(&w, 4, 8);
    int64_t base = sim_alloc_live();
    sim_config cfg = {.seed = 1, .horizon_us = SIM_TIME_NEVER};
    sim_world sw = {.cluster = &w.cl,
                    .gpu_types = w.types,
                    .gpu_type_mem_mib = w.type_mem,
                    .tenants = w.tenants};
    int tested = 0;
    for (const policy_ops *const *p = policy_all; *p; p++) {
        policy_config pc = {.policy = (*p)->name};
        sim_engine *e = NULL;
        sim_diag d;
        /* A policy that needs inputs this world lacks (fgd: a target workload) has its own
         * test of these failures. */
        if (sim_engine_create(&e, &cfg, &sw, *p, &pc, &d) != SIM_OK) {
            fprintf(stderr, "  %s: not created here (%s)\n", (*p)->name, d.msg);
            continue;
        }
        sim_engine_destroy(e);
        tested++;
        int failed = 0, leaks = 0, bad = 0;
        for (uint64_t k = 1; k < 400; k++) {
            sim_alloc_fail_after(k);
            int st = sim_engine_create(&e, &cfg, &sw, *p, &pc, &d);
            sim_alloc_fail_after(0);
            if (st == SIM_OK)
                sim_engine_destroy(e);
            else
                failed++;
            CHECK(st == SIM_OK || st == SIM_ENOMEM);
            if (st != SIM_OK && st != SIM_ENOMEM && bad++ == 0)
                fprintf(stderr, "  %s: allocation %llu failing gives status %d: %s\n", (*p)->name,
                        (unsigned long long)k, st, d.msg);
            if (sim_alloc_live() != base && leaks++ == 0)
                fprintf(stderr, "  %s: allocation %llu failing leaves %lld blocks\n", (*p)->name,
                        (unsigned long long)k, (long long)(sim_alloc_live() - base));
            CHECK_EQ_I64(sim_alloc_live(), base);
            base = sim_alloc_live();
        }
        CHECK(failed > 20);
    }
    CHECK(tested >= 25);
    world_fini(&w);
}

/* The jobs.csv writer's ring goes round more than once (2 MB of rows, blocks of 256
 * KiB, four of them): the same bytes as the rows written on the simulating thread,
 * every row once, in order. */
static void test_writer_blocks(void)
{
    world w;
    world_init(&w, 4, 4);
    enum { N = 12000 };
    static job_spec jobs[N];
    for (size_t i = 0; i < N; i++) {
        char id[64];
        snprintf(id, sizeof id, "b%zu-with-a-long-id-to-fill-the-writer-blocks-sooner", i);
        jobs[i] = job(id, (double)i * 0.5, 1 + (double)(i % 17), i % 3 ? 1 : 2, 1000);
    }
    run_opts o = {.pol = &policy_binpack, .seed = 1};
    run_out r = run(&w, jobs, N, &o);
    o.inline_rows = true;
    run_out ri = run(&w, jobs, N, &o);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(ri.status, SIM_OK);
    CHECK_EQ_I64(count_lines(r.jobs), N + 1);
    CHECK(r.jobs && ri.jobs && r.jobs_len == ri.jobs_len &&
          memcmp(r.jobs, ri.jobs, r.jobs_len) == 0);
    CHECK(r.jobs_len > 5 * 256 * 1024); /* more than the ring's four blocks */
    run_out_free(&r);
    run_out_free(&ri);
    world_fini(&w);
}

/* jobs.csv is written by a thread of its own: a write error there still stops the run
 * with SIM_EIO and says which file (/dev/full refuses every write) once stdio passes
 * the rows on (also with the rows written on the simulating thread); rows still in
 * stdio's buffer fail when the caller closes the file. */
static void test_write_error(void)
{
    world w;
    world_init(&w, 2, 4);
    static job_spec jobs[20000];
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        char id[32];
        snprintf(id, sizeof id, "w%zu", i);
        jobs[i] = job(id, (double)i, 5, 1, 1000);
    }
    const size_t sizes[3] = {3, sizeof jobs / sizeof *jobs, sizeof jobs / sizeof *jobs};
    for (int k = 0; k < 3; k++) {
        FILE *fj = fopen("/dev/full", "w");
        CHECK(fj != NULL);
        if (!fj)
            break;
        sim_config cfg = {.seed = 1, .horizon_us = SIM_TIME_NEVER, .jobs_csv = fj,
                          .jobs_csv_inline = k == 2};
        sim_world sw = {.cluster = &w.cl,
                        .gpu_types = w.types,
                        .gpu_type_mem_mib = w.type_mem,
                        .tenants = w.tenants};
        policy_config pc = {.policy = "fifo"};
        sim_engine *e;
        sim_diag d = {0};
        CHECK_EQ_I64(sim_engine_create(&e, &cfg, &sw, &policy_fifo, &pc, &d), SIM_OK);
        array_source as = {.jobs = jobs, .n = sizes[k]};
        sim_source src = {.ctx = &as, .next = array_next};
        int st = sim_engine_run(e, &src, &d);
        sim_engine_destroy(e);
        int closed = fclose(fj);
        if (k == 0) {
            CHECK_EQ_I64(st, SIM_OK);
            CHECK(closed == EOF);
        } else {
            CHECK_EQ_I64(st, SIM_EIO);
            CHECK(strstr(d.msg, "jobs.csv") != NULL);
        }
    }
    world_fini(&w);
}

int main(void)
{
    test_sharing();
    test_gangs_and_rejection();
    test_fractional_replicas();
    test_failures();
    test_scripted();
    test_overcommit_refused();
    test_view_lists();
    test_properties();
    test_sjf();
    test_las();
    test_pass_equivalence();
    test_number_format();
    test_horizon();
    test_clock_end();
    test_horizon_window();
    test_makespan_rejections();
    test_sample_after_zero_jobs();
    test_tenant_gpu_hours();
    test_create_alloc_failures();
    test_check_finds();
    test_writer_blocks();
    test_write_error();
    return check_done();
}
