#pragma once
// bfloat16 storage: the top 16 bits of an IEEE binary32. Conversion from float rounds to
// nearest, ties to even (what hardware and PyTorch do); NaN stays NaN (quieted, sign kept),
// ±Inf stays ±Inf, finite values beyond bf16's range round to ±Inf, subnormals keep their
// bits (bf16 has float's exponent range, so no flush-to-zero is needed or done).
#include <bit>
#include <cstdint>
#include <span>

namespace shardscope::kernels {

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

// Bulk conversions; sizes must match (checked, throws Error(Internal)).
void toBf16(std::span<const float> in, std::span<Bf16> out);
void toFloat(std::span<const Bf16> in, std::span<float> out);

} // namespace shardscope::kernels
