#pragma once
// Ops (device/ops.h) on one CudaDevice: kernels/cuda on the device's compute stream, with a
// cuBLAS handle bound to that stream. Made by CudaDevice::ops() on the rank thread that owns the
// device (cuBLAS handles are per thread and per device) and used from that thread only.
//
// Mixed precision (setBf16Linear(true), set by the step driver): linearForward/linearBackward
// run as autocast does — the GEMM operands (x and W forward; dy, x and W backward) are rounded to
// bf16 (RNE, kernels::cuda::toBf16) into a cast buffer and multiplied by cuBLAS with bf16 inputs
// and fp32 accumulation and output (the kernels::cuda Bf16 overloads), so the result is bitwise
// what those overloads give on the rounded operands. The bias stays fp32 on both sides: y starts
// from the fp32 bias, and dbias is the fp32 column sum of the fp32 dy (bitwise CpuOps's, as in
// fp32 mode). Accumulation into y/dx/dW and the "dx, dbias skipped when null" contract are
// kernels/cpu/ops.h's. Attention's GEMMs stay fp32 in both modes.
//
// Note on memory outside the ledger: CudaOps holds two cudaMalloc'd workspaces of its own,
// deliberately not taken from the rank's pool (so "pool used" stays ledger + rounding and the
// ledger stays the CPU's), and declares them in declaredWorkspaceBytes():
//  - a fixed one made here: cuBLAS's workspace (given to the handle with cublasSetWorkspace,
//    kernels::cuda::recommendedBlasWorkspaceBytes: 32 MiB on Hopper, 4 MiB before) followed by
//    the reduction scratch of gradientStats / sumSquaresFixed (kReductionScratchBytes + 32);
//  - the bf16 cast buffer, made on the first bf16 linear call and grown on demand to the largest
//    GEMM's operands (rounded up to 2 MiB, cudaMalloc's own granularity for large blocks); it
//    never shrinks. Growing waits for the stream first: queued casts and GEMMs may still read the
//    old buffer. Operands sit 256-byte aligned inside it.
// CudaDevice::measure() reports them as CudaMemoryReport::declaredWorkspace; they are part of
// its "outside the ledger" figure (with the CUDA context, cuBLAS's handle, NCCL, other processes).
//
// Waiting: download, synchronize and the calls that return a host value wait for the stream.
// upload waits too, so its host source may be reused at once whatever kind of memory it is
// (pageable or pinned); every other call returns before the GPU has run it (except the rare
// cast-buffer growth above).
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
    // Makes the device current on the calling thread, creates the cuBLAS handle on its stream,
    // its workspace and the reduction scratch. CUDA/cuBLAS failures throw Error(Internal).
    explicit CudaOps(CudaDevice& device);
    ~CudaOps() override; // waits for the stream: the workspaces may still be in use

    // Bytes of the workspaces above: the fixed one (cuBLAS workspace + reduction scratch) plus
    // the cast buffer's current capacity.
    std::uint64_t declaredWorkspaceBytes() const { return fixedBytes_ + castBytes_; }
    std::uint64_t blasWorkspaceBytes() const { return blasWorkspaceBytes_; }
    std::uint64_t castBufferBytes() const { return castBytes_; } // 0 until the first bf16 GEMM
    bool bf16Linear() const { return bf16Linear_; }

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
    void setBf16Linear(bool on) override { bf16Linear_ = on; }
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

    void adamw(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16, float* m,
               float* v, std::uint64_t n) override;
    GradientStats gradientStats(const void* grads, std::uint64_t n, bool bf16) override;
    Uint128Parts sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16, int shift) override;

private:
    // The cast buffer with at least `bytes` bytes (grown as described above).
    void* castSpace(std::uint64_t bytes);

    int ordinal_ = 0;
    CUstream_st* stream_ = nullptr;
    std::unique_ptr<kernels::cuda::Blas> blas_;
    void* fixed_ = nullptr; // cuBLAS workspace, then the reduction scratch
    std::uint64_t fixedBytes_ = 0, blasWorkspaceBytes_ = 0;
    void* scratch_ = nullptr; // inside fixed_: reduction partials, then the two results
    void* cast_ = nullptr;    // bf16 GEMM operands (mixed precision only)
    std::uint64_t castBytes_ = 0;
    bool bf16Linear_ = false;
};

} // namespace shardscope::device
