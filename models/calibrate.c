/*
 * calibrate.c: reads a microbenchmark CSV and fits the contention matrix by
 * non-negative least squares (see calibrate.h). Two passes over the file: the first
 * validates every row and collects the modes, the second builds the design matrix of
 * the chosen mode.
 */
#include "models/calibrate.h"

#include "models/fit_int.h"
#include "models/table_int.h"

#include <math.h>
#include <string.h>

enum { B_MODE, B_KERNEL, B_RES, B_PARTNER, B_PRES, B_SLOW, B_BACKEND, B_DEVICE, B_N };
static const char *const bench_cols[B_N] = {
    "mode", "kernel", "resource", "partner", "partner_resource", "slowdown", "backend", "device"};
static const bool bench_required[B_N] = {true, true, true, true, true, true, false, false};
static const char bench_expected[] =
    "backend,device,driver,mode,kernel,resource,partner,partner_resource,unit,solo_rate,"
    "corun_rate,slowdown,trials,spread";

#define MAX_MODES 16
/* Bytes of a mode name, its NUL included (model_calib.mode). */
#define MODE_MAX 32

typedef struct row_vals {
    model_resource v, a;
    double slowdown;
} row_vals;

static int parse_row(const csvin *in, const csvin_row *row, const int32_t *ix, row_vals *r,
                     sim_diag *d)
{
    static const char what[] = "a resource: sm, mem, l2 or pcie";
    if (!model_resource_parse(model__field(row, ix[B_RES]), &r->v))
        return csvin_field_error(in, row, ix[B_RES], "resource", what, d);
    if (!model_resource_parse(model__field(row, ix[B_PRES]), &r->a))
        return csvin_field_error(in, row, ix[B_PRES], "partner_resource", what, d);
    if (csvin_empty(row, ix[B_MODE]) || strlen(model__field(row, ix[B_MODE])) >= MODE_MAX)
        return csvin_field_error(in, row, ix[B_MODE], "mode",
                                 "a sharing mode of 1 to 31 characters", d);
    return csvin_double(in, row, ix[B_SLOW], "slowdown", 1e-6, 1e6, &r->slowdown, d);
}

int model_calibrate(const char *path, const char *mode, model_calib *out, sim_diag *d)
{
    memset(out, 0, sizeof *out);
    csvin *in;
    int32_t ix[B_N];
    uint32_t nh;
    int st =
        model__table_open(&in, path, bench_cols, B_N, bench_required, bench_expected, ix, &nh, d);
    if (st != SIM_OK)
        return st;
    char modes[MAX_MODES][MODE_MAX];
    uint32_t n_modes = 0, n_rows = 0;
    csvin_row row;
    while ((st = model__table_next(in, &row, nh, d)) == 1) {
        row_vals r;
        if ((st = parse_row(in, &row, ix, &r, d)) != SIM_OK)
            break;
        const char *m = model__field(&row, ix[B_MODE]);
        bool seen = false;
        for (uint32_t k = 0; k < n_modes; k++)
            seen |= strcmp(modes[k], m) == 0;
        if (!seen && n_modes < MAX_MODES)
            snprintf(modes[n_modes++], sizeof modes[0], "%s", m);
        if (!mode || strcmp(mode, m) == 0)
            n_rows++;
    }
    csvin_close(in);
    if (st < 0)
        return st;
    char list[600] = "";
    for (uint32_t k = 0; k < n_modes; k++) {
        size_t o = strlen(list);
        snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "", modes[k]);
    }
    if (n_modes == 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "no measurement row");
    if (!mode && n_modes > 1)
        return sim_diag_set(d, SIM_EINVAL, path, 0, 0,
                            "the file has several sharing modes (%s): choose one with --mode",
                            list);
    if (n_rows == 0)
        return sim_diag_set(d, SIM_EINVAL, path, 0, 0, "no row of mode '%s' (modes: %s)", mode,
                            list);
    snprintf(out->mode, sizeof out->mode, "%s", mode ? mode : modes[0]);

    enum { P = MODEL_RES_COUNT * MODEL_RES_COUNT };
    gsl_matrix *X = gsl_matrix_calloc(n_rows, P);
    gsl_vector *y = gsl_vector_calloc(n_rows), *c = gsl_vector_alloc(P);
    if (!X || !y || !c) {
        st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
        goto out;
    }
    if ((st = model__table_open(&in, path, bench_cols, B_N, bench_required, bench_expected, ix, &nh,
                                d)) != SIM_OK)
        goto out;
    uint32_t q = 0;
    while ((st = model__table_next(in, &row, nh, d)) == 1 && q < n_rows) {
        if (strcmp(model__field(&row, ix[B_MODE]), out->mode) != 0)
            continue;
        row_vals r;
        if ((st = parse_row(in, &row, ix, &r, d)) != SIM_OK)
            break;
        if (q == 0) {
            snprintf(out->backend, sizeof out->backend, "%s", model__field(&row, ix[B_BACKEND]));
            snprintf(out->device, sizeof out->device, "%s", model__field(&row, ix[B_DEVICE]));
        }
        gsl_matrix_set(X, q, (size_t)(r.v * MODEL_RES_COUNT + r.a), 1.0);
        gsl_vector_set(y, q, r.slowdown - 1.0);
        out->measured[r.v][r.a] = true;
        q++;
    }
    csvin_close(in);
    if (st < 0)
        goto out;
    if (q != n_rows) { /* the file changed between the two reads */
        st = sim_diag_set(d, SIM_EIO, path, 0, 0, "the file changed while it was read");
        goto out;
    }
    double chisq = 0;
    if ((st = model__nnls(X, y, NULL, c, &chisq)) != SIM_OK) {
        st = sim_diag_set(d, st, path, 0, 0, "the least-squares fit failed");
        goto out;
    }
    for (int v = 0; v < MODEL_RES_COUNT; v++)
        for (int a = 0; a < MODEL_RES_COUNT; a++)
            out->C.c[v][a] = gsl_vector_get(c, (size_t)(v * MODEL_RES_COUNT + a));
    out->rows = n_rows;
    out->rmse = sqrt(chisq / n_rows);
    st = SIM_OK;
out:
    gsl_vector_free(c);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    return st;
}
