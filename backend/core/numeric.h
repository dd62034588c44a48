#pragma once
// Plain numeric vocabulary shared by the kernels, the device ops and the step driver, kept here
// so that naming a bf16 buffer or an AdamW update does not link any kernel.
//
// bfloat16 storage: the top 16 bits of an IEEE binary32. Conversion from float rounds to
// nearest, ties to even (what hardware and PyTorch do); NaN stays NaN (quieted, sign kept),
// ±Inf stays ±Inf, finite values beyond bf16's range round to ±Inf, subnormals keep their
// bits (bf16 has float's exponent range, so no flush-to-zero is needed or done).
#include <bit>
#include <cmath>
#include <cstdint>

namespace shardscope {

struct Bf16 {
    std::uint16_t bits = 0;
    bool operator==(const Bf16&) const = default;
};

constexpr Bf16 toBf16(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: truncating could produce Inf, so force quiet bit
        return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
    // Adding 0x7fff plus the lowest kept bit rounds half-way cases toward the even neighbour.
    const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

constexpr float toFloat(Bf16 b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16);
}

// AdamW's host-side scalars (torch.optim.AdamW semantics): bias corrections in double, rounded
// to float once, so every backend's elementwise update evaluates the same float expression.
struct AdamWScalars {
    float beta1 = 0, beta2 = 0, eps = 0;
    float decay = 1;       // 1 − lr·wd where the layout says decay, else 1
    float stepSize = 0;    // lr / (1 − β1^t)
    float vCorrection = 1; // √(1 − β2^t)
    float gradScale = 1;   // clipping coefficient (and 1 / (ranks × micro-steps))
};

// One element of AdamW's update from its raw gradient: the definition every C++ path rounds like
// (kernels/cpu/adamw.cpp's scalar loop and host offload's loops call it; the vector path evaluates
// the same operations in the same order without FMA; the CUDA kernel spells each rounding out).
inline void adamwElement(const AdamWScalars& s, float grad, float& p, float& m, float& v) {
    grad *= s.gradScale;
    m = s.beta1 * m + (1.0f - s.beta1) * grad;
    v = s.beta2 * v + (1.0f - s.beta2) * grad * grad;
    const float denom = std::sqrt(v) / s.vCorrection + s.eps;
    p = p * s.decay - s.stepSize * m / denom;
}

inline AdamWScalars adamwScalars(double learningRate, double beta1, double beta2, double eps,
                                 double weightDecay, std::int64_t step, bool decay,
                                 float gradScale) {
    const auto t = static_cast<double>(step);
    AdamWScalars s;
    s.beta1 = static_cast<float>(beta1);
    s.beta2 = static_cast<float>(beta2);
    s.eps = static_cast<float>(eps);
    s.decay = decay ? static_cast<float>(1.0 - learningRate * weightDecay) : 1.0f;
    // Bias corrections folded into the step size, as PyTorch does (computed once, in double).
    s.stepSize = static_cast<float>(learningRate / (1.0 - std::pow(beta1, t)));
    s.vCorrection = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)));
    s.gradScale = gradScale;
    return s;
}

} // namespace shardscope
