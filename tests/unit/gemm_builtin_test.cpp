// The built-in GEMM (the CPU GEMM of builds without OpenBLAS) against a naive triple loop in
// double, for all four transpose combinations, edge tiles, several k-blocks, padded leading
// dimensions and the alpha/beta cases BLAS callers rely on. It is always compiled into
// kernels_cpu, so this runs on machines where gemm() itself is OpenBLAS.
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_builtin.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <thread>
#include <vector>

namespace shardscope {
namespace {

struct Case {
    std::int64_t m, n, k;
    float alpha, beta;
    std::int64_t pad; // extra elements per row of A, B and C (leading dimension > width)
};

struct Operands {
    bool transA, transB;
    Case c;
    std::int64_t lda, ldb, ldc;
    std::vector<float> a, b, c0;

    Operands(bool ta, bool tb, Case cs, std::uint32_t seed) : transA(ta), transB(tb), c(cs) {
        // Stored shapes: A is m×k (k×m when transposed), B is k×n (n×k when transposed).
        const std::int64_t aRows = ta ? c.k : c.m, aCols = ta ? c.m : c.k;
        const std::int64_t bRows = tb ? c.n : c.k, bCols = tb ? c.k : c.n;
        lda = aCols + c.pad;
        ldb = bCols + c.pad;
        ldc = c.n + c.pad;
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        a.resize(static_cast<std::size_t>(std::max<std::int64_t>(aRows * lda, 1)));
        b.resize(static_cast<std::size_t>(std::max<std::int64_t>(bRows * ldb, 1)));
        c0.resize(static_cast<std::size_t>(std::max<std::int64_t>(c.m * ldc, 1)));
        for (float& x : a)
            x = u(rng);
        for (float& x : b)
            x = u(rng);
        for (float& x : c0)
            x = u(rng);
    }
    double opA(std::int64_t i, std::int64_t p) const {
        return static_cast<double>(a[static_cast<std::size_t>(transA ? p * lda + i : i * lda + p)]);
    }
    double opB(std::int64_t p, std::int64_t j) const {
        return static_cast<double>(b[static_cast<std::size_t>(transB ? j * ldb + p : p * ldb + j)]);
    }

    std::vector<float> run() const {
        std::vector<float> out = c0;
        kernels::gemmBuiltin(transA, transB, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb,
                             c.beta, out.data(), ldc);
        return out;
    }

    // Naive triple loop in double; checks every element of C (and that padding is untouched)
    // against a bound of a few ulps per addition.
    void expectMatchesNaive(const std::vector<float>& out) const {
        int bad = 0;
        for (std::int64_t i = 0; i < c.m; ++i) {
            for (std::int64_t j = 0; j < ldc; ++j) {
                const auto idx = static_cast<std::size_t>(i * ldc + j);
                if (j >= c.n) { // padding columns are not part of C
                    EXPECT_EQ(out[idx], c0[idx]) << "padding written at " << i << "," << j;
                    continue;
                }
                double sum = 0, mag = 0;
                for (std::int64_t p = 0; p < c.k; ++p) {
                    sum += opA(i, p) * opB(p, j);
                    mag += std::fabs(opA(i, p) * opB(p, j));
                }
                const double prior =
                    c.beta == 0.0f ? 0.0
                                   : static_cast<double>(c.beta) * static_cast<double>(c0[idx]);
                const double ref = static_cast<double>(c.alpha) * sum + prior;
                const double bound =
                    2.0 * static_cast<double>(c.k + 2) * static_cast<double>(FLT_EPSILON) *
                        (std::fabs(static_cast<double>(c.alpha)) * mag + std::fabs(prior)) +
                    1e-30;
                if (!(std::fabs(static_cast<double>(out[idx]) - ref) <= bound) && ++bad <= 5)
                    ADD_FAILURE() << "C[" << i << "][" << j << "] = " << out[idx] << ", naive "
                                  << ref << " (bound " << bound << ")";
            }
        }
        EXPECT_EQ(bad, 0) << "elements outside the bound";
    }
};

const char* label(bool ta, bool tb) {
    return ta ? (tb ? "TT" : "TN") : (tb ? "NT" : "NN");
}

TEST(gemmBuiltin, MatchesNaiveLoopForAllTransposes) {
    const std::vector<Case> cases = {
        {1, 1, 1, 1.0f, 0.0f, 0},
        {5, 7, 3, 1.0f, 0.0f, 0},       // smaller than one 6×8 register tile
        {6, 8, 16, 1.0f, 0.0f, 0},      // exactly one tile
        {37, 53, 29, 1.0f, 1.0f, 3},    // edge tiles in both directions, accumulate, padded rows
        {130, 70, 300, -1.5f, 0.5f, 1}, // more than one 120-row block and two 256-long k-blocks
        {64, 96, 600, 0.125f, 0.0f, 0}, // three k-blocks
        {3, 2100, 5, 1.0f, 2.0f, 2},    // more than one 2048-column panel
    };
    std::uint32_t seed = 1;
    for (bool ta : {false, true})
        for (bool tb : {false, true})
            for (const Case& cs : cases) {
                SCOPED_TRACE(::testing::Message()
                             << label(ta, tb) << " m=" << cs.m << " n=" << cs.n << " k=" << cs.k
                             << " alpha=" << cs.alpha << " beta=" << cs.beta << " pad=" << cs.pad);
                const Operands op(ta, tb, cs, seed++);
                op.expectMatchesNaive(op.run());
            }
}

TEST(gemmBuiltin, BetaZeroOverwritesWithoutReadingC) {
    // BLAS semantics: with beta = 0, C is output only; NaN or garbage in it must not survive.
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            SCOPED_TRACE(label(ta, tb));
            Operands op(ta, tb, {9, 10, 11, 1.0f, 0.0f, 0}, 7);
            std::fill(op.c0.begin(), op.c0.end(), std::numeric_limits<float>::quiet_NaN());
            const std::vector<float> out = op.run();
            for (float x : out)
                ASSERT_FALSE(std::isnan(x));
            std::fill(op.c0.begin(), op.c0.end(), 0.0f);
            op.expectMatchesNaive(out);
        }
}

TEST(gemmBuiltin, DegenerateShapesAndAlphaZero) {
    // k = 0 and alpha = 0: C = beta·C exactly; m = 0 or n = 0: nothing is touched.
    for (const Case& cs : std::vector<Case>{
             {4, 5, 0, 1.0f, 0.5f, 0}, {4, 5, 3, 0.0f, 0.5f, 0}, {4, 5, 3, 0.0f, 0.0f, 0}}) {
        const Operands op(false, false, cs, 3);
        const std::vector<float> out = op.run();
        for (std::size_t i = 0; i < out.size(); ++i)
            EXPECT_EQ(out[i], cs.beta * op.c0[i]);
    }
    std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 5.0f);
    kernels::gemmBuiltin(false, false, 0, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
    kernels::gemmBuiltin(false, false, 2, 0, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
    EXPECT_EQ(c, std::vector<float>(4, 5.0f));
}

TEST(gemmBuiltin, DeterministicAcrossCallsThreadsAndLeadingDimensions) {
    // The order of additions depends only on m, n and k: repeated calls, another thread (its
    // own packing buffers) and padded copies of the same operands give the same bits.
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            SCOPED_TRACE(label(ta, tb));
            const Operands op(ta, tb, {70, 45, 520, 0.75f, 0.0f, 0}, 11);
            const std::vector<float> first = op.run();
            EXPECT_EQ(op.run(), first);
            std::vector<float> other;
            std::thread([&] { other = op.run(); }).join();
            EXPECT_EQ(other, first);

            Operands padded(ta, tb, {70, 45, 520, 0.75f, 0.0f, 5}, 11);
            const std::int64_t aRows = ta ? 520 : 70, aCols = ta ? 70 : 520;
            const std::int64_t bRows = tb ? 45 : 520, bCols = tb ? 520 : 45;
            for (std::int64_t r = 0; r < aRows; ++r)
                for (std::int64_t q = 0; q < aCols; ++q)
                    padded.a[static_cast<std::size_t>(r * padded.lda + q)] =
                        op.a[static_cast<std::size_t>(r * op.lda + q)];
            for (std::int64_t r = 0; r < bRows; ++r)
                for (std::int64_t q = 0; q < bCols; ++q)
                    padded.b[static_cast<std::size_t>(r * padded.ldb + q)] =
                        op.b[static_cast<std::size_t>(r * op.ldb + q)];
            const std::vector<float> out = padded.run();
            for (std::int64_t i = 0; i < 70; ++i)
                for (std::int64_t j = 0; j < 45; ++j)
                    ASSERT_EQ(out[static_cast<std::size_t>(i * padded.ldc + j)],
                              first[static_cast<std::size_t>(i * op.ldc + j)])
                        << i << "," << j;
        }
}

TEST(gemmBuiltin, AgreesWithTheConfiguredGemm) {
    // gemm() is OpenBLAS or this kernel depending on the build; either way they agree to
    // rounding, and a build without OpenBLAS says so.
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            SCOPED_TRACE(label(ta, tb));
            const Operands op(ta, tb, {33, 41, 77, 1.0f, 1.0f, 0}, 5);
            std::vector<float> viaGemm = op.c0;
            kernels::gemm(ta, tb, 33, 41, 77, 1.0f, op.a.data(), op.lda, op.b.data(), op.ldb, 1.0f,
                          viaGemm.data(), op.ldc);
            const std::vector<float> builtin = op.run();
            for (std::size_t i = 0; i < builtin.size(); ++i)
                EXPECT_NEAR(viaGemm[i], builtin[i], 1e-4f) << i;
        }
    if (kernels::blasCoreName() == "built-in (no OpenBLAS)") {
        EXPECT_EQ(kernels::blasThreads(), 1);
        EXPECT_FALSE(kernels::blasAdvice().empty());
    }
}

} // namespace
} // namespace shardscope
