/*
 * predict_eval.c: the held-out evaluation of the demand predictors (`clustersim model
 * train|eval util|mem|time`): the rows held out by a seeded permutation, and the MLP's
 * error on them next to the mean and linear-regression baselines fitted on the others.
 */
#include "study/predict_eval.h"

#include "base/alloc.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

void study_split_free(study_split *s)
{
    sim_free(s->Xtr);
    sim_free(s->ytr);
    sim_free(s->Xte);
    sim_free(s->yte);
    sim_free(s->te_rows);
    memset(s, 0, sizeof *s);
}

/* Hold out round(test_frac x n) rows (at least one) chosen by a permutation seeded by
 * seed; the rest train. */
int study_make_split(const model_dataset *ds, model_kind k, double test_frac, uint64_t seed,
                     study_split *s, sim_diag *d)
{
    memset(s, 0, sizeof *s);
    size_t n = ds->n;
    if (n < 20)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "the data has %zu rows; training and evaluation need at least 20", n);
    uint32_t p = model_kind_inputs(k);
    size_t *perm = sim_reallocarray(NULL, n, sizeof *perm);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t n_test = (size_t)llround(test_frac * (double)n);
    if (n_test < 1)
        n_test = 1;
    if (n_test > n - 10)
        n_test = n - 10;
    /* The linear baseline fits p + 1 coefficients: checked before anything is trained
     * or written. */
    if (n - n_test <= (size_t)p + 1) {
        sim_free(perm);
        if (rng)
            gsl_rng_free(rng);
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "the data has %zu rows, %zu of them to train on after holding "
                            "%zu out; the linear baseline needs more than %u",
                            n, n - n_test, n_test, p + 1);
    }
    s->n_test = n_test;
    s->n_train = n - n_test;
    s->Xtr = sim_reallocarray(NULL, s->n_train * p, sizeof *s->Xtr);
    s->ytr = sim_reallocarray(NULL, s->n_train, sizeof *s->ytr);
    s->Xte = sim_reallocarray(NULL, n_test * p, sizeof *s->Xte);
    s->yte = sim_reallocarray(NULL, n_test, sizeof *s->yte);
    s->te_rows = sim_reallocarray(NULL, n_test, sizeof *s->te_rows);
    if (!perm || !rng || !s->Xtr || !s->ytr || !s->Xte || !s->yte || !s->te_rows) {
        sim_free(perm);
        if (rng)
            gsl_rng_free(rng);
        study_split_free(s);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    gsl_rng_set(rng, seed);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    gsl_ran_shuffle(rng, perm, n, sizeof *perm);
    for (size_t a = 0; a < n; a++) {
        const model_sample *row = &ds->rows[perm[a]];
        if (a < n_test) {
            model_kind_row(k, row, s->Xte + a * p, &s->yte[a]);
            s->te_rows[a] = row;
        } else {
            size_t b = a - n_test;
            model_kind_row(k, row, s->Xtr + b * p, &s->ytr[b]);
        }
    }
    sim_free(perm);
    gsl_rng_free(rng);
    return SIM_OK;
}

static const char *unit_of(model_kind k)
{
    return k == MODEL_KIND_UTIL ? "milli-GPU" : k == MODEL_KIND_MEM ? "MiB" : "seconds";
}

static void print_metrics(FILE *out, const char *label, const model_metrics *m)
{
    fprintf(out, "  %-28s %12.4g %12.4g %8.4f\n", label, m->mae, m->mse, m->r2);
}

/* Evaluate the MLP and both baselines on the held-out rows and print the table.
 * util_model (may be NULL) feeds the time model its predicted utilisation too. */
int study_predict_report(FILE *out, model_mlp *mlp, model_kind k, const model_dataset *ds,
                         const study_split *s, model_mlp *util_model, sim_diag *d)
{
    uint32_t p = model_kind_inputs(k);
    model_xform xf[MODEL_F_COUNT_TIME], yxf;
    model_kind_xforms(k, xf, &yxf);
    model_linreg lr;
    int st = model_linreg_fit(&lr, s->Xtr, s->ytr, s->n_train, p, xf, yxf, d);
    if (st != SIM_OK)
        return st;
    double *pred = sim_reallocarray(NULL, s->n_test, sizeof *pred);
    if (!pred)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    double mean = 0;
    for (size_t i = 0; i < s->n_train; i++)
        mean += s->ytr[i];
    mean /= (double)s->n_train;
    size_t synth = 0;
    for (size_t i = 0; i < s->n_test; i++)
        synth += s->te_rows[i]->synthetic;
    fprintf(out,
            "held-out rows: %zu (%zu synthetic, %zu measured); the baselines are fitted on "
            "the other %zu rows; unit: %s\n",
            s->n_test, synth, s->n_test - synth, s->n_train, unit_of(k));
    const char *rows = model_mlp_meta(mlp, "data_rows"), *frac = model_mlp_meta(mlp, "test_frac"),
               *seed = model_mlp_meta(mlp, "split_seed");
    if (rows && frac && seed)
        fprintf(out,
                "the mlp was trained on a data file of %s rows, a fraction %s held out (split "
                "seed %s)\n",
                rows, frac, seed);
    fprintf(out, "  %-28s %12s %12s %8s\n", "predictor", "MAE", "MSE", "R2");
    model_metrics m;
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = model_mlp_predict(mlp, s->Xte + i * p);
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics(out, "mlp", &m);
    if (k == MODEL_KIND_TIME && util_model) {
        double x[MODEL_F_COUNT_TIME];
        for (size_t i = 0; i < s->n_test; i++) {
            memcpy(x, s->Xte + i * p, sizeof x);
            double u = model_mlp_predict(util_model, x);
            x[MODEL_F_UTIL] = u < 1 ? 1 : u > 1000 ? 1000 : u;
            pred[i] = model_mlp_predict(mlp, x);
        }
        model_metrics_compute(pred, s->yte, s->n_test, &m);
        print_metrics(out, "mlp, predicted utilisation", &m);
    }
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = mean;
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics(out, "mean baseline", &m);
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = model_linreg_predict(&lr, s->Xte + i * p);
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics(out, "linear-regression baseline", &m);
    (void)ds;
    sim_free(pred);
    return SIM_OK;
}
