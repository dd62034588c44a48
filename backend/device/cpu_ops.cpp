#include "device/cpu_ops.h"

#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/grad_norm.h"
#include "kernels/cpu/ops.h"

#include <cmath>
#include <cstring>
#include <span>

namespace shardscope::device {

namespace k = shardscope::kernels;

void CpuOps::copy(void* dst, const void* src, std::uint64_t bytes) {
    if (bytes) std::memmove(dst, src, bytes);
}
void CpuOps::upload(void* dst, const void* host, std::uint64_t bytes) {
    copy(dst, host, bytes);
}
void CpuOps::download(void* host, const void* src, std::uint64_t bytes) {
    copy(host, src, bytes);
}
void CpuOps::zero(void* dst, std::uint64_t bytes) {
    if (bytes) std::memset(dst, 0, bytes);
}

void CpuOps::toBf16(const float* in, Bf16* out, std::uint64_t n) {
    k::toBf16(std::span<const float>(in, n), std::span<Bf16>(out, n));
}
void CpuOps::toFloat(const Bf16* in, float* out, std::uint64_t n) {
    k::toFloat(std::span<const Bf16>(in, n), std::span<float>(out, n));
}

void CpuOps::accumulate(void* dst, const void* src, std::uint64_t n, bool bf16) {
    if (bf16) {
        auto* d = static_cast<Bf16*>(dst);
        const auto* a = static_cast<const Bf16*>(src);
        for (std::uint64_t i = 0; i < n; ++i)
            d[i] = k::toBf16(k::toFloat(d[i]) + k::toFloat(a[i]));
    } else {
        auto* d = static_cast<float*>(dst);
        const auto* a = static_cast<const float*>(src);
        for (std::uint64_t i = 0; i < n; ++i)
            d[i] += a[i];
    }
}

void CpuOps::accumulateRounded(Bf16* dst, const float* src, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i)
        dst[i] = k::toBf16(k::toFloat(dst[i]) + src[i]);
}

void CpuOps::embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe,
                              float* out, std::int64_t batch, std::int64_t seq, std::int64_t d,
                              std::int64_t vocab) {
    k::embeddingForward(ids, wte, wpe, out, batch, seq, d, vocab);
}
void CpuOps::embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                               std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t) {
    k::embeddingBackward(ids, dout, dwte, dwpe, batch, seq, d);
}
void CpuOps::layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                              float* mean, float* rstd, std::int64_t rows, std::int64_t d) {
    k::layerNormForward(x, gamma, beta, out, mean, rstd, rows, d);
}
void CpuOps::layerNormBackward(const float* dout, const float* x, const float* mean,
                               const float* rstd, const float* gamma, float* dx, float* dgamma,
                               float* dbeta, std::int64_t rows, std::int64_t d) {
    k::layerNormBackward(dout, x, mean, rstd, gamma, dx, dgamma, dbeta, rows, d);
}
void CpuOps::linearForward(const float* x, const float* w, const float* bias, float* y,
                           std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate) {
    k::linearForward(x, w, bias, y, rows, in, out, accumulate);
}
void CpuOps::linearBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                            float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out) {
    k::linearBackward(dy, x, w, dx, dw, dbias, rows, in, out);
}
void CpuOps::linearForwardBf16(const Bf16* x, const Bf16* w, const float* bias, float* y,
                               std::int64_t rows, std::int64_t in, std::int64_t out,
                               bool accumulate) {
    k::linearForwardBf16(x, w, bias, y, rows, in, out, accumulate);
}
void CpuOps::linearBackwardBf16(const float* dy, const Bf16* dyBf16, const Bf16* xBf16,
                                const Bf16* w, float* dx, float* dw, float* dbias,
                                std::int64_t rows, std::int64_t in, std::int64_t out) {
    k::linearBackwardBf16(dy, dyBf16, xBf16, w, dx, dw, dbias, rows, in, out);
}
void CpuOps::attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                              std::int64_t seq, std::int64_t heads, std::int64_t headDim) {
    k::attentionForward(qkv, probs, out, batch, seq, heads, headDim);
}
void CpuOps::attentionBackward(const float* dout, const float* qkv, const float* probs, float* dqkv,
                               float* scratch, std::int64_t batch, std::int64_t seq,
                               std::int64_t heads, std::int64_t headDim) {
    const auto floats = static_cast<std::size_t>(attentionScratchFloats(seq));
    k::attentionBackward(dout, qkv, probs, dqkv, std::span<float>(scratch, floats), batch, seq,
                         heads, headDim);
}
void CpuOps::geluForward(const float* x, float* y, std::int64_t n) {
    k::geluForward(x, y, n);
}
void CpuOps::geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) {
    k::geluBackward(dy, x, dx, n);
}
void CpuOps::add(const float* a, const float* b, float* y, std::int64_t n) {
    k::add(a, b, y, n);
}

double CpuOps::crossEntropyForward(float* logitsToProbs, const std::int32_t* targets,
                                   double* scratch, std::int64_t rows, std::int64_t vocab) {
    // The CPU kernel sums the row terms as it goes; the mean lands where the CUDA one puts it.
    const double mean = k::crossEntropyForward(logitsToProbs, targets, rows, vocab);
    scratch[rows] = mean;
    return mean;
}
void CpuOps::crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                                  std::int64_t rows, std::int64_t vocab, float scale) {
    k::crossEntropyBackward(probs, targets, dlogits, rows, vocab, scale);
}

void CpuOps::adamw(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
                   float* m, float* v, std::uint64_t n) {
    if (gradsBf16)
        k::adamwUpdate(s, params, static_cast<const Bf16*>(grads), m, v, n);
    else
        k::adamwUpdate(s, params, static_cast<const float*>(grads), m, v, n);
}

GradientStats CpuOps::gradientStats(const void* grads, std::uint64_t n, bool bf16) {
    const k::AbsMax m = bf16 ? k::absMax(static_cast<const Bf16*>(grads), n)
                             : k::absMax(static_cast<const float*>(grads), n);
    return {static_cast<double>(m.maxAbs), m.finite};
}

Uint128Parts CpuOps::sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16, int shift) {
    const k::Uint128 sum = bf16 ? k::sumSquaresFixed(static_cast<const Bf16*>(grads), n, shift)
                                : k::sumSquaresFixed(static_cast<const float*>(grads), n, shift);
    return {sum.lo, sum.hi};
}

} // namespace shardscope::device
