/*
 * bench_sweep.c: what `clustersim sweep` costs per cell beyond the cell's own process.
 * A grid of N trivial cells (a one-job trace on a one-GPU cluster, fifo, N seeds) is
 * run three ways, each R times (the minimum is kept, as other work on the machine only
 * slows a run down):
 *   direct  N `clustersim run` processes one after the other, started and waited for
 *           here: the cells' own cost;
 *   sweep   `clustersim sweep --jobs 1` over the same cells (from nothing): the same
 *           runs plus the sweep's work (grid, clearing, starting, completeness checks,
 *           sweep.csv and the report);
 *   resume  the same sweep again, every cell complete: the cost of skipping a cell.
 * Prints the overhead per cell, (sweep - direct) / N, in wall time: from the minima, and
 * the median of each repeat's difference (the two ways run back to back, so they see
 * about the same load). The target is < 5 ms.
 *
 * usage: bench_sweep [N] [R]   (default 200 cells, 3 repeats)
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT SIM_BUILD_DIR "/bench_sweep_out"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(char *const argv[])
{
    fflush(NULL); /* or the child's freopen writes this process's buffered output again */
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200, reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_sweep [N] [R]\n");
        return 2;
    }
    setenv("CLUSTERSIM_DATA", SIM_SOURCE_DIR, 0);
    if (system("rm -rf " OUT " && mkdir -p " OUT) != 0)
        return 1;
    char *gen[] = {SIM_BINARY, "trace", "gen", "--out", OUT "/t.csv", "--jobs", "1", NULL};
    if (run(gen) != 0) {
        fprintf(stderr, "bench_sweep: cannot generate the trace\n");
        return 1;
    }
    FILE *g = fopen(OUT "/grid.json", "w");
    if (!g)
        return 1;
    fprintf(g,
            "{\"traces\": [\"" OUT "/t.csv\"], \"clusters\": [\"1xV100M32:1\"],\n"
            " \"policies\": [\"fifo\"], \"seeds\": \"1..%d\"}\n",
            n);
    fclose(g);

    double *d_wall = calloc((size_t)reps, sizeof *d_wall);
    double best_direct = 1e30, best_sweep = 1e30, best_resume = 1e30;
    if (!d_wall)
        return 1;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int k = 0; k < n; k++) {
            char seed[24], dir[256];
            snprintf(seed, sizeof seed, "%d", k + 1);
            snprintf(dir, sizeof dir, OUT "/direct/%d", k + 1);
            char *a[] = {SIM_BINARY,    "run",      "--trace", OUT "/t.csv", "--cluster",
                         "1xV100M32:1", "--policy", "fifo",    "--seed",     seed,
                         "--out",       dir,        "--quiet", NULL};
            if (run(a) != 0) {
                fprintf(stderr, "bench_sweep: a direct run failed\n");
                return 1;
            }
        }
        double direct = now() - t0;
        if (system("rm -rf " OUT "/sweep") != 0)
            return 1;
        char *sw[] = {SIM_BINARY, "sweep", OUT "/grid.json", "--out",   OUT "/sweep",
                      "--jobs",   "1",     "--no-figures",   "--quiet", NULL};
        t0 = now();
        if (run(sw) != 0) {
            fprintf(stderr, "bench_sweep: the sweep failed\n");
            return 1;
        }
        double sweep = now() - t0;
        t0 = now();
        if (run(sw) != 0)
            return 1;
        double resume = now() - t0;
        printf("repeat %d: direct %.3f s, sweep %.3f s, resume %.3f s\n", r + 1, direct, sweep,
               resume);
        d_wall[r] = sweep - direct;
        best_direct = direct < best_direct ? direct : best_direct;
        best_sweep = sweep < best_sweep ? sweep : best_sweep;
        best_resume = resume < best_resume ? resume : best_resume;
    }
    qsort(d_wall, (size_t)reps, sizeof *d_wall, bench_cmp_double);
    printf("cells: %d trivial run cells, --jobs 1, %d repeats\n", n, reps);
    printf("direct runs (min):        %8.3f s  (%.2f ms per run)\n", best_direct,
           1e3 * best_direct / n);
    printf("sweep (min):              %8.3f s  (%.2f ms per cell)\n", best_sweep,
           1e3 * best_sweep / n);
    printf("overhead per cell, wall:  %8.2f ms (min sweep - min direct; median of the "
           "repeats' differences %.2f ms; target < 5 ms)\n",
           1e3 * (best_sweep - best_direct) / n, 1e3 * d_wall[reps / 2] / n);
    printf("resume (all done, min):   %8.3f s  (%.2f ms per skipped cell)\n", best_resume,
           1e3 * best_resume / n);
    free(d_wall);
    return 0;
}
