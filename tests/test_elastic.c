/*
 * test_elastic.c: elastic trainers.
 *  - the Pollux profile model and reader on a hand-made profile (hand-computed work,
 *    iteration times, bounds) and their bad-input diagnostics;
 *  - the elastic policy on hand-computed schedules: scale-out stops at max_replicas and
 *    at the threshold, the free trainer goes to the lowest completion score, scale-in
 *    takes the highest score first and never goes below min_replicas, the work lost to
 *    scale-in since the last checkpoint; a trainer never grown onto a GPU the job holds;
 *  - random elastic traces: invariants after every event, every job accounted for,
 *    identical bytes for identical seeds, no scale-out beyond the threshold;
 *  - impossible bounds in a native trace (min > max, parameter servers without
 *    trainers) are file:line errors;
 *  - masters and parameter servers: where each role goes, the job waiting until all of
 *    it fits, roles held through scaling and stopped with a failed node, CPU counted in
 *    the utilisation, random traces with roles under every policy.
 */
#include "models/catalog.h"
#include "models/pollux.h"
#include "policies/elastic.h"
#include "policies/place.h"
#include "sim/policy.h"
#include "sim/engine.h"
#include "traces/curves.h"
#include "traces/trace.h"

#include "array_source.h"
#include "check.h"

#include <gsl/gsl_rng.h>

extern const policy_ops policy_elastic, policy_rigid_min, policy_static, policy_optimus;
extern const policy_ops policy_fifo, policy_binpack;

#define FIX SIM_SOURCE_DIR "/tests/fixtures/pollux"

/* ---- Pollux profiles and reader -------------------------------------------------- */

static void test_pollux_model(void)
{
    model_pollux *p = NULL;
    sim_diag d = {0};
    CHECK_EQ_I64(model_pollux_load(&p, FIX, &d), SIM_OK);
    if (!p)
        return;
    int a = model_pollux_app(p, "bert", 4);
    CHECK(a >= 0);
    CHECK(model_pollux_app(p, "cifar10", 7) < 0); /* no folder in the fixture */
    /* validation-24: 99 iterations at its 2nd epoch (bert: max_epochs 2); 18 lies
     * between 12 (199) and 24 (99): (6*99 + 6*199)/12 = 149. */
    CHECK_NEAR(model_pollux_iterations(p, a, 24), 99, 1e-12);
    CHECK_NEAR(model_pollux_iterations(p, a, 18), 149, 1e-12);
    CHECK(isnan(model_pollux_iterations(p, a, 30)));
    /* Two trainers at 24: local 12, no accumulation, placement "2" at 12: 1.2 s. One
     * trainer: local 24 > max_local 12, one accumulation step of 12: 1.0 + (1.0 - 0). */
    CHECK_NEAR(model_pollux_iter_time(p, a, 2, 24), 1.2, 1e-12);
    CHECK_NEAR(model_pollux_iter_time(p, a, 1, 24), 2.0, 1e-12);
    /* Two trainers at 16: local 8, halfway between 4 and 12 on placement "2": 0.9 s. */
    CHECK_NEAR(model_pollux_iter_time(p, a, 2, 16), 0.9, 1e-12);
    /* The scaling hook: bert jobs by their profile, others by Amdahl (p = 0.9). */
    sim_intern *models = sim_intern_create(false);
    uint32_t bert = sim_intern_add(models, "bert", 4, 0);
    uint32_t other = sim_intern_add(models, "other", 5, 0);
    model_scaling sc;
    sim_rate_model rm;
    model_scaling_init(&sc, p, models, 0.9, NULL, &rm);
    job_spec j;
    memset(&j, 0, sizeof j);
    j.model = bert;
    j.attr[SIM_ATTR_BATCH_SIZE] = 24;
    j.attr_present = UINT64_C(1) << SIM_ATTR_BATCH_SIZE;
    CHECK_NEAR(rm.scaling(rm.ctx, &j, 1, 2), 1.2 / 2.0, 1e-12);
    CHECK_NEAR(rm.scaling(rm.ctx, &j, 2, 2), 1.0, 1e-12);
    j.model = other;
    /* amdahl(4)/amdahl(2) = (0.1 + 0.45)/(0.1 + 0.225) = 0.55/0.325 */
    CHECK_NEAR(rm.scaling(rm.ctx, &j, 4, 2), 0.55 / 0.325, 1e-12);
    CHECK(rm.throughput == NULL && rm.interference == NULL);
    sim_intern_destroy(models);
    model_pollux_destroy(p);
    /* A folder without any application is an error naming it. */
    CHECK_EQ_I64(model_pollux_load(&p, FIX "/workloads", &d), SIM_EIO);
    CHECK(p == NULL);
}

/* A profiles folder `dir` with one application, bert: its placements.csv, its
 * scalability.csv and its validation runs (NULL: none), each file's text. */
static void put_profiles(const char *dir, const char *placements, const char *scalability,
                         const char *validation)
{
    char path[256];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/bert", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/bert/placements.csv", dir);
    check_put(path, placements);
    if (scalability) {
        snprintf(path, sizeof path, "%s/bert/scalability.csv", dir);
        check_put(path, scalability);
    }
    if (validation) {
        snprintf(path, sizeof path, "%s/bert/validation-3200.csv", dir);
        check_put(path, validation);
    }
}

static const char pl_head[] = "placement,local_bsz,step_time,sync_time\n";
static const char sc_head[] = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
static const char va_ok[] = "progress,iteration,metric,grad_sqr,grad_var\n"
                            "100.0,49,5.0,1.0,1.0\n200.0,99,4.0,1.0,1.0\n";

/* Beyond 16 trainers (four nodes of four) the time of an iteration comes from the
 * scalability table: the rows of that trainer count on the node count nearest to
 * ceil(n/4), else linear in n between the nearest measured counts, else the one
 * measured count on one side. At a global batch of 8n every trainer runs a local batch
 * of 8, halfway between the rows' 4 and 12, with no accumulation. */
static void test_pollux_scalability(void)
{
    put_profiles("ps",
                 "placement,local_bsz,step_time,sync_time\n"
                 "1,4,0.5,0.0\n1,12,1.0,0.0\n4444,4,2.0,0.5\n4444,12,3.0,1.0\n",
                 "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                 "6,24,4,4.0,1.0\n6,24,12,6.0,2.0\n"
                 "8,32,4,8.0,2.0\n8,32,12,10.0,3.0\n"
                 "16,48,4,20.0,5.0\n16,48,12,24.0,6.0\n",
                 va_ok);
    model_pollux *p = NULL;
    sim_diag d = {0};
    CHECK_EQ_I64(model_pollux_load(&p, "ps", &d), SIM_OK);
    if (!p)
        return;
    int a = model_pollux_app(p, "bert", 4);
    CHECK(a >= 0);
    static const struct {
        uint32_t n;
        double t;
    } want[] = {
        {1, 0.75},  /* placement 1 */
        {16, 2.5},  /* placement 4444 */
        {20, 5.0},  /* no 20-trainer rows, none measured below: the 24-trainer rows */
        {24, 5.0},  /* 6 nodes, measured */
        {28, 7.0},  /* halfway between 24 (5.0) and 32 (9.0) */
        {32, 9.0},  /* 8 nodes, measured */
        {48, 22.0}, /* 12 nodes wanted, measured on 16 only: the nearest */
        {64, 22.0}, /* none measured above: the 48-trainer rows */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double t = model_pollux_iter_time(p, a, want[i].n, 8.0 * want[i].n);
        if (fabs(t - want[i].t) > 1e-12) {
            check_failed++;
            fprintf(stderr, "%s:%d: %u trainers: %.17g s, expected %.17g s\n", __FILE__, __LINE__,
                    want[i].n, t, want[i].t);
        } else {
            check_passed++;
        }
    }
    model_pollux_destroy(p);

    /* Without a scalability table, counts beyond the placements take the 16-trainer
     * placement; without that either, the table's first row. */
    put_profiles("ps2",
                 "placement,local_bsz,step_time,sync_time\n"
                 "1,4,0.5,0.0\n1,12,1.0,0.0\n4444,4,2.0,0.5\n4444,12,3.0,1.0\n",
                 sc_head, va_ok);
    CHECK_EQ_I64(model_pollux_load(&p, "ps2", &d), SIM_OK);
    if (p) {
        CHECK_NEAR(model_pollux_iter_time(p, model_pollux_app(p, "bert", 4), 32, 256), 2.5, 1e-12);
        model_pollux_destroy(p);
    }
    put_profiles("ps3", "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.0\n1,12,1.0,0.0\n",
                 sc_head, va_ok);
    CHECK_EQ_I64(model_pollux_load(&p, "ps3", &d), SIM_OK);
    if (p) {
        CHECK_NEAR(model_pollux_iter_time(p, model_pollux_app(p, "bert", 4), 32, 256), 0.5, 1e-12);
        model_pollux_destroy(p);
    }
}

/* Each malformed profile file is refused with its file:line:column and what was
 * expected. */
static void test_pollux_profiles_bad(void)
{
    static const char pl_ok[] = "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.0\n";
    static const struct {
        const char *pl, *sc, *va;
        int st;
        const char *msg;
    } cases[] = {
        {"", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:1: error: empty file, expected header "
         "'placement,local_bsz,step_time,sync_time'"},
        {"placement,local_bsz,step_time\n1,4,0.5\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:1: error: expected header "
         "'placement,local_bsz,step_time,sync_time', got \"placement,local_bsz,step_time\""},
        {"placement,local_bsz,step_time,sync_time\n1,4,abc,0.0\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:2:3: error: expected a number, got \"abc\""},
        {"placement,local_bsz,step_time,sync_time\n1,4,0.5\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:2:4: error: expected 4 fields, as in the header, got fewer"},
        {"placement,local_bsz,step_time,sync_time\n1,4,0.5,0.0,9\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:2:5: error: expected 4 fields, as in the header, got more"},
        {"placement,local_bsz,step_time,sync_time\n1,4,inf,0.0\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:2:3: error: expected a number, got \"inf\""},
        {"placement,local_bsz,step_time,sync_time\n1,0,0.5,0.0\n", sc_head, va_ok, SIM_EPARSE,
         "pb/bert/placements.csv:2: error: expected positive values"},
        {pl_head, sc_head, va_ok, SIM_EPARSE,
         "pb/bert/scalability.csv: error: no placements for bert"},
        {pl_ok, NULL, va_ok, SIM_EIO,
         "pb/bert/scalability.csv: error: cannot open: No such file or directory"},
        {pl_ok, "num_nodes,num_replicas,local_bsz,step_time,sync_time\n8,32,4,-1,1\n", va_ok,
         SIM_EPARSE, "pb/bert/scalability.csv:2: error: expected positive values"},
        {pl_ok, sc_head, NULL, SIM_EPARSE, "pb: error: bert: no validation-<B>.csv files"},
        {pl_ok, sc_head, "progress,iteration,metric,grad_sqr,grad_var\n100.0,49,5.0,1.0,1.0\n",
         SIM_EPARSE, "pb/bert/validation-3200.csv: error: 1 epochs, bert needs 2"},
        {pl_ok, sc_head, "progress,iteration,metric,grad_sqr,grad_var\n", SIM_EPARSE,
         "pb/bert/validation-3200.csv: error: no epochs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* A fresh folder each time: no file of an earlier case is left behind. */
        if (system("rm -rf pb") != 0)
            check_failed++;
        put_profiles("pb", cases[i].pl, cases[i].sc, cases[i].va);
        model_pollux *p = NULL;
        sim_diag d = {0};
        int st = model_pollux_load(&p, "pb", &d);
        char msg[512];
        sim_diag_format(&d, msg, sizeof msg);
        if (st != cases[i].st || p != NULL || strcmp(msg, cases[i].msg) != 0) {
            check_failed++;
            fprintf(stderr,
                    "%s:%d: case %zu: status %d (expected %d)\n  got:      %s\n"
                    "  expected: %s\n",
                    __FILE__, __LINE__, i, st, cases[i].st, msg, cases[i].msg);
        } else {
            check_passed++;
        }
        model_pollux_destroy(p);
    }
    /* A line longer than the reader's line is refused, not split into two rows: its
     * first 511 bytes are a row ("1,4,0.5,0.000..."), and so is the rest. */
    char text[800];
    int k = snprintf(text, sizeof text, "%s1,4,0.5,0.", pl_head);
    while (k < (int)sizeof pl_head - 1 + 511)
        text[k++] = '0';
    snprintf(text + k, sizeof text - (size_t)k, "1,12,1.0,0.0\n");
    if (system("rm -rf pb") != 0)
        check_failed++;
    put_profiles("pb", text, sc_head, va_ok);
    model_pollux *p = NULL;
    sim_diag d = {0};
    CHECK_EQ_I64(model_pollux_load(&p, "pb", &d), SIM_EPARSE);
    char msg[512];
    sim_diag_format(&d, msg, sizeof msg);
    CHECK_STR(msg, "pb/bert/placements.csv:2: error: line longer than 510 bytes");
    /* A bad field is quoted up to 40 bytes. */
    char wide[700];
    k = snprintf(wide, sizeof wide, "%s1,4,", pl_head);
    while (k < 200)
        wide[k++] = 'x';
    snprintf(wide + k, sizeof wide - (size_t)k, ",0.0\n");
    if (system("rm -rf pb") != 0)
        check_failed++;
    put_profiles("pb", wide, sc_head, va_ok);
    CHECK_EQ_I64(model_pollux_load(&p, "pb", &d), SIM_EPARSE);
    sim_diag_format(&d, msg, sizeof msg);
    CHECK_STR(msg, "pb/bert/placements.csv:2:3: error: expected a number, got "
                   "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"");
    model_pollux_destroy(p);
}

/* The published profiles give a finite, positive iteration time for every trainer count
 * Pollux's simulator allows and every validated batch size that count can run. */
static void test_pollux_published(void)
{
    char buf[1100];
    const char *data = check_shared("pollux_adaptdl/traces", buf, sizeof buf);
    if (!data)
        return;
    model_pollux *p = NULL;
    sim_diag d = {0};
    CHECK_EQ_I64(model_pollux_load(&p, data, &d), SIM_OK);
    if (!p)
        return;
    static const char *const apps[] = {"bert",     "cifar10", "deepspeech2",
                                       "imagenet", "ncf",     "yolov3"};
    uint32_t bad = 0, tried = 0;
    for (size_t k = 0; k < sizeof apps / sizeof apps[0]; k++) {
        int a = model_pollux_app(p, apps[k], strlen(apps[k]));
        CHECK(a >= 0);
        if (a < 0)
            continue;
        uint32_t bmin, bmax, lmin;
        model_pollux_batch_range(p, a, &bmin, &bmax, &lmin);
        for (uint32_t n = 1; n <= MODEL_POLLUX_MAX_REPLICAS; n++)
            for (uint32_t b = bmin; b <= bmax; b += (bmax - bmin) / 16 + 1) {
                if ((double)b / n < lmin)
                    continue;
                double t = model_pollux_iter_time(p, a, n, b);
                tried++;
                if (!(t > 0) || !isfinite(t)) {
                    if (bad++ < 5)
                        fprintf(stderr, "%s: %u trainers at batch %u: %g s\n", apps[k], n, b, t);
                }
            }
    }
    CHECK(tried > 1000);
    CHECK_EQ_I64(bad, 0);
    model_pollux_destroy(p);
}

/* Read a trace; returns the status and fills up to 4 jobs; diag formatted. */
static int read_trace(const char *path, const char *format, const char *opt, job_spec *out, int *n,
                      char *diag, size_t dsize)
{
    model_catalog *cat = NULL;
    sim_diag d = {0};
    if (model_catalog_load(&cat, model_catalog_default_path(), &d) != SIM_OK)
        return -100;
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    const char *opts[1] = {opt};
    trace_options o = {.format = format,
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(cat),
                       .opts = opts,
                       .n_opts = opt ? 1 : 0};
    trace_reader *r = NULL;
    int st = trace_reader_open(&r, path, &o, &d);
    *n = 0;
    if (st == SIM_OK) {
        job_spec j;
        while ((st = trace_reader_next(r, &j, &d)) == 1)
            if (*n < 4)
                out[(*n)++] = j;
    }
    diag[0] = '\0';
    if (st < 0)
        sim_diag_format(&d, diag, dsize);
    trace_reader_close(r);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    model_catalog_destroy(cat);
    return st;
}

static void test_pollux_reader(void)
{
    job_spec j[4];
    int n;
    char diag[1024];
    /* The default profiles folder is traces/ beside the workload's folder: the fixture
     * has bert/ there, not traces/, so it is named. */
    int st =
        read_trace(FIX "/workloads/good.csv", "pollux", "profiles=" FIX, j, &n, diag, sizeof diag);
    CHECK_EQ_I64(st, 0);
    CHECK_EQ_I64(n, 2);
    if (n == 2) {
        CHECK_STR(j[0].id, "bert-0");
        CHECK_EQ_I64(j[0].submit_us, 5000000);
        CHECK_NEAR(j[0].work_s, 99 * 1.2, 1e-12);
        CHECK_EQ_I64(j[0].num_gpus, 2);
        CHECK_EQ_I64(j[0].replicas, 2);
        CHECK_NEAR(j[0].attr[SIM_ATTR_MIN_REPLICAS], 1, 0);
        CHECK_NEAR(j[0].attr[SIM_ATTR_MAX_REPLICAS], 6, 0); /* 24 / min local 4 */
        /* 18 on one trainer: local 18 > 12: one accumulation step of 9 (cap 18/2): 4 and
         * 12 interpolated at 9 on placement "1": 0.8125 s; x2 = 1.625 s; 149 steps. */
        CHECK_NEAR(j[1].work_s, 149 * 1.625, 1e-12);
        CHECK_NEAR(j[1].attr[SIM_ATTR_MAX_REPLICAS], 4, 0); /* 18 / 4 */
    }
    st = read_trace(FIX "/workloads/bad_app.csv", "pollux", "profiles=" FIX, j, &n, diag,
                    sizeof diag);
    CHECK_EQ_I64(st, SIM_EPARSE);
    CHECK(strstr(diag, "bad_app.csv:3:3: error: field 'application'") != NULL);
    CHECK(strstr(diag, "\"nope\"") != NULL);
    st = read_trace(FIX "/workloads/bad_batch.csv", "pollux", "profiles=" FIX, j, &n, diag,
                    sizeof diag);
    CHECK_EQ_I64(st, SIM_EPARSE);
    CHECK(strstr(diag, "bad_batch.csv:3:5: error: field 'batch_size': expected an integer "
                       "12..24") != NULL);
    /* An arrival out of order is named at its time column, as in the other formats. */
    st = read_trace(FIX "/workloads/bad_order.csv", "pollux", "profiles=" FIX, j, &n, diag,
                    sizeof diag);
    CHECK_EQ_I64(st, SIM_EPARSE);
    CHECK(strstr(diag, "bad_order.csv:3:2: error: job 'bert-1': submit time 7.000000 s is before "
                       "50.000000 s of line 2") != NULL);
    /* Without profiles the reader says where it looked and what to give. */
    st = read_trace(FIX "/workloads/good.csv", "pollux", NULL, j, &n, diag, sizeof diag);
    CHECK_EQ_I64(st, SIM_EINVAL);
    CHECK(strstr(diag, "profiles=DIR") != NULL);
    /* Impossible bounds in a native trace: max_replicas below min_replicas. */
    char path[] = "/tmp/test_elastic_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs("job_id,submit_time,duration,num_gpus,min_replicas,max_replicas\n"
              "a,0,10,2,1,4\n"
              "b,1,10,2,3,2\n",
              f);
        fclose(f);
        st = read_trace(path, NULL, NULL, j, &n, diag, sizeof diag);
        CHECK_EQ_I64(st, SIM_EPARSE);
        CHECK(strstr(diag, ":3:6: error: field 'max_replicas'") != NULL);
        unlink(path);
    }
}

/* ---- The policy on small worlds --------------------------------------------------- */

typedef struct world {
    sim_intern *types, *tenants;
    uint64_t type_mem[4];
    cluster_spec cl;
    node_spec nodes[8];
} world;

static void world_init(world *w, uint32_t n_nodes, uint32_t gpus_per_node)
{
    memset(w, 0, sizeof *w);
    w->types = sim_intern_create(true);
    sim_intern_add(w->types, "A", 1, 0);
    w->type_mem[1] = 16384;
    w->tenants = sim_intern_create(false);
    w->cl.n_nodes = n_nodes;
    w->cl.nodes = w->nodes;
    for (uint32_t i = 0; i < n_nodes; i++) {
        snprintf(w->nodes[i].name, sizeof w->nodes[i].name, "n%u", i);
        w->nodes[i].cpu_milli = 64000;
        w->nodes[i].mem_mib = 262144;
        w->nodes[i].num_gpus = gpus_per_node;
        w->nodes[i].gpu_type = 1;
    }
}

static void world_fini(world *w)
{
    sim_intern_destroy(w->types);
    sim_intern_destroy(w->tenants);
}


/* A job of `gpus` one-GPU replicas; elastic when lo/hi are not 0. */
static job_spec ejob(const char *id, double submit_s, double work_s, uint32_t gpus, uint32_t lo,
                     uint32_t hi)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    j.submit_us = (sim_time)llround(submit_s * 1e6);
    j.work_s = work_s;
    j.num_gpus = gpus;
    j.replicas = gpus;
    j.gpu_milli = j.true_milli = SIM_MILLI_GPU;
    j.name = "";
    j.command = "";
    if (lo) {
        j.attr[SIM_ATTR_MIN_REPLICAS] = lo;
        j.attr[SIM_ATTR_MAX_REPLICAS] = hi;
        j.attr_present =
            (UINT64_C(1) << SIM_ATTR_MIN_REPLICAS) | (UINT64_C(1) << SIM_ATTR_MAX_REPLICAS);
    }
    return j;
}

/* Demand curves of the next runs (NULL: none). */
static const sim_curves *g_curves;

/* The one-point demand curve pts[0] of a service named "svc". */
static sim_curves svc_curve(sim_curve_point *pts)
{
    static char *names[1] = {"svc"};
    static uint32_t first[1] = {0}, count[1] = {1};
    return (sim_curves){
        .n = 1, .names = names, .first = first, .count = count, .pts = pts, .n_pts = 1};
}

/* One more policy option for the next runs (key NULL: none). */
static const char *g_opt_key, *g_opt_val;

/* A node outage in the next runs (when `on`). */
static struct {
    bool on;
    uint32_t node;
    sim_time down_us, up_us;
} g_fail;

typedef struct run_out {
    int status;
    sim_diag d;
    char *jobs, *summary;
    size_t jobs_len, summary_len;
    sim_summary sum;
} run_out;

/* The next runs' --restart-penalty, seconds. */
static double g_penalty_s;

static run_out run(world *w, const job_spec *jobs, size_t n, const policy_ops *pol,
                   const char *threshold, double horizon_s, double ckpt_s)
{
    run_out r;
    memset(&r, 0, sizeof r);
    FILE *fj = open_memstream(&r.jobs, &r.jobs_len);
    sim_config cfg = {.seed = 1,
                      .horizon_us =
                          horizon_s > 0 ? (sim_time)llround(horizon_s * 1e6) : SIM_TIME_NEVER,
                      .checkpoint_interval_s = ckpt_s,
                      .restart_penalty_s = g_penalty_s,
                      .jobs_csv = fj,
                      .check_invariants = true,
                      .elastic_outputs = pol->elastic_outputs};
    sim_world sw = {.cluster = &w->cl,
                    .gpu_types = w->types,
                    .gpu_type_mem_mib = w->type_mem,
                    .tenants = w->tenants,
                    .curves = g_curves,
                    .trace_path = "trace.csv"};
    policy_config pc = {.policy = pol->name};
    if (threshold) {
        snprintf(pc.key[0], sizeof pc.key[0], "threshold");
        pc.value[0] = threshold;
        pc.n = 1;
    }
    if (g_opt_key) {
        snprintf(pc.key[pc.n], sizeof pc.key[pc.n], "%s", g_opt_key);
        pc.value[pc.n] = g_opt_val;
        pc.n++;
    }
    sim_engine *e;
    r.status = sim_engine_create(&e, &cfg, &sw, pol, &pc, &r.d);
    if (r.status == SIM_OK && g_fail.on)
        r.status = sim_engine_add_failure(e, g_fail.node, g_fail.down_us, g_fail.up_us, &r.d);
    if (r.status == SIM_OK) {
        array_source as = {.jobs = jobs, .n = n};
        sim_source src = {.ctx = &as, .next = array_next};
        r.status = sim_engine_run(e, &src, &r.d);
        r.sum = *sim_engine_summary(e);
        FILE *fs = open_memstream(&r.summary, &r.summary_len);
        sim_engine_write_summary(e, fs, NULL);
        fclose(fs);
        sim_engine_destroy(e);
    }
    fclose(fj);
    return r;
}

static void run_out_free(run_out *o)
{
    free(o->jobs);
    free(o->summary);
}

/* Field k (0-based) of job id's row in jobs.csv. */
static const char *jfield(const run_out *r, const char *id, int k, char *buf, size_t size)
{
    buf[0] = '\0';
    char key[80];
    snprintf(key, sizeof key, "\n%.63s,", id);
    const char *p = r->jobs ? strstr(r->jobs, key) : NULL;
    if (!p)
        return buf;
    p++;
    for (int i = 0; i < k && p; i++) {
        p = strpbrk(p, ",\n");
        if (!p || *p == '\n')
            return buf;
        p++;
    }
    size_t len = strcspn(p, ",\n");
    if (len >= size)
        len = size - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* jobs.csv columns used here. */
enum {
    F_STATUS = 4,
    F_START = 6,
    F_END = 7,
    F_PREEMPT = 20,
    F_REPLICAS = 14,
    F_LOST = 21,
    F_REASON = 24,
    F_RMIN = 25,
    F_RMAX,
    F_RMEAN,
    F_SCALE
};

#define CHECK_F(r, id, k, want)                                                                    \
    do {                                                                                           \
        char b_[64];                                                                               \
        CHECK_STR(jfield(r, id, k, b_, sizeof b_), want);                                          \
    } while (0)

static void test_schedules(void)
{
    world w;
    world_init(&w, 1, 8);
    /* Alone on 8 GPUs with threshold 1: the job grows at the first trigger (t=0) to its
     * max of 3 and no further. Work 300 at nominal 1 replica -> speed 3 -> ends at 100. */
    job_spec a = ejob("a", 0, 300, 1, 1, 3);
    run_out r = run(&w, &a, 1, &policy_elastic, "1", 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_RMAX, "3");
    CHECK_F(&r, "a", F_RMIN, "1");
    CHECK_F(&r, "a", F_END, "100.000000");
    CHECK_F(&r, "a", F_SCALE, "2");
    /* The mean is time-weighted: 3 trainers all the time (the grow happens at t=0). */
    CHECK_F(&r, "a", F_RMEAN, "3.000000");
    run_out_free(&r);
    /* rigid-min never scales: 300 s at one trainer. */
    r = run(&w, &a, 1, &policy_rigid_min, NULL, 0, 0);
    CHECK_F(&r, "a", F_END, "300.000000");
    CHECK_F(&r, "a", F_RMAX, "1");
    run_out_free(&r);
    world_fini(&w);

    /* 10 GPUs, threshold 0.7 (7 GPUs). t=0: a (1..9) starts with 1 and grows to 7, not 9:
     * the threshold stops it. t=10: b (1..3) and rigid c, d start (1 GPU each): 10 GPUs.
     * t=30: c ends (9). t=60: above the threshold: scale in from the highest score: a
     * (score 6/8) loses one (8 GPUs), a still has the highest score (5/8 vs b's 0) and
     * loses another (7): at the threshold, stop. t=110: d ends (6). t=120: one trainer
     * fits under the threshold; b (score 0) goes before a (score 4/8): b grows to 2.
     * The horizon (200 s) ends the run. */
    world_init(&w, 1, 10);
    job_spec js[4] = {ejob("a", 0, 1e6, 1, 1, 9), ejob("b", 10, 1e6, 1, 1, 3),
                      ejob("c", 10, 20, 1, 0, 0), ejob("d", 10, 100, 1, 0, 0)};
    r = run(&w, js, 4, &policy_elastic, "0.7", 200, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "c", F_END, "30.000000");
    CHECK_F(&r, "d", F_END, "110.000000");
    CHECK_F(&r, "a", F_STATUS, "unfinished");
    CHECK_F(&r, "a", F_RMAX, "7");
    CHECK_F(&r, "a", F_RMIN, "1");
    CHECK_F(&r, "a", F_REPLICAS, "1"); /* nominal */
    CHECK_F(&r, "a", F_SCALE, "8");    /* 6 grows, 2 scale-ins */
    CHECK_F(&r, "b", F_RMAX, "2");
    CHECK_F(&r, "b", F_RMIN, "1");
    CHECK_F(&r, "b", F_SCALE, "1");
    /* a: 7 trainers 0..60, 5 from 60 to the horizon: (420 + 700)/200. */
    CHECK_F(&r, "a", F_RMEAN, "5.600000");
    CHECK_EQ_I64(r.sum.scale_events, 9);
    /* Scale-in without checkpoints loses a's whole segment: 60 s at speed 7. */
    CHECK_NEAR(r.sum.scale_lost_work_s, 420, 1e-12);
    CHECK_F(&r, "a", F_LOST, "420.000000");
    /* The run's lost work includes it, and its GPU time: 60 s on 7 GPUs. */
    CHECK_NEAR(r.sum.lost_work_s, 420, 1e-12);
    CHECK_NEAR(r.sum.lost_gpu_seconds, 420, 1e-12);
    run_out_free(&r);
    /* resize=checkpoint: the same scaling, nothing lost. */
    g_opt_key = "resize";
    g_opt_val = "checkpoint";
    r = run(&w, js, 4, &policy_elastic, "0.7", 200, 0);
    g_opt_key = NULL;
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_RMAX, "7");
    CHECK_F(&r, "a", F_SCALE, "8");
    CHECK_F(&r, "b", F_RMAX, "2");
    CHECK_NEAR(r.sum.scale_lost_work_s, 0, 0);
    CHECK_F(&r, "a", F_LOST, "0.000000");
    run_out_free(&r);
    world_fini(&w);

    /* Scale-in stops at min_replicas. 8 GPUs, threshold 0.5: a (2..4, nominal 2) grows
     * to 4 at t=0; rigid r (4 GPUs) starts at t=10: 8 > 4 GPUs. At t=60 a shrinks to 3,
     * then 2 (its min) and stops although the cluster stays above the threshold. With
     * 25 s checkpoints the first scale-in loses 60 mod 25 = 10 s at speed 2 (4 of a
     * nominal 2 trainers) = 20; the second, at once after the restart, nothing. */
    world_init(&w, 1, 8);
    job_spec ms[2] = {ejob("a", 0, 1e6, 2, 2, 4), ejob("r", 10, 1e6, 4, 0, 0)};
    r = run(&w, ms, 2, &policy_elastic, "0.5", 100, 25);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_RMIN, "2");
    CHECK_F(&r, "a", F_RMAX, "4");
    CHECK_F(&r, "a", F_SCALE, "4");
    CHECK_NEAR(r.sum.scale_lost_work_s, 20, 1e-12);
    CHECK(strstr(r.summary, "\"elastic\": {\"scale_events\": 4, \"scale_in_lost_work_s\": "
                            "20.000000,") != NULL);
    run_out_free(&r);
    world_fini(&w);
}

/* elastic: every adjustable job grows, however many there are per GPU. Five jobs of one
 * trainer at a tenth of a GPU (1..2 trainers) on 2 GPUs: 25 % allocated, 50 % with all
 * grown, under the 0.9 threshold: each grows to 2 at t=0 and ends at 1000 / 2 = 500
 * (the scratch list once held as many jobs as GPUs: only two grew). */
static void test_many_per_gpu(void)
{
    world w;
    world_init(&w, 1, 2);
    job_spec js[5];
    for (int k = 0; k < 5; k++) {
        char id[8];
        snprintf(id, sizeof id, "j%d", k + 1);
        js[k] = ejob(id, 0, 1000, 1, 1, 2);
        js[k].gpu_milli = js[k].true_milli = 100;
    }
    run_out r = run(&w, js, 5, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    for (int k = 0; k < 5; k++) {
        CHECK_F(&r, js[k].id, F_RMAX, "2");
        CHECK_F(&r, js[k].id, F_END, "500.000000");
    }
    run_out_free(&r);
    world_fini(&w);
}

/* elastic grows a job only onto GPUs it does not hold: a job of a tenth of a GPU (1..2
 * trainers) on one GPU stays at 1 and ends at 1000 (it grew a second trainer on the same
 * GPU and ended at 500); on two GPUs it grows onto the other one and ends at 500. */
static void test_grow_other_gpu(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec j = ejob("j", 0, 1000, 1, 1, 2);
    j.gpu_milli = j.true_milli = 100;
    run_out r = run(&w, &j, 1, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "j", F_RMAX, "1");
    CHECK_F(&r, "j", F_END, "1000.000000");
    run_out_free(&r);
    world_fini(&w);
    world_init(&w, 1, 2);
    r = run(&w, &j, 1, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "j", F_RMAX, "2");
    CHECK_F(&r, "j", F_END, "500.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* static runs an offline job at max_replicas or as many as the offline nodes hold, node
 * by node: a replica of 3 GPUs (1..4 replicas) on 3 nodes of 4 GPUs gets 3, one per node
 * (12 GPUs / 3 = 4 never placed: the job used to wait for ever), and ends at 1000 / 3.
 * By CPU: one node of 4 GPUs and 8 cores holds two replicas of 3 cores, GPU or not: a
 * (one GPU per replica) runs with 2 to 500, then the CPU-only c with 2 to 1000. */
static void test_static_fit(void)
{
    world w;
    world_init(&w, 3, 4);
    job_spec a = ejob("a", 0, 1000, 3, 1, 4);
    a.replicas = 1;
    run_out r = run(&w, &a, 1, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_STATUS, "done");
    CHECK_F(&r, "a", F_RMAX, "3");
    CHECK_F(&r, "a", F_END, "333.333334");
    run_out_free(&r);
    world_fini(&w);
    world_init(&w, 1, 4);
    w.nodes[0].cpu_milli = 8000;
    job_spec js[2] = {ejob("a", 0, 1000, 1, 1, 4), ejob("c", 0, 1000, 0, 1, 4)};
    js[1].replicas = 1;
    js[0].cpu_milli = js[1].cpu_milli = 3000;
    r = run(&w, js, 2, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_RMAX, "2");
    CHECK_F(&r, "a", F_END, "500.000000");
    CHECK_F(&r, "c", F_RMAX, "2");
    CHECK_F(&r, "c", F_START, "500.000000");
    CHECK_F(&r, "c", F_END, "1000.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* static with the services' peak above the cluster's GPUs: the slice takes every node
 * with GPUs, but not n1, which has none (it was taken too, from the end, so the CPU-only
 * job c waited for ever); the offline GPU job a, which no node left to offline jobs can
 * hold, is rejected with the reason instead of waiting for ever. */
static void test_static_slice(void)
{
    static sim_curve_point pts[1] = {{0, 8}};
    sim_curves c = svc_curve(pts);
    g_curves = &c;
    world w;
    world_init(&w, 2, 4);
    w.nodes[1].num_gpus = 0;
    w.nodes[1].gpu_type = 0;
    job_spec js[3] = {ejob("svc", 0, 100, 1, 1, 8), ejob("a", 0, 100, 1, 1, 2),
                      ejob("c", 0, 100, 0, 0, 0)};
    js[0].qos = SIM_QOS_LS;
    js[2].replicas = 1;
    js[2].cpu_milli = 1000;
    run_out r = run(&w, js, 3, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "svc", F_STATUS, "done");
    CHECK_F(&r, "c", F_STATUS, "done");
    CHECK_F(&r, "c", F_END, "100.000000");
    CHECK_F(&r, "a", F_STATUS, "rejected");
    CHECK(r.jobs && strstr(r.jobs, "policy static: the nodes not reserved for the services' peak "
                                   "hold 0 of its 1 replicas"));
    run_out_free(&r);
    world_fini(&w);
    g_curves = NULL;
}

/* A job that held its replicas for no time (zero work) reports the count it held as its
 * mean, like its min and max (it used to report a mean of 0 beside 4 and 4); a job that
 * never started reports 0 for all three. */
static void test_zero_duration_mean(void)
{
    world w;
    world_init(&w, 1, 4);
    job_spec js[2] = {ejob("z", 0, 0, 4, 0, 0), ejob("big", 0, 10, 8, 8, 8)};
    run_out r = run(&w, js, 1, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "z", F_STATUS, "done");
    CHECK_F(&r, "z", F_RMIN, "4");
    CHECK_F(&r, "z", F_RMAX, "4");
    CHECK_F(&r, "z", F_RMEAN, "4.000000");
    run_out_free(&r);
    r = run(&w, js, 2, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "big", F_STATUS, "rejected");
    CHECK_F(&r, "big", F_RMAX, "0");
    CHECK_F(&r, "big", F_RMEAN, "0.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* optimus, by hand (speed = trainers / nominal 1): at t=0 both jobs get their min (1),
 * then the two free GPUs go to a, whose remaining time a trainer cuts most (1000 (1 -
 * 1/2) = 500 vs b's 50, then 1000 (1/2 - 1/3) = 167 vs 50). b ends at 100; the round at
 * 120 gives a all 4: 360 done by 120, 640 / 4 = 160 s more -> a ends at 280. */
static void test_optimus(void)
{
    world w;
    world_init(&w, 1, 4);
    job_spec js[2] = {ejob("a", 0, 1000, 1, 1, 4), ejob("b", 0, 100, 1, 1, 4)};
    run_out r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "b", F_END, "100.000000");
    CHECK_F(&r, "b", F_RMAX, "1");
    CHECK_F(&r, "a", F_END, "280.000000");
    CHECK_F(&r, "a", F_RMAX, "4");
    /* 3 trainers to 120, 4 to 280 (it starts at its min and grows at once). */
    CHECK_F(&r, "a", F_RMEAN, "3.571429");
    run_out_free(&r);
    /* With no offline job done (a horizon of 10 s cuts both), the offline mean JCT is
     * null, not 0. */
    r = run(&w, js, 2, &policy_optimus, NULL, 10, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK(r.summary && strstr(r.summary, "\"offline_done\": 0, \"offline_jct_mean_s\": null"));
    run_out_free(&r);
    /* a (1000) alone gets 4; b (100) arrives at 30 and waits for the round at 60: a's
     * 760 left beat b's 100 for the two spare GPUs, so a shrinks to 3 and b gets 1 (ends
     * 160). At 180 a (400 left) gets 4: ends 280. With resize=lossy the shrink at 60
     * restarts a from scratch (no periodic checkpoints): 240 lost, same allocations
     * (a's 1000 left still wins), 4 trainers at 180 with 640 left: ends 340. */
    js[1].submit_us = 30000000;
    r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "b", F_END, "160.000000");
    CHECK_F(&r, "a", F_END, "280.000000");
    /* 4 trainers to 60, 3 to 180, 4 to 280. */
    CHECK_F(&r, "a", F_RMEAN, "3.571429");
    CHECK_NEAR(r.sum.scale_lost_work_s, 0, 0);
    run_out_free(&r);
    g_opt_key = "resize";
    g_opt_val = "lossy";
    r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "b", F_END, "160.000000");
    CHECK_F(&r, "a", F_END, "340.000000");
    CHECK_F(&r, "a", F_LOST, "240.000000");
    CHECK_NEAR(r.sum.scale_lost_work_s, 240, 1e-12);
    CHECK_NEAR(r.sum.lost_work_s, 240, 1e-12);
    run_out_free(&r);
    /* A restarting shrink pays the restart penalty, as every restart does: 30 s more of
     * a's work, run at 4 trainers after 180: 670 left there, ends at 347.5. */
    g_penalty_s = 30;
    r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    g_penalty_s = 0;
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_LOST, "240.000000");
    CHECK_F(&r, "a", F_END, "347.500000");
    run_out_free(&r);
    g_opt_val = "sometimes";
    r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_EINVAL);
    CHECK(strstr(r.d.msg, "resize") != NULL && strstr(r.d.msg, "lossy, checkpoint") != NULL);
    run_out_free(&r);
    g_opt_key = NULL;
    world_fini(&w);
}

/* optimus: every job reached gets its min before any gets more. One node of 4 GPUs and 8
 * cores, trainers of 3 cores: a (1..4) and c (1) both start at 0 with one trainer (a's
 * second would take the cores c's min needs: a used to start with 2 and c waited to 540
 * with GPUs idle); both end at 1000. */
static void test_optimus_mins_first(void)
{
    world w;
    world_init(&w, 1, 4);
    w.nodes[0].cpu_milli = 8000;
    job_spec js[2] = {ejob("a", 0, 1000, 1, 1, 4), ejob("c", 0, 1000, 1, 0, 0)};
    js[0].cpu_milli = js[1].cpu_milli = 3000;
    run_out r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "c", F_START, "0.000000");
    CHECK_F(&r, "c", F_END, "1000.000000");
    CHECK_F(&r, "a", F_RMAX, "1");
    CHECK_F(&r, "a", F_END, "1000.000000");
    run_out_free(&r);
    world_fini(&w);
}

/* optimus: a job without GPUs takes none of the GPU budget. One GPU: CPU job c (1000 s)
 * and GPU job g (100 s) both start at 0 (g used to wait for c, which was counted as a
 * GPU); a second CPU job d, arriving at 10, starts at the next round (60) beside them. */
static void test_optimus_cpu(void)
{
    world w;
    world_init(&w, 1, 1);
    job_spec js[3] = {ejob("c", 0, 1000, 0, 0, 0), ejob("g", 0, 100, 1, 0, 0),
                      ejob("d", 10, 50, 0, 0, 0)};
    js[0].cpu_milli = js[2].cpu_milli = 1000;
    run_out r = run(&w, js, 3, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "c", F_END, "1000.000000");
    CHECK_F(&r, "g", F_END, "100.000000");
    CHECK_F(&r, "d", F_START, "60.000000");
    CHECK_F(&r, "d", F_END, "110.000000");
    CHECK_EQ_I64(r.sum.jobs_done, 3);
    run_out_free(&r);
    world_fini(&w);
}

/* Random elastic traces: invariants after every event (check_invariants), every job
 * accounted for, identical bytes for the same input. */
static void test_random(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int it = 0; it < 20; it++) {
        gsl_rng_set(rng, (unsigned long)it + 1);
        world w;
        world_init(&w, 1 + (uint32_t)gsl_rng_uniform_int(rng, 4), 4);
        job_spec js[60];
        size_t n = 10 + gsl_rng_uniform_int(rng, 50);
        double t = 0;
        for (size_t k = 0; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 100;
            uint32_t lo = 1 + (uint32_t)gsl_rng_uniform_int(rng, 3);
            uint32_t hi = lo + (uint32_t)gsl_rng_uniform_int(rng, 4);
            bool el = gsl_rng_uniform(rng) < 0.7;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 2000, lo, el ? lo : 0, hi);
        }
        const char *thr[] = {"0.5", "0.8", "1"};
        for (int p = 0; p < 3; p++) {
            run_out r1 = run(&w, js, n, &policy_elastic, thr[p], 0, gsl_rng_uniform(rng) * 100);
            CHECK_EQ_I64(r1.status, SIM_OK);
            CHECK_EQ_I64(r1.sum.jobs_arrived, (int64_t)n);
            CHECK_EQ_I64(r1.sum.jobs_done + r1.sum.jobs_rejected + r1.sum.jobs_unfinished,
                         (int64_t)n);
            CHECK_EQ_I64(r1.sum.jobs_done, (int64_t)n);
            run_out r2 = run(&w, js, n, &policy_elastic, thr[p], 0, 0);
            run_out r3 = run(&w, js, n, &policy_elastic, thr[p], 0, 0);
            CHECK(r2.jobs_len == r3.jobs_len && memcmp(r2.jobs, r3.jobs, r2.jobs_len) == 0);
            CHECK(r2.summary_len == r3.summary_len &&
                  memcmp(r2.summary, r3.summary, r2.summary_len) == 0);
            run_out_free(&r1);
            run_out_free(&r2);
            run_out_free(&r3);
        }
        run_out r = run(&w, js, n, &policy_rigid_min, NULL, 0, 0);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_EQ_I64(r.sum.jobs_done, (int64_t)n);
        CHECK_EQ_I64(r.sum.scale_events, 0);
        run_out_free(&r);
        const policy_ops *more[2] = {&policy_optimus, &policy_static};
        for (int p = 0; p < 2; p++) {
            r = run(&w, js, n, more[p], NULL, 0, 0);
            CHECK_EQ_I64(r.status, SIM_OK);
            CHECK_EQ_I64(r.sum.jobs_done, (int64_t)n);
            run_out_free(&r);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

/* Jobs without replica bounds start by shape (the pending jobs of each shape merged in
 * arrival order, a shape dropped at its first job that does not fit): the same bytes as
 * the walk of the pending list, on random traces that queue up on small clusters. */
static void test_by_shape(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    const policy_ops *pols[3] = {&policy_elastic, &policy_rigid_min, &policy_static};
    uint32_t compared = 0;
    for (int it = 0; it < 12; it++) {
        gsl_rng_set(rng, (unsigned long)it + 100);
        world w;
        world_init(&w, 1 + (uint32_t)gsl_rng_uniform_int(rng, 3), 4);
        job_spec js[80];
        size_t n = 30 + gsl_rng_uniform_int(rng, 50);
        double t = 0;
        for (size_t k = 0; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 30;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 2000,
                         1 + (uint32_t)gsl_rng_uniform_int(rng, 6), 0, 0);
        }
        for (int p = 0; p < 3; p++) {
            run_out a = run(&w, js, n, pols[p], NULL, 0, 0);
            elastic_shapes_enable(false);
            run_out b = run(&w, js, n, pols[p], NULL, 0, 0);
            elastic_shapes_enable(true);
            CHECK_EQ_I64(a.status, SIM_OK);
            CHECK_EQ_I64(b.status, SIM_OK);
            CHECK(a.jobs_len == b.jobs_len && memcmp(a.jobs, b.jobs, a.jobs_len) == 0);
            CHECK(a.summary_len == b.summary_len &&
                  memcmp(a.summary, b.summary, a.summary_len) == 0);
            compared += a.status == SIM_OK;
            run_out_free(&a);
            run_out_free(&b);
        }
        world_fini(&w);
    }
    CHECK_EQ_I64(compared, 36);
    gsl_rng_free(rng);
}

/* optimus: the pending jobs' mins from the lists kept per (min, GPUs per trainer) give
 * the same bytes as the walk of the whole pending list, on random traces of elastic and
 * rigid jobs of 1 and 2 GPUs per trainer that queue up on small clusters (shrinks to
 * nothing preempt jobs back into the lists). */
static void test_optimus_lists(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    uint32_t compared = 0;
    int64_t preempted = 0;
    for (int it = 0; it < 16; it++) {
        gsl_rng_set(rng, (unsigned long)it + 700);
        world w;
        world_init(&w, 1 + (uint32_t)gsl_rng_uniform_int(rng, 3), 4);
        job_spec js[90];
        size_t n = 30 + gsl_rng_uniform_int(rng, 60);
        double t = 0;
        for (size_t k = 0; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 40;
            uint32_t g = 1 + (uint32_t)gsl_rng_uniform_int(rng, 2);
            uint32_t reps = 1 + (uint32_t)gsl_rng_uniform_int(rng, 2);
            bool el = gsl_rng_uniform(rng) < 0.5;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 1500, reps, el ? reps : 0,
                         reps + (uint32_t)gsl_rng_uniform_int(rng, 3));
            js[k].num_gpus = g * reps;
        }
        g_opt_key = "resize";
        g_opt_val = it % 2 ? "lossy" : "checkpoint";
        /* (a horizon: a job lost from the lists would wait for ever) */
        run_out a = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
        optimus_lists_enable(false);
        run_out b = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
        optimus_lists_enable(true);
        g_opt_key = NULL;
        CHECK_EQ_I64(a.status, SIM_OK);
        CHECK_EQ_I64(b.status, SIM_OK);
        CHECK_EQ_I64(a.sum.jobs_done, (int64_t)n);
        CHECK(a.jobs_len == b.jobs_len && memcmp(a.jobs, b.jobs, a.jobs_len) == 0);
        CHECK(a.summary_len == b.summary_len && memcmp(a.summary, b.summary, a.summary_len) == 0);
        compared += a.status == SIM_OK;
        preempted += a.sum.preemptions;
        run_out_free(&a);
        run_out_free(&b);
        world_fini(&w);
    }
    CHECK_EQ_I64(compared, 16);
    CHECK(preempted > 0); /* the lists took jobs back in */
    gsl_rng_free(rng);
}

/* optimus: the running jobs without replica bounds counted by their bucket's sum give
 * the same bytes as the walk, on random traces of mostly rigid jobs of 1 to 4 trainers
 * (a flood of small ones takes the GPUs of running larger ones: the sum does not fit and
 * the round walks), with an elastic job now and then (the walk every round while it
 * runs) and a node outage in half the runs (jobs requeued). */
static void test_optimus_sums(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    uint32_t compared = 0;
    int64_t preempted = 0;
    for (int it = 0; it < 16; it++) {
        gsl_rng_set(rng, (unsigned long)it + 900);
        world w;
        world_init(&w, 2 + (uint32_t)gsl_rng_uniform_int(rng, 2), 4);
        job_spec js[120];
        size_t n = 40 + gsl_rng_uniform_int(rng, 80);
        double t = 0;
        for (size_t k = 0; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 30;
            uint32_t reps = 1 + (uint32_t)gsl_rng_uniform_int(rng, 4);
            bool el = gsl_rng_uniform(rng) < 0.1;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 1500, reps, el ? 1 : 0, reps + 1);
            if (gsl_rng_uniform(rng) < 0.1) { /* a CPU-only job */
                js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 1500, 0, 0, 0);
                js[k].cpu_milli = 1000;
            }
        }
        g_fail.on = it % 2;
        g_fail.node = 1;
        g_fail.down_us = 400000000;
        g_fail.up_us = 900000000;
        g_opt_key = "resize";
        g_opt_val = it % 4 < 2 ? "lossy" : "checkpoint";
        run_out a = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
        optimus_sums_enable(false);
        run_out b = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
        optimus_sums_enable(true);
        g_opt_key = NULL;
        g_fail.on = false;
        CHECK_EQ_I64(a.status, SIM_OK);
        CHECK_EQ_I64(b.status, SIM_OK);
        CHECK_EQ_I64(a.sum.jobs_done, (int64_t)n);
        CHECK(a.jobs_len == b.jobs_len && memcmp(a.jobs, b.jobs, a.jobs_len) == 0);
        CHECK(a.summary_len == b.summary_len && memcmp(a.summary, b.summary, a.summary_len) == 0);
        compared += a.status == SIM_OK;
        preempted += a.sum.preemptions;
        run_out_free(&a);
        run_out_free(&b);
        world_fini(&w);
    }
    CHECK_EQ_I64(compared, 16);
    CHECK(preempted > 0);
    gsl_rng_free(rng);
}

/* optimus: a list whose entries are moved to its start (full, its first half passed)
 * while a round preempts a job into it keeps the round's cursor with them: 64 jobs of 2
 * trainers on 4 GPUs, two of them long, then four 1-GPU jobs that shrink those two to
 * nothing. Every job finishes, as with the walk. */
static void test_optimus_list_move(void)
{
    world w;
    world_init(&w, 1, 4);
    job_spec js[68];
    size_t n = 0;
    for (int k = 0; k < 64; k++) {
        char id[32];
        snprintf(id, sizeof id, "e%d", k);
        js[n++] = ejob(id, 0, k == 34 || k == 35 ? 1000 : 30, 2, 2, 2);
    }
    for (int k = 0; k < 4; k++) {
        char id[32];
        snprintf(id, sizeof id, "r%d", k);
        js[n++] = ejob(id, 1070, 1000, 1, 0, 0);
    }
    run_out a = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
    optimus_lists_enable(false);
    run_out b = run(&w, js, n, &policy_optimus, NULL, 1e6, 30);
    optimus_lists_enable(true);
    CHECK_EQ_I64(a.status, SIM_OK);
    CHECK_EQ_I64(a.sum.jobs_done, (int64_t)n);
    CHECK(a.sum.preemptions > 0);
    CHECK(a.jobs_len == b.jobs_len && memcmp(a.jobs, b.jobs, a.jobs_len) == 0);
    run_out_free(&a);
    run_out_free(&b);
    world_fini(&w);
}

/* Write text to a temporary file; its path in buf. */
static bool temp_file(const char *text, char *buf)
{
    strcpy(buf, "/tmp/test_elastic_XXXXXX");
    int fd = mkstemp(buf);
    if (fd < 0)
        return false;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return true;
}

static void test_curves(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"service,time,replicas\nsvc,0,2\nsvc,10,-1\n",
         ":3:3: error: field 'replicas': expected an integer"},
        {"service,time,replicas\nsvc,0,2\nother,5,1\nsvc,0,3\n",
         ":4:2: error: field 'time': expected a time after 0.000000 s (line 2, the previous "
         "point of service 'svc'), got \"0\""},
        {"service,time,replicas\nsvc,abc,2\n", ":2:2: error: field 'time'"},
        {"service,when,replicas\nsvc,0,2\n", ":1: error: missing column 'time'"},
        {"service,time,replicas\nsvc,0\n", ":2:3: error: expected 3 fields"},
        {"", ": error: empty file"},
        {"service,time,replicas\n", ":2: error: no demand point"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char path[64], msg[1024];
        CHECK(temp_file(bad[k].text, path));
        sim_curves c;
        sim_diag d = {0};
        CHECK_EQ_I64(trace_curves_load(&c, path, &d), SIM_EPARSE);
        sim_diag_format(&d, msg, sizeof msg);
        if (!strstr(msg, bad[k].want))
            fprintf(stderr, "curve case %zu: got %s\n", k, msg);
        CHECK(strstr(msg, bad[k].want) != NULL);
        CHECK(strncmp(msg, path, strlen(path)) == 0);
        unlink(path);
    }
    /* Services may interleave; points are grouped by service in file order. */
    char path[64];
    CHECK(temp_file("service,time,replicas\nb,0,1\na,0,2\nb,60,3\na,1.5,4\n", path));
    sim_curves c;
    sim_diag d = {0};
    CHECK_EQ_I64(trace_curves_load(&c, path, &d), SIM_OK);
    CHECK_EQ_I64(c.n, 2);
    CHECK_EQ_I64(c.n_pts, 4);
    if (c.n == 2) {
        CHECK_STR(c.names[0], "b");
        CHECK_EQ_I64(c.count[0], 2);
        CHECK_EQ_I64(c.pts[c.first[0] + 1].t_us, 60000000);
        CHECK_EQ_I64(c.pts[c.first[0] + 1].replicas, 3);
        CHECK_EQ_I64(c.pts[c.first[1] + 1].t_us, 1500000);
    }
    trace_curves_free(&c);
    unlink(path);
    /* The generator: deterministic per seed, within trough..peak without noise. */
    char *t1 = NULL, *t2 = NULL;
    size_t l1 = 0, l2 = 0;
    trace_diurnal p = {.services = 3,
                       .prefix = "s",
                       .peak = 10,
                       .trough = 2,
                       .period_s = 3600,
                       .step_s = 300,
                       .length_s = 7200,
                       .noise = 0,
                       .seed = 5};
    FILE *f1 = open_memstream(&t1, &l1), *f2 = open_memstream(&t2, &l2);
    CHECK_EQ_I64(trace_curves_diurnal_write(f1, &p, &d), SIM_OK);
    CHECK_EQ_I64(trace_curves_diurnal_write(f2, &p, &d), SIM_OK);
    fclose(f1);
    fclose(f2);
    CHECK(l1 == l2 && memcmp(t1, t2, l1) == 0);
    int rows = 0, out_of_range = 0;
    for (char *line = strchr(t1, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        rows++;
        const char *end = strchr(line + 1, '\n');
        const char *comma = end;
        while (comma > line + 1 && *comma != ',')
            comma--;
        long r = strtol(comma + 1, NULL, 10);
        out_of_range += r < 2 || r > 10;
    }
    CHECK_EQ_I64(rows, 3 * 25);
    CHECK_EQ_I64(out_of_range, 0);
    free(t1);
    free(t2);
}

/* Services: resized to their demand, trainers taken back at once when it rises. */
static void test_services(void)
{
    static char *names[1] = {"svc"};
    static uint32_t first[1] = {0}, count[1] = {3};
    static sim_curve_point pts[3] = {{0, 2}, {100000000, 6}, {200000000, 1}};
    sim_curves c = {.n = 1, .names = names, .first = first, .count = count, .pts = pts, .n_pts = 3};
    g_curves = &c;
    world w;
    world_init(&w, 1, 8);
    /* t=0: svc starts with 2, a with 1 and grows to 6 at the trigger (8 GPUs). t=100: svc
     * wants 6: a gives 4 trainers back at once (to 2), losing its 100 s at speed 6 (no
     * checkpoints) at the first. t=200: svc wants 1 (3 used); the trigger at 240 grows a
     * to 7. svc serves 300 s whatever its replicas; the trigger at 300 gives a its 8th.
     * Scale events of a: 5 + 4 + 5 + 1. */
    job_spec js[2] = {ejob("svc", 0, 300, 1, 1, 8), ejob("a", 0, 1e6, 1, 1, 8)};
    js[0].qos = SIM_QOS_LS;
    run_out r = run(&w, js, 2, &policy_elastic, "1", 400, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "svc", F_END, "300.000000");
    CHECK_F(&r, "svc", F_RMAX, "6");
    CHECK_F(&r, "svc", F_RMIN, "1");
    CHECK_F(&r, "a", F_RMIN, "1");
    CHECK_F(&r, "a", F_RMAX, "8");
    CHECK_F(&r, "a", F_SCALE, "15");
    CHECK_NEAR(r.sum.scale_lost_work_s, 600, 1e-12);
    CHECK_EQ_I64(r.sum.services, 1);
    CHECK_NEAR(r.sum.short_gpu_s, 0, 0);
    CHECK_EQ_I64(r.sum.short_periods, 0);
    /* Demand: 2 x 100 + 6 x 100 + 1 x 100 GPU-seconds. */
    CHECK_NEAR(r.sum.demand_gpu_s, 900, 1e-12);
    CHECK(strstr(r.summary, "\"online\": {\"services\": 1, \"demand_gpu_hours\": 0.250000, "
                            "\"shortfall_gpu_seconds\": 0.000000, \"shortfall_periods\": 0}"));
    run_out_free(&r);
    /* A policy that never resizes (fifo: the nominal 1 replica) leaves it short by 1 GPU
     * for 100 s, then 5 for 100 s: 600 GPU-seconds in 2 periods. */
    extern const policy_ops policy_fifo;
    r = run(&w, js, 2, &policy_fifo, NULL, 400, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_NEAR(r.sum.short_gpu_s, 600, 1e-12);
    CHECK_EQ_I64(r.sum.short_periods, 2);
    run_out_free(&r);
    /* Trainers first, then BE work: 8 GPUs, svc wants 2, then 7 from t=100, then 1 from
     * t=200. t=0: svc 2, a (1..4, work 2000) 1 and b (rigid BE, 2 GPUs, work 1000) start;
     * the trigger grows a to 4. t=100: a gives back 3 trainers (the first scale-in loses
     * its 100 s at speed 4), then the latest started offline job is preempted: a (its
     * scale-in restarted it at 100: nothing lost), then b (loses its 100 s): svc holds 7
     * at once, and a restarts on the GPU left. t=200: svc shrinks to 1, b restarts (ends
     * 1200). The trigger at 240 grows a to 4: 140 s at speed 1, then 1860 at 4: 705. */
    {
        static uint32_t count2[1] = {3};
        static sim_curve_point pts2[3] = {{0, 2}, {100000000, 7}, {200000000, 1}};
        sim_curves c2 = {
            .n = 1, .names = names, .first = first, .count = count2, .pts = pts2, .n_pts = 3};
        g_curves = &c2;
        job_spec j3[3] = {ejob("svc", 0, 1000, 1, 1, 8), ejob("a", 0, 2000, 1, 1, 4),
                          ejob("b", 0, 1000, 2, 0, 0)};
        j3[0].qos = SIM_QOS_LS;
        j3[2].qos = SIM_QOS_BE;
        r = run(&w, j3, 3, &policy_elastic, "1", 0, 0);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_F(&r, "svc", F_RMAX, "7");
        CHECK_F(&r, "svc", F_END, "1000.000000");
        CHECK_NEAR(r.sum.short_gpu_s, 0, 0);
        CHECK_F(&r, "a", F_PREEMPT, "1");
        CHECK_F(&r, "a", F_LOST, "400.000000");
        CHECK_F(&r, "a", F_END, "705.000000");
        CHECK_F(&r, "b", F_PREEMPT, "1");
        CHECK_F(&r, "b", F_LOST, "100.000000");
        CHECK_F(&r, "b", F_END, "1200.000000");
        CHECK_NEAR(r.sum.scale_lost_work_s, 400, 1e-12);
        run_out_free(&r);
        g_curves = &c;
    }
    world_fini(&w);
    /* static: the last ceil(6 / 4) = 2 nodes of 4 serve svc; a runs at its max (8 GPUs)
     * or what the other 2 nodes hold: 8. */
    world_init(&w, 4, 4);
    r = run(&w, js, 2, &policy_static, NULL, 400, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_RMAX, "8");
    CHECK_F(&r, "svc", F_RMAX, "6");
    CHECK_NEAR(r.sum.short_gpu_s, 0, 0);
    run_out_free(&r);
    /* A service of 2 GPUs per replica: its peak of 6 takes 12 GPUs, the last 3 nodes;
     * a gets the first node's 4. */
    job_spec j2[2] = {js[0], js[1]};
    j2[0].num_gpus = 2;
    j2[0].replicas = 1;
    r = run(&w, j2, 2, &policy_static, NULL, 400, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "svc", F_RMAX, "6");
    CHECK_F(&r, "a", F_RMAX, "4");
    CHECK_NEAR(r.sum.short_gpu_s, 0, 0);
    run_out_free(&r);
    world_fini(&w);
    g_curves = NULL;
}

/* optimus: a service's take-back that leaves a job without trainers keeps its progress
 * (resize=checkpoint, the default), as optimus's own reallocations do. 4 GPUs: a (1..4,
 * work 1000) runs with 4; svc arrives at 100 wanting 4: a gives back 3 trainers, then is
 * preempted with its 400 done. svc serves to 200; the round at 240 starts a with 4: 600
 * / 4 -> ends 390 (it used to lose the 400 and end at 490). With resize=lossy the work
 * since the last periodic checkpoint (none: all 400) is lost. */
static void test_optimus_take_back(void)
{
    static sim_curve_point pts[1] = {{100000000, 4}};
    sim_curves c = svc_curve(pts);
    g_curves = &c;
    world w;
    world_init(&w, 1, 4);
    job_spec js[2] = {ejob("a", 0, 1000, 1, 1, 4), ejob("svc", 100, 100, 1, 1, 4)};
    js[0].qos = SIM_QOS_BE;
    js[1].qos = SIM_QOS_LS;
    run_out r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "svc", F_RMAX, "4");
    CHECK_F(&r, "a", F_PREEMPT, "1");
    CHECK_F(&r, "a", F_LOST, "0.000000");
    CHECK_F(&r, "a", F_END, "390.000000");
    run_out_free(&r);
    g_opt_key = "resize";
    g_opt_val = "lossy";
    r = run(&w, js, 2, &policy_optimus, NULL, 0, 0);
    g_opt_key = NULL;
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "a", F_LOST, "400.000000");
    CHECK_F(&r, "a", F_END, "490.000000");
    run_out_free(&r);
    world_fini(&w);
    g_curves = NULL;
}

/* A take-back passes over jobs whose release cannot make room: 4 GPUs, 8 cores. a and b
 * (2 GPUs each) start at 0 and 10, the CPU-only c (1 core) at 30; svc (one GPU) arrives
 * at 50. c, the latest started, holds no GPU: b is preempted (its 40 s lost), and c
 * runs on to 330 (it used to be preempted first, losing 20 s, and end at 350). */
static void test_take_back_helps(void)
{
    static sim_curve_point pts[1] = {{50000000, 1}};
    sim_curves cv = svc_curve(pts);
    g_curves = &cv;
    world w;
    world_init(&w, 1, 4);
    w.nodes[0].cpu_milli = 8000;
    job_spec js[4] = {ejob("a", 0, 1000, 2, 0, 0), ejob("b", 10, 300, 2, 0, 0),
                      ejob("c", 30, 300, 0, 0, 0), ejob("svc", 50, 100, 1, 0, 0)};
    for (int k = 0; k < 2; k++)
        js[k].replicas = 1;
    js[2].replicas = 1;
    js[2].cpu_milli = 1000;
    for (int k = 0; k < 3; k++)
        js[k].qos = SIM_QOS_BE;
    js[3].qos = SIM_QOS_LS;
    const policy_ops *pols[2] = {&policy_rigid_min, &policy_elastic};
    for (int p = 0; p < 2; p++) {
        run_out r = run(&w, js, 4, pols[p], NULL, 0, 0);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_F(&r, "svc", F_START, "50.000000");
        CHECK_F(&r, "c", F_PREEMPT, "0");
        CHECK_F(&r, "c", F_END, "330.000000");
        CHECK_F(&r, "b", F_PREEMPT, "1");
        CHECK_F(&r, "b", F_LOST, "40.000000");
        CHECK_F(&r, "a", F_PREEMPT, "0");
        run_out_free(&r);
    }
    world_fini(&w);
    g_curves = NULL;
}

/* Services are never short while offline trainers or jobs could be taken back: on
 * random traces whose services' peaks fit the cluster, no shortfall at all. */
static void test_services_random(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int it = 0; it < 20; it++) {
        gsl_rng_set(rng, (unsigned long)it + 100);
        world w;
        uint32_t nodes = 2 + (uint32_t)gsl_rng_uniform_int(rng, 3);
        world_init(&w, nodes, 4);
        static char *names[2] = {"s0", "s1"};
        static uint32_t first[2] = {0, 20}, count[2] = {20, 20};
        static sim_curve_point pts[40];
        uint32_t cap = nodes * 4 / 2; /* each service's peak: half the GPUs */
        for (int k = 0; k < 40; k++)
            pts[k] = (sim_curve_point){(sim_time)(k % 20) * 50000000,
                                       (uint32_t)gsl_rng_uniform_int(rng, cap + 1)};
        sim_curves c = {
            .n = 2, .names = names, .first = first, .count = count, .pts = pts, .n_pts = 40};
        g_curves = &c;
        job_spec js[42];
        js[0] = ejob("s0", 0, 1000, 1, 1, cap);
        js[1] = ejob("s1", 0, 1000, 1, 1, cap);
        js[0].qos = js[1].qos = SIM_QOS_LS;
        double t = 0;
        size_t n = 2 + 10 + gsl_rng_uniform_int(rng, 30);
        for (size_t k = 2; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 60;
            uint32_t lo = 1 + (uint32_t)gsl_rng_uniform_int(rng, 2);
            bool el = gsl_rng_uniform(rng) < 0.7;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 2000, lo, el ? lo : 0,
                         lo + (uint32_t)gsl_rng_uniform_int(rng, 4));
        }
        const policy_ops *pols[2] = {&policy_elastic, &policy_rigid_min};
        for (int p = 0; p < 2; p++) {
            run_out r = run(&w, js, n, pols[p], NULL, 0, 30);
            CHECK_EQ_I64(r.status, SIM_OK);
            CHECK_EQ_I64(r.sum.jobs_done, (int64_t)n);
            CHECK_NEAR(r.sum.short_gpu_s, 0, 0);
            CHECK_EQ_I64(r.sum.short_periods, 0);
            run_out_free(&r);
        }
        world_fini(&w);
        g_curves = NULL;
    }
    gsl_rng_free(rng);
}

/* With demand curves, the services are the rows of qos LS: an LS row without a curve, a
 * curve on a row of another qos, and a curve naming no row are file:line errors. */
static void test_services_rule(void)
{
    char path[64];
    CHECK(temp_file("service,time,replicas\nsvc,0,2\nsvc,100,3\nghost,0,1\n", path));
    sim_curves c;
    sim_diag d = {0};
    CHECK_EQ_I64(trace_curves_load(&c, path, &d), SIM_OK);
    CHECK_EQ_I64(c.n, 2);
    CHECK_STR(c.path, path);
    if (c.n == 2) {
        CHECK_EQ_I64(c.line[0], 2);
        CHECK_EQ_I64(c.line[1], 4);
    }
    g_curves = &c;
    world w;
    world_init(&w, 1, 8);
    char msg[1024], want[256];
    /* svc is LS, ghost has no row: the error comes once the trace is read, at ghost's
     * first line in the curve file. */
    job_spec js[3] = {ejob("svc", 0, 100, 1, 1, 4), ejob("a", 0, 100, 1, 1, 4),
                      ejob("b", 5, 100, 1, 0, 0)};
    js[0].qos = SIM_QOS_LS;
    for (int k = 0; k < 3; k++)
        js[k].line = (uint64_t)k + 2;
    run_out r = run(&w, js, 3, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_EPARSE);
    sim_diag_format(&r.d, msg, sizeof msg);
    snprintf(want, sizeof want,
             "%s:4: error: service 'ghost' has a demand curve but no row in the trace "
             "trace.csv (an online service is a row of qos LS with this job id)",
             path);
    CHECK_STR(msg, want);
    run_out_free(&r);
    /* ghost's row exists but is BE. */
    js[2] = ejob("ghost", 5, 100, 1, 0, 0);
    js[2].qos = SIM_QOS_BE;
    js[2].line = 4;
    r = run(&w, js, 3, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_EPARSE);
    sim_diag_format(&r.d, msg, sizeof msg);
    snprintf(want, sizeof want,
             "trace.csv:4: error: job 'ghost' has a demand curve (%s:4) but qos 'BE'; an "
             "online service needs qos LS",
             path);
    CHECK_STR(msg, want);
    run_out_free(&r);
    /* An LS row without a curve (a is LS, ghost fine now). */
    js[2].qos = SIM_QOS_LS;
    js[1].qos = SIM_QOS_LS;
    r = run(&w, js, 3, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_EPARSE);
    sim_diag_format(&r.d, msg, sizeof msg);
    CHECK(strstr(msg, "trace.csv:3: error: job 'a' has qos LS, an online service, but no "
                      "demand curve in ") != NULL);
    run_out_free(&r);
    /* All well: two services and one offline job. */
    js[1].qos = SIM_QOS_NONE;
    r = run(&w, js, 3, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.services, 2);
    run_out_free(&r);
    /* A row submitted after the horizon still counts as the service's row. */
    js[2].submit_us = 500000000;
    r = run(&w, js, 3, &policy_elastic, NULL, 50, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_not_arrived, 1);
    run_out_free(&r);
    /* Without curves, LS rows are ordinary jobs. */
    g_curves = NULL;
    r = run(&w, js, 3, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.services, 0);
    run_out_free(&r);
    world_fini(&w);
    trace_curves_free(&c);
    unlink(path);
}

/* Native columns of masters and parameter servers: parsed, and a job with servers but
 * no trainers, or a bad count, is a file:line:column error. */
static void test_roles_reader(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"job_id,submit_time,duration,num_gpus,min_replicas,max_replicas,ps_replicas\n"
         "a,0,10,2,1,2,2\n"
         "b,1,10,2,1,0,2\n",
         ":3:6: error: field 'max_replicas': expected at least 1 trainer (the job has a master "
         "and parameter servers, which need trainers), got \"0\""},
        {"job_id,submit_time,duration,num_gpus,ps_replicas,max_replicas,min_replicas\n"
         "a,0,10,2,1,2,0\n",
         ":2:7: error: field 'min_replicas': expected at least 1 trainer"},
        {"job_id,submit_time,duration,num_gpus,ps_replicas\na,0,10,2,x\n",
         ":2:5: error: field 'ps_replicas': expected an integer 0..65536, got \"x\""},
        {"job_id,submit_time,duration,num_gpus,master_cpu_milli\na,0,10,2,1.5\n",
         ":2:5: error: field 'master_cpu_milli': expected an integer"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[64], diag[1024];
        CHECK(temp_file(cases[k].text, path));
        job_spec j[4];
        int n;
        int st = read_trace(path, NULL, NULL, j, &n, diag, sizeof diag);
        CHECK_EQ_I64(st, SIM_EPARSE);
        if (!strstr(diag, cases[k].want))
            fprintf(stderr, "roles case %zu: got %s\n", k, diag);
        CHECK(strstr(diag, cases[k].want) != NULL);
        unlink(path);
    }
    char path[64], diag[1024];
    CHECK(temp_file("job_id,submit_time,duration,num_gpus,ps_replicas,ps_cpu_milli,ps_mem_mib,"
                    "master_cpu_milli,master_mem_mib,max_replicas\n"
                    "a,0,10,2,3,2500,4096,1500,2048,4\n"
                    "b,0,10,2,,,,,,\n"
                    "c,0,10,2,,,,700,,\n",
                    path));
    job_spec j[4];
    int n;
    CHECK_EQ_I64(read_trace(path, NULL, NULL, j, &n, diag, sizeof diag), 0);
    CHECK_EQ_I64(n, 3);
    if (n == 3) {
        CHECK(job_spec_has_roles(&j[0]));
        CHECK_NEAR(j[0].attr[SIM_ATTR_PS_REPLICAS], 3, 0);
        CHECK_NEAR(j[0].attr[SIM_ATTR_PS_CPU_MILLI], 2500, 0);
        CHECK_NEAR(j[0].attr[SIM_ATTR_PS_MEM_MIB], 4096, 0);
        CHECK_NEAR(j[0].attr[SIM_ATTR_MASTER_CPU_MILLI], 1500, 0);
        CHECK_NEAR(j[0].attr[SIM_ATTR_MASTER_MEM_MIB], 2048, 0);
        CHECK(!job_spec_has_roles(&j[1]));
        CHECK(job_spec_has_roles(&j[2])); /* a master alone */
        CHECK(!job_spec_has(&j[2], SIM_ATTR_PS_REPLICAS));
    }
    unlink(path);
}

/* ---- Masters and parameter servers ------------------------------------------------ */

/* Give job j a master (cpu mcpu) and ps parameter servers (cpu pcpu each). */
static void with_roles(job_spec *j, uint32_t ps, uint64_t mcpu, uint64_t pcpu)
{
    j->attr[SIM_ATTR_PS_REPLICAS] = ps;
    j->attr[SIM_ATTR_MASTER_CPU_MILLI] = (double)mcpu;
    j->attr[SIM_ATTR_PS_CPU_MILLI] = (double)pcpu;
    j->attr_present |= (UINT64_C(1) << SIM_ATTR_PS_REPLICAS) |
                       (UINT64_C(1) << SIM_ATTR_MASTER_CPU_MILLI) |
                       (UINT64_C(1) << SIM_ATTR_PS_CPU_MILLI);
}

/* static: a job whose trainers at the slice's count do not fit with its master and
 * parameter servers runs with fewer once the slice is idle. One node of 4 GPUs and
 * 64,000 milli-CPU: p asks 1..4 trainers of 16,000 milli-CPU and one GPU each, a master
 * and 2 parameter servers of 1,000 each; the slice's count (4) leaves 64,000 + 3,000 >
 * 64,000, and p waited for ever (never scheduled); now it runs with 3. A job that the
 * idle slice cannot hold even at its min is rejected with the reason. */
static void test_static_roles(void)
{
    world w;
    world_init(&w, 1, 4);
    job_spec js[1] = {ejob("p", 0, 100, 1, 1, 4)};
    js[0].cpu_milli = 16000;
    with_roles(&js[0], 2, 1000, 1000);
    run_out r = run(&w, js, 1, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_STATUS, "done");
    CHECK_F(&r, "p", F_RMAX, "3");
    run_out_free(&r);
    world_fini(&w);
    /* Two such nodes, the second reserved for a service of 4 GPUs: q needs 4 trainers
     * (the cluster holds them with their master and servers, the offline node does not). */
    static sim_curve_point pts[1] = {{0, 1}};
    sim_curves c = svc_curve(pts);
    g_curves = &c;
    world_init(&w, 2, 4);
    job_spec jq[2] = {ejob("svc", 0, 100, 4, 1, 1), ejob("q", 0, 100, 4, 4, 4)};
    jq[0].qos = SIM_QOS_LS;
    jq[0].replicas = 1;
    jq[1].cpu_milli = 64000; /* 16,000 a trainer */
    with_roles(&jq[1], 2, 1000, 1000);
    r = run(&w, jq, 2, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "svc", F_STATUS, "done");
    CHECK_F(&r, "q", F_STATUS, "rejected");
    CHECK(r.jobs && strstr(r.jobs, "policy static: the nodes not reserved for the services' "
                                   "peak cannot hold 4 replicas of it with its master and "
                                   "parameter servers"));
    run_out_free(&r);
    world_fini(&w);
    g_curves = NULL;
}

/* static: the slice is sized at the first decision, at one GPU per replica for the
 * services not there yet, so a later service of 8 GPUs per replica found only the last
 * node (4 GPUs) reserved and waited for ever (never scheduled); it is rejected with the
 * reason. o (offline, 1 GPU) arrives at 0, the service at 10. */
static void test_static_late_service(void)
{
    static sim_curve_point pts[1] = {{0, 1}};
    sim_curves c = svc_curve(pts);
    g_curves = &c;
    world w;
    world_init(&w, 2, 8);
    w.nodes[1].num_gpus = 4;
    job_spec js[2] = {ejob("o", 0, 100, 1, 0, 0), ejob("svc", 10, 100, 8, 1, 1)};
    js[1].qos = SIM_QOS_LS;
    js[1].replicas = 1;
    run_out r = run(&w, js, 2, &policy_static, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "o", F_STATUS, "done");
    CHECK_F(&r, "svc", F_STATUS, "rejected");
    CHECK(r.jobs && strstr(r.jobs, "policy static: the nodes reserved for the services' peak "
                                   "cannot hold 1 replica of it"));
    run_out_free(&r);
    world_fini(&w);
    g_curves = NULL;
}

/* A probe policy: starts pending jobs in order through place_gang (trainers, then the
 * roles) and records where the roles of the last start went and the nodes' CPU after. */
typedef struct probe_state {
    place_ws ws;
} probe_state;

static uint32_t g_roles, g_role_nodes[8];
static uint64_t g_cpu_used[4];

static int probe_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return place_ws_init(&((probe_state *)st)->ws, cfg, d);
}

static void probe_fini(void *st)
{
    place_ws_fini(&((probe_state *)st)->ws);
}

static int probe_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    probe_state *s = st;
    for (uint32_t id = v->pending_head; id != SIM_JOB_NONE;) {
        uint32_t next = sim_view_next(v, id);
        sim_placement p;
        if (place_gang(&s->ws, v, id, 0, UINT64_MAX, place_score_most_allocated, NULL,
                       PLACE_GPU_MOST_USED, NULL, 0, &p)) {
            g_roles = p.roles;
            for (uint32_t r = 0; r < p.roles && r < 8; r++)
                g_role_nodes[r] = p.role_nodes[r];
            int rc = sim_decide_start(out, id, &p);
            if (rc != SIM_OK)
                return rc;
            for (uint32_t n = 0; n < v->n_nodes && n < 4; n++)
                g_cpu_used[n] = v->node_cpu_used[n];
        }
        id = next;
    }
    return SIM_OK;
}

static const policy_option probe_opts[] = {{NULL, NULL, NULL}};

static const policy_ops policy_probe = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "probe",
    .summary = "test",
    .state_size = sizeof(probe_state),
    .options = probe_opts,
    .init = probe_init,
    .fini = probe_fini,
    .schedule = probe_schedule,
};

static void test_roles(void)
{
    /* Role placement: 3 nodes of 4 GPUs with 8, 16 and 12 cores. Two trainers (1 core
     * each) go to n0 (most allocated, ties to the lowest id): CPU left 6, 16, 12. The
     * master (3 cores) goes where most is left: n1 (13 left); server 1 (5 cores): n1
     * again (8 left, against 1 and 7); server 2: n2 (7 left, against 1 and 3). */
    world w;
    world_init(&w, 3, 4);
    w.nodes[0].cpu_milli = 8000;
    w.nodes[1].cpu_milli = 16000;
    w.nodes[2].cpu_milli = 12000;
    job_spec a = ejob("a", 0, 100, 2, 0, 0);
    a.cpu_milli = 2000;
    with_roles(&a, 2, 3000, 5000);
    run_out r = run(&w, &a, 1, &policy_probe, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(g_roles, 3);
    CHECK_EQ_I64(g_role_nodes[0], 1);
    CHECK_EQ_I64(g_role_nodes[1], 1);
    CHECK_EQ_I64(g_role_nodes[2], 2);
    CHECK_EQ_I64(g_cpu_used[0], 2000);
    CHECK_EQ_I64(g_cpu_used[1], 8000);
    CHECK_EQ_I64(g_cpu_used[2], 5000);
    CHECK_F(&r, "a", F_END, "100.000000");
    /* Held for the job's life: (2 + 3 + 10) cores of 36 for the whole span. */
    CHECK_NEAR(r.sum.cpu_alloc_avg, 15.0 / 36.0, 1e-12);
    run_out_free(&r);
    world_fini(&w);

    /* The job waits until master, servers and trainers all fit. One node, 4 GPUs, 8
     * cores. t=0: b (2 GPUs, 4 cores) starts. t=10: p (1..2 trainers without CPU,
     * master 2 cores, 2 servers of 2 cores) has GPUs but not the 6 cores: it waits
     * until b ends at 100, then runs 50 s at its min (rigid-min). CPU held: 4 cores
     * for 100 s, 6 for 50 s, of 8 over 150 s; GPUs: 2 for 100 s, 1 for 50 s. */
    world_init(&w, 1, 4);
    w.nodes[0].cpu_milli = 8000;
    job_spec js[2] = {ejob("b", 0, 100, 2, 0, 0), ejob("p", 10, 50, 1, 1, 2)};
    js[0].cpu_milli = 4000;
    with_roles(&js[1], 2, 2000, 2000);
    r = run(&w, js, 2, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_START, "100.000000");
    CHECK_F(&r, "p", F_END, "150.000000");
    CHECK_NEAR(r.sum.cpu_alloc_avg, (4000.0 * 100 + 6000.0 * 50) / 150 / 8000, 1e-12);
    CHECK_NEAR(r.sum.gpu_alloc_avg, (2.0 * 100 + 1.0 * 50) / 150 / 4, 1e-12);
    CHECK(strstr(r.summary, "\"cpu_util_allocated\": 0.583333") != NULL);
    run_out_free(&r);
    /* elastic: the same wait; p then grows to its max of 2 at the next trigger (every
     * 60 s: t=120), its servers staying: 20 s at speed 1, then 30 s of work at speed 2. */
    r = run(&w, js, 2, &policy_elastic, "1", 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_START, "100.000000");
    CHECK_F(&r, "p", F_END, "135.000000");
    CHECK_F(&r, "p", F_RMAX, "2");
    run_out_free(&r);
    world_fini(&w);

    /* Two nodes of 4 GPUs and 8 cores; p and q each have one trainer (1 core), a master
     * and one server (6 cores each). p: trainer n0, master n1 (2 left against 1), server
     * n0. q's trainer fits n0 but its master fits nowhere: q waits for p (0..100). */
    world_init(&w, 2, 4);
    w.nodes[0].cpu_milli = w.nodes[1].cpu_milli = 8000;
    job_spec pq[2] = {ejob("p", 0, 100, 1, 0, 0), ejob("q", 0, 100, 1, 0, 0)};
    for (int k = 0; k < 2; k++) {
        pq[k].cpu_milli = 1000;
        with_roles(&pq[k], 1, 6000, 6000);
    }
    r = run(&w, pq, 2, &policy_probe, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_END, "100.000000");
    CHECK_F(&r, "q", F_START, "100.000000");
    CHECK_F(&r, "q", F_END, "200.000000");
    CHECK_EQ_I64(g_role_nodes[0], 1);
    CHECK_EQ_I64(g_role_nodes[1], 0);
    CHECK_NEAR(r.sum.cpu_alloc_avg, 13.0 / 16.0, 1e-12);
    run_out_free(&r);

    /* A node holding only the master fails: the job stops too. p alone: trainer n0,
     * master (6 cores) n1, no server. n1 fails at t=50 (until 60): p loses its 50 s (no
     * checkpoints) and restarts at once with its master on n0 (7 cores left): ends 150. */
    job_spec m = ejob("m", 0, 100, 1, 0, 0);
    m.cpu_milli = 1000;
    with_roles(&m, 0, 6000, 0);
    g_fail.on = true;
    g_fail.node = 1;
    g_fail.down_us = 50000000;
    g_fail.up_us = 60000000;
    r = run(&w, &m, 1, &policy_rigid_min, NULL, 0, 0);
    g_fail.on = false;
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "m", F_END, "150.000000");
    CHECK_F(&r, "m", F_PREEMPT, "0"); /* a failure is not a preemption */
    CHECK_F(&r, "m", F_LOST, "50.000000");
    run_out_free(&r);

    /* A master larger than any node is rejected at arrival, with the reason. */
    job_spec big = ejob("big", 0, 100, 1, 0, 0);
    with_roles(&big, 1, 9000, 1000);
    r = run(&w, &big, 1, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_EQ_I64(r.sum.jobs_rejected, 1);
    CHECK(strstr(r.jobs, "the master needs 9000 milli-CPU; the largest node has 8000") != NULL);
    run_out_free(&r);
    /* Each role fits a node, but with the trainer not the cluster: 4 + 6 + 2 x 4 cores
     * of 16. */
    big = ejob("big", 0, 100, 1, 0, 0);
    big.cpu_milli = 4000;
    with_roles(&big, 2, 6000, 4000);
    r = run(&w, &big, 1, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.sum.jobs_rejected, 1);
    CHECK(strstr(r.jobs, "its trainers, master and parameter servers need 18000 milli-CPU "
                         "together; the cluster has 16000") != NULL);
    run_out_free(&r);
    world_fini(&w);
}

/* Admission of an elastic job whose nominal replicas exceed the cluster. On one node of
 * 4 GPUs, a (nominal 8 one-GPU replicas, 1..8) is admitted by the policies that scale
 * elastic jobs, which start it at min_replicas: elastic (threshold 1), optimus and
 * static grow it to the 4 GPUs at t=0 (speed 4/8: 100 s of work end at 200), rigid-min
 * keeps one trainer (speed 1/8: ends at 800). Policies that start a job at its nominal
 * count reject it, saying why. A min_replicas larger than the cluster is rejected by
 * every policy. With a master and a server, the CPU check counts the trainers a policy
 * starts the job with: min_replicas for the elastic policies, the nominal count for the
 * others. */
static void test_admission(void)
{
    world w;
    world_init(&w, 1, 4);
    char b[256];
    job_spec a = ejob("a", 0, 100, 8, 1, 8);
    const policy_ops *el[4] = {&policy_elastic, &policy_optimus, &policy_static, &policy_rigid_min};
    const char *end[4] = {"200.000000", "200.000000", "200.000000", "800.000000"};
    /* (static starts it with the 4 at once; elastic and optimus start it at its min and
     * grow it at once) */
    const char *rmin[4] = {"1", "1", "4", "1"};
    for (int i = 0; i < 4; i++) {
        run_out r = run(&w, &a, 1, el[i], i == 0 ? "1" : NULL, 0, 0);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_EQ_I64(r.sum.jobs_rejected, 0);
        CHECK_F(&r, "a", F_STATUS, "done");
        CHECK_F(&r, "a", F_START, "0.000000");
        CHECK_F(&r, "a", F_END, end[i]);
        CHECK_F(&r, "a", F_REPLICAS, "8"); /* nominal */
        CHECK_F(&r, "a", F_RMIN, rmin[i]);
        CHECK_F(&r, "a", F_RMAX, i == 3 ? "1" : "4");
        run_out_free(&r);
    }
    const policy_ops *rigid[2] = {&policy_fifo, &policy_binpack};
    for (int i = 0; i < 2; i++) {
        run_out r = run(&w, &a, 1, rigid[i], NULL, 0, 0);
        CHECK_EQ_I64(r.status, SIM_OK);
        CHECK_EQ_I64(r.sum.jobs_rejected, 1);
        char want[200];
        snprintf(want, sizeof want,
                 "the whole cluster can hold only 4 of the job's 8 replicas at once; policy "
                 "'%s' starts it at that count",
                 rigid[i]->name);
        CHECK(r.jobs && strstr(r.jobs, want) != NULL);
        run_out_free(&r);
    }
    /* A job that fits at its nominal count runs at it under fifo. */
    job_spec f = ejob("f", 0, 100, 4, 1, 8);
    run_out r = run(&w, &f, 1, &policy_fifo, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "f", F_STATUS, "done");
    CHECK_F(&r, "f", F_END, "100.000000");
    run_out_free(&r);
    /* min_replicas 5 of one GPU each on 4 GPUs: no policy can start it. */
    job_spec m = ejob("m", 0, 100, 8, 5, 8);
    r = run(&w, &m, 1, &policy_elastic, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "m", F_STATUS, "rejected");
    CHECK_STR(jfield(&r, "m", F_REASON, b, sizeof b),
              "the whole cluster can hold only 4 of the 5 replicas (min_replicas) the job "
              "starts with");
    run_out_free(&r);
    r = run(&w, &m, 1, &policy_fifo, NULL, 0, 0);
    CHECK_STR(jfield(&r, "m", F_REASON, b, sizeof b),
              "the whole cluster can hold only 4 of the job's 8 replicas at once");
    run_out_free(&r);
    /* 12 cores: one trainer (4 cores of its nominal 2's 8), the master (4) and a server
     * (4) fit; two trainers do not. */
    w.nodes[0].cpu_milli = 12000;
    job_spec p = ejob("p", 0, 100, 2, 1, 2);
    p.cpu_milli = 8000;
    with_roles(&p, 1, 4000, 4000);
    r = run(&w, &p, 1, &policy_rigid_min, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_STATUS, "done");
    CHECK_F(&r, "p", F_END, "200.000000");
    run_out_free(&r);
    r = run(&w, &p, 1, &policy_fifo, NULL, 0, 0);
    CHECK_EQ_I64(r.status, SIM_OK);
    CHECK_F(&r, "p", F_STATUS, "rejected");
    CHECK(r.jobs && strstr(r.jobs, "its trainers, master and parameter servers need 16000 "
                                   "milli-CPU together; the cluster has 12000") != NULL);
    run_out_free(&r);
    world_fini(&w);
}

/* Random traces of jobs with masters and servers on CPU-tight nodes, under every
 * elastic policy and the invariant checks (which count each job's roles): every job
 * done, identical bytes for identical input. */
static void test_roles_random(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    const policy_ops *pols[4] = {&policy_elastic, &policy_rigid_min, &policy_optimus,
                                 &policy_static};
    for (int it = 0; it < 15; it++) {
        gsl_rng_set(rng, (unsigned long)it + 500);
        world w;
        world_init(&w, 2 + (uint32_t)gsl_rng_uniform_int(rng, 3), 4);
        for (uint32_t k = 0; k < w.cl.n_nodes; k++)
            w.nodes[k].cpu_milli = 8000;
        job_spec js[40];
        size_t n = 10 + gsl_rng_uniform_int(rng, 30);
        double t = 0;
        for (size_t k = 0; k < n; k++) {
            char id[32];
            snprintf(id, sizeof id, "j%zu", k);
            t += gsl_rng_uniform(rng) * 60;
            uint32_t lo = 1 + (uint32_t)gsl_rng_uniform_int(rng, 2);
            bool el = gsl_rng_uniform(rng) < 0.7;
            js[k] = ejob(id, t, 50 + gsl_rng_uniform(rng) * 1000, lo, el ? lo : 0,
                         lo + (uint32_t)gsl_rng_uniform_int(rng, 3));
            js[k].cpu_milli = 500 * (uint64_t)lo;
            if (gsl_rng_uniform(rng) < 0.6)
                with_roles(&js[k], (uint32_t)gsl_rng_uniform_int(rng, 3),
                           500 + 500 * gsl_rng_uniform_int(rng, 4),
                           500 + 500 * gsl_rng_uniform_int(rng, 4));
        }
        for (int p = 0; p < 4; p++) {
            run_out r1 = run(&w, js, n, pols[p], NULL, 0, 20);
            run_out r2 = run(&w, js, n, pols[p], NULL, 0, 20);
            CHECK_EQ_I64(r1.status, SIM_OK);
            if (r1.status != SIM_OK)
                fprintf(stderr, "%s: %s\n", pols[p]->name, r1.d.msg);
            CHECK_EQ_I64(r1.sum.jobs_done, (int64_t)n);
            CHECK(r1.sum.cpu_alloc_avg > 0 && r1.sum.cpu_alloc_avg <= 1);
            CHECK(r1.jobs_len == r2.jobs_len && memcmp(r1.jobs, r2.jobs, r1.jobs_len) == 0);
            run_out_free(&r1);
            run_out_free(&r2);
        }
        world_fini(&w);
    }
    gsl_rng_free(rng);
}

int main(void)
{
    test_curves();
    test_optimus();
    test_optimus_cpu();
    test_optimus_mins_first();
    test_services();
    test_services_random();
    test_optimus_take_back();
    test_take_back_helps();
    test_pollux_model();
    test_pollux_scalability();
    test_pollux_profiles_bad();
    test_pollux_published();
    test_pollux_reader();
    test_schedules();
    test_many_per_gpu();
    test_grow_other_gpu();
    test_static_fit();
    test_static_slice();
    test_static_roles();
    test_static_late_service();
    test_zero_duration_mean();
    test_admission();
    test_random();
    test_by_shape();
    test_optimus_lists();
    test_optimus_list_move();
    test_optimus_sums();
    test_services_rule();
    test_roles_reader();
    test_roles();
    test_roles_random();
    return check_done();
}
