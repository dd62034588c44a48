#include "device/cuda_ops.h"

#include "core/error.h"
#include "device/cuda_device.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <limits>
#include <string>

namespace shardscope::device {

namespace kc = shardscope::kernels::cuda;

namespace {

// Where the two host-visible results live in the scratch, after the partials.
constexpr std::size_t kStatsOffset = kc::kReductionScratchBytes;
constexpr std::size_t kSumOffset = kStatsOffset + 16;
constexpr std::size_t kScratchBytes = kSumOffset + 16;
static_assert(sizeof(kc::GradientStatsResult) <= 16 && sizeof(kc::Uint128Parts) == 16);

std::int64_t count(std::uint64_t n) {
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw Error(ErrorKind::Internal,
                    "CudaOps: element count " + std::to_string(n) + " is out of range");
    return static_cast<std::int64_t>(n);
}

kc::Elem elem(bool bf16) {
    return bf16 ? kc::Elem::Bf16 : kc::Elem::F32;
}

// Operands inside the cast buffer start 256 bytes apart at least (cudaMalloc's alignment, which
// cuBLAS's fastest kernels want); the buffer grows in cudaMalloc's large-block granularity.
constexpr std::uint64_t kCastAlign = 256;
constexpr std::uint64_t kCastGranularity = std::uint64_t{2} << 20;

std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) {
    return (v + a - 1) / a * a;
}

// Bytes one bf16 operand of `rows` × `cols` takes in the cast buffer.
std::uint64_t castBytesOf(std::int64_t rows, std::int64_t cols) {
    if (rows < 0 || cols < 0)
        throw Error(ErrorKind::Internal, "CudaOps: negative GEMM dimension " +
                                             std::to_string(rows) + " × " + std::to_string(cols));
    const std::uint64_t n = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
    return alignUp(n * sizeof(Bf16), kCastAlign);
}

Bf16* at(void* base, std::uint64_t offset) {
    return static_cast<Bf16*>(static_cast<void*>(static_cast<char*>(base) + offset));
}

} // namespace

CudaOps::CudaOps(CudaDevice& device) : ordinal_(device.ordinal()), stream_(device.stream()) {
    CUDA_CHECK(cudaSetDevice(ordinal_)); // cuBLAS binds its handle to the current device
    int major = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal_));
    blasWorkspaceBytes_ = alignUp(kc::recommendedBlasWorkspaceBytes(major), kCastAlign);
    fixedBytes_ = blasWorkspaceBytes_ + kScratchBytes;
    CUDA_CHECK(cudaMalloc(&fixed_, fixedBytes_));
    try {
        blas_ = std::make_unique<kc::Blas>(stream_);
        blas_->setWorkspace(fixed_, blasWorkspaceBytes_);
    } catch (...) {
        blas_.reset();
        cudaFree(fixed_);
        throw;
    }
    scratch_ = static_cast<char*>(fixed_) + blasWorkspaceBytes_;
}

CudaOps::~CudaOps() {
    // Destructors cannot report errors; a failing sync means the context is already gone.
    cudaStreamSynchronize(stream_);
    blas_.reset(); // before its workspace goes
    cudaFree(fixed_);
    cudaFree(cast_);
}

void* CudaOps::castSpace(std::uint64_t bytes) {
    if (bytes <= castBytes_) return cast_;
    const std::uint64_t grown = alignUp(bytes, kCastGranularity);
    // Queued casts and GEMMs may still read the old buffer: wait for them, then free it.
    synchronize();
    CUDA_CHECK(cudaSetDevice(ordinal_)); // cudaMalloc allocates on the calling thread's device
    if (cast_) {
        CUDA_CHECK(cudaFree(cast_));
        cast_ = nullptr;
        castBytes_ = 0;
    }
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, grown);
    if (rc == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // not sticky: clear it so the next call does not see it
        std::size_t freeBytes = 0, totalBytes = 0;
        cudaMemGetInfo(&freeBytes, &totalBytes);
        throw Error(
            ErrorKind::OutOfMemory,
            "cuda:" + std::to_string(ordinal_) + ": the GPU refused the " + std::to_string(grown) +
                "-byte bf16 cast buffer of a mixed-precision GEMM (" + std::to_string(freeBytes) +
                " of " + std::to_string(totalBytes) + " bytes free)");
    }
    CUDA_CHECK(rc);
    cast_ = p;
    castBytes_ = grown;
    return cast_;
}

// ---- memory -------------------------------------------------------------------------------------

void CudaOps::copy(void* dst, const void* src, std::uint64_t bytes) {
    if (bytes) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaOps::upload(void* dst, const void* host, std::uint64_t bytes) {
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream_));
    // A pinned source would still be read after an async copy returns; waiting makes the host
    // buffer reusable at once for every caller (uploads are per micro-step, not per op).
    synchronize();
}

void CudaOps::download(void* host, const void* src, std::uint64_t bytes) {
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, stream_));
    synchronize();
}

void CudaOps::zero(void* dst, std::uint64_t bytes) {
    if (bytes) CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_));
}

void CudaOps::synchronize() {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// ---- precision ----------------------------------------------------------------------------------

void CudaOps::toBf16(const float* in, Bf16* out, std::uint64_t n) {
    kc::toBf16(in, out, count(n), stream_);
}
void CudaOps::toFloat(const Bf16* in, float* out, std::uint64_t n) {
    kc::toFloat(in, out, count(n), stream_);
}
void CudaOps::accumulate(void* dst, const void* src, std::uint64_t n, bool bf16) {
    kc::accumulate(dst, src, count(n), elem(bf16), stream_);
}
void CudaOps::accumulateRounded(Bf16* dst, const float* src, std::uint64_t n) {
    kc::accumulateRounded(dst, src, count(n), stream_);
}

// ---- the GPT's ops ------------------------------------------------------------------------------

void CudaOps::embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe,
                               float* out, std::int64_t batch, std::int64_t seq, std::int64_t d,
                               std::int64_t vocab) {
    kc::embeddingForward(ids, wte, wpe, out, batch, seq, d, vocab, stream_);
}
void CudaOps::embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte,
                                float* dwpe, std::int64_t batch, std::int64_t seq, std::int64_t d,
                                std::int64_t vocab) {
    kc::embeddingBackward(ids, dout, dwte, dwpe, batch, seq, d, vocab, stream_);
}
void CudaOps::layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                               float* mean, float* rstd, std::int64_t rows, std::int64_t d) {
    kc::layerNormForward(x, gamma, beta, out, mean, rstd, rows, d, stream_);
}
void CudaOps::layerNormBackward(const float* dout, const float* x, const float* mean,
                                const float* rstd, const float* gamma, float* dx, float* dgamma,
                                float* dbeta, std::int64_t rows, std::int64_t d) {
    kc::layerNormBackward(dout, x, mean, rstd, gamma, dx, dgamma, dbeta, rows, d, stream_);
}
void CudaOps::linearForward(const float* x, const float* w, const float* bias, float* y,
                            std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate) {
    if (!bf16Linear_) {
        kc::linearForward(*blas_, x, w, bias, y, rows, in, out, accumulate);
        return;
    }
    // x and W rounded to bf16 side by side in the cast buffer; the bias stays fp32.
    const std::uint64_t xBytes = castBytesOf(rows, in), wBytes = castBytesOf(in, out);
    void* base = castSpace(xBytes + wBytes);
    Bf16* xb = at(base, 0);
    Bf16* wb = at(base, xBytes);
    kc::toBf16(x, xb, rows * in, stream_);
    kc::toBf16(w, wb, in * out, stream_);
    kc::linearForward(*blas_, xb, wb, bias, y, rows, in, out, accumulate);
}
void CudaOps::linearBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                             float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out) {
    if (!bf16Linear_) {
        kc::linearBackward(*blas_, dy, x, w, dx, dw, dbias, rows, in, out);
        return;
    }
    // dy, x and (only for dx) W rounded to bf16; both GEMMs by the Bf16 overload. dbias is the
    // fp32 column sum of the fp32 dy, as in fp32 mode (the bias is no GEMM operand).
    // Only the dx GEMM reads W, only the dW GEMM x (a split backward runs them apart).
    const std::uint64_t dyBytes = castBytesOf(rows, out);
    const std::uint64_t xBytes = dw ? castBytesOf(rows, in) : 0;
    const std::uint64_t wBytes = dx ? castBytesOf(in, out) : 0;
    void* base = castSpace(dyBytes + xBytes + wBytes);
    Bf16* dyb = at(base, 0);
    Bf16* xb = dw ? at(base, dyBytes) : nullptr;
    Bf16* wb = dx ? at(base, dyBytes + xBytes) : nullptr;
    kc::toBf16(dy, dyb, rows * out, stream_);
    if (dw) kc::toBf16(x, xb, rows * in, stream_);
    if (dx) kc::toBf16(w, wb, in * out, stream_);
    kc::linearBackward(*blas_, dyb, xb, wb, dx, dw, nullptr, rows, in, out);
    if (dbias) kc::columnSum(dy, dbias, rows, out, stream_);
}
void CudaOps::attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                               std::int64_t seq, std::int64_t heads, std::int64_t headDim) {
    kc::attentionForward(*blas_, qkv, probs, out, batch, seq, heads, headDim);
}
void CudaOps::attentionBackward(const float* dout, const float* qkv, const float* probs,
                                float* dqkv, float* scratch, std::int64_t batch, std::int64_t seq,
                                std::int64_t heads, std::int64_t headDim) {
    // seq² floats: one head per batched GEMM, the CPU's scratch size (the ledger stays the same).
    kc::attentionBackward(*blas_, dout, qkv, probs, dqkv, scratch, attentionScratchFloats(seq),
                          batch, seq, heads, headDim);
}
void CudaOps::geluForward(const float* x, float* y, std::int64_t n) {
    kc::geluForward(x, y, n, stream_);
}
void CudaOps::geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) {
    kc::geluBackward(dy, x, dx, n, stream_);
}
void CudaOps::add(const float* a, const float* b, float* y, std::int64_t n) {
    kc::add(a, b, y, n, stream_);
}

double CudaOps::crossEntropyForward(float* logitsToProbs, const std::int32_t* targets,
                                    double* scratch, std::int64_t rows, std::int64_t vocab) {
    if (rows <= 0) return std::numeric_limits<double>::quiet_NaN(); // the CPU's 0/0
    // Row terms in scratch[0, rows), the mean in scratch[rows] (where CpuOps puts it too).
    kc::crossEntropyForward(logitsToProbs, targets, scratch, scratch + rows, rows, vocab, stream_);
    double mean = 0.0;
    download(&mean, scratch + rows, sizeof mean);
    return mean;
}
void CudaOps::crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                                   std::int64_t rows, std::int64_t vocab, float scale) {
    kc::crossEntropyBackward(probs, targets, dlogits, rows, vocab, scale, stream_);
}

// ---- optimizer and gradient norm ----------------------------------------------------------------

void CudaOps::adamw(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
                    float* m, float* v, std::uint64_t n) {
    if (gradsBf16)
        kc::adamwUpdate(s, params, static_cast<const Bf16*>(grads), m, v, count(n), stream_);
    else
        kc::adamwUpdate(s, params, static_cast<const float*>(grads), m, v, count(n), stream_);
}

GradientStats CudaOps::gradientStats(const void* grads, std::uint64_t n, bool bf16) {
    auto* result =
        reinterpret_cast<kc::GradientStatsResult*>(static_cast<char*>(scratch_) + kStatsOffset);
    kc::gradientStats(grads, count(n), elem(bf16), scratch_, result, stream_);
    kc::GradientStatsResult host{};
    download(&host, result, sizeof host);
    return {host.maxAbs, host.finite != 0};
}

Uint128Parts CudaOps::sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16, int shift) {
    auto* result = reinterpret_cast<kc::Uint128Parts*>(static_cast<char*>(scratch_) + kSumOffset);
    kc::sumSquaresFixed(grads, count(n), elem(bf16), shift, scratch_, result, stream_);
    kc::Uint128Parts host{};
    download(&host, result, sizeof host);
    return {host.lo, host.hi};
}

} // namespace shardscope::device
