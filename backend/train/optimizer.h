#pragma once
// AdamW (Loshchilov & Hutter; PyTorch's torch.optim.AdamW semantics) and global-norm gradient
// clipping, on flat fp32 state with bf16 or fp32 gradients.
#include <cstdint>
#include <span>

#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"

namespace shardscope::train {

struct AdamWConfig {
    double learningRate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1; // decoupled; applied only where the layout says `decay`
    double clipNorm = 1.0;    // global L2 norm limit; ≤ 0 disables clipping
};

// Σ g² over a gradient span, in double so the global norm does not depend on summation luck.
double sumSquares(std::span<const kernels::Bf16> grads);
double sumSquares(std::span<const float> grads);

// Scale applied to every gradient: min(1, clipNorm / (‖g‖ + 1e-6)), as torch.nn.utils.clip_grad_norm_.
float clipScale(double globalNorm, double clipNorm);

struct AdamWStep {
    std::int64_t step = 1;   // 1-based, for bias correction
    float gradScale = 1.0f;  // clipping coefficient
    bool decay = false;
};

// The kernel scalars of one update (kernels/cpu/adamw.h: what the device ops take).
kernels::AdamWScalars scalarsOf(const AdamWConfig& cfg, const AdamWStep& step);

// One AdamW update of `params` (fp32 master or fp32 params) in place:
//   p ← p·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
//   p ← p − lr · m̂ / (√v̂ + ε) with m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const kernels::Bf16> grads, std::span<float> m, std::span<float> v);
void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const float> grads, std::span<float> m, std::span<float> v);

} // namespace shardscope::train
