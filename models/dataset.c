/*
 * dataset.c: the training-data CSV (schema in dataset.h), read through sim/csvin so it
 * may be gzip-compressed and every bad field is reported with its position. Rows are
 * kept in one growing array (geometric growth).
 */
#include "models/dataset.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <math.h>
#include <string.h>
#include <strings.h>

enum { C_SOURCE, C_MODEL, C_GPU, C_UTIL, C_MEM, C_TIME, C_F0, C_COUNT = C_F0 + MODEL_F_COUNT };

static const char *col_name(int c)
{
    static const char *const base[C_F0] = {"source",     "model",   "gpu_type",
                                           "util_milli", "mem_mib", "time_s"};
    return c < C_F0 ? base[c] : model_feature_name(c - C_F0);
}

int model_dataset_append(model_dataset *ds, const model_sample *s)
{
    if (ds->n == ds->cap) {
        size_t ncap = ds->cap ? ds->cap * 2 : 1024;
        model_sample *nr = sim_reallocarray(ds->rows, ncap, sizeof *nr);
        if (!nr)
            return SIM_ENOMEM;
        ds->rows = nr;
        ds->cap = ncap;
    }
    ds->rows[ds->n++] = *s;
    if (s->synthetic)
        ds->n_synthetic++;
    return SIM_OK;
}

void model_dataset_free(model_dataset *ds)
{
    sim_free(ds->rows);
    memset(ds, 0, sizeof *ds);
}

static void copy_text(char *dst, size_t size, const csvin_row *row, int32_t col)
{
    size_t n = row->len[col] < size - 1 ? row->len[col] : size - 1;
    memcpy(dst, row->f[col], n);
    dst[n] = '\0';
}

int model_dataset_load(model_dataset *ds, const char *path, sim_diag *d)
{
    memset(ds, 0, sizeof *ds);
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    const char *names[C_COUNT];
    for (int c = 0; c < C_COUNT; c++)
        names[c] = col_name(c);
    int32_t ix[C_COUNT];
    csvin_row row;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected a header line");
    if (st < 0 || (st = csvin_map_header(in, &row, names, C_COUNT, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int c = 0; c < C_COUNT; c++)
        if (ix[c] < 0) {
            char hdr[1024];
            size_t o = 0;
            for (int k = 0; k < C_COUNT && o < sizeof hdr; k++)
                o += (size_t)snprintf(hdr + o, sizeof hdr - o, "%s%s", k ? "," : "", names[k]);
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected %s", names[c], hdr);
            goto out;
        }
    while ((st = csvin_next(in, &row, d)) == 1) {
        model_sample s;
        memset(&s, 0, sizeof s);
        int missing = -1; /* the leftmost column the row lacks */
        for (int c = 0; c < C_COUNT; c++)
            if ((uint32_t)ix[c] >= row.n && (missing < 0 || ix[c] < ix[missing]))
                missing = c;
        if (missing >= 0) {
            st = csvin_field_error(in, &row, ix[missing], names[missing],
                                   "a value (the row is short)", d);
            goto out;
        }
        const char *src = row.f[ix[C_SOURCE]];
        if (strcasecmp(src, "synthetic") == 0) {
            s.synthetic = true;
        } else if (strcasecmp(src, "measured") != 0) {
            st = csvin_field_error(in, &row, ix[C_SOURCE], "source", "synthetic or measured", d);
            goto out;
        }
        copy_text(s.model, sizeof s.model, &row, ix[C_MODEL]);
        copy_text(s.gpu_type, sizeof s.gpu_type, &row, ix[C_GPU]);
        for (int k = 0; k < MODEL_F_COUNT; k++) {
            double hi = k == MODEL_F_GPU_CC ? 100 : 1e300;
            if ((st = csvin_double(in, &row, ix[C_F0 + k], names[C_F0 + k], 0, hi, &s.x[k], d)))
                goto out;
        }
        if ((st = csvin_double(in, &row, ix[C_UTIL], "util_milli", 0, 1000, &s.util_milli, d)) ||
            (st = csvin_double(in, &row, ix[C_MEM], "mem_mib", 0, 1e300, &s.mem_mib, d)) ||
            (st = csvin_double(in, &row, ix[C_TIME], "time_s", 0, 1e300, &s.time_s, d)))
            goto out;
        if (model_dataset_append(ds, &s) != SIM_OK) {
            st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
            goto out;
        }
    }
out:
    csvin_close(in);
    if (st < 0) {
        model_dataset_free(ds);
        return st;
    }
    return SIM_OK;
}

int model_dataset_write_header(FILE *f)
{
    fputs("source,model,gpu_type", f);
    for (int k = 0; k < MODEL_F_COUNT; k++)
        fprintf(f, ",%s", model_feature_name(k));
    fputs(",util_milli,mem_mib,time_s\n", f);
    return ferror(f) ? SIM_EIO : SIM_OK;
}

int model_dataset_write_row(FILE *f, const model_sample *s)
{
    fprintf(f, "%s,%s,%s", s->synthetic ? "synthetic" : "measured", s->model, s->gpu_type);
    for (int k = 0; k < MODEL_F_COUNT; k++)
        fprintf(f, ",%.9g", s->x[k]);
    fprintf(f, ",%.6g,%.6g,%.6g\n", s->util_milli, s->mem_mib, s->time_s);
    return ferror(f) ? SIM_EIO : SIM_OK;
}
