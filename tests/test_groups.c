/*
 * test_groups.c: the nodes grouped by state (policies/groups.h) and the packing
 * searches that use them.
 *
 * 1. The index against brute force: a hand-driven view whose nodes change at random
 *    (allocations, releases, failures), logged as the engine logs them, its GPUs of one
 *    memory size, or of two (per node, and mixed on some nodes); after every sync
 *    each node's group holds exactly the nodes of equal state, each group's first member
 *    is its least tie key (node id, or a random rank), its copy of the node summary is
 *    every member's, and the groups are as many as the distinct states.
 * 2. The placements: fgd, bestfit, dotprod, gpupacking and gpuclustering, each with its
 *    own and the reference score, and random (its uniform draw), on random
 *    heterogeneous clusters (several nodes of each kind, so groups have members) and
 *    random jobs (fractional shares, several GPUs
 *    per replica, gangs, GPU memory, type constraints, CPU-only jobs, node failures),
 *    and binpack and fifo on 2,112 nodes (they use the groups on large clusters only):
 *    the state of every GPU and node after every scheduling pass is the same with the
 *    groups (and, for all but fgd and random, their scores remembered by request) as with
 *    the search over every node.
 * 3. Binpack's block search and its CPU-only search against a score of every node.
 * 4. Gangs that failed, tried again only once their nodes could hold them, against
 *    trying them at every chance: the same placements.
 */
#include "policies/frag.h"
#include "policies/registry.h"
#include "policies/place.h"
#include "base/alloc.h"
#include "sim/engine.h"
#include "base/intern.h"

#include "array_source.h"
#include "check.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

/* ---- 1. The index against brute force ------------------------------------------------ */

enum { FN = 40, FG_MAX = 4 };

typedef struct fake {
    sim_view v;
    uint32_t gpu_first[FN], gpu_count[FN];
    uint16_t gpu_type[FN];
    uint64_t cpu_total[FN], cpu_used[FN], mem_total[FN], mem_used[FN];
    bool up[FN];
    uint32_t used_milli[FN * FG_MAX], nres[FN * FG_MAX];
    uint64_t used_mem[FN * FG_MAX], mem_gpu[FN * FG_MAX];
    uint64_t change_epoch[FN];
    sim_node_sum sum[FN];
    uint32_t ring[SIM_CHANGE_RING];
} fake;

/* Node n's summary, as the engine keeps it. */
static void fake_sum(fake *f, uint32_t n)
{
    sim_node_sum *ns = &f->sum[n];
    memset(ns, 0, sizeof *ns);
    ns->cpu_free = f->cpu_total[n] - f->cpu_used[n];
    ns->mem_free = f->mem_total[n] - f->mem_used[n];
    ns->gpu_count = (uint16_t)f->gpu_count[n];
    ns->gpu_type = (uint8_t)f->gpu_type[n];
    ns->up = f->up[n];
    for (uint32_t k = 0; k < f->gpu_count[n]; k++) {
        uint32_t g = f->gpu_first[n] + k, free = SIM_MILLI_GPU - f->used_milli[g];
        ns->used_milli += f->used_milli[g];
        ns->free_gpus += f->nres[g] == 0;
        if (free > ns->max_free_milli)
            ns->max_free_milli = (uint16_t)free;
    }
}

static void fake_log(fake *f, uint32_t n)
{
    fake_sum(f, n);
    uint64_t ep = ++f->v.change_epoch;
    f->ring[ep % SIM_CHANGE_RING] = n;
    f->change_epoch[n] = ep;
}

static void fake_init(fake *f, gsl_rng *r, bool mixed_mem)
{
    memset(f, 0, sizeof *f);
    uint32_t g = 0;
    for (uint32_t n = 0; n < FN; n++) {
        /* Three kinds of node, so many start in the same state. */
        uint32_t kind = (uint32_t)gsl_rng_uniform_int(r, 3);
        f->gpu_first[n] = g;
        f->gpu_count[n] = kind == 2 ? 2 : FG_MAX;
        f->gpu_type[n] = (uint16_t)(kind + 1);
        f->cpu_total[n] = kind == 1 ? 32000 : 64000;
        f->mem_total[n] = 262144;
        f->up[n] = true;
        /* With mixed memory: mostly one GPU size per node (of two), sometimes both sizes
         * on a node (the index writes the two cases differently). */
        double mix = mixed_mem ? gsl_rng_uniform(r) : 0;
        uint64_t size = mix < 0.6 ? 16384 : 32768;
        for (uint32_t k = 0; k < f->gpu_count[n]; k++, g++)
            f->mem_gpu[g] = mix < 0.8 ? size : gsl_rng_uniform_int(r, 2) ? 16384 : 32768;
    }
    sim_view *v = &f->v;
    v->n_nodes = FN;
    v->n_gpus = g;
    v->node_gpu_first = f->gpu_first;
    v->node_gpu_count = f->gpu_count;
    v->node_gpu_type = f->gpu_type;
    v->node_cpu_total = f->cpu_total;
    v->node_cpu_used = f->cpu_used;
    v->node_mem_total = f->mem_total;
    v->node_mem_used = f->mem_used;
    v->node_up = f->up;
    v->gpu_used_milli = f->used_milli;
    v->gpu_nres = f->nres;
    v->gpu_used_mem = f->used_mem;
    v->gpu_mem_total = f->mem_gpu;
    v->node_change_epoch = f->change_epoch;
    v->change_ring = f->ring;
    v->node_sum = f->sum;
    for (uint32_t n = 0; n < FN; n++)
        fake_sum(f, n);
}

/* One random change of a random node (small steps, so states recur). */
static void fake_mutate(fake *f, gsl_rng *r)
{
    uint32_t n = (uint32_t)gsl_rng_uniform_int(r, FN);
    uint32_t g = f->gpu_first[n] + (uint32_t)gsl_rng_uniform_int(r, f->gpu_count[n]);
    switch (gsl_rng_uniform_int(r, 8)) {
    case 0:
        if (f->used_milli[g] <= 500) {
            f->used_milli[g] += 500;
            f->nres[g]++;
            f->cpu_used[n] += 4000;
        }
        break;
    case 1:
        if (f->nres[g]) {
            f->used_milli[g] = f->used_milli[g] >= 500 ? f->used_milli[g] - 500 : 0;
            f->nres[g]--;
            f->cpu_used[n] = f->cpu_used[n] >= 4000 ? f->cpu_used[n] - 4000 : 0;
        }
        break;
    case 2:
        /* A resident that holds no share: a GPU with no free share removed differs from
         * an idle one only by its resident. */
        f->nres[g] = f->nres[g] ? 0 : 1;
        break;
    case 3:
        f->used_mem[g] = f->used_mem[g] ? 0 : 4096;
        break;
    case 4:
        f->mem_used[n] = f->mem_used[n] ? 0 : 1024;
        break;
    case 5:
        if (gsl_rng_uniform(r) < 0.3)
            f->up[n] = !f->up[n];
        break;
    default:
        /* Back to idle: states recur. */
        for (uint32_t k = 0; k < f->gpu_count[n]; k++) {
            uint32_t gk = f->gpu_first[n] + k;
            f->used_milli[gk] = f->nres[gk] = 0;
            f->used_mem[gk] = 0;
        }
        f->cpu_used[n] = f->mem_used[n] = 0;
        f->up[n] = true;
        break;
    }
    fake_log(f, n);
}

/* Whether nodes a and b are in the same state (GPUs as a multiset), by brute force. */
static bool same_state(const fake *f, uint32_t a, uint32_t b)
{
    if (f->up[a] != f->up[b] || f->gpu_type[a] != f->gpu_type[b] ||
        f->gpu_count[a] != f->gpu_count[b] || f->cpu_total[a] != f->cpu_total[b] ||
        f->cpu_used[a] != f->cpu_used[b] || f->mem_total[a] != f->mem_total[b] ||
        f->mem_used[a] != f->mem_used[b])
        return false;
    bool taken[FG_MAX] = {false};
    for (uint32_t i = 0; i < f->gpu_count[a]; i++) {
        uint32_t ga = f->gpu_first[a] + i;
        bool found = false;
        for (uint32_t k = 0; k < f->gpu_count[b] && !found; k++) {
            uint32_t gb = f->gpu_first[b] + k;
            if (!taken[k] && f->used_milli[ga] == f->used_milli[gb] &&
                (f->nres[ga] > 0) == (f->nres[gb] > 0) && f->used_mem[ga] == f->used_mem[gb] &&
                f->mem_gpu[ga] == f->mem_gpu[gb]) {
                taken[k] = true;
                found = true;
            }
        }
        if (!found)
            return false;
    }
    return true;
}

static void check_groups(const fake *f, const place_groups *g, const uint32_t *rank, uint64_t *bad)
{
    uint32_t states = 0, members = 0;
    for (uint32_t a = 0; a < FN; a++) {
        bool first_of_state = true;
        for (uint32_t b = 0; b < FN; b++) {
            bool same = same_state(f, a, b);
            if (same != (g->node_group[a] == g->node_group[b]))
                (*bad)++;
            if (same && b < a)
                first_of_state = false;
        }
        states += first_of_state;
    }
    for (uint32_t i = 0; i < g->n_live; i++) {
        uint32_t s = g->live[i], first = place_groups_first(g, s), least = UINT32_MAX, cnt = 0;
        for (uint32_t n = 0; n < FN; n++) {
            if (g->node_group[n] != s)
                continue;
            cnt++;
            if (least == UINT32_MAX || (rank ? rank[n] < rank[least] : n < least))
                least = n;
            /* The group's copy of the summary is every member's. */
            const sim_node_sum *a = place_groups_sum(g, s), *b = &f->sum[n];
            if (a->cpu_free != b->cpu_free || a->mem_free != b->mem_free ||
                a->used_milli != b->used_milli || a->gpu_count != b->gpu_count ||
                a->free_gpus != b->free_gpus || a->max_free_milli != b->max_free_milli ||
                a->gpu_type != b->gpu_type || a->up != b->up)
                (*bad)++;
        }
        if (first != least || cnt != g->size[s])
            (*bad)++;
        members += cnt;
    }
    if (states != g->n_live || members != FN)
        (*bad)++;
}

static void test_index(bool ranked, bool mixed_mem)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, ranked ? 99 : 5);
    static fake f;
    fake_init(&f, r, mixed_mem);
    uint32_t rank[FN];
    CHECK(place_rank_draw(17, FN, rank) == SIM_OK);
    place_groups g;
    CHECK(place_groups_init(&g, FN, FG_MAX, ranked ? rank : NULL, NULL, NULL) == SIM_OK);
    CHECK(place_groups_fit_view(&g, &f.v));
    place_groups_sync(&g, &f.v);
    uint64_t bad = 0;
    check_groups(&f, &g, ranked ? rank : NULL, &bad);
    /* Three kinds of idle node: three groups (more with the GPU sizes mixed). */
    if (!mixed_mem)
        CHECK_EQ_I64(g.n_live, 3);
    else
        CHECK(g.n_live > 3);
    uint32_t max_live = 0;
    uint64_t sum_live = 0;
    for (int round = 0; round < 3000; round++) {
        uint32_t k = 1 + (uint32_t)gsl_rng_uniform_int(r, 4);
        for (uint32_t i = 0; i < k; i++)
            fake_mutate(&f, r);
        /* Now and then more changes than the log holds: the groups are rebuilt. */
        if (round == 1500)
            for (uint32_t i = 0; i <= SIM_CHANGE_RING; i++)
                fake_log(&f, i % FN);
        place_groups_sync(&g, &f.v);
        check_groups(&f, &g, ranked ? rank : NULL, &bad);
        if (g.n_live > max_live)
            max_live = g.n_live;
        sum_live += g.n_live;
    }
    CHECK_EQ_I64(bad, 0);
    /* The states spread and recur: groups of several members throughout. */
    CHECK(max_live > 10);
    if (!mixed_mem)
        CHECK(sum_live < 3000 * (uint64_t)FN * 3 / 4);
    place_groups_fini(&g);
    /* Allocation failures in init: SIM_ENOMEM, nothing leaked. */
    int64_t live0 = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 20; k++) {
        sim_alloc_fail_after(k);
        int st = place_groups_init(&g, FN, FG_MAX, NULL, NULL, NULL);
        sim_alloc_fail_after(0);
        if (st == SIM_OK)
            place_groups_fini(&g);
        else
            failures++;
        CHECK_EQ_I64(sim_alloc_live(), live0);
    }
    CHECK(failures >= 13);
    gsl_rng_free(r);
}

/* ---- 2. Placements with and without the groups ---------------------------------------- */

/* The policy under test, wrapped: after each scheduling pass the state of every GPU and
 * node is folded into a hash. */
static const policy_ops *inner;
static uint64_t pass_hash, passes, max_saved, memo_hits, block_heaps, room_skips;

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return h;
}

static int wrapped_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    int rc = inner->schedule(st, v, now, out);
    uint64_t h = mix(pass_hash, (uint64_t)now);
    for (uint32_t g = 0; g < v->n_gpus; g++)
        h = mix(h, (uint64_t)v->gpu_used_milli[g] << 32 | v->gpu_nres[g]);
    for (uint32_t n = 0; n < v->n_nodes; n++)
        h = mix(h, v->node_cpu_used[n] ^ v->node_mem_used[n] << 20);
    pass_hash = h;
    passes++;
    /* Every policy here keeps its place_ws first in its state: how many scorings the
     * groups saved at the last sync (nodes less groups). */
    const place_ws *w = st;
    if (w->use_groups && w->groups.built && w->groups.n_nodes - w->groups.n_live > max_saved)
        max_saved = w->groups.n_nodes - w->groups.n_live;
    if (w->score_hits > memo_hits)
        memo_hits = w->score_hits;
    if (w->block_heaps > block_heaps)
        block_heaps = w->block_heaps;
    if (w->room_skips > room_skips)
        room_skips = w->room_skips;
    return rc;
}

typedef struct world {
    sim_intern *types, *tenants;
    cluster_spec cl;
    uint64_t type_mem[4];
} world;

/* GPU types A, B and C (16 GiB each) and no tenants yet. */
static void world_init(world *w)
{
    w->types = sim_intern_create(true);
    w->tenants = sim_intern_create(false);
    sim_intern_add(w->types, "A", 1, 0);
    sim_intern_add(w->types, "B", 1, 0);
    sim_intern_add(w->types, "C", 1, 0);
    for (int t = 0; t < 4; t++)
        w->type_mem[t] = 16384;
}

static void world_fini(world *w)
{
    sim_intern_destroy(w->types);
    sim_intern_destroy(w->tenants);
}

static job_spec job(uint32_t i, sim_time at, uint32_t gpus, uint32_t milli, uint64_t cpu)
{
    job_spec j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "r%u", i);
    j.submit_us = at;
    j.work_s = 1e6;
    j.num_gpus = gpus;
    j.gpu_milli = gpus ? milli : 0;
    j.true_milli = j.gpu_milli;
    j.replicas = 1;
    j.cpu_milli = cpu;
    j.name = "";
    j.command = "";
    return j;
}

static void random_cluster(gsl_rng *r, node_spec *nodes, uint32_t n)
{
    node_spec kinds[4];
    uint32_t n_kinds = 1 + (uint32_t)gsl_rng_uniform_int(r, 4);
    static const uint32_t gpus[5] = {1, 2, 4, 8, 0};
    for (uint32_t k = 0; k < n_kinds; k++) {
        uint32_t gc = gpus[gsl_rng_uniform_int(r, k == 3 ? 5 : 4)];
        kinds[k] = (node_spec){.cpu_milli = 16000 * (1 + gsl_rng_uniform_int(r, 6)),
                               .mem_mib = 65536 * (1 + gsl_rng_uniform_int(r, 4)),
                               .num_gpus = gc,
                               .gpu_type = gc ? (uint16_t)(1 + gsl_rng_uniform_int(r, 3))
                                              : SIM_GPU_TYPE_NONE,
                               .gpu_mem_mib = gsl_rng_uniform(r) < 0.5 ? 0 : 32768};
    }
    for (uint32_t i = 0; i < n; i++) {
        nodes[i] = kinds[gsl_rng_uniform_int(r, n_kinds)];
        snprintf(nodes[i].name, sizeof nodes[i].name, "n%u", i);
    }
}

static void random_jobs(gsl_rng *r, job_spec *jobs, uint32_t n, double gap_s)
{
    sim_time t = 0;
    for (uint32_t i = 0; i < n; i++) {
        t += (sim_time)(gsl_rng_uniform(r) * gap_s * 1e6);
        static const uint32_t counts[7] = {0, 1, 1, 1, 2, 4, 8};
        uint32_t gpus = counts[gsl_rng_uniform_int(r, 7)];
        /* Few distinct shares, so GPUs hold the same request often (gpuclustering). */
        static const uint32_t shares[6] = {1000, 500, 250, 200, 300, 100};
        uint32_t milli = shares[gsl_rng_uniform_int(r, 6)];
        uint64_t cpu = 2000 * (uint64_t)(gpus ? gpus : 1) + (gsl_rng_uniform(r) < 0.2 ? 500 : 0);
        jobs[i] = job(i, t, gpus, milli, cpu);
        jobs[i].work_s = 60 + gsl_rng_uniform(r) * 3000;
        jobs[i].mem_mib = 8192 * (uint64_t)(gpus ? gpus : 1);
        if (gpus && gsl_rng_uniform(r) < 0.2)
            jobs[i].gpu_type_mask = (uint64_t)(1 + gsl_rng_uniform_int(r, 6)) << 1;
        if (gpus && milli < 1000 && gsl_rng_uniform(r) < 0.2)
            jobs[i].gpu_mem_mib = 4096 * (1 + gsl_rng_uniform_int(r, 4));
        if (gpus >= 2 && gsl_rng_uniform(r) < 0.4)
            jobs[i].replicas = 2;
        else if (gpus == 2 && gsl_rng_uniform(r) < 0.3)
            jobs[i].replicas = 0;
        else if (gpus && gpus <= 2 && gsl_rng_uniform(r) < 0.15) {
            /* A gang of 3 to 8 replicas of one or two GPUs: a node often holds more
             * than one of them (the search weighs the nodes of its earlier replicas
             * apart from their groups). */
            uint32_t reps = 3 + (uint32_t)gsl_rng_uniform_int(r, 6);
            jobs[i].replicas = reps;
            jobs[i].num_gpus *= reps;
            jobs[i].cpu_milli *= reps;
            jobs[i].mem_mib *= reps;
        }
    }
}

/* Run policy (score: NULL or "reference") on the jobs; returns the pass hash. */
static uint64_t run_one(const cluster_spec *cl, world *w, const char *policy, const char *score,
                        const job_spec *jobs, uint32_t n, const frag_workload *wl, bool failures,
                        bool grouped)
{
    inner = policy_find(policy);
    policy_ops ops = *inner;
    ops.schedule = wrapped_schedule;
    pass_hash = 0;
    passes = 0;
    memo_hits = 0;
    place_grouping_enable(grouped);
    sim_config cfg = {.seed = 3, .horizon_us = SIM_TIME_NEVER, .check_invariants = true};
    if (failures) {
        cfg.mtbf_s = 20000;
        cfg.mttr_s = 600;
    }
    sim_world sw = {.cluster = cl,
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
    int st = sim_engine_create(&e, &cfg, &sw, &ops, &pc, &d);
    CHECK(st == SIM_OK);
    if (st != SIM_OK) {
        fprintf(stderr, "create %s: %s\n", policy, d.msg);
        place_grouping_enable(true);
        return 0;
    }
    array_source src = {.jobs = jobs, .n = n};
    sim_source s = {.ctx = &src, .next = array_next};
    st = sim_engine_run(e, &s, &d);
    if (st != SIM_OK)
        fprintf(stderr, "run %s: %s\n", policy, d.msg);
    CHECK(st == SIM_OK);
    const sim_summary *sum = sim_engine_summary(e);
    CHECK_EQ_I64(sum->jobs_done + sum->jobs_rejected, n);
    CHECK(sum->jobs_done > n / 2);
    sim_engine_destroy(e);
    place_grouping_enable(true);
    CHECK(passes > 100);
    return pass_hash;
}

static void test_placements(void)
{
    static const char *const policies[] = {"fgd",        "bestfit",       "dotprod",
                                           "gpupacking", "gpuclustering", "random"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4242);
    world w;
    world_init(&w);
    enum { NJ = 500, NN_MAX = 48 };
    static job_spec jobs[NJ];
    static node_spec nodes[NN_MAX];
    uint64_t differ = 0, runs = 0;
    max_saved = 0;
    for (int cluster = 0; cluster < 12; cluster++) {
        uint32_t nn = 8 + (uint32_t)gsl_rng_uniform_int(r, NN_MAX - 8);
        random_cluster(r, nodes, nn);
        cluster_spec cl = {.n_nodes = nn, .nodes = nodes};
        /* Arrivals fast enough to fill the cluster and keep a queue. */
        random_jobs(r, jobs, NJ, 2000.0 / nn);
        frag_workload *wl;
        CHECK(frag_workload_create(&wl, 4) == SIM_OK);
        for (uint32_t i = 0; i < NJ; i++) {
            frag_shape s;
            frag_shape_of_job(&jobs[i], frag_replicas_of_job(&jobs[i], 8), &s);
            CHECK(frag_workload_add(wl, &s, 1) == SIM_OK);
        }
        for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
            /* random has no score to choose (its draw goes by group too). */
            int scores = strcmp(policies[p], "random") ? 2 : 1;
            for (int ref = 0; ref < scores; ref++) {
                const char *score = ref ? "reference" : NULL;
                bool fail = cluster % 2 == 1;
                uint64_t a = run_one(&cl, &w, policies[p], score, jobs, NJ, wl, fail, false);
                uint64_t b = run_one(&cl, &w, policies[p], score, jobs, NJ, wl, fail, true);
                runs++;
                /* Every scored policy but fgd (whose workload may change) remembers
                 * the groups' scores; the runs read them again. */
                bool memo = strcmp(policies[p], "fgd") && strcmp(policies[p], "random");
                CHECK(!memo || memo_hits > 0);
                CHECK(memo || memo_hits == 0);
                if (a != b) {
                    differ++;
                    fprintf(stderr, "cluster %d (%u nodes), %s score=%s: placements differ\n",
                            cluster, nn, policies[p], ref ? "reference" : "clustersim");
                }
            }
        }
        frag_workload_destroy(wl);
    }
    /* binpack goes by group only when the nodes are in far fewer states than there are
     * blocks of 32 nodes: a large cluster. */
    {
        enum { BIG = 2112 };
        static node_spec big[BIG];
        random_cluster(r, big, BIG);
        cluster_spec cl = {.n_nodes = BIG, .nodes = big};
        random_jobs(r, jobs, NJ, 20.0);
        uint64_t saved0 = max_saved;
        for (int p = 0; p < 2; p++) {
            const char *pol = p ? "fifo" : "binpack";
            max_saved = 0;
            uint64_t a = run_one(&cl, &w, pol, NULL, jobs, NJ, NULL, true, false);
            uint64_t b = run_one(&cl, &w, pol, NULL, jobs, NJ, NULL, true, true);
            CHECK(a == b);
            CHECK(max_saved > BIG / 2);
        }
        if (saved0 > max_saved)
            max_saved = saved0;
    }
    CHECK_EQ_I64(differ, 0);
    CHECK_EQ_I64(runs, 132);
    /* The groups were in use, with several nodes per group. */
    CHECK(max_saved >= 8);
    world_fini(&w);
    gsl_rng_free(r);
}

/* Binpack's search through the blocks against a score of every node, where the blocks'
 * bounds (GPU shares) name many nodes that lack the CPU a replica asks: searches visit
 * many blocks and go on to the heap of those left. Gangs of several replicas too. */
static void test_block_heap(void)
{
    static const char *const policies[] = {"binpack", "sjf", "las", "fifo"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9091);
    world w;
    world_init(&w);
    enum { NJ = 1500, NN = 640 };
    static job_spec jobs[NJ];
    static node_spec nodes[NN];
    for (uint32_t i = 0; i < NN; i++) {
        nodes[i] =
            (node_spec){.cpu_milli = 16000, .mem_mib = 1 << 20, .num_gpus = 8, .gpu_type = 1};
        snprintf(nodes[i].name, sizeof nodes[i].name, "n%u", i);
    }
    cluster_spec cl = {.n_nodes = NN, .nodes = nodes};
    sim_time t = 0;
    for (uint32_t i = 0; i < NJ; i++) {
        t += (sim_time)(gsl_rng_uniform(r) * 2e6);
        uint32_t reps = gsl_rng_uniform(r) < 0.2 ? 2 + (uint32_t)gsl_rng_uniform_int(r, 6) : 1;
        uint32_t milli =
            gsl_rng_uniform(r) < 0.5 ? 1000 : 100 * (1 + (uint32_t)gsl_rng_uniform_int(r, 9));
        jobs[i] = job(i, t, reps, milli, reps * 1000 * (1 + gsl_rng_uniform_int(r, 12)));
        jobs[i].replicas = reps;
        jobs[i].work_s = 600 + gsl_rng_uniform(r) * 20000;
        jobs[i].mem_mib = 1024 * (uint64_t)reps;
    }
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        block_heaps = 0;
        uint64_t a = run_one(&cl, &w, policies[p], NULL, jobs, NJ, NULL, false, false);
        CHECK(block_heaps > 0);
        place_block_search_enable(false);
        uint64_t b = run_one(&cl, &w, policies[p], NULL, jobs, NJ, NULL, false, false);
        place_block_search_enable(true);
        if (a != b)
            fprintf(stderr, "%s: the block search and the scan of every node differ\n",
                    policies[p]);
        CHECK(a == b);
    }
    world_fini(&w);
    gsl_rng_free(r);
}

/* CPU-only replicas under binpack's score (sjf, las, binpack and fifo without groups):
 * the search through the blocks' CPU summaries chooses what scoring every node does, on
 * clusters of several blocks (with node failures in every other one), for gangs too. */
static void test_cpu_blocks(void)
{
    static const char *const policies[] = {"sjf", "las", "binpack", "fifo", "srtf"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 777);
    world w;
    world_init(&w);
    enum { NJ = 800, NN_MAX = 200 };
    static job_spec jobs[NJ];
    static node_spec nodes[NN_MAX];
    uint64_t differ = 0, runs = 0;
    for (int cluster = 0; cluster < 6; cluster++) {
        uint32_t nn = 40 + (uint32_t)gsl_rng_uniform_int(r, NN_MAX - 40);
        random_cluster(r, nodes, nn);
        cluster_spec cl = {.n_nodes = nn, .nodes = nodes};
        random_jobs(r, jobs, NJ, 500.0 / nn);
        /* CPU-only gangs of 2 to 6 replicas, whose later replicas resume the search. */
        for (uint32_t i = 0; i < NJ; i++)
            if (!jobs[i].num_gpus && gsl_rng_uniform(r) < 0.3) {
                uint32_t reps = 2 + (uint32_t)gsl_rng_uniform_int(r, 5);
                jobs[i].replicas = reps;
                jobs[i].cpu_milli *= reps;
                jobs[i].mem_mib *= reps;
            }
        for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
            bool fail = cluster % 2 == 1;
            place_cpu_blocks_enable(false);
            uint64_t a = run_one(&cl, &w, policies[p], NULL, jobs, NJ, NULL, fail, false);
            place_cpu_blocks_enable(true);
            uint64_t b = run_one(&cl, &w, policies[p], NULL, jobs, NJ, NULL, fail, false);
            runs++;
            if (a != b) {
                differ++;
                fprintf(stderr, "cluster %d (%u nodes), %s: CPU-only placements differ\n", cluster,
                        nn, policies[p]);
            }
        }
    }
    CHECK_EQ_I64(differ, 0);
    CHECK_EQ_I64(runs, 30);
    world_fini(&w);
    gsl_rng_free(r);
}

/* Gangs that failed, tried again only once the room their nodes could offer reaches
 * their count, against trying them at every chance the failure memo leaves: the same
 * placements, on random clusters (node failures in every other one) under a backlog of
 * gangs of 2 to 12 replicas, with tries skipped under every policy. Under random, whose
 * skipped searches would have drawn, the same run twice. */
static void test_gang_room(void)
{
    static const char *const policies[] = {
        "fgd",     "bestfit", "dotprod",   "gpupacking", "gpuclustering", "binpack",
        "fifo",    "sjf",     "las",       "srtf",       "random",        "srsf",
        "gittins", "themis",  "fairshare", "qssf",       "elastic"};
    enum { NPOL = sizeof policies / sizeof *policies };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5150);
    world w;
    world_init(&w);
    enum { NJ = 600, NN_MAX = 40 };
    static job_spec jobs[NJ];
    static node_spec nodes[NN_MAX];
    uint64_t differ = 0, runs = 0, skipped[NPOL] = {0};
    for (int cluster = 0; cluster < 6; cluster++) {
        uint32_t nn = 12 + (uint32_t)gsl_rng_uniform_int(r, NN_MAX - 12);
        random_cluster(r, nodes, nn);
        cluster_spec cl = {.n_nodes = nn, .nodes = nodes};
        random_jobs(r, jobs, NJ, 1000.0 / nn);
        for (uint32_t i = 0; i < NJ; i++)
            if (jobs[i].num_gpus && jobs[i].replicas == 1 && gsl_rng_uniform(r) < 0.4) {
                uint32_t reps = 2 + (uint32_t)gsl_rng_uniform_int(r, 11);
                jobs[i].replicas = reps;
                jobs[i].num_gpus *= reps;
                jobs[i].cpu_milli *= reps;
                jobs[i].mem_mib *= reps;
            }
        frag_workload *wl; /* fgd's */
        CHECK(frag_workload_create(&wl, 4) == SIM_OK);
        for (uint32_t i = 0; i < NJ; i++) {
            frag_shape s;
            frag_shape_of_job(&jobs[i], frag_replicas_of_job(&jobs[i], 8), &s);
            CHECK(frag_workload_add(wl, &s, 1) == SIM_OK);
        }
        for (size_t p = 0; p < NPOL; p++) {
            bool fail = cluster % 2 == 1;
            bool draws = !strcmp(policies[p], "random");
            place_gang_room_enable(draws);
            room_skips = 0;
            uint64_t a = run_one(&cl, &w, policies[p], NULL, jobs, NJ, wl, fail, true);
            CHECK(draws || room_skips == 0);
            place_gang_room_enable(true);
            room_skips = 0;
            uint64_t b = run_one(&cl, &w, policies[p], NULL, jobs, NJ, wl, fail, true);
            skipped[p] += room_skips;
            runs++;
            if (a != b) {
                differ++;
                fprintf(stderr, "cluster %d (%u nodes), %s: placements differ with the room\n",
                        cluster, nn, policies[p]);
            }
        }
        frag_workload_destroy(wl);
    }
    CHECK_EQ_I64(differ, 0);
    CHECK_EQ_I64(runs, 6 * NPOL);
    for (size_t p = 0; p < NPOL; p++) {
        if (!skipped[p])
            fprintf(stderr, "%s: no gang try skipped\n", policies[p]);
        CHECK(skipped[p] > 0);
    }
    world_fini(&w);
    gsl_rng_free(r);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_index(false, false);
    test_index(true, false);
    test_index(false, true);
    test_index(true, true);
    test_placements();
    test_cpu_blocks();
    test_block_heap();
    test_gang_room();
    return check_done();
}
