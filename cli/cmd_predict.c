/*
 * cmd_predict.c: the demand-predictor commands of `clustersim model` (dispatched by
 * cmd_model.c): `gen samples` writes labelled samples from the model zoo, `train` and
 * `eval` with kind util, mem or time train and evaluate the utilisation, memory and
 * execution-time predictors. Train and eval hold out the same rows (a permutation seeded by --seed,
 * recorded in the model file), fit the mean and linear-regression baselines on the
 * remaining rows, and report MAE, MSE and R² of all three on the held-out rows.
 */
#include "cli/cli.h"

#include "models/baseline.h"
#include "models/catalog.h"
#include "models/predictor.h"
#include "models/zoo.h"
#include "base/alloc.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int st, sim_diag *d)
{
    if (st == SIM_ENOMEM && !d->msg[0])
        sim_diag_set(d, st, NULL, 0, 0, "out of memory");
    cli_print_diag(d);
    return cli_exit_code(st);
}

/* ---- gen-data ------------------------------------------------------------------------ */

int cmd_model_gen_samples(int argc, char **argv)
{
    const char *out = NULL, *catalog = NULL, *types = NULL;
    uint64_t samples = 20000, seed = 1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf(
                "usage: clustersim model gen samples --out FILE [--samples N] [--seed N]\n"
                "       [--gpu-types A|B|...] [--catalog FILE]\n"
                "Writes N synthetic labelled samples (source=synthetic) drawn from the model\n"
                "zoo on the given GPU types (default: every catalog type not marked assumed).\n");
            return 0;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (OPT("--samples")) {
            if (m < 0 || !cli_u64("--samples", v, 1, 100000000, &samples))
                return 2;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &seed))
                return 2;
        } else if (OPT("--gpu-types")) {
            if (m < 0)
                return 2;
            types = v;
        } else if (OPT("--catalog")) {
            if (m < 0)
                return 2;
            catalog = v;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model gen samples'",
                                   argv[i]);
        }
#undef OPT
    }
    if (!out)
        return cli_usage_error("clustersim model gen samples needs --out FILE");
    /* study_out_open joins a directory and a name. */
    char dir[1024];
    const char *slash = strrchr(out, '/'), *name = slash ? slash + 1 : out;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == out ? 1 : slash - out) : 1,
             slash ? out : ".");
    if (!*name)
        return cli_usage_error("option --out: '%s' names a directory, not a file", out);
    sim_diag d = {0};
    model_catalog *cat = NULL;
    model_zoo *zoo = NULL;
    gsl_rng *rng = NULL;
    study_outfile of = {0};
    int st = model_catalog_load(&cat, catalog ? catalog : model_catalog_default_path(), &d);
    if (st != SIM_OK)
        return fail(st, &d);
    uint64_t mask = 0;
    const sim_intern *names = model_catalog_names(cat);
    if (types) {
        const char *s = types;
        while (*s) {
            const char *bar = strchr(s, '|');
            size_t len = bar ? (size_t)(bar - s) : strlen(s);
            uint32_t t = sim_intern_find(names, s, len);
            if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
                char known[1024];
                sim_intern_list(names, ", ", known, sizeof known);
                model_catalog_destroy(cat);
                return cli_usage_error("option --gpu-types: unknown GPU type '%.*s' (known: %s)",
                                       (int)len, s, known);
            }
            mask |= UINT64_C(1) << t;
            s += len + (bar ? 1 : 0);
        }
    } else {
        for (uint16_t t = 1; t < model_catalog_count(cat) && t < SIM_MAX_GPU_TYPES; t++)
            if (!model_catalog_type(cat, t)->assumed)
                mask |= UINT64_C(1) << t;
    }
    if (mask == 0) {
        st = sim_diag_set(&d, SIM_EINVAL, NULL, 0, 0, "no GPU type to sample (give --gpu-types)");
        goto out;
    }
    if ((st = model_zoo_create(&zoo, cat, &d)) != SIM_OK)
        goto out;
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        st = SIM_ENOMEM;
        goto out;
    }
    gsl_rng_set(rng, seed);
    if (!study_out_open(&of, dir, name)) {
        st = SIM_EIO; /* study_out_open printed why */
        goto out;
    }
    st = model_dataset_write_header(of.f);
    for (uint64_t i = 0; i < samples && st == SIM_OK; i++) {
        model_sample s;
        if ((st = model_zoo_sample(zoo, rng, mask, &s)) == SIM_OK)
            st = model_dataset_write_row(of.f, &s);
    }
    if (st != SIM_OK)
        sim_diag_set(&d, st, out, 0, 0, "write failed");
    if (!study_out_close(&of, st == SIM_OK) && st == SIM_OK)
        st = SIM_EIO; /* study_out_close printed why */
    if (st == SIM_OK)
        fprintf(stderr, "clustersim: %s: %llu synthetic samples (model zoo, seed %llu)\n", out,
                (unsigned long long)samples, (unsigned long long)seed);
out:
    if (rng)
        gsl_rng_free(rng);
    model_zoo_destroy(zoo);
    model_catalog_destroy(cat);
    /* An output that cannot be created or written was reported already (d stays empty):
     * fail() then prints nothing more and exits 2. */
    return st == SIM_OK ? 0 : fail(st, &d);
}

/* ---- train / eval --------------------------------------------------------------------- */

typedef struct split {
    size_t n_train, n_test;
    double *Xtr, *ytr, *Xte, *yte; /* row-major, model_kind_inputs(k) columns */
    const model_sample **te_rows;  /* the held-out samples */
} split;

static void split_free(split *s)
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
static int make_split(const model_dataset *ds, model_kind k, double test_frac, uint64_t seed,
                      split *s, sim_diag *d)
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
        split_free(s);
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

static void print_metrics(const char *label, const model_metrics *m)
{
    printf("  %-28s %12.4g %12.4g %8.4f\n", label, m->mae, m->mse, m->r2);
}

/* Evaluate the MLP and both baselines on the held-out rows and print the table.
 * util_model (may be NULL) feeds the time model its predicted utilisation too. */
static int report(model_mlp *mlp, model_kind k, const model_dataset *ds, const split *s,
                  model_mlp *util_model, sim_diag *d)
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
    printf("held-out rows: %zu (%zu synthetic, %zu measured); the baselines are fitted on "
           "the other %zu rows; unit: %s\n",
           s->n_test, synth, s->n_test - synth, s->n_train, unit_of(k));
    const char *rows = model_mlp_meta(mlp, "data_rows"), *frac = model_mlp_meta(mlp, "test_frac"),
               *seed = model_mlp_meta(mlp, "split_seed");
    if (rows && frac && seed)
        printf("the mlp was trained on a data file of %s rows, a fraction %s held out (split "
               "seed %s)\n", rows, frac, seed);
    printf("  %-28s %12s %12s %8s\n", "predictor", "MAE", "MSE", "R2");
    model_metrics m;
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = model_mlp_predict(mlp, s->Xte + i * p);
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics("mlp", &m);
    if (k == MODEL_KIND_TIME && util_model) {
        double x[MODEL_F_COUNT_TIME];
        for (size_t i = 0; i < s->n_test; i++) {
            memcpy(x, s->Xte + i * p, sizeof x);
            double u = model_mlp_predict(util_model, x);
            x[MODEL_F_UTIL] = u < 1 ? 1 : u > 1000 ? 1000 : u;
            pred[i] = model_mlp_predict(mlp, x);
        }
        model_metrics_compute(pred, s->yte, s->n_test, &m);
        print_metrics("mlp, predicted utilisation", &m);
    }
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = mean;
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics("mean baseline", &m);
    for (size_t i = 0; i < s->n_test; i++)
        pred[i] = model_linreg_predict(&lr, s->Xte + i * p);
    model_metrics_compute(pred, s->yte, s->n_test, &m);
    print_metrics("linear-regression baseline", &m);
    (void)ds;
    sim_free(pred);
    return SIM_OK;
}

static bool parse_hidden(const char *v, uint32_t *hidden, uint32_t *n)
{
    *n = 0;
    const char *s = v;
    if (!strcmp(v, "0") || !*v)
        return true;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char buf[32];
        if (len == 0 || len >= sizeof buf || *n >= MODEL_MLP_MAX_LAYERS - 1)
            return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        uint64_t w;
        if (!cli_u64("--hidden", buf, 1, MODEL_MLP_MAX_WIDTH, &w))
            return false;
        hidden[(*n)++] = (uint32_t)w;
        s += len + (comma ? 1 : 0);
    }
    return true;
}

static int train_or_eval(model_kind k, int argc, char **argv, bool train)
{
    const char *cmd = train ? "train" : "eval";
    const char *data = NULL, *out = NULL, *model_path = NULL, *util_path = NULL;
    model_mlp_train_opts o;
    model_mlp_train_defaults(&o);
    uint32_t hidden[MODEL_MLP_MAX_LAYERS] = {64, 32}, n_hidden = 2;
    model_act act = MODEL_ACT_RELU;
    double test_frac = 0.2;
    bool seed_given = false, frac_given = false, lr_given = false;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            if (train)
                printf(
                    "usage: clustersim model train --kind util|mem|time --data FILE --out MODEL\n"
                    "       [--hidden 64,32] [--activation relu|tanh] [--optimizer adam|sgd]\n"
                    "       [--loss mse|mae] [--epochs 400] [--batch 32] [--lr X] [--momentum "
                    "0.9]\n"
                    "       [--val-frac 0.2] [--patience 30] [--test-frac 0.2] [--seed 1]\n");
            else
                printf(
                    "usage: clustersim model eval --kind util|mem|time --data FILE --model MODEL\n"
                    "       [--util-model MODEL] [--test-frac X] [--seed N]\n"
                    "Evaluates on the rows train held out (same --seed and --test-frac, read\n"
                    "from the model file unless given).\n");
            return 0;
        }
#define OPT(name) ((m = cli_opt(argc, argv, &i, name, &v)) != 0)
        if (OPT("--data")) {
            if (m < 0)
                return 2;
            data = v;
        } else if (OPT("--test-frac")) {
            if (m < 0 || !cli_double("--test-frac", v, 0.01, 0.9, &test_frac))
                return 2;
            frac_given = true;
        } else if (OPT("--seed")) {
            if (m < 0 || !cli_u64("--seed", v, 0, UINT64_MAX, &o.seed))
                return 2;
            seed_given = true;
        } else if (!train && OPT("--model")) {
            if (m < 0)
                return 2;
            model_path = v;
        } else if (!train && OPT("--util-model")) {
            if (m < 0)
                return 2;
            util_path = v;
        } else if (train && OPT("--out")) {
            if (m < 0)
                return 2;
            out = v;
        } else if (train && OPT("--hidden")) {
            if (m < 0 || !parse_hidden(v, hidden, &n_hidden))
                return m < 0 ? 2
                             : cli_usage_error("option --hidden: expected widths such as "
                                               "64,32 (at most %d layers)",
                                               MODEL_MLP_MAX_LAYERS - 1);
        } else if (train && OPT("--activation")) {
            if (m < 0)
                return 2;
            if (!strcmp(v, "relu"))
                act = MODEL_ACT_RELU;
            else if (!strcmp(v, "tanh"))
                act = MODEL_ACT_TANH;
            else
                return cli_usage_error("option --activation: expected relu or tanh, got '%s'", v);
        } else if (train && OPT("--optimizer")) {
            if (m < 0)
                return 2;
            if (!strcmp(v, "adam"))
                o.optim = MODEL_OPTIM_ADAM;
            else if (!strcmp(v, "sgd"))
                o.optim = MODEL_OPTIM_SGD;
            else
                return cli_usage_error("option --optimizer: expected adam or sgd, got '%s'", v);
        } else if (train && OPT("--loss")) {
            if (m < 0)
                return 2;
            if (!strcmp(v, "mse"))
                o.loss = MODEL_LOSS_MSE;
            else if (!strcmp(v, "mae"))
                o.loss = MODEL_LOSS_MAE;
            else
                return cli_usage_error("option --loss: expected mse or mae, got '%s'", v);
        } else if (train && OPT("--epochs")) {
            uint64_t x;
            if (m < 0 || !cli_u64("--epochs", v, 1, 1000000, &x))
                return 2;
            o.max_epochs = (uint32_t)x;
        } else if (train && OPT("--batch")) {
            uint64_t x;
            if (m < 0 || !cli_u64("--batch", v, 1, 65536, &x))
                return 2;
            o.batch = (uint32_t)x;
        } else if (train && OPT("--lr")) {
            if (m < 0 || !cli_double("--lr", v, 1e-9, 10, &o.lr))
                return 2;
            lr_given = true;
        } else if (train && OPT("--momentum")) {
            if (m < 0 || !cli_double("--momentum", v, 0, 0.999, &o.momentum))
                return 2;
        } else if (train && OPT("--val-frac")) {
            if (m < 0 || !cli_double("--val-frac", v, 0, 0.9, &o.val_frac))
                return 2;
        } else if (train && OPT("--patience")) {
            uint64_t x;
            if (m < 0 || !cli_u64("--patience", v, 1, 1000000, &x))
                return 2;
            o.patience = (uint32_t)x;
        } else {
            return cli_usage_error("unknown option '%s' for 'clustersim model %s %s'", argv[i], cmd,
                                   model_kind_name(k));
        }
#undef OPT
    }
    if (!data)
        return cli_usage_error("clustersim model %s needs --data FILE", cmd);
    if (train && !out)
        return cli_usage_error("clustersim model train needs --out MODEL");
    if (!train && !model_path)
        return cli_usage_error("clustersim model eval needs --model MODEL");
    if (train && o.optim == MODEL_OPTIM_SGD && !lr_given)
        o.lr = 1e-2;

    sim_diag d = {0};
    model_dataset ds = {0};
    model_mlp *mlp = NULL, *util_model = NULL;
    split s = {0};
    int st;
    if (!train) {
        if ((st = model_mlp_load(&mlp, model_path, &d)) ||
            (st = model_kind_check(mlp, k, model_path, &d)))
            goto out;
        const char *ms = model_mlp_meta(mlp, "split_seed"), *mf = model_mlp_meta(mlp, "test_frac");
        if (!seed_given && ms)
            o.seed = strtoull(ms, NULL, 10);
        if (!frac_given && mf)
            test_frac = strtod(mf, NULL);
        if (util_path && ((st = model_mlp_load(&util_model, util_path, &d)) ||
                          (st = model_kind_check(util_model, MODEL_KIND_UTIL, util_path, &d))))
            goto out;
    }
    if ((st = model_dataset_load(&ds, data, &d)) != SIM_OK)
        goto out;
    if ((st = make_split(&ds, k, test_frac, o.seed, &s, &d)) != SIM_OK)
        goto out;
    printf("data: %s: %zu rows (%zu synthetic, %zu measured); %s rows are %s\n", data, ds.n,
           ds.n_synthetic, ds.n - ds.n_synthetic, ds.n_synthetic ? "synthetic" : "all",
           ds.n_synthetic == ds.n ? "generated from the model zoo, not measured"
                                  : "as labelled in the source column");
    if (train) {
        if ((st = model_kind_create(&mlp, k, hidden, n_hidden, act, &d)) != SIM_OK)
            goto out;
        model_mlp_report rep;
        if ((st = model_mlp_train(mlp, s.Xtr, s.ytr, s.n_train, &o, &rep, &d)) != SIM_OK)
            goto out;
        char buf[64];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)o.seed);
        model_mlp_set_meta(mlp, "split_seed", buf);
        snprintf(buf, sizeof buf, "%.6g", test_frac);
        model_mlp_set_meta(mlp, "test_frac", buf);
        snprintf(buf, sizeof buf, "%zu", ds.n);
        model_mlp_set_meta(mlp, "data_rows", buf);
        snprintf(buf, sizeof buf, "%zu", ds.n_synthetic);
        model_mlp_set_meta(mlp, "synthetic_rows", buf);
        printf("trained %s model: %u epochs (weights of epoch %u kept), %zu training and %zu "
               "validation rows, %s loss %.4g / %.4g (standardised)\n",
               model_kind_name(k), rep.epochs, rep.best_epoch, rep.n_train, rep.n_val,
               o.loss == MODEL_LOSS_MSE ? "MSE" : "MAE", rep.train_loss, rep.val_loss);
        if ((st = model_mlp_save(mlp, out, &d)) != SIM_OK)
            goto out;
        printf("saved %s\n", out);
    }
    st = report(mlp, k, &ds, &s, util_model, &d);
out:
    split_free(&s);
    model_dataset_free(&ds);
    model_mlp_destroy(mlp);
    model_mlp_destroy(util_model);
    return st == SIM_OK ? 0 : fail(st, &d);
}

int cmd_model_train_util(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_UTIL, argc, argv, true);
}

int cmd_model_train_mem(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_MEM, argc, argv, true);
}

int cmd_model_train_time(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_TIME, argc, argv, true);
}

int cmd_model_eval_util(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_UTIL, argc, argv, false);
}

int cmd_model_eval_mem(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_MEM, argc, argv, false);
}

int cmd_model_eval_time(int argc, char **argv)
{
    return train_or_eval(MODEL_KIND_TIME, argc, argv, false);
}
