#pragma once
// AdamW's elementwise update on flat fp32 state (torch.optim.AdamW semantics). Its host-side
// scalars are core vocabulary (core/numeric.h), so the CPU loop here and the CUDA kernel
// (kernels/cuda) evaluate the same float expression in the same order and agree bitwise.
#include "kernels/cpu/bf16.h"

#include <cstdint>

namespace shardscope::kernels {

using shardscope::AdamWScalars;
using shardscope::adamwScalars;

// For each i: g = grad[i]·gradScale; m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g·g;
// p = p·decay − stepSize·m / (√v / vCorrection + ε).
void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::uint64_t n);
void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::uint64_t n);
// The same update one element at a time (the vector path, used where the CPU has AVX2, must
// match it bit for bit).
void adamwUpdateScalar(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                       std::uint64_t n);

} // namespace shardscope::kernels
