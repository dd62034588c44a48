#pragma once
// The arithmetic a rank performs on its device's memory, behind one interface, so the model
// (model/gpt.cpp), the strategy (strategy/sharded.cpp) and the step driver (train/trainer.cpp)
// run unchanged on a CPU rank (CpuOps over kernels/cpu) and on a CUDA rank (CudaOps over
// kernels/cuda, on the rank's compute stream). Device::ops() returns the device's own Ops.
//
// Note: every pointer argument is memory of the Device that owns this Ops, except upload's
// source and download's target (host memory). CUDA implementations are stream-ordered: a call
// returns before the work has run, except the calls that return a host value
// (crossEntropyForward, gradientStats, sumSquaresFixed) and upload/download/synchronize, which
// wait (an upload's host buffer may be reused as soon as it returns).
// Both backends allocate the same scratch (attention: seq² floats; cross-entropy: rows + 1
// doubles) through the caller, so the ledger — and the dry run's prediction of it (predict/) —
// is the same on both. The model ops have the semantics of kernels/cpu/ops.h (backward functions
// ACCUMULATE into parameter gradients and into dx where documented there).
#include "core/numeric.h"

#include <cstdint>

namespace shardscope::device {

// max |g| over a range and whether every element was finite.
struct GradientStats {
    double maxAbs = 0.0;
    bool finite = true;
};

// An unsigned 128-bit integer as two 64-bit halves (the fixed-point Σg² of train/grad_norm.h).
struct Uint128Parts {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
};

class Ops {
public:
    virtual ~Ops() = default;
    Ops() = default;
    Ops(const Ops&) = delete;
    Ops& operator=(const Ops&) = delete;

    // ---- memory -------------------------------------------------------------------------------
    virtual void copy(void* dst, const void* src, std::uint64_t bytes) = 0; // device → device
    virtual void upload(void* dst, const void* host,
                        std::uint64_t bytes) = 0; // host → device, waits
    virtual void download(void* host, const void* src, std::uint64_t bytes) = 0; // waits
    virtual void zero(void* dst, std::uint64_t bytes) = 0;
    virtual void synchronize() = 0; // every call so far has completed (CPU: nothing to do)

    // ---- precision ----------------------------------------------------------------------------
    virtual void toBf16(const float* in, Bf16* out, std::uint64_t n) = 0; // RNE, core/numeric.h
    virtual void toFloat(const Bf16* in, float* out, std::uint64_t n) = 0;
    // dst[i] += src[i] for n elements of fp32 (bf16 = false) or bf16 (added in fp32, rounded once).
    virtual void accumulate(void* dst, const void* src, std::uint64_t n, bool bf16) = 0;
    // dst[i] = bf16(float(dst[i]) + src[i]): an fp32 gradient added to a bf16 one.
    virtual void accumulateRounded(Bf16* dst, const float* src, std::uint64_t n) = 0;

    // ---- the GPT's ops (kernels/cpu/ops.h; ids and targets are validated by the caller) ------
    virtual void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe,
                                  float* out, std::int64_t batch, std::int64_t seq, std::int64_t d,
                                  std::int64_t vocab) = 0;
    virtual void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte,
                                   float* dwpe, std::int64_t batch, std::int64_t seq,
                                   std::int64_t d, std::int64_t vocab) = 0;
    virtual void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                                  float* mean, float* rstd, std::int64_t rows, std::int64_t d) = 0;
    virtual void layerNormBackward(const float* dout, const float* x, const float* mean,
                                   const float* rstd, const float* gamma, float* dx, float* dgamma,
                                   float* dbeta, std::int64_t rows, std::int64_t d) = 0;
    // Mixed precision (set by the step driver): a device with bf16 GEMMs rounds the operands of
    // linear layers to bf16 and accumulates in fp32, as autocast does; CpuOps keeps fp32 GEMMs
    // (parity between the backends is then within bf16 tolerances, not bitwise).
    virtual void setBf16Linear(bool on) { (void)on; }
    virtual void linearForward(const float* x, const float* w, const float* bias, float* y,
                               std::int64_t rows, std::int64_t in, std::int64_t out,
                               bool accumulate) = 0;
    // dx += dy·Wᵀ, dW += xᵀ·dy, dbias += Σ dy, each skipped when its pointer is null (also in
    // linearBackwardBf16): a split backward (zb1) runs dx alone, then dW and dbias alone.
    virtual void linearBackward(const float* dy, const float* x, const float* w, float* dx,
                                float* dw, float* dbias, std::int64_t rows, std::int64_t in,
                                std::int64_t out) = 0;
    // Linear layers on a CPU's bf16 units (the model's bf16 GEMM path, train::TrainConfig's
    // bf16Gemm): the operands already bf16 — x as the model keeps it, the caller's workspace copy
    // of dy, the unit's bf16 parameters — products accumulated in fp32 (kernels/cpu/ops.h). Devices
    // without that path throw Error(Internal).
    virtual void linearForwardBf16(const Bf16* x, const Bf16* w, const float* bias, float* y,
                                   std::int64_t rows, std::int64_t in, std::int64_t out,
                                   bool accumulate);
    virtual void linearBackwardBf16(const float* dy, const Bf16* dyBf16, const Bf16* xBf16,
                                    const Bf16* w, float* dx, float* dw, float* dbias,
                                    std::int64_t rows, std::int64_t in, std::int64_t out);
    virtual void attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                                  std::int64_t seq, std::int64_t heads, std::int64_t headDim) = 0;
    // scratch: attentionScratchFloats(seq) floats.
    virtual void attentionBackward(const float* dout, const float* qkv, const float* probs,
                                   float* dqkv, float* scratch, std::int64_t batch,
                                   std::int64_t seq, std::int64_t heads, std::int64_t headDim) = 0;
    static constexpr std::int64_t attentionScratchFloats(std::int64_t seq) { return seq * seq; }
    virtual void geluForward(const float* x, float* y, std::int64_t n) = 0;
    virtual void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) = 0;
    virtual void add(const float* a, const float* b, float* y, std::int64_t n) = 0;
    // Probabilities in place; returns the mean NLL (row terms in `scratch`, summed in row order
    // in double). scratch: crossEntropyScratchDoubles(rows) doubles. Waits for the result.
    virtual double crossEntropyForward(float* logitsToProbs, const std::int32_t* targets,
                                       double* scratch, std::int64_t rows, std::int64_t vocab) = 0;
    static constexpr std::int64_t crossEntropyScratchDoubles(std::int64_t rows) { return rows + 1; }
    virtual void crossEntropyBackward(const float* probs, const std::int32_t* targets,
                                      float* dlogits, std::int64_t rows, std::int64_t vocab,
                                      float scale) = 0;

    // ---- optimizer (core/numeric.h, kernels/cpu/adamw.h: bitwise the same on both backends)
    // -----------------
    virtual void adamw(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
                       float* m, float* v, std::uint64_t n) = 0;

    // ---- the exact gradient norm (train/grad_norm.h) --------------------------------------------
    virtual GradientStats gradientStats(const void* grads, std::uint64_t n, bool bf16) = 0;
    // Σ trunc(g² · 2^shift) over the range as a 128-bit integer (g² exact in double, ldexp,
    // truncation toward zero; the caller picks `shift` so the sum cannot overflow).
    virtual Uint128Parts sumSquaresFixed(const void* grads, std::uint64_t n, bool bf16,
                                         int shift) = 0;
};

} // namespace shardscope::device
