/*
 * bench_gbt: time of one gradient-boosted-trees fit (models/gbt.c, default parameters:
 * 30 trees of depth 3, 32 bins) against the number of rows, on 22 features shaped like
 * the duration model's (continuous, small integers, binary, constant) with a noisy
 * non-linear target. Prints, per row count, the median and minimum over repeated fits
 * and the training R^2 (which must be positive: exit status 1 otherwise).
 *
 * usage: bench_gbt [REPEATS]   (default 15)
 */
#include "models/gbt.h"
#include "bench_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { P = 22, MAX_ROWS = 65536 };

static uint64_t rng = 0x243F6A8885A308D3ull;

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: bench_gbt [REPEATS 1..1000]\n");
        return 2;
    }
    double *X = malloc(sizeof *X * (size_t)MAX_ROWS * P), *y = malloc(sizeof *y * MAX_ROWS);
    double *t = malloc(sizeof *t * (size_t)reps);
    if (!X || !y || !t)
        return 2;
    for (int i = 0; i < MAX_ROWS; i++) {
        double *x = X + (size_t)i * P;
        for (int j = 0; j < P; j++) {
            double u = bench_uniform(&rng);
            x[j] = j % 5 == 0 ? floor(u * 4) : j % 7 == 1 ? (u > 0.5) : j == 21 ? 1 : u * u * 100;
        }
        y[i] = log1p(3 * x[0] + x[2] + 5 * x[1] * (x[3] > 50)) + 0.3 * bench_uniform(&rng);
    }
    model_gbt_params prm;
    model_gbt_params_default(&prm);
    model_gbt g;
    model_gbt_ws *w;
    if (model_gbt_init(&g, P, &prm) != 0 || model_gbt_ws_create(&w, MAX_ROWS, P, &prm) != 0)
        return 2;
    int bad = 0;
    printf("rows     median_ms  min_ms   train_r2\n");
    for (int n = 1024; n <= MAX_ROWS; n *= 4) {
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now_s();
            if (model_gbt_fit(&g, w, X, y, (size_t)n) != 0)
                return 2;
            t[r] = (bench_now_s() - t0) * 1e3;
        }
        double mean = 0, sst = 0, sse = 0;
        for (int i = 0; i < n; i++)
            mean += y[i] / n;
        for (int i = 0; i < n; i++) {
            double e = model_gbt_predict(&g, X + (size_t)i * P) - y[i];
            sse += e * e;
            sst += (y[i] - mean) * (y[i] - mean);
        }
        qsort(t, (size_t)reps, sizeof *t, bench_cmp_double);
        double r2 = 1 - sse / sst;
        bad |= !(r2 > 0);
        printf("%-8d %9.2f %7.2f %10.3f\n", n, t[reps / 2], t[0], r2);
    }
    model_gbt_ws_destroy(w);
    model_gbt_fini(&g);
    free(X);
    free(y);
    free(t);
    return bad;
}
