/*
 * bench_trace_read.c: time to read a trace through its reader (no simulation), median
 * of 5 runs, as jobs/s. Default: the 82,247-job Philly CSV of ../shared/data, which the
 * philly reader reads whole and sorts. Usage: bench_trace_read [FILE FORMAT [KEY=VALUE]].
 */
#include "models/catalog.h"
#include "traces/trace.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *path = argc > 2 ? argv[1] : SIM_SHARED_DIR "/data/pollux_adaptdl/traces/philly.csv.gz";
    const char *format = argc > 2 ? argv[2] : "philly";
    const char *opts[1] = {argc > 3 ? argv[3] : NULL};
    model_catalog *cat;
    sim_diag d;
    if (model_catalog_load(&cat, model_catalog_default_path(), &d) != SIM_OK) {
        fprintf(stderr, "bench_trace_read: %s\n", d.msg);
        return 1;
    }
    double t[5];
    unsigned long long jobs = 0;
    for (int k = 0; k < 5; k++) {
        sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
        trace_options o = {.format = format,
                           .tenants = tenants,
                           .models = models,
                           .gpu_types = model_catalog_names(cat),
                           .opts = opts,
                           .n_opts = opts[0] ? 1 : 0};
        trace_reader *r;
        double t0 = bench_now_s();
        if (trace_reader_open(&r, path, &o, &d) != SIM_OK) {
            char buf[2048];
            fprintf(stderr, "bench_trace_read: %s\n", sim_diag_format(&d, buf, sizeof buf));
            return 1;
        }
        job_spec j;
        int st;
        jobs = 0;
        while ((st = trace_reader_next(r, &j, &d)) == 1)
            jobs++;
        t[k] = bench_now_s() - t0;
        trace_reader_close(r);
        sim_intern_destroy(tenants);
        sim_intern_destroy(models);
        if (st < 0) {
            fprintf(stderr, "bench_trace_read: %s\n", d.msg);
            return 1;
        }
    }
    qsort(t, 5, sizeof t[0], cmp);
    printf("%s (%s): %llu jobs read in %.3f s (median of 5; min %.3f, max %.3f), %.0f jobs/s\n",
           path, format, jobs, t[2], t[0], t[4], (double)jobs / t[2]);
    model_catalog_destroy(cat);
    return 0;
}
