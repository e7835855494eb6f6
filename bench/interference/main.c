/*
 * main.c: `interference_bench` — runs the interference microbenchmark on a backend and
 * writes its CSV (input of `clustersim calibrate`) and a summary table. See ib.h and
 * README "Interference microbenchmark". Every option, the kernel and mode lists
 * included, is checked before the output is touched; the CSV is written under a
 * temporary name beside it and renamed into place only when the whole run succeeded
 * (base/outfile.h), so a failed or interrupted run leaves a previous file as it was.
 */
#include "bench/interference/ib.h"
#include "base/outfile.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: interference_bench --out FILE.csv [options]\n"
    "  --backend NAME    cpu or cuda (default: cuda when built with CUDA, else cpu)\n"
    "  --modes LIST      comma-separated; cpu: threads; cuda: streams, process, mps, mig\n"
    "                    (default: the backend's first)\n"
    "  --kernels LIST    cpu: alu, stream, cache; cuda: fma, tensor, copy, l2, pcie\n"
    "                    (default: all)\n"
    "  --seconds T       measured time of each run (default 2)\n"
    "  --warmup T        warm-up before each run (default 0.5)\n"
    "  --trials N        repetitions of each run (default 3)\n"
    "  --threads N       cpu: threads per kernel (default 1)\n"
    "  --device N        cuda: device index (default 0)\n"
    "  --mig UUID,UUID   cuda mode mig: the two MIG instances the kernels run on\n";

static pid_t main_pid;

static void remove_tmp_and_die(int sig)
{
    /* The CUDA backend's forked children inherit this handler; only the process that
     * writes the CSV removes its temporary. */
    if (getpid() == main_pid)
        sim_outfile_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Remove the temporary CSV on SIGINT, SIGTERM and SIGHUP (unless they are ignored). */
static void cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    main_pid = getpid();
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction old, sa = {.sa_handler = remove_tmp_and_die};
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[k], &sa, NULL);
    }
}

static bool parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= min && v <= max))
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
#ifdef IB_HAVE_CUDA
    const char *backend = "cuda";
#else
    const char *backend = "cpu";
#endif
    const char *out = NULL, *mig = NULL;
    ib_options o = {.seconds = 2, .warmup_s = 0.5, .trials = 3};
    double threads = 1, device = 0, trials = 3;
    bool device_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "interference_bench: error: unknown option or missing value '%s'\n%s",
                    a, usage);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--modes"))
            o.modes = v;
        else if (!strcmp(a, "--kernels"))
            o.kernels = v;
        else if (!strcmp(a, "--mig"))
            mig = v;
        else if (!strcmp(a, "--seconds"))
            ok = parse_double(v, 1e-3, 3600, &o.seconds);
        else if (!strcmp(a, "--warmup"))
            ok = parse_double(v, 0, 3600, &o.warmup_s);
        else if (!strcmp(a, "--trials"))
            ok = parse_double(v, 1, IB_MAX_TRIALS, &trials) && trials == (uint32_t)trials;
        else if (!strcmp(a, "--threads"))
            ok = parse_double(v, 1, 64, &threads) && threads == (uint32_t)threads;
        else if (!strcmp(a, "--device")) {
            ok = parse_double(v, 0, 64, &device) && device == (int)device;
            device_given = true;
        } else {
            fprintf(stderr, "interference_bench: error: unknown option '%s'\n%s", a, usage);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "interference_bench: error: option %s: bad value \"%s\"\n", a, v);
            return 2;
        }
    }
    o.trials = (uint32_t)trials;
    if (!out) {
        fprintf(stderr, "interference_bench: error: --out FILE is required\n%s", usage);
        return 2;
    }
    char err[512] = "";
    ib_backend b;
    int rc;
    if (!strcmp(backend, "cpu")) {
        rc = ib_cpu_init(&b, (uint32_t)threads, err, sizeof err);
    } else if (!strcmp(backend, "cuda")) {
#ifdef IB_HAVE_CUDA
        rc = ib_cuda_init(&b, (int)device, mig, err, sizeof err);
#else
        (void)mig;
        snprintf(err, sizeof err,
                 "this build has no CUDA backend (configure with nvcc found, "
                 "SIM_BUILD_CUDA=ON)");
        rc = -1;
#endif
    } else {
        snprintf(err, sizeof err, "unknown backend '%s' (known: cpu, cuda)", backend);
        rc = -1;
    }
    if (rc) {
        fprintf(stderr, "interference_bench: error: %s\n", err);
        return 2;
    }
    if (!strcmp(b.name, "cpu") && (device_given || mig))
        fprintf(stderr,
                "interference_bench: note: %s%s%s %s to the CUDA backend only; ignored with "
                "--backend cpu\n",
                device_given ? "--device" : "", device_given && mig ? " and " : "",
                mig ? "--mig" : "", device_given && mig ? "apply" : "applies");
    /* A typo in a list is a usage error, found before the output is opened. */
    uint32_t sel[IB_MAX_KERNELS], n_sel;
    const char *bad_opt = NULL;
    if (ib_select(&b, o.modes, true, sel, &n_sel, err, sizeof err))
        bad_opt = "--modes";
    else if (ib_select(&b, o.kernels, false, sel, &n_sel, err, sizeof err))
        bad_opt = "--kernels";
    if (bad_opt) {
        fprintf(stderr, "interference_bench: error: option %s: %s\n", bad_opt, err);
        if (b.fini)
            b.fini(b.ctx);
        return 2;
    }
    sim_diag d = {0};
    char msg[1400];
    sim_outfile of = {.fd = -1};
    cleanup_on_signals();
    if (sim_outfile_open(&of, out, &d) != SIM_OK) {
        fprintf(stderr, "interference_bench: %s\n", sim_diag_format(&d, msg, sizeof msg));
        if (b.fini)
            b.fini(b.ctx);
        return 1;
    }
    o.csv = sim_outfile_stream(&of, &d);
    o.summary = stdout;
    rc = -1;
    if (!o.csv)
        sim_diag_format(&d, msg, sizeof msg);
    else if (ib_measure(&b, &o, err, sizeof err) == 0)
        rc = 0;
    else
        snprintf(msg, sizeof msg, "error: %s", err);
    if (b.fini)
        b.fini(b.ctx);
    /* Only a complete CSV replaces what was at the path; a failure removes the temporary. */
    if (sim_outfile_close(&of, rc == 0, 0, &d) != SIM_OK && rc == 0) {
        sim_diag_format(&d, msg, sizeof msg);
        rc = -1;
    }
    if (rc) {
        fprintf(stderr, "interference_bench: %s\n", msg);
        return 1;
    }
    return 0;
}
