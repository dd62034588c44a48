#pragma once
// The GPT's forward/backward ops on a CUDA device: the same functions, arguments and semantics
// as kernels/cpu/ops.h (row-major tensors, weights [in × out], backward ACCUMULATES into
// parameter gradients and into `dx` where documented), on device pointers, enqueued on a stream.
// Every op is stream-ordered and returns before the GPU has run it.
//
// Precision: activations and gradients are fp32; GEMMs run either in fp32 or with bf16 inputs
// and fp32 accumulation/output (the Bf16 overloads). Reductions whose order would otherwise
// depend on thread scheduling (embedding and bias/LayerNorm parameter gradients, the mean loss,
// rank-order sums) are written to sum in the CPU kernels' order, so they are deterministic and,
// where the arithmetic is the same, bitwise equal to the CPU (tests/gpu checks which).
//
// Differences from the CPU API, each for a reason:
//  - no exceptions from device code: an out-of-range token or target id produces NaN in its row
//    (never an out-of-bounds read); callers validate ids on the host, where they come from.
//  - embeddingBackward takes the vocabulary size too, to skip (not follow) an out-of-range id.
//  - crossEntropyForward cannot return the loss without a device→host sync, so it writes the
//    mean to a device double and needs `rows` doubles of scratch for the per-row terms.
//  - attentionBackward needs at least seq² floats of scratch (as on CPU) and batches as many
//    heads per GEMM as the scratch holds (heads·seq² floats: one batched call per sequence).
//
// This header names no CUDA type beyond the opaque handle structs, so code that only passes
// streams and handles around does not need the CUDA headers.
#include "core/numeric.h" // Bf16, AdamWScalars: the same on both backends
#include "kernels/cpu/bf16.h"
#include "kernels/cuda/fixed_point.h" // Uint128Parts

#include <cstddef>
#include <cstdint>

struct CUstream_st;   // cudaStream_t is CUstream_st*
struct cublasContext; // cublasHandle_t is cublasContext*

namespace shardscope::kernels::cuda {

using Stream = CUstream_st*;

// A cuBLAS handle bound to one stream (cuBLAS handles are not thread-safe: one per rank thread).
class Blas {
public:
    explicit Blas(Stream stream);
    ~Blas();
    Blas(const Blas&) = delete;
    Blas& operator=(const Blas&) = delete;
    Stream stream() const { return stream_; }
    cublasContext* handle() const { return handle_; }
    // Gives cuBLAS `bytes` of caller-owned device memory (256-byte aligned) as its workspace
    // (cublasSetWorkspace) instead of the pool it would allocate itself, so the memory is the
    // caller's to count. It must stay allocated until the handle is destroyed or given another
    // workspace, and until the work queued on the stream that may use it has run. cuBLAS picks
    // its algorithms knowing the workspace size, so two handles are sure to run the same
    // algorithm (and give the same bits) only with the same size.
    void setWorkspace(void* workspace, std::size_t bytes);
    std::size_t workspaceBytes() const { return workspaceBytes_; } // 0: cuBLAS's own default

private:
    cublasContext* handle_ = nullptr;
    Stream stream_ = nullptr;
    std::size_t workspaceBytes_ = 0;
};

// cuBLAS's recommended user workspace for a GPU of this compute capability (cuBLAS docs,
// cublasSetWorkspace): 32 MiB from Hopper (9.x) on, 4 MiB before.
std::size_t recommendedBlasWorkspaceBytes(int computeCapabilityMajor);

// GEMM input precision; accumulation and C are always fp32.
enum class Precision : std::uint8_t { Fp32, Bf16 };

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C, row-major, leading dimensions in
// elements (kernels::gemm's contract). A and B are float (Fp32) or Bf16 (Bf16).
void gemm(Blas& blas, bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta,
          float* c, std::int64_t ldc, Precision precision);

// ---- the ops of kernels/cpu/ops.h -------------------------------------------------------------

void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe, float* out,
                      std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab,
                      Stream stream);
void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                       std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab,
                       Stream stream);

void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                      float* mean, float* rstd, std::int64_t rows, std::int64_t d, Stream stream);
void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                       const float* gamma, float* dx, float* dgamma, float* dbeta,
                       std::int64_t rows, std::int64_t d, Stream stream);

void linearForward(Blas& blas, const float* x, const float* w, const float* bias, float* y,
                   std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate);
void linearForward(Blas& blas, const Bf16* x, const Bf16* w, const float* bias, float* y,
                   std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate);
void linearBackward(Blas& blas, const float* dy, const float* x, const float* w, float* dx,
                    float* dw, float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out);
void linearBackward(Blas& blas, const Bf16* dy, const Bf16* x, const Bf16* w, float* dx, float* dw,
                    float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out);

void attentionForward(Blas& blas, const float* qkv, float* probs, float* out, std::int64_t batch,
                      std::int64_t seq, std::int64_t heads, std::int64_t headDim);
void attentionBackward(Blas& blas, const float* dout, const float* qkv, const float* probs,
                       float* dqkv, float* scratch, std::int64_t scratchFloats, std::int64_t batch,
                       std::int64_t seq, std::int64_t heads, std::int64_t headDim);

void geluForward(const float* x, float* y, std::int64_t n, Stream stream);
void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n, Stream stream);
void add(const float* a, const float* b, float* y, std::int64_t n, Stream stream);

// Probabilities in place; *meanLoss (device) = mean NLL, summed in row order in double.
void crossEntropyForward(float* logitsToProbs, const std::int32_t* targets, double* rowLossScratch,
                         double* meanLoss, std::int64_t rows, std::int64_t vocab, Stream stream);
void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                          std::int64_t rows, std::int64_t vocab, float scale, Stream stream);

// ---- building blocks the ops use (exposed for tests and for the model's dispatch layer) ---------

// Row-wise causal softmax in place over `rows` rows of length seq (row r is query r % seq).
void causalSoftmaxForward(float* p, std::int64_t rows, std::int64_t seq, Stream stream);
// dP → dS = P ⊙ (dP − Σ_j dP·P) in place; zeros above the diagonal.
void causalSoftmaxBackward(const float* p, float* dpToDs, std::int64_t rows, std::int64_t seq,
                           Stream stream);
// y[r,:] = bias (accumulate = false) or y[r,:] += bias.
void addBiasRows(const float* bias, float* y, std::int64_t rows, std::int64_t cols, bool accumulate,
                 Stream stream);
// dbias[j] += Σ_r dy[r,j], rows in order (deterministic).
void columnSum(const float* dy, float* dbias, std::int64_t rows, std::int64_t cols, Stream stream);
void columnSum(const Bf16* dy, float* dbias, std::int64_t rows, std::int64_t cols, Stream stream);

// ---- bf16 conversion (core/numeric.h's rounding: RNE, NaN stays a quiet NaN) ---------------

void toBf16(const float* in, Bf16* out, std::int64_t n, Stream stream);
void toFloat(const Bf16* in, float* out, std::int64_t n, Stream stream);

// ---- AdamW: kernels/cpu/adamw.h's elementwise update (its scalars come from
// adamwScalars (core/numeric.h) on the host), evaluated in the same order without FMA contraction,
// so the result is bitwise the CPU's
// ----------------------------------------------------------------

void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::int64_t n, Stream stream);
void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::int64_t n, Stream stream);

// ---- gradient accumulation (bitwise the CPU's: one fp32 addition, one bf16 rounding) ------------

enum class Elem : std::uint8_t { F32, Bf16 };
// dst[i] += src[i]; bf16: dst = bf16(float(dst) + float(src)).
void accumulate(void* dst, const void* src, std::int64_t n, Elem t, Stream stream);
// dst[i] = bf16(float(dst[i]) + src[i]).
void accumulateRounded(Bf16* dst, const float* src, std::int64_t n, Stream stream);

// ---- the exact global gradient norm's local reductions (train/grad_norm.cpp's arithmetic) -------
// Two passes each: per-block partials into `scratch` (kReductionScratchBytes of device memory),
// then one block folds them into `*result` (device memory). Both reductions are order-independent
// (a max, and integer addition), so the result is bitwise the CPU's for any grid.

inline constexpr int kReductionBlocks = 512;
inline constexpr std::size_t kReductionScratchBytes = kReductionBlocks * 16;

struct GradientStatsResult {
    double maxAbs;        // max |g| over the finite elements (0 when none)
    std::uint32_t finite; // 1 when every element was finite
    std::uint32_t unused;
};
void gradientStats(const void* grads, std::int64_t n, Elem t, void* scratch,
                   GradientStatsResult* result, Stream stream);

// Σ trunc(ldexp(double(g)², shift)) as a 128-bit integer (wraps mod 2¹²⁸ like the CPU's; the
// caller picks `shift` so it cannot). Non-finite g are the caller's to exclude (gradientStats).
void sumSquaresFixed(const void* grads, std::int64_t n, Elem t, int shift, void* scratch,
                     Uint128Parts* result, Stream stream);

// ---- rank-order sums for the communicators (comm::sumInRankOrder on the device) ----------------

inline constexpr int kMaxRankParts = 64; // one GPU's ranks in shared-device mode
// out[i] = Σ_r parts[r][i] in rank order, fp32 accumulation, one rounding for bf16. `parts` is a
// host array of device pointers (at most kMaxRankParts). out may alias one of the parts.
void sumInRankOrder(const void* const* parts, int nparts, void* out, std::size_t count, Elem t,
                    Stream stream);
// The same with parts at base + r·strideElems (received chunks laid out back to back).
void sumStridedInRankOrder(const void* base, std::size_t strideElems, int nparts, void* out,
                           std::size_t count, Elem t, Stream stream);

} // namespace shardscope::kernels::cuda
