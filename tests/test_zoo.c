/*
 * test_zoo.c: the model zoo's truth, samples, annotator and rate model.
 * Golden values (hand-computed from the formulas of zoo.h):
 *   resnet50, width 1, scale 1, batch 64 on V100M16: 0.2137866897 s per iteration,
 *     868.6423640 milli-GPU, 7190.625 MiB;
 *   lstm, width 1.2, scale 0.8, batch 20 on T4: 0.0217418469 s, 872.1873106 milli-GPU,
 *     1889.0328125 MiB.
 * Calibration: against Gavel's measured isolated throughputs (../shared/data/gavel) on
 * K80, P100 and V100 the RMS log error of the iteration time stays below 0.10 for
 * ResNet-50 and below 0.40 for ResNet-18, Transformer and the LSTM LM.
 */
#include "models/zoo.h"
#include "base/csvin.h"

#include "check.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

static model_catalog *cat;
static model_zoo *zoo;

static uint16_t type_id(const char *name)
{
    uint32_t t = sim_intern_find(model_catalog_names(cat), name, strlen(name));
    CHECK(t != SIM_INTERN_NONE);
    return (uint16_t)t;
}

static void golden(void)
{
    model_zoo_job zj = {.cls = (uint32_t)model_zoo_class_find("ResNet-50", 9),
                        .width = 1,
                        .scale = 1,
                        .batch = 64,
                        .iterations = 1};
    CHECK_STR(model_zoo_class_name(zj.cls), "resnet50");
    model_zoo_truth t;
    model_zoo_truth_of(zoo, &zj, type_id("V100M16"), &t);
    CHECK_NEAR(t.iter_s, 0.2137866896676862, 1e-9);
    CHECK_NEAR(t.util_milli, 868.6423640393822, 1e-9);
    CHECK_NEAR(t.mem_mib, 7190.625, 1e-12);
    zj = (model_zoo_job){.cls = (uint32_t)model_zoo_class_find("lstm", 4),
                         .width = 1.2,
                         .scale = 0.8,
                         .batch = 20,
                         .iterations = 1};
    model_zoo_truth_of(zoo, &zj, type_id("T4"), &t);
    CHECK_NEAR(t.iter_s, 0.021741846885866264, 1e-9);
    CHECK_NEAR(t.util_milli, 872.1873106047043, 1e-9);
    CHECK_NEAR(t.mem_mib, 1889.0328125, 1e-9);
    CHECK(model_zoo_class_find("dlrm", 4) == model_zoo_class_find("recommendation", 14));
    CHECK(model_zoo_class_find("GPT-2", 5) == model_zoo_class_find("gpt2", 4));
    CHECK(model_zoo_class_find("alexnet", 7) == -1);
    /* A bigger GPU is less utilised by the same job and no slower. */
    zj = (model_zoo_job){.cls = 0, .width = 1, .scale = 1, .batch = 32, .iterations = 1};
    model_zoo_truth t4, a100;
    model_zoo_truth_of(zoo, &zj, type_id("T4"), &t4);
    model_zoo_truth_of(zoo, &zj, type_id("A100"), &a100);
    CHECK(a100.util_milli < t4.util_milli);
    CHECK(a100.iter_s < t4.iter_s);
}

/* RMS log error of the zoo's iteration time against Gavel's steps/s for one class. */
static void calibration(void)
{
    char buf[1024];
    const char *path =
        check_shared("gavel/gavel_simulation_isolated_throughputs.csv", buf, sizeof buf);
    if (!path)
        return;
    static const struct {
        const char *gavel, *zoo;
        double max_rms;
    } cls[] = {{"ResNet-50", "resnet50", 0.10},
               {"ResNet-18", "resnet18", 0.40},
               {"Transformer", "transformer", 0.40},
               {"LM", "lstm", 0.40}};
    double sq[4] = {0};
    int n[4] = {0};
    csvin *in;
    sim_diag d = {0};
    CHECK(csvin_open(&in, path, ',', &d) == SIM_OK);
    csvin_row row;
    CHECK(csvin_next(in, &row, &d) == 1);
    while (csvin_next(in, &row, &d) == 1) {
        if (row.n < 4 || strcmp(row.f[2], "1") != 0)
            continue;
        const char *type = !strcmp(row.f[0], "k80")    ? "K80"
                           : !strcmp(row.f[0], "p100") ? "P100"
                           : !strcmp(row.f[0], "v100") ? "V100M16"
                                                       : NULL;
        if (!type)
            continue;
        for (int c = 0; c < 4; c++) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%s (batch size ", cls[c].gavel);
            if (strncmp(row.f[1], prefix, strlen(prefix)) != 0)
                continue;
            double batch = atof(row.f[1] + strlen(prefix));
            model_zoo_job zj = {.cls =
                                    (uint32_t)model_zoo_class_find(cls[c].zoo, strlen(cls[c].zoo)),
                                .width = 1,
                                .scale = 1,
                                .batch = batch,
                                .iterations = 1};
            model_zoo_truth t;
            model_zoo_truth_of(zoo, &zj, type_id(type), &t);
            double e = log(t.iter_s * atof(row.f[3]));
            sq[c] += e * e;
            n[c]++;
        }
    }
    csvin_close(in);
    for (int c = 0; c < 4; c++) {
        double rms = n[c] ? sqrt(sq[c] / n[c]) : INFINITY;
        printf("calibration %-12s %2d points, RMS log error %.3f\n", cls[c].zoo, n[c], rms);
        CHECK(n[c] >= 12);
        CHECK(rms < cls[c].max_rms);
    }
}

static void samples(void)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, 42);
    gsl_rng_set(b, 42);
    uint64_t mask = (UINT64_C(1) << type_id("T4")) | (UINT64_C(1) << type_id("A100"));
    int bad = 0, same = 0;
    for (int i = 0; i < 500; i++) {
        model_sample s, s2;
        CHECK(model_zoo_sample(zoo, a, mask, &s) == SIM_OK);
        CHECK(model_zoo_sample(zoo, b, mask, &s2) == SIM_OK);
        same += memcmp(&s, &s2, sizeof s) == 0;
        bool t4 = !strcmp(s.gpu_type, "T4");
        if (!s.synthetic || s.util_milli < 1 || s.util_milli > 1000 || !(s.time_s > 0) ||
            s.mem_mib > (t4 ? 16384 : 40960) || (!t4 && strcmp(s.gpu_type, "A100")) ||
            s.x[MODEL_F_GPU_CORES] != (t4 ? 2560 : 6912) || s.x[MODEL_F_BATCH] < 1)
            bad++;
    }
    CHECK(bad == 0);
    CHECK(same == 500);
    CHECK(model_zoo_sample(zoo, a, 0, &(model_sample){0}) == SIM_EINVAL);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

static void annotate_and_rate(void)
{
    sim_intern *models = sim_intern_create(false);
    uint16_t ref = type_id("V100M16");
    model_zoo_annotator ann = {.zoo = zoo,
                               .models = models,
                               .ref_type = ref,
                               .draw_over = false,
                               .over_request = 1.5,
                               .slo_factor = 2};
    model_zoo_rate zr;
    sim_rate_model rm;
    model_zoo_rate_init(&zr, zoo, models, ref, &rm);
    CHECK_STR(rm.name, "zoo");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int close = 0, consistent = 0, n = 300;
    uint16_t a100 = type_id("A100");
    for (int i = 0; i < n; i++) {
        job_spec j;
        memset(&j, 0, sizeof j);
        j.num_gpus = 1;
        j.gpu_milli = 1000;
        j.true_milli = (uint32_t)(100 + 3 * i); /* targets 100 .. 997 */
        j.work_s = 3600 + 17 * i;
        j.qos = i % 2 ? SIM_QOS_LS : SIM_QOS_BE;
        uint32_t want = j.true_milli;
        model_zoo_annotate(&ann, &j, r);
        if (fabs((double)j.true_milli - want) <= 0.15 * want)
            close++;
        model_zoo_job zj;
        bool ok = model_zoo_job_of(&j, models, &zj);
        model_zoo_truth t;
        if (ok)
            model_zoo_truth_of(zoo, &zj, ref, &t);
        /* Features, iterations and true demand tell one story. */
        if (ok && j.ref_gpu_type == ref && fabs(log(zj.iterations * t.iter_s / j.work_s)) < 0.25 &&
            fabs(log(j.true_milli / t.util_milli)) < 0.25 &&
            job_spec_has(&j, SIM_ATTR_SLO_S) == (j.qos == SIM_QOS_LS) &&
            (j.qos != SIM_QOS_LS || j.attr[SIM_ATTR_SLO_S] == 2 * j.work_s) &&
            rm.throughput(rm.ctx, &j, ref) == 1.0 && rm.demand(rm.ctx, &j, ref) == j.true_milli)
            consistent++;
        /* On another type the rate model scales the job's own truth. */
        if (ok) {
            model_zoo_truth ta;
            model_zoo_truth_of(zoo, &zj, a100, &ta);
            CHECK_NEAR(rm.throughput(rm.ctx, &j, a100), t.iter_s / ta.iter_s, 1e-12);
            double dm = round(ta.util_milli * j.true_milli / t.util_milli);
            dm = dm < 1 ? 1 : dm > 1000 ? 1000 : dm;
            CHECK(rm.demand(rm.ctx, &j, a100) == (uint32_t)dm);
        }
    }
    printf("annotator: %d of %d within 15%% of the target demand\n", close, n);
    CHECK(close >= n * 9 / 10);
    CHECK(consistent == n);
    CHECK(ann.annotated == (uint64_t)n);
    /* Jobs already carrying features, and CPU-only jobs, are left alone. */
    job_spec j;
    memset(&j, 0, sizeof j);
    j.num_gpus = 1;
    j.true_milli = j.gpu_milli = 400;
    j.attr_present = (UINT64_C(1) << SIM_ATTR_ITERATIONS) | (UINT64_C(1) << SIM_ATTR_INPUT_SIZE);
    job_spec copy = j;
    model_zoo_annotate(&ann, &j, r);
    CHECK(memcmp(&j, &copy, sizeof j) == 0);
    /* A batch size alone (a generated command's) is not a feature set: such a job is
     * annotated. */
    job_spec b = j;
    b.attr_present = UINT64_C(1) << SIM_ATTR_BATCH_SIZE;
    b.work_s = 600;
    model_zoo_annotate(&ann, &b, r);
    CHECK(job_spec_has(&b, SIM_ATTR_ITERATIONS) && job_spec_has(&b, SIM_ATTR_OP_CONV2D));
    j.attr_present = 0;
    j.num_gpus = 0;
    copy = j;
    model_zoo_annotate(&ann, &j, r);
    CHECK(memcmp(&j, &copy, sizeof j) == 0);
    /* A job of no zoo class runs at its trace figures. */
    j.num_gpus = 1;
    CHECK(rm.throughput(rm.ctx, &j, a100) == 1.0);
    CHECK(rm.demand(rm.ctx, &j, a100) == 400);
    /* draw_over: a job whose truth equals its request gets a smaller demand. */
    ann.draw_over = true;
    int smaller = 0;
    for (int i = 0; i < 100; i++) {
        memset(&j, 0, sizeof j);
        j.num_gpus = 1;
        j.gpu_milli = j.true_milli = 800;
        j.work_s = 600;
        model_zoo_annotate(&ann, &j, r);
        smaller += j.true_milli < 800;
    }
    CHECK(smaller >= 80);
    gsl_rng_free(r);
    sim_intern_destroy(models);
}

int main(void)
{
    gsl_set_error_handler_off();
    sim_diag d = {0};
    if (model_catalog_load(&cat, SIM_SOURCE_DIR "/models/data/gpus.csv", &d) != SIM_OK ||
        model_zoo_create(&zoo, cat, &d) != SIM_OK) {
        fprintf(stderr, "setup: %s\n", d.msg);
        return 1;
    }
    golden();
    calibration();
    samples();
    annotate_and_rate();
    model_zoo_destroy(zoo);
    model_catalog_destroy(cat);
    return check_done();
}
