// bfloat16 conversion: exact round trips, round-to-nearest-even, NaN, ±Inf, overflow, subnormals.
#include "kernels/cpu/bf16.h"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace shardscope {
namespace {

using kernels::Bf16;
using kernels::toBf16;
using kernels::toFloat;

float fromBits(std::uint32_t u) {
    return std::bit_cast<float>(u);
}

TEST(bf16, EveryBf16ValueRoundTripsExactly) {
    int nans = 0;
    for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
        const Bf16 b{static_cast<std::uint16_t>(bits)};
        const float f = toFloat(b);
        if (std::isnan(f)) {
            ++nans;
            EXPECT_TRUE(std::isnan(toFloat(toBf16(f))));
            continue;
        }
        EXPECT_EQ(toBf16(f).bits, b.bits) << std::hex << bits;
    }
    EXPECT_EQ(nans, 2 * 127); // 2 signs × (2^7 − 1) non-zero mantissas
}

TEST(bf16, RoundsToNearestTiesToEven) {
    // 1.0 = 0x3f800000; bf16 keeps 7 mantissa bits, so the dropped half-ulp is 0x8000.
    EXPECT_EQ(toBf16(fromBits(0x3f808000u)).bits, 0x3f80u) << "tie, lower neighbour even → down";
    EXPECT_EQ(toBf16(fromBits(0x3f818000u)).bits, 0x3f82u) << "tie, lower neighbour odd → up";
    EXPECT_EQ(toBf16(fromBits(0x3f807fffu)).bits, 0x3f80u) << "below half → down";
    EXPECT_EQ(toBf16(fromBits(0x3f808001u)).bits, 0x3f81u) << "above half → up";
    EXPECT_EQ(toBf16(fromBits(0xbf818000u)).bits, 0xbf82u) << "sign does not change the rule";
    // Carry into the exponent: the largest mantissa rounds up to the next power of two.
    EXPECT_EQ(toBf16(fromBits(0x3fffc000u)).bits, 0x4000u);
    EXPECT_EQ(toFloat(toBf16(1.0f / 3.0f)), fromBits(0x3eab0000u));
}

TEST(bf16, NanStaysNanInfStaysInf) {
    const float qnan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(toFloat(toBf16(qnan))));
    // A signalling NaN whose payload lives only in the low 16 bits must not become Inf.
    const float lowPayloadNan = fromBits(0x7f800001u);
    ASSERT_TRUE(std::isnan(lowPayloadNan));
    EXPECT_TRUE(std::isnan(toFloat(toBf16(lowPayloadNan))));
    EXPECT_TRUE(std::isnan(toFloat(toBf16(fromBits(0xffffffffu)))));
    EXPECT_EQ(toBf16(fromBits(0xff800001u)).bits & 0x8000u, 0x8000u) << "NaN keeps its sign";

    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(toBf16(inf).bits, 0x7f80u);
    EXPECT_EQ(toBf16(-inf).bits, 0xff80u);
    // The largest finite float is above bf16's largest finite + half an ulp: rounds to Inf.
    EXPECT_EQ(toBf16(std::numeric_limits<float>::max()).bits, 0x7f80u);
    EXPECT_EQ(toBf16(-std::numeric_limits<float>::max()).bits, 0xff80u);
    // bf16 max finite (0x7f7f) survives.
    EXPECT_EQ(toBf16(toFloat(Bf16{0x7f7fu})).bits, 0x7f7fu);
}

TEST(bf16, SubnormalsAndZerosAreKept) {
    EXPECT_EQ(toBf16(0.0f).bits, 0x0000u);
    EXPECT_EQ(toBf16(-0.0f).bits, 0x8000u);
    const float smallestBf16Subnormal = fromBits(0x00010000u);
    ASSERT_EQ(std::fpclassify(smallestBf16Subnormal), FP_SUBNORMAL);
    EXPECT_EQ(toBf16(smallestBf16Subnormal).bits, 0x0001u);
    EXPECT_EQ(toFloat(Bf16{0x0001u}), smallestBf16Subnormal);
    // The smallest float subnormal is far below half a bf16 ulp: rounds to zero, sign kept.
    EXPECT_EQ(toBf16(fromBits(0x00000001u)).bits, 0x0000u);
    EXPECT_EQ(toBf16(fromBits(0x80000001u)).bits, 0x8000u);
    // Ties to even among subnormals, and rounding up out of the subnormal range.
    EXPECT_EQ(toBf16(fromBits(0x00018000u)).bits, 0x0002u);
    EXPECT_EQ(toBf16(fromBits(0x00028000u)).bits, 0x0002u);
    EXPECT_EQ(toBf16(fromBits(0x007fc000u)).bits, 0x0080u)
        << "largest subnormal rounds to the smallest normal";
}

TEST(bf16, BulkConversionsMatchScalar) {
    std::vector<float> in = {1.5f, -2.25f, 3.14159f, 1e-30f, 65504.0f};
    std::vector<Bf16> mid(in.size());
    std::vector<float> out(in.size());
    kernels::toBf16(in, mid);
    kernels::toFloat(mid, out);
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(mid[i], toBf16(in[i]));
        EXPECT_EQ(out[i], toFloat(toBf16(in[i])));
        EXPECT_LE(std::abs(out[i] - in[i]), std::abs(in[i]) * (1.0f / 256.0f))
            << "within half an ulp (2^-8)";
    }
    std::vector<Bf16> shorter(2);
    EXPECT_THROW(kernels::toBf16(in, shorter), std::exception);
}

} // namespace
} // namespace shardscope
