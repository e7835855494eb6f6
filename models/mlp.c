/*
 * mlp.c: a fully connected regressor trained by back-propagation (Rumelhart, Hinton &
 * Williams, Nature 323, 1986) with Adam (Kingma & Ba, ICLR 2015) or SGD with momentum.
 * Mini-batches are row-major matrices; every product of training is a gsl_blas_dgemm,
 * and prediction forms GSL's gsl_blas_dgemv product in its own loop (gemv_rows).
 * Invariant: W[l] is width[l+1] x width[l], b[l] has width[l+1] entries, width[0] = n_in
 * and width[n_layers] = 1; inputs and target are transformed then standardised with the
 * statistics stored in the model.
 */
#include "models/mlp.h"

#include "base/outfile.h"
#include "base/alloc.h"
#include "base/csvin.h"

#include <errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MLP_AVX2 1 /* a kernel for CPUs with AVX2, chosen when the program runs */
#endif

#define NAME_MAX_LEN 64

struct model_mlp {
    uint32_t n_in, n_layers;
    uint32_t width[MODEL_MLP_MAX_LAYERS + 1];
    model_act act;
    gsl_matrix *W[MODEL_MLP_MAX_LAYERS];
    gsl_vector *b[MODEL_MLP_MAX_LAYERS];
    char names[MODEL_MLP_MAX_INPUTS][NAME_MAX_LEN];
    model_xform in_xf[MODEL_MLP_MAX_INPUTS];
    double x_mean[MODEL_MLP_MAX_INPUTS], x_std[MODEL_MLP_MAX_INPUTS];
    char target[NAME_MAX_LEN];
    model_xform y_xf;
    double y_mean, y_std;
    gsl_vector *h[MODEL_MLP_MAX_LAYERS + 1]; /* prediction scratch, one per layer */
    /* W[l] transposed (width[l] x width[l+1], row-major), for prediction; stale after
     * the weights change (training, loading) until the next prediction. */
    double *Wt[MODEL_MLP_MAX_LAYERS];
    bool wt_stale;
    uint32_t n_meta;
    char meta_key[MODEL_MLP_MAX_META][NAME_MAX_LEN], meta_val[MODEL_MLP_MAX_META][NAME_MAX_LEN];
};

static const char *const act_names[] = {"relu", "tanh", NULL};
static const char *const xf_names[] = {"none", "log1p", NULL};

void model_mlp_train_defaults(model_mlp_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->optim = MODEL_OPTIM_ADAM;
    o->loss = MODEL_LOSS_MSE;
    o->max_epochs = 400;
    o->batch = 32;
    o->lr = 1e-3;
    o->momentum = 0.9;
    o->l2 = 0;
    o->val_frac = 0.2;
    o->patience = 30;
    o->seed = 1;
}

void model_mlp_destroy(model_mlp *m)
{
    if (!m)
        return;
    for (uint32_t l = 0; l < MODEL_MLP_MAX_LAYERS; l++) {
        if (m->W[l])
            gsl_matrix_free(m->W[l]);
        if (m->b[l])
            gsl_vector_free(m->b[l]);
        sim_free(m->Wt[l]);
    }
    for (uint32_t l = 0; l <= MODEL_MLP_MAX_LAYERS; l++)
        if (m->h[l])
            gsl_vector_free(m->h[l]);
    sim_free(m);
}

static bool word_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return true;
}

int model_mlp_create(model_mlp **out, uint32_t n_in, const char *const *names,
                     const model_xform *in_xf, const uint32_t *hidden, uint32_t n_hidden,
                     model_act act, const char *target_name, model_xform target_xf, sim_diag *d)
{
    *out = NULL;
    if (n_in < 1 || n_in > MODEL_MLP_MAX_INPUTS || n_hidden + 1 > MODEL_MLP_MAX_LAYERS ||
        (act != MODEL_ACT_RELU && act != MODEL_ACT_TANH))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "a network needs 1..%d inputs and at most %d hidden layers",
                            MODEL_MLP_MAX_INPUTS, MODEL_MLP_MAX_LAYERS - 1);
    for (uint32_t l = 0; l < n_hidden; l++)
        if (hidden[l] < 1 || hidden[l] > MODEL_MLP_MAX_WIDTH)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "hidden layer %u has %u units; expected 1..%d", l + 1, hidden[l],
                                MODEL_MLP_MAX_WIDTH);
    if (target_name && !word_ok(target_name))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "invalid target name");
    model_mlp *m = sim_calloc(1, sizeof *m);
    if (!m)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    m->n_in = n_in;
    m->n_layers = n_hidden + 1;
    m->act = act;
    m->width[0] = n_in;
    for (uint32_t l = 0; l < n_hidden; l++)
        m->width[l + 1] = hidden[l];
    m->width[m->n_layers] = 1;
    for (uint32_t i = 0; i < n_in; i++) {
        if (names && names[i] && !word_ok(names[i])) {
            model_mlp_destroy(m);
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "invalid input name");
        }
        if (names && names[i])
            snprintf(m->names[i], NAME_MAX_LEN, "%s", names[i]);
        else
            snprintf(m->names[i], NAME_MAX_LEN, "x%u", i);
        m->in_xf[i] = in_xf ? in_xf[i] : MODEL_XFORM_NONE;
        m->x_mean[i] = 0;
        m->x_std[i] = 1;
    }
    snprintf(m->target, NAME_MAX_LEN, "%s", target_name ? target_name : "y");
    m->y_xf = target_xf;
    m->y_mean = 0;
    m->y_std = 1;
    /* GSL's allocators do not go through sim_malloc; GSL_ENOMEM is reported as NULL. */
    for (uint32_t l = 0; l < m->n_layers; l++) {
        m->W[l] = gsl_matrix_calloc(m->width[l + 1], m->width[l]);
        m->b[l] = gsl_vector_calloc(m->width[l + 1]);
        m->Wt[l] = sim_calloc((size_t)m->width[l + 1] * m->width[l], sizeof *m->Wt[l]);
        if (!m->W[l] || !m->b[l] || !m->Wt[l])
            goto out_nomem;
    }
    m->wt_stale = true;
    for (uint32_t l = 0; l <= m->n_layers; l++)
        if (!(m->h[l] = gsl_vector_calloc(m->width[l])))
            goto out_nomem;
    *out = m;
    return SIM_OK;
out_nomem:
    model_mlp_destroy(m);
    return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
}

uint32_t model_mlp_inputs(const model_mlp *m)
{
    return m->n_in;
}

const char *model_mlp_input_name(const model_mlp *m, uint32_t i)
{
    return i < m->n_in ? m->names[i] : "";
}

const char *model_mlp_target_name(const model_mlp *m)
{
    return m->target;
}

int model_mlp_set_meta(model_mlp *m, const char *key, const char *value)
{
    if (!word_ok(key) || !word_ok(value))
        return SIM_EINVAL;
    for (uint32_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta_key[i], key) == 0) {
            snprintf(m->meta_val[i], NAME_MAX_LEN, "%s", value);
            return SIM_OK;
        }
    if (m->n_meta >= MODEL_MLP_MAX_META)
        return SIM_ELIMIT;
    snprintf(m->meta_key[m->n_meta], NAME_MAX_LEN, "%s", key);
    snprintf(m->meta_val[m->n_meta], NAME_MAX_LEN, "%s", value);
    m->n_meta++;
    return SIM_OK;
}

const char *model_mlp_meta(const model_mlp *m, const char *key)
{
    for (uint32_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta_key[i], key) == 0)
            return m->meta_val[i];
    return NULL;
}

/* ---- Transforms ------------------------------------------------------------------- */

static double xf_apply(model_xform xf, double v)
{
    return xf == MODEL_XFORM_LOG1P ? log1p(v) : v;
}

static double xf_invert(model_xform xf, double v)
{
    return xf == MODEL_XFORM_LOG1P ? expm1(v) : v;
}

static double act_apply(model_act a, double z)
{
    return a == MODEL_ACT_RELU ? (z > 0 ? z : 0) : tanh(z);
}

/* ---- Prediction ------------------------------------------------------------------- */

/* y += W h, W rows x cols row-major (row stride ld; Wt its transpose, cols x rows): each
 * y[i] gains the sum of h[j] W[i][j] taken j = 0, 1, ... from 0, as gsl_blas_dgemv (GSL's
 * CBLAS) forms it, so the result is the same bit for bit. Sixteen rows at a time, each
 * its own chain of additions: a row's chain waits on each addition, sixteen chains do
 * not wait on each other, and the transpose gives a column's weights of those rows side
 * by side, for vector instructions (thirty-two where the CPU has AVX2: gemv_rows32).
 * No multiply-add is fused (the file is built with -ffp-contract=off). */
#if MLP_AVX2
/* gemv_rows' blocks of 32 rows from row *i on, four rows a register (eight registers),
 * each lane multiplying and adding as the scalar code does: the same sums as the
 * sixteen-row blocks, half the instructions. Only where the CPU has AVX2 (which does
 * not bring fused multiply-adds: those are another extension). */
__attribute__((target("avx2"))) static void
gemv_rows32(const double *Wt, uint32_t rows, uint32_t cols, const double *h, double *y, uint32_t *i)
{
    enum { R = 32 };
    for (; *i + R <= rows; *i += R) {
        __m256d t[R / 4];
        for (uint32_t k = 0; k < R / 4; k++)
            t[k] = _mm256_setzero_pd();
        for (uint32_t j = 0; j < cols; j++) {
            const double *w = Wt + (size_t)j * rows + *i;
            __m256d hj = _mm256_set1_pd(h[j]);
            for (uint32_t k = 0; k < R / 4; k++)
                t[k] = _mm256_add_pd(t[k], _mm256_mul_pd(hj, _mm256_loadu_pd(w + 4 * k)));
        }
        double sum[R];
        for (uint32_t k = 0; k < R / 4; k++)
            _mm256_storeu_pd(sum + 4 * k, t[k]);
        for (uint32_t r = 0; r < R; r++)
            y[*i + r] += sum[r];
    }
}
#endif

static void gemv_rows(const double *W, size_t ld, const double *Wt, uint32_t rows, uint32_t cols,
                      const double *h, double *y)
{
    enum { R = 16 };
    uint32_t i = 0;
#if MLP_AVX2
    if (rows >= 32 && __builtin_cpu_supports("avx2"))
        gemv_rows32(Wt, rows, cols, h, y, &i);
#endif
    for (; i + R <= rows; i += R) {
#if defined(__SSE2__)
        /* Two rows a register: each lane multiplies and adds as the scalar code does;
         * eight registers, so that eight additions wait at once. */
        __m128d t[R / 2];
        for (uint32_t k = 0; k < R / 2; k++)
            t[k] = _mm_setzero_pd();
        for (uint32_t j = 0; j < cols; j++) {
            const double *w = Wt + (size_t)j * rows + i;
            __m128d hj = _mm_set1_pd(h[j]);
            for (uint32_t k = 0; k < R / 2; k++)
                t[k] = _mm_add_pd(t[k], _mm_mul_pd(hj, _mm_loadu_pd(w + 2 * k)));
        }
        double sum[R];
        for (uint32_t k = 0; k < R / 2; k++)
            _mm_storeu_pd(sum + 2 * k, t[k]);
        for (uint32_t r = 0; r < R; r++)
            y[i + r] += sum[r];
#else
        double t[R] = {0};
        for (uint32_t j = 0; j < cols; j++) {
            const double *w = Wt + (size_t)j * rows + i;
            for (uint32_t r = 0; r < R; r++)
                t[r] += h[j] * w[r];
        }
        for (uint32_t r = 0; r < R; r++)
            y[i + r] += t[r];
#endif
    }
    for (; i < rows; i++) {
        double t = 0;
        const double *w = W + (size_t)i * ld;
        for (uint32_t j = 0; j < cols; j++)
            t += h[j] * w[j];
        y[i] += t;
    }
}

double model_mlp_predict(model_mlp *m, const double *x)
{
    /* The scratch vectors are contiguous (stride 1): index their data directly. */
    if (m->wt_stale) {
        for (uint32_t l = 0; l < m->n_layers; l++) {
            const gsl_matrix *W = m->W[l];
            for (size_t i = 0; i < W->size1; i++)
                for (size_t j = 0; j < W->size2; j++)
                    m->Wt[l][j * W->size1 + i] = W->data[i * W->tda + j];
        }
        m->wt_stale = false;
    }
    double *h0 = m->h[0]->data;
    for (uint32_t i = 0; i < m->n_in; i++)
        h0[i] = (xf_apply(m->in_xf[i], x[i]) - m->x_mean[i]) / m->x_std[i];
    for (uint32_t l = 0; l < m->n_layers; l++) {
        gsl_vector *next = m->h[l + 1];
        memcpy(next->data, m->b[l]->data, next->size * sizeof *next->data); /* stride 1 */
        const gsl_matrix *W = m->W[l];
        gemv_rows(W->data, W->tda, m->Wt[l], (uint32_t)W->size1, (uint32_t)W->size2, m->h[l]->data,
                  next->data);
        if (l + 1 < m->n_layers)
            for (size_t k = 0; k < next->size; k++)
                next->data[k] = act_apply(m->act, next->data[k]);
    }
    double z = gsl_vector_get(m->h[m->n_layers], 0);
    return xf_invert(m->y_xf, z * m->y_std + m->y_mean);
}

/* ---- Training ----------------------------------------------------------------------- */

/* Per-layer training state: activations, pre-activations and deltas of one mini-batch,
 * gradients, optimiser moments and the best weights seen. */
typedef struct train_ws {
    uint32_t L, B;
    gsl_matrix *A[MODEL_MLP_MAX_LAYERS + 1]; /* B x width[l] */
    gsl_matrix *Z[MODEL_MLP_MAX_LAYERS + 1];
    gsl_matrix *D[MODEL_MLP_MAX_LAYERS + 1];
    gsl_matrix *gW[MODEL_MLP_MAX_LAYERS], *mW[MODEL_MLP_MAX_LAYERS], *vW[MODEL_MLP_MAX_LAYERS];
    gsl_matrix *bestW[MODEL_MLP_MAX_LAYERS];
    gsl_vector *gb[MODEL_MLP_MAX_LAYERS], *mb[MODEL_MLP_MAX_LAYERS], *vb[MODEL_MLP_MAX_LAYERS];
    gsl_vector *bestb[MODEL_MLP_MAX_LAYERS];
} train_ws;

static void ws_free(train_ws *w)
{
    for (uint32_t l = 0; l <= MODEL_MLP_MAX_LAYERS; l++) {
        gsl_matrix *ms[3] = {w->A[l], w->Z[l], w->D[l]};
        for (int k = 0; k < 3; k++)
            if (ms[k])
                gsl_matrix_free(ms[k]);
    }
    for (uint32_t l = 0; l < MODEL_MLP_MAX_LAYERS; l++) {
        gsl_matrix *ms[4] = {w->gW[l], w->mW[l], w->vW[l], w->bestW[l]};
        gsl_vector *vs[4] = {w->gb[l], w->mb[l], w->vb[l], w->bestb[l]};
        for (int k = 0; k < 4; k++) {
            if (ms[k])
                gsl_matrix_free(ms[k]);
            if (vs[k])
                gsl_vector_free(vs[k]);
        }
    }
}

static int ws_alloc(train_ws *w, const model_mlp *m, uint32_t B)
{
    memset(w, 0, sizeof *w);
    w->L = m->n_layers;
    w->B = B;
    for (uint32_t l = 0; l <= w->L; l++) {
        if (!(w->A[l] = gsl_matrix_calloc(B, m->width[l])))
            return SIM_ENOMEM;
        if (l > 0 && (!(w->Z[l] = gsl_matrix_calloc(B, m->width[l])) ||
                      !(w->D[l] = gsl_matrix_calloc(B, m->width[l]))))
            return SIM_ENOMEM;
    }
    for (uint32_t l = 0; l < w->L; l++) {
        size_t r = m->width[l + 1], c = m->width[l];
        if (!(w->gW[l] = gsl_matrix_calloc(r, c)) || !(w->mW[l] = gsl_matrix_calloc(r, c)) ||
            !(w->vW[l] = gsl_matrix_calloc(r, c)) || !(w->bestW[l] = gsl_matrix_calloc(r, c)) ||
            !(w->gb[l] = gsl_vector_calloc(r)) || !(w->mb[l] = gsl_vector_calloc(r)) ||
            !(w->vb[l] = gsl_vector_calloc(r)) || !(w->bestb[l] = gsl_vector_calloc(r)))
            return SIM_ENOMEM;
    }
    return SIM_OK;
}

/* Forward pass of the first `rows` rows of A[0]; the output is column 0 of A[L]. */
static void forward(model_mlp *m, train_ws *w, size_t rows)
{
    for (uint32_t l = 1; l <= w->L; l++) {
        gsl_matrix_view a = gsl_matrix_submatrix(w->A[l - 1], 0, 0, rows, m->width[l - 1]);
        gsl_matrix_view z = gsl_matrix_submatrix(w->Z[l], 0, 0, rows, m->width[l]);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &a.matrix, m->W[l - 1], 0.0, &z.matrix);
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < m->width[l]; k++) {
                double v = gsl_matrix_get(w->Z[l], r, k) + gsl_vector_get(m->b[l - 1], k);
                gsl_matrix_set(w->Z[l], r, k, v);
                gsl_matrix_set(w->A[l], r, k, l < w->L ? act_apply(m->act, v) : v);
            }
    }
}

static double loss_of(model_loss loss, double err)
{
    return loss == MODEL_LOSS_MSE ? err * err : fabs(err);
}

/* Back-propagate the loss of rows 0..rows-1 against targets t into gW/gb. */
static void backward(model_mlp *m, train_ws *w, size_t rows, const double *t, model_loss loss,
                     double l2)
{
    uint32_t L = w->L;
    for (size_t r = 0; r < rows; r++) {
        double err = gsl_matrix_get(w->A[L], r, 0) - t[r];
        double g = loss == MODEL_LOSS_MSE ? 2 * err : (err > 0) - (err < 0);
        gsl_matrix_set(w->D[L], r, 0, g / (double)rows);
    }
    for (uint32_t l = L; l >= 1; l--) {
        gsl_matrix_view dl = gsl_matrix_submatrix(w->D[l], 0, 0, rows, m->width[l]);
        gsl_matrix_view ap = gsl_matrix_submatrix(w->A[l - 1], 0, 0, rows, m->width[l - 1]);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &dl.matrix, &ap.matrix, 0.0, w->gW[l - 1]);
        if (l2 > 0)
            for (size_t i = 0; i < m->W[l - 1]->size1; i++)
                for (size_t j = 0; j < m->W[l - 1]->size2; j++)
                    *gsl_matrix_ptr(w->gW[l - 1], i, j) += l2 * gsl_matrix_get(m->W[l - 1], i, j);
        for (size_t k = 0; k < m->width[l]; k++) {
            double s = 0;
            for (size_t r = 0; r < rows; r++)
                s += gsl_matrix_get(w->D[l], r, k);
            gsl_vector_set(w->gb[l - 1], k, s);
        }
        if (l == 1)
            break;
        gsl_matrix_view dp = gsl_matrix_submatrix(w->D[l - 1], 0, 0, rows, m->width[l - 1]);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &dl.matrix, m->W[l - 1], 0.0, &dp.matrix);
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < m->width[l - 1]; k++) {
                double der;
                if (m->act == MODEL_ACT_RELU) {
                    der = gsl_matrix_get(w->Z[l - 1], r, k) > 0 ? 1 : 0;
                } else {
                    double a = gsl_matrix_get(w->A[l - 1], r, k);
                    der = 1 - a * a;
                }
                *gsl_matrix_ptr(w->D[l - 1], r, k) *= der;
            }
    }
}

static void step_param(double *p, double g, double *mo, double *ve, const model_mlp_train_opts *o,
                       double c1, double c2)
{
    if (o->optim == MODEL_OPTIM_ADAM) {
        *mo = 0.9 * *mo + 0.1 * g;
        *ve = 0.999 * *ve + 0.001 * g * g;
        *p -= o->lr * (*mo / c1) / (sqrt(*ve / c2) + 1e-8);
    } else {
        *mo = o->momentum * *mo - o->lr * g;
        *p += *mo;
    }
}

static void update(model_mlp *m, train_ws *w, const model_mlp_train_opts *o, uint64_t t)
{
    double c1 = 1 - pow(0.9, (double)t), c2 = 1 - pow(0.999, (double)t);
    for (uint32_t l = 0; l < w->L; l++) {
        gsl_matrix *W = m->W[l];
        for (size_t i = 0; i < W->size1; i++) {
            for (size_t j = 0; j < W->size2; j++)
                step_param(gsl_matrix_ptr(W, i, j), gsl_matrix_get(w->gW[l], i, j),
                           gsl_matrix_ptr(w->mW[l], i, j), gsl_matrix_ptr(w->vW[l], i, j), o, c1,
                           c2);
            step_param(gsl_vector_ptr(m->b[l], i), gsl_vector_get(w->gb[l], i),
                       gsl_vector_ptr(w->mb[l], i), gsl_vector_ptr(w->vb[l], i), o, c1, c2);
        }
    }
}

/* Load rows idx[from .. from+rows) of the standardised data into A[0] and t. */
static void load_batch(train_ws *w, const double *Xs, const double *ys, uint32_t n_in,
                       const size_t *idx, size_t from, size_t rows, double *t)
{
    for (size_t r = 0; r < rows; r++) {
        size_t i = idx[from + r];
        for (uint32_t k = 0; k < n_in; k++)
            gsl_matrix_set(w->A[0], r, k, Xs[i * n_in + k]);
        t[r] = ys[i];
    }
}

/* Mean loss over rows idx[0..n). */
static double eval_loss(model_mlp *m, train_ws *w, const double *Xs, const double *ys,
                        const size_t *idx, size_t n, model_loss loss, double *t)
{
    double sum = 0;
    for (size_t from = 0; from < n; from += w->B) {
        size_t rows = n - from < w->B ? n - from : w->B;
        load_batch(w, Xs, ys, m->n_in, idx, from, rows, t);
        forward(m, w, rows);
        for (size_t r = 0; r < rows; r++)
            sum += loss_of(loss, gsl_matrix_get(w->A[w->L], r, 0) - t[r]);
    }
    return n ? sum / (double)n : 0;
}

static void keep_best(model_mlp *m, train_ws *w, bool restore)
{
    for (uint32_t l = 0; l < w->L; l++) {
        if (restore) {
            gsl_matrix_memcpy(m->W[l], w->bestW[l]);
            gsl_vector_memcpy(m->b[l], w->bestb[l]);
        } else {
            gsl_matrix_memcpy(w->bestW[l], m->W[l]);
            gsl_vector_memcpy(w->bestb[l], m->b[l]);
        }
    }
}

int model_mlp_train(model_mlp *m, const double *X, const double *y, size_t n,
                    const model_mlp_train_opts *o, model_mlp_report *rep, sim_diag *d)
{
    model_mlp_report r0 = {0};
    if (rep)
        *rep = r0;
    m->wt_stale = true; /* the weights change from here on */
    if (n < 2)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "training needs at least 2 rows, got %zu",
                            n);
    if (o->batch < 1 || !(o->lr > 0) || !(o->val_frac >= 0 && o->val_frac < 1) || o->max_epochs < 1)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "invalid training settings");
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < m->n_in; k++) {
            double v = X[i * m->n_in + k];
            if (!isfinite(v) || (m->in_xf[k] == MODEL_XFORM_LOG1P && v < 0))
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "row %zu: input '%s' is %g; expected a finite%s number", i + 1,
                                    m->names[k], v,
                                    m->in_xf[k] == MODEL_XFORM_LOG1P ? " non-negative" : "");
        }
        if (!isfinite(y[i]) || (m->y_xf == MODEL_XFORM_LOG1P && y[i] < 0))
            return sim_diag_set(
                d, SIM_EINVAL, NULL, 0, 0, "row %zu: target '%s' is %g; expected a finite%s number",
                i + 1, m->target, y[i], m->y_xf == MODEL_XFORM_LOG1P ? " non-negative" : "");
    }
    int st = SIM_ENOMEM;
    size_t bytes;
    double *Xs = NULL, *ys = NULL, *t = NULL;
    size_t *idx = NULL;
    train_ws w;
    memset(&w, 0, sizeof w);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng || !sim_mul_ok(n, m->n_in, &bytes))
        goto out;
    gsl_rng_set(rng, o->seed);
    Xs = sim_reallocarray(NULL, bytes, sizeof *Xs);
    ys = sim_reallocarray(NULL, n, sizeof *ys);
    idx = sim_reallocarray(NULL, n, sizeof *idx);
    uint32_t B = o->batch < n ? o->batch : (uint32_t)n;
    t = sim_reallocarray(NULL, B, sizeof *t);
    if (!Xs || !ys || !idx || !t || ws_alloc(&w, m, B) != SIM_OK)
        goto out;

    /* Split: a seeded permutation; its first n_val rows validate. */
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    gsl_ran_shuffle(rng, idx, n, sizeof *idx);
    size_t n_val = (size_t)llround(o->val_frac * (double)n);
    if (o->val_frac > 0 && n_val < 1)
        n_val = 1;
    if (n_val > n - 1)
        n_val = n - 1;
    size_t n_train = n - n_val;
    size_t *tr = idx + n_val, *va = idx;

    /* Standardisation from the training rows only. */
    for (uint32_t k = 0; k < m->n_in; k++) {
        double mean = 0, sq = 0;
        for (size_t a = 0; a < n_train; a++)
            mean += xf_apply(m->in_xf[k], X[tr[a] * m->n_in + k]);
        mean /= (double)n_train;
        for (size_t a = 0; a < n_train; a++) {
            double dv = xf_apply(m->in_xf[k], X[tr[a] * m->n_in + k]) - mean;
            sq += dv * dv;
        }
        double sd = sqrt(sq / (double)n_train);
        m->x_mean[k] = mean;
        m->x_std[k] = sd > 1e-12 ? sd : 1;
    }
    {
        double mean = 0, sq = 0;
        for (size_t a = 0; a < n_train; a++)
            mean += xf_apply(m->y_xf, y[tr[a]]);
        mean /= (double)n_train;
        for (size_t a = 0; a < n_train; a++) {
            double dv = xf_apply(m->y_xf, y[tr[a]]) - mean;
            sq += dv * dv;
        }
        double sd = sqrt(sq / (double)n_train);
        m->y_mean = mean;
        m->y_std = sd > 1e-12 ? sd : 1;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < m->n_in; k++)
            Xs[i * m->n_in + k] =
                (xf_apply(m->in_xf[k], X[i * m->n_in + k]) - m->x_mean[k]) / m->x_std[k];
        ys[i] = (xf_apply(m->y_xf, y[i]) - m->y_mean) / m->y_std;
    }

    /* He (ReLU) or Glorot (tanh) uniform initial weights, zero biases. */
    for (uint32_t l = 0; l < m->n_layers; l++) {
        double fin = m->width[l], fout = m->width[l + 1];
        double lim = m->act == MODEL_ACT_RELU ? sqrt(6.0 / fin) : sqrt(6.0 / (fin + fout));
        for (size_t i = 0; i < m->W[l]->size1; i++)
            for (size_t j = 0; j < m->W[l]->size2; j++)
                gsl_matrix_set(m->W[l], i, j, (2 * gsl_rng_uniform(rng) - 1) * lim);
        gsl_vector_set_zero(m->b[l]);
    }

    double best = INFINITY, best_train = INFINITY;
    uint32_t best_epoch = 0, epoch;
    uint64_t steps = 0;
    for (epoch = 1; epoch <= o->max_epochs; epoch++) {
        gsl_ran_shuffle(rng, tr, n_train, sizeof *tr);
        for (size_t from = 0; from < n_train; from += B) {
            size_t rows = n_train - from < B ? n_train - from : B;
            load_batch(&w, Xs, ys, m->n_in, tr, from, rows, t);
            forward(m, &w, rows);
            backward(m, &w, rows, t, o->loss, o->l2);
            update(m, &w, o, ++steps);
        }
        double tl = eval_loss(m, &w, Xs, ys, tr, n_train, o->loss, t);
        double vl = n_val ? eval_loss(m, &w, Xs, ys, va, n_val, o->loss, t) : tl;
        if (!isfinite(tl)) {
            st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                              "training diverged at epoch %u (loss %g); lower the learning rate",
                              epoch, tl);
            goto out;
        }
        if (vl < best) {
            best = vl;
            best_train = tl;
            best_epoch = epoch;
            keep_best(m, &w, false);
        } else if (epoch - best_epoch >= o->patience) {
            break;
        }
    }
    keep_best(m, &w, true);
    if (rep) {
        rep->epochs = epoch > o->max_epochs ? o->max_epochs : epoch;
        rep->best_epoch = best_epoch;
        rep->train_loss = best_train;
        rep->val_loss = best;
        rep->n_train = n_train;
        rep->n_val = n_val;
    }
    st = SIM_OK;
out:
    if (st == SIM_ENOMEM)
        sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    ws_free(&w);
    if (rng)
        gsl_rng_free(rng);
    sim_free(Xs);
    sim_free(ys);
    sim_free(idx);
    sim_free(t);
    return st;
}

/* ---- Save and load ------------------------------------------------------------------ */

int model_mlp_save(const model_mlp *m, const char *path, sim_diag *d)
{
    sim_outfile out;
    int st = sim_outfile_open(&out, path, d);
    if (st != SIM_OK)
        return st;
    FILE *f = sim_outfile_stream(&out, d);
    if (!f) {
        sim_outfile_close(&out, false, 0, NULL);
        return SIM_ENOMEM;
    }
    fprintf(f, "clustersim-mlp 1\n");
    fprintf(f, "inputs %u\n", m->n_in);
    for (uint32_t i = 0; i < m->n_in; i++)
        fprintf(f, "input %s %s %.17g %.17g\n", m->names[i], xf_names[m->in_xf[i]], m->x_mean[i],
                m->x_std[i]);
    fprintf(f, "target %s %s %.17g %.17g\n", m->target, xf_names[m->y_xf], m->y_mean, m->y_std);
    fprintf(f, "activation %s\n", act_names[m->act]);
    fprintf(f, "layers %u\n", m->n_layers);
    for (uint32_t l = 0; l < m->n_layers; l++) {
        fprintf(f, "layer %u %u\n", m->width[l + 1], m->width[l]);
        for (size_t i = 0; i < m->W[l]->size1; i++) {
            fputc('w', f);
            for (size_t j = 0; j < m->W[l]->size2; j++)
                fprintf(f, " %.17g", gsl_matrix_get(m->W[l], i, j));
            fputc('\n', f);
        }
        fputc('b', f);
        for (size_t i = 0; i < m->b[l]->size; i++)
            fprintf(f, " %.17g", gsl_vector_get(m->b[l], i));
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < m->n_meta; i++)
        fprintf(f, "meta %s %s\n", m->meta_key[i], m->meta_val[i]);
    fprintf(f, "end\n");
    return sim_outfile_close(&out, true, 0, d);
}

/* A line-oriented tokenizer with positions for messages. */
typedef struct reader {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap;
    long line;
    char *tok[MODEL_MLP_MAX_WIDTH + 2];
    uint32_t ntok;
    sim_diag *d;
} reader;

/* Read the next line and split it on spaces. 1 = a line, 0 = end of file, < 0 = error. */
static int next_line(reader *r)
{
    size_t len = 0;
    for (;;) {
        if (len + 2 >= r->cap) {
            size_t ncap = r->cap ? r->cap * 2 : 4096;
            if (ncap > (size_t)1 << 24)
                return sim_diag_set(r->d, SIM_EPARSE, r->path, r->line + 1, 0,
                                    "line longer than 16 MiB");
            char *nb = sim_reallocarray(r->buf, ncap, 1);
            if (!nb)
                return sim_diag_set(r->d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
            r->buf = nb;
            r->cap = ncap;
        }
        if (!fgets(r->buf + len, (int)(r->cap - len), r->f)) {
            if (ferror(r->f))
                return sim_diag_set(r->d, SIM_EIO, r->path, r->line + 1, 0, "read error");
            if (len == 0)
                return 0;
            break;
        }
        len += strlen(r->buf + len);
        if (len > 0 && r->buf[len - 1] == '\n')
            break;
    }
    r->line++;
    r->ntok = 0;
    char *s = r->buf;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            *s++ = '\0';
        if (!*s)
            break;
        if (r->ntok >= MODEL_MLP_MAX_WIDTH + 2)
            return sim_diag_set(r->d, SIM_EPARSE, r->path, r->line, (int)r->ntok + 1,
                                "more than %d fields on a line", MODEL_MLP_MAX_WIDTH + 1);
        r->tok[r->ntok++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            s++;
    }
    return 1;
}

static int expect(reader *r, const char *what, uint32_t field)
{
    char q[64];
    const char *got = field < r->ntok ? r->tok[field] : "";
    csvin_quote(got, strlen(got), q, sizeof q);
    return sim_diag_set(r->d, SIM_EPARSE, r->path, r->line, (int)field + 1, "expected %s, got %s%s",
                        what, field < r->ntok ? "" : "the end of the line",
                        field < r->ntok ? q : "");
}

/* Read a line that starts with `key` and has exactly n_fields fields after it. */
static int line_with(reader *r, const char *key, uint32_t n_fields, const char *what)
{
    int st = next_line(r);
    if (st < 0)
        return st;
    if (st == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "'%s' (%s)", key, what);
        return sim_diag_set(r->d, SIM_EPARSE, r->path, r->line + 1, 0,
                            "expected %s, got the end of the file", msg);
    }
    if (r->ntok == 0 || strcmp(r->tok[0], key) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "'%s' (%s)", key, what);
        return expect(r, msg, 0);
    }
    if (r->ntok != n_fields + 1) {
        char msg[160];
        snprintf(msg, sizeof msg, "%u fields after '%s' (%s)", n_fields, key, what);
        return expect(r, msg, r->ntok < n_fields + 1 ? r->ntok : n_fields + 1);
    }
    return SIM_OK;
}

static int tok_double(reader *r, uint32_t i, double *out)
{
    if (!csvin_parse_double(r->tok[i], strlen(r->tok[i]), out) || !isfinite(*out))
        return expect(r, "a finite number", i);
    return SIM_OK;
}

static int tok_u32(reader *r, uint32_t i, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    if (!csvin_parse_u64(r->tok[i], strlen(r->tok[i]), &v) || v < min || v > max) {
        char what[64];
        snprintf(what, sizeof what, "an integer %u..%u", min, max);
        return expect(r, what, i);
    }
    *out = (uint32_t)v;
    return SIM_OK;
}

static int tok_choice(reader *r, uint32_t i, const char *const *names, const char *what, int *out)
{
    for (int k = 0; names[k]; k++)
        if (strcmp(r->tok[i], names[k]) == 0) {
            *out = k;
            return SIM_OK;
        }
    return expect(r, what, i);
}

int model_mlp_load(model_mlp **out, const char *path, sim_diag *d)
{
    *out = NULL;
    reader r = {.path = path, .d = d};
    r.f = fopen(path, "r");
    if (!r.f)
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    model_mlp *m = NULL;
    char names[MODEL_MLP_MAX_INPUTS][NAME_MAX_LEN];
    const char *name_ptr[MODEL_MLP_MAX_INPUTS];
    model_xform xf[MODEL_MLP_MAX_INPUTS];
    double mean[MODEL_MLP_MAX_INPUTS], sd[MODEL_MLP_MAX_INPUTS];
    char target[NAME_MAX_LEN];
    model_xform yxf;
    double ymean, ysd;
    uint32_t n_in = 0, n_layers = 0, hidden[MODEL_MLP_MAX_LAYERS] = {0};
    int act = 0, k = 0;
    int st = line_with(&r, "clustersim-mlp", 1, "the first line of a clustersim model file");
    if (st != SIM_OK)
        goto out;
    if (strcmp(r.tok[1], "1") != 0) {
        st = expect(&r, "format version 1", 1);
        goto out;
    }
    if ((st = line_with(&r, "inputs", 1, "the number of inputs")) ||
        (st = tok_u32(&r, 1, 1, MODEL_MLP_MAX_INPUTS, &n_in)))
        goto out;
    for (uint32_t i = 0; i < n_in; i++) {
        if ((st = line_with(&r, "input", 4, "name, transform, mean, standard deviation")))
            goto out;
        if (!word_ok(r.tok[1])) {
            st = expect(&r, "an input name of at most 63 bytes", 1);
            goto out;
        }
        snprintf(names[i], NAME_MAX_LEN, "%s", r.tok[1]);
        name_ptr[i] = names[i];
        if ((st = tok_choice(&r, 2, xf_names, "a transform (none or log1p)", &k)) ||
            (st = tok_double(&r, 3, &mean[i])) || (st = tok_double(&r, 4, &sd[i])))
            goto out;
        xf[i] = (model_xform)k;
        if (!(sd[i] > 0)) {
            st = expect(&r, "a positive standard deviation", 4);
            goto out;
        }
    }
    if ((st = line_with(&r, "target", 4, "name, transform, mean, standard deviation")))
        goto out;
    if (!word_ok(r.tok[1])) {
        st = expect(&r, "a target name of at most 63 bytes", 1);
        goto out;
    }
    snprintf(target, sizeof target, "%s", r.tok[1]);
    if ((st = tok_choice(&r, 2, xf_names, "a transform (none or log1p)", &k)) ||
        (st = tok_double(&r, 3, &ymean)) || (st = tok_double(&r, 4, &ysd)))
        goto out;
    yxf = (model_xform)k;
    if (!(ysd > 0)) {
        st = expect(&r, "a positive standard deviation", 4);
        goto out;
    }
    if ((st = line_with(&r, "activation", 1, "relu or tanh")) ||
        (st = tok_choice(&r, 1, act_names, "an activation (relu or tanh)", &act)))
        goto out;
    if ((st = line_with(&r, "layers", 1, "the number of weight layers")) ||
        (st = tok_u32(&r, 1, 1, MODEL_MLP_MAX_LAYERS, &n_layers)))
        goto out;
    /* The layer shapes are read before the network exists, so read the whole body
     * into a second pass: remember where each layer starts by re-reading the file. */
    long body = ftell(r.f);
    long body_line = r.line;
    uint32_t prev = n_in;
    for (uint32_t l = 0; l < n_layers; l++) {
        uint32_t rows, cols;
        if ((st = line_with(&r, "layer", 2, "output and input widths")) ||
            (st = tok_u32(&r, 1, 1, MODEL_MLP_MAX_WIDTH, &rows)) ||
            (st = tok_u32(&r, 2, prev, prev, &cols)))
            goto out;
        if (l + 1 == n_layers && rows != 1) {
            st = expect(&r, "1 output in the last layer", 1);
            goto out;
        }
        if (l + 1 < n_layers)
            hidden[l] = rows;
        for (uint32_t i = 0; i <= rows; i++) {
            if ((st = next_line(&r)) <= 0) {
                if (st == 0)
                    st = sim_diag_set(d, SIM_EPARSE, path, r.line + 1, 0,
                                      "expected a weight row, got the end of the file");
                goto out;
            }
        }
        prev = rows;
    }
    if ((st = model_mlp_create(&m, n_in, name_ptr, xf, hidden, n_layers - 1, (model_act)act, target,
                               yxf, d)) != SIM_OK)
        goto out;
    for (uint32_t i = 0; i < n_in; i++) {
        m->x_mean[i] = mean[i];
        m->x_std[i] = sd[i];
    }
    m->y_mean = ymean;
    m->y_std = ysd;
    if (fseek(r.f, body, SEEK_SET) != 0) {
        st = sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot seek");
        goto out;
    }
    r.line = body_line;
    for (uint32_t l = 0; l < n_layers; l++) {
        if ((st = next_line(&r)) < 0)
            goto out;
        for (uint32_t i = 0; i < m->width[l + 1]; i++) {
            if ((st = line_with(&r, "w", m->width[l], "one weight row")))
                goto out;
            for (uint32_t j = 0; j < m->width[l]; j++) {
                double v;
                if ((st = tok_double(&r, j + 1, &v)))
                    goto out;
                gsl_matrix_set(m->W[l], i, j, v);
            }
        }
        if ((st = line_with(&r, "b", m->width[l + 1], "the biases")))
            goto out;
        for (uint32_t i = 0; i < m->width[l + 1]; i++) {
            double v;
            if ((st = tok_double(&r, i + 1, &v)))
                goto out;
            gsl_vector_set(m->b[l], i, v);
        }
    }
    m->wt_stale = true;
    for (;;) {
        if ((st = next_line(&r)) < 0)
            goto out;
        if (st == 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, r.line + 1, 0,
                              "expected 'meta' or 'end', got the end of the file (truncated?)");
            goto out;
        }
        if (r.ntok == 1 && strcmp(r.tok[0], "end") == 0)
            break;
        if (r.ntok != 3 || strcmp(r.tok[0], "meta") != 0) {
            st = expect(&r, "'meta KEY VALUE' or 'end'", 0);
            goto out;
        }
        int ms = model_mlp_set_meta(m, r.tok[1], r.tok[2]);
        if (ms != SIM_OK) {
            st = expect(&r, "at most 8 meta keys of at most 63 bytes", 1);
            goto out;
        }
    }
    st = SIM_OK;
out:
    fclose(r.f);
    sim_free(r.buf);
    if (st != SIM_OK) {
        model_mlp_destroy(m);
        return st;
    }
    *out = m;
    return SIM_OK;
}
