/*
 * test_pack_scores.c: the reference simulator's node scores (policies/refscore.h) on
 * hand-made node states, each value computed by hand from the reference's definitions
 * (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin/), ties included;
 * then the score=reference modes in the engine, each on a case where it places a task
 * elsewhere than the policy's own score does (node ties to the lowest node id, the GPU
 * FGD takes among equal integer scores, CPU-only tasks, affinity tiers). Node ties go
 * to the node first in a random order of the nodes drawn once per run from the seed
 * (the reference's random prefixes of node names): each tie is checked over several
 * seeds against place_rank_draw, and must go to each tied node for some seed.
 */
#include "policies/frag.h"
#include "policies/registry.h"
#include "policies/place.h"
#include "policies/refscore.h"
#include "sim/engine.h"
#include "base/intern.h"

#include "array_source.h"
#include "check.h"

#include <gsl/gsl_errno.h>
#include <string.h>

static ref_node rnode(uint64_t cpu, uint32_t n, const uint32_t *left)
{
    return (ref_node){.cpu_left = cpu, .n_gpus = n, .gpu_left = left};
}

/* DotProductScore (merge, max): 100 x (1 - dot / 2), vectors over 128000 CPU, 8000 GPU. */
static void test_dotprod(void)
{
    ref_pod p = {.cpu = 8000, .gpus = 1, .milli = 500};
    uint32_t a[2] = {1000, 500}, b[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    uint32_t c[2] = {1000, 1000};
    /* [0.5, 0.1875] . [0.0625, 0.0625] = 0.04296875 -> 1 - 0.021484375 -> 97.85 -> 97 */
    ref_node na = rnode(64000, 2, a);
    CHECK_EQ_I64(ref_dotprod_score(&na, &p), 97);
    /* [1, 1] . [0.0625, 0.0625] = 0.125 -> 93.75 -> 93: the emptier node scores lower */
    ref_node nb = rnode(128000, 8, b);
    CHECK_EQ_I64(ref_dotprod_score(&nb, &p), 93);
    /* [0.5, 0.25]: 0.046875 -> 97.65 -> 97, a tie with na after truncation */
    ref_node nc = rnode(64000, 2, c);
    CHECK_EQ_I64(ref_dotprod_score(&nc, &p), 97);
    /* CPU does not fit: no match group, the minimum score */
    ref_node nd = rnode(4000, 2, c);
    CHECK_EQ_I64(ref_dotprod_score(&nd, &p), 0);
    /* A CPU-only task: 1 - (64000/128000 x 8000/128000) / 2 = 0.984375 -> 98 */
    ref_pod q = {.cpu = 8000};
    CHECK_EQ_I64(ref_dotprod_score(&nc, &q), 98);
}

/* BestFitScore: 100 x (1 - 0.5 (cpu free - req) / 128000 - 0.5 (gpu free - req) / 8000). */
static void test_bestfit(void)
{
    ref_pod p = {.cpu = 8000, .gpus = 1, .milli = 500};
    uint32_t a[2] = {1000, 500}, c[2] = {1000, 1000}, f[2] = {200, 200};
    uint32_t b[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    ref_node na = rnode(64000, 2, a);  /* 0.21875 + 0.0625 -> 71.875 -> 71 */
    ref_node nb = rnode(128000, 8, b); /* 0.46875 + 0.46875 -> 6.25 -> 6 */
    ref_node nc = rnode(64000, 2, c);  /* 0.21875 + 0.09375 -> 68.75 -> 68 */
    ref_node nd = rnode(64500, 2, a);  /* 0.220703125 + 0.0625 -> 71.68 -> 71: a tie */
    ref_node ne = rnode(63000, 2, a);  /* 0.21484375 + 0.0625 -> 72.27 -> 72 */
    ref_node nf = rnode(64000, 2, f);  /* 400 GPU share left < 500: does not fit */
    CHECK_EQ_I64(ref_bestfit_score(&na, &p), 71);
    CHECK_EQ_I64(ref_bestfit_score(&nb, &p), 6);
    CHECK_EQ_I64(ref_bestfit_score(&nc, &p), 68);
    CHECK_EQ_I64(ref_bestfit_score(&nd, &p), 71);
    CHECK_EQ_I64(ref_bestfit_score(&ne, &p), 72);
    CHECK_EQ_I64(ref_bestfit_score(&nf, &p), -1);
    /* Normalisation: (s - 6) x 100 / 65. */
    int64_t s[5] = {71, 6, 68, 71, 72};
    ref_normalize(s, 4);
    CHECK_EQ_I64(s[0], 100);
    CHECK_EQ_I64(s[1], 0);
    CHECK_EQ_I64(s[2], 95); /* 6200 / 65 = 95.38 */
    CHECK_EQ_I64(s[3], 100);
    int64_t e[3] = {40, 40, 40};
    ref_normalize(e, 3);
    CHECK(e[0] == 0 && e[1] == 0 && e[2] == 0);
    /* Scores spanning at most 100 keep their order and stay distinct, so the
     * normalisation never changes which node wins: check every pair of 0..100. */
    bool ok = true;
    for (int64_t lo = 0; lo <= 100 && ok; lo += 7)
        for (int64_t x = lo; x <= 100 && ok; x++)
            for (int64_t y = x + 1; y <= 100 && ok; y++) {
                int64_t v[3] = {lo, x, y};
                ref_normalize(v, 3);
                ok = v[1] < v[2];
            }
    CHECK(ok);
}

/* GpuPackingScore: partly used GPUs, then idle GPUs of used nodes, then idle nodes. */
static void test_gpupacking(void)
{
    ref_pod share = {.cpu = 1000, .gpus = 1, .milli = 500};
    uint32_t idle8[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    uint32_t idle2[2] = {1000, 1000}, idle20[20];
    for (int i = 0; i < 20; i++)
        idle20[i] = 1000;
    uint32_t part[3] = {1000, 300, 700}, lone[2] = {1000, 400}, two[2] = {600, 600};
    uint32_t mix[2] = {600, 1000}, none[2] = {300, 400}, whole[4] = {1000, 1000, 1000, 0};
    ref_node n8 = rnode(64000, 8, idle8), n2 = rnode(64000, 2, idle2);
    ref_node n20 = rnode(64000, 20, idle20), np = rnode(64000, 3, part);
    ref_node nl = rnode(64000, 2, lone), nt = rnode(64000, 2, two), nm = rnode(64000, 2, mix);
    ref_node nn = rnode(64000, 2, none), nw = rnode(64000, 4, whole);
    CHECK_EQ_I64(ref_gpupacking_score(&n8, &share), 25);  /* 33 - 8 */
    CHECK_EQ_I64(ref_gpupacking_score(&n2, &share), 31);  /* 33 - 2 */
    CHECK_EQ_I64(ref_gpupacking_score(&n20, &share), 20); /* max(33 - 20, 20) */
    /* least free first: 300 does not fit, 700 does: 100 - (70 / 10) */
    CHECK_EQ_I64(ref_gpupacking_score(&np, &share), 93);
    CHECK_EQ_I64(ref_gpupacking_score(&nl, &share), 49); /* needs the idle GPU: 50 - 1 */
    CHECK_EQ_I64(ref_gpupacking_score(&nt, &share), 94); /* 100 - 60 / 10 */
    CHECK_EQ_I64(ref_gpupacking_score(&nm, &share), 94); /* the same: a tie */
    CHECK_EQ_I64(ref_gpupacking_score(&nn, &share), -1);
    ref_pod two_whole = {.cpu = 1000, .gpus = 2, .milli = 1000};
    CHECK_EQ_I64(ref_gpupacking_score(&nw, &two_whole), 48); /* 50 - 2 */
    ref_pod cpu_only = {.cpu = 1000};
    CHECK_EQ_I64(ref_gpupacking_score(&nw, &cpu_only), 0);
}

/* GpuClusteringScore: four tiers of 25, plus 25 x (8000 - free) / 8000 in integers. */
static void test_gpuclustering(void)
{
    uint64_t share = ref_affinity_bit(1, 500), one = ref_affinity_bit(1, 1000);
    uint64_t twog = ref_affinity_bit(2, 1000);
    CHECK_EQ_I64((int64_t)share, 1);
    CHECK_EQ_I64((int64_t)one, 2);
    CHECK_EQ_I64((int64_t)twog, 4);
    CHECK_EQ_I64((int64_t)ref_affinity_bit(1, 300), 1); /* every share is one affinity */
    CHECK_EQ_I64((int64_t)ref_affinity_bit(0, 0), 0);
    CHECK_EQ_I64(ref_gpuclustering_score(share, share, 2000), 93);       /* 18 + 75 */
    CHECK_EQ_I64(ref_gpuclustering_score(share | one, share, 2000), 68); /* 18 + 50 */
    CHECK_EQ_I64(ref_gpuclustering_score(0, share, 8000), 25);           /* 0 + 25 */
    CHECK_EQ_I64(ref_gpuclustering_score(0, share, 2000), 43);           /* 18 + 25 */
    CHECK_EQ_I64(ref_gpuclustering_score(one, share, 500), 23);          /* 23 + 0 */
    CHECK_EQ_I64(ref_gpuclustering_score(twog, twog, 0), 100);           /* 25 + 75 */
    /* 25 x 6100 / 8000 = 19.06 and 25 x 6200 / 8000 = 19.375: a tie */
    CHECK_EQ_I64(ref_gpuclustering_score(share, share, 1900), 94);
    CHECK_EQ_I64(ref_gpuclustering_score(share, share, 1800), 94);
    CHECK_EQ_I64(ref_gpuclustering_score(share, 0, 1800), 0); /* CPU-only task */
}

/* FGDScore: 100 x sigmoid(-(after - before) / 1000), truncated. */
static void test_fgd_score(void)
{
    CHECK_EQ_I64(ref_fgd_score(0), 50);
    CHECK_EQ_I64(ref_fgd_score(-1000), 73); /* sigmoid(1) = 0.731 */
    CHECK_EQ_I64(ref_fgd_score(1000), 26);  /* sigmoid(-1) = 0.269 */
    CHECK_EQ_I64(ref_fgd_score(250), 43);   /* 0.4378 */
    CHECK_EQ_I64(ref_fgd_score(240), 44);   /* 0.4403 */
    CHECK_EQ_I64(ref_fgd_score(230), 44);   /* 0.4428: a tie with 240 */
    CHECK_EQ_I64(ref_fgd_score(10), 49);    /* any growth loses a point */
    CHECK_EQ_I64(ref_fgd_score(-30), 50);   /* a small decrease does not gain one */
}

/* The typical tasks: memory dropped, the most popular shapes until 95 % of the tasks. */
static void test_typical(void)
{
    frag_workload *all = NULL, *t = NULL;
    CHECK(frag_workload_create(&all, 4) == SIM_OK);
    frag_shape a1 = {.cpu_milli = 1000, .mem_mib = 100, .gpus = 1, .milli = 500};
    frag_shape a2 = {.cpu_milli = 1000, .mem_mib = 200, .gpus = 1, .milli = 500};
    frag_shape b = {.cpu_milli = 2000, .gpus = 1, .milli = 1000};
    frag_shape c = {.cpu_milli = 4000};
    frag_shape d = {.cpu_milli = 3000, .gpus = 2, .milli = 1000};
    frag_shape e = {.cpu_milli = 5000, .gpus = 2, .milli = 1000};
    frag_workload_add(all, &d, 3);
    frag_workload_add(all, &a1, 25);
    frag_workload_add(all, &b, 30);
    frag_workload_add(all, &e, 2);
    frag_workload_add(all, &c, 15);
    frag_workload_add(all, &a2, 25);
    CHECK(ref_typical_workload(all, 4, &t) == SIM_OK);
    /* a (50), b (30), c (15): 95 of 100 tasks */
    CHECK_EQ_I64(frag_workload_shapes(t), 3);
    CHECK_EQ_I64((int64_t)frag_workload_total(t), 95);
    frag_shape s;
    uint64_t n;
    frag_workload_get(t, 0, &s, &n);
    CHECK(s.cpu_milli == 1000 && s.mem_mib == 0 && s.milli == 500 && n == 50);
    frag_workload_get(t, 2, &s, &n);
    CHECK(s.cpu_milli == 4000 && s.gpus == 0 && n == 15);
    frag_workload_destroy(t);
    frag_workload_destroy(all);
    /* Equal counts: the larger CPU first; the cut is after the shape reaching 95 %. */
    CHECK(frag_workload_create(&all, 4) == SIM_OK);
    for (uint32_t k = 0; k < 20; k++) {
        frag_shape x = {.cpu_milli = 1000 + 100 * k, .gpus = 1, .milli = 1000};
        frag_workload_add(all, &x, 1);
    }
    CHECK(ref_typical_workload(all, 4, &t) == SIM_OK);
    CHECK_EQ_I64(frag_workload_shapes(t), 19);
    frag_workload_get(t, 0, &s, &n);
    CHECK_EQ_I64((int64_t)s.cpu_milli, 2900);
    frag_workload_get(t, 18, &s, &n);
    CHECK_EQ_I64((int64_t)s.cpu_milli, 1100);
    frag_workload_destroy(t);
    frag_workload_destroy(all);
}

/* ---- The reference modes in the engine -------------------------------------------- */

typedef struct world {
    sim_intern *types, *tenants;
    cluster_spec cl;
    uint64_t type_mem[2];
} world;

static void world_init(world *w, node_spec *nodes, uint32_t n)
{
    w->types = sim_intern_create(true);
    w->tenants = sim_intern_create(false);
    sim_intern_add(w->types, "A", 1, 0);
    w->cl.n_nodes = n;
    w->cl.nodes = nodes;
    w->type_mem[0] = w->type_mem[1] = 16384;
}

static void world_fini(world *w)
{
    sim_intern_destroy(w->types);
    sim_intern_destroy(w->tenants);
}

static node_spec node(const char *name, uint32_t gpus, uint64_t cpu)
{
    node_spec n = {.cpu_milli = cpu, .mem_mib = 262144, .num_gpus = gpus, .gpu_type = 1};
    snprintf(n.name, sizeof n.name, "%s", name);
    return n;
}

static job_spec job(const char *id, sim_time at, double work_s, uint32_t gpus, uint32_t milli,
                    uint64_t cpu)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    j.submit_us = at;
    j.work_s = work_s;
    j.num_gpus = gpus;
    j.gpu_milli = gpus ? milli : 0;
    j.true_milli = j.gpu_milli;
    j.replicas = 1;
    j.cpu_milli = cpu;
    j.name = "";
    j.command = "";
    return j;
}

/* The seed of the runs below. */
static uint64_t run_seed = 7;

/* Run `policy` with score=`score` (NULL: the default) until horizon_us; the caller
 * inspects the view and destroys the engine. NULL on failure. */
static sim_engine *run_until(world *w, const char *policy, const char *score, const job_spec *jobs,
                             uint32_t n, const frag_workload *wl, sim_time horizon_us)
{
    sim_config cfg = {.seed = run_seed, .horizon_us = horizon_us};
    sim_world sw = {.cluster = &w->cl,
                    .gpu_types = w->types,
                    .gpu_type_mem_mib = w->type_mem,
                    .tenants = w->tenants};
    policy_config pc = {.policy = policy, .workload = wl};
    if (score) {
        pc.n = 1;
        snprintf(pc.key[0], sizeof pc.key[0], "score");
        pc.value[0] = score;
    }
    sim_engine *e;
    sim_diag d = {0};
    if (sim_engine_create(&e, &cfg, &sw, policy_find(policy), &pc, &d) != SIM_OK) {
        fprintf(stderr, "create %s: %s\n", policy, d.msg);
        return NULL;
    }
    array_source src = {.jobs = jobs, .n = n};
    sim_source s = {.ctx = &src, .next = array_next};
    if (sim_engine_run(e, &s, &d) != SIM_OK) {
        fprintf(stderr, "run %s: %s\n", policy, d.msg);
        sim_engine_destroy(e);
        return NULL;
    }
    return e;
}

/* Used share of GPU g after running policy/score, or -1 on failure. */
static int64_t gpu_used_after(world *w, const char *policy, const char *score, const job_spec *jobs,
                              uint32_t n, const frag_workload *wl, sim_time horizon, uint32_t g)
{
    sim_engine *e = run_until(w, policy, score, jobs, n, wl, horizon);
    if (!e)
        return -1;
    int64_t u = sim_engine_view(e)->gpu_used_milli[g];
    sim_engine_destroy(e);
    return u;
}

static int64_t cpu_used_after(world *w, const char *policy, const char *score, const job_spec *jobs,
                              uint32_t n, sim_time horizon, uint32_t node)
{
    sim_engine *e = run_until(w, policy, score, jobs, n, NULL, horizon);
    if (!e)
        return -1;
    int64_t u = (int64_t)sim_engine_view(e)->node_cpu_used[node];
    sim_engine_destroy(e);
    return u;
}

/* The node of lowest rank among nodes[0..k) for the current seed, over n nodes. */
static uint32_t tie_winner(uint32_t n, const uint32_t *nodes, uint32_t k)
{
    uint32_t rank[8];
    if (n > 8 || place_rank_draw(run_seed, n, rank) != SIM_OK)
        return UINT32_MAX;
    uint32_t best = nodes[0];
    for (uint32_t i = 1; i < k; i++)
        if (rank[nodes[i]] < rank[best])
            best = nodes[i];
    return best;
}

/* bestfit: n0 (64500 CPU) and n1 (64000), 2 GPUs each; a task of 8000 CPU and half a
 * GPU. Reference: 68.55 and 68.75, both 68 after truncation, so a tie: the node first
 * in the run's random order. Own: the least left per capacity, n1 (56000 / 64000 <
 * 56500 / 64500), whatever the seed. */
static void test_engine_bestfit(void)
{
    node_spec nodes[2] = {node("n0", 2, 64500), node("n1", 2, 64000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[1] = {job("j0", 0, 1e6, 1, 500, 8000)};
    const uint32_t tied[2] = {0, 1};
    uint32_t wins[2] = {0, 0};
    for (run_seed = 1; run_seed <= 12; run_seed++) {
        uint32_t win = tie_winner(2, tied, 2);
        CHECK(win < 2);
        if (win >= 2)
            break;
        wins[win]++;
        CHECK_EQ_I64(gpu_used_after(&w, "bestfit", "reference", jobs, 1, NULL, 1, 2 * win), 500);
        CHECK_EQ_I64(gpu_used_after(&w, "bestfit", NULL, jobs, 1, NULL, 1, 2), 500);
    }
    CHECK(wins[0] > 0 && wins[1] > 0);
    run_seed = 7;
    world_fini(&w);
}

/* dotprod: n0 has 8 GPUs and 128000 CPU, n1 2 GPUs and 64000. Reference: 93 on n0, 97
 * on n1 (less free where the task asks): n1. */
static void test_engine_dotprod(void)
{
    node_spec nodes[2] = {node("n0", 8, 128000), node("n1", 2, 64000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[1] = {job("j0", 0, 1e6, 1, 500, 8000)};
    CHECK_EQ_I64(gpu_used_after(&w, "dotprod", "reference", jobs, 1, NULL, 1, 8), 500);
    world_fini(&w);
}

/* gpupacking: n0 (16000 CPU) cannot host j0 (CPU-only, 20000), n1 can. j1 (CPU-only,
 * 4000): the reference scores CPU-only tasks 0 everywhere, so the node first in the
 * run's random order; the own score, the most allocated CPU, n1 whatever the seed. */
static void test_engine_gpupacking(void)
{
    node_spec nodes[2] = {node("n0", 2, 16000), node("n1", 2, 32000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[2] = {job("j0", 0, 1e6, 0, 0, 20000), job("j1", 1, 1e6, 0, 0, 4000)};
    const uint32_t tied[2] = {0, 1};
    uint32_t wins[2] = {0, 0};
    for (run_seed = 1; run_seed <= 12; run_seed++) {
        uint32_t win = tie_winner(2, tied, 2);
        CHECK(win < 2);
        if (win >= 2)
            break;
        wins[win]++;
        CHECK_EQ_I64(cpu_used_after(&w, "gpupacking", "reference", jobs, 2, 2, 0),
                     win == 0 ? 4000 : 0);
        CHECK_EQ_I64(cpu_used_after(&w, "gpupacking", NULL, jobs, 2, 2, 1), 24000);
    }
    CHECK(wins[0] > 0 && wins[1] > 0);
    run_seed = 7;
    world_fini(&w);
}

/* gpuclustering: three 2-GPU nodes. j0 (one whole GPU) and j1 (half a GPU) go to idle
 * nodes (own: n0 and n1; reference: 43 on every idle node, the first in the run's
 * random order, then 43 against 21 on j0's node). j2 (0.3 GPU): the reference puts it
 * with the other sharing task (only the sharing affinity: 20 + 75); the own score,
 * which groups equal shares, finds none and takes the idle n2. */
static void test_engine_gpuclustering(void)
{
    node_spec nodes[3] = {node("n0", 2, 32000), node("n1", 2, 32000), node("n2", 2, 32000)};
    world w;
    world_init(&w, nodes, 3);
    job_spec jobs[3] = {job("j0", 0, 1e6, 1, 1000, 1000), job("j1", 1, 1e6, 1, 500, 1000),
                        job("j2", 2, 1e6, 1, 300, 1000)};
    for (run_seed = 1; run_seed <= 6; run_seed++) {
        const uint32_t all[3] = {0, 1, 2};
        uint32_t n0 = tie_winner(3, all, 3), rest[2], k = 0;
        for (uint32_t i = 0; i < 3; i++)
            if (i != n0)
                rest[k++] = i;
        uint32_t n1 = tie_winner(3, rest, 2);
        CHECK(n0 < 3 && n1 < 3);
        sim_engine *e = run_until(&w, "gpuclustering", "reference", jobs, 3, NULL, 3);
        CHECK(e != NULL);
        if (e && n0 < 3 && n1 < 3) {
            const sim_view *v = sim_engine_view(e);
            CHECK_EQ_I64(v->node_used_milli[n0], 1000);
            CHECK_EQ_I64(v->node_used_milli[n1], 800);
            CHECK_EQ_I64(v->node_used_milli[3 - n0 - n1], 0);
        }
        if (e)
            sim_engine_destroy(e);
    }
    run_seed = 7;
    sim_engine *e = run_until(&w, "gpuclustering", NULL, jobs, 3, NULL, 3);
    CHECK(e != NULL);
    if (e) {
        const sim_view *v = sim_engine_view(e);
        CHECK_EQ_I64(v->node_used_milli[1], 500);
        CHECK_EQ_I64(v->node_used_milli[2], 300);
        sim_engine_destroy(e);
    }
    world_fini(&w);
}

/* fgd, the GPU inside a node: one node of 2 GPUs, M = {half-GPU tasks}. j0 (0.4, short)
 * takes GPU 0; j1 (0.4) takes GPU 1 (on GPU 0, 200 left would be a fragment); j0 ends:
 * free (1000, 600). j2 (0.1): on either GPU no fragment appears, an exact tie. The own
 * score takes the less free GPU 1; the reference's scores are both 50 and it takes the
 * first, GPU 0. */
static void test_engine_fgd_gpu(void)
{
    node_spec nodes[1] = {node("n0", 2, 32000)};
    world w;
    world_init(&w, nodes, 1);
    job_spec jobs[3] = {job("j0", 0, 1, 1, 400, 0), job("j1", 1, 1e6, 1, 400, 0),
                        job("j2", 5000000, 1e6, 1, 100, 0)};
    frag_workload *wl = NULL;
    CHECK(frag_workload_create(&wl, 2) == SIM_OK);
    frag_shape s = {.gpus = 1, .milli = 500};
    frag_workload_add(wl, &s, 1);
    CHECK_EQ_I64(gpu_used_after(&w, "fgd", "reference", jobs, 3, wl, 5000001, 0), 100);
    CHECK_EQ_I64(gpu_used_after(&w, "fgd", "reference", jobs, 3, wl, 5000001, 1), 400);
    CHECK_EQ_I64(gpu_used_after(&w, "fgd", NULL, jobs, 3, wl, 5000001, 0), 0);
    CHECK_EQ_I64(gpu_used_after(&w, "fgd", NULL, jobs, 3, wl, 5000001, 1), 500);
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* fgd, node ties: two idle 1-GPU nodes and M = {whole GPUs}; a 0.3 task strands 700 on
 * whichever node it takes: 100 x sigmoid(-0.7) = 33 on both. Equal scores: the node
 * first in the run's random order (own: the same exact value, the lowest id). */
static void test_engine_fgd_tie(void)
{
    node_spec nodes[2] = {node("n0", 1, 32000), node("n1", 1, 32000)};
    world w;
    world_init(&w, nodes, 2);
    job_spec jobs[1] = {job("j0", 0, 1e6, 1, 300, 0)};
    frag_workload *wl = NULL;
    CHECK(frag_workload_create(&wl, 2) == SIM_OK);
    frag_shape s = {.gpus = 1, .milli = 1000};
    frag_workload_add(wl, &s, 1);
    CHECK_EQ_I64(ref_fgd_score(700), 33);
    const uint32_t tied[2] = {0, 1};
    uint32_t wins[2] = {0, 0};
    for (run_seed = 1; run_seed <= 12; run_seed++) {
        uint32_t win = tie_winner(2, tied, 2);
        CHECK(win < 2);
        if (win >= 2)
            break;
        wins[win]++;
        CHECK_EQ_I64(gpu_used_after(&w, "fgd", "reference", jobs, 1, wl, 1, win), 300);
        CHECK_EQ_I64(gpu_used_after(&w, "fgd", NULL, jobs, 1, wl, 1, 0), 300);
    }
    CHECK(wins[0] > 0 && wins[1] > 0);
    run_seed = 7;
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* A bad value of the option is refused with the choices. */
static void test_bad_option(void)
{
    node_spec nodes[1] = {node("n0", 1, 32000)};
    world w;
    world_init(&w, nodes, 1);
    const char *pols[5] = {"dotprod", "bestfit", "gpupacking", "gpuclustering", "fgd"};
    frag_workload *wl = NULL;
    CHECK(frag_workload_create(&wl, 2) == SIM_OK);
    for (int i = 0; i < 5; i++) {
        sim_config cfg = {.seed = 1, .horizon_us = 1};
        sim_world sw = {.cluster = &w.cl,
                        .gpu_types = w.types,
                        .gpu_type_mem_mib = w.type_mem,
                        .tenants = w.tenants};
        policy_config pc = {.policy = pols[i], .workload = wl, .n = 1};
        snprintf(pc.key[0], sizeof pc.key[0], "score");
        pc.value[0] = "paper";
        sim_engine *e = NULL;
        sim_diag d = {0};
        CHECK(sim_engine_create(&e, &cfg, &sw, policy_find(pols[i]), &pc, &d) != SIM_OK);
        CHECK(strstr(d.msg, "reference") != NULL);
        if (e)
            sim_engine_destroy(e);
    }
    frag_workload_destroy(wl);
    world_fini(&w);
}

/* place_rank_draw: a permutation, the same for the same seed, another for another. */
static void test_rank_draw(void)
{
    uint32_t a[50], b[50], c[50];
    CHECK(place_rank_draw(42, 50, a) == SIM_OK);
    CHECK(place_rank_draw(42, 50, b) == SIM_OK);
    CHECK(place_rank_draw(43, 50, c) == SIM_OK);
    uint8_t seen[50] = {0};
    bool perm = true, same = true, other = false;
    for (int i = 0; i < 50; i++) {
        perm = perm && a[i] < 50 && !seen[a[i]];
        if (a[i] < 50)
            seen[a[i]] = 1;
        same = same && a[i] == b[i];
        other = other || a[i] != c[i];
    }
    CHECK(perm && same && other);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_dotprod();
    test_bestfit();
    test_gpupacking();
    test_gpuclustering();
    test_fgd_score();
    test_typical();
    test_rank_draw();
    test_engine_bestfit();
    test_engine_dotprod();
    test_engine_gpupacking();
    test_engine_gpuclustering();
    test_engine_fgd_gpu();
    test_engine_fgd_tie();
    test_bad_option();
    return check_done();
}
