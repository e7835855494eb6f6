/*
 * cpu.c: the microbenchmark's CPU backend. Each kernel runs in its own threads and
 * stresses one resource the way the GPU kernels do: alu (independent multiply-add
 * chains in registers: the SM analogue), stream (copying arrays far larger than the
 * last-level cache: memory bandwidth), cache (summing a 128 KiB working set that lives
 * in L2). Threads count work in chunks and poll a stop flag between chunks; the main
 * thread samples the counters after the warm-up and at the end, so the rate excludes
 * start-up. It lets the measurement pipeline, the CSV and the calibration run without
 * a GPU; its figures describe the CPU, not a GPU.
 */
#include "bench/interference/ib.h"

#include "base/alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

enum { K_ALU, K_STREAM, K_CACHE, K_COUNT };

static const ib_kernel_info cpu_kernels[K_COUNT] = {
    {"alu", "sm", "GFLOP/s"},
    {"stream", "mem", "GB/s"},
    {"cache", "l2", "GB/s"},
};
static const char *const cpu_modes[] = {"threads", NULL};

#define STREAM_BYTES (32u << 20) /* each of the two arrays of a stream thread */
#define STREAM_CHUNK (1u << 20)  /* bytes copied per chunk */
#define CACHE_BYTES (128u << 10) /* working set of a cache thread */
#define ALU_STEPS 256            /* iterations of 8 chains per chunk */

typedef struct cpu_ctx {
    uint32_t threads_per_kernel;
} cpu_ctx;

typedef struct worker {
    int kind;
    _Atomic uint64_t chunks;
    _Atomic bool *go, *stop;
    _Atomic uint32_t *ready;
    unsigned char *a, *b; /* buffers, allocated by the thread */
    bool failed;
    pthread_t tid;
} worker;

static double unit_per_chunk(int kind)
{
    switch (kind) {
    case K_ALU:
        return 8.0 * ALU_STEPS * 2.0 / 1e9; /* GFLOP */
    case K_STREAM:
        return 2.0 * STREAM_CHUNK / 1e9; /* GB read + written */
    default:
        return (double)CACHE_BYTES / 1e9; /* GB read */
    }
}

static void *worker_main(void *p)
{
    worker *w = p;
    size_t bytes = w->kind == K_STREAM ? STREAM_BYTES : w->kind == K_CACHE ? CACHE_BYTES : 64;
    w->a = sim_malloc(bytes);
    w->b = w->kind == K_STREAM ? sim_malloc(bytes) : NULL;
    w->failed = !w->a || (w->kind == K_STREAM && !w->b);
    if (!w->failed) {
        memset(w->a, 1, bytes);
        if (w->b)
            memset(w->b, 0, bytes);
    }
    atomic_fetch_add(w->ready, 1);
    while (!atomic_load(w->go))
        ;
    float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    volatile uint64_t sink = 0;
    volatile float fsink = 0;
    size_t off = 0;
    while (!w->failed && !atomic_load_explicit(w->stop, memory_order_relaxed)) {
        switch (w->kind) {
        case K_ALU: {
            float a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
            float a4 = acc[4], a5 = acc[5], a6 = acc[6], a7 = acc[7];
            for (int i = 0; i < ALU_STEPS; i++) {
                a0 = a0 * 0.999f + 0.001f;
                a1 = a1 * 0.999f + 0.001f;
                a2 = a2 * 0.999f + 0.001f;
                a3 = a3 * 0.999f + 0.001f;
                a4 = a4 * 0.999f + 0.001f;
                a5 = a5 * 0.999f + 0.001f;
                a6 = a6 * 0.999f + 0.001f;
                a7 = a7 * 0.999f + 0.001f;
            }
            acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
            acc[4] = a4, acc[5] = a5, acc[6] = a6, acc[7] = a7;
            /* Every chain is observable, so none can be optimised away. */
            fsink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
            break;
        }
        case K_STREAM:
            memcpy(w->b + off, w->a + off, STREAM_CHUNK);
            off = (off + STREAM_CHUNK) % STREAM_BYTES;
            break;
        default: {
            const uint64_t *v = (const uint64_t *)(void *)w->a;
            uint64_t s = 0;
            for (size_t i = 0; i < CACHE_BYTES / sizeof *v; i++)
                s += v[i];
            sink += s;
            break;
        }
        }
        atomic_fetch_add_explicit(&w->chunks, 1, memory_order_relaxed);
    }
    (void)fsink;
    sim_free(w->a);
    sim_free(w->b);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int cpu_run(void *ctxp, const char *mode, const uint32_t *ks, uint32_t n, double warmup_s,
                   double seconds, double *rates, char *err, size_t errsz)
{
    cpu_ctx *ctx = ctxp;
    if (strcmp(mode, "threads") != 0) {
        snprintf(err, errsz, "the cpu backend has no mode '%s'", mode);
        return -1;
    }
    uint32_t per = ctx->threads_per_kernel, total = n * per;
    worker *w = sim_calloc(total, sizeof *w);
    if (!w) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    _Atomic bool go = false, stop = false;
    _Atomic uint32_t ready = 0;
    uint32_t started = 0;
    int rc = 0;
    for (uint32_t i = 0; i < total; i++) {
        w[i].kind = (int)ks[i / per];
        w[i].go = &go;
        w[i].stop = &stop;
        w[i].ready = &ready;
        atomic_init(&w[i].chunks, 0);
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
            snprintf(err, errsz, "cannot start a thread");
            rc = -1;
            break;
        }
        started++;
    }
    while (atomic_load(&ready) < started)
        ;
    atomic_store(&go, true);
    uint64_t c0[IB_MAX_KERNELS * 64] = {0};
    double t0 = 0, t1 = 0;
    if (rc == 0) {
        sleep_s(warmup_s);
        t0 = now_s();
        for (uint32_t i = 0; i < total && i < IB_MAX_KERNELS * 64; i++)
            c0[i] = atomic_load(&w[i].chunks);
        sleep_s(seconds);
        t1 = now_s();
    }
    atomic_store(&stop, true);
    for (uint32_t k = 0; k < n; k++)
        rates[k] = 0;
    for (uint32_t i = 0; i < started; i++) {
        uint64_t c1 = atomic_load(&w[i].chunks);
        pthread_join(w[i].tid, NULL);
        if (w[i].failed && rc == 0) {
            snprintf(err, errsz, "out of memory in a worker thread");
            rc = -1;
        }
        if (rc == 0 && i < IB_MAX_KERNELS * 64)
            rates[i / per] += (double)(c1 - c0[i]) * unit_per_chunk(w[i].kind) / (t1 - t0);
    }
    sim_free(w);
    return rc;
}

static void cpu_fini(void *ctx)
{
    sim_free(ctx);
}

/* The CPU model from /proc/cpuinfo, else the machine name. */
static void cpu_model(char *buf, size_t size)
{
    struct utsname u;
    snprintf(buf, size, "%s", uname(&u) == 0 ? u.machine : "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *c = strchr(line, ':');
        if (c) {
            c++;
            while (*c == ' ' || *c == '\t')
                c++;
            snprintf(buf, size, "%s", c);
            buf[strcspn(buf, "\n")] = '\0';
        }
        break;
    }
    fclose(f);
}

int ib_cpu_init(ib_backend *b, uint32_t threads_per_kernel, char *err, size_t errsz)
{
    memset(b, 0, sizeof *b);
    if (threads_per_kernel < 1 || threads_per_kernel > 64) {
        snprintf(err, errsz, "threads per kernel must be 1..64");
        return -1;
    }
    cpu_ctx *ctx = sim_calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    ctx->threads_per_kernel = threads_per_kernel;
    b->name = "cpu";
    b->n_kernels = K_COUNT;
    b->kernels = cpu_kernels;
    b->modes = cpu_modes;
    b->ctx = ctx;
    b->run = cpu_run;
    b->fini = cpu_fini;
    cpu_model(b->device, sizeof b->device);
    struct utsname u;
    snprintf(b->driver, sizeof b->driver, "linux %.56s", uname(&u) == 0 ? u.release : "?");
    return 0;
}
