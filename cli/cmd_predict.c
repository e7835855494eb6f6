/*
 * cmd_predict.c: the demand-predictor commands of `clustersim model` (dispatched by
 * cmd_model.c; `gen samples` is in cmd_model_samples.c): `train` and `eval` with kind
 * util, mem or time train and evaluate the utilisation, memory and
 * execution-time predictors. Train and eval hold out the same rows (a permutation seeded by --seed,
 * recorded in the model file), fit the mean and linear-regression baselines on the
 * remaining rows, and report MAE, MSE and R² of all three on the held-out rows.
 */
#include "cli/cli.h"

#include "study/predict_eval.h"

#include "base/csvin.h"
#include "models/baseline.h"
#include "models/catalog.h"
#include "models/predictor.h"
#include "models/zoo.h"
#include "base/alloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- train / eval --------------------------------------------------------------------- */

static bool parse_hidden(const char *v, uint32_t *hidden, uint32_t *n)
{
    *n = 0;
    const char *s = v;
    if (!strcmp(v, "0"))
        return true;
    /* Every width is read, the last included: an empty value or a comma too many is an
     * error, not fewer layers. */
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char buf[32];
        if (len == 0 || len >= sizeof buf || *n >= MODEL_MLP_MAX_LAYERS - 1)
            return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        uint64_t w;
        if (!csvin_parse_u64(buf, len, &w) || w < 1 || w > MODEL_MLP_MAX_WIDTH)
            return false;
        hidden[(*n)++] = (uint32_t)w;
        if (!comma)
            return true;
        s = comma + 1;
    }
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
                    "       [--val-frac 0.2] [--patience 30] [--test-frac 0.2] [--seed 1]\n"
                    "--hidden: the widths of the hidden layers (0: none).\n");
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
            if (m < 0)
                return 2;
            if (!parse_hidden(v, hidden, &n_hidden)) {
                char q[128];
                csvin_quote(v, strlen(v), q, sizeof q);
                return cli_usage_error("option --hidden: expected layer widths 1..%d separated "
                                       "by commas, such as 64,32, at most %d layers (0: none), "
                                       "got %s",
                                       MODEL_MLP_MAX_WIDTH, MODEL_MLP_MAX_LAYERS - 1, q);
            }
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
    study_split s = {0};
    int st;
    if (!train) {
        if ((st = model_mlp_load(&mlp, model_path, &d)) ||
            (st = model_kind_check(mlp, k, model_path, &d)))
            goto out;
        /* The split the model was trained with, as its file records it. */
        const char *ms = model_mlp_meta(mlp, "split_seed"), *mf = model_mlp_meta(mlp, "test_frac");
        char *end = NULL;
        if (!seed_given && ms) {
            errno = 0;
            unsigned long long v = strtoull(ms, &end, 10);
            if (errno || end == ms || *end || ms[0] == '-') {
                st = sim_diag_set(&d, SIM_EPARSE, model_path, 0, 0,
                                  "meta 'split_seed': expected an integer "
                                  "0..18446744073709551615, got \"%.40s\"",
                                  ms);
                goto out;
            }
            o.seed = v;
        }
        if (!frac_given && mf) {
            double v = strtod(mf, &end);
            if (end == mf || *end || !(v >= 0.01 && v <= 0.9)) {
                st = sim_diag_set(&d, SIM_EPARSE, model_path, 0, 0,
                                  "meta 'test_frac': expected a number in [0.01, 0.9], got "
                                  "\"%.40s\"",
                                  mf);
                goto out;
            }
            test_frac = v;
        }
        if (util_path && ((st = model_mlp_load(&util_model, util_path, &d)) ||
                          (st = model_kind_check(util_model, MODEL_KIND_UTIL, util_path, &d))))
            goto out;
    }
    if ((st = model_dataset_load(&ds, data, &d)) != SIM_OK)
        goto out;
    if ((st = study_make_split(&ds, k, test_frac, o.seed, &s, &d)) != SIM_OK)
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
    st = study_predict_report(stdout, mlp, k, &ds, &s, util_model, &d);
out:
    study_split_free(&s);
    model_dataset_free(&ds);
    model_mlp_destroy(mlp);
    model_mlp_destroy(util_model);
    return st == SIM_OK ? 0 : cli_fail(st, &d);
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
