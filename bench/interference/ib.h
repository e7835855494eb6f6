/*
 * ib.h: the interference microbenchmark harness. A backend runs kernels that each
 * stress one resource (compute, memory bandwidth, L2 cache, host-device copies), alone
 * and two at a time, each for a fixed time after a warm-up; the harness repeats every
 * run `trials` times, takes medians, and writes one CSV row per (kernel, partner) with
 * the solo and co-run rates, the slowdown (solo / co-run) and the spread of the trials
 * ((max - min) / median of the co-run rate). `clustersim calibrate` fits the
 * interference model's contention matrix to that CSV. Backends: cpu (threads, here)
 * and cuda (streams in one process, separate processes, MPS, MIG; cuda.cu).
 */
#ifndef BENCH_IB_H
#define BENCH_IB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IB_MAX_KERNELS 8
#define IB_MAX_TRIALS 100

typedef struct ib_kernel_info {
    const char *name;     /* "fma", "copy", ... */
    const char *resource; /* the resource it stresses: sm, mem, l2 or pcie */
    const char *unit;     /* of its rate: "GFLOP/s", "GB/s", ... */
} ib_kernel_info;

typedef struct ib_backend {
    const char *name; /* "cpu" or "cuda" */
    uint32_t n_kernels;
    const ib_kernel_info *kernels;
    const char *const *modes; /* NULL-terminated; the first is the default */
    char device[256];         /* CPU model or GPU name */
    char driver[64];          /* kernel release or CUDA driver version */
    void *ctx;
    /* Run kernels ks[0..n) (n = 1 or 2; indices into kernels) at the same time in
     * `mode`: warm up for warmup_s, then measure for seconds. rates[i] receives kernel
     * ks[i]'s rate in its unit. Returns 0, or -1 with err filled. */
    int (*run)(void *ctx, const char *mode, const uint32_t *ks, uint32_t n, double warmup_s,
               double seconds, double *rates, char *err, size_t errsz);
    void (*fini)(void *ctx); /* optional */
} ib_backend;

typedef struct ib_options {
    const char *modes;   /* comma-separated, NULL = the backend's default */
    const char *kernels; /* comma-separated, NULL = all */
    double seconds;      /* measured time of each run */
    double warmup_s;     /* warm-up before it */
    uint32_t trials;     /* repetitions (1..IB_MAX_TRIALS) */
    FILE *csv;           /* rows go here */
    FILE *summary;       /* the slowdown table goes here (may be NULL) */
} ib_options;

/* The CSV header line (without newline). */
extern const char ib_csv_header[];

/* Parse a comma-separated selection of b's modes (modes true) or kernels into indices
 * into b->modes or b->kernels, in the order given, duplicates dropped, at most
 * IB_MAX_KERNELS; NULL selects the default (the first mode, every kernel). Returns 0, or
 * -1 with err filled ("unknown kernel 'x' for the cpu backend (known: alu, ...)"). Callers
 * check the lists with it before they open the output; ib_measure checks them again. */
int ib_select(const ib_backend *b, const char *list, bool modes, uint32_t *out, uint32_t *n,
              char *err, size_t errsz);

/* Measure every selected kernel alone and in every unordered pair (a kernel with
 * itself included) in every selected mode. Returns 0, or -1 with err filled. */
int ib_measure(const ib_backend *b, const ib_options *o, char *err, size_t errsz);

/* The CPU backend: threads_per_kernel threads run each kernel (mode "threads"). */
int ib_cpu_init(ib_backend *b, uint32_t threads_per_kernel, char *err, size_t errsz);

/* The CUDA backend on device `device`; `mig` (may be NULL) lists two MIG instance
 * UUIDs, comma-separated, for mode "mig". Returns -1 with err filled when no GPU can
 * be used. Present only when built with CUDA (IB_HAVE_CUDA). */
int ib_cuda_init(ib_backend *b, int device, const char *mig, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
