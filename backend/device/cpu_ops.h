#pragma once
// Ops (device/ops.h) on host memory: the kernels of kernels/cpu, called directly.
#include "device/ops.h"

namespace shardscope::device {

class CpuOps final : public Ops {
public:
    void copy(void* dst, const void* src, std::uint64_t bytes) override;
    void upload(void* dst, const void* host, std::uint64_t bytes) override;
    void download(void* host, const void* src, std::uint64_t bytes) override;
    void zero(void* dst, std::uint64_t bytes) override;
    void synchronize() override {}

    void toBf16(const float* in, Bf16* out, std::uint64_t n) override;
    void toFloat(const Bf16* in, float* out, std::uint64_t n) override;
    void accumulate(void* dst, const void* src, std::uint64_t n, bool bf16) override;
    void accumulateRounded(Bf16* dst, const float* src, std::uint64_t n) override;

    void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe, float* out,
                          std::int64_t batch, std::int64_t seq, std::int64_t d,
                          std::int64_t vocab) override;
    void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                           std::int64_t batch, std::int64_t seq, std::int64_t d,
                           std::int64_t vocab) override;
    void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                          float* mean, float* rstd, std::int64_t rows, std::int64_t d) override;
    void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                           const float* gamma, float* dx, float* dgamma, float* dbeta,
                           std::int64_t rows, std::int64_t d) override;
    void linearForward(const float* x, const float* w, const float* bias, float* y,
                       std::int64_t rows, std::int64_t in, std::int64_t out,
                       bool accumulate) override;
    void linearBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                        float* dbias, std::int64_t rows, std::int64_t in,
                        std::int64_t out) override;
    void linearForwardBf16(const Bf16* x, const Bf16* w, const float* bias, float* y,
                           std::int64_t rows, std::int64_t in, std::int64_t out,
                           bool accumulate) override;
    void linearBackwardBf16(const float* dy, const Bf16* dyBf16, const Bf16* xBf16, const Bf16* w,
                            float* dx, float* dw, float* dbias, std::int64_t rows, std::int64_t in,
                            std::int64_t out) override;
    void attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                          std::int64_t seq, std::int64_t heads, std::int64_t headDim) override;
    void attentionBackward(const float* dout, const float* qkv, const float* probs, float* dqkv,
                           float* scratch, std::int64_t batch, std::int64_t seq, std::int64_t heads,
                           std::int64_t headDim) override;
    void geluForward(const float* x, float* y, std::int64_t n) override;
    void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) override;
    void add(const float* a, const float* b, float* y, std::int64_t n) override;
    double crossEntropyForward(float* logitsToProbs, const std::int32_t* targets, double* scratch,
                               std::int64_t rows, std::int64_t vocab) override;
    void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                              std::int64_t rows, std::int64_t vocab, float scale) override;

    void adamw(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16, float* m,
               float* v, std::uint64_t n) override;
    GradientStats gradientStats(const void* grads, std::uint64_t n, bool bf16) override;
    Uint128Parts sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16, int shift) override;
};

} // namespace shardscope::device
