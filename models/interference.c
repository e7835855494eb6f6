/*
 * interference.c: measured pair table, resource profiles and the contention model of
 * interference.h, with its alternating fit and the held-out evaluation. Classes number
 * in the tens and measured GPU types at most MODEL_EVAL_MAX_TYPES, so the pair table
 * is a dense classes x classes matrix per measured type. The fit is deterministic:
 * classes and types are visited in id order and the minimisers are deterministic.
 */
#include "models/interference.h"

#include "models/fit_int.h"
#include "models/table_int.h"
#include "base/alloc.h"
#include "base/intern.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIT_ROUNDS 30
#define SP_MAX 20.0 /* upper bound of a fitted sensitivity or pressure */

static const char *const res_names[MODEL_RES_COUNT] = {"sm", "mem", "l2", "pcie"};

const char *model_resource_name(model_resource r)
{
    return (unsigned)r < MODEL_RES_COUNT ? res_names[r] : "?";
}

bool model_resource_parse(const char *s, model_resource *out)
{
    for (int r = 0; r < MODEL_RES_COUNT; r++)
        if (model__str_ieq(s, res_names[r])) {
            *out = (model_resource)r;
            return true;
        }
    return false;
}

/* u_i^T C u_j. */
static double mix_term(const model_contention *C, const double *ui, const double *uj)
{
    double x = 0;
    for (int v = 0; v < MODEL_RES_COUNT; v++) {
        if (ui[v] == 0)
            continue;
        double row = 0;
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            row += C->c[v][a] * uj[a];
        x += ui[v] * row;
    }
    return x;
}

double model_contention_excess(const model_contention *C, const model_profile *self,
                               const model_profile *others, const double *act, uint32_t n)
{
    double x = 0;
    for (uint32_t j = 0; j < n; j++)
        x += act[j] * others[j].press * mix_term(C, self->u, others[j].u);
    return self->sens * x;
}

enum { K_VICTIM, K_AGGRESSOR, K_COEF, K_N };
static const char *const coef_cols[K_N] = {"victim", "aggressor", "coefficient"};

int model_contention_load(model_contention *C, const char *path, sim_diag *d)
{
    memset(C, 0, sizeof *C);
    csvin *in;
    int32_t ix[K_N];
    uint32_t nh;
    int st = model__table_open(&in, path, coef_cols, K_N, NULL, "victim,aggressor,coefficient", ix,
                               &nh, d);
    if (st != SIM_OK)
        return st;
    long seen[MODEL_RES_COUNT][MODEL_RES_COUNT] = {{0}};
    char what[128];
    snprintf(what, sizeof what, "a resource: %s, %s, %s or %s", res_names[0], res_names[1],
             res_names[2], res_names[3]);
    csvin_row row;
    uint32_t rows = 0;
    while ((st = model__table_next(in, &row, nh, d)) == 1) {
        model_resource v, a;
        rows++;
        if (!model_resource_parse(model__field(&row, ix[K_VICTIM]), &v)) {
            st = csvin_field_error(in, &row, ix[K_VICTIM], "victim", what, d);
            break;
        }
        if (!model_resource_parse(model__field(&row, ix[K_AGGRESSOR]), &a)) {
            st = csvin_field_error(in, &row, ix[K_AGGRESSOR], "aggressor", what, d);
            break;
        }
        if (seen[v][a]) {
            char dup[96];
            snprintf(dup, sizeof dup, "one coefficient per pair (line %ld has %s,%s)", seen[v][a],
                     res_names[v], res_names[a]);
            st = csvin_field_error(in, &row, ix[K_AGGRESSOR], "aggressor", dup, d);
            break;
        }
        seen[v][a] = row.line;
        if ((st = csvin_double(in, &row, ix[K_COEF], "coefficient", 0, 1e6, &C->c[v][a], d)))
            break;
    }
    csvin_close(in);
    /* A header alone would be a matrix of zeros: no interference at all, which is far more
     * likely a truncated or wrong file than a calibration result. */
    if (st == 0 && rows == 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0,
                            "no coefficient row (expected rows victim,aggressor,coefficient "
                            "after the header)");
    return st < 0 ? st : SIM_OK;
}

int model_contention_write(const model_contention *C, FILE *f, sim_diag *d)
{
    fputs("victim,aggressor,coefficient\n", f);
    for (int v = 0; v < MODEL_RES_COUNT; v++)
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            fprintf(f, "%s,%s,%.6g\n", res_names[v], res_names[a], C->c[v][a] + 0.0);
    return model__check_write(f, "contention output", d);
}

/* ---- The model -------------------------------------------------------------------- */

typedef struct pair_obs {
    uint16_t t;
    uint32_t i, j; /* classes: i is the job whose speed was measured */
    double speed;
} pair_obs;

typedef struct pair_rec {
    uint16_t t;
    uint32_t a, b;
    double sa, sb;
} pair_rec;

struct model_interference {
    const model_catalog *cat;
    const model_throughput *tp;
    uint32_t n_types;
    sim_intern *names; /* class k has id k + 1 */
    uint32_t n_classes;
    uint32_t *tp_class; /* per class, MODEL_CLASS_NONE when the throughput model lacks it */
    double *w;          /* n_classes x SIM_MAX_GPU_TYPES: roofline compute-bound fraction */
    double *wfit;       /* the same, refined on the pairs; NaN = not fitted */
    double w_default[SIM_MAX_GPU_TYPES];
    double *sens, *press;        /* n_classes x SIM_MAX_GPU_TYPES: fitted s and p, NaN = none */
    int slot[SIM_MAX_GPU_TYPES]; /* measured-table slot of a type, -1 = none */
    uint32_t n_slots;
    double *table; /* n_slots x n_classes x n_classes speeds, NaN = not measured */
    bool use_table;
    model_contention C;
};

static double *sens_at(const model_interference *m, uint32_t k, uint16_t t)
{
    return &m->sens[(size_t)k * SIM_MAX_GPU_TYPES + t];
}

static double *press_at(const model_interference *m, uint32_t k, uint16_t t)
{
    return &m->press[(size_t)k * SIM_MAX_GPU_TYPES + t];
}

/* v[k][t] if fitted, else the geometric mean of k's fitted values, else 1. */
static double fitted_or_mean(const model_interference *m, const double *v, uint32_t k, uint16_t t)
{
    if (k == MODEL_ICLASS_NONE)
        return 1.0;
    const double *row = &v[(size_t)k * SIM_MAX_GPU_TYPES];
    if (!isnan(row[t]))
        return row[t];
    double sum = 0;
    uint32_t n = 0;
    for (uint16_t s = 1; s < m->n_types; s++)
        if (!isnan(row[s])) {
            sum += log(fmax(row[s], 1e-9));
            n++;
        }
    return n ? exp(sum / n) : 1.0;
}

/* Compute-bound fraction: fitted on t, else the mean of the class's fitted values, else
 * the roofline split on t. */
static double mix_w(const model_interference *m, uint32_t k, uint16_t t)
{
    if (k == MODEL_ICLASS_NONE)
        return m->w_default[t];
    const double *row = &m->wfit[(size_t)k * SIM_MAX_GPU_TYPES];
    if (!isnan(row[t]))
        return row[t];
    double sum = 0;
    uint32_t n = 0;
    for (uint16_t s = 1; s < m->n_types; s++)
        if (!isnan(row[s])) {
            sum += row[s];
            n++;
        }
    return n ? sum / n : m->w[(size_t)k * SIM_MAX_GPU_TYPES + t];
}

static void mix(const model_interference *m, uint32_t k, uint16_t t, double *u)
{
    double w = mix_w(m, k, t);
    u[MODEL_RES_SM] = w;
    u[MODEL_RES_MEM] = 1.0 - w;
    u[MODEL_RES_L2] = 0;
    u[MODEL_RES_PCIE] = 0;
}

void model_interference_profile(const model_interference *m, uint32_t k, uint16_t t,
                                model_profile *out)
{
    mix(m, k, t, out->u);
    out->sens = fitted_or_mean(m, m->sens, k, t);
    out->press = fitted_or_mean(m, m->press, k, t);
}

bool model_interference_fitted(const model_interference *m, uint32_t k, uint16_t t)
{
    return k != MODEL_ICLASS_NONE && !isnan(*sens_at(m, k, t));
}

uint32_t model_interference_class_find(const model_interference *m, const char *name, size_t len)
{
    uint32_t id = sim_intern_find(m->names, name, len);
    return id == SIM_INTERN_NONE || id == 0 ? MODEL_ICLASS_NONE : id - 1;
}

uint32_t model_interference_class_count(const model_interference *m)
{
    return m->n_classes;
}

const char *model_interference_class_name(const model_interference *m, uint32_t k)
{
    return sim_intern_name(m->names, k + 1);
}

void model_interference_set_contention(model_interference *m, const model_contention *C,
                                       bool use_table)
{
    m->C = *C;
    m->use_table = use_table;
}

const model_contention *model_interference_contention(const model_interference *m)
{
    return &m->C;
}

static double *table_at(const model_interference *m, int slot, uint32_t i, uint32_t j)
{
    return &m->table[((size_t)slot * m->n_classes + i) * m->n_classes + j];
}

double model_interference_measured(const model_interference *m, uint32_t k, uint32_t other,
                                   uint16_t t)
{
    if (!m->use_table || k == MODEL_ICLASS_NONE || other == MODEL_ICLASS_NONE ||
        t >= SIM_MAX_GPU_TYPES || m->slot[t] < 0)
        return NAN;
    return *table_at(m, m->slot[t], k, other);
}

double model_interference_excess(const model_interference *m, uint32_t self, uint16_t t,
                                 const uint32_t *others, const double *act, uint32_t n,
                                 bool *measured)
{
    if (n == 1) {
        double s = model_interference_measured(m, self, others[0], t);
        if (!isnan(s)) {
            if (measured)
                *measured = true;
            return act[0] * (1.0 / s - 1.0);
        }
    }
    if (measured)
        *measured = false;
    model_profile me, p;
    model_interference_profile(m, self, t, &me);
    double x = 0;
    for (uint32_t k = 0; k < n; k++) {
        model_interference_profile(m, others[k], t, &p);
        x += act[k] * p.press * mix_term(&m->C, me.u, p.u);
    }
    return me.sens * x;
}

/* ---- Loading ------------------------------------------------------------------------ */

enum { Q_TYPE, Q_A, Q_B, Q_SA, Q_SB, Q_N };
static const char *const pair_cols[Q_N] = {"gpu_type", "job_type_a", "job_type_b", "speed_a",
                                           "speed_b"};

static int intern_class(sim_intern *names, const csvin *in, const csvin_row *row, int32_t col,
                        const char *field, uint32_t *out, sim_diag *d)
{
    const char *s = model__field(row, col);
    if (!*s)
        return csvin_field_error(in, row, col, field, "a job type", d);
    uint32_t id = sim_intern_add(names, s, strlen(s), 0);
    if (id == SIM_INTERN_NONE)
        return sim_diag_set(d, SIM_ENOMEM, csvin_path(in), 0, 0, "out of memory");
    *out = id - 1;
    return SIM_OK;
}

static int load_pairs(const model_catalog *cat, sim_intern *names, const char *path, pair_rec **out,
                      uint32_t *n_out, sim_diag *d)
{
    csvin *in;
    int32_t ix[Q_N];
    int st = model__table_open(&in, path, pair_cols, Q_N, NULL,
                               "gpu_type,job_type_a,job_type_b,speed_a,speed_b", ix, NULL, d);
    if (st != SIM_OK)
        return st;
    pair_rec *rows = NULL;
    uint32_t n = 0, cap = 0;
    uint16_t types_seen[MODEL_EVAL_MAX_TYPES];
    uint32_t n_seen = 0;
    csvin_row row;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 512;
            pair_rec *p = sim_reallocarray(rows, cap, sizeof *p);
            if (!p) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                break;
            }
            rows = p;
        }
        pair_rec *r = &rows[n];
        const char *tn = model__field(&row, ix[Q_TYPE]);
        uint32_t t = sim_intern_find(model_catalog_names(cat), tn, strlen(tn));
        if (t == SIM_INTERN_NONE || t == 0) {
            char known[600], what[700];
            sim_intern_list(model_catalog_names(cat), ", ", known, sizeof known);
            snprintf(what, sizeof what, "a GPU type of the catalog (%s)", known);
            st = csvin_field_error(in, &row, ix[Q_TYPE], "gpu_type", what, d);
            break;
        }
        r->t = (uint16_t)t;
        bool known_type = false;
        for (uint32_t k = 0; k < n_seen; k++)
            known_type |= types_seen[k] == r->t;
        if (!known_type) {
            if (n_seen == MODEL_EVAL_MAX_TYPES) {
                st = sim_diag_set(d, SIM_ELIMIT, path, row.line, ix[Q_TYPE] + 1,
                                  "pairs measured on more than %d GPU types", MODEL_EVAL_MAX_TYPES);
                break;
            }
            types_seen[n_seen++] = r->t;
        }
        if ((st = intern_class(names, in, &row, ix[Q_A], "job_type_a", &r->a, d)) ||
            (st = intern_class(names, in, &row, ix[Q_B], "job_type_b", &r->b, d)) ||
            (st = csvin_double(in, &row, ix[Q_SA], "speed_a", 1e-6, 100, &r->sa, d)) ||
            (st = csvin_double(in, &row, ix[Q_SB], "speed_b", 1e-6, 100, &r->sb, d)))
            break;
        n++;
    }
    csvin_close(in);
    if (st < 0) {
        sim_free(rows);
        return st;
    }
    if (n == 0) {
        sim_free(rows);
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "the pair table has no row");
    }
    *out = rows;
    *n_out = n;
    return SIM_OK;
}

/* ---- Fitting ------------------------------------------------------------------------ */

typedef struct fit_ctx {
    model_interference *m;
    const pair_obs *obs;
    const uint32_t *by_key_start; /* CSR: observations involving class k on slot s */
    const uint32_t *by_key;       /* (key k * n_slots + s) */
    uint32_t k;                   /* class, type and parameter being fitted */
    uint16_t t;
    double *param;
    /* x of each observation of (k, t) as a function of the parameter v: affine in s
     * and p, and in w except for a class beside itself, where it is quadratic. So
     * x = a v^2 + b v + c exactly, from three evaluations. */
    uint32_t n_q;
    double *qa, *qb, *qc, *qy;
} fit_ctx;

static double predict_speed(const model_interference *m, const pair_obs *o)
{
    double ui[MODEL_RES_COUNT], uj[MODEL_RES_COUNT];
    mix(m, o->i, o->t, ui);
    mix(m, o->j, o->t, uj);
    double x = *sens_at(m, o->i, o->t) * *press_at(m, o->j, o->t) * mix_term(&m->C, ui, uj);
    return 1.0 / (1.0 + x);
}

static double quad_cost(double v, void *p)
{
    const fit_ctx *f = p;
    double cost = 0;
    for (uint32_t q = 0; q < f->n_q; q++) {
        double x = (f->qa[q] * v + f->qb[q]) * v + f->qc[q];
        double e = 1.0 / (1.0 + x) - f->qy[q];
        cost += e * e;
    }
    return cost;
}

static double excess_at(fit_ctx *f, const pair_obs *o, double v)
{
    *f->param = v;
    return 1.0 / predict_speed(f->m, o) - 1.0;
}

/* Fill the quadratic coefficients of the observations of (f->k, f->t) in *f->param. */
static void quad_setup(fit_ctx *f)
{
    uint32_t key = f->k * f->m->n_slots + (uint32_t)f->m->slot[f->t], n = 0;
    double keep = *f->param;
    for (uint32_t q = f->by_key_start[key]; q < f->by_key_start[key + 1]; q++, n++) {
        const pair_obs *o = &f->obs[f->by_key[q]];
        double x0 = excess_at(f, o, 0), xh = excess_at(f, o, 0.5), x1 = excess_at(f, o, 1);
        f->qa[n] = 2.0 * (x1 - 2.0 * xh + x0);
        f->qb[n] = x1 - x0 - f->qa[n];
        f->qc[n] = x0;
        f->qy[n] = o->speed;
    }
    f->n_q = n;
    *f->param = keep;
}

static int fit_contention(model_interference *m, const pair_obs *obs, uint32_t n)
{
    enum { P = MODEL_RES_COUNT * MODEL_RES_COUNT };
    gsl_matrix *X = gsl_matrix_alloc(n, P);
    gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *c = gsl_vector_alloc(P);
    int st = SIM_OK;
    if (!X || !y || !w || !c) {
        st = SIM_ENOMEM;
        goto out;
    }
    for (uint32_t q = 0; q < n; q++) {
        double ui[MODEL_RES_COUNT], uj[MODEL_RES_COUNT];
        mix(m, obs[q].i, obs[q].t, ui);
        mix(m, obs[q].j, obs[q].t, uj);
        double sp = *sens_at(m, obs[q].i, obs[q].t) * *press_at(m, obs[q].j, obs[q].t);
        for (int v = 0; v < MODEL_RES_COUNT; v++)
            for (int a = 0; a < MODEL_RES_COUNT; a++)
                gsl_matrix_set(X, q, (size_t)(v * MODEL_RES_COUNT + a), sp * ui[v] * uj[a]);
        double s = obs[q].speed;
        gsl_vector_set(y, q, 1.0 / s - 1.0);
        gsl_vector_set(w, q, s * s * s * s);
    }
    if ((st = model__nnls(X, y, w, c, NULL)) != SIM_OK)
        goto out;
    for (int v = 0; v < MODEL_RES_COUNT; v++)
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            m->C.c[v][a] = gsl_vector_get(c, (size_t)(v * MODEL_RES_COUNT + a));
out:
    gsl_vector_free(c);
    gsl_vector_free(w);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the fitted (non-NaN) entries of v; 0 when none. */
static double fitted_median(const model_interference *m, const double *v, double *scratch)
{
    uint32_t n = 0;
    for (size_t q = 0; q < (size_t)m->n_classes * SIM_MAX_GPU_TYPES; q++)
        if (!isnan(v[q]))
            scratch[n++] = v[q];
    if (!n)
        return 0;
    qsort(scratch, n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}

/* Scale s and p to a median of 1, moving the scale into C (x is unchanged). */
static void normalise(model_interference *m, double *scratch)
{
    double ms = fitted_median(m, m->sens, scratch), mp = fitted_median(m, m->press, scratch);
    if (!(ms > 0) || !(mp > 0))
        return;
    for (size_t q = 0; q < (size_t)m->n_classes * SIM_MAX_GPU_TYPES; q++) {
        m->sens[q] /= ms;
        m->press[q] /= mp;
    }
    for (int v = 0; v < MODEL_RES_COUNT; v++)
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            m->C.c[v][a] *= ms * mp;
}

/* Fit C, s and p on obs[0..n). */
static int fit(model_interference *m, const pair_obs *obs, uint32_t n)
{
    int st = SIM_OK;
    uint32_t K = m->n_classes, S = m->n_slots, nkeys = K * S;
    uint32_t *start = sim_calloc((size_t)nkeys + 1, sizeof *start);
    uint32_t *list = sim_calloc(2 * (size_t)n + 1, sizeof *list);
    uint32_t *fill = sim_calloc((size_t)nkeys + 1, sizeof *fill);
    double *scratch = sim_calloc((size_t)K * SIM_MAX_GPU_TYPES + 1, sizeof *scratch);
    size_t nq = 2 * (size_t)n + 1;
    double *quad = sim_calloc(4 * nq, sizeof *quad);
    if (!start || !list || !fill || !scratch || !quad) {
        st = SIM_ENOMEM;
        goto out;
    }
    for (uint32_t q = 0; q < n; q++) {
        uint32_t s = (uint32_t)m->slot[obs[q].t];
        start[obs[q].i * S + s + 1]++;
        if (obs[q].j != obs[q].i)
            start[obs[q].j * S + s + 1]++;
        for (int side = 0; side < 2; side++) {
            uint32_t k = side ? obs[q].j : obs[q].i;
            size_t at = (size_t)k * SIM_MAX_GPU_TYPES + obs[q].t;
            m->sens[at] = m->press[at] = 1.0;
            m->wfit[at] = m->w[at];
        }
    }
    for (uint32_t k = 0; k < nkeys; k++)
        start[k + 1] += start[k];
    for (uint32_t q = 0; q < n; q++) {
        uint32_t s = (uint32_t)m->slot[obs[q].t], ki = obs[q].i * S + s, kj = obs[q].j * S + s;
        list[start[ki] + fill[ki]++] = q;
        if (obs[q].j != obs[q].i)
            list[start[kj] + fill[kj]++] = q;
    }
    fit_ctx f = {.m = m,
                 .obs = obs,
                 .by_key_start = start,
                 .by_key = list,
                 .qa = quad,
                 .qb = quad + nq,
                 .qc = quad + 2 * nq,
                 .qy = quad + 3 * nq};
    for (int round = 0; round < FIT_ROUNDS; round++) {
        if ((st = fit_contention(m, obs, n)) != SIM_OK)
            goto out;
        for (uint32_t k = 0; k < K; k++)
            for (uint16_t t = 1; t < m->n_types; t++) {
                if (isnan(*sens_at(m, k, t)))
                    continue;
                f.k = k;
                f.t = t;
                for (int which = 0; which < 3; which++) {
                    f.param = which == 2 ? &m->wfit[(size_t)k * SIM_MAX_GPU_TYPES + t]
                              : which    ? press_at(m, k, t)
                                         : sens_at(m, k, t);
                    quad_setup(&f);
                    *f.param =
                        model__min1d(quad_cost, &f, 0.0, which == 2 ? 1.0 : SP_MAX, 40, NULL);
                }
            }
        normalise(m, scratch);
    }
    if ((st = fit_contention(m, obs, n)) != SIM_OK)
        goto out;
    normalise(m, scratch);
out:
    sim_free(quad);
    sim_free(scratch);
    sim_free(fill);
    sim_free(list);
    sim_free(start);
    return st;
}

/* Build a model from loaded pairs; only rows with keep[r] (NULL = all) are used. */
static int build(model_interference *m, const pair_rec *rows, uint32_t n_rows, const bool *keep)
{
    /* Throughput classes not in the pair table join as classes without a table entry. */
    for (uint32_t c = 0; c < model_throughput_class_count(m->tp); c++) {
        const char *name = model_throughput_class_name(m->tp, c);
        if (sim_intern_add(m->names, name, strlen(name), 0) == SIM_INTERN_NONE)
            return SIM_ENOMEM;
    }
    uint32_t K = m->n_classes = sim_intern_count(m->names) - 1;
    m->tp_class = sim_calloc(K ? K : 1, sizeof *m->tp_class);
    m->w = sim_calloc((size_t)(K ? K : 1) * SIM_MAX_GPU_TYPES, sizeof *m->w);
    m->sens = sim_calloc((size_t)(K ? K : 1) * SIM_MAX_GPU_TYPES, sizeof *m->sens);
    m->press = sim_calloc((size_t)(K ? K : 1) * SIM_MAX_GPU_TYPES, sizeof *m->press);
    m->wfit = sim_calloc((size_t)(K ? K : 1) * SIM_MAX_GPU_TYPES, sizeof *m->wfit);
    if (!m->tp_class || !m->w || !m->sens || !m->press || !m->wfit)
        return SIM_ENOMEM;
    for (uint16_t t = 1; t < m->n_types; t++)
        m->w_default[t] = model_throughput_compute_frac(m->tp, MODEL_CLASS_NONE, t);
    for (uint32_t k = 0; k < K; k++) {
        const char *name = model_interference_class_name(m, k);
        m->tp_class[k] = model_throughput_class_find(m->tp, name, strlen(name));
        for (uint16_t t = 0; t < SIM_MAX_GPU_TYPES; t++) {
            m->w[(size_t)k * SIM_MAX_GPU_TYPES + t] =
                t >= 1 && t < m->n_types ? model_throughput_compute_frac(m->tp, m->tp_class[k], t)
                                         : 0.5;
            *sens_at(m, k, t) = *press_at(m, k, t) = NAN;
            m->wfit[(size_t)k * SIM_MAX_GPU_TYPES + t] = NAN;
        }
    }
    for (int t = 0; t < SIM_MAX_GPU_TYPES; t++)
        m->slot[t] = -1;
    uint32_t n_obs = 0;
    for (uint32_t r = 0; r < n_rows; r++) {
        if (keep && !keep[r])
            continue;
        if (m->slot[rows[r].t] < 0)
            m->slot[rows[r].t] = (int)m->n_slots++;
        n_obs += rows[r].a == rows[r].b ? 1 : 2;
    }
    m->table = sim_calloc((size_t)(m->n_slots ? m->n_slots : 1) * K * K, sizeof *m->table);
    pair_obs *obs = sim_calloc(n_obs ? n_obs : 1, sizeof *obs);
    if (!m->table || !obs) {
        sim_free(obs);
        return SIM_ENOMEM;
    }
    for (size_t q = 0; q < (size_t)m->n_slots * K * K; q++)
        m->table[q] = NAN;
    uint32_t q = 0;
    for (uint32_t r = 0; r < n_rows; r++) {
        if (keep && !keep[r])
            continue;
        const pair_rec *p = &rows[r];
        *table_at(m, m->slot[p->t], p->a, p->b) = p->sa;
        *table_at(m, m->slot[p->t], p->b, p->a) = p->sb;
        obs[q++] = (pair_obs){.t = p->t, .i = p->a, .j = p->b, .speed = p->sa};
        if (p->a != p->b)
            obs[q++] = (pair_obs){.t = p->t, .i = p->b, .j = p->a, .speed = p->sb};
    }
    int st = n_obs ? fit(m, obs, n_obs) : SIM_OK;
    sim_free(obs);
    return st;
}

static model_interference *alloc_model(const model_catalog *cat, const model_throughput *tp)
{
    model_interference *m = sim_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cat = cat;
    m->tp = tp;
    m->n_types = model_catalog_count(cat);
    m->use_table = true;
    if (!(m->names = sim_intern_create(true))) {
        sim_free(m);
        return NULL;
    }
    return m;
}

int model_interference_create(model_interference **out, const model_catalog *cat,
                              const model_throughput *tp, const char *pairs_path, sim_diag *d)
{
    *out = NULL;
    model_interference *m = alloc_model(cat, tp);
    if (!m)
        return sim_diag_set(d, SIM_ENOMEM, pairs_path, 0, 0, "out of memory");
    pair_rec *rows = NULL;
    uint32_t n = 0;
    int st = load_pairs(cat, m->names, pairs_path, &rows, &n, d);
    if (st != SIM_OK)
        goto out_free;
    if ((st = build(m, rows, n, NULL)) != SIM_OK) {
        st = sim_diag_set(d, st, pairs_path, 0, 0, "the interference fit failed (%s)",
                          sim_strerror(st));
        goto out_free;
    }
    sim_free(rows);
    *out = m;
    return SIM_OK;
out_free:
    sim_free(rows);
    model_interference_destroy(m);
    return st;
}

int model_interference_create_default(model_interference **out, const model_catalog *cat,
                                      const model_throughput *tp, sim_diag *d)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/models/data/gavel_pairs.csv", model_data_dir());
    return model_interference_create(out, cat, tp, path, d);
}

void model_interference_destroy(model_interference *m)
{
    if (!m)
        return;
    sim_intern_destroy(m->names);
    sim_free(m->tp_class);
    sim_free(m->w);
    sim_free(m->sens);
    sim_free(m->press);
    sim_free(m->wfit);
    sim_free(m->table);
    sim_free(m);
}

/* ---- Evaluation --------------------------------------------------------------------- */

typedef struct acc {
    uint32_t n;
    double sum_y, sum_y2, ae, se, ae_none, se_none, ae_slice, se_slice;
} acc;

static void acc_add(acc *a, double y, double pred)
{
    a->n++;
    a->sum_y += y;
    a->sum_y2 += y * y;
    a->ae += fabs(pred - y);
    a->se += (pred - y) * (pred - y);
    a->ae_none += fabs(1.0 - y);
    a->se_none += (1.0 - y) * (1.0 - y);
    a->ae_slice += fabs(0.5 - y);
    a->se_slice += (0.5 - y) * (0.5 - y);
}

static void acc_stats(const acc *a, model_ifit_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = a->n;
    if (!a->n)
        return;
    double n = a->n, sst = a->sum_y2 - a->sum_y * a->sum_y / n;
    s->mae = a->ae / n;
    s->rmse = sqrt(a->se / n);
    s->mae_none = a->ae_none / n;
    s->mae_slice = a->ae_slice / n;
    s->r2 = sst > 0 ? 1.0 - a->se / sst : 0;
    s->r2_none = sst > 0 ? 1.0 - a->se_none / sst : 0;
    s->r2_slice = sst > 0 ? 1.0 - a->se_slice / sst : 0;
}

int model_interference_eval(const model_catalog *cat, const model_throughput *tp,
                            const char *pairs_path, uint64_t seed, double test_frac,
                            model_ifit_eval *out, sim_diag *d)
{
    memset(out, 0, sizeof *out);
    if (!(test_frac > 0 && test_frac < 1))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "the test fraction must be in (0, 1)");
    model_interference *m = alloc_model(cat, tp);
    if (!m)
        return sim_diag_set(d, SIM_ENOMEM, pairs_path, 0, 0, "out of memory");
    pair_rec *rows = NULL;
    bool *keep = NULL;
    size_t *perm = NULL;
    gsl_rng *rng = NULL;
    uint32_t n = 0;
    int st = load_pairs(cat, m->names, pairs_path, &rows, &n, d);
    if (st != SIM_OK)
        goto out;
    keep = sim_calloc(n, sizeof *keep);
    perm = sim_calloc(n, sizeof *perm);
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!keep || !perm || !rng) {
        st = sim_diag_set(d, SIM_ENOMEM, pairs_path, 0, 0, "out of memory");
        goto out;
    }
    gsl_rng_set(rng, (unsigned long)seed);
    for (uint32_t r = 0; r < n; r++)
        perm[r] = r;
    gsl_ran_shuffle(rng, perm, n, sizeof *perm);
    uint32_t n_test = (uint32_t)ceil(test_frac * n);
    if (n_test >= n)
        n_test = n - 1;
    for (uint32_t r = n_test; r < n; r++)
        keep[perm[r]] = true;
    if ((st = build(m, rows, n, keep)) != SIM_OK) {
        st = sim_diag_set(d, st, pairs_path, 0, 0, "the interference fit failed (%s)",
                          sim_strerror(st));
        goto out;
    }
    out->C = m->C;
    out->train_pairs = n - n_test;
    out->test_pairs = n_test;
    acc all = {0}, per[MODEL_EVAL_MAX_TYPES] = {{0}};
    double train_ae = 0;
    uint32_t train_n = 0;
    for (uint32_t r = 0; r < n; r++) {
        const pair_rec *p = &rows[r];
        uint32_t slot = 0;
        while (slot < out->n_types && out->type[slot] != p->t)
            slot++;
        if (slot == out->n_types)
            out->type[out->n_types++] = p->t;
        for (int side = 0; side < (p->a == p->b ? 1 : 2); side++) {
            uint32_t self = side ? p->b : p->a, other = side ? p->a : p->b;
            double y = side ? p->sb : p->sa;
            model_profile pi, pj;
            double one = 1.0;
            model_interference_profile(m, self, p->t, &pi);
            model_interference_profile(m, other, p->t, &pj);
            double pred = 1.0 / (1.0 + model_contention_excess(&m->C, &pi, &pj, &one, 1));
            if (keep[r]) {
                train_ae += fabs(pred - y);
                train_n++;
            } else {
                acc_add(&all, y, pred);
                acc_add(&per[slot], y, pred);
            }
        }
    }
    out->train_mae = train_n ? train_ae / train_n : 0;
    acc_stats(&all, &out->all);
    for (uint32_t s = 0; s < out->n_types; s++)
        acc_stats(&per[s], &out->per_type[s]);
out:
    gsl_rng_free(rng);
    sim_free(perm);
    sim_free(keep);
    sim_free(rows);
    model_interference_destroy(m);
    return st;
}
