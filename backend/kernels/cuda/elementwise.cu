// Elementwise and column-wise CUDA kernels: embedding, GELU, residual add, bias, bf16 casts,
// AdamW, gradient accumulation, cross-entropy's backward and the communicators' rank-order sums.
//
// Where the CPU kernel's arithmetic can be reproduced exactly (no transcendental functions) the
// kernel uses the __f*_rn intrinsics: they round every operation and forbid nvcc's default FMA
// contraction, so the results are bitwise the CPU's (the CPU build targets plain x86-64, which
// has no FMA). Column sums loop over rows in order inside one thread per column: slower than a
// tree, but deterministic and in the CPU's order.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace shardscope::kernels::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(std::int64_t n, int threads = kThreads) {
    const std::int64_t blocks = (n + threads - 1) / threads;
    // Grid-stride loops cover the rest; 65535·8 blocks is far more than any GPU runs at once.
    return static_cast<unsigned>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

__device__ inline std::int64_t globalIndex() {
    return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t gridStride() {
    return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// kernels/cpu/bf16.h's toBf16, bit for bit.
__device__ inline std::uint16_t bf16Bits(float f) {
    const std::uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ inline float bf16ToFloat(std::uint16_t b) {
    return __uint_as_float(static_cast<std::uint32_t>(b) << 16);
}
__device__ inline float load(const float* p, std::int64_t i) {
    return p[i];
}
__device__ inline float load(const Bf16* p, std::int64_t i) {
    return bf16ToFloat(p[i].bits);
}

// ---- embedding ----------------------------------------------------------------------------------

__global__ void embeddingForwardKernel(const std::int32_t* ids, const float* wte, const float* wpe,
                                       float* out, std::int64_t tokens, std::int64_t seq,
                                       std::int64_t d, std::int64_t vocab) {
    for (std::int64_t e = globalIndex(); e < tokens * d; e += gridStride()) {
        const std::int64_t t = e / d, i = e % d;
        const std::int32_t id = ids[t];
        out[e] = (id >= 0 && id < vocab) ? __fadd_rn(wte[id * d + i], wpe[(t % seq) * d + i])
                                         : __int_as_float(0x7fc00000); // NaN: caller's bug
    }
}

// One thread per column, tokens in order: the CPU's accumulation order, no atomics.
__global__ void embeddingBackwardKernel(const std::int32_t* ids, const float* dout, float* dwte,
                                        float* dwpe, std::int64_t tokens, std::int64_t seq,
                                        std::int64_t d, std::int64_t vocab) {
    for (std::int64_t i = globalIndex(); i < d; i += gridStride()) {
        for (std::int64_t t = 0; t < tokens; ++t) {
            const std::int32_t id = ids[t];
            const float g = dout[t * d + i];
            if (id >= 0 && id < vocab) dwte[id * d + i] = __fadd_rn(dwte[id * d + i], g);
            dwpe[(t % seq) * d + i] = __fadd_rn(dwpe[(t % seq) * d + i], g);
        }
    }
}

// ---- GELU, add, bias ----------------------------------------------------------------------------

constexpr float kGeluC = 0.7978845608028654f; // √(2/π)
constexpr float kGeluA = 0.044715f;
__device__ inline float tanhViaExp(float u) {
    return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f);
}

__global__ void geluForwardKernel(const float* x, float* y, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride()) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhViaExp(kGeluC * (v + kGeluA * v * v * v)));
    }
}

__global__ void geluBackwardKernel(const float* dy, const float* x, float* dx, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride()) {
        const float v = x[i];
        const float t = tanhViaExp(kGeluC * (v + kGeluA * v * v * v));
        const float dInner = kGeluC * (1.0f + 3.0f * kGeluA * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dInner);
    }
}

__global__ void addKernel(const float* a, const float* b, float* y, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        y[i] = __fadd_rn(a[i], b[i]);
}

__global__ void addBiasRowsKernel(const float* bias, float* y, std::int64_t rows, std::int64_t cols,
                                  bool accumulate) {
    for (std::int64_t e = globalIndex(); e < rows * cols; e += gridStride())
        y[e] = accumulate ? __fadd_rn(y[e], bias[e % cols]) : bias[e % cols];
}

template <class T>
__global__ void columnSumKernel(const T* dy, float* dbias, std::int64_t rows, std::int64_t cols) {
    for (std::int64_t j = globalIndex(); j < cols; j += gridStride()) {
        float acc = dbias[j];
        for (std::int64_t r = 0; r < rows; ++r)
            acc = __fadd_rn(acc, load(dy, r * cols + j));
        dbias[j] = acc;
    }
}

// ---- cross-entropy backward: (p·scale) − scale at the target, as the CPU rounds it
// ---------------

__global__ void crossEntropyBackwardKernel(const float* probs, const std::int32_t* targets,
                                           float* dlogits, std::int64_t rows, std::int64_t vocab,
                                           float scale) {
    for (std::int64_t e = globalIndex(); e < rows * vocab; e += gridStride()) {
        const float g = __fmul_rn(probs[e], scale);
        dlogits[e] = (targets[e / vocab] == e % vocab) ? __fsub_rn(g, scale) : g;
    }
}

// ---- bf16 ---------------------------------------------------------------------------------------

__global__ void toBf16Kernel(const float* in, Bf16* out, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        out[i].bits = bf16Bits(in[i]);
}
__global__ void toFloatKernel(const Bf16* in, float* out, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        out[i] = bf16ToFloat(in[i].bits);
}

// ---- AdamW: kernels/cpu/adamw.cpp's loop body, operation by operation ---------------------------

template <class G>
__global__ void adamwKernel(AdamWScalars s, float* p, const G* g, float* m, float* v,
                            std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride()) {
        const float grad = __fmul_rn(load(g, i), s.gradScale);
        const float mi =
            __fadd_rn(__fmul_rn(s.beta1, m[i]), __fmul_rn(__fsub_rn(1.0f, s.beta1), grad));
        const float vi = __fadd_rn(__fmul_rn(s.beta2, v[i]),
                                   __fmul_rn(__fmul_rn(__fsub_rn(1.0f, s.beta2), grad), grad));
        m[i] = mi;
        v[i] = vi;
        const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), s.vCorrection), s.eps);
        p[i] = __fsub_rn(__fmul_rn(p[i], s.decay), __fdiv_rn(__fmul_rn(s.stepSize, mi), denom));
    }
}

// ---- gradient accumulation ----------------------------------------------------------------------

__global__ void accumulateF32Kernel(float* dst, const float* src, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        dst[i] = __fadd_rn(dst[i], src[i]);
}
__global__ void accumulateBf16Kernel(Bf16* dst, const Bf16* src, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        dst[i].bits = bf16Bits(__fadd_rn(load(dst, i), load(src, i)));
}
__global__ void accumulateRoundedKernel(Bf16* dst, const float* src, std::int64_t n) {
    for (std::int64_t i = globalIndex(); i < n; i += gridStride())
        dst[i].bits = bf16Bits(__fadd_rn(load(dst, i), src[i]));
}

// ---- rank-order sums ----------------------------------------------------------------------------

struct Parts {
    const void* p[kMaxRankParts];
    const char* base; // strided mode when non-null
    std::size_t strideBytes;
    int n;
};

template <class T> __device__ inline const T* part(const Parts& parts, int r) {
    return parts.base ? reinterpret_cast<const T*>(parts.base + r * parts.strideBytes)
                      : static_cast<const T*>(parts.p[r]);
}

// Each element is read from every part before it is written, so out may alias a part.
__global__ void sumF32Kernel(Parts parts, float* out, std::size_t count) {
    for (std::int64_t i = globalIndex(); i < static_cast<std::int64_t>(count); i += gridStride()) {
        float acc = 0.0f;
        for (int r = 0; r < parts.n; ++r)
            acc = __fadd_rn(acc, part<float>(parts, r)[i]);
        out[i] = acc;
    }
}
__global__ void sumBf16Kernel(Parts parts, Bf16* out, std::size_t count) {
    for (std::int64_t i = globalIndex(); i < static_cast<std::int64_t>(count); i += gridStride()) {
        float acc = 0.0f;
        for (int r = 0; r < parts.n; ++r)
            acc = __fadd_rn(acc, load(part<Bf16>(parts, r), i));
        out[i].bits = bf16Bits(acc);
    }
}

void launchSum(const Parts& parts, void* out, std::size_t count, Elem t, Stream stream) {
    if (count == 0) return;
    const auto n = static_cast<std::int64_t>(count);
    if (t == Elem::F32)
        sumF32Kernel<<<blocksFor(n), kThreads, 0, stream>>>(parts, static_cast<float*>(out), count);
    else
        sumBf16Kernel<<<blocksFor(n), kThreads, 0, stream>>>(parts, static_cast<Bf16*>(out), count);
    CUDA_CHECK_LAUNCH();
}

} // namespace

void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe, float* out,
                      std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab,
                      Stream stream) {
    const std::int64_t tokens = batch * seq;
    embeddingForwardKernel<<<blocksFor(tokens * d), kThreads, 0, stream>>>(ids, wte, wpe, out,
                                                                           tokens, seq, d, vocab);
    CUDA_CHECK_LAUNCH();
}

void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                       std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab,
                       Stream stream) {
    embeddingBackwardKernel<<<blocksFor(d, 64), 64, 0, stream>>>(ids, dout, dwte, dwpe, batch * seq,
                                                                 seq, d, vocab);
    CUDA_CHECK_LAUNCH();
}

void geluForward(const float* x, float* y, std::int64_t n, Stream stream) {
    geluForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(x, y, n);
    CUDA_CHECK_LAUNCH();
}

void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n, Stream stream) {
    geluBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(dy, x, dx, n);
    CUDA_CHECK_LAUNCH();
}

void add(const float* a, const float* b, float* y, std::int64_t n, Stream stream) {
    addKernel<<<blocksFor(n), kThreads, 0, stream>>>(a, b, y, n);
    CUDA_CHECK_LAUNCH();
}

void addBiasRows(const float* bias, float* y, std::int64_t rows, std::int64_t cols, bool accumulate,
                 Stream stream) {
    addBiasRowsKernel<<<blocksFor(rows * cols), kThreads, 0, stream>>>(bias, y, rows, cols,
                                                                       accumulate);
    CUDA_CHECK_LAUNCH();
}

void columnSum(const float* dy, float* dbias, std::int64_t rows, std::int64_t cols, Stream stream) {
    columnSumKernel<<<blocksFor(cols, 64), 64, 0, stream>>>(dy, dbias, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void columnSum(const Bf16* dy, float* dbias, std::int64_t rows, std::int64_t cols, Stream stream) {
    columnSumKernel<<<blocksFor(cols, 64), 64, 0, stream>>>(dy, dbias, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                          std::int64_t rows, std::int64_t vocab, float scale, Stream stream) {
    crossEntropyBackwardKernel<<<blocksFor(rows * vocab), kThreads, 0, stream>>>(
        probs, targets, dlogits, rows, vocab, scale);
    CUDA_CHECK_LAUNCH();
}

void toBf16(const float* in, Bf16* out, std::int64_t n, Stream stream) {
    toBf16Kernel<<<blocksFor(n), kThreads, 0, stream>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

void toFloat(const Bf16* in, float* out, std::int64_t n, Stream stream) {
    toFloatKernel<<<blocksFor(n), kThreads, 0, stream>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::int64_t n, Stream stream) {
    adamwKernel<<<blocksFor(n), kThreads, 0, stream>>>(s, params, grads, m, v, n);
    CUDA_CHECK_LAUNCH();
}

void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::int64_t n, Stream stream) {
    adamwKernel<<<blocksFor(n), kThreads, 0, stream>>>(s, params, grads, m, v, n);
    CUDA_CHECK_LAUNCH();
}

void accumulate(void* dst, const void* src, std::int64_t n, Elem t, Stream stream) {
    if (n <= 0) return;
    if (t == Elem::F32)
        accumulateF32Kernel<<<blocksFor(n), kThreads, 0, stream>>>(
            static_cast<float*>(dst), static_cast<const float*>(src), n);
    else
        accumulateBf16Kernel<<<blocksFor(n), kThreads, 0, stream>>>(
            static_cast<Bf16*>(dst), static_cast<const Bf16*>(src), n);
    CUDA_CHECK_LAUNCH();
}

void accumulateRounded(Bf16* dst, const float* src, std::int64_t n, Stream stream) {
    if (n <= 0) return;
    accumulateRoundedKernel<<<blocksFor(n), kThreads, 0, stream>>>(dst, src, n);
    CUDA_CHECK_LAUNCH();
}

void sumInRankOrder(const void* const* parts, int nparts, void* out, std::size_t count, Elem t,
                    Stream stream) {
    if (nparts < 1 || nparts > kMaxRankParts)
        throw Error(ErrorKind::Internal, "sumInRankOrder: " + std::to_string(nparts) +
                                             " parts (1…" + std::to_string(kMaxRankParts) + ")");
    Parts p{};
    for (int r = 0; r < nparts; ++r)
        p.p[r] = parts[r];
    p.n = nparts;
    launchSum(p, out, count, t, stream);
}

void sumStridedInRankOrder(const void* base, std::size_t strideElems, int nparts, void* out,
                           std::size_t count, Elem t, Stream stream) {
    if (nparts < 1) throw Error(ErrorKind::Internal, "sumStridedInRankOrder: no parts");
    Parts p{};
    p.base = static_cast<const char*>(base);
    p.strideBytes = strideElems * (t == Elem::F32 ? 4 : 2);
    p.n = nparts;
    launchSum(p, out, count, t, stream);
}

} // namespace shardscope::kernels::cuda
