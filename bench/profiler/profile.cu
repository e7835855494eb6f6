/*
 * profile.cu: clustersim-profile — runs a sequence of layers with given op types and
 * input sizes on a real GPU and appends one measured training sample for the demand
 * predictors (models/dataset.h schema, source = measured). Each layer is one float32
 * kernel over batch x size elements per sample: conv2d (3x3, 16 -> 16 channels), 2x2
 * max/avg pooling, element-wise relu/addv2/mul, a shared-memory-tiled matmul against a
 * size x 256 matrix, concat, a per-sample softmax. Utilisation = sum over kernels of
 * kernel time x the fraction of the GPU's resident-block slots its grid fills
 * (cudaOccupancyMaxActiveBlocksPerMultiprocessor) / iteration time, the zoo's
 * "occupancy x busy time" (models/zoo.h); memory = device memory in use (total - free)
 * once the buffers exist, context included. Op names, the CUDA-cores table and the CSV
 * columns are those of models/features.h and models/dataset.h.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>
#include <vector>

namespace {

const char *const op_names[9] = {"addv2", "conv2d", "maxpool", "relu", "matmul",
                                 "avgpool", "mul",   "concat",  "softmax"};
enum { ADDV2, CONV2D, MAXPOOL, RELU, MATMUL, AVGPOOL, MUL, CONCAT, SOFTMAX };
const int kChannels = 16; /* conv2d and pooling channels */
const int kMatN = 256;    /* matmul output width */

struct layer {
    int op;
    long size; /* input elements per sample */
};

#define CUDA_OK(call)                                                                           \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "clustersim-profile: %s: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

__global__ void k_elementwise(int op, const float *x, float *y, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    y[i] = op == RELU ? fmaxf(v, 0.f) : op == ADDV2 ? v + 0.5f : v * 1.0001f;
}

__global__ void k_conv3x3(const float *x, const float *w, float *y, int batch, int h, int wd)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long per = (long)kChannels * h * wd;
    if (i >= per * batch)
        return;
    long b = i / per, r = i % per;
    int co = (int)(r / (h * wd)), p = (int)(r % (h * wd)), py = p / wd, px = p % wd;
    float acc = 0.f;
    for (int ci = 0; ci < kChannels; ci++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int yy = py + dy, xx = px + dx;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd)
                    continue;
                acc += x[b * per + ((long)ci * h + yy) * wd + xx] *
                       w[((co * kChannels + ci) * 3 + dy + 1) * 3 + dx + 1];
            }
    y[i] = acc;
}

__global__ void k_pool(int op, const float *x, float *y, int batch, int h, int wd)
{
    int oh = h / 2, ow = wd / 2;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long per = (long)kChannels * oh * ow;
    if (i >= per * batch || oh == 0 || ow == 0)
        return;
    long b = i / per, r = i % per;
    int c = (int)(r / (oh * ow)), p = (int)(r % (oh * ow)), py = p / ow, px = p % ow;
    const float *s = x + b * (long)kChannels * h * wd + ((long)c * h + 2 * py) * wd + 2 * px;
    float a = s[0], bb = s[1], cc = s[wd], d = s[wd + 1];
    y[i] = op == MAXPOOL ? fmaxf(fmaxf(a, bb), fmaxf(cc, d)) : 0.25f * (a + bb + cc + d);
}

__global__ void k_matmul(const float *a, const float *bm, float *c, int m, int k, int n)
{
    __shared__ float ta[16][16], tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < k; t += 16) {
        ta[threadIdx.y][threadIdx.x] =
            row < m && t + threadIdx.x < k ? a[(long)row * k + t + threadIdx.x] : 0.f;
        tb[threadIdx.y][threadIdx.x] =
            col < n && t + threadIdx.y < k ? bm[(long)(t + threadIdx.y) * n + col] : 0.f;
        __syncthreads();
        for (int q = 0; q < 16; q++)
            acc += ta[threadIdx.y][q] * tb[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        c[(long)row * n + col] = acc;
}

__global__ void k_concat(const float *x, float *y, long half, int batch)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= 2 * half * batch)
        return;
    long b = i / (2 * half), r = i % (2 * half);
    y[i] = r < half ? x[b * 2 * half + r] : x[b * 2 * half + r - half] + 1.f;
}

__global__ void k_softmax(const float *x, float *y, long n)
{
    extern __shared__ float red[];
    const float *s = x + blockIdx.x * n;
    float *o = y + blockIdx.x * n;
    float mx = -INFINITY;
    for (long i = threadIdx.x; i < n; i += blockDim.x)
        mx = fmaxf(mx, s[i]);
    red[threadIdx.x] = mx;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (threadIdx.x < st)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + st]);
        __syncthreads();
    }
    mx = red[0];
    __syncthreads();
    float sum = 0.f;
    for (long i = threadIdx.x; i < n; i += blockDim.x)
        sum += expf(s[i] - mx);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (threadIdx.x < st)
            red[threadIdx.x] += red[threadIdx.x + st];
        __syncthreads();
    }
    sum = red[0];
    for (long i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = expf(s[i] - mx) / sum;
}

/* Launch geometry and occupancy of one layer. */
struct launch {
    dim3 grid, block;
    size_t shmem;
    double fill; /* fraction of the GPU's resident-block slots the grid occupies */
};

int side_of(long size)
{
    int s = (int)std::sqrt((double)size / kChannels);
    return s < 2 ? 2 : s;
}

template <typename K> double fill_of(K kernel, dim3 grid, dim3 block, size_t shmem, int sms)
{
    int per_sm = 0;
    int threads = (int)(block.x * block.y * block.z);
    CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shmem));
    double slots = (double)per_sm * sms;
    double blocks = (double)grid.x * grid.y * grid.z;
    return slots > 0 ? std::min(1.0, blocks / slots) : 1.0;
}

void run_layer(const layer &l, int batch, const float *x, float *y, const float *w, int sms,
               launch *out)
{
    const int T = 256;
    launch L;
    L.block = dim3(T);
    L.shmem = 0;
    switch (l.op) {
    case CONV2D: {
        int s = side_of(l.size);
        long n = (long)batch * kChannels * s * s;
        L.grid = dim3((unsigned)((n + T - 1) / T));
        L.fill = out ? fill_of(k_conv3x3, L.grid, L.block, 0, sms) : 0;
        k_conv3x3<<<L.grid, L.block>>>(x, w, y, batch, s, s);
        break;
    }
    case MAXPOOL:
    case AVGPOOL: {
        int s = side_of(l.size);
        long n = (long)batch * kChannels * (s / 2) * (s / 2);
        L.grid = dim3((unsigned)((n + T - 1) / T));
        L.fill = out ? fill_of(k_pool, L.grid, L.block, 0, sms) : 0;
        k_pool<<<L.grid, L.block>>>(l.op, x, y, batch, s, s);
        break;
    }
    case MATMUL: {
        int k = (int)l.size;
        L.block = dim3(16, 16);
        L.grid = dim3((kMatN + 15) / 16, (unsigned)((batch + 15) / 16));
        L.fill = out ? fill_of(k_matmul, L.grid, L.block, 0, sms) : 0;
        k_matmul<<<L.grid, L.block>>>(x, w, y, batch, k, kMatN);
        break;
    }
    case CONCAT: {
        long half = l.size / 2 > 0 ? l.size / 2 : 1;
        long n = 2 * half * batch;
        L.grid = dim3((unsigned)((n + T - 1) / T));
        L.fill = out ? fill_of(k_concat, L.grid, L.block, 0, sms) : 0;
        k_concat<<<L.grid, L.block>>>(x, y, half, batch);
        break;
    }
    case SOFTMAX:
        L.grid = dim3((unsigned)batch);
        L.shmem = T * sizeof(float);
        L.fill = out ? fill_of(k_softmax, L.grid, L.block, L.shmem, sms) : 0;
        k_softmax<<<L.grid, L.block, L.shmem>>>(x, y, l.size);
        break;
    default: {
        long n = (long)batch * l.size;
        L.grid = dim3((unsigned)((n + T - 1) / T));
        L.fill = out ? fill_of(k_elementwise, L.grid, L.block, 0, sms) : 0;
        k_elementwise<<<L.grid, L.block>>>(l.op, x, y, n);
        break;
    }
    }
    CUDA_OK(cudaGetLastError());
    if (out)
        *out = L;
}

int cores_per_sm(int major, int minor)
{
    double cc = major + minor / 10.0;
    if (cc < 5.0)
        return 192;
    if (cc < 6.0)
        return 128;
    if (cc < 6.05)
        return 64;
    if (cc < 7.0)
        return 128;
    if (cc < 8.05)
        return 64;
    return 128;
}

void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: clustersim-profile --layers OP:SIZE[,OP:SIZE...] [--batch N]\n"
                 "       [--iterations N] [--model NAME] [--input-size N] [--device N]\n"
                 "       [--out FILE]\n"
                 "Runs the layers on GPU N and appends one measured sample (the training-data\n"
                 "CSV of clustersim model train) to FILE (header written when FILE is new) or\n"
                 "prints it. OP is one of addv2, conv2d, maxpool, relu, matmul, avgpool, mul,\n"
                 "concat, softmax; SIZE is the layer's input elements per sample.\n");
}

bool parse_layers(const char *s, std::vector<layer> *out)
{
    std::string str(s);
    size_t pos = 0;
    while (pos <= str.size()) {
        size_t comma = str.find(',', pos);
        std::string item = str.substr(pos, comma == std::string::npos ? std::string::npos
                                                                        : comma - pos);
        size_t colon = item.find(':');
        if (colon == std::string::npos)
            return false;
        std::string name = item.substr(0, colon);
        char *end = nullptr;
        long size = std::strtol(item.c_str() + colon + 1, &end, 10);
        if (!end || *end || size < 1 || size > (1L << 31))
            return false;
        int op = -1;
        for (int k = 0; k < 9; k++)
            if (strcasecmp(name.c_str(), op_names[k]) == 0)
                op = k;
        if (op < 0)
            return false;
        out->push_back(layer{op, size});
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return !out->empty();
}

} // namespace

int main(int argc, char **argv)
{
    const char *layers_arg = nullptr, *model = "layers", *out = nullptr;
    long batch = 32, iterations = 100, input_size = 0;
    int device = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&](void) -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "clustersim-profile: error: option %s needs a value\n",
                             a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--layers") {
            layers_arg = val();
        } else if (a == "--batch") {
            batch = std::atol(val());
        } else if (a == "--iterations") {
            iterations = std::atol(val());
        } else if (a == "--model") {
            model = val();
        } else if (a == "--input-size") {
            input_size = std::atol(val());
        } else if (a == "--device") {
            device = std::atoi(val());
        } else if (a == "--out") {
            out = val();
        } else {
            std::fprintf(stderr, "clustersim-profile: error: unknown option '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    std::vector<layer> layers;
    if (!layers_arg || !parse_layers(layers_arg, &layers)) {
        std::fprintf(stderr, "clustersim-profile: error: --layers: expected OP:SIZE[,OP:SIZE...]"
                             " with OP one of addv2, conv2d, maxpool, relu, matmul, avgpool,"
                             " mul, concat, softmax and SIZE a positive integer\n");
        return 2;
    }
    if (batch < 1 || batch > 65535 || iterations < 1) {
        std::fprintf(stderr, "clustersim-profile: error: --batch must be 1..65535 and "
                             "--iterations positive\n");
        return 2;
    }
    if (input_size <= 0)
        input_size = layers[0].size;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::fprintf(stderr, "clustersim-profile: error: no CUDA device (this tool measures a "
                             "real GPU)\n");
        return 1;
    }
    if (device < 0 || device >= ndev) {
        std::fprintf(stderr, "clustersim-profile: error: --device %d: the machine has %d\n",
                     device, ndev);
        return 2;
    }
    CUDA_OK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, device));

    /* Buffers: the largest activation of any layer, twice (ping-pong), and weights. */
    long biggest = 0;
    for (const layer &l : layers)
        biggest = std::max(biggest, std::max(l.size, (long)kMatN));
    size_t act = (size_t)biggest * (size_t)batch * sizeof(float);
    size_t wts = (size_t)std::max(biggest * kMatN, (long)kChannels * kChannels * 9) * sizeof(float);
    float *x, *y, *w;
    CUDA_OK(cudaMalloc(&x, act));
    CUDA_OK(cudaMalloc(&y, act));
    CUDA_OK(cudaMalloc(&w, wts));
    CUDA_OK(cudaMemset(x, 0, act));
    CUDA_OK(cudaMemset(w, 0, wts));
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));

    /* One profiled pass: time and occupancy of each kernel. */
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (const layer &l : layers) /* warm-up */
        run_layer(l, (int)batch, x, y, w, prop.multiProcessorCount, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    double weighted_ms = 0;
    for (const layer &l : layers) {
        launch L;
        CUDA_OK(cudaEventRecord(e0));
        run_layer(l, (int)batch, x, y, w, prop.multiProcessorCount, &L);
        CUDA_OK(cudaEventRecord(e1));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        weighted_ms += ms * L.fill;
    }
    /* The timed loop: whole iterations back to back. */
    CUDA_OK(cudaEventRecord(e0));
    for (long it = 0; it < iterations; it++)
        for (const layer &l : layers)
            run_layer(l, (int)batch, x, y, w, prop.multiProcessorCount, nullptr);
    CUDA_OK(cudaEventRecord(e1));
    CUDA_OK(cudaEventSynchronize(e1));
    float total_ms = 0;
    CUDA_OK(cudaEventElapsedTime(&total_ms, e0, e1));
    double iter_ms = total_ms / (double)iterations;
    double util = iter_ms > 0 ? 1000.0 * std::min(1.0, weighted_ms / iter_ms) : 0;

    double feat[9] = {0};
    for (const layer &l : layers)
        feat[l.op] = std::max(feat[l.op], (double)l.size);
    std::string gpu = prop.name;
    for (char &c : gpu)
        if (c == ',' || c == ' ' || c == '"')
            c = '_';
    bool fresh = true;
    FILE *f = stdout;
    if (out) {
        FILE *probe = std::fopen(out, "r");
        if (probe) {
            fresh = std::fgetc(probe) == EOF;
            std::fclose(probe);
        }
        f = std::fopen(out, "a");
        if (!f) {
            std::fprintf(stderr, "clustersim-profile: error: cannot write %s\n", out);
            return 1;
        }
    }
    if (fresh) {
        std::fprintf(f, "source,model,gpu_type");
        for (int k = 0; k < 9; k++)
            std::fprintf(f, ",op_%s", op_names[k]);
        std::fprintf(f, ",batch_size,iterations,input_size,compute_capability,gpu_mem_gb,"
                        "gpu_cores,util_milli,mem_mib,time_s\n");
    }
    std::fprintf(f, "measured,%s,%s", model, gpu.c_str());
    for (int k = 0; k < 9; k++)
        std::fprintf(f, ",%.0f", feat[k]);
    std::fprintf(f, ",%ld,%ld,%ld,%d.%d,%.6g,%d,%.0f,%.0f,%.6g\n", batch, iterations, input_size,
                 prop.major, prop.minor, (double)prop.totalGlobalMem / 1073741824.0,
                 prop.multiProcessorCount * cores_per_sm(prop.major, prop.minor), util,
                 (double)(total_b - free_b) / 1048576.0, total_ms / 1000.0);
    if (out && std::fclose(f) != 0) {
        std::fprintf(stderr, "clustersim-profile: error: cannot write %s\n", out);
        return 1;
    }
    cudaFree(x);
    cudaFree(y);
    cudaFree(w);
    return 0;
}
