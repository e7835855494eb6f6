/*
 * bench_grouping: time of the interleave policy's grouping step against the number of
 * packs in one matching graph: the complete graph of n single-job packs with stage
 * profiles drawn from a Muri-like mix (a few model classes, data-, compute- or
 * network-heavy), edge weights the resource utilisation of each pair (as the policy
 * computes them), then Edmonds' blossom. Prints, per n, the median and minimum time of
 * a graph build plus matching over repeated runs, and the matched weight.
 *
 * usage: bench_grouping [REPEATS]   (default 15)
 */
#include "policies/blossom.h"
#include "policies/interleave.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 0x243F6A8885A308D3ull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 15;
    if (repeats < 1)
        repeats = 1;
    enum { MAXN = 256 };
    static double st[MAXN][IL_RESOURCES];
    /* Eight classes: which stage dominates, and a spread around it. */
    static const double cls[8][IL_RESOURCES] = {
        {0, 446, 8, 0},   {0, 82, 75, 66},  {0, 0.5, 163, 18}, {0, 0.6, 413, 20},
        {0, 711, 110, 0}, {0, 30, 95, 140}, {0, 250, 40, 35},  {0, 12, 60, 4}};
    for (int i = 0; i < MAXN; i++) {
        int c = (int)(uniform() * 8);
        for (int r = 0; r < IL_RESOURCES; r++)
            st[i][r] = cls[c][r] * (0.9 + 0.2 * uniform());
    }
    blossom_ws *b = blossom_new(MAXN);
    uint32_t mate[MAXN];
    double t[64];
    if (repeats > 64)
        repeats = 64;
    printf("packs  median_ms  min_ms  matched_weight\n");
    static const uint32_t sizes[] = {8, 16, 32, 64, 128, 256};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t n = sizes[si];
        int64_t total = 0;
        for (int rep = 0; rep < repeats; rep++) {
            double t0 = now_s();
            blossom_reset(b, n);
            for (uint32_t u = 0; u < n; u++)
                for (uint32_t v = u + 1; v < n; v++) {
                    double pair[2][IL_RESOURCES];
                    for (int r = 0; r < IL_RESOURCES; r++) {
                        pair[0][r] = st[u][r];
                        pair[1][r] = st[v][r];
                    }
                    double it = il_pack_iter_ms((const double(*)[IL_RESOURCES])pair, 2) * 1.310;
                    double w = (il_solo_ms(st[u]) + il_solo_ms(st[v])) / (it * IL_RESOURCES);
                    blossom_set(b, u, v, llround(w * 1e6));
                }
            total = blossom_solve(b, mate);
            t[rep] = (now_s() - t0) * 1e3;
        }
        qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
        printf("%5u  %9.3f  %6.3f  %lld\n", n, t[repeats / 2], t[0], (long long)total);
    }
    blossom_free(b);
    return 0;
}
