/*
 * bench_sim.c: the simulator speed benchmark. For each trace size (default 10^4, 10^5,
 * 10^6 jobs) it generates a seeded synthetic trace once, then replays it on a
 * 1,000-node cluster under each policy, each replay a separate `clustersim run`
 * process, and prints per policy and size: wall time, jobs/s, events/s and the peak
 * resident memory of the process (the median of --reps replays).
 *
 *   bench_sim [--clustersim PATH] [--sizes 10000,100000,1000000] [--policies fifo,binpack,random]
 *             [--reps N] [--rate JOBS_PER_HOUR] [--cluster SPEC] [--dir DIR] [--gen-arg ARG]...
 *             [--run-arg ARG]...
 *
 * --gen-arg passes ARG on to `trace gen` (repeatable, e.g. `--gen-arg --frac-gang
 * --gen-arg 0.6`). A trace is generated once per size into DIR and reused, so runs with
 * other generator arguments need a DIR of their own. --run-arg passes ARG on to every
 * `clustersim run` (repeatable, e.g. `--run-arg --quotas --run-arg FILE`).
 *
 * Every replay writes its full outputs (jobs.csv, timeseries.csv, ...), as a user's
 * run would. The default arrival rate (3500 jobs/h on 1000 x 8 V100) keeps the cluster
 * busy without an unbounded backlog.
 */
/* wait4() reports each child's own peak memory; it is a BSD/GNU interface. */
#define _DEFAULT_SOURCE 1

#include "bench_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SIM_BINARY
#define SIM_BINARY "clustersim"
#endif

typedef struct sample {
    double wall_s, user_s;
    long maxrss_kb;
    unsigned long long events, jobs;
} sample;

/* Run argv as a child with its output appended to `log`; fill wall time, user time and
 * peak RSS. Returns the exit status. */
static int spawn(char *const argv[], const char *log, sample *s)
{
    fflush(stdout);
    double t0 = bench_now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen(log, "a", stdout) || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    s->wall_s = bench_now_s() - t0;
    s->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    s->maxrss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static unsigned long long json_u64(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    unsigned long long v = 0;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, key);
        if (p && p[klen] == '"' && p > line && p[-1] == '"') {
            sscanf(p + klen + 2, "%llu", &v);
            break;
        }
    }
    fclose(f);
    return v;
}

static int cmp_sample(const void *a, const void *b)
{
    double x = ((const sample *)a)->wall_s, y = ((const sample *)b)->wall_s;
    return x < y ? -1 : x > y;
}

static int split(char *s, char **out, int max)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

int main(int argc, char **argv)
{
    const char *bin = SIM_BINARY, *cluster = "1000xV100M32:8:cpu=96000:mem=786432";
    char sizes_s[256] = "10000,100000,1000000", pols_s[256] = "fifo,binpack,random";
    const char *dir = "bench-out", *rate = "3500";
    int reps = 3;
    enum { GEN_EXTRA_MAX = 16, RUN_EXTRA_MAX = 16 };
    const char *gen_extra[GEN_EXTRA_MAX], *run_extra[RUN_EXTRA_MAX];
    int n_gen_extra = 0, n_run_extra = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_sim: unknown or incomplete option '%s'\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--clustersim"))
            bin = v;
        else if (!strcmp(a, "--sizes"))
            snprintf(sizes_s, sizeof sizes_s, "%s", v);
        else if (!strcmp(a, "--policies"))
            snprintf(pols_s, sizeof pols_s, "%s", v);
        else if (!strcmp(a, "--reps"))
            reps = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(a, "--rate"))
            rate = v;
        else if (!strcmp(a, "--cluster"))
            cluster = v;
        else if (!strcmp(a, "--dir"))
            dir = v;
        else if (!strcmp(a, "--gen-arg") && n_gen_extra < GEN_EXTRA_MAX)
            gen_extra[n_gen_extra++] = v;
        else if (!strcmp(a, "--run-arg") && n_run_extra < RUN_EXTRA_MAX)
            run_extra[n_run_extra++] = v;
        else {
            fprintf(stderr, "bench_sim: unknown option '%s'\n", a);
            return 2;
        }
    }
    char *sizes[8], *pols[16];
    int n_sizes = split(sizes_s, sizes, 8), n_pols = split(pols_s, pols, 16);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_sim: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char logf[1024];
    snprintf(logf, sizeof logf, "%s/bench.log", dir);
    printf("cluster %s, arrivals %s jobs/h, median of %d replay%s per cell\n", cluster, rate,
           reps, reps > 1 ? "s" : "");
    printf("%-9s %-9s %9s %9s %12s %12s %10s\n", "jobs", "policy", "wall s", "user s", "jobs/s",
           "events/s", "peak MiB");
    for (int si = 0; si < n_sizes; si++) {
        char trace[1024];
        snprintf(trace, sizeof trace, "%s/trace-%s.csv", dir, sizes[si]);
        struct stat sb;
        if (stat(trace, &sb) != 0) {
            char *gen[11 + GEN_EXTRA_MAX + 1] = {(char *)bin, "trace",  "gen",       "--out",
                                                 trace,       "--jobs", sizes[si],   "--seed",
                                                 "42",        "--rate", (char *)rate};
            for (int k = 0; k < n_gen_extra; k++)
                gen[11 + k] = (char *)gen_extra[k];
            gen[11 + n_gen_extra] = NULL;
            sample g;
            if (spawn(gen, logf, &g) != 0) {
                fprintf(stderr, "bench_sim: generating %s failed (see %s)\n", trace, logf);
                return 1;
            }
        }
        for (int p = 0; p < n_pols; p++) {
            sample s[32];
            int k = 0;
            char out[1024];
            snprintf(out, sizeof out, "%s/run-%s-%s", dir, sizes[si], pols[p]);
            for (int r = 0; r < reps && r < 32; r++) {
                char *run[11 + RUN_EXTRA_MAX + 1] = {
                    (char *)bin, "run",   "--trace", trace,   "--cluster", (char *)cluster,
                    "--policy",  pols[p], "--quiet", "--out", out};
                for (int e = 0; e < n_run_extra; e++)
                    run[11 + e] = (char *)run_extra[e];
                run[11 + n_run_extra] = NULL;
                if (spawn(run, logf, &s[k]) != 0) {
                    fprintf(stderr, "bench_sim: %s on %s failed (see %s)\n", pols[p], trace,
                            logf);
                    return 1;
                }
                char runj[1100];
                snprintf(runj, sizeof runj, "%s/run.json", out);
                s[k].events = json_u64(runj, "events");
                s[k].jobs = strtoull(sizes[si], NULL, 10);
                k++;
            }
            qsort(s, (size_t)k, sizeof *s, cmp_sample);
            sample m = s[k / 2];
            printf("%-9s %-9s %9.2f %9.2f %12.0f %12.0f %10.1f\n", sizes[si], pols[p], m.wall_s,
                   m.user_s, (double)m.jobs / m.wall_s, (double)m.events / m.wall_s,
                   (double)m.maxrss_kb / 1024.0);
            fflush(stdout);
        }
    }
    return 0;
}
