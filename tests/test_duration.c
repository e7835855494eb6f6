/*
 * test_duration.c: the online duration predictor.
 *  - It learns: durations set by the job's text and GPU count are predicted within a
 *    few per cent by both learners after training.
 *  - Fallback: a tenant below min_history is predicted by the global model, one at or
 *    above it by its own; before any training the tenant's recent mean is used, and
 *    before any job finished nothing is predicted.
 *  - Causality: in a replay where durations become known only when jobs end, the
 *    predictions made before time T do not change when the durations of every job still
 *    running or not yet submitted at T are changed. The same check applied to a leaky
 *    replay (durations learnt at submission) sees the predictions change, so it can fail.
 *  - Determinism and allocation failures.
 */
#include "models/duration.h"

#include "base/alloc.h"
#include "base/intern.h"
#include "traces/gen.h"

#include "check.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static model_dur_input input(uint32_t tenant, double submit_s, uint32_t gpus, const char *name,
                             const char *cmd)
{
    model_dur_input in = {.tenant = tenant,
                          .submit_us = (sim_time)(submit_s * 1e6),
                          .num_gpus = gpus,
                          .gpu_milli = 1000,
                          .cpu_milli = 4000u * gpus,
                          .mem_mib = 16384u * gpus,
                          .qos = SIM_QOS_BE,
                          .name = name,
                          .command = cmd};
    return in;
}

static void check_learns(model_dur_learner learner)
{
    model_dur_config c;
    model_dur_config_default(&c);
    c.learner = learner;
    c.topics = 2;
    model_duration *m;
    sim_diag d;
    CHECK(model_duration_create(&m, &c, &d) == SIM_OK);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    static const char *const names[2] = {"resnet50 imagenet train", "bert squad finetune"};
    static const double base[2] = {1000, 20000};
    for (int i = 0; i < 800; i++) {
        int kind = (int)gsl_rng_uniform_int(rng, 2);
        uint32_t gpus = 1u << gsl_rng_uniform_int(rng, 3);
        model_dur_input in = input((uint32_t)(i % 3), i * 60.0, gpus, names[kind], "python run.py");
        model_dur_job j;
        model_duration_arrive(m, &in, &j);
        model_duration_finish(m, &j, base[kind] * gpus * exp(gsl_ran_gaussian(rng, 0.05)));
    }
    gsl_rng_free(rng);
    CHECK(model_duration_train(m) == SIM_OK);
    for (int kind = 0; kind < 2; kind++)
        for (uint32_t gpus = 1; gpus <= 4; gpus *= 2) {
            model_dur_input in = input(7, 1e6 + 3600 * kind, gpus, names[kind], "python run.py");
            model_dur_job j;
            model_duration_arrive(m, &in, &j);
            model_dur_source src;
            double p = model_duration_predict(m, &j, MODEL_DUR_GLOBAL, &src);
            CHECK(src == MODEL_DUR_SRC_GLOBAL);
            CHECK_NEAR(p, base[kind] * gpus, 0.1);
        }
    model_duration_destroy(m);
}

/* One job of the causality replay. */
typedef struct rjob {
    model_dur_input in;
    double dur_s;
    model_dur_job st;
    double pred;
} rjob;

typedef struct rev {
    double t;
    int kind; /* 0 = finish, 1 = arrival: finishes at t come first */
    int idx;
} rev;

static int cmp_rev(const void *a, const void *b)
{
    const rev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    return x->idx - y->idx;
}

/* Replay jobs; leaky = durations learnt at submission. Predictions go to jobs[i].pred. */
static void replay(rjob *jobs, int n, bool leaky)
{
    model_dur_config c;
    model_dur_config_default(&c);
    c.min_history = 20;
    c.history = 512;
    c.gbt.trees = 30;
    model_duration *m;
    sim_diag d;
    CHECK(model_duration_create(&m, &c, &d) == SIM_OK);
    rev *ev = calloc((size_t)n * 2, sizeof *ev);
    for (int i = 0; i < n; i++) {
        double s = (double)jobs[i].in.submit_us / 1e6;
        ev[2 * i] = (rev){.t = s, .kind = 1, .idx = i};
        ev[2 * i + 1] = (rev){.t = s + jobs[i].dur_s, .kind = 0, .idx = i};
    }
    qsort(ev, (size_t)n * 2, sizeof *ev, cmp_rev);
    double next_train = 6 * 3600;
    for (int e = 0; e < 2 * n; e++) {
        while (ev[e].t >= next_train) {
            /* As a replay does: retrain only when something finished since. */
            if (model_duration_pending_rows(m))
                CHECK(model_duration_train(m) == SIM_OK);
            next_train += 6 * 3600;
        }
        rjob *j = &jobs[ev[e].idx];
        if (ev[e].kind == 1) {
            model_duration_arrive(m, &j->in, &j->st);
            j->pred = model_duration_predict(m, &j->st, MODEL_DUR_AUTO, NULL);
            if (leaky)
                model_duration_finish(m, &j->st, j->dur_s);
        } else if (!leaky) {
            model_duration_finish(m, &j->st, j->dur_s);
        }
    }
    free(ev);
    model_duration_destroy(m);
}

static void check_causality(void)
{
    enum { N = 1500 };
    static rjob a[N], b[N];
    static char names[N][64], cmds[N][128];
    trace_gen_config gc;
    trace_gen_config_default(&gc);
    gc.jobs = N;
    gc.seed = 11;
    gc.arrival_rate_h = 40;
    sim_intern *tenants = sim_intern_create(false), *models = sim_intern_create(false);
    trace_gen *g;
    sim_diag d;
    CHECK(trace_gen_create(&g, &gc, tenants, models, NULL, &d) == SIM_OK);
    job_spec s;
    for (int i = 0; i < N && trace_gen_next(g, &s, &d) == 1; i++) {
        snprintf(names[i], sizeof names[i], "%s", s.name);
        snprintf(cmds[i], sizeof cmds[i], "%s", s.command);
        a[i].in = (model_dur_input){.tenant = s.tenant,
                                    .submit_us = s.submit_us,
                                    .num_gpus = s.num_gpus,
                                    .gpu_milli = s.gpu_milli,
                                    .cpu_milli = s.cpu_milli,
                                    .mem_mib = s.mem_mib,
                                    .qos = s.qos,
                                    .name = names[i],
                                    .command = cmds[i]};
        a[i].dur_s = s.work_s;
    }
    trace_gen_destroy(g);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    /* T: the submission of job 900. Every job still running at T or submitted after it
     * gets another duration in b. */
    double T = (double)a[900].in.submit_us / 1e6;
    int changed = 0;
    for (int i = 0; i < N; i++) {
        b[i] = a[i];
        double submit = (double)a[i].in.submit_us / 1e6;
        if (submit + a[i].dur_s > T) {
            b[i].dur_s = a[i].dur_s * 7.3 + 11;
            changed++;
        }
    }
    CHECK(changed > 600);
    for (int leaky = 0; leaky < 2; leaky++) {
        replay(a, N, leaky);
        replay(b, N, leaky);
        int same = 0, before = 0, predicted = 0;
        for (int i = 0; i < N; i++) {
            if ((double)a[i].in.submit_us / 1e6 > T)
                continue;
            before++;
            predicted += !isnan(a[i].pred);
            same += (isnan(a[i].pred) && isnan(b[i].pred)) || a[i].pred == b[i].pred;
        }
        CHECK(before > 850);
        CHECK(predicted > before - 50); /* nothing is predicted before the first finish */
        if (!leaky)
            CHECK_EQ_I64(same, before);
        else
            CHECK(same < before - 100);
    }
}

int main(void)
{
    check_learns(MODEL_DUR_RIDGE);
    check_learns(MODEL_DUR_GBT);

    /* Fallback below min_history, history means before training, nothing before any. */
    for (int learner = 0; learner < 2; learner++) {
        model_dur_config c;
        model_dur_config_default(&c);
        c.learner = (model_dur_learner)learner;
        c.min_history = 50;
        model_duration *m;
        sim_diag d;
        CHECK(model_duration_create(&m, &c, &d) == SIM_OK);
        model_dur_input in = input(1, 100, 1, "job", "run");
        model_dur_job j;
        model_duration_arrive(m, &in, &j);
        model_dur_source src;
        CHECK(isnan(model_duration_predict(m, &j, MODEL_DUR_AUTO, &src)));
        CHECK(src == MODEL_DUR_SRC_NONE);
        /* Tenant 1: 100 jobs of ~5000 s; tenant 2: 10 jobs of ~50 s. */
        for (int i = 0; i < 110; i++) {
            uint32_t t = i < 100 ? 1 : 2;
            in = input(t, 200.0 + i, 1 + (uint32_t)(i % 2), "job", "run");
            model_duration_arrive(m, &in, &j);
            model_duration_finish(m, &j, (t == 1 ? 5000.0 : 50.0) * (1 + 0.01 * (i % 5)));
        }
        in = input(2, 1000, 1, "job", "run");
        model_duration_arrive(m, &in, &j);
        double p = model_duration_predict(m, &j, MODEL_DUR_AUTO, &src);
        CHECK(src == MODEL_DUR_SRC_HISTORY);
        CHECK_NEAR(p, 51.0, 0.02); /* exp of the mean log of tenant 2's last 8 jobs */
        uint64_t trainings = model_duration_trainings(m);
        CHECK(model_duration_train(m) == SIM_OK);
        CHECK_EQ_I64(model_duration_trainings(m), trainings + 1);
        CHECK_EQ_I64(model_duration_pending_rows(m), 0);
        CHECK(model_duration_tenant_has_model(m, 1));
        CHECK(!model_duration_tenant_has_model(m, 2));
        CHECK_EQ_I64(model_duration_tenant_models(m), 1);
        double pa = model_duration_predict(m, &j, MODEL_DUR_AUTO, &src);
        CHECK(src == MODEL_DUR_SRC_GLOBAL);
        CHECK(pa == model_duration_predict(m, &j, MODEL_DUR_GLOBAL, NULL));
        CHECK(isnan(model_duration_predict(m, &j, MODEL_DUR_TENANT, &src)));
        CHECK(src == MODEL_DUR_SRC_NONE);
        model_dur_job j1;
        in = input(1, 1000, 1, "job", "run");
        model_duration_arrive(m, &in, &j1);
        double pt = model_duration_predict(m, &j1, MODEL_DUR_AUTO, &src);
        CHECK(src == MODEL_DUR_SRC_TENANT);
        CHECK_NEAR(pt, 5100, 0.05);
        /* Tenant 2 reaches min_history: its own model takes over. */
        for (int i = 0; i < 40; i++) {
            in = input(2, 2000.0 + i, 1, "job", "run");
            model_dur_job k;
            model_duration_arrive(m, &in, &k);
            model_duration_finish(m, &k, 50.0);
        }
        CHECK_EQ_I64(model_duration_pending_rows(m), 40);
        CHECK(model_duration_train(m) == SIM_OK);
        CHECK_EQ_I64(model_duration_pending_rows(m), 0);
        CHECK(model_duration_tenant_has_model(m, 2));
        p = model_duration_predict(m, &j, MODEL_DUR_AUTO, &src);
        CHECK(src == MODEL_DUR_SRC_TENANT);
        CHECK_NEAR(p, 50.5, 0.05);
        CHECK(model_duration_tenant_known(m, 2) && !model_duration_tenant_known(m, 3));
        model_duration_destroy(m);
    }

    /* At most max_tenant_models tenants get their own model: the first to qualify. */
    {
        model_dur_config c;
        model_dur_config_default(&c);
        c.learner = MODEL_DUR_RIDGE;
        c.min_history = 20;
        c.max_tenant_models = 1;
        model_duration *m;
        sim_diag d;
        CHECK(model_duration_create(&m, &c, &d) == SIM_OK);
        for (int i = 0; i < 60; i++) {
            uint32_t t = 1 + (uint32_t)(i % 2);
            model_dur_input in = input(t, 100.0 + i, 1, "job", "run");
            model_dur_job k;
            model_duration_arrive(m, &in, &k);
            model_duration_finish(m, &k, t == 1 ? 500.0 : 50.0);
        }
        CHECK(model_duration_train(m) == SIM_OK);
        CHECK_EQ_I64(model_duration_tenant_models(m), 1);
        CHECK(model_duration_tenant_has_model(m, 1) && !model_duration_tenant_has_model(m, 2));
        model_dur_input in = input(2, 1000, 1, "job", "run");
        model_dur_job k;
        model_duration_arrive(m, &in, &k);
        model_dur_source src;
        model_duration_predict(m, &k, MODEL_DUR_AUTO, &src);
        CHECK(src == MODEL_DUR_SRC_GLOBAL);
        model_duration_destroy(m);
    }

    check_causality();

    /* Configuration errors and allocation failures. */
    model_dur_config c;
    model_dur_config_default(&c);
    c.topics = MODEL_DUR_MAX_TOPICS + 1;
    model_duration *m = NULL;
    sim_diag d;
    CHECK(model_duration_create(&m, &c, &d) == SIM_EINVAL);
    CHECK(strstr(d.msg, "topics") != NULL);
    model_dur_config_default(&c);
    c.history = 64;
    c.max_tenants = 16;
    c.max_tenant_models = 2;
    c.nmf_docs = 32;
    int64_t live = sim_alloc_live();
    int failures = 0;
    for (uint64_t k = 1; k <= 40; k++) {
        sim_alloc_fail_after(k);
        int st = model_duration_create(&m, &c, &d);
        sim_alloc_fail_after(0);
        if (st == SIM_ENOMEM)
            failures++;
        else
            model_duration_destroy(m);
        CHECK_EQ_I64(sim_alloc_live(), live);
    }
    CHECK(failures >= 30);
    model_duration_destroy(NULL);
    return check_done();
}
