/*
 * bench_grouping: time of the interleave policy's grouping step against the number of
 * packs in one matching graph: the complete graph of n single-job packs with stage
 * profiles drawn from a Muri-like mix (eight model classes, data-, compute- or
 * network-heavy; jobs of one class share its profile, as in Muri's traces), edge weights
 * the resource utilisation of each pair (as the policy computes them). Two ways, timed
 * on the same graph: Edmonds' blossom on the whole graph (graph build + matching), and
 * the policy's class matching (class weights + policies/classmatch.c). Prints, per n,
 * the median and minimum time of each over repeated runs and the matched weights, which
 * must be equal (exit status 1 otherwise).
 *
 * usage: bench_grouping [REPEATS]   (default 15)
 */
#include "policies/blossom.h"
#include "policies/classmatch.h"
#include "policies/interleave.h"
#include "bench_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 0x243F6A8885A308D3ull;

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
    static uint32_t cl[MAXN];
    for (int i = 0; i < MAXN; i++) {
        cl[i] = (uint32_t)(bench_uniform(&rng) * 8);
        for (int r = 0; r < IL_RESOURCES; r++)
            st[i][r] = cls[cl[i]][r];
    }
    blossom_ws *b = blossom_new(MAXN);
    cmatch_ws *cm = b ? cmatch_new(8, b) : NULL;
    if (!cm) {
        fprintf(stderr, "bench_grouping: out of memory\n");
        return 1;
    }
    uint32_t mate[MAXN], count[8], pairs[64];
    int64_t cw[64];
    double t[64], tc[64];
    int rc = 0;
    if (repeats > 64)
        repeats = 64;
    printf("packs  blossom_median_ms  blossom_min_ms  classes_median_ms  classes_min_ms  "
           "weight_blossom  weight_classes\n");
    static const uint32_t sizes[] = {8, 16, 32, 64, 128, 256};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t n = sizes[si];
        int64_t total = 0;
        for (int rep = 0; rep < repeats; rep++) {
            double t0 = bench_now_s();
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
            t[rep] = (bench_now_s() - t0) * 1e3;
        }
        int64_t ctotal = 0;
        for (int rep = 0; rep < repeats; rep++) {
            double t0 = bench_now_s();
            for (uint32_t c = 0; c < 8; c++)
                count[c] = 0;
            for (uint32_t u = 0; u < n; u++)
                count[cl[u]]++;
            for (uint32_t a = 0; a < 8; a++)
                for (uint32_t c = a; c < 8; c++) {
                    double pair[2][IL_RESOURCES];
                    for (int r = 0; r < IL_RESOURCES; r++) {
                        pair[0][r] = cls[a][r];
                        pair[1][r] = cls[c][r];
                    }
                    double it = il_pack_iter_ms((const double(*)[IL_RESOURCES])pair, 2) * 1.310;
                    double w = (il_solo_ms(cls[a]) + il_solo_ms(cls[c])) / (it * IL_RESOURCES);
                    cw[a * 8 + c] = cw[c * 8 + a] = llround(w * 1e6);
                }
            ctotal = cmatch_solve(cm, 8, count, cw, pairs);
            tc[rep] = (bench_now_s() - t0) * 1e3;
        }
        qsort(t, (size_t)repeats, sizeof t[0], bench_cmp_double);
        qsort(tc, (size_t)repeats, sizeof tc[0], bench_cmp_double);
        printf("%5u  %17.3f  %14.3f  %17.3f  %14.3f  %14lld  %14lld\n", n, t[repeats / 2], t[0],
               tc[repeats / 2], tc[0], (long long)total, (long long)ctotal);
        if (total != ctotal)
            rc = 1;
    }
    cmatch_free(cm);
    blossom_free(b);
    return rc;
}
