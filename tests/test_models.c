/*
 * test_models.c: the GPU models. The shipped tables re-derive byte for byte from
 * ../shared/data; every trace GPU label resolves in the catalog; golden values of the
 * throughput lookups and roofline estimate (hand-computed on a synthetic catalog), of
 * the contention formula and of the measured-pair lookup; the hold-out error of the
 * roofline on the shipped measurements; the interference fit recovers a synthetic
 * model and beats the naive baselines on Gavel's pairs; calibration recovers known
 * coefficients; bad tables get their exact diagnostics; the rate adapter's hooks.
 */
#include "models/calibrate.h"
#include "models/catalog.h"
#include "models/derive.h"
#include "models/interference.h"
#include "models/rate.h"
#include "models/throughput.h"
#include "base/alloc.h"
#include "base/csvin.h"
#include "base/intern.h"

#include "check.h"

#include <gsl/gsl_errno.h>

#include <stdlib.h>
#include <string.h>

#define FIX SIM_SOURCE_DIR "/tests/fixtures/models/"
#define DATA SIM_SOURCE_DIR "/models/data/"

static char diag_buf[2048];

static const char *diag_str(const sim_diag *d)
{
    return sim_diag_format(d, diag_buf, sizeof diag_buf);
}

/* Run a derivation into a temporary file and compare it with the shipped one. */
static void check_same_file(const char *made, const char *shipped)
{
    size_t la, lb;
    char *a = check_slurp(made, &la), *b = check_slurp(shipped, &lb);
    CHECK(a && b);
    if (a && b) {
        CHECK_EQ_I64(la, lb);
        CHECK(la == lb && memcmp(a, b, la) == 0);
    }
    free(a);
    free(b);
}

static void test_derived_tables(void)
{
    char specs[1024], labels[1024], iso[1024], colo[1024], pollux[1024];
    if (!check_shared("gpu_specs/gpu_specs.csv", specs, sizeof specs) ||
        !check_shared("gpu_specs/trace_gpu_label_map.csv", labels, sizeof labels) ||
        !check_shared("gavel/gavel_simulation_isolated_throughputs.csv", iso, sizeof iso) ||
        !check_shared("gavel/gavel_simulation_colocated_throughputs.csv", colo, sizeof colo) ||
        !check_shared("pollux_adaptdl/traces", pollux, sizeof pollux))
        return;
    sim_diag d = {0};
    FILE *f = fopen("derived_gpus.csv", "w");
    CHECK(f && model_derive_catalog(specs, labels, DATA "gpu_names.csv", f, &d) == SIM_OK);
    fclose(f);
    check_same_file("derived_gpus.csv", DATA "gpus.csv");

    model_catalog *cat;
    CHECK(model_catalog_load(&cat, DATA "gpus.csv", &d) == SIM_OK);
    f = fopen("derived_steps.csv", "w");
    CHECK(model_derive_gavel_steps(iso, cat, f, &d) == SIM_OK);
    fclose(f);
    check_same_file("derived_steps.csv", DATA "gavel_steps.csv");
    f = fopen("derived_pairs.csv", "w");
    CHECK(model_derive_gavel_pairs(colo, cat, f, &d) == SIM_OK);
    fclose(f);
    check_same_file("derived_pairs.csv", DATA "gavel_pairs.csv");
    f = fopen("derived_pollux.csv", "w");
    CHECK(model_derive_pollux_steps(pollux, cat, f, &d) == SIM_OK);
    fclose(f);
    check_same_file("derived_pollux.csv", DATA "pollux_steps.csv");

    /* Every single-token label of every staged trace names a catalog type. */
    csvin *in;
    csvin_row row;
    CHECK(csvin_open(&in, labels, ',', &d) == SIM_OK);
    int n = 0, unknown = 0;
    CHECK(csvin_next(in, &row, &d) == 1); /* header */
    while (csvin_next(in, &row, &d) == 1) {
        const char *l = row.f[1];
        if (strpbrk(l, "( /"))
            continue;
        n++;
        if (sim_intern_find(model_catalog_names(cat), l, strlen(l)) == SIM_INTERN_NONE) {
            unknown++;
            fprintf(stderr, "label %s is not in the catalog\n", l);
        }
    }
    csvin_close(in);
    CHECK(n >= 20);
    CHECK_EQ_I64(unknown, 0);
    model_catalog_destroy(cat);
}

static void test_derive_catalog_small(void)
{
    sim_diag d = {0};
    FILE *f = fopen("small_gpus.csv", "w");
    CHECK(model_derive_catalog(FIX "specs_small.csv", FIX "labels_good.csv", FIX "names_small.csv",
                               f, &d) == SIM_OK);
    fclose(f);
    char *s = check_slurp("small_gpus.csv", NULL);
    /* X16 takes the spec id (first row of AX1) and its claimed label; Y takes the only
     * label of BY2; "(all)" names no GPU and is skipped; FP16 is the tensor figure. */
    CHECK_STR(s, "name,aliases,spec_id,compute_capability,sm_count,memory_mib,mem_bandwidth_gbs,"
                 "fp32_tflops,fp16_tflops,assumed\n"
                 "X16,AX1|xa,AX1,7.0,80,16384,900,15.7,125,0\n"
                 "X32,,AX1,7.0,80,32768,900,15.7,125,0\n"
                 "Y,BY2|ybig,BY2,8.0,108,40960,1555,19.5,312,0\n");
    free(s);

    f = fopen("small_gpus.csv", "w");
    CHECK(model_derive_catalog(FIX "specs_small.csv", FIX "labels_undisclosed.csv",
                               FIX "names_small.csv", f, &d) == SIM_EPARSE);
    fclose(f);
    CHECK_STR(diag_str(&d), FIX "labels_undisclosed.csv:3: error: label 'G9' of trace1 names an "
                                "undisclosed GPU: add a row named 'G9' (assumed=1) to " FIX
                                "names_small.csv or claim the label in a row's 'labels'");
    f = fopen("small_gpus.csv", "w");
    CHECK(model_derive_catalog(FIX "specs_small.csv", FIX "labels_ambiguous.csv",
                               FIX "names_small.csv", f, &d) == SIM_EPARSE);
    fclose(f);
    CHECK_STR(diag_str(&d), FIX "labels_ambiguous.csv:3: error: label 'xb' of trace2 maps to "
                                "spec 'AX1', which several types use (X16, X32): claim it in one "
                                "row's 'labels' in " FIX "names_small.csv");
}

static void test_throughput_golden(void)
{
    sim_diag d = {0};
    model_catalog *cat;
    CHECK(model_catalog_load(&cat, FIX "catalog3.csv", &d) == SIM_OK);
    const char *paths[] = {FIX "steps3.csv"};
    model_throughput *tp;
    CHECK(model_throughput_create(&tp, cat, paths, 1, SIM_GPU_TYPE_NONE, &d) == SIM_OK);
    uint16_t TA = 1, TB = 2, TC = 3;
    /* X follows tau(t) = 1/F + 1/(I B) with I = 0.02 TFLOP/GB (20 FLOP/byte) and scale
     * 2.385: tau(TA) = 1/10 + 1/(0.02*500) = 0.2, tau(TB) = 0.05 + 0.0625 = 0.1125,
     * tau(TC) = 0.2 + 0.2 = 0.4. The fit must find I and estimate TC = 2.385/0.4. */
    CHECK_NEAR(model_throughput_intensity(tp), 20.0, 1e-6);
    uint32_t X = model_throughput_class_find(tp, "X", 1),
             Y = model_throughput_class_find(tp, "y", 1);
    CHECK(X != MODEL_CLASS_NONE && Y != MODEL_CLASS_NONE);
    CHECK_EQ_I64(model_throughput_class_find(tp, "W", 1), MODEL_CLASS_NONE);
    bool meas;
    CHECK_NEAR(model_throughput_steps(tp, X, TA, &meas), 11.925, 1e-12);
    CHECK(meas);
    CHECK_NEAR(model_throughput_steps(tp, X, TC, &meas), 5.9625, 1e-6);
    CHECK(!meas);
    /* Y is measured only on TC (3.0 steps/s): TA gets 3.0 * tau(TC)/tau(TA) = 6.0. */
    CHECK_NEAR(model_throughput_steps(tp, Y, TA, NULL), 6.0, 1e-6);
    CHECK_NEAR(model_throughput_ratio(tp, X, TB, TA), 21.2 / 11.925, 1e-12);
    /* An unknown class takes the global roofline: tau(TA)/tau(TC) = 0.5. */
    CHECK_NEAR(model_throughput_ratio(tp, MODEL_CLASS_NONE, TC, TA), 0.5, 1e-6);
    /* X's own split fits exactly: a step takes tau/2.385 s, so alpha = 1/2.385 TFLOP and
     * beta = alpha/0.02 GB; on TA the compute and memory terms are equal (0.1/2.385 s
     * each), on TB they are 0.05 and 0.0625 (over 2.385): 0.05/0.1125 = 4/9. */
    double a, b;
    model_throughput_class_fit(tp, X, &a, &b);
    CHECK_NEAR(a, 1 / 2.385, 1e-6);
    CHECK_NEAR(b, 1 / 2.385 / 0.02, 1e-6);
    CHECK_NEAR(model_throughput_compute_frac(tp, X, TA), 0.5, 1e-6);
    CHECK_NEAR(model_throughput_compute_frac(tp, X, TB), 4.0 / 9.0, 1e-6);
    model_throughput_destroy(tp);

    /* Holding out TC of exact roofline data loses nothing. */
    const char *hp[] = {FIX "steps3_holdout.csv"};
    model_throughput_holdout h;
    CHECK(model_throughput_eval_holdout(cat, hp, 1, TC, &h, &d) == SIM_OK);
    CHECK_EQ_I64(h.n, 2);
    CHECK(h.mape < 1e-6);
    CHECK_NEAR(h.intensity, 20.0, 1e-6);

    const char *bad1[] = {FIX "bad_steps_type.csv"};
    CHECK(model_throughput_create(&tp, cat, bad1, 1, SIM_GPU_TYPE_NONE, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_steps_type.csv:3:3: error: field 'gpu_type': expected a GPU "
                                "type of the catalog (TA, TB, TC), got \"TZ\"");
    const char *bad2[] = {FIX "bad_steps_twice.csv"};
    CHECK(model_throughput_create(&tp, cat, bad2, 1, SIM_GPU_TYPE_NONE, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_steps_twice.csv:3:4: error: field 'steps_per_sec': expected "
                                "one measurement per job type and GPU type (X is measured twice "
                                "on TA), got \"12\"");
    model_catalog_destroy(cat);
}

static void test_throughput_shipped(void)
{
    sim_diag d = {0};
    model_catalog *cat;
    CHECK(model_catalog_load(&cat, DATA "gpus.csv", &d) == SIM_OK);
    model_throughput *tp;
    CHECK(model_throughput_create_default(&tp, cat, &d) == SIM_OK);
    const sim_intern *names = model_catalog_names(cat);
    uint16_t k80 = (uint16_t)sim_intern_find(names, "K80", 3);
    uint16_t p100 = (uint16_t)sim_intern_find(names, "P100", 4);
    uint16_t v100 = (uint16_t)sim_intern_find(names, "V100M16", 7);
    uint16_t t4 = (uint16_t)sim_intern_find(names, "T4", 2);
    /* Gavel's measured A3C (steps/s, gavel_simulation_isolated_throughputs.csv). */
    uint32_t a3c = model_throughput_class_find(tp, "A3C", 3);
    bool meas;
    CHECK_NEAR(model_throughput_steps(tp, a3c, k80, &meas), 3.43876782907, 1e-12);
    CHECK(meas);
    CHECK_NEAR(model_throughput_ratio(tp, a3c, k80, v100), 3.43876782907 / 7.17576717967, 1e-12);
    /* Pollux: cifar10 at local batch 1024 takes 0.7020925283432007 s per step on T4. */
    uint32_t cifar = model_throughput_class_find(tp, "cifar10", 7);
    CHECK_NEAR(model_throughput_steps(tp, cifar, t4, &meas), 1.0 / 0.7020925283432007, 1e-11);
    CHECK(meas);
    CHECK_EQ_I64(model_throughput_class_count(tp), 32);
    model_throughput_destroy(tp);

    /* Hold-out of P100 (interpolated between K80 and V100): the roofline must stay
     * within 40 % mean absolute percentage error (it measures 33.6 %). */
    char gavel[1100], pollux[1100];
    snprintf(gavel, sizeof gavel, "%s", DATA "gavel_steps.csv");
    snprintf(pollux, sizeof pollux, "%s", DATA "pollux_steps.csv");
    const char *paths[] = {gavel, pollux};
    model_throughput_holdout h;
    CHECK(model_throughput_eval_holdout(cat, paths, 2, p100, &h, &d) == SIM_OK);
    CHECK_EQ_I64(h.n, 26);
    printf("throughput hold-out P100: %u classes, MAPE %.1f %%, max %.1f %% (FP32-only %.1f %%, "
           "bandwidth-only %.1f %%)\n",
           h.n, 100 * h.mape, 100 * h.max_ape, 100 * h.mape_compute_only, 100 * h.mape_bw_only);
    CHECK(h.mape > 0 && h.mape < 0.40);
    CHECK(model_throughput_eval_holdout(cat, paths, 2, k80, &h, &d) == SIM_OK);
    CHECK(h.n == 26 && h.mape < 0.60);
    model_catalog_destroy(cat);
}

static void test_contention_golden(void)
{
    model_contention C = {{{0}}};
    C.c[MODEL_RES_SM][MODEL_RES_SM] = 0.5;
    C.c[MODEL_RES_SM][MODEL_RES_MEM] = 0.25;
    C.c[MODEL_RES_MEM][MODEL_RES_SM] = 0.125;
    C.c[MODEL_RES_MEM][MODEL_RES_MEM] = 1.5;
    model_profile self = {.u = {0.6, 0.4, 0, 0}, .sens = 1.2, .press = 1};
    model_profile others[2] = {{.u = {0.3, 0.7, 0, 0}, .sens = 1, .press = 0.8},
                               {.u = {1, 0, 0, 0}, .sens = 1, .press = 2.385}};
    double act[2] = {0.75, 0.25};
    /* u_self^T C u_0 = 0.6 (0.5*0.3 + 0.25*0.7) + 0.4 (0.125*0.3 + 1.5*0.7) = 0.63, so
     * x = 1.2 * 0.75 * 0.8 * 0.63 = 0.4536; u_self^T C u_1 = 0.6*0.5 + 0.4*0.125 = 0.35
     * adds 1.2 * 0.25 * 2.385 * 0.35 = 0.250425. */
    CHECK_NEAR(model_contention_excess(&C, &self, others, act, 1), 0.4536, 1e-12);
    CHECK_NEAR(model_contention_excess(&C, &self, others, act, 2), 0.704025, 1e-12);
    CHECK_NEAR(model_contention_excess(&C, &self, others, act, 0), 0.0, 0);
}

static void test_contention_files(void)
{
    model_contention C;
    sim_diag d = {0};
    CHECK(model_contention_load(&C, FIX "bad_contention_resource.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_contention_resource.csv:3:2: error: field 'aggressor': "
                                "expected a resource: sm, mem, l2 or pcie, got \"dram\"");
    CHECK(model_contention_load(&C, FIX "bad_contention_negative.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_contention_negative.csv:3:3: error: field 'coefficient': "
                                "expected a number in [0, 1e+06], got \"-0.2\"");
    CHECK(model_contention_load(&C, FIX "bad_contention_duplicate.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_contention_duplicate.csv:4:2: error: field 'aggressor': "
                                "expected one coefficient per pair (line 2 has sm,sm), got \"sm\"");
    CHECK(model_contention_load(&C, FIX "bad_contention_header.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_contention_header.csv:1: error: missing column 'aggressor'; "
                                "expected the header victim,aggressor,coefficient");
    CHECK(model_contention_load(&C, FIX "bad_contention_empty.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_contention_empty.csv: error: no coefficient row (expected "
                                "rows victim,aggressor,coefficient after the header)");
    CHECK(model_contention_load(&C, FIX "no_such_file.csv", &d) == SIM_EIO);
    /* Round trip. */
    model_contention W = {{{0}}};
    W.c[MODEL_RES_MEM][MODEL_RES_L2] = 0.8125;
    W.c[MODEL_RES_PCIE][MODEL_RES_PCIE] = 2.25;
    FILE *f = fopen("contention_rt.csv", "w");
    CHECK(model_contention_write(&W, f, &d) == SIM_OK);
    fclose(f);
    CHECK(model_contention_load(&C, "contention_rt.csv", &d) == SIM_OK);
    CHECK(memcmp(&C, &W, sizeof C) == 0);
}

static void test_calibrate(void)
{
    /* Known coefficients, two rows per entry at +-0.01: the fit returns their mean. */
    static const char *const res[4] = {"sm", "mem", "l2", "pcie"};
    model_contention truth;
    FILE *f = fopen("synthetic_bench.csv", "w");
    fprintf(f, "backend,device,driver,mode,kernel,resource,partner,partner_resource,unit,"
               "solo_rate,corun_rate,slowdown,trials,spread\n");
    for (int v = 0; v < 4; v++)
        for (int a = 0; a < 4; a++) {
            truth.c[v][a] = 0.0625 * (v + 1) + 0.3125 * a + (v == a ? 0.7 : 0);
            for (int s = -1; s <= 1; s += 2)
                fprintf(f,
                        "cuda,Synthetic GPU,13.0,process,k%d,%s,k%d,%s,GB/s,100,50,%.10f,3,"
                        "0.01\n",
                        v, res[v], a, res[a], 1.0 + truth.c[v][a] + 0.01 * s);
            fprintf(f, "cuda,Synthetic GPU,13.0,streams,k%d,%s,k%d,%s,GB/s,100,80,1.25,3,0.01\n", v,
                    res[v], a, res[a]);
        }
    fclose(f);
    model_calib cal;
    sim_diag d = {0};
    CHECK(model_calibrate("synthetic_bench.csv", NULL, &cal, &d) == SIM_EINVAL);
    CHECK_STR(diag_str(&d), "synthetic_bench.csv: error: the file has several sharing modes "
                            "(process, streams): choose one with --mode");
    CHECK(model_calibrate("synthetic_bench.csv", "mps", &cal, &d) == SIM_EINVAL);
    CHECK_STR(diag_str(&d), "synthetic_bench.csv: error: no row of mode 'mps' (modes: process, "
                            "streams)");
    CHECK(model_calibrate("synthetic_bench.csv", "process", &cal, &d) == SIM_OK);
    CHECK_EQ_I64(cal.rows, 32);
    CHECK_NEAR(cal.rmse, 0.01, 1e-6);
    CHECK_STR(cal.backend, "cuda");
    CHECK_STR(cal.device, "Synthetic GPU");
    int bad = 0;
    for (int v = 0; v < 4; v++)
        for (int a = 0; a < 4; a++)
            bad += fabs(cal.C.c[v][a] - truth.c[v][a]) > 1e-9 || !cal.measured[v][a];
    CHECK_EQ_I64(bad, 0);
    CHECK(model_calibrate("synthetic_bench.csv", "streams", &cal, &d) == SIM_OK);
    CHECK_NEAR(cal.C.c[MODEL_RES_L2][MODEL_RES_PCIE], 0.25, 1e-9);

    CHECK(model_calibrate(FIX "bad_calib_missing_column.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_calib_missing_column.csv:1: error: missing column "
                                "'partner_resource'; expected the header backend,device,driver,"
                                "mode,kernel,resource,partner,partner_resource,unit,solo_rate,"
                                "corun_rate,slowdown,trials,spread");
    CHECK(model_calibrate(FIX "bad_calib_resource.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_calib_resource.csv:3:8: error: field 'partner_resource': "
                                "expected a resource: sm, mem, l2 or pcie, got \"disk\"");
    CHECK(model_calibrate(FIX "bad_calib_slowdown.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_calib_slowdown.csv:2:12: error: field 'slowdown': expected "
                                "a number in [1e-06, 1e+06], got \"fast\"");
    CHECK(model_calibrate(FIX "bad_calib_negative.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_calib_negative.csv:2:12: error: field 'slowdown': expected "
                                "a number in [1e-06, 1e+06], got \"-2\"");
    CHECK(model_calibrate(FIX "bad_calib_modes.csv", NULL, &cal, &d) == SIM_EINVAL);
    CHECK_STR(diag_str(&d), FIX "bad_calib_modes.csv: error: the file has several sharing modes "
                                "(streams, process): choose one with --mode");
    CHECK(model_calibrate(FIX "bad_calib_empty.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), FIX "bad_calib_empty.csv: error: no measurement row");

    /* A row cut short (a truncated file) and a mode name longer than a mode holds (it was
     * cut to 31 characters: two rows of one mode were taken for two modes, and with
     * --mode the fit ran on no row). */
    static const char hdr[] = "backend,device,driver,mode,kernel,resource,partner,"
                              "partner_resource,unit,solo_rate,corun_rate,slowdown,trials,spread\n";
    char text[1024];
    snprintf(text, sizeof text,
             "%scpu,X,k,threads,alu,sm,alu,sm,GFLOP/s,10,9,1.5,2,0.1\n"
             "cpu,X,k,threads,stream,mem,stream,mem,GB/s,10,9,1.0\n",
             hdr);
    check_put("calib_short.csv", text);
    CHECK(model_calibrate("calib_short.csv", NULL, &cal, &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), "calib_short.csv:3:13: error: expected 14 fields, as in the header, "
                            "got 12");
    snprintf(
        text, sizeof text,
        "%scpu,X,k,averyveryverylongsharingmodename_x40,alu,sm,alu,sm,GFLOP/s,10,9,1.5,2,0.1\n",
        hdr);
    check_put("calib_longmode.csv", text);
    CHECK(model_calibrate("calib_longmode.csv", "averyveryverylongsharingmodename_x40", &cal, &d) ==
          SIM_EPARSE);
    CHECK_STR(diag_str(&d),
              "calib_longmode.csv:2:4: error: field 'mode': expected a sharing "
              "mode of 1 to 31 characters, got \"averyveryverylongsharingmodename_x40\"");
    /* A contention row with a field too many. */
    check_put("contention_wide.csv", "victim,aggressor,coefficient\nsm,sm,1,5\n");
    model_contention C;
    CHECK(model_contention_load(&C, "contention_wide.csv", &d) == SIM_EPARSE);
    CHECK_STR(diag_str(&d), "contention_wide.csv:2:4: error: expected 3 fields, as in the "
                            "header, got 4");
}

/* Pairs generated by the model itself: 16 classes on K80 and P100 with known
 * sensitivity, pressure and mix, and a known C. The fit must reproduce held-out pairs. */
enum { NSYN = 16 };

static void test_interference_recovery(const model_catalog *cat, const model_throughput *tp)
{
    static const double s[NSYN] = {0.4, 1.7, 0.9,  2.385, 0.6, 1.1,  1.3, 0.25,
                                   1.9, 0.7, 1.45, 0.55,  2.1, 0.95, 1.6, 0.35};
    static const double p[NSYN] = {1.2,  0.5, 2.0, 0.8, 1.6,  0.35, 1.0,  1.9,
                                   0.65, 1.4, 0.9, 2.2, 0.45, 1.15, 0.75, 1.75};
    static const double w[NSYN] = {0.1, 0.9,  0.5,  0.3,  0.7,  0.2,  0.8,  0.6,
                                   0.4, 0.15, 0.85, 0.55, 0.25, 0.95, 0.05, 0.65};
    const double C[2][2] = {{0.3, 0.1}, {0.2, 1.4}};
    FILE *f = fopen("synthetic_pairs.csv", "w");
    fprintf(f, "gpu_type,job_type_a,job_type_b,speed_a,speed_b\n");
    static const char *const types[2] = {"K80", "P100"};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < NSYN; i++)
            for (int j = i; j < NSYN; j++) {
                double ui[2] = {w[i], 1 - w[i]}, uj[2] = {w[j], 1 - w[j]}, mij = 0, mji = 0;
                for (int v = 0; v < 2; v++)
                    for (int a = 0; a < 2; a++) {
                        mij += ui[v] * C[v][a] * uj[a];
                        mji += uj[v] * C[v][a] * ui[a];
                    }
                double scale = t ? 1.3 : 1.0;
                fprintf(f, "%s,c%d,c%d,%.12f,%.12f\n", types[t], i, j,
                        1 / (1 + scale * s[i] * p[j] * mij), 1 / (1 + scale * s[j] * p[i] * mji));
            }
    fclose(f);
    model_ifit_eval *ev = malloc(sizeof *ev);
    sim_diag d = {0};
    CHECK(model_interference_eval(cat, tp, "synthetic_pairs.csv", 7, 0.2, ev, &d) == SIM_OK);
    printf("synthetic interference fit: train MAE %.4f, held-out MAE %.4f, R2 %.4f\n",
           ev->train_mae, ev->all.mae, ev->all.r2);
    CHECK_EQ_I64(ev->train_pairs + ev->test_pairs, NSYN * (NSYN + 1));
    CHECK(ev->train_mae < 0.02);
    CHECK(ev->all.mae < 0.02);
    CHECK(ev->all.r2 > 0.97);
    free(ev);
}

static void test_interference_shipped(void)
{
    sim_diag d = {0};
    model_catalog *cat;
    CHECK(model_catalog_load(&cat, DATA "gpus.csv", &d) == SIM_OK);
    model_throughput *tp;
    CHECK(model_throughput_create_default(&tp, cat, &d) == SIM_OK);
    model_interference *im;
    CHECK(model_interference_create_default(&im, cat, tp, &d) == SIM_OK);
    const sim_intern *names = model_catalog_names(cat);
    uint16_t k80 = (uint16_t)sim_intern_find(names, "K80", 3);
    uint16_t t4 = (uint16_t)sim_intern_find(names, "T4", 2);
    uint32_t a3c = model_interference_class_find(im, "A3C", 3);
    uint32_t cyc = model_interference_class_find(im, "CycleGAN", 8);
    uint32_t bert = model_interference_class_find(im, "bert", 4);
    CHECK(a3c != MODEL_ICLASS_NONE && cyc != MODEL_ICLASS_NONE && bert != MODEL_ICLASS_NONE);
    /* gavel_pairs.csv: K80,A3C,CycleGAN,0.426232,0.580312. */
    CHECK_NEAR(model_interference_measured(im, a3c, cyc, k80), 0.426232, 1e-12);
    CHECK_NEAR(model_interference_measured(im, cyc, a3c, k80), 0.580312, 1e-12);
    CHECK(isnan(model_interference_measured(im, a3c, cyc, t4)));
    CHECK(isnan(model_interference_measured(im, a3c, bert, k80)));
    bool meas;
    double act = 0.5;
    CHECK_NEAR(model_interference_excess(im, a3c, k80, &cyc, &act, 1, &meas),
               0.5 * (1 / 0.426232 - 1), 1e-12);
    CHECK(meas);
    /* Elsewhere the model: positive, finite, and additive in the residents. */
    double x1 = model_interference_excess(im, a3c, t4, &cyc, &act, 1, &meas);
    CHECK(!meas && x1 > 0 && isfinite(x1));
    uint32_t two[2] = {cyc, cyc};
    double acts[2] = {0.5, 0.5};
    CHECK_NEAR(model_interference_excess(im, a3c, t4, two, acts, 2, NULL), 2 * x1, 1e-12);
    model_interference_set_contention(im, model_interference_contention(im), false);
    CHECK(isnan(model_interference_measured(im, a3c, cyc, k80)));
    model_interference_destroy(im);

    /* Held-out pairs of Gavel: the fitted model beats both naive models. */
    model_ifit_eval *ev = malloc(sizeof *ev);
    CHECK(model_interference_eval(cat, tp, DATA "gavel_pairs.csv", 1, 0.3, ev, &d) == SIM_OK);
    printf("Gavel pairs held out (seed 1): MAE %.3f R2 %.3f; no slowdown MAE %.3f; "
           "time-slicing MAE %.3f\n",
           ev->all.mae, ev->all.r2, ev->all.mae_none, ev->all.mae_slice);
    CHECK_EQ_I64(ev->train_pairs + ev->test_pairs, 976);
    CHECK(ev->all.mae < ev->all.mae_slice && ev->all.mae < ev->all.mae_none);
    CHECK(ev->all.r2 > 0.5);
    free(ev);

    test_interference_recovery(cat, tp);
    model_throughput_destroy(tp);
    model_catalog_destroy(cat);
}

static void test_rate_adapter(void)
{
    sim_diag d = {0};
    model_catalog *cat;
    CHECK(model_catalog_load(&cat, DATA "gpus.csv", &d) == SIM_OK);
    const sim_intern *names = model_catalog_names(cat);
    uint16_t k80 = (uint16_t)sim_intern_find(names, "K80", 3);
    uint16_t v100 = (uint16_t)sim_intern_find(names, "V100M16", 7);
    sim_intern *classes = sim_intern_create(false);
    uint32_t a3c = sim_intern_add(classes, "A3C", 3, 0);
    uint32_t cyc = sim_intern_add(classes, "CycleGAN", 8, 0);
    model_rate_config cfg = {.throughput = true, .interference = MODEL_INTERF_MEASURED};
    model_rate *r;
    CHECK(model_rate_create(&r, cat, classes, &cfg, &d) == SIM_OK);
    sim_rate_model rm;
    model_rate_fill(r, &rm);
    CHECK_STR(rm.name, "throughput=measured ref=job interference=measured");
    CHECK(rm.throughput && rm.interference && !rm.scaling);
    job_spec j = {.model = a3c, .ref_gpu_type = v100, .true_milli = 1000};
    CHECK_NEAR(rm.throughput(rm.ctx, &j, k80), 3.43876782907 / 7.17576717967, 1e-12);
    CHECK_NEAR(rm.throughput(rm.ctx, &j, v100), 1.0, 0);
    j.ref_gpu_type = SIM_GPU_TYPE_NONE;
    CHECK_NEAR(rm.throughput(rm.ctx, &j, k80), 1.0, 0);
    /* Two whole-GPU jobs holding half a K80 each: activity 0.5; the factor is the
     * slowdown beyond fair time-slicing, (1 + 0.5) / (1 + 0.5 (1/speed - 1)). */
    job_spec o = {.model = cyc, .true_milli = 1000};
    sim_resident res = {.job = &o, .milli = 500};
    CHECK_NEAR(rm.interference(rm.ctx, &j, 500, &res, 1, k80), 1.5 / (1 + 0.5 * (1 / 0.426232 - 1)),
               1e-12);
    /* CycleGAN beside A3C runs at 0.580312 > 1/2: no slowdown beyond time-slicing. */
    sim_resident res2 = {.job = &j, .milli = 500};
    CHECK_NEAR(rm.interference(rm.ctx, &o, 500, &res2, 1, k80), 1.0, 0);
    /* A 250-milli neighbour that uses only 100 presses with activity 0.1. */
    o.true_milli = 100;
    res.milli = 250;
    CHECK_NEAR(rm.interference(rm.ctx, &j, 500, &res, 1, k80), 1.1 / (1 + 0.1 * (1 / 0.426232 - 1)),
               1e-12);
    model_rate_destroy(r);

    model_rate_config c2 = {.throughput = true, .default_ref = v100};
    CHECK(model_rate_create(&r, cat, classes, &c2, &d) == SIM_OK);
    model_rate_fill(r, &rm);
    CHECK_STR(rm.name, "throughput=measured ref=V100M16 interference=none");
    CHECK(rm.interference == NULL);
    CHECK_NEAR(rm.throughput(rm.ctx, &j, k80), 3.43876782907 / 7.17576717967, 1e-12);
    model_rate_destroy(r);

    model_rate_config c3 = {.interference = MODEL_INTERF_CALIBRATED,
                            .contention = FIX "bad_contention_negative.csv"};
    CHECK(model_rate_create(&r, cat, classes, &c3, &d) == SIM_EPARSE);
    CHECK(r == NULL);
    sim_intern_destroy(classes);
    model_catalog_destroy(cat);
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds: every failure
 * must be SIM_ENOMEM and leave no block behind. */
static void test_fault_injection(void)
{
    sim_diag d = {0};
    model_catalog *cat;
    CHECK(model_catalog_load(&cat, FIX "catalog3.csv", &d) == SIM_OK);
    sim_intern *classes = sim_intern_create(false);
    const char *steps[] = {FIX "steps3.csv"};
    model_rate_config cfg = {.throughput = true,
                             .steps = steps,
                             .n_steps = 1,
                             .interference = MODEL_INTERF_MEASURED,
                             .pairs = FIX "pairs_small.csv"};
    int wrong = 0, leaks = 0, k;
    for (int which = 0; which < 3; which++) {
        for (k = 1; k < 5000; k++) {
            int64_t live = sim_alloc_live();
            sim_alloc_fail_after((uint64_t)k);
            int st;
            if (which == 0) {
                model_rate *r = NULL;
                st = model_rate_create(&r, cat, classes, &cfg, &d);
                model_rate_destroy(r);
            } else if (which == 1) {
                FILE *f = fopen("fault_gpus.csv", "w");
                st = model_derive_catalog(FIX "specs_small.csv", FIX "labels_good.csv",
                                          FIX "names_small.csv", f, &d);
                fclose(f);
            } else {
                model_calib cal;
                st = model_calibrate(FIX "bad_calib_modes.csv", "process", &cal, &d);
            }
            sim_alloc_fail_after(0);
            leaks += sim_alloc_live() != live;
            if (st == SIM_OK)
                break;
            wrong += st != SIM_ENOMEM;
        }
        CHECK(k > 1 && k < 5000);
    }
    CHECK_EQ_I64(wrong, 0);
    CHECK_EQ_I64(leaks, 0);
    sim_intern_destroy(classes);
    model_catalog_destroy(cat);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_derived_tables();
    test_derive_catalog_small();
    test_throughput_golden();
    test_throughput_shipped();
    test_contention_golden();
    test_contention_files();
    test_calibrate();
    test_interference_shipped();
    test_rate_adapter();
    test_fault_injection();
    return check_done();
}
