/*
 * fit.c: non-negative least squares (Lawson-Hanson active set) and a bracketed 1-D
 * minimiser (grid then GSL Brent) for the models/ fits. Both are deterministic: ties
 * go to the lowest index or the first grid point.
 */
#include "models/fit_int.h"

#include "base/alloc.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multifit.h>

#include <math.h>

/* Unconstrained weighted least squares on the columns in `passive` (others 0). */
static int solve_passive(const gsl_matrix *A, const gsl_vector *b, const bool *passive,
                         gsl_vector *s)
{
    size_t n = A->size1, p = A->size2, k = 0;
    for (size_t j = 0; j < p; j++)
        k += passive[j];
    gsl_vector_set_zero(s);
    if (k == 0)
        return SIM_OK;
    gsl_matrix *Xs = gsl_matrix_alloc(n, k);
    gsl_vector *cs = gsl_vector_alloc(k);
    gsl_matrix *cov = gsl_matrix_alloc(k, k);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, k);
    int st = SIM_OK;
    if (!Xs || !cs || !cov || !ws) {
        st = SIM_ENOMEM;
        goto out;
    }
    for (size_t j = 0, c = 0; j < p; j++) {
        if (!passive[j])
            continue;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(Xs, i, c, gsl_matrix_get(A, i, j));
        c++;
    }
    double chisq;
    if (gsl_multifit_linear(Xs, b, cs, cov, &chisq, ws) != GSL_SUCCESS) {
        st = SIM_EINVAL;
        goto out;
    }
    for (size_t j = 0, c = 0; j < p; j++)
        if (passive[j])
            gsl_vector_set(s, j, gsl_vector_get(cs, c++));
out:
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(cov);
    gsl_vector_free(cs);
    gsl_matrix_free(Xs);
    return st;
}

int model__nnls(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, gsl_vector *c,
                double *chisq)
{
    size_t n = X->size1, p = X->size2;
    gsl_matrix *A = gsl_matrix_alloc(n, p);
    gsl_vector *b = gsl_vector_alloc(n), *s = gsl_vector_alloc(p), *r = gsl_vector_alloc(n);
    gsl_vector *g = gsl_vector_alloc(p);
    bool *passive = sim_calloc(p, sizeof *passive);
    int st = SIM_OK;
    if (!A || !b || !s || !r || !g || !passive) {
        st = SIM_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        double sw = w ? sqrt(gsl_vector_get(w, i)) : 1.0;
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(A, i, j, sw * gsl_matrix_get(X, i, j));
        gsl_vector_set(b, i, sw * gsl_vector_get(y, i));
    }
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < p; j++)
            scale = fmax(scale, fabs(gsl_matrix_get(A, i, j)));
    double tol = 1e-12 * fmax(scale, 1.0) * (double)(n + p);
    gsl_vector_set_zero(c);
    for (size_t outer = 0; outer < 3 * p + 3; outer++) {
        /* Gradient of the objective's negative half: A^T (b - A c). */
        gsl_vector_memcpy(r, b);
        gsl_blas_dgemv(CblasNoTrans, -1.0, A, c, 1.0, r);
        gsl_blas_dgemv(CblasTrans, 1.0, A, r, 0.0, g);
        size_t t = p;
        double best = tol;
        for (size_t j = 0; j < p; j++)
            if (!passive[j] && gsl_vector_get(g, j) > best) {
                best = gsl_vector_get(g, j);
                t = j;
            }
        if (t == p)
            break;
        passive[t] = true;
        for (size_t inner = 0; inner < 3 * p + 3; inner++) {
            if ((st = solve_passive(A, b, passive, s)) != SIM_OK)
                goto out;
            bool feasible = true;
            for (size_t j = 0; j < p; j++)
                if (passive[j] && gsl_vector_get(s, j) <= 0)
                    feasible = false;
            if (feasible) {
                gsl_vector_memcpy(c, s);
                break;
            }
            double alpha = INFINITY;
            for (size_t j = 0; j < p; j++) {
                double cj = gsl_vector_get(c, j), sj = gsl_vector_get(s, j);
                if (passive[j] && sj <= 0 && cj - sj > 0)
                    alpha = fmin(alpha, cj / (cj - sj));
            }
            if (!isfinite(alpha))
                alpha = 0;
            for (size_t j = 0; j < p; j++) {
                double cj = gsl_vector_get(c, j);
                double v = cj + alpha * (gsl_vector_get(s, j) - cj);
                if (passive[j] && v <= 1e-15 * fmax(1.0, fabs(cj))) {
                    passive[j] = false;
                    v = 0;
                }
                gsl_vector_set(c, j, passive[j] ? v : 0);
            }
        }
    }
    if (chisq) {
        gsl_vector_memcpy(r, b);
        gsl_blas_dgemv(CblasNoTrans, -1.0, A, c, 1.0, r);
        double d;
        gsl_blas_ddot(r, r, &d);
        *chisq = d;
    }
out:
    sim_free(passive);
    gsl_vector_free(g);
    gsl_vector_free(r);
    gsl_vector_free(s);
    gsl_vector_free(b);
    gsl_matrix_free(A);
    return st;
}

typedef struct min_ctx {
    double (*f)(double, void *);
    void *ctx;
} min_ctx;

static double min_trampoline(double x, void *p)
{
    const min_ctx *m = p;
    return m->f(x, m->ctx);
}

double model__min1d(double (*f)(double x, void *ctx), void *ctx, double lo, double hi,
                    unsigned grid, double *fmin)
{
    if (grid < 2)
        grid = 2;
    double step = (hi - lo) / grid, bx = lo, bf = f(lo, ctx);
    unsigned bi = 0;
    for (unsigned i = 1; i <= grid; i++) {
        double x = i == grid ? hi : lo + step * i, v = f(x, ctx);
        if (v < bf) {
            bf = v;
            bx = x;
            bi = i;
        }
    }
    /* Brent needs f(mid) below both ends; refine only in an interior bracket. */
    if (bi > 0 && bi < grid) {
        double a = lo + step * (bi - 1), b = bi + 1 == grid ? hi : lo + step * (bi + 1);
        double fa = f(a, ctx), fb = f(b, ctx);
        if (bf < fa && bf < fb) {
            min_ctx m = {f, ctx};
            gsl_function F = {.function = min_trampoline, .params = &m};
            gsl_min_fminimizer *s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
            if (s &&
                gsl_min_fminimizer_set_with_values(s, &F, bx, bf, a, fa, b, fb) == GSL_SUCCESS) {
                for (int it = 0; it < 100; it++) {
                    if (gsl_min_fminimizer_iterate(s) != GSL_SUCCESS)
                        break;
                    double lo2 = gsl_min_fminimizer_x_lower(s), hi2 = gsl_min_fminimizer_x_upper(s);
                    if (gsl_min_test_interval(lo2, hi2, 1e-10, 1e-9) == GSL_SUCCESS)
                        break;
                }
                double x = gsl_min_fminimizer_x_minimum(s), v = f(x, ctx);
                if (v < bf) {
                    bf = v;
                    bx = x;
                }
            }
            gsl_min_fminimizer_free(s);
        }
    }
    if (fmin)
        *fmin = bf;
    return bx;
}
