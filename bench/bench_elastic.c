/*
 * bench_elastic.c: the cost of one trigger period of the elastic policy against the
 * number of adjustable jobs. N elastic jobs (1..8 one-GPU trainers, work long enough
 * to outlast the run) on N x 2 nodes of 4 GPUs, threshold 0.9, period 60 s; every
 * trigger scales them (the cluster's free space and the jobs' scores keep changing as
 * new jobs arrive every 30 s). The run lasts 200 periods; the figure is the wall time
 * per trigger (engine included), minimum of 5 repeats.
 *   bench_elastic [N ...]      (default 16 64 256 1024)
 */
#include "sim/policy.h"
#include "sim/engine.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const policy_ops policy_elastic;

typedef struct src {
    uint32_t n, next;
} src;

static int next_job(void *ctx, job_spec *j, sim_diag *d)
{
    (void)d;
    src *s = ctx;
    if (s->next >= s->n)
        return 0;
    memset(j, 0, sizeof *j);
    snprintf(j->id, sizeof j->id, "j%u", s->next);
    j->submit_us = (sim_time)s->next * 30 * SIM_US_PER_S / (s->n / 16 + 1);
    j->work_s = 1e9;
    j->num_gpus = 1;
    j->replicas = 1;
    j->gpu_milli = j->true_milli = SIM_MILLI_GPU;
    j->attr[SIM_ATTR_MIN_REPLICAS] = 1;
    j->attr[SIM_ATTR_MAX_REPLICAS] = 8;
    j->attr_present =
        (UINT64_C(1) << SIM_ATTR_MIN_REPLICAS) | (UINT64_C(1) << SIM_ATTR_MAX_REPLICAS);
    j->name = "";
    j->command = "";
    s->next++;
    return 1;
}

static double one_run(uint32_t n, uint64_t *triggers)
{
    uint32_t nodes = 2 * n;
    node_spec *ns = calloc(nodes, sizeof *ns);
    for (uint32_t i = 0; i < nodes; i++) {
        snprintf(ns[i].name, sizeof ns[i].name, "n%u", i);
        ns[i].cpu_milli = 64000;
        ns[i].mem_mib = 262144;
        ns[i].num_gpus = 4;
        ns[i].gpu_type = 1;
    }
    cluster_spec cl = {.n_nodes = nodes, .nodes = ns};
    sim_intern *types = sim_intern_create(true), *tenants = sim_intern_create(false);
    sim_intern_add(types, "A", 1, 0);
    uint64_t mem[2] = {0, 16384};
    const double periods = 200;
    sim_config cfg = {.seed = 1, .horizon_us = (sim_time)(periods * 60) * SIM_US_PER_S};
    sim_world w = {.cluster = &cl, .gpu_types = types, .gpu_type_mem_mib = mem, .tenants = tenants};
    policy_config pc = {.policy = "elastic", .n_nodes = nodes, .n_gpus = 4 * nodes};
    sim_engine *e;
    sim_diag d = {0};
    double t = NAN;
    if (sim_engine_create(&e, &cfg, &w, &policy_elastic, &pc, &d) == SIM_OK) {
        src s = {.n = n};
        sim_source so = {.ctx = &s, .next = next_job};
        double t0 = bench_now_s();
        if (sim_engine_run(e, &so, &d) == SIM_OK)
            t = bench_now_s() - t0;
        *triggers = (uint64_t)periods;
        sim_engine_destroy(e);
    }
    sim_intern_destroy(types);
    sim_intern_destroy(tenants);
    free(ns);
    return t;
}

int main(int argc, char **argv)
{
    uint32_t def[] = {16, 64, 256, 1024};
    size_t n_sizes = argc > 1 ? (size_t)argc - 1 : 4;
    printf("adjustable_jobs,gpus,triggers,us_per_trigger_min_of_5\n");
    for (size_t k = 0; k < n_sizes; k++) {
        uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[k + 1], NULL, 10) : def[k];
        double best = INFINITY;
        uint64_t trig = 0;
        for (int rep = 0; rep < 5; rep++) {
            double t = one_run(n, &trig);
            if (t < best)
                best = t;
        }
        printf("%u,%u,%llu,%.1f\n", n, 8 * n, (unsigned long long)trig, best / (double)trig * 1e6);
    }
    return 0;
}
