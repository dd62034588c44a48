#pragma once
// The two passes of the exact gradient norm (train/grad_norm.h) over one rank's gradients:
// max |g| with a finiteness check, then Σ trunc(g² · 2^shift) as a 128-bit integer. Both are
// exact, so every implementation (the vector one used where the CPU has AVX2, the scalar
// reference, the CUDA kernels) returns the same bits for the same elements in any order.
#include "kernels/cpu/bf16.h"

#include <cstdint>

namespace shardscope::kernels {

struct AbsMax {
    bool finite = true;
    float maxAbs = 0; // max |g| over the range when finite (meaningless otherwise)
};

struct Uint128 {
    std::uint64_t lo = 0, hi = 0;
};

AbsMax absMax(const float* g, std::uint64_t n);
AbsMax absMax(const Bf16* g, std::uint64_t n);

// Σ trunc(g² · 2^shift): g² exact in double, the scaling exact (a power of two), the truncation
// toward zero. Precondition (the caller's choice of shift): every scaled g² < 2^125 and the sum
// fits 128 bits; shift in [−300, 450] so 2^shift is a normal double.
Uint128 sumSquaresFixed(const float* g, std::uint64_t n, int shift);
Uint128 sumSquaresFixed(const Bf16* g, std::uint64_t n, int shift);

// The same sum one element at a time with ldexp and a 128-bit conversion: the definition the
// vector path is tested against.
Uint128 sumSquaresFixedReference(const float* g, std::uint64_t n, int shift);

} // namespace shardscope::kernels
