// Row-wise CUDA kernels: LayerNorm, the causal softmax of attention, cross-entropy's forward, and
// the gradient reductions of the exact global norm (max |g|, Σ fixed-point g²).
// A block (LayerNorm, cross-entropy: rows of d or vocab elements) or a warp (softmax: rows of
// seq elements) owns a row; row statistics are accumulated in double as the CPU kernels do,
// through a fixed reduction tree, so results do not depend on scheduling. Parameter gradients
// (dgamma, dbeta) are column sums over rows in row order, like elementwise.cu's columnSum.
#include "kernels/cpu/ops.h" // kLayerNormEps: the same ε as the CPU
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fixed_point.h"
#include "kernels/cuda/ops.h"

#include <cmath>
#include <cstdint>

namespace shardscope::kernels::cuda {

namespace {

constexpr int kRowThreads = 256;  // LayerNorm, cross-entropy: one block per row
constexpr int kWarpsPerBlock = 4; // softmax: one warp per row
constexpr unsigned kFullMask = 0xffffffffu;

// Sum over the block in a fixed tree (warp shuffles, then warp 0 over the warps' sums).
// `shared` holds 32 doubles; every thread gets the total.
__device__ double blockSum(double v, double* shared) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(kFullMask, v, o);
    const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(kFullMask, v, o);
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    const double total = shared[0];
    __syncthreads(); // `shared` may be reused by the next call
    return total;
}

__device__ float blockMax(float v, float* shared) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_down_sync(kFullMask, v, o));
    const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1)
            v = fmaxf(v, __shfl_down_sync(kFullMask, v, o));
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    const float m = shared[0];
    __syncthreads();
    return m;
}

__device__ float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}
__device__ float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}

// ---- LayerNorm ----------------------------------------------------------------------------------

__global__ void layerNormForwardKernel(const float* x, const float* gamma, const float* beta,
                                       float* out, float* mean, float* rstd, std::int64_t d,
                                       float eps) {
    __shared__ double shared[32];
    const std::int64_t r = blockIdx.x;
    const float* xr = x + r * d;
    double sum = 0.0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
        sum += static_cast<double>(xr[i]);
    const double mu = blockSum(sum, shared) / static_cast<double>(d);
    double var = 0.0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
        const double c = static_cast<double>(xr[i]) - mu;
        var += c * c;
    }
    var = blockSum(var, shared) / static_cast<double>(d);
    const float m = static_cast<float>(mu);
    const float s = static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)));
    float* o = out + r * d;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
        o[i] = (xr[i] - m) * s * gamma[i] + beta[i];
    if (threadIdx.x == 0) {
        mean[r] = m;
        rstd[r] = s;
    }
}

// dx += rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · gamma, one block per row.
__global__ void layerNormBackwardRowsKernel(const float* dout, const float* x, const float* mean,
                                            const float* rstd, const float* gamma, float* dx,
                                            std::int64_t d) {
    __shared__ double shared[32];
    const std::int64_t r = blockIdx.x;
    const float* xr = x + r * d;
    const float* dy = dout + r * d;
    const float m = mean[r], s = rstd[r];
    double sumG = 0.0, sumGX = 0.0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
        const float xhat = (xr[i] - m) * s;
        const float g = dy[i] * gamma[i];
        sumG += static_cast<double>(g);
        sumGX += static_cast<double>(g * xhat);
    }
    const float meanG = static_cast<float>(blockSum(sumG, shared) / static_cast<double>(d));
    const float meanGX = static_cast<float>(blockSum(sumGX, shared) / static_cast<double>(d));
    float* dxr = dx + r * d;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
        const float xhat = (xr[i] - m) * s;
        dxr[i] += s * (dy[i] * gamma[i] - meanG - xhat * meanGX);
    }
}

// dgamma[i] += Σ_r dy·x̂, dbeta[i] += Σ_r dy: one thread per column, rows in order.
__global__ void layerNormBackwardParamsKernel(const float* dout, const float* x, const float* mean,
                                              const float* rstd, float* dgamma, float* dbeta,
                                              std::int64_t rows, std::int64_t d) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= d) return;
    float dg = dgamma[i], db = dbeta[i];
    for (std::int64_t r = 0; r < rows; ++r) {
        const float xhat = __fmul_rn(__fsub_rn(x[r * d + i], mean[r]), rstd[r]);
        const float dy = dout[r * d + i];
        dg = __fadd_rn(dg, __fmul_rn(dy, xhat));
        db = __fadd_rn(db, dy);
    }
    dgamma[i] = dg;
    dbeta[i] = db;
}

// ---- causal softmax (one warp per row; row r is query r % seq) ----------------------------------

__global__ void causalSoftmaxForwardKernel(float* p, std::int64_t rows, std::int64_t seq) {
    const std::int64_t r =
        static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    if (r >= rows) return; // whole warps exit together: rows are warp-uniform
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const std::int64_t q = r % seq;
    float* row = p + r * seq;
    float maxv = -INFINITY;
    for (std::int64_t j = lane; j <= q; j += 32)
        maxv = fmaxf(maxv, row[j]);
    maxv = warpMax(maxv);
    float sum = 0.0f;
    for (std::int64_t j = lane; j <= q; j += 32)
        sum += expf(row[j] - maxv);
    const float inv = 1.0f / warpSum(sum);
    for (std::int64_t j = lane; j < seq; j += 32)
        row[j] = j <= q ? expf(row[j] - maxv) * inv : 0.0f;
}

__global__ void causalSoftmaxBackwardKernel(const float* p, float* ds, std::int64_t rows,
                                            std::int64_t seq) {
    const std::int64_t r =
        static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    if (r >= rows) return;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const std::int64_t q = r % seq;
    const float* prow = p + r * seq;
    float* row = ds + r * seq;
    float dot = 0.0f;
    for (std::int64_t j = lane; j <= q; j += 32)
        dot += row[j] * prow[j];
    dot = warpSum(dot);
    for (std::int64_t j = lane; j < seq; j += 32)
        row[j] = j <= q ? prow[j] * (row[j] - dot) : 0.0f;
}

// ---- cross-entropy forward ----------------------------------------------------------------------

__global__ void crossEntropyRowsKernel(float* z, const std::int32_t* targets, double* rowLoss,
                                       std::int64_t vocab) {
    __shared__ double sharedD[32];
    __shared__ float sharedF[32];
    const std::int64_t r = blockIdx.x;
    float* row = z + r * vocab;
    float maxv = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x)
        maxv = fmaxf(maxv, row[j]);
    maxv = blockMax(maxv, sharedF);
    double sum = 0.0;
    for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x)
        sum += static_cast<double>(expf(row[j] - maxv));
    sum = blockSum(sum, sharedD);
    const std::int32_t t = targets[r];
    if (threadIdx.x == 0) {
        // −log p_t = log Σ exp(z − max) − (z_t − max); an id outside the vocabulary is NaN.
        rowLoss[r] = (t >= 0 && t < vocab) ? log(sum) - static_cast<double>(row[t] - maxv) : NAN;
    }
    __syncthreads(); // row[t] is read above before any thread overwrites the row below
    const float inv = static_cast<float>(1.0 / sum);
    for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x)
        row[j] = expf(row[j] - maxv) * inv;
}

// The mean in row order, in one thread: the CPU's summation order (rows are a few thousand).
__global__ void meanInOrderKernel(const double* rowLoss, double* mean, std::int64_t rows) {
    double total = 0.0;
    for (std::int64_t r = 0; r < rows; ++r)
        total += rowLoss[r];
    *mean = total / static_cast<double>(rows);
}

// ---- gradient reductions (train/grad_norm.cpp) --------------------------------------------------
// Pass 1: kReductionBlocks (or fewer) blocks of kReduceThreads, grid-stride, a shared-memory tree
// per block, one partial per block in scratch. Pass 2: one block folds the partials. A max and
// integer sums do not depend on the order, so no fixed tree is needed for determinism.

constexpr int kReduceThreads = 256;

__device__ inline float loadGrad(const void* g, std::int64_t i, bool bf16) {
    if (!bf16) return static_cast<const float*>(g)[i];
    const std::uint16_t bits = static_cast<const Bf16*>(g)[i].bits;
    return __uint_as_float(static_cast<std::uint32_t>(bits) << 16);
}

struct StatsPartial {
    float maxAbs; // |g| is exact in float, so the max in float widens to the CPU's double max
    std::uint32_t finite;
};
static_assert(sizeof(StatsPartial) * kReductionBlocks <= kReductionScratchBytes);
static_assert(sizeof(Uint128Parts) * kReductionBlocks <= kReductionScratchBytes);

__device__ inline StatsPartial combine(StatsPartial a, StatsPartial b) {
    return {fmaxf(a.maxAbs, b.maxAbs), a.finite & b.finite};
}

__device__ inline Uint128Parts combine(Uint128Parts a, Uint128Parts b) {
    return addUint128(a, b); // integer addition: any order gives the CPU's sum
}

// Tree over the block in shared memory; thread 0 gets the total.
template <class T> __device__ T blockCombine(T v, T* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            shared[threadIdx.x] = combine(shared[threadIdx.x], shared[threadIdx.x + half]);
        __syncthreads();
    }
    return shared[0];
}

__global__ void gradientStatsKernel(const void* g, std::int64_t n, bool bf16,
                                    StatsPartial* partials) {
    __shared__ StatsPartial shared[kReduceThreads];
    StatsPartial acc{0.0f, 1u};
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float a = fabsf(loadGrad(g, i, bf16));
        if (!isfinite(a))
            acc.finite = 0u;
        else
            acc.maxAbs = fmaxf(acc.maxAbs, a);
    }
    const StatsPartial total = blockCombine(acc, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void gradientStatsFinalKernel(const StatsPartial* partials, int count,
                                         GradientStatsResult* result) {
    __shared__ StatsPartial shared[kReduceThreads];
    StatsPartial acc{0.0f, 1u};
    for (int b = static_cast<int>(threadIdx.x); b < count; b += static_cast<int>(blockDim.x))
        acc = combine(acc, partials[b]);
    const StatsPartial total = blockCombine(acc, shared);
    if (threadIdx.x == 0) *result = {static_cast<double>(total.maxAbs), total.finite, 0u};
}

__global__ void sumSquaresFixedKernel(const void* g, std::int64_t n, bool bf16, int shift,
                                      Uint128Parts* partials) {
    __shared__ Uint128Parts shared[kReduceThreads];
    Uint128Parts acc{0u, 0u};
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        acc = addUint128(acc, fixedSquare(loadGrad(g, i, bf16), shift)); // exact, as on the CPU
    const Uint128Parts total = blockCombine(acc, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void sumSquaresFixedFinalKernel(const Uint128Parts* partials, int count,
                                           Uint128Parts* result) {
    __shared__ Uint128Parts shared[kReduceThreads];
    Uint128Parts acc{0u, 0u};
    for (int b = static_cast<int>(threadIdx.x); b < count; b += static_cast<int>(blockDim.x))
        acc = combine(acc, partials[b]);
    const Uint128Parts total = blockCombine(acc, shared);
    if (threadIdx.x == 0) *result = total;
}

int reductionBlocks(std::int64_t n) {
    const std::int64_t blocks = (n + kReduceThreads - 1) / kReduceThreads;
    return static_cast<int>(blocks < 1 ? 1
                                       : (blocks > kReductionBlocks ? kReductionBlocks : blocks));
}

unsigned warpBlocks(std::int64_t rows) {
    return static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

void checkRows(std::int64_t rows, const char* op) {
    // One block per row: gridDim.x allows 2³¹ − 1, far beyond any batch here.
    if (rows < 0 || rows > 0x7fffffff)
        throw Error(ErrorKind::Internal, std::string(op) + ": row count out of range");
}

} // namespace

void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                      float* mean, float* rstd, std::int64_t rows, std::int64_t d, Stream stream) {
    checkRows(rows, "layerNormForward");
    if (rows == 0) return;
    layerNormForwardKernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
        x, gamma, beta, out, mean, rstd, d, kernels::kLayerNormEps);
    CUDA_CHECK_LAUNCH();
}

void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                       const float* gamma, float* dx, float* dgamma, float* dbeta,
                       std::int64_t rows, std::int64_t d, Stream stream) {
    checkRows(rows, "layerNormBackward");
    if (rows == 0) return;
    layerNormBackwardRowsKernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
        dout, x, mean, rstd, gamma, dx, d);
    CUDA_CHECK_LAUNCH();
    layerNormBackwardParamsKernel<<<static_cast<unsigned>((d + 63) / 64), 64, 0, stream>>>(
        dout, x, mean, rstd, dgamma, dbeta, rows, d);
    CUDA_CHECK_LAUNCH();
}

void causalSoftmaxForward(float* p, std::int64_t rows, std::int64_t seq, Stream stream) {
    if (rows == 0) return;
    causalSoftmaxForwardKernel<<<warpBlocks(rows), 32 * kWarpsPerBlock, 0, stream>>>(p, rows, seq);
    CUDA_CHECK_LAUNCH();
}

void causalSoftmaxBackward(const float* p, float* dpToDs, std::int64_t rows, std::int64_t seq,
                           Stream stream) {
    if (rows == 0) return;
    causalSoftmaxBackwardKernel<<<warpBlocks(rows), 32 * kWarpsPerBlock, 0, stream>>>(p, dpToDs,
                                                                                      rows, seq);
    CUDA_CHECK_LAUNCH();
}

void crossEntropyForward(float* logitsToProbs, const std::int32_t* targets, double* rowLossScratch,
                         double* meanLoss, std::int64_t rows, std::int64_t vocab, Stream stream) {
    checkRows(rows, "crossEntropyForward");
    if (rows == 0) return;
    crossEntropyRowsKernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
        logitsToProbs, targets, rowLossScratch, vocab);
    CUDA_CHECK_LAUNCH();
    meanInOrderKernel<<<1, 1, 0, stream>>>(rowLossScratch, meanLoss, rows);
    CUDA_CHECK_LAUNCH();
}

void gradientStats(const void* grads, std::int64_t n, Elem t, void* scratch,
                   GradientStatsResult* result, Stream stream) {
    const int blocks = reductionBlocks(n);
    auto* partials = static_cast<StatsPartial*>(scratch);
    gradientStatsKernel<<<static_cast<unsigned>(blocks), kReduceThreads, 0, stream>>>(
        grads, n < 0 ? 0 : n, t == Elem::Bf16, partials);
    CUDA_CHECK_LAUNCH();
    gradientStatsFinalKernel<<<1, kReduceThreads, 0, stream>>>(partials, blocks, result);
    CUDA_CHECK_LAUNCH();
}

void sumSquaresFixed(const void* grads, std::int64_t n, Elem t, int shift, void* scratch,
                     Uint128Parts* result, Stream stream) {
    const int blocks = reductionBlocks(n);
    auto* partials = static_cast<Uint128Parts*>(scratch);
    sumSquaresFixedKernel<<<static_cast<unsigned>(blocks), kReduceThreads, 0, stream>>>(
        grads, n < 0 ? 0 : n, t == Elem::Bf16, shift, partials);
    CUDA_CHECK_LAUNCH();
    sumSquaresFixedFinalKernel<<<1, kReduceThreads, 0, stream>>>(partials, blocks, result);
    CUDA_CHECK_LAUNCH();
}

} // namespace shardscope::kernels::cuda
