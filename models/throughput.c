/*
 * throughput.c: steps tables -> a class x type matrix of measured steps/s, the global
 * roofline shape tau(t) = 1/F_t + 1/(I B_t) with its fitted intensity I, a per-class
 * scale, and a per-class roofline split (alpha/F + beta/B seconds per step) that says
 * how compute- or memory-bound the class is (see throughput.h). The matrix is dense:
 * classes number in the tens and types at most 63. Fits run once, at creation.
 */
#include "models/throughput.h"

#include "models/fit_int.h"
#include "models/table_int.h"
#include "base/alloc.h"
#include "base/intern.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct model_throughput {
    const model_catalog *cat;
    uint32_t n_types;            /* catalog count (ids 1..n_types-1) */
    double F[SIM_MAX_GPU_TYPES]; /* FP32, TFLOP/s */
    double B[SIM_MAX_GPU_TYPES]; /* memory bandwidth, GB/s */
    sim_intern *names;           /* class names, id = class + 1 */
    uint32_t n_classes, cap;
    double *meas;         /* n_classes x SIM_MAX_GPU_TYPES steps/s, NaN = none */
    double *alpha, *beta; /* per class roofline: TFLOP and GB per step */
    double *scale;        /* per class: geometric mean of steps/s x tau over measured types */
    uint32_t *source;     /* per class: index into paths */
    uint32_t *n_meas;
    char **paths;
    uint32_t n_paths;
    double intensity; /* global alpha / beta, TFLOP per GB (= 1000 FLOP per byte) */
};

static double *meas_row(const model_throughput *m, uint32_t c)
{
    return &m->meas[(size_t)c * SIM_MAX_GPU_TYPES];
}

static int grow(model_throughput *m)
{
    if (m->n_classes < m->cap)
        return SIM_OK;
    uint32_t cap = m->cap ? 2 * m->cap : 32;
    double *meas = sim_reallocarray(m->meas, (size_t)cap * SIM_MAX_GPU_TYPES, sizeof *meas);
    if (!meas)
        return SIM_ENOMEM;
    m->meas = meas;
    double *a = sim_reallocarray(m->alpha, cap, sizeof *a);
    if (!a)
        return SIM_ENOMEM;
    m->alpha = a;
    double *b = sim_reallocarray(m->beta, cap, sizeof *b);
    if (!b)
        return SIM_ENOMEM;
    m->beta = b;
    double *k = sim_reallocarray(m->scale, cap, sizeof *k);
    if (!k)
        return SIM_ENOMEM;
    m->scale = k;
    uint32_t *s = sim_reallocarray(m->source, cap, sizeof *s);
    if (!s)
        return SIM_ENOMEM;
    m->source = s;
    uint32_t *nm = sim_reallocarray(m->n_meas, cap, sizeof *nm);
    if (!nm)
        return SIM_ENOMEM;
    m->n_meas = nm;
    m->cap = cap;
    return SIM_OK;
}

enum { T_JOB, T_SF, T_TYPE, T_SPS, T_N };
static const char *const steps_cols[T_N] = {"job_type", "scale_factor", "gpu_type",
                                            "steps_per_sec"};

static int load_table(model_throughput *m, uint32_t pi, uint16_t exclude, sim_diag *d)
{
    const char *path = m->paths[pi];
    csvin *in;
    int32_t ix[T_N];
    int st = model__table_open(&in, path, steps_cols, T_N, NULL,
                               "job_type,scale_factor,gpu_type,steps_per_sec", ix, NULL, d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    const sim_intern *types = model_catalog_names(m->cat);
    while ((st = csvin_next(in, &row, d)) == 1) {
        uint64_t sf;
        double sps;
        if ((st = csvin_u64(in, &row, ix[T_SF], "scale_factor", 1, 1u << 20, &sf, d)) ||
            (st = csvin_double(in, &row, ix[T_SPS], "steps_per_sec", 1e-12, 1e12, &sps, d)))
            break;
        const char *tn = model__field(&row, ix[T_TYPE]);
        uint32_t t = sim_intern_find(types, tn, strlen(tn));
        if (t == SIM_INTERN_NONE || t == 0) {
            char known[600], what[700];
            sim_intern_list(types, ", ", known, sizeof known);
            snprintf(what, sizeof what, "a GPU type of the catalog (%s)", known);
            st = csvin_field_error(in, &row, ix[T_TYPE], "gpu_type", what, d);
            break;
        }
        const char *job = model__field(&row, ix[T_JOB]);
        if (!*job) {
            st = csvin_field_error(in, &row, ix[T_JOB], "job_type", "a job type", d);
            break;
        }
        if (sf != 1 || t == exclude)
            continue;
        uint32_t id = sim_intern_find(m->names, job, strlen(job));
        if (id == SIM_INTERN_NONE) {
            if (grow(m) != SIM_OK ||
                (id = sim_intern_add(m->names, job, strlen(job), 0)) == SIM_INTERN_NONE) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                break;
            }
            uint32_t c = m->n_classes++;
            double *r = meas_row(m, c);
            for (uint32_t k = 0; k < SIM_MAX_GPU_TYPES; k++)
                r[k] = NAN;
            m->source[c] = pi;
            m->n_meas[c] = 0;
        }
        uint32_t c = id - 1;
        double *r = meas_row(m, c);
        if (!isnan(r[t])) {
            char what[160];
            snprintf(what, sizeof what,
                     "one measurement per job type and GPU type "
                     "(%s is measured twice on %s)",
                     model_throughput_class_name(m, c),
                     model_catalog_type(m->cat, (uint16_t)t)->name);
            st = csvin_field_error(in, &row, ix[T_SPS], "steps_per_sec", what, d);
            break;
        }
        r[t] = sps;
        m->n_meas[c]++;
    }
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

/* Global intensity objective: squared deviations of log speed x tau from each class's
 * mean, over classes measured on two types or more. x = log10 of TFLOP per GB. */
static double intensity_cost(double x, void *ctx)
{
    const model_throughput *m = ctx;
    double I = pow(10.0, x), cost = 0;
    for (uint32_t c = 0; c < m->n_classes; c++) {
        if (m->n_meas[c] < 2)
            continue;
        const double *r = meas_row(m, c);
        double sum = 0, sum2 = 0;
        uint32_t k = 0;
        for (uint32_t t = 1; t < m->n_types; t++) {
            if (isnan(r[t]))
                continue;
            double l = log(r[t]) + log(1.0 / m->F[t] + 1.0 / (I * m->B[t]));
            sum += l;
            sum2 += l * l;
            k++;
        }
        cost += sum2 - sum * sum / k;
    }
    return cost;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int fit(model_throughput *m)
{
    uint32_t multi = 0;
    for (uint32_t c = 0; c < m->n_classes; c++)
        multi += m->n_meas[c] >= 2;
    if (multi > 0) {
        m->intensity = pow(10.0, model__min1d(intensity_cost, m, -6.0, 1.0, 140, NULL));
    } else {
        /* Nothing to fit: the median machine balance of the catalog, where a step is
         * as much compute- as memory-bound. */
        double bal[SIM_MAX_GPU_TYPES];
        uint32_t n = 0;
        for (uint32_t t = 1; t < m->n_types; t++)
            bal[n++] = m->F[t] / m->B[t];
        qsort(bal, n, sizeof *bal, cmp_double);
        m->intensity = n % 2 ? bal[n / 2] : 0.5 * (bal[n / 2 - 1] + bal[n / 2]);
    }
    int st = SIM_OK;
    gsl_matrix *X = NULL;
    gsl_vector *y = NULL, *coef = gsl_vector_alloc(2);
    if (!coef)
        return SIM_ENOMEM;
    for (uint32_t c = 0; c < m->n_classes; c++) {
        const double *r = meas_row(m, c);
        if (m->n_meas[c] >= 2) {
            X = gsl_matrix_alloc(m->n_meas[c], 2);
            y = gsl_vector_alloc(m->n_meas[c]);
            if (!X || !y) {
                st = SIM_ENOMEM;
                goto out;
            }
            size_t i = 0;
            for (uint32_t t = 1; t < m->n_types; t++) {
                if (isnan(r[t]))
                    continue;
                gsl_matrix_set(X, i, 0, r[t] / m->F[t]);
                gsl_matrix_set(X, i, 1, r[t] / m->B[t]);
                gsl_vector_set(y, i, 1.0);
                i++;
            }
            if ((st = model__nnls(X, y, NULL, coef, NULL)) != SIM_OK)
                goto out;
            m->alpha[c] = gsl_vector_get(coef, 0);
            m->beta[c] = gsl_vector_get(coef, 1);
            gsl_matrix_free(X);
            gsl_vector_free(y);
            X = NULL;
            y = NULL;
        } else {
            uint32_t t = 1;
            while (isnan(r[t]))
                t++;
            double tau = 1.0 / m->F[t] + 1.0 / (m->intensity * m->B[t]);
            m->alpha[c] = 1.0 / (r[t] * tau);
            m->beta[c] = m->alpha[c] / m->intensity;
        }
        if (!(m->alpha[c] + m->beta[c] > 0)) {
            st = SIM_EINVAL;
            goto out;
        }
        double l = 0;
        for (uint32_t t = 1; t < m->n_types; t++)
            if (!isnan(r[t]))
                l += log(r[t] * (1.0 / m->F[t] + 1.0 / (m->intensity * m->B[t])));
        m->scale[c] = exp(l / m->n_meas[c]);
    }
out:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(coef);
    return st;
}

int model_throughput_create(model_throughput **out, const model_catalog *cat,
                            const char *const *paths, uint32_t n_paths, uint16_t exclude_type,
                            sim_diag *d)
{
    *out = NULL;
    model_throughput *m = sim_calloc(1, sizeof *m);
    if (!m)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    m->cat = cat;
    m->n_types = model_catalog_count(cat);
    for (uint16_t t = 1; t < m->n_types; t++) {
        m->F[t] = model_catalog_type(cat, t)->fp32_tflops;
        m->B[t] = model_catalog_type(cat, t)->mem_bandwidth_gbs;
    }
    int st;
    m->names = sim_intern_create(true);
    m->paths = sim_calloc(n_paths ? n_paths : 1, sizeof *m->paths);
    if (!m->names || !m->paths) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out_free;
    }
    for (uint32_t i = 0; i < n_paths; i++) {
        if (!(m->paths[i] = sim_strdup(paths[i]))) {
            st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto out_free;
        }
        m->n_paths = i + 1;
    }
    for (uint32_t i = 0; i < n_paths; i++)
        if ((st = load_table(m, i, exclude_type, d)) != SIM_OK)
            goto out_free;
    if (m->n_classes == 0) {
        st = sim_diag_set(d, SIM_EPARSE, n_paths ? paths[0] : NULL, 0, 0,
                          "no single-GPU measurement (scale_factor 1) in the throughput tables");
        goto out_free;
    }
    if ((st = fit(m)) != SIM_OK) {
        st = sim_diag_set(d, st, n_paths ? paths[0] : NULL, 0, 0, "the roofline fit failed (%s)",
                          sim_strerror(st));
        goto out_free;
    }
    *out = m;
    return SIM_OK;
out_free:
    model_throughput_destroy(m);
    return st;
}

int model_throughput_create_default(model_throughput **out, const model_catalog *cat, sim_diag *d)
{
    char gavel[1100], pollux[1100];
    snprintf(gavel, sizeof gavel, "%s/models/data/gavel_steps.csv", model_data_dir());
    snprintf(pollux, sizeof pollux, "%s/models/data/pollux_steps.csv", model_data_dir());
    const char *paths[2] = {gavel, pollux};
    return model_throughput_create(out, cat, paths, 2, SIM_GPU_TYPE_NONE, d);
}

void model_throughput_destroy(model_throughput *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n_paths; i++)
        sim_free(m->paths[i]);
    sim_free(m->paths);
    sim_intern_destroy(m->names);
    sim_free(m->meas);
    sim_free(m->alpha);
    sim_free(m->beta);
    sim_free(m->scale);
    sim_free(m->source);
    sim_free(m->n_meas);
    sim_free(m);
}

uint32_t model_throughput_class_count(const model_throughput *m)
{
    return m->n_classes;
}

const char *model_throughput_class_name(const model_throughput *m, uint32_t c)
{
    return sim_intern_name(m->names, c + 1);
}

uint32_t model_throughput_class_find(const model_throughput *m, const char *name, size_t len)
{
    uint32_t id = sim_intern_find(m->names, name, len);
    return id == SIM_INTERN_NONE || id == 0 ? MODEL_CLASS_NONE : id - 1;
}

const char *model_throughput_class_source(const model_throughput *m, uint32_t c)
{
    return m->paths[m->source[c]];
}

uint32_t model_throughput_class_measured(const model_throughput *m, uint32_t c)
{
    return m->n_meas[c];
}

double model_throughput_steps(const model_throughput *m, uint32_t c, uint16_t t, bool *measured)
{
    double v = meas_row(m, c)[t];
    if (measured)
        *measured = !isnan(v);
    if (!isnan(v))
        return v;
    return m->scale[c] / (1.0 / m->F[t] + 1.0 / (m->intensity * m->B[t]));
}

static double tau_global(const model_throughput *m, uint16_t t)
{
    return 1.0 / m->F[t] + 1.0 / (m->intensity * m->B[t]);
}

double model_throughput_ratio(const model_throughput *m, uint32_t c, uint16_t t, uint16_t r)
{
    if (t == r)
        return 1.0;
    if (c == MODEL_CLASS_NONE)
        return tau_global(m, r) / tau_global(m, t);
    return model_throughput_steps(m, c, t, NULL) / model_throughput_steps(m, c, r, NULL);
}

double model_throughput_compute_frac(const model_throughput *m, uint32_t c, uint16_t t)
{
    double a, b;
    if (c == MODEL_CLASS_NONE) {
        a = 1.0 / m->F[t];
        b = 1.0 / (m->intensity * m->B[t]);
    } else {
        a = m->alpha[c] / m->F[t];
        b = m->beta[c] / m->B[t];
    }
    return a / (a + b);
}

double model_throughput_intensity(const model_throughput *m)
{
    return 1000.0 * m->intensity;
}

void model_throughput_class_fit(const model_throughput *m, uint32_t c, double *alpha_tflop,
                                double *beta_gb)
{
    *alpha_tflop = m->alpha[c];
    *beta_gb = m->beta[c];
}

int model_throughput_eval_holdout(const model_catalog *cat, const char *const *paths,
                                  uint32_t n_paths, uint16_t type, model_throughput_holdout *out,
                                  sim_diag *d)
{
    memset(out, 0, sizeof *out);
    out->type = type;
    model_throughput *full, *part;
    int st = model_throughput_create(&full, cat, paths, n_paths, SIM_GPU_TYPE_NONE, d);
    if (st != SIM_OK)
        return st;
    if ((st = model_throughput_create(&part, cat, paths, n_paths, type, d)) != SIM_OK) {
        model_throughput_destroy(full);
        return st;
    }
    out->intensity = model_throughput_intensity(part);
    double sum = 0, sum_c = 0, sum_b = 0;
    for (uint32_t c = 0; c < full->n_classes; c++) {
        const double *r = meas_row(full, c);
        if (isnan(r[type]) || full->n_meas[c] < 2)
            continue;
        const char *name = model_throughput_class_name(full, c);
        uint32_t pc = model_throughput_class_find(part, name, strlen(name));
        double pred = model_throughput_steps(part, pc, type, NULL);
        /* Baselines: the geometric mean of the other measurements scaled by one roof. */
        double lc = 0, lb = 0;
        uint32_t k = 0;
        for (uint32_t t = 1; t < full->n_types; t++) {
            if (t == type || isnan(r[t]))
                continue;
            lc += log(r[t] * full->F[type] / full->F[t]);
            lb += log(r[t] * full->B[type] / full->B[t]);
            k++;
        }
        double ape = fabs(pred - r[type]) / r[type];
        sum += ape;
        out->max_ape = fmax(out->max_ape, ape);
        sum_c += fabs(exp(lc / k) - r[type]) / r[type];
        sum_b += fabs(exp(lb / k) - r[type]) / r[type];
        out->n++;
    }
    if (out->n) {
        out->mape = sum / out->n;
        out->mape_compute_only = sum_c / out->n;
        out->mape_bw_only = sum_b / out->n;
    }
    model_throughput_destroy(part);
    model_throughput_destroy(full);
    return SIM_OK;
}
