#pragma once
// AdamW's update on flat fp32 state (torch.optim.AdamW semantics), split into the host-side
// scalars (bias corrections in double, rounded to float once) and the elementwise update, so
// the CPU loop here and the CUDA kernel (kernels/cuda) evaluate the same float expression in
// the same order and agree bitwise.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace shardscope::kernels {

struct AdamWScalars {
    float beta1 = 0, beta2 = 0, eps = 0;
    float decay = 1;       // 1 − lr·wd where the layout says decay, else 1
    float stepSize = 0;    // lr / (1 − β1^t)
    float vCorrection = 1; // √(1 − β2^t)
    float gradScale = 1;   // clipping coefficient (and 1 / (ranks × micro-steps))
};

AdamWScalars adamwScalars(double learningRate, double beta1, double beta2, double eps,
                          double weightDecay, std::int64_t step, bool decay, float gradScale);

// For each i: g = grad[i]·gradScale; m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g·g;
// p = p·decay − stepSize·m / (√v / vCorrection + ε).
void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::uint64_t n);
void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::uint64_t n);

} // namespace shardscope::kernels
