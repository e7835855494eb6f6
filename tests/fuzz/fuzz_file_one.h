/*
 * fuzz_file_one.h: one fuzz input through one of the parsers that are not trace readers
 * (shared by the libFuzzer target fuzz_file.c and the regression test that replays the
 * inputs they found). The first byte is the mode: bit 0x80 gzips the file, the low bits
 * pick a variant where a kind has several. Kinds:
 *   cluster_spec  the compact cluster string ("4xV100M32:8,...")
 *   quota         --quotas files (mode bit 0) or --quota-share files (weights)
 *   failures      --failures lists for a fixed 4-node cluster
 *   calibrate     interference microbenchmark CSVs (calibrate)
 *   model         model files: (mode & 7) % 6 = MLP, catalog, contention matrix, dataset,
 *                 throughput table, interference pairs
 *   policy_opt    policy option strings, one KEY=VALUE per line, given to every policy
 *   curves        demand curves of online services (--demand: service,time,replicas)
 *   profiles      the interleave policy's model-class stage profiles (profiles=FILE),
 *                 read by the policy's init through the engine
 *   grid          sweep grid files (JSON); the files it may name exist under
 *                 /tmp/clustersim-fuzz-grid/ (a.csv, b.csv, c.csv.gz, nodes.csv, f.csv,
 *                 d/f.csv); every cell is checked (indices, name, command line)
 * Aborts when a parser accepts an input it should not, or fails without a diagnostic.
 */
#ifndef TESTS_FUZZ_FUZZ_FILE_ONE_H
#define TESTS_FUZZ_FUZZ_FILE_ONE_H

#include "study/quotas.h"
#include "models/calibrate.h"
#include "models/catalog.h"
#include "models/dataset.h"
#include "models/interference.h"
#include "models/mlp.h"
#include "models/throughput.h"
#include "policies/registry.h"
#include "sim/engine.h"
#include "study/grid.h"
#include "traces/cluster.h"
#include "traces/curves.h"
#include "traces/failures.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static model_catalog *ff_cat;
static cluster_spec *ff_cluster;
static model_throughput *ff_tp;

static void ff_write(const char *path, const uint8_t *data, size_t size, bool gz)
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

/* A failed parse must say why. */
static void ff_check(int st, const sim_diag *d)
{
    if (st != SIM_OK && d->msg[0] == '\0')
        abort();
}

static int ff_failure(void *ctx, uint32_t node, sim_time down_us, sim_time up_us, sim_diag *d)
{
    (void)d;
    if (node >= ((const cluster_spec *)ctx)->n_nodes || down_us < 0 || up_us <= down_us)
        abort();
    return SIM_OK;
}

/* Policy options, one KEY=VALUE per line (at most POLICY_MAX_OPTIONS), given to every
 * policy through the engine (which validates them and runs the policy's init). */
static void ff_policy_opts(char *text)
{
    policy_config pc;
    memset(&pc, 0, sizeof pc);
    for (char *line = text, *next; line && pc.n < POLICY_MAX_OPTIONS; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (!eq || eq == line || (size_t)(eq - line) >= sizeof pc.key[0])
            continue;
        memcpy(pc.key[pc.n], line, (size_t)(eq - line));
        pc.key[pc.n][eq - line] = '\0';
        pc.value[pc.n++] = eq + 1;
    }
    sim_intern *tenants = sim_intern_create(false);
    uint64_t type_mem[SIM_MAX_GPU_TYPES] = {0};
    for (uint32_t t = 1; t < sim_intern_count(model_catalog_names(ff_cat)) && t < SIM_MAX_GPU_TYPES;
         t++)
        type_mem[t] = 16384;
    sim_world w = {.cluster = ff_cluster,
                   .gpu_types = model_catalog_names(ff_cat),
                   .gpu_type_mem_mib = type_mem,
                   .tenants = tenants};
    for (const policy_ops *const *p = policy_all; *p; p++) {
        sim_config cfg = {.seed = 1, .horizon_us = SIM_TIME_NEVER};
        pc.policy = (*p)->name;
        pc.n_nodes = ff_cluster->n_nodes;
        pc.n_gpus = (uint32_t)cluster_spec_gpus(ff_cluster);
        sim_engine *e = NULL;
        sim_diag d;
        d.msg[0] = '\0';
        int st = sim_engine_create(&e, &cfg, &w, *p, &pc, &d);
        ff_check(st, &d);
        sim_engine_destroy(e);
    }
    sim_intern_destroy(tenants);
}

/* The files a fuzzed grid may name (the grid reader checks that they exist). */
#define FF_GRID_DIR "/tmp/clustersim-fuzz-grid"
static void ff_grid_files(void)
{
    static bool made;
    if (made)
        return;
    made = true;
    mkdir(FF_GRID_DIR, 0777);
    mkdir(FF_GRID_DIR "/d", 0777);
    static const char *const names[] = {"a.csv", "b.csv", "c.csv.gz", "nodes.csv", "f.csv",
                                        "d/f.csv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[128];
        snprintf(p, sizeof p, FF_GRID_DIR "/%s", names[i]);
        FILE *f = fopen(p, "a");
        if (f)
            fclose(f);
    }
}

static int ff_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A grid the reader accepted: its cells are the cross product minus the exclusions, each
 * refers to existing entries, has a name fit for a directory that no other cell has, and
 * a command line that fits its array. */
static void ff_grid_check(const grid *g)
{
    if (!g->n_traces || !g->n_clusters || !g->n_policies || !g->n_seeds || !g->n_cells)
        abort();
    size_t total = g->n_traces * g->n_clusters * g->n_policies * g->n_seeds;
    for (size_t a = 0; a < g->n_axes; a++)
        total *= g->axes[a].n_values;
    if (g->n_cells + g->n_excluded != total)
        abort();
    size_t n = g->n_cells < 100000 ? g->n_cells : 100000;
    const char **names = malloc(n * sizeof *names);
    if (!names)
        return;
    for (size_t i = 0; i < n; i++) {
        const grid_cell *c = &g->cells[i];
        if (c->trace >= g->n_traces || c->cluster >= g->n_clusters || c->policy >= g->n_policies)
            abort();
        for (size_t a = 0; a < g->n_axes; a++)
            if (c->value[a] >= g->axes[a].n_values)
                abort();
        size_t len = strlen(c->name);
        if (len == 0 || len > GRID_NAME_MAX || !strcmp(c->name, ".") || !strcmp(c->name, ".."))
            abort();
        for (const char *q = c->name; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                  (*q >= '0' && *q <= '9') || strchr("._-=+", *q)))
                abort();
        names[i] = c->name;
        char *argv[GRID_CELL_ARGV + 1], seed[24], cfg[512];
        argv[GRID_CELL_ARGV] = (char *)"guard";
        size_t na = grid_cell_argv(g, c, "clustersim", "dir", seed, argv);
        if (na >= GRID_CELL_ARGV || argv[na] || strcmp(argv[GRID_CELL_ARGV], "guard"))
            abort();
        for (size_t k = 0; k < na; k++)
            if (!argv[k])
                abort();
        grid_cell_config(g, c, SIZE_MAX, cfg, sizeof cfg);
    }
    qsort(names, n, sizeof *names, ff_name_cmp);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(names[i - 1], names[i]))
            abort();
    free(names);
}

static inline int fuzz_file_one(const char *kind, const uint8_t *data, size_t size)
{
    sim_diag d;
    if (!ff_cat && model_catalog_load(&ff_cat, model_catalog_default_path(), &d) != SIM_OK)
        abort();
    if (!ff_cluster && cluster_spec_load(&ff_cluster, "2xV100M16:8,2xT4:4",
                                         model_catalog_names(ff_cat), &d) != SIM_OK)
        abort();
    if (size < 1 || size > 65536)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    d.msg[0] = '\0';
    if (strcmp(kind, "cluster_spec") == 0 || strcmp(kind, "policy_opt") == 0) {
        char *s = malloc(size + 1);
        if (!s)
            return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (kind[0] == 'c') {
            /* A string that names a file would read that file: keep to strings. */
            if (!strchr(s, '/') && access(s, F_OK) != 0) {
                cluster_spec *c = NULL;
                int st = cluster_spec_load(&c, s, model_catalog_names(ff_cat), &d);
                ff_check(st, &d);
                if (st == SIM_OK && (!c || c->n_nodes == 0))
                    abort();
                cluster_spec_destroy(c);
            }
        } else {
            ff_policy_opts(s);
        }
        free(s);
        return 0;
    }
    if (strcmp(kind, "grid") == 0) {
        /* Errors of the content name the grid file, line and column. */
        ff_grid_files();
        grid g;
        d.msg[0] = '\0';
        int st = grid_parse((const char *)data, size, "grid.json", &g, &d);
        ff_check(st, &d);
        if (st == SIM_EPARSE && d.line < 1)
            abort();
        if (st == SIM_OK)
            ff_grid_check(&g);
        grid_free(&g);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/clustersim-fuzz-%ld.in", (long)getpid());
    ff_write(path, data, size, (mode & 0x80) != 0);
    int st = SIM_OK;
    if (strcmp(kind, "quota") == 0) {
        sim_intern *tenants = sim_intern_create(false);
        study_quotas qs = {0};
        st = mode & 1 ? study_quota_share_read(&qs, path, tenants, 64, &d)
                      : study_quotas_read(&qs, path, tenants, &d);
        for (uint32_t i = 0; st == SIM_OK && i < qs.n; i++)
            if (!(qs.q[i].gpus >= 0) || qs.q[i].tenant >= sim_intern_count(tenants))
                abort();
        study_quotas_free(&qs);
        sim_intern_destroy(tenants);
    } else if (strcmp(kind, "failures") == 0) {
        st = trace_failures_load(path, ff_cluster, ff_failure, ff_cluster, &d);
    } else if (strcmp(kind, "calibrate") == 0) {
        model_calib c;
        st = model_calibrate(path, mode & 1 ? "mps" : NULL, &c, &d);
        if (st == SIM_OK && c.rows == 0)
            abort();
    } else if (strcmp(kind, "model") == 0) {
        switch ((mode & 7) % 6) {
        case 0: {
            model_mlp *m = NULL;
            st = model_mlp_load(&m, path, &d);
            model_mlp_destroy(m);
            break;
        }
        case 1: {
            model_catalog *c = NULL;
            st = model_catalog_load(&c, path, &d);
            model_catalog_destroy(c);
            break;
        }
        case 2: {
            model_contention C;
            st = model_contention_load(&C, path, &d);
            break;
        }
        case 3: {
            model_dataset ds;
            memset(&ds, 0, sizeof ds);
            st = model_dataset_load(&ds, path, &d);
            if (st == SIM_OK)
                model_dataset_free(&ds);
            break;
        }
        case 4: {
            model_throughput *tp = NULL;
            const char *paths[1] = {path};
            st = model_throughput_create(&tp, ff_cat, paths, 1, 0, &d);
            model_throughput_destroy(tp);
            break;
        }
        default: {
            model_interference *mi = NULL;
            if (!ff_tp && model_throughput_create_default(&ff_tp, ff_cat, &d) != SIM_OK)
                abort();
            st = model_interference_create(&mi, ff_cat, ff_tp, path, &d);
            model_interference_destroy(mi);
            break;
        }
        }
    } else if (strcmp(kind, "curves") == 0) {
        sim_curves c;
        memset(&c, 0, sizeof c);
        st = trace_curves_load(&c, path, &d);
        /* Every point belongs to its service's run of points. */
        for (uint32_t k = 0; st == SIM_OK && k < c.n; k++)
            if (c.first[k] + c.count[k] > c.n_pts || !c.names[k])
                abort();
        trace_curves_free(&c);
    } else if (strcmp(kind, "profiles") == 0) {
        policy_config pc;
        memset(&pc, 0, sizeof pc);
        snprintf(pc.key[0], sizeof pc.key[0], "profiles");
        pc.value[0] = path;
        pc.n = 1;
        pc.policy = "interleave";
        pc.n_nodes = ff_cluster->n_nodes;
        pc.n_gpus = (uint32_t)cluster_spec_gpus(ff_cluster);
        const policy_ops *il = policy_find("interleave");
        sim_intern *tenants = sim_intern_create(false);
        uint64_t type_mem[SIM_MAX_GPU_TYPES] = {0};
        sim_world w = {.cluster = ff_cluster,
                       .gpu_types = model_catalog_names(ff_cat),
                       .gpu_type_mem_mib = type_mem,
                       .tenants = tenants};
        sim_config cfg = {.seed = 1, .horizon_us = SIM_TIME_NEVER};
        sim_engine *e = NULL;
        if (!il)
            abort();
        st = sim_engine_create(&e, &cfg, &w, il, &pc, &d);
        sim_engine_destroy(e);
        sim_intern_destroy(tenants);
    } else {
        abort();
    }
    ff_check(st, &d);
    remove(path);
    return 0;
}

#endif
