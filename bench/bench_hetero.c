/*
 * bench_hetero.c: time of the exact bottleneck optimum (hetero_assign.h) against group
 * size n and GPUs m, and of Gavel's allocation LP (gavel_lp.h, one GLPK solve) against
 * jobs in flight, GPU types and GPUs. Random instances from a fixed seed. The optimum:
 * the median and the largest, over 21 instances per size, of each instance's fastest
 * of 3 batches of solves (solve times vary much between instances of one size). The
 * LPs (Gavel's allocation; the preemptive bound of a group): the median of 5 solves.
 * Prints four tables, the last Gavel's allocation on one GPU type, closed form against
 * GLPK.
 */
#include "policies/gavel_lp.h"
#include "policies/hetero_assign.h"
#include "bench_util.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define INSTANCES 21

static double median5(double *t)
{
    qsort(t, 5, sizeof *t, bench_cmp_double);
    return t[2];
}

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 14);
    printf("bottleneck optimum (binary search + matching), per solve, over %d random "
           "instances\n",
           INSTANCES);
    printf("%6s %6s %12s %12s\n", "jobs", "gpus", "median_us", "max_us");
    static const uint32_t ns[] = {4, 8, 16, 32, 64};
    hetero_ws w;
    if (hetero_ws_init(&w, 64, 128))
        return 1;
    double *cost = malloc(64 * 128 * sizeof *cost);
    uint32_t assign[64];
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (uint32_t mult = 1; mult <= 2; mult++) {
            uint32_t n = ns[a], m = n * mult;
            int reps = (int)(20000 / (n * m)) + 1;
            double per[INSTANCES];
            for (int inst = 0; inst < INSTANCES; inst++) {
                for (uint32_t x = 0; x < n * m; x++)
                    cost[x] = 100.0 + 900.0 * gsl_rng_uniform(r);
                /* An instance's time: the fastest of 3 batches of reps solves. */
                double best = INFINITY;
                for (int k = 0; k < 3; k++) {
                    double t0 = bench_now_s();
                    for (int i = 0; i < reps; i++)
                        hetero_bottleneck(&w, cost, n, m, assign);
                    double t = (bench_now_s() - t0) / reps;
                    if (t < best)
                        best = t;
                }
                per[inst] = best;
            }
            qsort(per, INSTANCES, sizeof *per, bench_cmp_double);
            printf("%6u %6u %12.2f %12.2f\n", n, m, per[INSTANCES / 2] * 1e6,
                   per[INSTANCES - 1] * 1e6);
        }
    printf("\npreemptive bound (LP, GLPK simplex), per solve, over 5 random instances\n");
    printf("%6s %6s %12s\n", "jobs", "gpus", "median_us");
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (uint32_t mult = 1; mult <= 2; mult++) {
            uint32_t n = ns[a], m = n * mult;
            double per[5];
            for (int inst = 0; inst < 5; inst++) {
                for (uint32_t x = 0; x < n * m; x++)
                    cost[x] = 100.0 + 900.0 * gsl_rng_uniform(r);
                double t0 = bench_now_s();
                if (!(hetero_preemptive_bound(cost, n, m) > 0))
                    return 1;
                per[inst] = bench_now_s() - t0;
            }
            printf("%6u %6u %12.1f\n", n, m, median5(per) * 1e6);
        }
    free(cost);
    hetero_ws_fini(&w);
    printf("\nGavel allocation LP (max-min normalised by the proportional throughputs, GLPK "
           "simplex), per allocation\n");
    printf("%6s %6s %8s %12s\n", "jobs", "types", "gpus", "time_ms");
    /* Cluster size: 36, 108 (Gavel's simulated cluster) and 432 GPUs, split evenly over
     * the types; 1024 jobs only on 108 GPUs (seconds per allocation). */
    static const uint32_t js[] = {16, 64, 256, 1024};
    static const uint32_t ts[] = {3, 6};
    static const double gs[] = {36, 108, 432};
    for (size_t a = 0; a < sizeof js / sizeof js[0]; a++)
        for (size_t b = 0; b < sizeof ts / sizeof ts[0]; b++)
            for (size_t c = 0; c < sizeof gs / sizeof gs[0]; c++) {
                uint32_t n = js[a], m = ts[b];
                if (n == 1024 && gs[c] != 108)
                    continue;
                double *tput = malloc((size_t)n * m * sizeof *tput);
                double *work = malloc((size_t)n * m * sizeof *work);
                double *x = malloc((size_t)n * m * sizeof *x);
                double *scale = malloc(n * sizeof *scale), *prio = malloc(n * sizeof *prio);
                double workers[8];
                for (uint32_t i = 0; i < n * m; i++)
                    tput[i] = 0.2 + 5.0 * gsl_rng_uniform(r);
                for (uint32_t i = 0; i < n; i++) {
                    scale[i] = (double)(1u << gsl_rng_uniform_int(r, 4));
                    prio[i] = 1.0;
                }
                for (uint32_t j = 0; j < m; j++)
                    workers[j] = gs[c] / (double)m;
                int reps = n >= 256 ? 1 : 5;
                double t[5];
                for (int k = 0; k < 5; k++) {
                    double t0 = bench_now_s();
                    for (int i = 0; i < reps; i++)
                        if (gavel_allocation(n, m, tput, scale, prio, workers, work, x))
                            return 1;
                    t[k] = (bench_now_s() - t0) / reps;
                }
                printf("%6u %6u %8.0f %12.3f\n", n, m, gs[c], median5(t) * 1e3);
                free(tput);
                free(work);
                free(x);
                free(scale);
                free(prio);
            }
    /* One GPU type: gavel_allocation's closed form against GLPK's simplex on the same
     * coefficients (gavel_lp_solve), on Gavel's 108 GPUs and on 8,000 (the benchmark
     * cluster of 1,000 x 8 GPUs): jobs fewer than the GPUs leave the optimum free, more
     * make the GPUs bind. */
    printf("\nGavel allocation on one GPU type: closed form against GLPK, per allocation\n");
    printf("%6s %8s %14s %12s\n", "jobs", "gpus", "closed_us", "glpk_ms");
    static const uint32_t n1[] = {256, 1024, 4096};
    static const double g1[] = {108, 8000};
    for (size_t a = 0; a < sizeof n1 / sizeof n1[0]; a++)
        for (size_t c = 0; c < sizeof g1 / sizeof g1[0]; c++) {
            uint32_t n = n1[a];
            double *tput = malloc(n * sizeof *tput), *work = malloc(n * sizeof *work);
            double *x = malloc(n * sizeof *x), *scale = malloc(n * sizeof *scale);
            double *prio = malloc(n * sizeof *prio), workers[1] = {g1[c]}, tc[5], tg[5], t;
            for (uint32_t i = 0; i < n; i++) {
                tput[i] = 0.2 + 5.0 * gsl_rng_uniform(r);
                scale[i] = (double)(1u << gsl_rng_uniform_int(r, 4));
                prio[i] = 1.0;
            }
            for (int k = 0; k < 5; k++) {
                double t0 = bench_now_s();
                for (int i = 0; i < 100; i++)
                    if (gavel_allocation(n, 1, tput, scale, prio, workers, work, x))
                        return 1;
                tc[k] = (bench_now_s() - t0) / 100;
                t0 = bench_now_s();
                if (gavel_lp_solve(n, 1, work, scale, workers, x, &t))
                    return 1;
                tg[k] = bench_now_s() - t0;
            }
            printf("%6u %8.0f %14.2f %12.2f\n", n, g1[c], median5(tc) * 1e6, median5(tg) * 1e3);
            free(tput);
            free(work);
            free(x);
            free(scale);
            free(prio);
        }
    gsl_rng_free(r);
    return 0;
}
