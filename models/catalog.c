/*
 * catalog.c: loads models/data/gpus.csv (name, aliases, spec figures) into an array of
 * model_gpu_type indexed by type id and a case-insensitive name table. The catalog is
 * derived from the public spec sheet table; see README "GPU catalog".
 */
#include "models/catalog.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SIM_DATA_DIR
#define SIM_DATA_DIR "."
#endif

struct model_catalog {
    model_gpu_type types[SIM_MAX_GPU_TYPES]; /* index = type id; [0] unused */
    uint32_t count;                          /* ids used + 1 */
    sim_intern *names;
};

const char *model_data_dir(void)
{
    const char *e = getenv("CLUSTERSIM_DATA");
    return e && *e ? e : SIM_DATA_DIR;
}

const char *model_catalog_default_path(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/models/data/gpus.csv", model_data_dir());
    return path;
}

enum { C_NAME, C_ALIASES, C_SPEC, C_CC, C_SM, C_MEM, C_BW, C_FP32, C_FP16, C_ASSUMED, C_N };
static const char *const cols[C_N] = {
    "name",        "aliases",     "spec_id",     "compute_capability", "sm_count",
    "memory_mib",  "mem_bandwidth_gbs", "fp32_tflops", "fp16_tflops", "assumed"};

static int load_row(model_catalog *c, const csvin *in, const csvin_row *row, const int32_t *ix,
                    sim_diag *d)
{
    const char *path = csvin_path(in);
    if (csvin_empty(row, ix[C_NAME]))
        return csvin_field_error(in, row, ix[C_NAME], "name", "a GPU type name", d);
    const char *name = row->f[ix[C_NAME]];
    size_t nlen = row->len[ix[C_NAME]];
    if (nlen >= sizeof c->types[0].name)
        return csvin_field_error(in, row, ix[C_NAME], "name", "a name of at most 31 bytes", d);
    if (sim_intern_find(c->names, name, nlen) != SIM_INTERN_NONE)
        return csvin_field_error(in, row, ix[C_NAME], "name", "a name not used before", d);
    if (c->count >= SIM_MAX_GPU_TYPES)
        return sim_diag_set(d, SIM_ELIMIT, path, row->line, 0,
                            "more than %d GPU types in the catalog", SIM_MAX_GPU_TYPES - 1);
    uint32_t id = sim_intern_add(c->names, name, nlen, 0);
    if (id == SIM_INTERN_NONE)
        return sim_diag_set(d, SIM_ENOMEM, path, row->line, 0, "out of memory");
    model_gpu_type *t = &c->types[id];
    memcpy(t->name, name, nlen);
    t->name[nlen] = '\0';
    if (ix[C_SPEC] >= 0 && (uint32_t)ix[C_SPEC] < row->n)
        snprintf(t->spec_id, sizeof t->spec_id, "%s", row->f[ix[C_SPEC]]);
    uint64_t u;
    int st;
    if ((st = csvin_double(in, row, ix[C_CC], "compute_capability", 1.0, 20.0,
                           &t->compute_capability, d)) ||
        (st = csvin_u64(in, row, ix[C_SM], "sm_count", 1, 100000, &u, d)))
        return st;
    t->sm_count = (uint32_t)u;
    if ((st = csvin_u64(in, row, ix[C_MEM], "memory_mib", 1, UINT64_C(1) << 40,
                        &t->memory_mib, d)) ||
        (st = csvin_double(in, row, ix[C_BW], "mem_bandwidth_gbs", 1e-3, 1e6,
                           &t->mem_bandwidth_gbs, d)) ||
        (st = csvin_double(in, row, ix[C_FP32], "fp32_tflops", 1e-3, 1e6, &t->fp32_tflops, d)) ||
        (st = csvin_double(in, row, ix[C_FP16], "fp16_tflops", 1e-3, 1e6, &t->fp16_tflops, d)))
        return st;
    uint64_t assumed = 0;
    if (!csvin_empty(row, ix[C_ASSUMED]) &&
        (st = csvin_u64(in, row, ix[C_ASSUMED], "assumed", 0, 1, &assumed, d)))
        return st;
    t->assumed = assumed != 0;
    c->count = id + 1;
    /* Aliases: '|'-separated other names of the same type. */
    if (ix[C_ALIASES] >= 0 && (uint32_t)ix[C_ALIASES] < row->n) {
        const char *a = row->f[ix[C_ALIASES]];
        while (*a) {
            const char *bar = strchr(a, '|');
            size_t len = bar ? (size_t)(bar - a) : strlen(a);
            int ast = len ? sim_intern_alias(c->names, a, len, id) : SIM_OK;
            if (ast == SIM_ENOMEM)
                return sim_diag_set(d, SIM_ENOMEM, path, row->line, 0, "out of memory");
            if (ast != SIM_OK)
                return csvin_field_error(in, row, ix[C_ALIASES], "aliases",
                                         "aliases not used by another type", d);
            a += len + (bar ? 1 : 0);
        }
    }
    return SIM_OK;
}

int model_catalog_load(model_catalog **out, const char *path, sim_diag *d)
{
    *out = NULL;
    model_catalog *c = sim_calloc(1, sizeof *c);
    if (!c)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    c->count = 1;
    c->names = sim_intern_create(true);
    if (!c->names) {
        sim_free(c);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        goto out_free;
    csvin_row row;
    int32_t ix[C_N];
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected a header");
    if (st < 0)
        goto out_close;
    if ((st = csvin_map_header(in, &row, cols, C_N, ix, NULL, d)) != SIM_OK)
        goto out_close;
    for (int i = 0; i < C_N; i++) {
        if (ix[i] < 0 && i != C_ALIASES && i != C_SPEC && i != C_ASSUMED) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "missing column '%s'; expected header "
                              "name,aliases,spec_id,compute_capability,sm_count,memory_mib,"
                              "mem_bandwidth_gbs,fp32_tflops,fp16_tflops,assumed",
                              cols[i]);
            goto out_close;
        }
    }
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = load_row(c, in, &row, ix, d)) != SIM_OK)
            goto out_close;
    }
    if (st < 0)
        goto out_close;
    if (c->count < 2) {
        st = sim_diag_set(d, SIM_EPARSE, path, 0, 0, "the catalog lists no GPU type");
        goto out_close;
    }
    csvin_close(in);
    *out = c;
    return SIM_OK;
out_close:
    csvin_close(in);
out_free:
    model_catalog_destroy(c);
    return st;
}

void model_catalog_destroy(model_catalog *c)
{
    if (!c)
        return;
    sim_intern_destroy(c->names);
    sim_free(c);
}

uint32_t model_catalog_count(const model_catalog *c)
{
    return c->count;
}

const model_gpu_type *model_catalog_type(const model_catalog *c, uint16_t id)
{
    return id >= 1 && id < c->count ? &c->types[id] : NULL;
}

const sim_intern *model_catalog_names(const model_catalog *c)
{
    return c->names;
}
