/*
 * test_mlp.c: the MLP regressor. It learns a known nonlinear function,
 *   y = sin(2 x1) + x2^2 - 0.5 x1 x2,  x in [-1.5, 1.5]^2  (y spans about -1.6 .. 3.9),
 * to a held-out MAE below 0.06 with Adam + MSE and below 0.12 with SGD + momentum + MAE
 * loss, where the linear-regression baseline stays above 0.45 (the function is not
 * linear); training is deterministic for a seed; save/load gives bit-identical
 * predictions; prediction equals GSL's gsl_blas_dgemv forward pass bit for bit; bad model
 * files give exact diagnostics; every allocation failure of create and load returns
 * SIM_ENOMEM without a leak.
 */
#include "models/baseline.h"
#include "models/mlp.h"
#include "base/alloc.h"

#include "check.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#define N_TRAIN 1200
#define N_TEST 400

static double target(const double *x)
{
    return sin(2 * x[0]) + x[1] * x[1] - 0.5 * x[0] * x[1];
}

static void make_data(gsl_rng *r, double *X, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        X[2 * i] = 3 * gsl_rng_uniform(r) - 1.5;
        X[2 * i + 1] = 3 * gsl_rng_uniform(r) - 1.5;
        y[i] = target(X + 2 * i);
    }
}

static double test_mae(model_mlp *m, const double *X, const double *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += fabs(model_mlp_predict(m, X + 2 * i) - y[i]);
    return s / (double)n;
}

/* Train m (again, from fresh weights) on X, y. */
static void train_into(model_mlp *m, const double *X, const double *y, model_optim optim,
                       model_loss loss, uint64_t seed)
{
    sim_diag d = {0};
    model_mlp_train_opts o;
    model_mlp_train_defaults(&o);
    o.optim = optim;
    o.loss = loss;
    o.seed = seed;
    o.max_epochs = 300;
    o.batch = 16;
    if (optim == MODEL_OPTIM_SGD)
        o.lr = 0.01;
    else
        o.lr = 0.003;
    model_mlp_report rep;
    int st = model_mlp_train(m, X, y, N_TRAIN, &o, &rep, &d);
    CHECK(st == SIM_OK);
    if (st != SIM_OK)
        fprintf(stderr, "train: %s\n", d.msg);
    CHECK(rep.n_train + rep.n_val == N_TRAIN);
    CHECK(rep.n_val == N_TRAIN / 5);
    CHECK(rep.best_epoch >= 1 && rep.best_epoch <= rep.epochs);
}

static model_mlp *train(const double *X, const double *y, model_optim optim, model_loss loss,
                        uint64_t seed)
{
    static const uint32_t hidden[] = {24, 24};
    static const char *const names[] = {"x1", "x2"};
    model_mlp *m = NULL;
    sim_diag d = {0};
    CHECK(model_mlp_create(&m, 2, names, NULL, hidden, 2, MODEL_ACT_TANH, "y", MODEL_XFORM_NONE,
                           &d) == SIM_OK);
    if (m)
        train_into(m, X, y, optim, loss, seed);
    return m;
}

static void learns(void)
{
    static double X[2 * N_TRAIN], y[N_TRAIN], Xt[2 * N_TEST], yt[N_TEST];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    make_data(r, X, y, N_TRAIN);
    make_data(r, Xt, yt, N_TEST);
    gsl_rng_free(r);

    model_mlp *adam = train(X, y, MODEL_OPTIM_ADAM, MODEL_LOSS_MSE, 7);
    double mae_adam = test_mae(adam, Xt, yt, N_TEST);
    printf("adam+mse held-out MAE %.4f\n", mae_adam);
    CHECK(mae_adam < 0.06);

    model_mlp *sgd = train(X, y, MODEL_OPTIM_SGD, MODEL_LOSS_MAE, 7);
    double mae_sgd = test_mae(sgd, Xt, yt, N_TEST);
    printf("sgd+momentum+mae held-out MAE %.4f\n", mae_sgd);
    CHECK(mae_sgd < 0.12);

    model_linreg lr;
    sim_diag d = {0};
    CHECK(model_linreg_fit(&lr, X, y, N_TRAIN, 2, NULL, MODEL_XFORM_NONE, &d) == SIM_OK);
    double pred[N_TEST];
    for (size_t i = 0; i < N_TEST; i++)
        pred[i] = model_linreg_predict(&lr, Xt + 2 * i);
    model_metrics lm, mm;
    model_metrics_compute(pred, yt, N_TEST, &lm);
    for (size_t i = 0; i < N_TEST; i++)
        pred[i] = model_mlp_predict(adam, Xt + 2 * i);
    model_metrics_compute(pred, yt, N_TEST, &mm);
    printf("linear baseline MAE %.4f R2 %.3f; mlp R2 %.4f\n", lm.mae, lm.r2, mm.r2);
    CHECK(lm.mae > 0.45);
    CHECK(mm.r2 > 0.99);
    CHECK(fabs(mm.mae - mae_adam) < 1e-12);

    /* Same seed, same network; another seed, another one. */
    model_mlp *again = train(X, y, MODEL_OPTIM_ADAM, MODEL_LOSS_MSE, 7);
    model_mlp *other = train(X, y, MODEL_OPTIM_ADAM, MODEL_LOSS_MSE, 8);
    int same = 0, differ = 0;
    for (size_t i = 0; i < N_TEST; i++) {
        same += model_mlp_predict(again, Xt + 2 * i) == model_mlp_predict(adam, Xt + 2 * i);
        differ += model_mlp_predict(other, Xt + 2 * i) != model_mlp_predict(adam, Xt + 2 * i);
    }
    CHECK(same == N_TEST);
    CHECK(differ > N_TEST / 2);
    /* Trained again after it predicted, a network predicts with its new weights: the
     * seed-8 one trained with seed 7 is the seed-7 one. */
    train_into(other, X, y, MODEL_OPTIM_ADAM, MODEL_LOSS_MSE, 7);
    same = 0;
    for (size_t i = 0; i < N_TEST; i++)
        same += model_mlp_predict(other, Xt + 2 * i) == model_mlp_predict(adam, Xt + 2 * i);
    CHECK(same == N_TEST);

    /* Save and load: the very same predictions, names and metadata. */
    CHECK(model_mlp_set_meta(adam, "kind", "test") == SIM_OK);
    CHECK(model_mlp_set_meta(adam, "kind", "util") == SIM_OK);
    CHECK(model_mlp_set_meta(adam, "bad key", "x") == SIM_EINVAL);
    CHECK(model_mlp_save(adam, "mlp_roundtrip.mlp", &d) == SIM_OK);
    model_mlp *back = NULL;
    CHECK(model_mlp_load(&back, "mlp_roundtrip.mlp", &d) == SIM_OK);
    if (back) {
        int identical = 0;
        for (size_t i = 0; i < N_TEST; i++)
            identical += model_mlp_predict(back, Xt + 2 * i) == model_mlp_predict(adam, Xt + 2 * i);
        CHECK(identical == N_TEST);
        CHECK(model_mlp_inputs(back) == 2);
        CHECK_STR(model_mlp_input_name(back, 1), "x2");
        CHECK_STR(model_mlp_target_name(back), "y");
        CHECK_STR(model_mlp_meta(back, "kind"), "util");
        CHECK(model_mlp_meta(back, "absent") == NULL);
        /* A second save of the loaded model is byte-identical to the first. */
        CHECK(model_mlp_save(back, "mlp_roundtrip2.mlp", &d) == SIM_OK);
        char *a = check_slurp("mlp_roundtrip.mlp", NULL),
             *b = check_slurp("mlp_roundtrip2.mlp", NULL);
        CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    model_mlp_destroy(back);
    model_mlp_destroy(adam);
    model_mlp_destroy(sgd);
    model_mlp_destroy(again);
    model_mlp_destroy(other);
}

static void expect_load_error(const char *name, const char *text, const char *want)
{
    check_put(name, text);
    model_mlp *m = NULL;
    sim_diag d = {0};
    int st = model_mlp_load(&m, name, &d);
    CHECK(st == SIM_EPARSE);
    CHECK(m == NULL);
    char buf[2048];
    CHECK_STR(sim_diag_format(&d, buf, sizeof buf), want);
}

#define HEAD "clustersim-mlp 1\ninputs 2\ninput a none 0 1\ninput b log1p 0.5 2\n"
#define TARGET "target y none 1 2\nactivation relu\n"

static void bad_files(void)
{
    /* A well-formed file with no hidden layer: y = 1 + 2 * (0.5 a + 0.25 (log1p(b) - 0.5) / 2 +
     * 0.125). */
    check_put("mlp_good.mlp", HEAD TARGET "layers 1\nlayer 1 2\nw 0.5 0.25\nb 0.125\nend\n");
    model_mlp *m = NULL;
    sim_diag d = {0};
    CHECK(model_mlp_load(&m, "mlp_good.mlp", &d) == SIM_OK);
    if (m) {
        double x[2] = {2.385, 3.0};
        double want = 1 + 2 * (0.5 * 2.385 + 0.25 * (log1p(3.0) - 0.5) / 2 + 0.125);
        CHECK_NEAR(model_mlp_predict(m, x), want, 1e-12);
    }
    model_mlp_destroy(m);

    expect_load_error("mlp_bad1.mlp", "job_id,submit_time\n",
                      "mlp_bad1.mlp:1:1: error: expected 'clustersim-mlp' (the first line of a "
                      "clustersim model file), got \"job_id,submit_time\"");
    expect_load_error("mlp_bad2.mlp", "clustersim-mlp 2\n",
                      "mlp_bad2.mlp:1:2: error: expected format version 1, got \"2\"");
    expect_load_error("mlp_bad3.mlp", HEAD "target y none 1 2\n",
                      "mlp_bad3.mlp:6: error: expected 'activation' (relu or tanh), got the end "
                      "of the file");
    expect_load_error("mlp_bad4.mlp", HEAD TARGET "layers 1\nlayer 1 2\nw 0.5 abc\nb 0.125\nend\n",
                      "mlp_bad4.mlp:9:3: error: expected a finite number, got \"abc\"");
    expect_load_error("mlp_bad5.mlp", HEAD TARGET "layers 1\nlayer 1 3\nw 0.5 1 1\nb 0\nend\n",
                      "mlp_bad5.mlp:8:3: error: expected an integer 2..2, got \"3\"");
    expect_load_error("mlp_bad6.mlp", HEAD TARGET "layers 1\nlayer 1 2\nw 0.5 0.25\nb 0.125\n",
                      "mlp_bad6.mlp:11: error: expected 'meta' or 'end', got the end of the file "
                      "(truncated?)");
    expect_load_error("mlp_bad7.mlp", "clustersim-mlp 1\ninputs 2\ninput a none 0 0\n",
                      "mlp_bad7.mlp:3:5: error: expected a positive standard deviation, got \"0\"");
    expect_load_error("mlp_bad8.mlp", HEAD TARGET "layers 1\nlayer 1 2\nw 0.5\nb 0.125\nend\n",
                      "mlp_bad8.mlp:9:3: error: expected 2 fields after 'w' (one weight row), got "
                      "the end of the line");
    expect_load_error(
        "mlp_bad9.mlp", HEAD "target y cube 1 2\n",
        "mlp_bad9.mlp:5:3: error: expected a transform (none or log1p), got \"cube\"");

    d.msg[0] = '\0';
    CHECK(model_mlp_load(&m, "mlp_absent.mlp", &d) == SIM_EIO);
    CHECK(strstr(d.msg, "cannot open") != NULL);
}

static void bad_training(void)
{
    model_mlp *m = NULL;
    sim_diag d = {0};
    static const uint32_t hidden[] = {4};
    model_xform xf[2] = {MODEL_XFORM_NONE, MODEL_XFORM_LOG1P};
    CHECK(model_mlp_create(&m, 2, NULL, xf, hidden, 1, MODEL_ACT_RELU, NULL, MODEL_XFORM_NONE,
                           &d) == SIM_OK);
    model_mlp_train_opts o;
    model_mlp_train_defaults(&o);
    double X[6] = {1, 2, 3, -4, 5, 6}, y[3] = {1, 2, 3};
    CHECK(model_mlp_train(m, X, y, 1, &o, NULL, &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "training needs at least 2 rows, got 1");
    CHECK(model_mlp_train(m, X, y, 3, &o, NULL, &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "row 2: input 'x1' is -4; expected a finite non-negative number");
    X[3] = 4;
    y[1] = NAN;
    CHECK(model_mlp_train(m, X, y, 3, &o, NULL, &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "row 2: target 'y' is nan; expected a finite number");
    model_mlp_destroy(m);
    static const uint32_t too_wide[] = {MODEL_MLP_MAX_WIDTH + 1};
    CHECK(model_mlp_create(&m, 2, NULL, NULL, too_wide, 1, MODEL_ACT_RELU, NULL, MODEL_XFORM_NONE,
                           &d) == SIM_EINVAL);
    CHECK_STR(d.msg, "hidden layer 1 has 1025 units; expected 1..1024");
}

static void fault_injection(void)
{
    static const uint32_t hidden[] = {3};
    int64_t base = sim_alloc_live();
    int enomem = 0, ok = 0;
    for (uint64_t k = 1; k <= 8; k++) {
        model_mlp *m = NULL;
        sim_diag d = {0};
        sim_alloc_fail_after(k);
        int st = model_mlp_create(&m, 2, NULL, NULL, hidden, 1, MODEL_ACT_RELU, NULL,
                                  MODEL_XFORM_NONE, &d);
        sim_alloc_fail_after(0);
        enomem += st == SIM_ENOMEM;
        ok += st == SIM_OK;
        model_mlp_destroy(m);
        CHECK(sim_alloc_live() == base);
    }
    CHECK(enomem >= 1 && ok >= 1);
    enomem = ok = 0;
    for (uint64_t k = 1; k <= 8; k++) {
        model_mlp *m = NULL;
        sim_diag d = {0};
        sim_alloc_fail_after(k);
        int st = model_mlp_load(&m, "mlp_good.mlp", &d);
        sim_alloc_fail_after(0);
        enomem += st == SIM_ENOMEM;
        ok += st == SIM_OK;
        CHECK(st == SIM_OK || st == SIM_ENOMEM);
        model_mlp_destroy(m);
        CHECK(sim_alloc_live() == base);
    }
    CHECK(enomem >= 2 && ok >= 1);
}

/* Prediction forms each layer's product in its own loop; it must equal GSL's
 * gsl_blas_dgemv bit for bit, for widths below, at and past multiples of the sixteen and
 * thirty-two rows it takes at a time (thirty-two where the CPU has AVX2), with either
 * activation. Random weights of mixed sizes go through a model
 * file (%.17g round-trips them), and the pass is formed again here with GSL. */
static void same_as_gsl(void)
{
    static const uint32_t widths[][4] = {{3, 1, 0, 0},   {5, 8, 1, 0},    {7, 13, 1, 0},
                                         {2, 16, 9, 1},  {11, 64, 32, 1}, {4, 1, 17, 1},
                                         {6, 48, 40, 1}, {9, 97, 33, 1}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    uint32_t compared = 0, differ = 0;
    for (size_t c = 0; c < sizeof widths / sizeof *widths; c++) {
        const uint32_t *w = widths[c];
        uint32_t L = w[3] ? 3 : w[2] ? 2 : 1, n_in = w[0];
        bool relu = c % 2;
        gsl_matrix *W[3] = {0};
        gsl_vector *b[3] = {0};
        FILE *f = fopen("mlp_gemv.mlp", "w");
        CHECK(f != NULL);
        if (!f)
            break;
        fprintf(f, "clustersim-mlp 1\ninputs %u\n", n_in);
        for (uint32_t i = 0; i < n_in; i++)
            fprintf(f, "input x%u none 0 1\n", i);
        fprintf(f, "target y none 0 1\nactivation %s\nlayers %u\n", relu ? "relu" : "tanh", L);
        for (uint32_t l = 0; l < L; l++) {
            uint32_t rows = w[l + 1], cols = w[l];
            W[l] = gsl_matrix_alloc(rows, cols);
            b[l] = gsl_vector_alloc(rows);
            fprintf(f, "layer %u %u\n", rows, cols);
            for (uint32_t i = 0; i < rows; i++) {
                fputc('w', f);
                for (uint32_t j = 0; j < cols; j++) {
                    /* Magnitudes from 1e-3 to 1e3, so that the order of the additions
                     * shows in the last bits. */
                    double v = (gsl_rng_uniform(r) - 0.5) * pow(10, 6 * gsl_rng_uniform(r) - 3);
                    gsl_matrix_set(W[l], i, j, v);
                    fprintf(f, " %.17g", v);
                }
                fputc('\n', f);
            }
            fputc('b', f);
            for (uint32_t i = 0; i < rows; i++) {
                double v = gsl_rng_uniform(r) - 0.5;
                gsl_vector_set(b[l], i, v);
                fprintf(f, " %.17g", v);
            }
            fputc('\n', f);
        }
        fprintf(f, "end\n");
        fclose(f);
        model_mlp *m = NULL;
        sim_diag d = {0};
        CHECK(model_mlp_load(&m, "mlp_gemv.mlp", &d) == SIM_OK);
        for (int t = 0; m && t < 50; t++) {
            double x[16];
            gsl_vector *h = gsl_vector_alloc(n_in);
            for (uint32_t i = 0; i < n_in; i++) {
                x[i] = 4 * gsl_rng_uniform(r) - 2;
                gsl_vector_set(h, i, x[i]);
            }
            for (uint32_t l = 0; l < L; l++) {
                gsl_vector *next = gsl_vector_alloc(b[l]->size);
                gsl_vector_memcpy(next, b[l]);
                gsl_blas_dgemv(CblasNoTrans, 1.0, W[l], h, 1.0, next);
                if (l + 1 < L)
                    for (size_t k = 0; k < next->size; k++) {
                        double z = gsl_vector_get(next, k);
                        gsl_vector_set(next, k, relu ? (z > 0 ? z : 0) : tanh(z));
                    }
                gsl_vector_free(h);
                h = next;
            }
            double want = gsl_vector_get(h, 0) * 1.0 + 0.0, got = model_mlp_predict(m, x);
            gsl_vector_free(h);
            compared++;
            differ += memcmp(&want, &got, sizeof want) != 0;
        }
        model_mlp_destroy(m);
        for (uint32_t l = 0; l < L; l++) {
            gsl_matrix_free(W[l]);
            gsl_vector_free(b[l]);
        }
    }
    gsl_rng_free(r);
    CHECK(compared == 50 * sizeof widths / sizeof *widths);
    CHECK(differ == 0);
}

int main(void)
{
    gsl_set_error_handler_off();
    learns();
    same_as_gsl();
    bad_files();
    bad_training();
    fault_injection();
    return check_done();
}
