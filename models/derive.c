/*
 * derive.c: derivation of the shipped model tables from public data (see derive.h).
 * Inputs are small (tens to thousands of rows) and read whole; outputs are sorted so
 * that the same inputs always give the same bytes. Numbers are written with %.12g,
 * which keeps every published digit of the sources.
 */
#include "models/derive.h"

#include "models/table_int.h"
#include "base/textout.h"
#include "base/alloc.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ---- A growable list of owned strings ---------------------------------------------- */

typedef struct strlist {
    char **s;
    uint32_t n, cap;
} strlist;

static int strlist_add(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 16;
        char **p = sim_reallocarray(l->s, cap, sizeof *p);
        if (!p)
            return SIM_ENOMEM;
        l->s = p;
        l->cap = cap;
    }
    if (!(l->s[l->n] = sim_strdup(s)))
        return SIM_ENOMEM;
    l->n++;
    return SIM_OK;
}

static void strlist_free(strlist *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        sim_free(l->s[i]);
    sim_free(l->s);
    memset(l, 0, sizeof *l);
}

/* ---- Catalog ------------------------------------------------------------------------- */

typedef struct spec_row {
    char id[48];
    char memory_gib[32]; /* as written: "16", or "16 or 32" */
    double cc, bw, fp32, fp16;
    uint64_t sm;
    long line;
} spec_row;

typedef struct name_row {
    char name[32];
    char spec_id[48];
    double memory_gib; /* 0 = the spec's figure */
    bool assumed;
    char claims[256];  /* '|'-separated labels this row takes */
    char aliases[512]; /* built: '|'-separated */
    const spec_row *spec;
    long line;
} name_row;

typedef struct label_row {
    char dataset[64], label[64], gpu_id[48];
    long line;
} label_row;

enum { S_ID, S_CC, S_SM, S_MEM, S_BW, S_FP32, S_FP16NT, S_FP16TC, S_N };
static const char *const spec_cols[S_N] = {"gpu_id",
                                           "compute_capability",
                                           "sm_count",
                                           "memory_gib",
                                           "mem_bandwidth_gb_s",
                                           "fp32_tflops",
                                           "fp16_tflops_non_tensor",
                                           "fp16_tensor_tflops_dense"};
static const char spec_header[] =
    "gpu_id,...,compute_capability,sm_count,memory_gib,...,mem_bandwidth_gb_s,...,"
    "fp32_tflops,fp16_tflops_non_tensor,fp16_tensor_tflops_dense,...";

static int copy_field(const csvin *in, const csvin_row *row, int32_t col, const char *name,
                      char *dst, size_t size, bool allow_empty, sim_diag *d)
{
    const char *s = model__field(row, col);
    size_t len = strlen(s);
    if ((!allow_empty && len == 0) || len >= size) {
        char what[64];
        snprintf(what, sizeof what, "a value of 1..%zu bytes", size - 1);
        return csvin_field_error(in, row, col, name, what, d);
    }
    memcpy(dst, s, len + 1);
    return SIM_OK;
}

static int load_specs(const char *path, spec_row **out, uint32_t *n_out, sim_diag *d)
{
    csvin *in;
    int32_t ix[S_N];
    int st = model__table_open(&in, path, spec_cols, S_N, NULL, spec_header, ix, NULL, d);
    if (st != SIM_OK)
        return st;
    spec_row *rows = NULL;
    uint32_t n = 0, cap = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            spec_row *p = sim_reallocarray(rows, cap, sizeof *p);
            if (!p) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                goto out;
            }
            rows = p;
        }
        spec_row *s = &rows[n];
        memset(s, 0, sizeof *s);
        s->line = row.line;
        if ((st = copy_field(in, &row, ix[S_ID], "gpu_id", s->id, sizeof s->id, false, d)) ||
            (st = copy_field(in, &row, ix[S_MEM], "memory_gib", s->memory_gib, sizeof s->memory_gib,
                             false, d)) ||
            (st = csvin_double(in, &row, ix[S_CC], "compute_capability", 1, 20, &s->cc, d)) ||
            (st = csvin_u64(in, &row, ix[S_SM], "sm_count", 1, 100000, &s->sm, d)) ||
            (st = csvin_double(in, &row, ix[S_BW], "mem_bandwidth_gb_s", 1e-3, 1e6, &s->bw, d)) ||
            (st = csvin_double(in, &row, ix[S_FP32], "fp32_tflops", 1e-3, 1e6, &s->fp32, d)))
            goto out;
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(rows[k].id, s->id) == 0) {
                char what[96];
                snprintf(what, sizeof what, "an id not used before (line %ld has it)",
                         rows[k].line);
                st = csvin_field_error(in, &row, ix[S_ID], "gpu_id", what, d);
                goto out;
            }
        /* FP16: the dense tensor-core figure where the GPU has one, else the plain
         * FP16 rate, else FP32 (no FP16 speed-up, as on Kepler). */
        if (!csvin_empty(&row, ix[S_FP16TC])) {
            if ((st = csvin_double(in, &row, ix[S_FP16TC], "fp16_tensor_tflops_dense", 1e-3, 1e6,
                                   &s->fp16, d)))
                goto out;
        } else if (!csvin_empty(&row, ix[S_FP16NT])) {
            if ((st = csvin_double(in, &row, ix[S_FP16NT], "fp16_tflops_non_tensor", 1e-3, 1e6,
                                   &s->fp16, d)))
                goto out;
        } else {
            s->fp16 = s->fp32;
        }
        n++;
    }
out:
    csvin_close(in);
    if (st < 0) {
        sim_free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return SIM_OK;
}

enum { L_DATASET, L_LABEL, L_GPU, L_N };
static const char *const label_cols[L_N] = {"dataset", "label", "gpu_id"};

static int load_labels(const char *path, label_row **out, uint32_t *n_out, sim_diag *d)
{
    csvin *in;
    int32_t ix[L_N];
    int st = model__table_open(&in, path, label_cols, L_N, NULL, "dataset,label,gpu_id,...", ix,
                               NULL, d);
    if (st != SIM_OK)
        return st;
    label_row *rows = NULL;
    uint32_t n = 0, cap = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            label_row *p = sim_reallocarray(rows, cap, sizeof *p);
            if (!p) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                goto out;
            }
            rows = p;
        }
        label_row *l = &rows[n];
        memset(l, 0, sizeof *l);
        l->line = row.line;
        if ((st = copy_field(in, &row, ix[L_DATASET], "dataset", l->dataset, sizeof l->dataset,
                             false, d)) ||
            (st =
                 copy_field(in, &row, ix[L_LABEL], "label", l->label, sizeof l->label, false, d)) ||
            (st = copy_field(in, &row, ix[L_GPU], "gpu_id", l->gpu_id, sizeof l->gpu_id, true, d)))
            goto out;
        n++;
    }
out:
    csvin_close(in);
    if (st < 0) {
        sim_free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return SIM_OK;
}

enum { N_NAME, N_SPEC, N_MEM, N_LABELS, N_ASSUMED, N_N };
static const char *const name_cols[N_N] = {"name", "spec_id", "memory_gib", "labels", "assumed"};

static const spec_row *find_spec(const spec_row *specs, uint32_t n, const char *id)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(specs[i].id, id) == 0)
            return &specs[i];
    return NULL;
}

static int load_names(const char *path, const spec_row *specs, uint32_t n_specs, name_row **out,
                      uint32_t *n_out, sim_diag *d)
{
    csvin *in;
    int32_t ix[N_N];
    int st = model__table_open(&in, path, name_cols, N_N, NULL,
                               "name,spec_id,memory_gib,labels,assumed", ix, NULL, d);
    if (st != SIM_OK)
        return st;
    name_row *rows = NULL;
    uint32_t n = 0, cap = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            name_row *p = sim_reallocarray(rows, cap, sizeof *p);
            if (!p) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                goto out;
            }
            rows = p;
        }
        name_row *r = &rows[n];
        memset(r, 0, sizeof *r);
        r->line = row.line;
        uint64_t assumed = 0;
        if ((st = copy_field(in, &row, ix[N_NAME], "name", r->name, sizeof r->name, false, d)) ||
            (st = copy_field(in, &row, ix[N_SPEC], "spec_id", r->spec_id, sizeof r->spec_id, false,
                             d)) ||
            (st = copy_field(in, &row, ix[N_LABELS], "labels", r->claims, sizeof r->claims, true,
                             d)) ||
            (st = csvin_u64(in, &row, ix[N_ASSUMED], "assumed", 0, 1, &assumed, d)))
            goto out;
        r->assumed = assumed != 0;
        if (!csvin_empty(&row, ix[N_MEM]) &&
            (st = csvin_double(in, &row, ix[N_MEM], "memory_gib", 1e-3, 1e6, &r->memory_gib, d)))
            goto out;
        if (!(r->spec = find_spec(specs, n_specs, r->spec_id))) {
            st =
                csvin_field_error(in, &row, ix[N_SPEC], "spec_id", "a gpu_id of the spec table", d);
            goto out;
        }
        double mem;
        if (r->memory_gib == 0 &&
            !csvin_parse_double(r->spec->memory_gib, strlen(r->spec->memory_gib), &mem)) {
            st = csvin_field_error(in, &row, ix[N_MEM], "memory_gib",
                                   "a number of GiB (the spec row gives several sizes)", d);
            goto out;
        }
        for (uint32_t k = 0; k < n; k++)
            if (model__str_ieq(rows[k].name, r->name)) {
                st = csvin_field_error(in, &row, ix[N_NAME], "name", "a name not used before", d);
                goto out;
            }
        n++;
    }
out:
    csvin_close(in);
    if (st < 0) {
        sim_free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return SIM_OK;
}

/* A trace label is one token of letters, digits, '_', '-' and '.'. */
static bool is_token(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

/* Whether name appears in the '|'-separated list (case-insensitive). */
static bool list_has(const char *list, const char *name)
{
    size_t nl = strlen(name);
    while (*list) {
        const char *bar = strchr(list, '|');
        size_t len = bar ? (size_t)(bar - list) : strlen(list);
        if (len == nl) {
            char tmp[64];
            if (len < sizeof tmp) {
                memcpy(tmp, list, len);
                tmp[len] = '\0';
                if (model__str_ieq(tmp, name))
                    return true;
            }
        }
        list += len + (bar ? 1 : 0);
    }
    return false;
}

static int add_alias(const char *names_path, name_row *r, const char *alias, sim_diag *d)
{
    if (model__str_ieq(r->name, alias) || list_has(r->aliases, alias))
        return SIM_OK;
    size_t used = strlen(r->aliases), len = strlen(alias);
    if (used + len + 2 > sizeof r->aliases)
        return sim_diag_set(d, SIM_ELIMIT, names_path, r->line, 0,
                            "type '%s': more aliases than fit %zu bytes", r->name,
                            sizeof r->aliases - 1);
    snprintf(r->aliases + used, sizeof r->aliases - used, "%s%s", used ? "|" : "", alias);
    return SIM_OK;
}

/* The row that takes label l, or NULL with d filled. */
static name_row *label_owner(name_row *rows, uint32_t n, const label_row *l, const char *labels,
                             const char *names_path, sim_diag *d)
{
    for (uint32_t i = 0; i < n; i++)
        if (list_has(rows[i].claims, l->label))
            return &rows[i];
    for (uint32_t i = 0; i < n; i++)
        if (model__str_ieq(rows[i].name, l->label))
            return &rows[i];
    if (!l->gpu_id[0]) {
        sim_diag_set(d, SIM_EPARSE, labels, l->line, 0,
                     "label '%s' of %s names an undisclosed GPU: add a row named '%s' "
                     "(assumed=1) to %s or claim the label in a row's 'labels'",
                     l->label, l->dataset, l->label, names_path);
        return NULL;
    }
    name_row *owner = NULL;
    char several[256] = "";
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i].assumed || strcmp(rows[i].spec_id, l->gpu_id) != 0)
            continue;
        size_t o = strlen(several);
        snprintf(several + o, sizeof several - o, "%s%s", o ? ", " : "", rows[i].name);
        if (owner) {
            owner = NULL;
            for (uint32_t k = i + 1; k < n; k++)
                if (!rows[k].assumed && strcmp(rows[k].spec_id, l->gpu_id) == 0) {
                    o = strlen(several);
                    snprintf(several + o, sizeof several - o, ", %s", rows[k].name);
                }
            sim_diag_set(d, SIM_EPARSE, labels, l->line, 0,
                         "label '%s' of %s maps to spec '%s', which several types use (%s): "
                         "claim it in one row's 'labels' in %s",
                         l->label, l->dataset, l->gpu_id, several, names_path);
            return NULL;
        }
        owner = &rows[i];
    }
    if (!owner)
        sim_diag_set(d, SIM_EPARSE, labels, l->line, 0,
                     "label '%s' of %s maps to spec '%s', which no type of %s uses", l->label,
                     l->dataset, l->gpu_id, names_path);
    return owner;
}

int model_derive_catalog(const char *specs_path, const char *labels_path, const char *names_path,
                         FILE *out, sim_diag *d)
{
    spec_row *specs = NULL;
    label_row *labels = NULL;
    name_row *names = NULL;
    uint32_t n_specs = 0, n_labels = 0, n_names = 0;
    int st;
    if ((st = load_specs(specs_path, &specs, &n_specs, d)) ||
        (st = load_labels(labels_path, &labels, &n_labels, d)) ||
        (st = load_names(names_path, specs, n_specs, &names, &n_names, d)))
        goto out;
    if (n_names == 0) {
        st = sim_diag_set(d, SIM_EPARSE, names_path, 0, 0, "the naming table lists no type");
        goto out;
    }
    /* Each claim must be a label of the map, so every alias has a source. */
    for (uint32_t i = 0; i < n_names; i++) {
        const char *c = names[i].claims;
        while (*c) {
            const char *bar = strchr(c, '|');
            size_t len = bar ? (size_t)(bar - c) : strlen(c);
            char tmp[64] = "";
            if (len && len < sizeof tmp)
                memcpy(tmp, c, len);
            bool found = false;
            for (uint32_t k = 0; k < n_labels && !found; k++)
                found = model__str_ieq(labels[k].label, tmp);
            if (!found) {
                st = sim_diag_set(d, SIM_EPARSE, names_path, names[i].line, 4,
                                  "field 'labels': expected labels of %s, got \"%s\"", labels_path,
                                  tmp);
                goto out;
            }
            c += len + (bar ? 1 : 0);
        }
    }
    /* Aliases: the spec id on the first non-assumed row of that spec, then labels. */
    for (uint32_t i = 0; i < n_names; i++) {
        name_row *r = &names[i];
        if (r->assumed)
            continue;
        bool first = true;
        for (uint32_t k = 0; k < i; k++)
            if (!names[k].assumed && strcmp(names[k].spec_id, r->spec_id) == 0)
                first = false;
        if (first && (st = add_alias(names_path, r, r->spec_id, d)) != SIM_OK)
            goto out;
    }
    for (uint32_t k = 0; k < n_labels; k++) {
        if (!is_token(labels[k].label))
            continue;
        name_row *owner = label_owner(names, n_names, &labels[k], labels_path, names_path, d);
        if (!owner) {
            st = SIM_EPARSE;
            goto out;
        }
        if ((st = add_alias(names_path, owner, labels[k].label, d)) != SIM_OK)
            goto out;
    }
    /* No alias may be another type's name or alias. */
    for (uint32_t i = 0; i < n_names; i++)
        for (uint32_t k = 0; k < n_names; k++) {
            if (i == k)
                continue;
            const char *a = names[i].aliases;
            while (*a) {
                const char *bar = strchr(a, '|');
                size_t len = bar ? (size_t)(bar - a) : strlen(a);
                char tmp[64] = "";
                if (len < sizeof tmp)
                    memcpy(tmp, a, len);
                if (model__str_ieq(tmp, names[k].name) || list_has(names[k].aliases, tmp)) {
                    st = sim_diag_set(d, SIM_EPARSE, names_path, names[i].line, 0,
                                      "alias '%s' of type '%s' is also a name of type '%s'", tmp,
                                      names[i].name, names[k].name);
                    goto out;
                }
                a += len + (bar ? 1 : 0);
            }
        }
    fputs("name,aliases,spec_id,compute_capability,sm_count,memory_mib,mem_bandwidth_gbs,"
          "fp32_tflops,fp16_tflops,assumed\n",
          out);
    for (uint32_t i = 0; i < n_names; i++) {
        const name_row *r = &names[i];
        const spec_row *s = r->spec;
        double gib = r->memory_gib;
        if (gib == 0)
            csvin_parse_double(s->memory_gib, strlen(s->memory_gib), &gib);
        sim_csv_put_field(out, r->name);
        fputc(',', out);
        sim_csv_put_field(out, r->aliases);
        fputc(',', out);
        sim_csv_put_field(out, s->id);
        fprintf(out, ",%.1f,%llu,%.0f,%.12g,%.12g,%.12g,%d\n", s->cc, (unsigned long long)s->sm,
                gib * 1024.0, s->bw, s->fp32, s->fp16, r->assumed ? 1 : 0);
    }
    st = model__check_write(out, "catalog output", d);
out:
    sim_free(specs);
    sim_free(labels);
    sim_free(names);
    return st;
}

/* ---- Gavel ----------------------------------------------------------------------------- */

typedef struct steps_row {
    const char *job; /* owned by a strlist */
    uint64_t sf;
    uint16_t type;
    double sps;
    long line;
} steps_row;

static int cmp_steps(const void *a, const void *b)
{
    const steps_row *x = a, *y = b;
    int c = strcmp(x->job, y->job);
    if (c)
        return c;
    if (x->sf != y->sf)
        return x->sf < y->sf ? -1 : 1;
    return (int)x->type - (int)y->type;
}

static const char unconsolidated[] = "_unconsolidated";

static bool is_unconsolidated(const char *w)
{
    size_t n = strlen(w), m = sizeof unconsolidated - 1;
    return n > m && strcmp(w + n - m, unconsolidated) == 0;
}

/* Resolve a GPU label through the catalog; a field error listing the names otherwise. */
static int resolve_type(const csvin *in, const csvin_row *row, int32_t col, const char *name,
                        const model_catalog *cat, uint16_t *out, sim_diag *d)
{
    const char *s = model__field(row, col);
    uint32_t id = sim_intern_find(model_catalog_names(cat), s, strlen(s));
    if (id == SIM_INTERN_NONE || id == 0) {
        char known[600], what[700];
        sim_intern_list(model_catalog_names(cat), ", ", known, sizeof known);
        snprintf(what, sizeof what, "a GPU type of the catalog (%s)", known);
        return csvin_field_error(in, row, col, name, what, d);
    }
    *out = (uint16_t)id;
    return SIM_OK;
}

static int steps_grow(steps_row **rows, uint32_t *cap, uint32_t n)
{
    if (n < *cap)
        return SIM_OK;
    uint32_t c = *cap ? 2 * *cap : 256;
    steps_row *p = sim_reallocarray(*rows, c, sizeof *p);
    if (!p)
        return SIM_ENOMEM;
    *rows = p;
    *cap = c;
    return SIM_OK;
}

static int write_steps(FILE *out, const model_catalog *cat, steps_row *rows, uint32_t n,
                       const char *path, sim_diag *d)
{
    qsort(rows, n, sizeof *rows, cmp_steps);
    for (uint32_t i = 1; i < n; i++)
        if (cmp_steps(&rows[i - 1], &rows[i]) == 0)
            return sim_diag_set(d, SIM_EPARSE, path,
                                rows[i].line > rows[i - 1].line ? rows[i].line : rows[i - 1].line,
                                0, "job type '%s', scale factor %llu on %s is measured twice",
                                rows[i].job, (unsigned long long)rows[i].sf,
                                model_catalog_type(cat, rows[i].type)->name);
    fputs("job_type,scale_factor,gpu_type,steps_per_sec\n", out);
    for (uint32_t i = 0; i < n; i++) {
        sim_csv_put_field(out, rows[i].job);
        fprintf(out, ",%llu,%s,%.12g\n", (unsigned long long)rows[i].sf,
                model_catalog_type(cat, rows[i].type)->name, rows[i].sps);
    }
    return model__check_write(out, "steps output", d);
}

enum { G_WORKER, G_JOB, G_SF, G_SPS, G_N };
static const char *const gavel_iso_cols[G_N] = {"worker_type", "job_type", "scale_factor",
                                                "steps_per_sec"};

int model_derive_gavel_steps(const char *isolated, const model_catalog *cat, FILE *out, sim_diag *d)
{
    csvin *in;
    int32_t ix[G_N];
    int st = model__table_open(&in, isolated, gavel_iso_cols, G_N, NULL,
                               "worker_type,job_type,scale_factor,steps_per_sec", ix, NULL, d);
    if (st != SIM_OK)
        return st;
    strlist jobs = {0};
    steps_row *rows = NULL;
    uint32_t n = 0, cap = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (is_unconsolidated(model__field(&row, ix[G_WORKER])))
            continue;
        steps_row r = {.line = row.line};
        if ((st = resolve_type(in, &row, ix[G_WORKER], "worker_type", cat, &r.type, d)) ||
            (st = csvin_u64(in, &row, ix[G_SF], "scale_factor", 1, 4096, &r.sf, d)) ||
            (st = csvin_double(in, &row, ix[G_SPS], "steps_per_sec", 0, 1e12, &r.sps, d)))
            goto out;
        if (csvin_empty(&row, ix[G_JOB])) {
            st = csvin_field_error(in, &row, ix[G_JOB], "job_type", "a job type", d);
            goto out;
        }
        if (r.sps == 0)
            continue; /* infeasible on this GPU (out of memory) */
        if (steps_grow(&rows, &cap, n) || strlist_add(&jobs, model__field(&row, ix[G_JOB]))) {
            st = sim_diag_set(d, SIM_ENOMEM, isolated, 0, 0, "out of memory");
            goto out;
        }
        r.job = jobs.s[jobs.n - 1];
        rows[n++] = r;
    }
    if (st < 0)
        goto out;
    if (n == 0) {
        st = sim_diag_set(d, SIM_EPARSE, isolated, 0, 0,
                          "no row to derive from (a consolidated worker type with "
                          "steps_per_sec above 0)");
        goto out;
    }
    st = write_steps(out, cat, rows, n, isolated, d);
out:
    csvin_close(in);
    sim_free(rows);
    strlist_free(&jobs);
    return st;
}

typedef struct pair_row {
    const char *a, *b; /* a <= b in byte order */
    uint16_t type;
    double sa, sb;
    long line;
} pair_row;

static int cmp_pairs(const void *x, const void *y)
{
    const pair_row *p = x, *q = y;
    if (p->type != q->type)
        return (int)p->type - (int)q->type;
    int c = strcmp(p->a, q->a);
    return c ? c : strcmp(p->b, q->b);
}

enum { P_WORKER, P_A, P_SFA, P_B, P_SFB, P_NA, P_NB, P_N };
static const char *const gavel_pair_cols[P_N] = {"worker_type", "job_type_a",     "scale_factor_a",
                                                 "job_type_b",  "scale_factor_b", "norm_speed_a",
                                                 "norm_speed_b"};

int model_derive_gavel_pairs(const char *colocated, const model_catalog *cat, FILE *out,
                             sim_diag *d)
{
    csvin *in;
    int32_t ix[P_N];
    int st = model__table_open(&in, colocated, gavel_pair_cols, P_N, NULL,
                               "worker_type,job_type_a,scale_factor_a,job_type_b,scale_factor_b,"
                               "...,norm_speed_a,norm_speed_b",
                               ix, NULL, d);
    if (st != SIM_OK)
        return st;
    strlist jobs = {0};
    pair_row *rows = NULL;
    uint32_t n = 0, cap = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (is_unconsolidated(model__field(&row, ix[P_WORKER])))
            continue;
        uint64_t sfa, sfb;
        if ((st = csvin_u64(in, &row, ix[P_SFA], "scale_factor_a", 1, 4096, &sfa, d)) ||
            (st = csvin_u64(in, &row, ix[P_SFB], "scale_factor_b", 1, 4096, &sfb, d)))
            goto out;
        if (sfa != 1 || sfb != 1)
            continue;
        if (csvin_empty(&row, ix[P_NA]) || csvin_empty(&row, ix[P_NB]))
            continue; /* no isolated speed to normalise by: infeasible */
        pair_row r = {.line = row.line};
        if ((st = resolve_type(in, &row, ix[P_WORKER], "worker_type", cat, &r.type, d)) ||
            (st = csvin_double(in, &row, ix[P_NA], "norm_speed_a", 0, 100, &r.sa, d)) ||
            (st = csvin_double(in, &row, ix[P_NB], "norm_speed_b", 0, 100, &r.sb, d)))
            goto out;
        if (csvin_empty(&row, ix[P_A]) || csvin_empty(&row, ix[P_B])) {
            st = csvin_field_error(in, &row, ix[csvin_empty(&row, ix[P_A]) ? P_A : P_B],
                                   csvin_empty(&row, ix[P_A]) ? "job_type_a" : "job_type_b",
                                   "a job type", d);
            goto out;
        }
        if (r.sa == 0 || r.sb == 0)
            continue;
        const char *a = model__field(&row, ix[P_A]), *b = model__field(&row, ix[P_B]);
        if (strcmp(a, b) > 0) {
            const char *t = a;
            a = b;
            b = t;
            double s = r.sa;
            r.sa = r.sb;
            r.sb = s;
        }
        if (n == cap) {
            uint32_t c = cap ? 2 * cap : 512;
            pair_row *p = sim_reallocarray(rows, c, sizeof *p);
            if (!p) {
                st = sim_diag_set(d, SIM_ENOMEM, colocated, 0, 0, "out of memory");
                goto out;
            }
            rows = p;
            cap = c;
        }
        if (strlist_add(&jobs, a) || strlist_add(&jobs, b)) {
            st = sim_diag_set(d, SIM_ENOMEM, colocated, 0, 0, "out of memory");
            goto out;
        }
        r.a = jobs.s[jobs.n - 2];
        r.b = jobs.s[jobs.n - 1];
        rows[n++] = r;
    }
    if (st < 0)
        goto out;
    if (n == 0) {
        st = sim_diag_set(d, SIM_EPARSE, colocated, 0, 0,
                          "no row to derive from (a consolidated worker type, scale factors "
                          "1 and both normalised speeds above 0)");
        goto out;
    }
    /* Both orders of a pair appear in the source; keep the first (a stable sort keeps
     * file order among equal keys only with a line tie-break). */
    qsort(rows, n, sizeof *rows, cmp_pairs);
    fputs("gpu_type,job_type_a,job_type_b,speed_a,speed_b\n", out);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t best = i;
        while (i + 1 < n && cmp_pairs(&rows[i], &rows[i + 1]) == 0) {
            i++;
            if (rows[i].line < rows[best].line)
                best = i;
        }
        const pair_row *r = &rows[best];
        fprintf(out, "%s,", model_catalog_type(cat, r->type)->name);
        sim_csv_put_field(out, r->a);
        fputc(',', out);
        sim_csv_put_field(out, r->b);
        fprintf(out, ",%.12g,%.12g\n", r->sa, r->sb);
    }
    st = model__check_write(out, "pairs output", d);
out:
    csvin_close(in);
    sim_free(rows);
    strlist_free(&jobs);
    return st;
}

/* ---- Pollux ---------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

enum { X_PLACEMENT, X_BSZ, X_STEP, X_N };
static const char *const pollux_cols[X_N] = {"placement", "local_bsz", "step_time"};

/* The single-GPU row with the largest local batch of one application. */
static int pollux_app(const char *path, double *step_time, uint64_t *bsz, sim_diag *d)
{
    csvin *in;
    int32_t ix[X_N];
    int st = model__table_open(&in, path, pollux_cols, X_N, NULL,
                               "placement,local_bsz,step_time,sync_time", ix, NULL, d);
    if (st != SIM_OK)
        return st;
    *bsz = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (strcmp(model__field(&row, ix[X_PLACEMENT]), "1") != 0)
            continue;
        uint64_t b;
        double t;
        if ((st = csvin_u64(in, &row, ix[X_BSZ], "local_bsz", 1, UINT64_C(1) << 40, &b, d)) ||
            (st = csvin_double(in, &row, ix[X_STEP], "step_time", 1e-9, 1e9, &t, d)))
            break;
        if (b > *bsz) {
            *bsz = b;
            *step_time = t;
        }
    }
    csvin_close(in);
    if (st < 0)
        return st;
    if (*bsz == 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "no single-GPU row (placement 1)");
    return SIM_OK;
}

int model_derive_pollux_steps(const char *dir, const model_catalog *cat, FILE *out, sim_diag *d)
{
    uint32_t t4 = sim_intern_find(model_catalog_names(cat), "T4", 2);
    if (t4 == SIM_INTERN_NONE)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "the catalog has no type T4");
    DIR *dh = opendir(dir);
    if (!dh)
        return sim_diag_set(d, SIM_EIO, dir, 0, 0, "cannot open the directory");
    strlist apps = {0};
    steps_row *rows = NULL;
    int st = SIM_OK;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(dh)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/placements.csv", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        if (strlist_add(&apps, e->d_name)) {
            st = sim_diag_set(d, SIM_ENOMEM, dir, 0, 0, "out of memory");
            goto out;
        }
    }
    if (apps.n == 0) {
        st = sim_diag_set(d, SIM_EPARSE, dir, 0, 0, "no application folder with a placements.csv");
        goto out;
    }
    qsort(apps.s, apps.n, sizeof *apps.s, cmp_str);
    rows = sim_calloc(apps.n, sizeof *rows);
    if (!rows) {
        st = sim_diag_set(d, SIM_ENOMEM, dir, 0, 0, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < apps.n; i++) {
        snprintf(path, sizeof path, "%s/%s/placements.csv", dir, apps.s[i]);
        double step = 0;
        uint64_t bsz;
        if ((st = pollux_app(path, &step, &bsz, d)) != SIM_OK)
            goto out;
        rows[i] = (steps_row){.job = apps.s[i], .sf = 1, .type = (uint16_t)t4, .sps = 1.0 / step};
    }
    st = write_steps(out, cat, rows, apps.n, dir, d);
out:
    closedir(dh);
    sim_free(rows);
    strlist_free(&apps);
    return st;
}
