/*
 * test_frag.c: the fragmentation measure (policies/frag.h) on hand-built nodes against
 * hand-computed values — fractional, whole-GPU, multi-GPU, CPU-bound, memory-bound,
 * type-constrained and CPU-only task shapes, and a mixed workload — plus the cluster
 * meter on a hand-built view (cache invalidation, down nodes) and against brute force on
 * random views with and without a change log, replica resolution, shape
 * merging and growth, and allocation-failure paths.
 */
#include "policies/frag.h"
#include "base/alloc.h"

#include "check.h"

/* One node of type 1 with four GPUs whose free shares are 1000, 620, 380 and 150 milli
 * (T = 2150), 9000 milli-CPU and 40960 MiB free. */
static const uint32_t free4[4] = {150, 380, 620, 1000};
static const frag_node node4 = {.gpu_type = 1, .n_gpus = 4, .cpu_free = 9000,
                                .mem_free = 40960, .gpu_free = free4};

/* Fragmentation of node4, in milli-GPU, for a workload of the single shape s. */
static double frag_one(frag_shape s)
{
    frag_workload *w;
    if (frag_workload_create(&w, 4) != SIM_OK)
        return -1;
    double r = -1;
    if (frag_workload_add(w, &s, 3) == SIM_OK)
        r = (double)frag_node_weighted(w, &node4) / 3.0;
    frag_workload_destroy(w);
    return r;
}

static void test_hand_nodes(void)
{
    frag_shape frac = {.cpu_milli = 3500, .mem_mib = 2048, .gpus = 1, .milli = 450};
    /* Fits (cpu 3500 <= 9000, a GPU has >= 450 free): GPUs with < 450 free are
     * fragments: 380 + 150. */
    CHECK_NEAR(frag_one(frac), 530, 1e-12);
    /* A share of 700: only the idle GPU holds it; 620 + 380 + 150 are fragments. */
    frag_shape frac7 = frac;
    frac7.milli = 700;
    CHECK_NEAR(frag_one(frac7), 1150, 1e-12);
    /* Exactly the free share of a GPU is usable: 620 fits a 620 task. */
    frag_shape frac62 = frac;
    frac62.milli = 620;
    CHECK_NEAR(frag_one(frac62), 530, 1e-12);
    /* Whole GPU: every partially allocated GPU is a fragment. */
    frag_shape whole = {.cpu_milli = 3500, .gpus = 1, .milli = 1000};
    CHECK_NEAR(frag_one(whole), 1150, 1e-12);
    /* Two whole GPUs: one idle GPU only, the task does not fit: everything. */
    frag_shape whole2 = whole;
    whole2.gpus = 2;
    CHECK_NEAR(frag_one(whole2), 2150, 1e-12);
    /* Two GPUs of 0.35 each: 1000, 620 and 380 hold it; 150 is a fragment. */
    frag_shape two35 = {.gpus = 2, .milli = 350};
    CHECK_NEAR(frag_one(two35), 150, 1e-12);
    /* CPU-bound: 9500 milli-CPU > 9000 free, nothing on the node is usable. */
    frag_shape cpu = frac;
    cpu.cpu_milli = 9500;
    CHECK_NEAR(frag_one(cpu), 2150, 1e-12);
    /* Memory-bound. */
    frag_shape mem = frac;
    mem.mem_mib = 40961;
    CHECK_NEAR(frag_one(mem), 2150, 1e-12);
    /* Type-constrained to type 2 (the node is type 1): everything; to 1|2: as frac. */
    frag_shape t2 = frac;
    t2.type_mask = UINT64_C(1) << 2;
    CHECK_NEAR(frag_one(t2), 2150, 1e-12);
    frag_shape t12 = frac;
    t12.type_mask = (UINT64_C(1) << 1) | (UINT64_C(1) << 2);
    CHECK_NEAR(frag_one(t12), 530, 1e-12);
    /* A CPU-only task uses no GPU: all free GPU share is a fragment for it. */
    frag_shape cpuonly = {.cpu_milli = 1200};
    CHECK_NEAR(frag_one(cpuonly), 2150, 1e-12);

    /* Mixed workload: 3 x frac + 2 x whole + 1 x CPU-only + 1 x t2 =
     * (3*530 + 2*1150 + 2150 + 2150) / 7 = 8190 / 7 milli-GPU. */
    frag_workload *w;
    CHECK(frag_workload_create(&w, 4) == SIM_OK);
    CHECK(frag_workload_add(w, &frac, 2) == SIM_OK);
    CHECK(frag_workload_add(w, &whole, 2) == SIM_OK);
    CHECK(frag_workload_add(w, &cpuonly, 1) == SIM_OK);
    CHECK(frag_workload_add(w, &t2, 1) == SIM_OK);
    CHECK(frag_workload_add(w, &frac, 1) == SIM_OK); /* merges with the first */
    CHECK_EQ_I64(frag_workload_shapes(w), 4);
    CHECK_EQ_I64(frag_workload_total(w), 7);
    CHECK_EQ_I64(frag_node_weighted(w, &node4), 8190);
    frag_shape got;
    uint64_t count;
    frag_workload_get(w, 0, &got, &count);
    CHECK_EQ_I64(count, 3);
    CHECK_EQ_I64(got.milli, 450);
    /* A node with no free GPU share has no fragment; a GPU-less node neither. */
    const uint32_t full[2] = {0, 0};
    frag_node fn = {.gpu_type = 1, .n_gpus = 2, .cpu_free = 100000, .mem_free = 100000,
                    .gpu_free = full};
    CHECK_EQ_I64(frag_node_weighted(w, &fn), 0);
    frag_node cpu_node = {.gpu_type = SIM_GPU_TYPE_NONE, .cpu_free = 5000, .mem_free = 100};
    CHECK_EQ_I64(frag_node_weighted(w, &cpu_node), 0);
    /* A type no shape names except the unconstrained ones: frac, whole and CPU-only apply
     * as on type 1; t2 does not fit. Type 3 node with node4's resources: same value. */
    frag_node n3 = node4;
    n3.gpu_type = 3;
    CHECK_EQ_I64(frag_node_weighted(w, &n3), 8190);
    /* Every add changes the version. */
    uint64_t v0 = frag_workload_version(w);
    CHECK(frag_workload_add(w, &whole, 1) == SIM_OK);
    CHECK(frag_workload_version(w) != v0);
    /* Invalid shares are refused. */
    frag_shape bad = {.gpus = 1, .milli = 1001};
    CHECK(frag_workload_add(w, &bad, 1) == SIM_EINVAL);
    bad.milli = 0;
    CHECK(frag_workload_add(w, &bad, 1) == SIM_EINVAL);
    frag_workload_destroy(w);
    frag_workload_destroy(NULL);

    uint32_t a[5] = {700, 0, 1000, 150, 380};
    frag_sort_free(a, 5);
    CHECK(a[0] == 0 && a[1] == 150 && a[2] == 380 && a[3] == 700 && a[4] == 1000);
}

static void test_growth(void)
{
    /* 300 distinct shapes: growth past the initial capacity keeps every count and the
     * per-type order. Shape i asks for (i % 10 + 1) x 100 milli and i x 10 milli-CPU. */
    frag_workload *w;
    CHECK(frag_workload_create(&w, 3) == SIM_OK);
    for (uint32_t i = 0; i < 300; i++) {
        frag_shape s = {.cpu_milli = i * 10, .gpus = 1, .milli = (i % 10 + 1) * 100};
        CHECK(frag_workload_add(w, &s, i + 1) == SIM_OK);
    }
    for (uint32_t i = 0; i < 300; i += 7) {
        frag_shape s = {.cpu_milli = i * 10, .gpus = 1, .milli = (i % 10 + 1) * 100};
        CHECK(frag_workload_add(w, &s, 1) == SIM_OK);
    }
    CHECK_EQ_I64(frag_workload_shapes(w), 300);
    CHECK_EQ_I64(frag_workload_total(w), 300 * 301 / 2 + 43);
    /* One idle GPU, CPU for every shape: every shape fits, nothing is a fragment. */
    const uint32_t idle[1] = {1000};
    frag_node n = {.gpu_type = 2, .n_gpus = 1, .cpu_free = 1u << 20, .mem_free = 1,
                   .gpu_free = idle};
    CHECK_EQ_I64(frag_node_weighted(w, &n), 0);
    /* Free 550: shapes asking for 600..1000 do not fit (5 of each 10): their counts
     * times 550. Shape i (counts i+1, plus 1 when i % 7 == 0) misses when i % 10 >= 5. */
    const uint32_t half[1] = {550};
    n.gpu_free = half;
    uint64_t expect = 0;
    for (uint32_t i = 0; i < 300; i++)
        if (i % 10 >= 5)
            expect += 550u * (i + 1 + (i % 7 == 0));
    CHECK_EQ_I64(frag_node_weighted(w, &n), expect);
    frag_workload_destroy(w);
    CHECK(frag_workload_create(&w, SIM_MAX_GPU_TYPES + 1) == SIM_EINVAL);
}

static void test_replicas(void)
{
    job_spec j = {.num_gpus = 16, .gpu_milli = 1000, .cpu_milli = 9001, .mem_mib = 7};
    CHECK_EQ_I64(frag_replicas_of_job(&j, 8), 2);
    j.num_gpus = 12;
    CHECK_EQ_I64(frag_replicas_of_job(&j, 8), 2);
    j.num_gpus = 10; /* 3 does not divide 10; 4 neither; 5 x 2 GPUs */
    CHECK_EQ_I64(frag_replicas_of_job(&j, 4), 5);
    j.num_gpus = 7; /* prime: 7 x 1 */
    CHECK_EQ_I64(frag_replicas_of_job(&j, 4), 7);
    CHECK_EQ_I64(frag_replicas_of_job(&j, 0), 1);
    j.replicas = 7;
    CHECK_EQ_I64(frag_replicas_of_job(&j, 4), 7);
    frag_shape s;
    frag_shape_of_job(&j, 7, &s);
    CHECK_EQ_I64(s.gpus, 1);
    CHECK_EQ_I64(s.cpu_milli, 1286); /* 9001 / 7 rounded up */
    CHECK_EQ_I64(s.mem_mib, 1);
    CHECK_EQ_I64(s.milli, 1000);
    job_spec c = {.num_gpus = 0, .cpu_milli = 4000, .gpu_type_mask = 6};
    frag_shape_of_job(&c, 1, &s);
    CHECK(s.gpus == 0 && s.milli == 0 && s.type_mask == 0 && s.cpu_milli == 4000);
}

/* A hand-built view of two nodes: node 0 type 1 with 2 GPUs, node 1 type 2 with 1 GPU. */
typedef struct fake {
    uint32_t gpu_first[2], gpu_count[2], free_gpus[2], max_free[2];
    uint16_t type[2];
    uint64_t cpu_total[2], cpu_used[2], mem_total[2], mem_used[2], used_milli[2];
    bool up[2];
    uint32_t gpu_node[3], gpu_used[3];
    sim_view v;
} fake;

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    f->gpu_first[1] = 2;
    f->gpu_count[0] = 2;
    f->gpu_count[1] = 1;
    f->type[0] = 1;
    f->type[1] = 2;
    f->cpu_total[0] = f->cpu_total[1] = 16000;
    f->mem_total[0] = f->mem_total[1] = 65536;
    f->up[0] = f->up[1] = true;
    f->gpu_node[2] = 1;
    sim_view *v = &f->v;
    v->n_nodes = 2;
    v->n_gpus = 3;
    v->node_gpu_first = f->gpu_first;
    v->node_gpu_count = f->gpu_count;
    v->node_gpu_type = f->type;
    v->node_cpu_total = f->cpu_total;
    v->node_cpu_used = f->cpu_used;
    v->node_mem_total = f->mem_total;
    v->node_mem_used = f->mem_used;
    v->node_free_gpus = f->free_gpus;
    v->node_max_free_milli = f->max_free;
    v->node_used_milli = f->used_milli;
    v->node_up = f->up;
    v->gpu_node = f->gpu_node;
    v->gpu_used_milli = f->gpu_used;
}

/* Add delta milli-GPU (negative: release) to GPU g's used share. */
static void fake_use(fake *f, uint32_t g, int32_t delta)
{
    f->gpu_used[g] = (uint32_t)((int32_t)f->gpu_used[g] + delta);
    f->used_milli[f->gpu_node[g]] = (uint64_t)((int64_t)f->used_milli[f->gpu_node[g]] + delta);
}

static void test_meter(void)
{
    fake f;
    fake_init(&f);
    frag_workload *w;
    CHECK(frag_workload_create(&w, 3) == SIM_OK);
    /* M: 0.6-GPU tasks needing 10000 milli-CPU (x1), whole-GPU tasks (x1). */
    frag_shape a = {.cpu_milli = 10000, .gpus = 1, .milli = 600};
    frag_shape b = {.gpus = 1, .milli = 1000};
    CHECK(frag_workload_add(w, &a, 1) == SIM_OK);
    CHECK(frag_workload_add(w, &b, 1) == SIM_OK);
    frag_meter *m;
    CHECK(frag_meter_create(&m, w, 2, 3) == SIM_OK);
    double frag, idle;
    /* Empty: every shape fits everywhere: no fragment; 3 idle GPUs. */
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 0, 1e-12);
    CHECK_NEAR(idle, 3, 1e-12);
    /* GPU 0 at 450 used: on node 0 (free 550, 1000), a: 550 is a fragment; b: 550 too.
     * (550 + 550) / 2 / 1000 = 0.55 GPUs. */
    fake_use(&f, 0, 450);
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 0.55, 1e-12);
    CHECK_NEAR(idle, 2.55, 1e-12);
    /* Node 1 loses CPU: 7000 used leaves 9000 < 10000: a no longer fits node 1 (1000
     * free): + 1000 / 2 = 0.5 GPUs. */
    f.cpu_used[1] = 7000;
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 1.05, 1e-12);
    /* GPU 0 released, GPU 1 at 500 instead: node 0 is free 1000 and 500. */
    fake_use(&f, 0, -450);
    fake_use(&f, 1, 500);
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 1.0, 1e-12); /* node 0: (500 + 500) / 2 = 0.5; node 1: 0.5 */
    /* A down node counts neither as fragment nor as idle. */
    f.up[1] = false;
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 0.5, 1e-12);
    CHECK_NEAR(idle, 1.5, 1e-12);
    /* A workload change is seen: another whole-GPU task makes b weigh 2/3. Node 0:
     * (500 + 2 x 500) / 3 = 500. */
    CHECK(frag_workload_add(w, &b, 1) == SIM_OK);
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 0.5, 1e-12);
    f.cpu_used[0] = 7000; /* a no longer fits node 0: (1500 + 1000) / 3 */
    frag_meter_measure(m, &f.v, &frag, &idle);
    CHECK_NEAR(frag, 2.5 / 3.0, 1e-12);
    frag_meter_destroy(m);
    frag_meter_destroy(NULL);
    frag_workload_destroy(w);
}

/* A random view of RN nodes with a change log, for the meter against brute force. */
#define RN 40
typedef struct rview {
    uint32_t gpu_first[RN], gpu_count[RN], free_gpus[RN], max_free[RN];
    uint16_t type[RN];
    uint64_t cpu_total[RN], cpu_used[RN], mem_total[RN], mem_used[RN], used_milli[RN];
    bool up[RN];
    uint32_t gpu_node[RN * 8], gpu_used[RN * 8];
    uint64_t node_epoch[RN];
    uint32_t *ring;
    sim_view v;
} rview;

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % n);
}

static void rview_log(rview *r, uint32_t n)
{
    uint64_t ep = ++r->v.change_epoch;
    r->ring[ep % SIM_CHANGE_RING] = n;
    r->node_epoch[n] = ep;
}

static void rview_init(rview *r, uint32_t *ring)
{
    memset(r, 0, sizeof *r);
    r->ring = ring;
    uint32_t g = 0;
    for (uint32_t n = 0; n < RN; n++) {
        r->gpu_first[n] = g;
        r->gpu_count[n] = n % 7 == 6 ? 0 : 1 + rnd(8);
        r->type[n] = r->gpu_count[n] ? (uint16_t)(1 + rnd(3)) : SIM_GPU_TYPE_NONE;
        r->cpu_total[n] = 16000 + 16000 * rnd(4);
        r->mem_total[n] = 65536;
        r->up[n] = true;
        for (uint32_t k = 0; k < r->gpu_count[n]; k++)
            r->gpu_node[g++] = n;
    }
    sim_view *v = &r->v;
    v->n_nodes = RN;
    v->n_gpus = g;
    v->node_gpu_first = r->gpu_first;
    v->node_gpu_count = r->gpu_count;
    v->node_gpu_type = r->type;
    v->node_cpu_total = r->cpu_total;
    v->node_cpu_used = r->cpu_used;
    v->node_mem_total = r->mem_total;
    v->node_mem_used = r->mem_used;
    v->node_free_gpus = r->free_gpus;
    v->node_max_free_milli = r->max_free;
    v->node_used_milli = r->used_milli;
    v->node_up = r->up;
    v->gpu_node = r->gpu_node;
    v->gpu_used_milli = r->gpu_used;
    v->node_change_epoch = r->node_epoch;
    v->change_ring = ring;
}

/* One random change of node n's state, logged. */
static void rview_change(rview *r)
{
    uint32_t n = rnd(RN), what = rnd(6);
    if (what == 0) {
        r->up[n] = !r->up[n];
    } else if (what == 1) {
        r->cpu_used[n] = rnd((uint32_t)r->cpu_total[n] + 1);
    } else if (what == 2) {
        r->mem_used[n] = rnd((uint32_t)r->mem_total[n] + 1);
    } else if (r->gpu_count[n]) {
        uint32_t g = r->gpu_first[n] + rnd(r->gpu_count[n]);
        uint32_t u = what == 3 ? 0 : (what == 4 ? 1000 : 50 * rnd(21));
        r->used_milli[n] = r->used_milli[n] - r->gpu_used[g] + u;
        r->gpu_used[g] = u;
    }
    rview_log(r, n);
}

/* The cluster's figures node by node, as the meter must give them. */
static void brute(const frag_workload *w, const sim_view *v, double *frag, double *idle)
{
    uint32_t buf[8];
    uint64_t f = 0, i = 0;
    for (uint32_t n = 0; n < v->n_nodes; n++) {
        if (!v->node_up[n])
            continue;
        frag_node fn;
        frag_node_from_view(v, n, buf, &fn);
        f += frag_node_weighted(w, &fn);
        i += (uint64_t)v->node_gpu_count[n] * SIM_MILLI_GPU - v->node_used_milli[n];
    }
    uint64_t total = frag_workload_total(w);
    *frag = total ? (double)f / (double)total / 1000.0 : 0;
    *idle = (double)i / 1000.0;
}

static void random_shape(frag_workload *w)
{
    frag_shape s = {.cpu_milli = 4000 * rnd(6), .mem_mib = 8192 * rnd(4)};
    if (rnd(8)) {
        s.gpus = 1 + rnd(4);
        s.milli = s.gpus > 1 || rnd(2) ? 1000 : 100 * (1 + rnd(9));
        s.type_mask = rnd(3) ? 0 : (1u << (1 + rnd(3)));
    }
    CHECK(frag_workload_add(w, &s, 1 + rnd(3)) == SIM_OK);
}

/* The meter with the change log, and without it (every node compared), against brute
 * force after random changes, workload growth (new shapes and counts), failures, a
 * restarted log (another engine at the same address) and a failed growth of its sums. */
static void test_meter_random(void)
{
    uint32_t *ring = sim_calloc(SIM_CHANGE_RING, sizeof *ring);
    CHECK(ring != NULL);
    if (!ring)
        return;
    for (int round = 0; round < 20; round++) {
        rview r;
        rview_init(&r, ring);
        sim_view nolog = r.v;
        nolog.change_ring = NULL;
        nolog.node_change_epoch = NULL;
        frag_workload *w;
        CHECK(frag_workload_create(&w, 4) == SIM_OK);
        frag_meter *m, *m2;
        CHECK(frag_meter_create(&m, w, RN, RN * 8) == SIM_OK);
        CHECK(frag_meter_create(&m2, w, RN, RN * 8) == SIM_OK);
        int bad = 0;
        for (int step = 0; step < 400; step++) {
            uint32_t k = rnd(6);
            for (uint32_t c = 0; c < k; c++)
                rview_change(&r);
            if (rnd(3) == 0)
                random_shape(w);
            if (step == 200) { /* another engine: a fresh log at the same address */
                memset(r.cpu_used, 0, sizeof r.cpu_used);
                memset(r.mem_used, 0, sizeof r.mem_used);
                memset(r.used_milli, 0, sizeof r.used_milli);
                memset(r.gpu_used, 0, sizeof r.gpu_used);
                memset(r.node_epoch, 0, sizeof r.node_epoch);
                for (uint32_t n = 0; n < RN; n++)
                    r.up[n] = true;
                r.v.change_epoch = 0;
                /* Node 5 changes first, then only node 0, past the old epoch. */
                r.up[5] = false;
                rview_log(&r, 5);
                for (uint64_t c = 0; c < 1500; c++) {
                    r.cpu_used[0] = c;
                    rview_log(&r, 0);
                }
                frag_meter_forget(m);
            }
            nolog.change_epoch = r.v.change_epoch;
            double f0, i0, f1, i1, f2, i2;
            brute(w, &r.v, &f0, &i0);
            frag_meter_measure(m, &r.v, &f1, &i1);
            frag_meter_measure(m2, &nolog, &f2, &i2);
            bad += f0 != f1 || i0 != i1 || f0 != f2 || i0 != i2;
        }
        CHECK_EQ_I64(bad, 0);
        /* The sums cannot grow: measured node by node from then on, still exact. */
        for (int s = 0; s < 40; s++)
            random_shape(w);
        sim_alloc_fail_after(1);
        double f0, i0, f1, i1;
        frag_meter_measure(m, &r.v, &f1, &i1);
        sim_alloc_fail_after(0);
        brute(w, &r.v, &f0, &i0);
        CHECK(f0 == f1 && i0 == i1);
        rview_change(&r);
        frag_meter_measure(m, &r.v, &f1, &i1);
        brute(w, &r.v, &f0, &i0);
        CHECK(f0 == f1 && i0 == i1 && f0 > 0);
        frag_meter_destroy(m);
        frag_meter_destroy(m2);
        frag_workload_destroy(w);
    }
    sim_free(ring);
}

static void test_nomem(void)
{
    int64_t live0 = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 40; k++) {
        frag_workload *w = NULL;
        frag_meter *m = NULL;
        sim_alloc_fail_after(k);
        int st = frag_workload_create(&w, 4);
        for (uint32_t i = 0; st == SIM_OK && i < 100; i++) {
            frag_shape s = {.cpu_milli = i, .gpus = 1, .milli = 500};
            st = frag_workload_add(w, &s, 1);
        }
        if (st == SIM_OK)
            st = frag_meter_create(&m, w, 10, 40);
        sim_alloc_fail_after(0);
        if (st != SIM_OK) {
            failures++;
            CHECK_EQ_I64(st, SIM_ENOMEM);
        }
        frag_meter_destroy(m);
        frag_workload_destroy(w);
        CHECK_EQ_I64(sim_alloc_live(), live0);
    }
    CHECK(failures > 5);
}

int main(void)
{
    test_hand_nodes();
    test_growth();
    test_replicas();
    test_meter();
    test_meter_random();
    test_nomem();
    return check_done();
}
