/*
 * test_ibench.c: the interference microbenchmark. The harness, driven by a fake
 * backend with known rates, writes the hand-computed medians, slowdowns and spreads;
 * the real CPU backend (a short run: its figures are not asserted, timings on a
 * shared machine are noisy) writes a valid CSV that `clustersim calibrate` accepts;
 * bad options are refused, a bad kernel or mode list before the output is touched, and a
 * failed or interrupted run leaves the file that was at the output path as it was.
 */
#include "bench/interference/ib.h"
#include "models/calibrate.h"
#include "base/csvin.h"

#include "check.h"

#include <gsl/gsl_errno.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- A fake backend: kernel a (100 units/s alone), kernel b (40). Trial t of every
 * run multiplies its rates by 1.0, 1.2, 0.9 in turn. ---------------------------------- */

static const ib_kernel_info fake_kernels[2] = {{"a", "sm", "X/s"}, {"b", "mem", "Y/s"}};
static const char *const fake_modes[] = {"m1", "m2", NULL};

typedef struct fake_ctx {
    unsigned calls[256];
} fake_ctx;

static int fake_run(void *ctxp, const char *mode, const uint32_t *ks, uint32_t n, double warmup,
                    double seconds, double *rates, char *err, size_t errsz)
{
    (void)mode, (void)warmup, (void)seconds, (void)err, (void)errsz;
    fake_ctx *c = ctxp;
    static const double trial[3] = {1.0, 1.2, 0.9};
    unsigned key = n == 1 ? ks[0] : 16 + ks[0] * 4 + ks[1];
    double f = trial[c->calls[key]++ % 3];
    if (n == 1) {
        rates[0] = (ks[0] == 0 ? 100 : 40) * f;
    } else if (ks[0] == 0 && ks[1] == 0) {
        rates[0] = 50 * f;
        rates[1] = 60 * f;
    } else if (ks[0] == 0) {
        rates[0] = 80 * f;
        rates[1] = 20 * f;
    } else {
        rates[0] = rates[1] = 10 * f;
    }
    return 0;
}

static void test_harness(void)
{
    fake_ctx ctx = {{0}};
    ib_backend b = {.name = "fake",
                    .n_kernels = 2,
                    .kernels = fake_kernels,
                    .modes = fake_modes,
                    .ctx = &ctx,
                    .run = fake_run};
    snprintf(b.device, sizeof b.device, "Fake, Inc. device");
    snprintf(b.driver, sizeof b.driver, "1.0");
    FILE *csv = fopen("fake_bench.csv", "w");
    FILE *sum = fopen("fake_summary.txt", "w");
    ib_options o = {.seconds = 1, .warmup_s = 0, .trials = 3, .csv = csv, .summary = sum};
    char err[256] = "";
    CHECK(ib_measure(&b, &o, err, sizeof err) == 0);
    fclose(csv);
    fclose(sum);
    /* Solo medians: a 100, b 40. (a,a): both copies average 55 f -> median 55, slowdown
     * 100/55, spread (66 - 49.5)/55 = 0.3. (a,b): a 80 (1.25), b 20 (2). (b,b): 10 (4). */
    char *s = check_slurp("fake_bench.csv", NULL);
    CHECK_STR(s, "backend,device,driver,mode,kernel,resource,partner,partner_resource,unit,"
                 "solo_rate,corun_rate,slowdown,trials,spread\n"
                 "fake,\"Fake, Inc. device\",1.0,m1,a,sm,a,sm,X/s,100,55,1.81818,3,0.3\n"
                 "fake,\"Fake, Inc. device\",1.0,m1,a,sm,b,mem,X/s,100,80,1.25,3,0.3\n"
                 "fake,\"Fake, Inc. device\",1.0,m1,b,mem,a,sm,Y/s,40,20,2,3,0.3\n"
                 "fake,\"Fake, Inc. device\",1.0,m1,b,mem,b,mem,Y/s,40,10,4,3,0.3\n");
    free(s);
    s = check_slurp("fake_summary.txt", NULL);
    CHECK_STR(s, "fake backend, mode m1, Fake, Inc. device (1.0): solo rate, and slowdown of the "
                 "row kernel beside the column kernel (median of 3 trials)\n"
                 "kernel             solo        a        b\n"
                 "a               100 X/s    1.818    1.250\n"
                 "b                40 Y/s    2.000    4.000\n\n");
    free(s);

    /* Calibrating the fake CSV: C[sm][sm] = 0.81818, C[sm][mem] = 0.25, C[mem][sm] = 1,
     * C[mem][mem] = 3. */
    model_calib cal;
    sim_diag d = {0};
    CHECK(model_calibrate("fake_bench.csv", NULL, &cal, &d) == SIM_OK);
    CHECK_NEAR(cal.C.c[MODEL_RES_SM][MODEL_RES_SM], 0.81818, 1e-9);
    CHECK_NEAR(cal.C.c[MODEL_RES_SM][MODEL_RES_MEM], 0.25, 1e-12);
    CHECK_NEAR(cal.C.c[MODEL_RES_MEM][MODEL_RES_SM], 1.0, 1e-12);
    CHECK_NEAR(cal.C.c[MODEL_RES_MEM][MODEL_RES_MEM], 3.0, 1e-12);
    CHECK(!cal.measured[MODEL_RES_L2][MODEL_RES_SM]);

    csv = fopen("fake_bench.csv", "w");
    ib_options bad = {.modes = "m3", .seconds = 1, .trials = 1, .csv = csv};
    CHECK(ib_measure(&b, &bad, err, sizeof err) == -1);
    CHECK_STR(err, "unknown mode 'm3' for the fake backend (known: m1, m2)");
    bad.modes = NULL;
    bad.kernels = "a,c";
    CHECK(ib_measure(&b, &bad, err, sizeof err) == -1);
    CHECK_STR(err, "unknown kernel 'c' for the fake backend (known: a, b)");
    bad.kernels = NULL;
    bad.trials = 0;
    CHECK(ib_measure(&b, &bad, err, sizeof err) == -1);
    CHECK_STR(err, "trials must be 1..100");
    fclose(csv);
}

/* ---- The real CPU backend -------------------------------------------------------------- */

static void test_cpu_backend(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' --backend cpu --seconds 0.05 --warmup 0.02 --trials 2 --out ibench_cpu.csv "
             "> ibench_cpu.txt",
             IB_BINARY);
    CHECK_EQ_I64(check_system(cmd), 0);
    csvin *in;
    sim_diag d = {0};
    CHECK(csvin_open(&in, "ibench_cpu.csv", ',', &d) == SIM_OK);
    csvin_row row;
    CHECK(csvin_next(in, &row, &d) == 1);
    static const char *const kernels[3] = {"alu", "stream", "cache"};
    static const char *const res[3] = {"sm", "mem", "l2"};
    int seen[3][3] = {{0}}, rows = 0, bad = 0;
    while (csvin_next(in, &row, &d) == 1) {
        rows++;
        if (row.n != 14) {
            bad++;
            continue;
        }
        int k = -1, p = -1;
        for (int i = 0; i < 3; i++) {
            if (!strcmp(row.f[4], kernels[i]))
                k = i;
            if (!strcmp(row.f[6], kernels[i]))
                p = i;
        }
        double solo, co, slow;
        uint64_t trials;
        if (k < 0 || p < 0 || strcmp(row.f[0], "cpu") || strcmp(row.f[3], "threads") ||
            strcmp(row.f[5], res[k]) || strcmp(row.f[7], res[p]) ||
            !csvin_parse_double(row.f[9], row.len[9], &solo) ||
            !csvin_parse_double(row.f[10], row.len[10], &co) ||
            !csvin_parse_double(row.f[11], row.len[11], &slow) ||
            !csvin_parse_u64(row.f[12], row.len[12], &trials) || !(solo > 0) || !(co > 0) ||
            fabs(slow - solo / co) > 1e-4 * slow || trials != 2) {
            bad++;
            continue;
        }
        seen[k][p]++;
    }
    csvin_close(in);
    CHECK_EQ_I64(rows, 9);
    CHECK_EQ_I64(bad, 0);
    int pairs = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            pairs += seen[i][j] == 1;
    CHECK_EQ_I64(pairs, 9);
    char *txt = check_slurp("ibench_cpu.txt", NULL);
    CHECK(txt && strstr(txt, "cpu backend, mode threads"));
    free(txt);

    snprintf(cmd, sizeof cmd,
             "'%s' calibrate --from ibench_cpu.csv --out ibench_contention.csv > ibench_cal.txt",
             SIM_BINARY);
    CHECK_EQ_I64(check_system(cmd), 0);
    model_contention C;
    CHECK(model_contention_load(&C, "ibench_contention.csv", &d) == SIM_OK);

    snprintf(cmd, sizeof cmd, "'%s' --backend gpu --out x.csv 2> ibench_err.txt", IB_BINARY);
    CHECK_EQ_I64(check_system(cmd), 2);
    txt = check_slurp("ibench_err.txt", NULL);
    CHECK_STR(txt, "interference_bench: error: unknown backend 'gpu' (known: cpu, cuda)\n");
    free(txt);
    snprintf(cmd, sizeof cmd, "'%s' --backend cpu --trials 0 --out x.csv 2> ibench_err.txt",
             IB_BINARY);
    CHECK_EQ_I64(check_system(cmd), 2);
    txt = check_slurp("ibench_err.txt", NULL);
    CHECK_STR(txt, "interference_bench: error: option --trials: bad value \"0\"\n");
    free(txt);
}

/* True when dir holds no temporary output (base/outfile.c names them "*.tmp.<pid>"). */
static bool no_temporaries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q '\\.tmp\\.'", dir);
    return check_system(cmd) != 0;
}

/* A bad --kernels or --modes list is a usage error found before the output is opened;
 * the file already at the path stays. */
static void test_keeps_output(void)
{
    static const struct {
        const char *opts, *err;
    } cases[] = {
        {"--kernels bogus",
         "interference_bench: error: option --kernels: unknown kernel 'bogus' for the cpu "
         "backend (known: alu, stream, cache)\n"},
        {"--kernels ,alu",
         "interference_bench: error: option --kernels: unknown kernel '' for the cpu "
         "backend (known: alu, stream, cache)\n"},
        {"--modes thread",
         "interference_bench: error: option --modes: unknown mode 'thread' for the cpu "
         "backend (known: threads)\n"},
    };
    check_system("rm -rf ibench_keep && mkdir ibench_keep");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        check_put("ibench_keep/x.csv", "previous results\n");
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "'%s' --backend cpu %s --out ibench_keep/x.csv > /dev/null 2> ibench_err.txt",
                 IB_BINARY, cases[k].opts);
        CHECK_EQ_I64(check_system(cmd), 2);
        char *txt = check_slurp("ibench_err.txt", NULL);
        CHECK_STR(txt, cases[k].err);
        free(txt);
        txt = check_slurp("ibench_keep/x.csv", NULL);
        CHECK_STR(txt, "previous results\n");
        free(txt);
    }
    CHECK(no_temporaries("ibench_keep"));

    /* --device and --mig do nothing on the CPU backend: a note says so, the run goes on. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' --backend cpu --device 1 --mig a,b --kernels alu --seconds 0.01 --warmup 0 "
             "--trials 1 --out ibench_keep/x.csv > /dev/null 2> ibench_err.txt",
             IB_BINARY);
    CHECK_EQ_I64(check_system(cmd), 0);
    char *txt = check_slurp("ibench_err.txt", NULL);
    CHECK_STR(txt, "interference_bench: note: --device and --mig apply to the CUDA backend "
                   "only; ignored with --backend cpu\n");
    free(txt);
    txt = check_slurp("ibench_keep/x.csv", NULL);
    CHECK(txt && !strncmp(txt, ib_csv_header, strlen(ib_csv_header)));
    free(txt);

    /* Interrupted part-way: the previous file is whole and no temporary is left. */
    check_put("ibench_keep/x.csv", "previous results\n");
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(IB_BINARY, IB_BINARY, "--backend", "cpu", "--kernels", "alu", "--seconds", "30",
              "--warmup", "0", "--trials", "1", "--out", "ibench_keep/x.csv", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 250 && no_temporaries("ibench_keep"); i++)
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    txt = check_slurp("ibench_keep/x.csv", NULL);
    CHECK_STR(txt, "previous results\n");
    free(txt);
    CHECK(no_temporaries("ibench_keep"));
}

int main(void)
{
    gsl_set_error_handler_off();
    test_harness();
    test_cpu_backend();
    test_keeps_output();
    return check_done();
}
