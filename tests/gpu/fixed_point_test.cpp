// The CUDA gradient-norm kernel's fixed-point arithmetic (kernels/cuda/fixed_point.h), compiled
// for the host: each g² term split into 64-bit halves and the carrying addition must equal the
// CPU's unsigned __int128 arithmetic (train/grad_norm.cpp, CpuOps::sumSquaresFixed) bit for bit.
// Runs everywhere; the device build of the same functions is checked by gpu_ops_test.
#include "device/cpu_ops.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cuda/fixed_point.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

namespace shardscope {
namespace {

__extension__ typedef unsigned __int128 Uint128;

using kernels::cuda::addUint128;
using kernels::cuda::fixedSquare;
using kernels::cuda::Uint128Parts;

Uint128 join(Uint128Parts p) {
    return (static_cast<Uint128>(p.hi) << 64) | p.lo;
}

// The CPU's term (train/grad_norm.cpp).
Uint128 cpuTerm(float g, int shift) {
    const double sq = static_cast<double>(g) * static_cast<double>(g);
    return static_cast<Uint128>(std::ldexp(sq, shift));
}

// The largest shift that keeps g² · 2^shift below 2^126, as grad_norm.cpp's choice does.
int maxShift(float g) {
    int e = 0;
    std::frexp(std::fabs(static_cast<double>(g)), &e);
    return 126 - 2 * e;
}

TEST(gpuFixedPoint, TermsEqualTheCpusInt128Conversion) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::uint32_t> bits;
    std::uniform_int_distribution<int> below(0, 90);
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
        // Any finite float, subnormals included: random bit patterns cover every exponent.
        const float g = std::bit_cast<float>(bits(rng));
        if (!std::isfinite(g) || g == 0.0f) continue;
        const int shift = maxShift(g) - below(rng); // from the top bit down to far below 1
        ASSERT_EQ(join(fixedSquare(g, shift)), cpuTerm(g, shift))
            << "g " << g << " shift " << shift;
        ++checked;
    }
    EXPECT_GT(checked, 150000);
    // Edges: exactly 2^64 and just around it, the top of the range, zero, a term below 1.
    EXPECT_EQ(join(fixedSquare(1.0f, 64)), static_cast<Uint128>(1) << 64);
    EXPECT_EQ(join(fixedSquare(1.5f, 63)), cpuTerm(1.5f, 63)); // 2.25 · 2^63: crosses 2^64
    EXPECT_EQ(join(fixedSquare(std::nextafter(1.0f, 0.0f), 64)),
              cpuTerm(std::nextafter(1.0f, 0.0f), 64));
    EXPECT_EQ(
        join(fixedSquare(std::numeric_limits<float>::max(),
                         maxShift(std::numeric_limits<float>::max()))),
        cpuTerm(std::numeric_limits<float>::max(), maxShift(std::numeric_limits<float>::max())));
    EXPECT_EQ(join(fixedSquare(0.0f, 100)), 0u);
    EXPECT_EQ(join(fixedSquare(0.5f, 1)), 0u); // 0.25 · 2 truncates to 0
}

TEST(gpuFixedPoint, CarryingAdditionIsInt128Addition) {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 100000; ++i) {
        // Mostly large low halves, so carries happen often; wrap-around at 2^128 included.
        const Uint128Parts a{rng() | (i % 2 ? 0xffff000000000000ull : 0), rng() >> (i % 3 ? 2 : 0)};
        const Uint128Parts b{rng() | 0x8000000000000000ull, rng()};
        ASSERT_EQ(join(addUint128(a, b)), join(a) + join(b));
    }
}

// The kernel's fold (terms in any order, carrying adds) against CpuOps::sumSquaresFixed on
// gradients of a real norm's shape: fp32 and bf16, one rank holding every element.
TEST(gpuFixedPoint, FoldedTermsEqualCpuOpsSumSquaresFixed) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<int> exponent(-40, 10);
    std::vector<float> g(100001);
    for (float& x : g)
        x = std::ldexp(normal(rng), exponent(rng));
    std::vector<kernels::Bf16> gb(g.size());
    kernels::toBf16(g, gb);
    device::CpuOps cpu;
    for (bool bf16 : {false, true}) {
        const void* data = bf16 ? static_cast<const void*>(gb.data()) : g.data();
        const device::GradientStats stats = cpu.gradientStats(data, g.size(), bf16);
        int e = 0;
        std::frexp(stats.maxAbs, &e);
        const int shift = (126 - static_cast<int>(std::bit_width(g.size() | 1))) - 2 * e;
        Uint128Parts forward{0, 0}, backward{0, 0};
        for (std::size_t i = 0; i < g.size(); ++i) {
            const float a = bf16 ? kernels::toFloat(gb[i]) : g[i];
            const float b = bf16 ? kernels::toFloat(gb[g.size() - 1 - i]) : g[g.size() - 1 - i];
            forward = addUint128(forward, fixedSquare(a, shift));
            backward = addUint128(backward, fixedSquare(b, shift));
        }
        const device::Uint128Parts want = cpu.sumSquaresFixed(data, g.size(), bf16, shift);
        EXPECT_EQ(forward.lo, want.lo) << "bf16 " << bf16;
        EXPECT_EQ(forward.hi, want.hi) << "bf16 " << bf16;
        EXPECT_EQ(join(backward), join(forward)) << "order-independent";
        EXPECT_NE(want.hi, 0u) << "the high half is exercised";
    }
}

} // namespace
} // namespace shardscope
