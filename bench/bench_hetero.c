/*
 * bench_hetero.c: time of the exact bottleneck optimum (hetero_assign.h) against group
 * size n and GPUs m, and of Gavel's allocation LP (gavel_lp.h, two GLPK solves) against
 * jobs in flight and GPU types. Random instances from a fixed seed; each figure is the
 * median of 5 repetitions of a batch of solves, per solve. Prints one table.
 */
#include "policies/gavel_lp.h"
#include "policies/hetero_assign.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median5(double *t)
{
    qsort(t, 5, sizeof *t, cmp);
    return t[2];
}

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 14);
    printf("bottleneck optimum (binary search + matching), per solve\n");
    printf("%6s %6s %12s\n", "jobs", "gpus", "time_us");
    static const uint32_t ns[] = {4, 8, 16, 32, 64};
    hetero_ws w;
    if (hetero_ws_init(&w, 64, 128))
        return 1;
    double *cost = malloc(64 * 128 * sizeof *cost);
    uint32_t assign[64];
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (uint32_t mult = 1; mult <= 2; mult++) {
            uint32_t n = ns[a], m = n * mult;
            for (uint32_t x = 0; x < n * m; x++)
                cost[x] = 100.0 + 900.0 * gsl_rng_uniform(r);
            int reps = (int)(20000 / (n * m)) + 1;
            double t[5];
            for (int k = 0; k < 5; k++) {
                double t0 = now_s();
                for (int i = 0; i < reps; i++)
                    hetero_bottleneck(&w, cost, n, m, assign);
                t[k] = (now_s() - t0) / reps;
            }
            printf("%6u %6u %12.2f\n", n, m, median5(t) * 1e6);
        }
    free(cost);
    hetero_ws_fini(&w);
    printf("\nGavel allocation LP (isolated + weighted, GLPK simplex), per allocation\n");
    printf("%6s %6s %8s %12s\n", "jobs", "types", "gpus", "time_ms");
    static const uint32_t js[] = {16, 64, 256, 1024};
    static const uint32_t ts[] = {3, 6};
    for (size_t a = 0; a < sizeof js / sizeof js[0]; a++)
        for (size_t b = 0; b < sizeof ts / sizeof ts[0]; b++) {
            uint32_t n = js[a], m = ts[b];
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
                workers[j] = 108.0 / 3.0 * 3.0 / (double)m;
            int reps = n >= 256 ? 1 : 5;
            double t[5];
            for (int k = 0; k < 5; k++) {
                double t0 = now_s();
                for (int i = 0; i < reps; i++)
                    if (gavel_allocation(n, m, tput, scale, prio, workers, work, x))
                        return 1;
                t[k] = (now_s() - t0) / reps;
            }
            printf("%6u %6u %8.0f %12.3f\n", n, m, workers[0] * m, median5(t) * 1e3);
            free(tput);
            free(work);
            free(x);
            free(scale);
            free(prio);
        }
    gsl_rng_free(r);
    return 0;
}
