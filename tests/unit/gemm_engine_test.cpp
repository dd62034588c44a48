// The GEMM engines behind kernels::gemm (kernels/cpu/gemm.h): bf16 operands on the CPU's bf16
// units accumulate in fp32 (against a double loop over the same bf16 values, every transpose,
// alpha/beta, padded leading dimensions), and whichever engine runs, a call gives the same bits
// again and on another thread — what every rank's bitwise parity rests on.
#include "kernels/cpu/gemm.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <thread>
#include <vector>

namespace shardscope {
namespace {

struct Bf16Case {
    bool transA, transB;
    std::int64_t m, n, k, pad;
    float alpha, beta;
};

TEST(gemmEngine, Bf16OperandsAccumulateInFp32) {
    if (!kernels::nativeBf16Gemm()) GTEST_SKIP() << "no bf16 units here: " << kernels::gemmEngine();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const Bf16Case& c : {Bf16Case{false, false, 37, 53, 129, 0, 1.0f, 0.0f},
                              Bf16Case{false, true, 64, 48, 256, 3, 1.0f, 1.0f},
                              Bf16Case{true, false, 17, 96, 300, 5, 0.5f, 1.0f},
                              Bf16Case{true, true, 40, 33, 64, 1, 2.0f, 0.0f}}) {
        SCOPED_TRACE(testing::Message()
                     << c.transA << c.transB << " " << c.m << "×" << c.n << "×" << c.k);
        const std::int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
        const std::int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
        const std::int64_t lda = aCols + c.pad, ldb = bCols + c.pad, ldc = c.n + c.pad;
        std::vector<Bf16> a(static_cast<std::size_t>(aRows * lda)),
            b(static_cast<std::size_t>(bRows * ldb));
        for (Bf16& x : a)
            x = toBf16(u(rng));
        for (Bf16& x : b)
            x = toBf16(u(rng));
        std::vector<float> c0(static_cast<std::size_t>(c.m * ldc));
        for (float& x : c0)
            x = u(rng);
        std::vector<float> out = c0;
        kernels::gemmBf16(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb,
                          c.beta, out.data(), ldc);
        const auto opA = [&](std::int64_t i, std::int64_t p) {
            return static_cast<double>(
                toFloat(a[static_cast<std::size_t>(c.transA ? p * lda + i : i * lda + p)]));
        };
        const auto opB = [&](std::int64_t p, std::int64_t j) {
            return static_cast<double>(
                toFloat(b[static_cast<std::size_t>(c.transB ? j * ldb + p : p * ldb + j)]));
        };
        for (std::int64_t i = 0; i < c.m; ++i)
            for (std::int64_t j = 0; j < ldc; ++j) {
                const auto at = static_cast<std::size_t>(i * ldc + j);
                if (j >= c.n) {
                    ASSERT_EQ(out[at], c0[at]) << "padding written at " << i << "," << j;
                    continue;
                }
                double sum = 0, mag = 0;
                for (std::int64_t p = 0; p < c.k; ++p) {
                    sum += opA(i, p) * opB(p, j);
                    mag += std::fabs(opA(i, p) * opB(p, j));
                }
                const auto alpha = static_cast<double>(c.alpha);
                const auto beta = static_cast<double>(c.beta);
                const auto before = static_cast<double>(c0[at]);
                const double want = alpha * sum + beta * before;
                // The products of bf16 values are exact in fp32; only the fp32 sums round.
                const double bound = 1e-6 * (static_cast<double>(c.k) * mag * std::fabs(alpha) +
                                             std::fabs(beta * before)) +
                                     1e-7;
                ASSERT_NEAR(static_cast<double>(out[at]), want, bound) << i << "," << j;
            }
    }
}

TEST(gemmEngine, TheSameCallGivesTheSameBitsAgainAndOnAnotherThread) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::int64_t m = 96, n = 80, k = 200;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    for (float& x : a)
        x = u(rng);
    for (float& x : b)
        x = u(rng);
    const auto run = [&] {
        std::vector<float> c(static_cast<std::size_t>(m * n), 0.25f);
        kernels::gemm(false, true, m, n, k, 0.5f, a.data(), k, b.data(), k, 1.0f, c.data(), n);
        return c;
    };
    // b read as n×k transposed: the shape attention's scores use.
    const std::vector<float> first = run();
    EXPECT_EQ(run(), first) << kernels::gemmEngine();
    std::vector<float> other;
    std::thread([&] { other = run(); }).join();
    EXPECT_EQ(other, first) << kernels::gemmEngine();
    EXPECT_FALSE(kernels::gemmEngine().empty());
}

} // namespace
} // namespace shardscope
