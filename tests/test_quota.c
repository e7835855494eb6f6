/*
 * test_quota.c: the quota and fairshare policies on the engine (and placement by
 * predicted interference: a shared job goes beside a job of another class).
 *  - Reclaim by hand: tenants A and B have 4 GPUs of quota on one 8-GPU node; B starts 8
 *    one-GPU low-priority jobs at t=0 (b5..b8 borrow, on GPUs 4..7); at t=10 A's two
 *    high-priority jobs take GPUs 6 and 7 back from b8 and b7, the borrowers started
 *    last (all at t=0: the later arrivals first; 10 s of work lost each).
 *  - Reclaim order across GPUs: the borrower started last goes, whatever its GPU; with
 *    shared GPUs, victims beyond the number of GPUs; a borrower whose preemption would
 *    not make room is spared; a node short of CPU has borrowers freed though it has
 *    idle GPUs.
 *  - borrow=false: b5..b8 wait for B's quota; an oversized job is rejected.
 *  - Properties on a generated trace, checked after every event batch (all on whole
 *    seconds): jobs started within quota never exceed it; borrowing only when no
 *    high-priority job that fits its quota waits; a preempted job was a borrower of a
 *    tenant over quota; cluster invariants; every job ends; runs are reproducible.
 *  - A backlog of gangs under quotas: the same schedule whether a gang that found no room
 *    is searched at every try or only once the nodes' room could hold it.
 *  - A backlog of many shapes: the same schedule whether the low pass finds each
 *    tenant's next job through its heap of sublists or by a walk of every sublist.
 *  - Reclaims with shares, gangs and CPU-short nodes: the same schedule whether a
 *    reclaim dry-runs the nodes its bounds leave or every node.
 *  - Causality: changing the durations of the jobs running or not yet submitted at T
 *    leaves every prediction made before T unchanged.
 *  - fairshare: weights 2:6 split the first 8 GPUs 2:6; a quota of 0.25 weighs 1 GPU,
 *    as no quota does; head-of-line blocking per tenant.
 *  - 200 tenants: the jobs waiting go in tenant order, a tenant whose queue emptied and
 *    filled again included.
 */
#include "policies/place.h"
#include "policies/quota.h"
#include "policies/registry.h"

#include "base/alloc.h"
#include "sim/engine.h"
#include "base/intern.h"
#include "traces/gen.h"

#include "check.h"

#include <math.h>

typedef struct mem_source {
    job_spec *jobs;
    size_t n, next;
} mem_source;

static int mem_next(void *ctx, job_spec *job, sim_diag *d)
{
    (void)d;
    mem_source *m = ctx;
    if (m->next >= m->n)
        return 0;
    *job = m->jobs[m->next++];
    return 1;
}

static job_spec mkjob(const char *id, double submit, double dur, uint32_t gpus, uint32_t tenant,
                      int32_t prio)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    j.submit_us = (sim_time)llround(submit * 1e6);
    j.work_s = dur;
    j.num_gpus = gpus;
    j.gpu_milli = gpus ? 1000 : 0;
    j.true_milli = j.gpu_milli;
    j.tenant = tenant;
    j.priority = prio;
    j.name = "";
    j.command = "";
    return j;
}

/* A run: the engine, its outputs in memory, its quotas. */
typedef struct run {
    sim_engine *e;
    sim_intern *tenants, *types;
    cluster_spec cl;
    node_spec nodes[64];
    char *jobs_buf;
    size_t jobs_len;
    FILE *jobs;
    char summary[8192];
} run;

typedef struct probe_ctx probe_ctx;
static const sim_rate_model *g_rate; /* rate model of the next setup (NULL: none) */
static uint64_t g_node_cpu;          /* CPU of each node of the next setup (0: plenty) */

static void setup(run *r, uint32_t n_nodes, uint32_t gpus_per_node, const char *policy,
                  const char *const *opts, uint32_t n_opts, const sim_probe *probe, sim_time sample)
{
    memset(r, 0, sizeof *r);
    r->tenants = sim_intern_create(false);
    r->types = sim_intern_create(true);
    uint16_t t = (uint16_t)sim_intern_add(r->types, "V100M16", 7, 0);
    static uint64_t type_mem[2] = {0, 16384};
    for (uint32_t n = 0; n < n_nodes; n++) {
        snprintf(r->nodes[n].name, sizeof r->nodes[n].name, "n%u", n);
        r->nodes[n].num_gpus = gpus_per_node;
        r->nodes[n].gpu_type = t;
        r->nodes[n].cpu_milli = g_node_cpu ? g_node_cpu : 1000000;
        r->nodes[n].mem_mib = 1u << 30;
    }
    r->cl.n_nodes = n_nodes;
    r->cl.nodes = r->nodes;
    r->jobs = open_memstream(&r->jobs_buf, &r->jobs_len);
    sim_config cfg = {.seed = 7,
                      .sample_interval_us = sample,
                      .horizon_us = SIM_TIME_NEVER,
                      .jobs_csv = r->jobs,
                      .probes = probe,
                      .n_probes = probe ? 1 : 0};
    sim_world w = {.cluster = &r->cl,
                   .gpu_types = r->types,
                   .gpu_type_mem_mib = type_mem,
                   .tenants = r->tenants,
                   .rate = g_rate};
    policy_config pc = {.policy = policy};
    for (uint32_t i = 0; i < n_opts; i++) {
        const char *eq = strchr(opts[i], '=');
        size_t k = (size_t)(eq - opts[i]);
        memcpy(pc.key[pc.n], opts[i], k);
        pc.key[pc.n][k] = '\0';
        pc.value[pc.n++] = eq + 1;
    }
    sim_diag d = {0};
    int st = sim_engine_create(&r->e, &cfg, &w, policy_find(policy), &pc, &d);
    if (st != SIM_OK)
        fprintf(stderr, "engine: %s\n", d.msg);
    CHECK(st == SIM_OK);
}

static int finish(run *r, job_spec *jobs, size_t n)
{
    mem_source ms = {.jobs = jobs, .n = n};
    sim_source src = {.ctx = &ms, .next = mem_next};
    sim_diag d = {0};
    int st = sim_engine_run(r->e, &src, &d);
    if (st != SIM_OK)
        fprintf(stderr, "run: %s\n", d.msg);
    FILE *f = fmemopen(r->summary, sizeof r->summary - 1, "w");
    sim_engine_write_summary(r->e, f, NULL);
    fclose(f);
    fflush(r->jobs);
    return st;
}

static void teardown(run *r)
{
    sim_engine_destroy(r->e);
    fclose(r->jobs);
    free(r->jobs_buf);
    sim_intern_destroy(r->tenants);
    sim_intern_destroy(r->types);
}

/* Field `col` (0-based) of the jobs.csv row of job `id`, into out. */
static bool job_field(const run *r, const char *id, int col, char *out, size_t size)
{
    char key[80];
    snprintf(key, sizeof key, "\n%s,", id);
    const char *p = strstr(r->jobs_buf, key);
    if (!p)
        return false;
    p++;
    for (int c = 0; c < col; c++) {
        p = strchr(p, ',');
        if (!p)
            return false;
        p++;
    }
    size_t k = strcspn(p, ",\n");
    if (k >= size)
        k = size - 1;
    memcpy(out, p, k);
    out[k] = '\0';
    return true;
}

static double job_num(const run *r, const char *id, int col)
{
    char buf[64];
    return job_field(r, id, col, buf, sizeof buf) && buf[0] ? atof(buf) : NAN;
}

/* A copy of the run's jobs.csv (NULL when out of memory). */
static char *jobs_copy(const run *r)
{
    char *c = malloc(r->jobs_len + 1);
    if (c)
        memcpy(c, r->jobs_buf, r->jobs_len + 1);
    return c;
}

/* Two runs' jobs.csv are the same; both copies are freed. */
static void check_same(char *outputs[2])
{
    CHECK(outputs[0] && outputs[1] && strcmp(outputs[0], outputs[1]) == 0);
    free(outputs[0]);
    free(outputs[1]);
}

/* jobs.csv columns. */
enum { C_STATUS = 4, C_START = 6, C_WAIT = 8, C_PREEMPT = 20, C_LOST = 21, C_PRED = 22 };

static void check_reclaim(void)
{
    static const char *const opts[] = {"priority=trace", "profile_time=0", "order=submit"};
    run r;
    setup(&r, 1, 8, "quota", opts, 3, NULL, 0);
    uint32_t A = sim_intern_add(r.tenants, "A", 1, 0), B = sim_intern_add(r.tenants, "B", 1, 0);
    CHECK(sim_engine_set_quota(r.e, A, 4) == SIM_OK);
    CHECK(sim_engine_set_quota(r.e, B, 4) == SIM_OK);
    job_spec jobs[10];
    char id[16];
    for (int i = 0; i < 8; i++) {
        snprintf(id, sizeof id, "b%d", i + 1);
        jobs[i] = mkjob(id, 0, 1000, 1, B, 0);
    }
    jobs[8] = mkjob("a1", 10, 100, 1, A, 1);
    jobs[9] = mkjob("a2", 10, 100, 1, A, 1);
    CHECK(finish(&r, jobs, 10) == SIM_OK);
    CHECK_NEAR(job_num(&r, "a1", C_START), 10, 1e-9);
    CHECK_NEAR(job_num(&r, "a2", C_WAIT), 0, 1e-9);
    for (int i = 1; i <= 8; i++) {
        snprintf(id, sizeof id, "b%d", i);
        CHECK_EQ_I64(job_num(&r, id, C_PREEMPT), i == 7 || i == 8);
        CHECK_NEAR(job_num(&r, id, C_LOST), i == 7 || i == 8 ? 10.0 : 0.0, 1e-9);
    }
    /* b7 and b8 restart when A's jobs end at t=110 and redo 10 s. */
    CHECK_NEAR(job_num(&r, "b7", 7), 1110, 1e-9);
    CHECK_NEAR(job_num(&r, "b5", 7), 1000, 1e-9);
    CHECK(strstr(r.summary, "\"preemptions\": 2,") != NULL);
    CHECK(strstr(r.summary, "\"lost_gpu_hours\": 0.005556") != NULL);
    teardown(&r);
}

/* Reclaim on shared GPUs: B (no quota) borrows 2 GPUs with 20 jobs of 0.1 GPU; A's
 * whole-GPU job at t=30 needs 10 victims on one GPU, more than the cluster has GPUs. The
 * 10 most recently started go (b10..b19, all on GPU 1, though GPU 0 has the lower index). */
static void check_reclaim_shared(void)
{
    static const char *const opts[] = {"priority=trace", "profile_time=0", "order=submit"};
    run r;
    setup(&r, 1, 2, "quota", opts, 3, NULL, 0);
    uint32_t A = sim_intern_add(r.tenants, "A", 1, 0), B = sim_intern_add(r.tenants, "B", 1, 0);
    CHECK(sim_engine_set_quota(r.e, A, 1) == SIM_OK);
    job_spec jobs[21];
    char id[16];
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "b%02d", i);
        jobs[i] = mkjob(id, i, 1000, 1, B, 0);
        jobs[i].gpu_milli = jobs[i].true_milli = 100;
    }
    jobs[20] = mkjob("a1", 30, 100, 1, A, 1);
    CHECK(finish(&r, jobs, 21) == SIM_OK);
    CHECK_NEAR(job_num(&r, "a1", C_START), 30, 1e-9);
    int preempted = 0;
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "b%02d", i);
        preempted += job_num(&r, id, C_PREEMPT) == 1;
        CHECK_EQ_I64(job_num(&r, id, C_PREEMPT), i >= 10);
    }
    CHECK_EQ_I64(preempted, 10);
    teardown(&r);
}

/* Which borrowers a reclaim takes, by hand (one node; A's job needs one whole GPU). */
static void check_reclaim_order(void)
{
    static const char *const opts[] = {"priority=trace", "profile_time=0", "order=submit"};
    run r;
    /* Quotas 2 and 2 on 4 GPUs: b3 (t=1) and b4 (t=9) borrow; b4, started last, goes
     * (1 s lost), though b3's GPU has the lower index. */
    setup(&r, 1, 4, "quota", opts, 3, NULL, 0);
    uint32_t A = sim_intern_add(r.tenants, "A", 1, 0), B = sim_intern_add(r.tenants, "B", 1, 0);
    CHECK(sim_engine_set_quota(r.e, A, 2) == SIM_OK);
    CHECK(sim_engine_set_quota(r.e, B, 2) == SIM_OK);
    job_spec jobs[5] = {mkjob("b1", 0, 1000, 1, B, 0), mkjob("b2", 0, 1000, 1, B, 0),
                        mkjob("b3", 1, 1000, 1, B, 0), mkjob("b4", 9, 1000, 1, B, 0),
                        mkjob("a1", 10, 100, 1, A, 1)};
    CHECK(finish(&r, jobs, 5) == SIM_OK);
    CHECK_NEAR(job_num(&r, "a1", C_START), 10, 1e-9);
    CHECK_EQ_I64(job_num(&r, "b3", C_PREEMPT), 0);
    CHECK_EQ_I64(job_num(&r, "b4", C_PREEMPT), 1);
    CHECK_NEAR(job_num(&r, "b4", C_LOST), 1, 1e-9);
    teardown(&r);
    /* Two GPUs, B's quota 0.5: x (0.5 GPU, within quota) and y (0.5, t=9, borrows) share
     * GPU 0, z (1 GPU, t=5, borrows) has GPU 1. y is the latest, but without z A's job
     * has no whole GPU, and with z gone y need not go: only z is preempted. */
    setup(&r, 1, 2, "quota", opts, 3, NULL, 0);
    A = sim_intern_add(r.tenants, "A", 1, 0);
    B = sim_intern_add(r.tenants, "B", 1, 0);
    CHECK(sim_engine_set_quota(r.e, A, 1) == SIM_OK);
    CHECK(sim_engine_set_quota(r.e, B, 0.5) == SIM_OK);
    job_spec j2[4] = {mkjob("x", 0, 1000, 1, B, 0), mkjob("z", 5, 1000, 1, B, 0),
                      mkjob("y", 9, 1000, 1, B, 0), mkjob("a1", 10, 100, 1, A, 1)};
    j2[0].gpu_milli = j2[0].true_milli = j2[2].gpu_milli = j2[2].true_milli = 500;
    CHECK(finish(&r, j2, 4) == SIM_OK);
    CHECK_NEAR(job_num(&r, "y", C_START), 9, 1e-9);
    CHECK_NEAR(job_num(&r, "a1", C_START), 10, 1e-9);
    CHECK_EQ_I64(job_num(&r, "x", C_PREEMPT), 0);
    CHECK_EQ_I64(job_num(&r, "y", C_PREEMPT), 0);
    CHECK_EQ_I64(job_num(&r, "z", C_PREEMPT), 1);
    teardown(&r);
    /* CPU: a node of 8 cores and 4 GPUs, quotas A 2, B 1. b1 (t=1) borrows a GPU and all
     * 8 cores; a1 needs 1 core: two GPUs are idle, but b1 must go. */
    g_node_cpu = 8000;
    setup(&r, 1, 4, "quota", opts, 3, NULL, 0);
    g_node_cpu = 0;
    A = sim_intern_add(r.tenants, "A", 1, 0);
    B = sim_intern_add(r.tenants, "B", 1, 0);
    CHECK(sim_engine_set_quota(r.e, A, 2) == SIM_OK);
    CHECK(sim_engine_set_quota(r.e, B, 1) == SIM_OK);
    job_spec j3[3] = {mkjob("b0", 0, 1000, 1, B, 0), mkjob("b1", 1, 1000, 1, B, 0),
                      mkjob("a1", 10, 100, 1, A, 1)};
    j3[1].cpu_milli = 8000;
    j3[2].cpu_milli = 1000;
    CHECK(finish(&r, j3, 3) == SIM_OK);
    CHECK_NEAR(job_num(&r, "b1", C_START), 1, 1e-9);
    CHECK_NEAR(job_num(&r, "a1", C_START), 10, 1e-9);
    CHECK_EQ_I64(job_num(&r, "b0", C_PREEMPT), 0);
    CHECK_EQ_I64(job_num(&r, "b1", C_PREEMPT), 1);
    CHECK_NEAR(job_num(&r, "b1", C_LOST), 9, 1e-9);
    teardown(&r);
}

static void check_no_borrow(void)
{
    static const char *const opts[] = {"priority=trace", "profile_time=0", "order=submit",
                                       "borrow=false"};
    run r;
    setup(&r, 1, 8, "quota", opts, 4, NULL, 0);
    uint32_t A = sim_intern_add(r.tenants, "A", 1, 0), B = sim_intern_add(r.tenants, "B", 1, 0);
    sim_engine_set_quota(r.e, A, 4);
    sim_engine_set_quota(r.e, B, 4);
    job_spec jobs[11];
    char id[16];
    for (int i = 0; i < 8; i++) {
        snprintf(id, sizeof id, "b%d", i + 1);
        jobs[i] = mkjob(id, 0, 1000, 1, B, 0);
    }
    jobs[8] = mkjob("big", 1, 100, 6, B, 1);
    jobs[9] = mkjob("a1", 10, 100, 1, A, 1);
    jobs[10] = mkjob("a2", 10, 100, 1, A, 1);
    CHECK(finish(&r, jobs, 11) == SIM_OK);
    CHECK_NEAR(job_num(&r, "b4", C_START), 0, 1e-9);
    CHECK_NEAR(job_num(&r, "b5", C_START), 1000, 1e-9);
    CHECK_NEAR(job_num(&r, "a1", C_WAIT), 0, 1e-9);
    char buf[200];
    CHECK(job_field(&r, "big", C_STATUS, buf, sizeof buf) && strcmp(buf, "rejected") == 0);
    CHECK(strstr(r.jobs_buf, "\"policy quota: needs 6.000 GPUs, more than its tenant's quota of "
                             "4.000 (borrowing is off)\"\n") != NULL);
    CHECK(strstr(r.summary, "\"preemptions\": 0,") != NULL);
    teardown(&r);
}

/* ---- Properties ------------------------------------------------------------------- */

#define MAXJ 4096
struct probe_ctx {
    sim_engine *e;
    uint64_t samples, bad_quota, bad_borrow, bad_victim, bad_check, borrows, reclaims, hp_waits;
    /* Per job id (engine slot): state seen at the previous sample. */
    uint32_t prev_preempt[MAXJ];
    bool prev_victim_ok[MAXJ];
    uint64_t prev_seq[MAXJ];
};

static uint64_t demand(const sim_job *j)
{
    return (uint64_t)j->spec.num_gpus * j->spec.gpu_milli;
}

static void prop_sample(void *vctx, const sim_view *v, double *out)
{
    probe_ctx *c = vctx;
    out[0] = 0;
    c->samples++;
    sim_diag d;
    if (sim_engine_check(c->e, &d) != SIM_OK)
        c->bad_check++;
    uint64_t within[16] = {0};
    bool started_borrower = false;
    for (sim_job_id id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        bool b = policy_quota_job_is_borrower(v, id);
        if (!b && j->spec.tenant < 16)
            within[j->spec.tenant] += (uint64_t)j->replicas * j->gpus_per_replica * j->share_milli;
        if (b && j->last_start_us == v->now) {
            started_borrower = true;
            c->borrows++;
        }
    }
    for (uint32_t t = 0; t < 16 && t < v->n_tenants; t++)
        if ((double)within[t] > v->tenant_quota_gpus[t] * 1000 + 1e-6)
            c->bad_quota++;
    bool hp_waiting = false;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
        const sim_job *j = sim_view_job(v, id);
        uint32_t t = j->spec.tenant;
        if (policy_quota_job_is_high(v, id) && !policy_quota_job_is_profiling(v, id) &&
            (double)(v->tenant_used_milli[t] + demand(j)) <= v->tenant_quota_gpus[t] * 1000)
            hp_waiting = true;
    }
    c->hp_waits += hp_waiting;
    if (started_borrower && hp_waiting)
        c->bad_borrow++;
    /* Preemptions since the previous sample hit jobs that were borrowers of over-quota
     * tenants then. A preempted job is pending again; slots are recycled, so the job's
     * arrival number identifies it. */
    for (int list = 0; list < 2; list++)
        for (sim_job_id id = list ? v->running_head : v->pending_head; id != SIM_JOB_NONE;
             id = sim_view_next(v, id)) {
            const sim_job *j = sim_view_job(v, id);
            if (id >= MAXJ)
                continue;
            if (c->prev_seq[id] == j->seq + 1 && j->preemptions > c->prev_preempt[id]) {
                c->reclaims++;
                if (!c->prev_victim_ok[id])
                    c->bad_victim++;
            }
            c->prev_seq[id] = j->seq + 1;
            c->prev_preempt[id] = j->preemptions;
            uint32_t t = j->spec.tenant;
            c->prev_victim_ok[id] =
                j->state == SIM_JOB_RUNNING && policy_quota_job_is_borrower(v, id) &&
                (double)v->tenant_used_milli[t] > v->tenant_quota_gpus[t] * 1000;
        }
}

static size_t gen_jobs(job_spec *out, char (*names)[64], char (*cmds)[128], size_t n, uint64_t seed,
                       sim_intern *tenants)
{
    trace_gen_config gc;
    trace_gen_config_default(&gc);
    gc.jobs = n;
    gc.seed = seed;
    gc.tenants = 4;
    gc.arrival_rate_h = 120;
    gc.duration_median_s = 600;
    gc.frac_cpu_only = 0;
    gc.frac_share = 0;
    sim_intern *models = sim_intern_create(false);
    trace_gen *g;
    sim_diag d;
    CHECK(trace_gen_create(&g, &gc, tenants, models, NULL, &d) == SIM_OK);
    size_t k = 0;
    job_spec j;
    sim_time last = 0;
    while (k < n && trace_gen_next(g, &j, &d) == 1) {
        /* Whole seconds, so every event falls on a sample. */
        j.submit_us = (j.submit_us / SIM_US_PER_S) * SIM_US_PER_S;
        if (j.submit_us < last)
            j.submit_us = last;
        last = j.submit_us;
        j.work_s = j.work_s < 1 ? 1 : round(j.work_s);
        snprintf(names[k], 64, "%s", j.name);
        snprintf(cmds[k], 128, "%s", j.command);
        j.name = names[k];
        j.command = cmds[k];
        out[k++] = j;
    }
    trace_gen_destroy(g);
    sim_intern_destroy(models);
    return k;
}

/* Quotas q[t] (GPUs) for the generator's tenants t00..t03. */
static void set_quotas(run *r, const double q[4])
{
    for (uint32_t t = 0; t < 4; t++)
        sim_engine_set_quota(
            r->e, sim_intern_find(r->tenants, (char[]){'t', '0', (char)('0' + t)}, 3), q[t]);
}

/* ---- Gangs that found no room ------------------------------------------------------ */

/* A backlog of gangs (2 to 8 replicas) under quotas, with borrowing and reclaims: a gang
 * that failed is searched again only once the room of the nodes could hold it
 * (place_gang_room_enable), and the schedule is the same as when every try searches. */
static void check_gang_room(void)
{
    enum { N = 600 };
    static job_spec jobs[N];
    static char names[N][64], cmds[N][128];
    char *outputs[2] = {NULL, NULL};
    for (int rep = 0; rep < 2; rep++) {
        place_gang_room_enable(rep == 1);
        run r;
        setup(&r, 8, 8, "quota", NULL, 0, NULL, 0);
        size_t n = gen_jobs(jobs, names, cmds, N, 11, r.tenants);
        for (size_t i = 0; i < n; i++)
            if (jobs[i].num_gpus && i % 3 != 0) {
                uint32_t reps = 2u << (i % 3); /* 2, 4 or 8 */
                jobs[i].replicas = reps;
                jobs[i].num_gpus *= reps;
                jobs[i].cpu_milli *= reps;
                jobs[i].mem_mib *= reps;
                jobs[i].submit_us /= 8; /* a backlog */
            }
        /* Arrival order kept after the squeeze. */
        for (size_t i = 1; i < n; i++)
            if (jobs[i].submit_us < jobs[i - 1].submit_us)
                jobs[i].submit_us = jobs[i - 1].submit_us;
        static const double q[4] = {24, 16, 16, 8};
        set_quotas(&r, q);
        CHECK(finish(&r, jobs, n) == SIM_OK);
        CHECK(strstr(r.summary, "\"unfinished\": 0") != NULL);
        outputs[rep] = jobs_copy(&r);
        teardown(&r);
    }
    place_gang_room_enable(true);
    check_same(outputs);
}

static void check_properties(void)
{
    enum { N = 1500 };
    static job_spec jobs[N];
    static char names[N][64], cmds[N][128];
    static const char *const opts[] = {"priority=qos", "profile_time=120", "retrain_interval=7200",
                                       "min_history=20", "learner=ridge"};
    static const char *const pnames[1] = {"check"};
    char *outputs[2] = {NULL, NULL};
    for (int rep = 0; rep < 2; rep++) {
        static probe_ctx pc;
        memset(&pc, 0, sizeof pc);
        sim_probe probe = {.n = 1, .names = pnames, .ctx = &pc, .sample = prop_sample};
        run r;
        setup(&r, 4, 8, "quota", opts, 5, &probe, SIM_US_PER_S);
        pc.e = r.e;
        /* Tenants t00..t03 interned by the generator; quotas 12, 8, 8, 4 GPUs. */
        size_t n = gen_jobs(jobs, names, cmds, N, 5, r.tenants);
        static const double q[4] = {12, 8, 8, 4};
        set_quotas(&r, q);
        CHECK(finish(&r, jobs, n) == SIM_OK);
        CHECK(strstr(r.summary, "\"unfinished\": 0") != NULL);
        CHECK(strstr(r.summary, "\"rejected\": 0") != NULL);
        CHECK_EQ_I64(pc.bad_check, 0);
        CHECK_EQ_I64(pc.bad_quota, 0);
        CHECK_EQ_I64(pc.bad_borrow, 0);
        CHECK_EQ_I64(pc.bad_victim, 0);
        /* The run exercised what is checked. */
        CHECK(pc.samples > 10000);
        CHECK(pc.borrows > 50);
        CHECK(pc.reclaims > 5);
        outputs[rep] = jobs_copy(&r);
        teardown(&r);
    }
    check_same(outputs);
}

/* ---- The low pass's heap of sublists ------------------------------------------------- */

/* A backlog of many shapes (GPUs x replicas x CPU) on a cluster short of CPU, where most
 * of a pass's tries fail: the low pass takes the same jobs through its heap of sublists
 * as by a walk of every sublist at each candidate, with borrowing and without (then
 * quota usage, not only room, takes sublists out of a pass), by prediction and by
 * arrival (jobs arriving together, so that keys tie). */
static void check_low_heap(void)
{
    enum { N = 1200 };
    static job_spec jobs[N];
    static char names[N][64], cmds[N][128];
    static const char *const variants[][2] = {
        {"priority=all", "learner=ridge"},
        {"borrow=false", "learner=ridge"},
        {"order=submit", "priority=hash"},
    };
    for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
        char *outputs[2] = {NULL, NULL};
        uint64_t started[2] = {0, 0};
        for (int rep = 0; rep < 2; rep++) {
            quota_low_heap_enable(rep == 0);
            g_node_cpu = 24000;
            run r;
            setup(&r, 8, 8, "quota", variants[k], 2, NULL, 0);
            g_node_cpu = 0;
            size_t n = gen_jobs(jobs, names, cmds, N, 21 + k, r.tenants);
            for (size_t i = 0; i < n; i++) {
                uint32_t reps = 1u + (uint32_t)(i % 4); /* 1 to 4 */
                jobs[i].replicas = reps;
                jobs[i].num_gpus = (1u + (uint32_t)(i * 7 % 5)) * reps;
                jobs[i].cpu_milli = (2000 + 1000 * (uint64_t)(i % 6)) * reps;
                jobs[i].mem_mib *= reps;
                jobs[i].submit_us /= 10; /* a backlog */
                /* By arrival, jobs that arrive together tie in key: arrival order decides. */
                if (k == 2)
                    jobs[i].submit_us -= jobs[i].submit_us % (30 * SIM_US_PER_S);
            }
            static const double q[4] = {20, 16, 12, 8};
            set_quotas(&r, q);
            CHECK(finish(&r, jobs, n) == SIM_OK);
            CHECK(strstr(r.summary, "\"unfinished\": 0") != NULL);
            for (size_t i = 0; i < n; i++)
                started[rep] += !isnan(job_num(&r, jobs[i].id, C_START));
            outputs[rep] = jobs_copy(&r);
            teardown(&r);
        }
        quota_low_heap_enable(true);
        /* The runs placed jobs (none rejected without borrowing: every demand fits its
         * tenant's quota), and identically. */
        CHECK(started[0] > N / 2);
        CHECK_EQ_I64((int64_t)started[0], (int64_t)started[1]);
        check_same(outputs);
    }
}

/* ---- Reclaims by bound ---------------------------------------------------------------- */

/* Every job high priority, quotas short of the cluster: borrowers run while a tenant is
 * under its quota, and its next jobs reclaim. Shares of a GPU, several GPUs and gangs
 * (the cost of a node is then a sum over its GPUs, and a chosen node may fail with the
 * others' victims), on nodes short of CPU: a reclaim that dry-runs only the nodes its
 * bounds leave chooses the nodes a dry run of every node does. */
static void check_reclaim_bound(void)
{
    enum { N = 2400 };
    static job_spec jobs[N];
    static char names[N][64], cmds[N][128];
    static const char *const opts[] = {"priority=all", "learner=ridge"};
    /* Variant 1: 48 nodes, GPU memory asked, and 19 distinct shares, more replica
     * requests than the reclaim keeps bounds for, so they evict each other. Variant 2:
     * 64 nodes, whole GPUs, one replica of 1 or 2: few requests, each reclaimed for
     * again and again, so a node a reclaim dry-ran and did not choose, unchanged, must
     * be found again by the next (the memo's tree takes it back). */
    for (int k = 0; k < 3; k++) {
        char *outputs[3] = {NULL, NULL, NULL};
        /* Rep 2: the bounds again, the memo's serials wrapping a few requests in. */
        for (int rep = 0; rep < 3; rep++) {
            quota_reclaim_bound_enable(rep != 1);
            quota_dry_serial_first(rep == 2 ? UINT32_MAX - 3 : 0);
            g_node_cpu = 40000;
            run r;
            setup(&r, k == 2 ? 64 : k ? 48 : 8, 8, "quota", opts, 2, NULL, 0);
            g_node_cpu = 0;
            size_t n = gen_jobs(jobs, names, cmds, k ? N : 1500, 31 + (uint64_t)k, r.tenants);
            for (size_t i = 0; k == 2 && i < n; i++) {
                jobs[i].replicas = 1;
                jobs[i].num_gpus = 1 + (uint32_t)(i % 2);
                jobs[i].submit_us /= 8;
            }
            for (size_t i = 0; k < 2 && i < n; i++) {
                if (k == 0 && i % 5 == 1)
                    jobs[i].gpu_milli = jobs[i].true_milli = 250 + 250 * (uint32_t)(i % 3);
                if (k == 1 && i % 3 == 1)
                    jobs[i].gpu_milli = jobs[i].true_milli = 50 + 50 * (uint32_t)(i % 19);
                if (k == 1 && i % 4 == 0)
                    jobs[i].gpu_mem_mib = 2048 + 2048 * (uint64_t)(i % 6);
                if (k == 1)
                    jobs[i].submit_us /= 6; /* a backlog on the larger cluster */
                if (i % 7 == 3 && jobs[i].num_gpus <= 4) {
                    jobs[i].replicas = 2;
                    jobs[i].num_gpus *= 2;
                    jobs[i].cpu_milli *= 2;
                    jobs[i].mem_mib *= 2;
                }
            }
            static const double q[3][4] = {{24, 16, 16, 8}, {144, 96, 96, 48}, {192, 128, 128, 64}};
            set_quotas(&r, q[k]);
            CHECK(finish(&r, jobs, n) == SIM_OK);
            CHECK(strstr(r.summary, "\"unfinished\": 0") != NULL);
            /* The run reclaimed, often. */
            const char *pre = strstr(r.summary, "\"preemptions\": ");
            CHECK(pre && atol(pre + 16) > 50);
            if (rep == 0 && pre)
                printf("reclaim bound, variant %d: %ld preemptions\n", k, atol(pre + 16));
            outputs[rep] = jobs_copy(&r);
            teardown(&r);
        }
        quota_reclaim_bound_enable(true);
        quota_dry_serial_first(0);
        CHECK(outputs[1] && outputs[2] && strcmp(outputs[1], outputs[2]) == 0);
        free(outputs[2]);
        check_same(outputs);
    }
}

/* ---- Causality --------------------------------------------------------------------- */

static void check_causality(void)
{
    enum { N = 1200 };
    static job_spec a[N], b[N];
    static char names[N][64], cmds[N][128];
    static const char *const opts[] = {"priority=qos", "profile_time=0", "retrain_interval=3600",
                                       "min_history=10", "history=512"};
    run r;
    setup(&r, 4, 8, "quota", opts, 5, NULL, 0);
    size_t n = gen_jobs(a, names, cmds, N, 9, r.tenants);
    for (uint32_t t = 0; t < 4; t++)
        sim_engine_set_quota(r.e,
                             sim_intern_find(r.tenants, (char[]){'t', '0', (char)('0' + t)}, 3), 8);
    CHECK(finish(&r, a, n) == SIM_OK);
    /* T: the submission of job 700; every job ending after T in run a changes. */
    sim_time T = a[700].submit_us;
    size_t changed = 0;
    for (size_t i = 0; i < n; i++) {
        b[i] = a[i];
        double end = job_num(&r, a[i].id, 7);
        if (end * 1e6 > (double)T) {
            b[i].work_s = a[i].work_s * 3 + 7;
            changed++;
        }
    }
    CHECK(changed > 300);
    run r2;
    setup(&r2, 4, 8, "quota", opts, 5, NULL, 0);
    for (uint32_t t = 0; t < 4; t++) {
        char nm[4] = {'t', '0', (char)('0' + t), 0};
        sim_intern_add(r2.tenants, nm, 3, 0);
        sim_engine_set_quota(r2.e, sim_intern_find(r2.tenants, nm, 3), 8);
    }
    CHECK(finish(&r2, b, n) == SIM_OK);
    size_t before = 0, same = 0, predicted = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].submit_us >= T)
            continue;
        before++;
        double pa = job_num(&r, a[i].id, C_PRED), pb = job_num(&r2, a[i].id, C_PRED);
        predicted += !isnan(pa);
        same += (isnan(pa) && isnan(pb)) || pa == pb;
    }
    CHECK(before == 700);
    CHECK(predicted > 650);
    CHECK_EQ_I64(same, before);
    /* The durations changed did change later predictions. */
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i].submit_us > T && job_num(&r, a[i].id, C_PRED) != job_num(&r2, a[i].id, C_PRED))
            differ++;
    CHECK(differ > 100);
    teardown(&r);
    teardown(&r2);
}

static void check_fairshare(void)
{
    run r;
    setup(&r, 1, 8, "fairshare", NULL, 0, NULL, 0);
    uint32_t A = sim_intern_add(r.tenants, "A", 1, 0), B = sim_intern_add(r.tenants, "B", 1, 0);
    sim_engine_set_quota(r.e, A, 2);
    sim_engine_set_quota(r.e, B, 6);
    job_spec jobs[17];
    char id[16];
    for (int i = 0; i < 8; i++) {
        snprintf(id, sizeof id, "a%d", i + 1);
        jobs[i] = mkjob(id, 0, 100 + i, 1, A, 0);
    }
    for (int i = 0; i < 8; i++) {
        snprintf(id, sizeof id, "b%d", i + 1);
        jobs[8 + i] = mkjob(id, 0, 100 + i, 1, B, 0);
    }
    CHECK(finish(&r, jobs, 16) == SIM_OK);
    int a_started = 0, b_started = 0;
    for (int i = 1; i <= 8; i++) {
        snprintf(id, sizeof id, "a%d", i);
        a_started += job_num(&r, id, C_START) == 0;
        snprintf(id, sizeof id, "b%d", i);
        b_started += job_num(&r, id, C_START) == 0;
    }
    CHECK_EQ_I64(a_started, 2);
    CHECK_EQ_I64(b_started, 6);
    teardown(&r);
    /* A quota under one GPU weighs one GPU, as no quota does: A (0.25) and B (none) split
     * 4 GPUs 2:2 (A weighed 0.25 before and got 1). */
    setup(&r, 1, 4, "fairshare", NULL, 0, NULL, 0);
    A = sim_intern_add(r.tenants, "A", 1, 0);
    B = sim_intern_add(r.tenants, "B", 1, 0);
    sim_engine_set_quota(r.e, A, 0.25);
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "a%d", i + 1);
        jobs[i] = mkjob(id, 0, 100 + i, 1, A, 0);
        snprintf(id, sizeof id, "b%d", i + 1);
        jobs[4 + i] = mkjob(id, 0, 100 + i, 1, B, 0);
    }
    CHECK(finish(&r, jobs, 8) == SIM_OK);
    a_started = b_started = 0;
    for (int i = 1; i <= 4; i++) {
        snprintf(id, sizeof id, "a%d", i);
        a_started += job_num(&r, id, C_START) == 0;
        snprintf(id, sizeof id, "b%d", i);
        b_started += job_num(&r, id, C_START) == 0;
    }
    CHECK_EQ_I64(a_started, 2);
    CHECK_EQ_I64(b_started, 2);
    teardown(&r);
    /* Head of line: A's 4-GPU job waits for room; B's small jobs go on meanwhile. */
    setup(&r, 1, 8, "fairshare", NULL, 0, NULL, 0);
    A = sim_intern_add(r.tenants, "A", 1, 0);
    B = sim_intern_add(r.tenants, "B", 1, 0);
    jobs[0] = mkjob("fill", 0, 50, 6, B, 0);
    jobs[1] = mkjob("a_big", 1, 10, 4, A, 0);
    jobs[2] = mkjob("a_small", 2, 10, 1, A, 0);
    jobs[3] = mkjob("b_small", 3, 10, 1, B, 0);
    CHECK(finish(&r, jobs, 4) == SIM_OK);
    CHECK_NEAR(job_num(&r, "a_big", C_START), 50, 1e-9);
    CHECK_NEAR(job_num(&r, "a_small", C_START), 50, 1e-9);
    CHECK_NEAR(job_num(&r, "b_small", C_START), 3, 1e-9);
    teardown(&r);
}

/* ---- Interference ---------------------------------------------------------------- */

/* A job is slowed by 1 / (1 + sum of its neighbours' shares, weighted 1 for the same
 * model class and 0.1 for another). */
static double fake_interference(void *ctx, const job_spec *self, uint32_t self_milli,
                                const sim_resident *others, uint32_t n, uint16_t gpu_type)
{
    (void)ctx;
    (void)self_milli;
    (void)gpu_type;
    double x = 0;
    for (uint32_t i = 0; i < n; i++)
        x += others[i].milli / 1000.0 * (others[i].job->model == self->model ? 1.0 : 0.1);
    return 1.0 / (1.0 + x);
}

typedef struct icost_ctx {
    double on_own, on_other; /* cost for X on its own GPU and on Y's, at t = 0 */
    bool seen;
} icost_ctx;

static void icost_sample(void *vctx, const sim_view *v, double *out)
{
    icost_ctx *c = vctx;
    out[0] = 0;
    if (c->seen || v->now != 0)
        return;
    for (sim_job_id id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id))
        if (strcmp(sim_view_job(v, id)->spec.id, "X") == 0) {
            c->on_own = sim_view_interference_cost(v, id, 0, 500);
            c->on_other = sim_view_interference_cost(v, id, 1, 500);
            c->seen = true;
        }
}

static void check_interference(void)
{
    sim_rate_model rate = {.name = "test", .interference = fake_interference};
    static const char *const pnames[1] = {"icost"};
    for (int pack = 0; pack < 2; pack++) {
        const char *opts[] = {"profile_time=0", pack ? "placement=pack" : "placement=interference"};
        icost_ctx ic = {0};
        sim_probe probe = {.n = 1, .names = pnames, .ctx = &ic, .sample = icost_sample};
        g_rate = &rate;
        run r;
        setup(&r, 2, 1, "quota", opts, 2, &probe, SIM_US_PER_S);
        g_rate = NULL;
        uint32_t A = sim_intern_add(r.tenants, "A", 1, 0);
        sim_engine_set_quota(r.e, A, 2);
        job_spec jobs[3] = {mkjob("X", 0, 1000, 1, A, 0), mkjob("Y", 0, 1000, 1, A, 0),
                            mkjob("Z", 1, 1000, 1, A, 0)};
        jobs[0].gpu_milli = jobs[1].gpu_milli = 500;
        jobs[2].gpu_milli = 400;
        jobs[0].model = jobs[2].model = 1;
        jobs[1].model = 2;
        CHECK(finish(&r, jobs, 3) == SIM_OK);
        char node[16];
        CHECK(job_field(&r, "X", 19, node, sizeof node) && strcmp(node, "n0") == 0);
        CHECK(job_field(&r, "Y", 19, node, sizeof node) && strcmp(node, pack ? "n0" : "n1") == 0);
        CHECK(job_field(&r, "Z", 19, node, sizeof node) && strcmp(node, "n1") == 0);
        if (!pack) {
            /* X beside Y (another class): each loses 1 - 1/1.05. */
            CHECK(ic.seen);
            CHECK_NEAR(ic.on_own, 0.0, 0);
            CHECK_NEAR(ic.on_other, 2 * (1 - 1 / 1.05), 1e-12);
        }
        teardown(&r);
    }
}

/* ---- Many tenants ------------------------------------------------------------------ */

/* A pass visits only the tenants with a queued job, in tenant order. 200 tenants (four
 * words of the set), one GPU: jobs of tenants 199, 130, 65 and 3 queue behind a job of
 * tenant 0; with no GPU held at each choice, ties go to the lowest tenant, so they
 * start at 10, 20, 30, 40 s in the order 3, 65, 130, 199. Tenant 65's queue empties at
 * 20 s and fills again at 25 s: at 30 s that job goes before 130's. Run with the low
 * queues (no quotas) and the high ones (a quota each, high priority). */
static void check_many_tenants(void)
{
    for (int high = 0; high < 2; high++) {
        static const char *const opts[] = {"profile_time=0", "order=submit"};
        run r;
        setup(&r, 1, 1, "quota", opts, 2, NULL, 0);
        uint32_t t[200];
        char name[16];
        for (int i = 0; i < 200; i++) {
            int k = snprintf(name, sizeof name, "T%03d", i);
            t[i] = sim_intern_add(r.tenants, name, (size_t)k, 0);
            CHECK_EQ_I64(t[i], t[0] + (uint32_t)i);
            if (high)
                sim_engine_set_quota(r.e, t[i], 1);
        }
        int32_t prio = high;
        job_spec jobs[] = {
            mkjob("fill", 0, 10, 1, t[0], prio),   mkjob("j199", 1, 10, 1, t[199], prio),
            mkjob("j130", 2, 10, 1, t[130], prio), mkjob("j65", 3, 10, 1, t[65], prio),
            mkjob("j3", 4, 10, 1, t[3], prio),     mkjob("j65b", 25, 10, 1, t[65], prio)};
        CHECK(finish(&r, jobs, sizeof jobs / sizeof *jobs) == SIM_OK);
        static const char *const order[] = {"j3", "j65", "j65b", "j130", "j199"};
        for (int i = 0; i < 5; i++)
            CHECK_NEAR(job_num(&r, order[i], C_START), 10.0 * (i + 1), 1e-9);
        CHECK(strstr(r.summary, "\"preemptions\": 0,") != NULL);
        teardown(&r);
    }
}

int main(void)
{
    check_interference();
    check_reclaim();
    check_reclaim_shared();
    check_reclaim_order();
    check_no_borrow();
    check_properties();
    check_gang_room();
    check_low_heap();
    check_reclaim_bound();
    check_causality();
    check_fairshare();
    check_many_tenants();
    return check_done();
}
