#pragma once
// Forward and backward of the GPT's ops on CPU, fp32 arithmetic, row-major tensors.
// Conventions: T = rows (tokens = batch·seq), d = model width; weights are [in × out] so a
// linear layer is y = x·W + b (GPT-2's Conv1D layout). Backward functions ACCUMULATE (+=) into
// parameter gradients and into `dx` where documented, so residual branches can share a buffer.
#include "core/numeric.h"

#include <cstdint>
#include <span>

namespace shardscope::kernels {

// out[b,s,:] = wte[ids[b,s],:] + wpe[s,:]. Throws Error(InvalidArgument) for an id ≥ vocab.
void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe, float* out,
                      std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab);
// dwte[ids] += dout; dwpe[s] += Σ_b dout[b,s].
void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                       std::int64_t batch, std::int64_t seq, std::int64_t d);

inline constexpr float kLayerNormEps = 1e-5f;
// out = (x − mean)·rstd·gamma + beta per row; saves mean and rstd (one float each per row).
void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                      float* mean, float* rstd, std::int64_t rows, std::int64_t d);
// dx += ∂L/∂x; dgamma += …; dbeta += ….
void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                       const float* gamma, float* dx, float* dgamma, float* dbeta,
                       std::int64_t rows, std::int64_t d);

// y = x·W + b (accumulate = false) or y += x·W + b (accumulate = true: a residual add).
void linearForward(const float* x, const float* w, const float* bias, float* y, std::int64_t rows,
                   std::int64_t in, std::int64_t out, bool accumulate);
// dx += dy·Wᵀ; dW += xᵀ·dy; dbias += Σ_rows dy — each skipped when its pointer is null (a split
// backward runs the dx GEMM in one call and dW, dbias in another: the same arithmetic).
void linearBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                    float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out);
// The same with bf16 operands on the CPU's bf16 units (gemm.h: gemmBf16), products accumulated
// and results kept in fp32, as autocast computes them: x and W in forward; dy, x and W in
// backward, where dbias sums the fp32 dy.
void linearForwardBf16(const Bf16* x, const Bf16* w, const float* bias, float* y, std::int64_t rows,
                       std::int64_t in, std::int64_t out, bool accumulate);
void linearBackwardBf16(const float* dy, const Bf16* dyBf16, const Bf16* xBf16, const Bf16* w,
                        float* dx, float* dw, float* dbias, std::int64_t rows, std::int64_t in,
                        std::int64_t out);

// Causal multi-head self-attention on a fused qkv [B, S, 3d] (q | k | v, heads contiguous
// inside each). Saves the softmax probabilities [B, H, S, S] (zeros above the diagonal);
// writes out [B, S, d] (heads concatenated).
void attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                      std::int64_t seq, std::int64_t heads, std::int64_t headDim);
// dqkv = ∂L/∂qkv (overwritten). scratch: seq·seq floats.
void attentionBackward(const float* dout, const float* qkv, const float* probs, float* dqkv,
                       std::span<float> scratch, std::int64_t batch, std::int64_t seq,
                       std::int64_t heads, std::int64_t headDim);

// GELU, tanh approximation (GPT-2): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void geluForward(const float* x, float* y, std::int64_t n);
// dx = dy · gelu'(x) (overwritten).
void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n);

// y = a + b, elementwise (backward of a residual is the identity to both branches).
void add(const float* a, const float* b, float* y, std::int64_t n);

// Softmax cross-entropy. Turns logits [rows × vocab] into probabilities in place and returns
// the mean negative log-likelihood of targets (accumulated in double).
double crossEntropyForward(float* logitsToProbs, const std::int32_t* targets, std::int64_t rows,
                           std::int64_t vocab);
// dlogits = (probs − onehot(target)) · scale (overwritten); scale = 1/rows for a mean loss.
void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                          std::int64_t rows, std::int64_t vocab, float scale);

} // namespace shardscope::kernels
