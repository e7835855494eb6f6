/*
 * test_gavel.c: Gavel's max-min fairness LP and the gavel policy.
 *  - A hand-solved 2-job case: job A runs at 4 (V100) or 2 (K80), job B at 2 or 1,
 *    one GPU of each: B can reach at most 2 (all its time on the V100), so the optimum
 *    is t = 2 with A entirely on the K80 and B entirely on the V100, the unique optimum.
 *  - Random instances: every row of X sums to at most 1, every type's scaled column to
 *    at most its GPUs, every entry in [0, 1], and every job reaches t.
 *  - Gavel's full allocation on equal throughputs gives every job the same share.
 *  - The rounds by hand on one GPU (tests/fixtures/gavel_rounds.csv): with nothing
 *    running an arriving job starts at once (B at 200); a round ends when its last job
 *    does (C at 250, when B ends); a job without an allocation yet (X is recomputed at
 *    most every 1920 s) still takes a GPU nobody else wants (C, D); ties of priority,
 *    deficit and X go by arrival order, so D keeps the GPU every round and E starts
 *    when D ends (1300), with no preemption.
 *  - The round's keys as the policy builds them: at a reset, of two jobs of equal
 *    priority and allocation the one with the larger deficit runs first
 *    (tests/fixtures/gavel_deficit.csv, worked out in the test).
 *  - A job without GPUs is rejected with the reason (it has no throughput on any type),
 *    and the run ends: it used to wait for a round that would never start it, and the
 *    rounds went on forever.
 *  - A cluster of more GPU types than the allocation holds (8) is refused with the
 *    limit named and status 2, also by --check (the run failed at t = 0, status 1).
 *  - A round's choice (gavel_choose, which orders only as far as it must) chooses what
 *    a full sort by priority, deficit and allocation (each from the largest down) and
 *    arrival, followed by a walk that takes each job that fits, chooses: on random
 *    entries with many ties, negative values, -0, infinities and the least subnormals,
 *    jobs that may not run on the type,
 *    jobs chosen on an earlier type, and GPUs that bind or do not.
 *  - End to end: the gavel policy replays a Gavel trace (shared data) on 36 V100 + 36
 *    P100 + 36 K80, finishing every job; skipped when the data is absent.
 */
#include "check.h"

#include "policies/gavel_lp.h"
#include "policies/gavel_round.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#define OUT "gavel_out"

static void test_hand(void)
{
    const double coef[4] = {4, 2, 2, 1}, scale[2] = {1, 1}, workers[2] = {1, 1};
    double x[4], t = 0;
    CHECK(gavel_lp_solve(2, 2, coef, scale, workers, x, &t) == SIM_OK);
    CHECK_NEAR(t, 2.0, 1e-9);
    CHECK(fabs(x[0]) < 1e-9 && fabs(x[1] - 1) < 1e-9);
    CHECK(fabs(x[2] - 1) < 1e-9 && fabs(x[3]) < 1e-9);
    CHECK(gavel_lp_solve(0, 2, coef, scale, workers, x, &t) == SIM_EINVAL);
}

static void test_random(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int bad_row = 0, bad_col = 0, bad_range = 0, bad_t = 0, solved = 0;
    for (int it = 0; it < 200; it++) {
        uint32_t n = 1 + (uint32_t)gsl_rng_uniform_int(r, 20);
        uint32_t m = 1 + (uint32_t)gsl_rng_uniform_int(r, 3);
        double coef[60], scale[20], workers[3], x[60], t = 0;
        for (uint32_t i = 0; i < n * m; i++)
            coef[i] = gsl_rng_uniform(r) < 0.1 ? 0.0 : 0.1 + 3.0 * gsl_rng_uniform(r);
        for (uint32_t i = 0; i < n; i++)
            scale[i] = (double)(1u << gsl_rng_uniform_int(r, 3));
        for (uint32_t j = 0; j < m; j++)
            workers[j] = (double)(1 + gsl_rng_uniform_int(r, 8));
        if (gavel_lp_solve(n, m, coef, scale, workers, x, &t) != SIM_OK)
            continue;
        solved++;
        for (uint32_t i = 0; i < n; i++) {
            double row = 0, got = 0;
            for (uint32_t j = 0; j < m; j++) {
                row += x[i * m + j];
                got += coef[i * m + j] * x[i * m + j];
                bad_range += x[i * m + j] < 0 || x[i * m + j] > 1;
            }
            bad_row += row > 1 + 1e-9;
            bad_t += got < t - 1e-7;
        }
        for (uint32_t j = 0; j < m; j++) {
            double col = 0;
            for (uint32_t i = 0; i < n; i++)
                col += scale[i] * x[i * m + j];
            bad_col += col > workers[j] + 1e-7;
        }
    }
    CHECK_EQ_I64(solved, 200);
    CHECK_EQ_I64(bad_row, 0);
    CHECK_EQ_I64(bad_col, 0);
    CHECK_EQ_I64(bad_range, 0);
    CHECK_EQ_I64(bad_t, 0);
    gsl_rng_free(r);
}

static void test_equal_share(void)
{
    /* 4 single-GPU jobs, 2 GPUs of one type, equal throughputs: each gets half. */
    const double tput[4] = {2.5, 2.5, 2.5, 2.5}, scale[4] = {1, 1, 1, 1}, prio[4] = {1, 1, 1, 1},
                 workers[1] = {2};
    double work[4], x[4];
    CHECK(gavel_allocation(4, 1, tput, scale, prio, workers, work, x) == SIM_OK);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(x[i], 0.5, 1e-9);
}

static void test_identical_jobs(void)
{
    /* Two identical jobs (A3C: 7.18 steps/s on a V100, 3.44 on a K80), one GPU of each:
     * normalised by the same proportional throughput (7.18 + 3.44) / 2, max-min gives
     * each half of each GPU, whatever corner the simplex reaches. */
    const double tput[4] = {7.18, 3.44, 7.18, 3.44}, scale[2] = {1, 1}, prio[2] = {1, 1},
                 workers[2] = {1, 1};
    double work[4], x[4];
    CHECK(gavel_allocation(2, 2, tput, scale, prio, workers, work, x) == SIM_OK);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(x[i], 0.5, 1e-9);
}

/* One GPU type: gavel_allocation solves the LP in closed form. On random instances
 * (up to 300 jobs of 1-8 GPUs, throughputs 0.1-3.1, priorities 0.5-2, up to 2 GPUs a job, so
 * that the GPUs bind in some and not in others) it reaches GLPK's optimum t and gives
 * the allocation GLPK's simplex gives: the least one, x_i = t / coef_i. An instance with
 * a job of no throughput is left to GLPK (t = 0). */
static void test_single_type(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    enum { N = 300 };
    static double tput[N], scale[N], prio[N], work[N], x[N], xg[N];
    int bad_t = 0, bad_x = 0, binding = 0;
    for (int it = 0; it < 300; it++) {
        uint32_t n = 1 + (uint32_t)gsl_rng_uniform_int(r, N);
        double workers[1] = {(double)(1 + gsl_rng_uniform_int(r, 2 * n))};
        for (uint32_t i = 0; i < n; i++) {
            tput[i] = 0.1 + 3.0 * gsl_rng_uniform(r);
            scale[i] = (double)(1 + gsl_rng_uniform_int(r, 8));
            prio[i] = 0.5 + 1.5 * gsl_rng_uniform(r);
        }
        CHECK(gavel_allocation(n, 1, tput, scale, prio, workers, work, x) == SIM_OK);
        double t = INFINITY, tg = 0, need = 0;
        for (uint32_t i = 0; i < n; i++) {
            t = fmin(t, work[i] * x[i]);
            need += scale[i] * x[i];
        }
        binding += need > workers[0] * (1 - 1e-12);
        CHECK(gavel_lp_solve(n, 1, work, scale, workers, xg, &tg) == SIM_OK);
        bad_t += fabs(t - tg) > 1e-9 * tg;
        for (uint32_t i = 0; i < n; i++)
            bad_x += fabs(x[i] - xg[i]) > 1e-9 || fabs(x[i] - t / work[i]) > 1e-12;
    }
    CHECK_EQ_I64(bad_t, 0);
    CHECK_EQ_I64(bad_x, 0);
    CHECK(binding > 50 && binding < 250);
    /* A job that cannot run on the type: GLPK's optimum, t = 0. */
    const double tp[2] = {2.0, 0.0}, sc[2] = {1, 1}, pr[2] = {1, 1}, w[1] = {4};
    double wk[2], xx[2];
    CHECK(gavel_allocation(2, 1, tp, sc, pr, w, wk, xx) == SIM_OK);
    CHECK(xx[0] >= 0 && xx[0] <= 1 && xx[1] >= 0 && xx[1] <= 1);
    gsl_rng_free(r);
}

/* The round's choice against a full sort and a walk. */
typedef struct ref_entry {
    double prio, deficit, alloc;
    uint64_t seq;
    uint32_t pos, sf;
} ref_entry;

static int ref_cmp(const void *pa, const void *pb)
{
    const ref_entry *a = pa, *b = pb;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->deficit != b->deficit)
        return a->deficit > b->deficit ? -1 : 1;
    if (a->alloc != b->alloc)
        return a->alloc > b->alloc ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void test_choose(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    enum { N = 3000 };
    static const double vals[] = {0.0,    -0.0,  1.0,     -1.0,     0.5,       2.0,    -2.5,
                                  1e-300, 1e300, -1e-300, INFINITY, -INFINITY, 5e-324, -5e-324};
    static ref_entry ref[N];
    static gavel_entry ent[N];
    static uint8_t pick_ref[N], pick[N];
    uint64_t rng = 1;
    int bad_pick = 0, bad_left = 0, chose = 0, stopped_short = 0, all_chosen = 0;
    for (int it = 0; it < 400; it++) {
        uint32_t n = 1 + (uint32_t)gsl_rng_uniform_int(r, it < 200 ? 40 : N);
        uint32_t nv = 1 + (uint32_t)gsl_rng_uniform_int(r, 14); /* few values: ties */
        uint32_t big = 1 + (uint32_t)gsl_rng_uniform_int(r, 8);
        for (uint32_t i = 0; i < n; i++) {
            ref_entry *e = &ref[i];
            e->prio = vals[gsl_rng_uniform_int(r, nv)];
            e->deficit = gsl_rng_uniform(r) < 0.5 ? vals[gsl_rng_uniform_int(r, nv)]
                                                  : gsl_rng_uniform(r) - 0.5;
            e->alloc = vals[gsl_rng_uniform_int(r, nv)];
            e->seq = (uint64_t)i * 7919 % 100003 + 10; /* distinct, not in list order */
            e->pos = (uint32_t)(n - 1 - i);
            e->sf =
                gsl_rng_uniform(r) < 0.1 ? GAVEL_NOT_OK : 1 + (uint32_t)gsl_rng_uniform_int(r, big);
            pick_ref[e->pos] = pick[e->pos] = gsl_rng_uniform(r) < 0.1 ? 1 : 0;
            ent[i] = (gavel_entry){.key = {gavel_key_desc(e->prio), gavel_key_desc(e->deficit),
                                           gavel_key_desc(e->alloc), e->seq},
                                   .pos = e->pos,
                                   .sf = e->sf};
        }
        /* Up to twice the GPUs the entries ask on average; one case in four just
         * below or at what all the entries that may be chosen ask together. */
        uint32_t left = (uint32_t)gsl_rng_uniform_int(r, n * (big + 1) + 2);
        if (it % 4 == 3) {
            uint32_t all = 0;
            for (uint32_t i = 0; i < n; i++)
                all += ref[i].sf != GAVEL_NOT_OK && !pick[ref[i].pos] ? ref[i].sf : 0;
            uint32_t below = (uint32_t)(it / 4 % 4);
            left = all - (below < all ? below : all);
        }
        uint32_t got = gavel_choose(ent, n, left, pick, 2, &rng);
        qsort(ref, n, sizeof *ref, ref_cmp);
        uint32_t want = left;
        for (uint32_t i = 0; i < n; i++)
            if (ref[i].sf <= want && !pick_ref[ref[i].pos]) {
                pick_ref[ref[i].pos] = 2;
                want -= ref[i].sf;
                chose++;
            }
        bad_left += got != want;
        all_chosen += it % 4 == 3 && want == 0 && left > 0;
        stopped_short += want > 0;
        for (uint32_t i = 0; i < n; i++)
            bad_pick += pick[i] != pick_ref[i];
    }
    CHECK_EQ_I64(bad_left, 0);
    CHECK_EQ_I64(bad_pick, 0);
    CHECK(chose > 1000);
    CHECK(stopped_short > 50 && stopped_short < 350); /* GPUs bound in some, not others */
    CHECK(all_chosen > 20);
    /* The key: from the largest down, -0 as +0. */
    CHECK(gavel_key_desc(2.0) < gavel_key_desc(1.0));
    CHECK(gavel_key_desc(1e-300) < gavel_key_desc(0.0));
    CHECK(gavel_key_desc(0.0) == gavel_key_desc(-0.0));
    CHECK(gavel_key_desc(-0.0) < gavel_key_desc(-1e-300));
    CHECK(gavel_key_desc(-1.0) < gavel_key_desc(-2.5));
    gsl_rng_free(r);
}

/* Run fixture tests/fixtures/NAME.csv under gavel on one GPU into OUT/NAME; jobs.csv must
 * hold each of the n rows, and summary.json that many preemptions. */
static void check_fixture(const char *name, const char *const *rows, size_t n, int preemptions)
{
    char cmd[1024], path[256], want[64];
    snprintf(cmd, sizeof cmd,
             "mkdir -p " OUT " && '" SIM_BINARY "' run --trace '" SIM_SOURCE_DIR
             "/tests/fixtures/%s.csv' --cluster 1xV100M16:1 --policy gavel --throughput none "
             "--quiet --out " OUT "/%s 2>/dev/null",
             name, name);
    CHECK(check_system(cmd) == 0);
    snprintf(path, sizeof path, OUT "/%s/jobs.csv", name);
    char *j = check_slurp(path, NULL);
    for (size_t i = 0; i < n; i++)
        CHECK(j && strstr(j, rows[i]));
    free(j);
    snprintf(path, sizeof path, OUT "/%s/summary.json", name);
    snprintf(want, sizeof want, "\"preemptions\": %d,", preemptions);
    char *s = check_slurp(path, NULL);
    CHECK(s && strstr(s, want));
    free(s);
}

static void test_rounds(void)
{
    static const char *const rows[] = {
        "\nA,,,0,done,0.000000,0.000000,100.000000,",
        "\nB,,,0,done,200.000000,200.000000,250.000000,",
        "\nC,,,0,done,210.000000,250.000000,300.000000,",
        "\nD,,,0,done,300.000000,300.000000,1300.000000,",
        "\nE,,,0,done,310.000000,1300.000000,1400.000000,",
    };
    check_fixture("gavel_rounds", rows, sizeof rows / sizeof rows[0], 0);
}

/* The keys of a round as gavel.c builds them (tests/fixtures/gavel_deficit.csv, one GPU):
 * at the reset at 3080 s, A (running since 800 s with half the GPU's time allotted
 * since the reset at 1080 s, 1000 s owed, 1080 s received: deficit -80 s) and C
 * (arrived at 2000 s, no allocation before: deficit 0) have the same priority (every
 * job's time received restarts at a reset) and the same allocation (1/2), so the larger
 * deficit, C's, runs first: C starts at 3080 s. With the deficits ordered the wrong way
 * round C starts a round later (3440 s); with priorities ordered the wrong way round C
 * starts at once at 2000 s and nothing is preempted. */
static void test_rounds_deficit(void)
{
    static const char *const rows[] = {
        "\nB,,,0,done,0.000000,0.000000,2720.000000,",
        "\nC,,,0,done,2000.000000,3080.000000,3940.000000,",
        "\nA,,,0,done,800.000000,1440.000000,4500.000000,",
    };
    check_fixture("gavel_deficit", rows, sizeof rows / sizeof rows[0], 7);
}

static void test_cpu_only(void)
{
    FILE *f = fopen("cpu_only.csv", "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("job_id,submit_time,duration,num_gpus,cpu_milli\nG,0,100,1,1000\nC,10,50,0,2000\n"
          "H,20,100,1,1000\n",
          f);
    fclose(f);
    CHECK(check_system("mkdir -p " OUT " && timeout 60 '" SIM_BINARY
                       "' run --trace cpu_only.csv --cluster 1xV100M16:1 --policy gavel "
                       "--throughput none --quiet --out " OUT "/cpu 2>/dev/null") == 0);
    char *j = check_slurp(OUT "/cpu/jobs.csv", NULL);
    CHECK(j && strstr(j, "\nC,") && strstr(j, "rejected") &&
          strstr(j, "gavel schedules GPU jobs only"));
    CHECK(j && strstr(j, "\nG,,,0,done,0.000000,0.000000,100.000000,"));
    CHECK(j && strstr(j, "\nH,,,0,done,20.000000,100.000000,200.000000,"));
    free(j);
    char *s = check_slurp(OUT "/cpu/summary.json", NULL);
    CHECK(s && strstr(s, "\"arrived\": 3, \"done\": 2, \"rejected\": 1, \"unfinished\": 0"));
    free(s);
}

/* The jobs.csv rows (header dropped), or NULL, of a gavel run on `cluster` of the trace
 * rows `row` (native columns job_id,submit_time,duration,num_gpus,replicas,cpu_milli;
 * one row, or several separated by newlines). */
static char *place_one(const char *row, const char *cluster)
{
    char trace[1024], cmd[1024];
    snprintf(trace, sizeof trace, "job_id,submit_time,duration,num_gpus,replicas,cpu_milli\n%s\n",
             row);
    check_put("gv_place.csv", trace);
    snprintf(cmd, sizeof cmd,
             "rm -rf " OUT "/place && mkdir -p " OUT " && timeout 60 '" SIM_BINARY
             "' run --trace gv_place.csv --cluster %s --policy gavel --throughput none "
             "--quiet --out " OUT "/place 2>/dev/null",
             cluster);
    CHECK(check_system(cmd) == 0);
    char *j = check_slurp(OUT "/place/jobs.csv", NULL), *nl = j ? strchr(j, '\n') : NULL;
    if (!nl) {
        free(j);
        return NULL;
    }
    memmove(j, nl + 1, strlen(nl + 1) + 1);
    return j;
}

/* Replicas share a node where its GPUs, CPU and memory allow; a job runs on a type whose
 * nodes can hold it, and one that no type can hold is rejected. Each of the first three
 * used to wait forever: the job was chosen for a type it could not be placed on. */
static void test_placement(void)
{
    char *j = place_one("R2,0,100,2,2,0", "1xV100M16:2");
    CHECK(j && strstr(j, "R2,,,0,done,0.000000,0.000000,100.000000,") == j &&
          strstr(j, ",V100M16,node-0000,"));
    free(j);
    /* 4000 milli-CPU per replica: one replica per node. */
    j = place_one("C2,0,100,2,2,8000", "2xP100:2:cpu=6000");
    CHECK(j && strstr(j, "C2,,,0,done,0.000000,0.000000,100.000000,") == j);
    free(j);
    j = place_one("W8,0,100,8,1,0", "4xK80:4,1xT4:8");
    CHECK(j && strstr(j, "W8,,,0,done,0.000000,0.000000,100.000000,") == j &&
          strstr(j, ",T4,node-0004,"));
    free(j);
    /* 8 GPUs of each type, but only one node of either holds a replica of 4. */
    j = place_one("N8,0,100,8,2,0", "2xK80:2,1xK80:4,1xT4:4,1xT4:2,1xT4:2");
    CHECK(j && strstr(j, "N8,,,0,rejected,") == j &&
          strstr(j, "no GPU type it may use has nodes that could hold all its replicas"));
    free(j);
    j = place_one("N8,0,100,8,2,0", "2xK80:2,2xK80:4,1xT4:4");
    CHECK(j && strstr(j, "N8,,,0,done,0.000000,0.000000,100.000000,") == j &&
          strstr(j, ",K80,node-0002,"));
    free(j);
}

/* Whether job `job`'s row among the jobs.csv rows j names `node` (",name,"). */
static bool ran_on(const char *j, const char *job, const char *node)
{
    char head[64];
    snprintf(head, sizeof head, "%s,", job);
    for (const char *r = j; r && *r; r = strchr(r, '\n') ? strchr(r, '\n') + 1 : NULL) {
        const char *end = strchr(r, '\n');
        size_t len = end ? (size_t)(end - r) : strlen(r);
        if (strncmp(r, head, strlen(head)) != 0)
            continue;
        char row[512];
        snprintf(row, sizeof row, "%.*s", (int)(len < sizeof row ? len : sizeof row - 1), r);
        return strstr(row, node) != NULL;
    }
    return false;
}

/* The jobs a round starts go in job-list order, each on the first nodes (by id) with
 * enough free GPUs, which the earlier starts of the round have filled in part: A (3)
 * leaves node 0 one GPU, so B (2) goes to node 1 and C (1) back to node 0; D (4) takes
 * node 2, E (2) the rest of node 1, and F (1) finds only node 3. */
static void test_first_fit(void)
{
    char *j = place_one("A,0,100,3,1,0\nB,0,100,2,1,0\nC,0,100,1,1,0\nD,0,100,4,1,0\n"
                        "E,0,100,2,1,0\nF,0,100,1,1,0",
                        "4xV100M16:4");
    CHECK(j && ran_on(j, "A", ",node-0000,") && ran_on(j, "B", ",node-0001,") &&
          ran_on(j, "C", ",node-0000,") && ran_on(j, "D", ",node-0002,") &&
          ran_on(j, "E", ",node-0001,") && ran_on(j, "F", ",node-0003,"));
    free(j);
}

/* The types a job fits are remembered for the run by everything they depend on: each
 * second job below differs from the first in one of those only (CPU, memory, GPU memory,
 * replicas, GPUs per replica, accepted types) and fits the V100 node but not the K80
 * nodes, so it must run there, though the first (which fits both) came before it. Taken
 * for the first's, it would be chosen on the K80s, all free when it comes, and never
 * start there. */
static void test_fit_memo(void)
{
    static const char *const second[] = {
        "X,50,100,1,1,16000,1024,0,",       /* CPU beyond a K80 node's */
        "X,50,100,1,1,3000,100000,0,",      /* memory beyond a K80 node's */
        "X,50,100,1,1,3000,1024,20000,",    /* GPU memory beyond a K80's */
        "X,50,100,3,3,9000,3072,0,",        /* 3 replicas: the K80 nodes' CPU holds 2 */
        "X,50,100,4,1,3000,1024,0,",        /* 4 GPUs a replica: a K80 node has 2 */
        "X,50,100,1,1,3000,1024,0,V100M32", /* the V100 type only */
    };
    for (size_t i = 0; i < sizeof second / sizeof *second; i++) {
        char trace[512], cmd[1024];
        snprintf(trace, sizeof trace,
                 "job_id,submit_time,duration,num_gpus,replicas,cpu_milli,mem_mib,gpu_mem_mib,"
                 "gpu_type\nA,0,10,1,1,3000,1024,0,\n%s\n",
                 second[i]);
        check_put("gv_fit.csv", trace);
        snprintf(cmd, sizeof cmd,
                 "rm -rf " OUT "/fit && mkdir -p " OUT " && timeout 60 '" SIM_BINARY
                 "' run --trace gv_fit.csv --cluster 2xK80:2:cpu=4000:mem=8192,"
                 "1xV100M32:8:cpu=96000:mem=786432 --policy gavel --throughput none "
                 "--stall-limit 1000 --quiet --out " OUT "/fit 2>/dev/null");
        CHECK(check_system(cmd) == 0);
        char *j = check_slurp(OUT "/fit/jobs.csv", NULL);
        bool ok = j && strstr(j, "\nX,,,0,done,") && ran_on(j, "X", ",V100M32,");
        if (!ok)
            fprintf(stderr, "test_fit_memo: %s\n", second[i]);
        CHECK(ok);
        free(j);
    }
}

/* More GPU types than gavel's allocation holds (8): the run and --check stop before the
 * run starts, with status 2 and the limit named. The run used to fail at t = 0 with a
 * bare "SIM_ELIMIT" and status 1, after --check had passed. 8 types run. */
static void test_many_types(void)
{
    check_put("gv_types.csv", "job_id,submit_time,duration,num_gpus\na,0,100,1\nb,0,100,1\n");
    static const char *const tail[2] = {"1xL4:1,1xH100:1", "1xL4:2"};
    static const char *const mode[2] = {"--check", "--quiet --out " OUT "/types"};
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 2; m++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd,
                     "rm -rf " OUT "/types && mkdir -p " OUT " && timeout 60 '" SIM_BINARY
                     "' run --trace gv_types.csv --cluster "
                     "1xV100M16:1,1xK80:1,1xP100:1,1xT4:1,1xA100:1,1xA10:1,1xA30:1,%s --policy "
                     "gavel --throughput none %s 2>" OUT "/types_err.txt",
                     tail[c], mode[m]);
            int want = c == 0 ? 2 : 0;
            CHECK_EQ_I64(check_system(cmd), want);
            char *e = check_slurp(OUT "/types_err.txt", NULL);
            if (c == 0)
                CHECK(e && strcmp(e, "clustersim: error: policy 'gavel' supports at most 8 GPU "
                                     "types; the cluster has 9\n") == 0);
            else
                CHECK(e && !strstr(e, "error"));
            free(e);
        }
}

static void test_trace(void)
{
    char path[1024];
    if (!check_shared("gavel/traces/msr_seed0/2869ce.trace.gz", path, sizeof path))
        return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p " OUT " && '%s' run --format gavel --trace '%s' --cluster "
             "9xV100M16:4,9xP100:4,9xK80:4 --policy gavel --quiet --out " OUT "/run",
             SIM_BINARY, path);
    CHECK(check_system(cmd) == 0);
    char *s = check_slurp(OUT "/run/summary.json", NULL);
    CHECK(s && strstr(s, "\"arrived\": 533, \"done\": 533, \"rejected\": 0"));
    free(s);
}

int main(void)
{
    test_hand();
    test_random();
    test_equal_share();
    test_identical_jobs();
    test_single_type();
    test_choose();
    test_rounds();
    test_rounds_deficit();
    test_cpu_only();
    test_placement();
    test_first_fit();
    test_fit_memo();
    test_many_types();
    test_trace();
    return check_done();
}
