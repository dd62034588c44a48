#pragma once
// Ops (device/ops.h) on one CudaDevice: kernels/cuda on the device's compute stream, with a
// cuBLAS handle bound to that stream. Made by CudaDevice::ops() on the rank thread that owns the
// device (cuBLAS handles are per thread and per device) and used from that thread only.
//
// Note on memory outside the ledger: besides cuBLAS's own workspace, CudaOps holds one small
// cudaMalloc'd buffer (kernels::cuda::kReductionScratchBytes + 32 bytes, about 8 KiB) for the
// per-block partials and results of gradientStats / sumSquaresFixed. It is deliberately not
// taken from the rank's pool, so "pool used" stays ledger + rounding and the ledger stays the
// CPU's; CudaDevice::measure() counts it with the context under "outside the ledger".
//
// Waiting: download, synchronize and the calls that return a host value wait for the stream.
// upload waits too, so its host source may be reused at once whatever kind of memory it is
// (pageable or pinned); every other call returns before the GPU has run it.
#include "device/ops.h"

#include <cstdint>
#include <memory>

struct CUstream_st;

namespace shardscope::kernels::cuda {
class Blas;
}

namespace shardscope::device {

class CudaDevice;

class CudaOps final : public Ops {
public:
    // Makes the device current on the calling thread, creates the cuBLAS handle on its stream
    // and the reduction scratch. CUDA/cuBLAS failures throw Error(Internal).
    explicit CudaOps(CudaDevice& device);
    ~CudaOps() override; // waits for the stream: the scratch may still be in use

    void copy(void* dst, const void* src, std::uint64_t bytes) override;
    void upload(void* dst, const void* host, std::uint64_t bytes) override;
    void download(void* host, const void* src, std::uint64_t bytes) override;
    void zero(void* dst, std::uint64_t bytes) override;
    void synchronize() override;

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

    void adamw(const kernels::AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
               float* m, float* v, std::uint64_t n) override;
    GradientStats gradientStats(const void* grads, std::uint64_t n, bool bf16) override;
    Uint128Parts sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16, int shift) override;

private:
    CUstream_st* stream_ = nullptr;
    std::unique_ptr<kernels::cuda::Blas> blas_;
    void* scratch_ = nullptr; // reduction partials, then the two results (see the note above)
};

} // namespace shardscope::device
