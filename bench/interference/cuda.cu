/*
 * cuda.cu: the microbenchmark's CUDA backend. Kernels: fma (FP32 FMA chains: SM pipes),
 * tensor (WMMA 16x16x16 FP16 MMA, FP32 accumulate: tensor cores), copy (float4 copy of
 * 256 MiB: DRAM), l2 (__ldcg loads of half the L2), pcie (pinned host-to-device copies).
 * A kernel runs for T seconds by launching fixed batches, up to four in flight, until T
 * has elapsed. Modes: streams (one process, one stream and host thread per kernel),
 * process (one process per kernel: contexts time-slice), mps (the same under an MPS
 * server the user started), mig (one process per MIG instance, CUDA_VISIBLE_DEVICES).
 * The parent never initialises CUDA (a context does not survive fork()): every run
 * happens in forked children that report through pipes.
 */
#include "bench/interference/ib.h"

extern "C" {
#include "base/alloc.h"
}

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { K_FMA, K_TENSOR, K_COPY, K_L2, K_PCIE, K_COUNT };

static const ib_kernel_info cuda_kernels[K_COUNT] = {
    {"fma", "sm", "GFLOP/s"}, {"tensor", "sm", "TFLOP/s"}, {"copy", "mem", "GB/s"},
    {"l2", "l2", "GB/s"},     {"pcie", "pcie", "GB/s"},
};
static const char *const cuda_modes[] = {"streams", "process", "mps", "mig", NULL};

#define FMA_ITERS 2048
#define TENSOR_ITERS 1024
#define COPY_BYTES (256ull << 20)
#define L2_REPS 16
#define PCIE_BYTES (64ull << 20)
#define IN_FLIGHT 4

typedef struct cuda_ctx {
    int device;
    int have_mig;
    char mig[2][128];
} cuda_ctx;

/* ---- Kernels ------------------------------------------------------------------------ */

__global__ void k_fma(float *out, int iters)
{
    float a0 = threadIdx.x * 1e-3f, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
    for (int i = 0; i < iters; i++) {
        a0 = fmaf(a0, 0.999f, 0.001f);
        a1 = fmaf(a1, 0.999f, 0.001f);
        a2 = fmaf(a2, 0.999f, 0.001f);
        a3 = fmaf(a3, 0.999f, 0.001f);
    }
    float r = a0 + a1 + a2 + a3;
    if (r == 1234.5f)
        out[blockIdx.x] = r;
}

__global__ void k_tensor(const half *ab, float *out, int iters)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, ab, 16);
    wmma::load_matrix_sync(fb, ab + 256, 16);
    wmma::fill_fragment(acc, 0.0f);
    for (int i = 0; i < iters; i++)
        wmma::mma_sync(acc, fa, fb, acc);
    if (acc.x[0] == 1234.5f) {
        unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
        wmma::store_matrix_sync(out + (size_t)warp * 256, acc, 16, wmma::mem_row_major);
    }
}

__global__ void k_copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

__global__ void k_l2(const float4 *buf, size_t n, int reps, float *out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    float s = 0;
    for (int r = 0; r < reps; r++)
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            float4 v = __ldcg(&buf[i]);
            s += v.x + v.y + v.z + v.w;
        }
    if (s == 1234.5f)
        out[0] = s;
}

/* ---- One kernel in the current process ----------------------------------------------- */

typedef struct kstate {
    int kind;
    cudaStream_t s;
    void *d0, *d1, *host;
    size_t n;
    int blocks, threads;
    double units; /* per launch, in the kernel's unit x seconds */
} kstate;

static int ck(cudaError_t e, const char *what, char *err, size_t errsz)
{
    if (e == cudaSuccess)
        return 0;
    snprintf(err, errsz, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kernel_free(kstate *k)
{
    if (k->d0)
        cudaFree(k->d0);
    if (k->d1)
        cudaFree(k->d1);
    if (k->host)
        cudaFreeHost(k->host);
    if (k->s)
        cudaStreamDestroy(k->s);
    memset(k, 0, sizeof *k);
}

static int kernel_setup(kstate *k, int kind, int device, char *err, size_t errsz)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    cudaDeviceProp p;
    if (ck(cudaSetDevice(device), "cudaSetDevice", err, errsz) ||
        ck(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties", err, errsz) ||
        ck(cudaStreamCreateWithFlags(&k->s, cudaStreamNonBlocking), "cudaStreamCreate", err, errsz))
        return -1;
    int sms = p.multiProcessorCount;
    int rc = 0;
    switch (kind) {
    case K_FMA:
        k->blocks = sms * 8;
        k->threads = 256;
        rc = ck(cudaMalloc(&k->d0, (size_t)k->blocks * sizeof(float)), "cudaMalloc", err, errsz);
        k->units = (double)k->blocks * k->threads * FMA_ITERS * 4 * 2 / 1e9;
        break;
    case K_TENSOR:
        if (p.major < 7) {
            snprintf(err, errsz, "the tensor kernel needs compute capability 7.0 or later");
            return -1;
        }
        k->blocks = sms * 4;
        k->threads = 128;
        rc = ck(cudaMalloc(&k->d0, 512 * sizeof(half)), "cudaMalloc", err, errsz) ||
             ck(cudaMemset(k->d0, 0, 512 * sizeof(half)), "cudaMemset", err, errsz) ||
             ck(cudaMalloc(&k->d1, (size_t)k->blocks * (k->threads / 32) * 256 * sizeof(float)),
                "cudaMalloc", err, errsz);
        k->units = (double)k->blocks * (k->threads / 32) * 2.0 * 16 * 16 * 16 * TENSOR_ITERS / 1e12;
        break;
    case K_COPY:
        k->blocks = sms * 8;
        k->threads = 256;
        k->n = COPY_BYTES / sizeof(float4);
        rc = ck(cudaMalloc(&k->d0, COPY_BYTES), "cudaMalloc", err, errsz) ||
             ck(cudaMalloc(&k->d1, COPY_BYTES), "cudaMalloc", err, errsz) ||
             ck(cudaMemset(k->d0, 1, COPY_BYTES), "cudaMemset", err, errsz);
        k->units = 2.0 * COPY_BYTES / 1e9;
        break;
    case K_L2: {
        size_t ws = (size_t)p.l2CacheSize / 2;
        if (ws < (256u << 10))
            ws = 256u << 10;
        k->blocks = sms * 8;
        k->threads = 256;
        k->n = ws / sizeof(float4);
        rc = ck(cudaMalloc(&k->d0, ws), "cudaMalloc", err, errsz) ||
             ck(cudaMemset(k->d0, 0, ws), "cudaMemset", err, errsz) ||
             ck(cudaMalloc(&k->d1, sizeof(float)), "cudaMalloc", err, errsz);
        k->units = (double)ws * L2_REPS / 1e9;
        break;
    }
    default:
        rc = ck(cudaMallocHost(&k->host, PCIE_BYTES), "cudaMallocHost", err, errsz) ||
             ck(cudaMalloc(&k->d0, PCIE_BYTES), "cudaMalloc", err, errsz);
        if (!rc)
            memset(k->host, 1, PCIE_BYTES);
        k->units = (double)PCIE_BYTES / 1e9;
        break;
    }
    if (rc == 0)
        rc = ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, errsz);
    return rc;
}

static void kernel_launch(kstate *k)
{
    switch (k->kind) {
    case K_FMA:
        k_fma<<<k->blocks, k->threads, 0, k->s>>>((float *)k->d0, FMA_ITERS);
        break;
    case K_TENSOR:
        k_tensor<<<k->blocks, k->threads, 0, k->s>>>((const half *)k->d0, (float *)k->d1,
                                                     TENSOR_ITERS);
        break;
    case K_COPY:
        k_copy<<<k->blocks, k->threads, 0, k->s>>>((const float4 *)k->d0, (float4 *)k->d1, k->n);
        break;
    case K_L2:
        k_l2<<<k->blocks, k->threads, 0, k->s>>>((const float4 *)k->d0, k->n, L2_REPS,
                                                 (float *)k->d1);
        break;
    default:
        cudaMemcpyAsync(k->d0, k->host, PCIE_BYTES, cudaMemcpyHostToDevice, k->s);
        break;
    }
}

/* Run k for `seconds`; *rate in the kernel's unit. */
static int kernel_timed(kstate *k, double seconds, double *rate, char *err, size_t errsz)
{
    double t0 = now_s(), t1;
    long n = 0;
    for (;;) {
        kernel_launch(k);
        n++;
        if (n % IN_FLIGHT == 0) {
            if (ck(cudaStreamSynchronize(k->s), "kernel", err, errsz))
                return -1;
            if (now_s() - t0 >= seconds)
                break;
        }
    }
    t1 = now_s();
    if (ck(cudaGetLastError(), "launch", err, errsz))
        return -1;
    *rate = (double)n * k->units / (t1 - t0);
    return 0;
}

/* ---- Children and pipes ----------------------------------------------------------------- */

typedef struct child_msg {
    int rc;
    double rate[2];
    char err[256];
} child_msg;

static int write_full(int fd, const void *p, size_t n)
{
    const char *c = (const char *)p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int read_full(int fd, void *p, size_t n)
{
    char *c = (char *)p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

typedef struct stream_thread {
    int kind, device;
    double warmup, seconds, rate;
    pthread_barrier_t *bar;
    int rc;
    char err[256];
} stream_thread;

static void *stream_main(void *p)
{
    stream_thread *t = (stream_thread *)p;
    kstate k;
    t->rc = kernel_setup(&k, t->kind, t->device, t->err, sizeof t->err);
    pthread_barrier_wait(t->bar);
    double warm;
    if (t->rc == 0 && t->warmup > 0)
        t->rc = kernel_timed(&k, t->warmup, &warm, t->err, sizeof t->err);
    pthread_barrier_wait(t->bar);
    if (t->rc == 0)
        t->rc = kernel_timed(&k, t->seconds, &t->rate, t->err, sizeof t->err);
    kernel_free(&k);
    return NULL;
}

/* Child of mode streams: one thread per kernel in this process. */
static void child_streams(int fd, int device, const uint32_t *ks, uint32_t n, double warmup,
                          double seconds)
{
    child_msg m;
    memset(&m, 0, sizeof m);
    pthread_barrier_t bar;
    stream_thread t[2];
    pthread_t tid[2];
    pthread_barrier_init(&bar, NULL, n);
    for (uint32_t i = 0; i < n; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].kind = (int)ks[i];
        t[i].device = device;
        t[i].warmup = warmup;
        t[i].seconds = seconds;
        t[i].bar = &bar;
        pthread_create(&tid[i], NULL, stream_main, &t[i]);
    }
    for (uint32_t i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        m.rate[i] = t[i].rate;
        if (t[i].rc && !m.rc) {
            m.rc = -1;
            snprintf(m.err, sizeof m.err, "%s", t[i].err);
        }
    }
    pthread_barrier_destroy(&bar);
    write_full(fd, &m, sizeof m);
}

/* Child of the process modes: set up, report ready, wait for go, warm up, measure. */
static void child_process(int out_fd, int go_fd, int device, const char *visible, int kind,
                          double warmup, double seconds)
{
    child_msg m;
    memset(&m, 0, sizeof m);
    if (visible && setenv("CUDA_VISIBLE_DEVICES", visible, 1) != 0) {
        m.rc = -1;
        snprintf(m.err, sizeof m.err, "cannot set CUDA_VISIBLE_DEVICES");
    }
    kstate k;
    memset(&k, 0, sizeof k);
    if (m.rc == 0)
        m.rc = kernel_setup(&k, kind, visible ? 0 : device, m.err, sizeof m.err);
    char ready = m.rc ? 'e' : 'r', go = 0;
    write_full(out_fd, &ready, 1);
    if (read_full(go_fd, &go, 1) == 0 && m.rc == 0 && go == 'g') {
        double warm;
        if (warmup > 0)
            m.rc = kernel_timed(&k, warmup, &warm, m.err, sizeof m.err);
        if (m.rc == 0)
            m.rc = kernel_timed(&k, seconds, &m.rate[0], m.err, sizeof m.err);
    }
    kernel_free(&k);
    write_full(out_fd, &m, sizeof m);
}

static int cuda_run(void *ctxp, const char *mode, const uint32_t *ks, uint32_t n, double warmup,
                    double seconds, double *rates, char *err, size_t errsz)
{
    cuda_ctx *ctx = (cuda_ctx *)ctxp;
    err[0] = '\0';
    bool streams = strcmp(mode, "streams") == 0, mig = strcmp(mode, "mig") == 0;
    if (mig && !ctx->have_mig) {
        snprintf(err, errsz, "mode mig needs --mig UUID,UUID (two MIG instances)");
        return -1;
    }
    fflush(NULL);
    if (streams) {
        int fd[2];
        if (pipe(fd) != 0) {
            snprintf(err, errsz, "pipe failed");
            return -1;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            child_streams(fd[1], ctx->device, ks, n, warmup, seconds);
            _exit(0);
        }
        close(fd[1]);
        child_msg m;
        int rr = pid > 0 ? read_full(fd[0], &m, sizeof m) : -1;
        close(fd[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        if (rr || m.rc) {
            snprintf(err, errsz, "%s", rr ? "the measuring process failed" : m.err);
            return -1;
        }
        for (uint32_t i = 0; i < n; i++)
            rates[i] = m.rate[i];
        return 0;
    }
    int out[2][2], go[2][2];
    pid_t pid[2] = {-1, -1};
    int rc = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (pipe(out[i]) != 0 || pipe(go[i]) != 0) {
            snprintf(err, errsz, "pipe failed");
            return -1;
        }
        pid[i] = fork();
        if (pid[i] == 0) {
            close(out[i][0]);
            close(go[i][1]);
            child_process(out[i][1], go[i][0], ctx->device, mig ? ctx->mig[i] : NULL, (int)ks[i],
                          warmup, seconds);
            _exit(0);
        }
        close(out[i][1]);
        close(go[i][0]);
        if (pid[i] < 0)
            rc = -1;
    }
    /* Start together: every child has set up before any is told to go. */
    for (uint32_t i = 0; i < n; i++) {
        char c = 0;
        if (pid[i] < 0 || read_full(out[i][0], &c, 1) || c != 'r')
            rc = -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        char c = rc ? 'q' : 'g';
        if (pid[i] > 0)
            write_full(go[i][1], &c, 1);
        close(go[i][1]);
    }
    for (uint32_t i = 0; i < n; i++) {
        child_msg m;
        memset(&m, 0, sizeof m);
        if (pid[i] < 0 || read_full(out[i][0], &m, sizeof m)) {
            m.rc = -1;
            snprintf(m.err, sizeof m.err, "a measuring process failed");
        }
        close(out[i][0]);
        if (pid[i] > 0)
            waitpid(pid[i], NULL, 0);
        if (m.rc && rc == 0)
            rc = -1;
        if (m.rc && !err[0])
            snprintf(err, errsz, "%s", m.err);
        rates[i] = m.rate[0];
    }
    if (rc && !err[0])
        snprintf(err, errsz, "a measuring process could not set up its kernel");
    return rc;
}

static void cuda_fini(void *ctx)
{
    sim_free(ctx);
}

typedef struct info_msg {
    int rc;
    char name[256];
    int driver;
    char err[256];
} info_msg;

int ib_cuda_init(ib_backend *b, int device, const char *mig, char *err, size_t errsz)
{
    memset(b, 0, sizeof *b);
    cuda_ctx *ctx = (cuda_ctx *)sim_calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    ctx->device = device;
    if (mig) {
        const char *comma = strchr(mig, ',');
        if (!comma || comma == mig || !comma[1] || (size_t)(comma - mig) >= sizeof ctx->mig[0] ||
            strlen(comma + 1) >= sizeof ctx->mig[1]) {
            snprintf(err, errsz, "--mig expects two MIG instance UUIDs, comma-separated");
            sim_free(ctx);
            return -1;
        }
        memcpy(ctx->mig[0], mig, (size_t)(comma - mig));
        snprintf(ctx->mig[1], sizeof ctx->mig[1], "%s", comma + 1);
        ctx->have_mig = 1;
    }
    /* A child that dies early must not kill this process when it writes to it. */
    signal(SIGPIPE, SIG_IGN);
    /* Query the device in a child, so this process stays free of CUDA. */
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(err, errsz, "pipe failed");
        sim_free(ctx);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        info_msg m;
        memset(&m, 0, sizeof m);
        int count = 0;
        cudaDeviceProp p;
        if (ck(cudaGetDeviceCount(&count), "cudaGetDeviceCount", m.err, sizeof m.err)) {
            m.rc = -1;
        } else if (device >= count) {
            m.rc = -1;
            snprintf(m.err, sizeof m.err, "no CUDA device %d (%d found)", device, count);
        } else if (ck(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties", m.err,
                      sizeof m.err) ||
                   ck(cudaDriverGetVersion(&m.driver), "cudaDriverGetVersion", m.err,
                      sizeof m.err)) {
            m.rc = -1;
        } else {
            snprintf(m.name, sizeof m.name, "%s", p.name);
        }
        write_full(fd[1], &m, sizeof m);
        _exit(0);
    }
    close(fd[1]);
    info_msg m;
    int rr = pid > 0 ? read_full(fd[0], &m, sizeof m) : -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (rr || m.rc) {
        snprintf(err, errsz, "no usable GPU: %s", rr ? "the probing process failed" : m.err);
        sim_free(ctx);
        return -1;
    }
    b->name = "cuda";
    b->n_kernels = K_COUNT;
    b->kernels = cuda_kernels;
    b->modes = cuda_modes;
    b->ctx = ctx;
    b->run = cuda_run;
    b->fini = cuda_fini;
    snprintf(b->device, sizeof b->device, "%s", m.name);
    snprintf(b->driver, sizeof b->driver, "CUDA driver %d.%d", m.driver / 1000,
             (m.driver % 1000) / 10);
    return 0;
}
