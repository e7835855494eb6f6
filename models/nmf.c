/*
 * nmf.c: multiplicative-update NMF on a CSR matrix (Lee & Seung 2000; see nmf.h).
 * Dense k x k and k x cols products use GSL BLAS on matrix views of the workspace; the
 * sparse products X H^T and W^T X are plain loops over the stored values. A ratio whose
 * denominator is 0 sets the factor to 0: then either the factor is 0 already or its
 * numerator is 0 too (every term is a product of non-negative factors).
 */
#include "models/nmf.h"

#include "base/alloc.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <string.h>

struct model_nmf {
    uint32_t max_rows, max_cols, k;
    uint32_t rows; /* rows of W in use */
    uint32_t cols; /* columns in use (H is k x cols, contiguous) */
    /* Row-major buffers from sim_calloc, used through GSL matrix views. */
    double *W;    /* max_rows x k */
    double *H;    /* k x cols */
    double *WtW;  /* k x k */
    double *HHt;  /* k x k, kept current for transform */
    double *WtX;  /* k x cols */
    double *WtWH; /* k x cols */
    double *XHt;  /* max_rows x k */
    double *WHHt; /* max_rows x k */
};

static gsl_matrix_view mat(double *a, uint32_t rows, uint32_t cols)
{
    return gsl_matrix_view_array(a, rows, cols);
}

int model_nmf_create(model_nmf **out, uint32_t max_rows, uint32_t cols, uint32_t k)
{
    *out = NULL;
    if (max_rows < 1 || cols < 1 || k < 1 || k > 64)
        return SIM_EINVAL;
    model_nmf *m = sim_calloc(1, sizeof *m);
    if (!m)
        return SIM_ENOMEM;
    m->max_rows = max_rows;
    m->max_cols = m->cols = cols;
    m->k = k;
    size_t rk, kc;
    if (!sim_mul_ok(max_rows, k, &rk) || !sim_mul_ok(k, cols, &kc)) {
        sim_free(m);
        return SIM_EINVAL;
    }
    m->W = sim_calloc(rk, sizeof *m->W);
    m->H = sim_calloc(kc, sizeof *m->H);
    m->WtW = sim_calloc((size_t)k * k, sizeof *m->WtW);
    m->HHt = sim_calloc((size_t)k * k, sizeof *m->HHt);
    m->WtX = sim_calloc(kc, sizeof *m->WtX);
    m->WtWH = sim_calloc(kc, sizeof *m->WtWH);
    m->XHt = sim_calloc(rk, sizeof *m->XHt);
    m->WHHt = sim_calloc(rk, sizeof *m->WHHt);
    if (!m->W || !m->H || !m->WtW || !m->HHt || !m->WtX || !m->WtWH || !m->XHt || !m->WHHt) {
        model_nmf_destroy(m);
        return SIM_ENOMEM;
    }
    *out = m;
    return SIM_OK;
}

void model_nmf_destroy(model_nmf *m)
{
    if (!m)
        return;
    sim_free(m->W);
    sim_free(m->H);
    sim_free(m->WtW);
    sim_free(m->HHt);
    sim_free(m->WtX);
    sim_free(m->WtWH);
    sim_free(m->XHt);
    sim_free(m->WHHt);
    sim_free(m);
}

uint32_t model_nmf_rank(const model_nmf *m)
{
    return m->k;
}

double model_nmf_w(const model_nmf *m, uint32_t i, uint32_t c)
{
    return m->W[(size_t)i * m->k + c];
}

double model_nmf_h(const model_nmf *m, uint32_t c, uint32_t j)
{
    return m->H[(size_t)c * m->cols + j];
}

static bool csr_ok(const model_nmf *m, const model_csr *X)
{
    return X->rows >= 1 && X->rows <= m->max_rows && X->cols == m->cols;
}

/* C = op(A) op(B) through GSL BLAS on views of the row-major buffers. */
static int gemm(CBLAS_TRANSPOSE_t ta, CBLAS_TRANSPOSE_t tb, double *a, uint32_t ar, uint32_t ac,
                double *b, uint32_t br, uint32_t bc, double *c, uint32_t cr, uint32_t cc)
{
    gsl_matrix_view A = mat(a, ar, ac), B = mat(b, br, bc), C = mat(c, cr, cc);
    return gsl_blas_dgemm(ta, tb, 1.0, &A.matrix, &B.matrix, 0.0, &C.matrix);
}

/* HHt = H H^T. */
static int update_hht(model_nmf *m)
{
    return gemm(CblasNoTrans, CblasTrans, m->H, m->k, m->cols, m->H, m->k, m->cols, m->HHt, m->k,
                m->k);
}

/* WtW = W^T W over the rows in use. */
static int update_wtw(model_nmf *m)
{
    return gemm(CblasTrans, CblasNoTrans, m->W, m->rows, m->k, m->W, m->rows, m->k, m->WtW, m->k,
                m->k);
}

int model_nmf_init_random(model_nmf *m, const model_csr *X, gsl_rng *rng)
{
    if (X->rows < 1 || X->rows > m->max_rows || X->cols < 1 || X->cols > m->max_cols)
        return SIM_EINVAL;
    m->cols = X->cols;
    double sum = 0;
    uint32_t nnz = X->row_ptr[X->rows];
    for (uint32_t e = 0; e < nnz; e++)
        sum += X->val[e];
    double mean = sum / ((double)X->rows * (double)X->cols);
    double scale = sqrt(mean / (double)m->k);
    if (!(scale > 0))
        scale = 1e-3;
    m->rows = X->rows;
    for (size_t i = 0; i < (size_t)X->rows * m->k; i++)
        m->W[i] = scale * gsl_rng_uniform(rng);
    for (size_t i = 0; i < (size_t)m->k * m->cols; i++)
        m->H[i] = scale * gsl_rng_uniform(rng);
    return update_hht(m) == GSL_SUCCESS ? SIM_OK : SIM_EINVAL;
}

int model_nmf_set(model_nmf *m, uint32_t rows, const double *W, const double *H)
{
    if (rows < 1 || rows > m->max_rows)
        return SIM_EINVAL;
    m->cols = m->max_cols;
    for (size_t i = 0; i < (size_t)rows * m->k; i++)
        if (!(W[i] >= 0) || !isfinite(W[i]))
            return SIM_EINVAL;
    for (size_t i = 0; i < (size_t)m->k * m->cols; i++)
        if (!(H[i] >= 0) || !isfinite(H[i]))
            return SIM_EINVAL;
    m->rows = rows;
    memcpy(m->W, W, (size_t)rows * m->k * sizeof *W);
    memcpy(m->H, H, (size_t)m->k * m->cols * sizeof *H);
    return update_hht(m) == GSL_SUCCESS ? SIM_OK : SIM_EINVAL;
}

double model_nmf_error(model_nmf *m, const model_csr *X)
{
    if (!csr_ok(m, X) || X->rows != m->rows)
        return NAN;
    uint32_t k = m->k;
    if (update_wtw(m) || update_hht(m))
        return NAN;
    /* ||X||^2 - 2 <X, WH> + <W^T W, H H^T>, the middle term over stored values only. */
    double xx = 0, xwh = 0, tr = 0;
    for (uint32_t i = 0; i < X->rows; i++) {
        const double *wi = m->W + (size_t)i * k;
        for (uint32_t e = X->row_ptr[i]; e < X->row_ptr[i + 1]; e++) {
            double x = X->val[e], wh = 0;
            for (uint32_t c = 0; c < k; c++)
                wh += wi[c] * m->H[(size_t)c * m->cols + X->col[e]];
            xx += x * x;
            xwh += x * wh;
        }
    }
    for (uint32_t a = 0; a < k * k; a++)
        tr += m->WtW[a] * m->HHt[a];
    double err = xx - 2 * xwh + tr;
    return err > 0 ? err : 0;
}

static inline double ratio(double num, double den)
{
    return den > 0 ? num / den : 0;
}

int model_nmf_fit(model_nmf *m, const model_csr *X, uint32_t iters, double *err)
{
    if (!csr_ok(m, X) || X->rows != m->rows)
        return SIM_EINVAL;
    uint32_t k = m->k, n = X->rows, cols = m->cols;
    if (err)
        err[0] = model_nmf_error(m, X);
    for (uint32_t it = 0; it < iters; it++) {
        /* W <- W .* (X H^T) ./ (W H H^T). */
        if (update_hht(m) ||
            gemm(CblasNoTrans, CblasNoTrans, m->W, n, k, m->HHt, k, k, m->WHHt, n, k))
            return SIM_EINVAL;
        memset(m->XHt, 0, (size_t)n * k * sizeof *m->XHt);
        for (uint32_t i = 0; i < n; i++) {
            double *xi = m->XHt + (size_t)i * k;
            for (uint32_t e = X->row_ptr[i]; e < X->row_ptr[i + 1]; e++)
                for (uint32_t c = 0; c < k; c++)
                    xi[c] += X->val[e] * m->H[(size_t)c * cols + X->col[e]];
        }
        for (size_t a = 0; a < (size_t)n * k; a++)
            m->W[a] *= ratio(m->XHt[a], m->WHHt[a]);
        /* H <- H .* (W^T X) ./ (W^T W H). */
        if (update_wtw(m) ||
            gemm(CblasNoTrans, CblasNoTrans, m->WtW, k, k, m->H, k, cols, m->WtWH, k, cols))
            return SIM_EINVAL;
        memset(m->WtX, 0, (size_t)k * cols * sizeof *m->WtX);
        for (uint32_t i = 0; i < n; i++) {
            const double *wi = m->W + (size_t)i * k;
            for (uint32_t e = X->row_ptr[i]; e < X->row_ptr[i + 1]; e++)
                for (uint32_t c = 0; c < k; c++)
                    m->WtX[(size_t)c * cols + X->col[e]] += wi[c] * X->val[e];
        }
        for (size_t a = 0; a < (size_t)k * cols; a++)
            m->H[a] *= ratio(m->WtX[a], m->WtWH[a]);
        if (err)
            err[it + 1] = model_nmf_error(m, X);
    }
    return update_hht(m) == GSL_SUCCESS ? SIM_OK : SIM_EINVAL;
}

void model_nmf_transform(const model_nmf *m, const uint32_t *col, const double *val, uint32_t nnz,
                         uint32_t iters, double *w)
{
    uint32_t k = m->k;
    double hx[64], den[64];
    for (uint32_t c = 0; c < k; c++) {
        hx[c] = 0;
        for (uint32_t e = 0; e < nnz; e++)
            hx[c] += m->H[(size_t)c * m->cols + col[e]] * val[e];
        w[c] = nnz ? 1.0 : 0.0;
    }
    for (uint32_t it = 0; it < iters && nnz; it++) {
        for (uint32_t c = 0; c < k; c++) {
            den[c] = 0;
            for (uint32_t d = 0; d < k; d++)
                den[c] += m->HHt[(size_t)c * k + d] * w[d];
        }
        for (uint32_t c = 0; c < k; c++)
            w[c] *= ratio(hx[c], den[c]);
    }
}
