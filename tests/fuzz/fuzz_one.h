/*
 * fuzz_one.h: one fuzz input through one reader (shared by the libFuzzer targets and the
 * regression test that replays the inputs they found). The first byte picks the read
 * chunk size (low 6 bits: 1..63 bytes, 0 = 64 KiB), skip_bad_rows (0x40) and gzip (0x80).
 * Aborts when the reader yields a malformed job or fails without a diagnostic.
 */
#ifndef TESTS_FUZZ_FUZZ_ONE_H
#define TESTS_FUZZ_FUZZ_ONE_H

#include "models/catalog.h"
#include "traces/cluster.h"
#include "traces/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static model_catalog *fuzz_cat;

static void fuzz_write_input(const char *path, const uint8_t *data, size_t size, bool gz)
{
    if (gz) {
        gzFile g = gzopen(path, "wb1");
        if (g) {
            if (size)
                gzwrite(g, data, (unsigned)size);
            gzclose(g);
        }
        return;
    }
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

static inline int fuzz_one(const char *format, const char *opt, const uint8_t *data, size_t size)
{
    sim_diag d;
    if (!fuzz_cat && model_catalog_load(&fuzz_cat, model_catalog_default_path(), &d) != SIM_OK)
        abort();
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    char path[64];
    snprintf(path, sizeof path, "/tmp/clustersim-fuzz-%ld.in", (long)getpid());
    fuzz_write_input(path, data + 1, size - 1, (mode & 0x80) != 0);
    if (strcmp(format, "cluster") == 0) {
        cluster_spec *c = NULL;
        if (cluster_spec_load(&c, path, model_catalog_names(fuzz_cat), &d) == SIM_OK &&
            (!c || c->n_nodes == 0))
            abort();
        cluster_spec_destroy(c);
        remove(path);
        return 0;
    }
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    const char *opts[1] = {opt};
    trace_options o = {.format = format,
                       .skip_bad_rows = (mode & 0x40) != 0,
                       .tenants = tenants,
                       .models = models,
                       .gpu_types = model_catalog_names(fuzz_cat),
                       .opts = opts,
                       .n_opts = opt && opt[0] ? 1 : 0};
    trace_reader *r = NULL;
    if (trace_reader_open(&r, path, &o, &d) == SIM_OK) {
        unsigned chunk = mode & 0x3F;
        trace_reader_set_chunk(r, chunk ? chunk : 65536);
        job_spec j;
        sim_time last = INT64_MIN;
        int st;
        while ((st = trace_reader_next(r, &j, &d)) == 1) {
            if (j.submit_us < last || j.gpu_milli > 1000 || j.true_milli > 1000 ||
                !(j.work_s >= 0) || strlen(j.id) == 0 || strlen(j.id) >= SIM_ID_MAX)
                abort();
            last = j.submit_us;
        }
        if (st < 0 && d.msg[0] == '\0')
            abort();
    } else if (d.msg[0] == '\0') {
        abort();
    }
    trace_reader_close(r);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    remove(path);
    return 0;
}

#endif
