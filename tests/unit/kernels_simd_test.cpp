// The vector paths of the optimizer-side CPU kernels (AdamW, the exact gradient norm's two
// passes, bulk bf16 conversion) against their one-element-at-a-time definitions: same bits.
#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/grad_norm.h"
#include "kernels/cpu/ops.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

namespace shardscope {
namespace {

using kernels::Bf16;

// Gradients over many binades (down to subnormals), both signs, a few exact zeros.
std::vector<float> gradients(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mant(0.5f, 1.0f);
    std::uniform_int_distribution<int> exp(-150, 4), sign(0, 1), zero(0, 50);
    std::vector<float> g(n);
    for (float& x : g)
        x = zero(rng) == 0 ? 0.0f : std::ldexp(mant(rng), exp(rng)) * (sign(rng) ? -1.0f : 1.0f);
    return g;
}

// The shift train/grad_norm.cpp picks for these values (126 − bits − 2e).
int shiftFor(const std::vector<float>& g) {
    float maxAbs = 0;
    for (float x : g)
        maxAbs = std::max(maxAbs, std::fabs(x));
    int e = 0;
    std::frexp(static_cast<double>(maxAbs), &e);
    const int bits = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(g.size()) | 1));
    return 126 - bits - 2 * e;
}

void expectSame(kernels::Uint128 a, kernels::Uint128 b, const char* what) {
    EXPECT_EQ(a.lo, b.lo) << what;
    EXPECT_EQ(a.hi, b.hi) << what;
}

TEST(kernelsSimd, FixedPointSumOfSquaresIsExactForAnyLengthAndShift) {
    for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 31u, 1000u, 65539u}) {
        const std::vector<float> g = gradients(n, static_cast<unsigned>(n) + 1);
        const int natural = shiftFor(g);
        for (int shift : {natural, natural - 40, natural - 90, std::min(natural, 200)}) {
            SCOPED_TRACE(testing::Message() << "n=" << n << " shift=" << shift);
            expectSame(kernels::sumSquaresFixed(g.data(), n, shift),
                       kernels::sumSquaresFixedReference(g.data(), n, shift), "fp32");
            std::vector<Bf16> b(n);
            kernels::toBf16(g, b);
            std::vector<float> widened(n);
            kernels::toFloat(b, widened);
            expectSame(kernels::sumSquaresFixed(b.data(), n, shift),
                       kernels::sumSquaresFixedReference(widened.data(), n, shift), "bf16");
        }
    }
}

TEST(kernelsSimd, FixedPointSumCarriesAcrossLimbsAndBlocks) {
    // Terms that fill all three pieces, summed over many accumulation blocks (8192 elements
    // each) and a tail.
    std::vector<float> g(std::size_t{1} << 17 | 13, 0.0f);
    // Three magnitudes: ≈ 1 (terms ≈ 2^104), ≈ 2^-25 (≈ 2^54) and ≈ 2^-45 (≈ 2^14, whose
    // fractional bits the truncation drops), each with a full 24-bit mantissa.
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> mant(0.5f, 1.0f);
    const float scale[3] = {1.0f, 0x1p-25f, 0x1p-45f};
    for (std::size_t i = 0; i < g.size(); ++i)
        g[i] = mant(rng) * scale[i % 3] * (i % 2 ? -1.0f : 1.0f);
    const int shift = 126 - 18; // max |g| < 2^0, 2^17 elements
    expectSame(kernels::sumSquaresFixed(g.data(), g.size(), shift),
               kernels::sumSquaresFixedReference(g.data(), g.size(), shift), "large");
}

TEST(kernelsSimd, AbsMaxFindsTheLargestMagnitudeAndNonFiniteValues) {
    std::vector<float> g = gradients(1003, 7);
    g[517] = -12.5f;
    kernels::AbsMax m = kernels::absMax(g.data(), g.size());
    EXPECT_TRUE(m.finite);
    EXPECT_EQ(m.maxAbs, 12.5f);
    std::vector<Bf16> b(g.size());
    kernels::toBf16(g, b);
    m = kernels::absMax(b.data(), b.size());
    EXPECT_TRUE(m.finite);
    EXPECT_EQ(m.maxAbs, 12.5f);
    for (float bad :
         {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
        for (std::size_t at : {0u, 8u, 1002u}) {
            std::vector<float> h = g;
            h[at] = bad;
            EXPECT_FALSE(kernels::absMax(h.data(), h.size()).finite) << bad << " at " << at;
            std::vector<Bf16> hb(h.size());
            kernels::toBf16(h, hb);
            EXPECT_FALSE(kernels::absMax(hb.data(), hb.size()).finite) << bad << " at " << at;
        }
    }
    EXPECT_TRUE(kernels::absMax(g.data(), 0).finite);
    EXPECT_EQ(kernels::absMax(g.data(), 0).maxAbs, 0.0f);
}

TEST(kernelsSimd, AdamWVectorUpdateMatchesTheScalarDefinitionBitwise) {
    const std::size_t n = 1037;
    const std::vector<float> g = gradients(n, 3);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> p(n), m(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
        p[i] = u(rng);
        m[i] = u(rng) * 1e-3f;
        v[i] = std::fabs(u(rng)) * 1e-6f;
    }
    const AdamWScalars s = adamwScalars(3e-3, 0.9, 0.95, 1e-8, 0.1, 7, true, 0.37f);
    std::vector<float> p1 = p, m1 = m, v1 = v, p2 = p, m2 = m, v2 = v;
    kernels::adamwUpdate(s, p1.data(), g.data(), m1.data(), v1.data(), n);
    kernels::adamwUpdateScalar(s, p2.data(), g.data(), m2.data(), v2.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(p1[i]), std::bit_cast<std::uint32_t>(p2[i])) << i;
        ASSERT_EQ(std::bit_cast<std::uint32_t>(m1[i]), std::bit_cast<std::uint32_t>(m2[i])) << i;
        ASSERT_EQ(std::bit_cast<std::uint32_t>(v1[i]), std::bit_cast<std::uint32_t>(v2[i])) << i;
    }
    // bf16 gradients: as the scalar update of their widened values.
    std::vector<Bf16> b(n);
    kernels::toBf16(g, b);
    std::vector<float> widened(n);
    kernels::toFloat(b, widened);
    p1 = p, m1 = m, v1 = v, p2 = p, m2 = m, v2 = v;
    kernels::adamwUpdate(s, p1.data(), b.data(), m1.data(), v1.data(), n);
    kernels::adamwUpdateScalar(s, p2.data(), widened.data(), m2.data(), v2.data(), n);
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(p1[i]), std::bit_cast<std::uint32_t>(p2[i])) << i;
}

TEST(kernelsSimd, BulkBf16ConversionMatchesTheScalarOne) {
    std::mt19937 rng(11);
    std::vector<float> f(100003);
    for (float& x : f)
        x = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    // Ties, NaNs, infinities and the largest finite values among them.
    const std::uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x7f800000u,
                                     0xff800000u, 0x7f800001u, 0xffc00001u,
                                     0x7f7fffffu, 0x00008000u, 0x80000000u};
    for (std::size_t i = 0; i < std::size(special); ++i)
        f[i * 3] = std::bit_cast<float>(special[i]);
    std::vector<Bf16> b(f.size());
    kernels::toBf16(f, b);
    for (std::size_t i = 0; i < f.size(); ++i)
        ASSERT_EQ(b[i].bits, kernels::toBf16(f[i]).bits) << i;
    std::vector<float> back(f.size());
    kernels::toFloat(b, back);
    for (std::size_t i = 0; i < f.size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(back[i]),
                  std::bit_cast<std::uint32_t>(kernels::toFloat(b[i])))
            << i;
}

TEST(kernelsSimd, GeluVectorPathMatchesTheTanhFormula) {
    // Values from the saturated ends (|u| far beyond where tanh is ±1
    // in float) to zero.
    std::vector<float> x(20011);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = -24.0f + 48.0f * static_cast<float>(i) / static_cast<float>(x.size());
    x[5] = 0.0f, x[6] = -0.0f, x[7] = 1e-30f, x[8] = 200.0f, x[9] = -200.0f;
    std::vector<float> y(x.size()), dy(x.size(), 0.75f), dx(x.size());
    const auto n = static_cast<std::int64_t>(x.size());
    kernels::geluForward(x.data(), y.data(), n);
    kernels::geluBackward(dy.data(), x.data(), dx.data(), n);
    const double c = 0.7978845608028654, a = 0.044715;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        const double t = std::tanh(c * (v + a * v * v * v));
        const double ref = 0.5 * v * (1.0 + t);
        const double dref =
            0.75 * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * c * (1.0 + 3.0 * a * v * v));
        // tanh as 1 − 2/(e^{2u} + 1) is accurate to a few 1e-8 absolute (the scalar loop's
        // formula); 1 + t and 1 − t² scale that by |v| and by dInner·|v| ~ 0.1·|v|³.
        ASSERT_NEAR(y[i], ref, 2e-7 * (1.0 + std::fabs(v))) << "x = " << v;
        ASSERT_NEAR(dx[i], dref, 2e-7 * (1.0 + 0.1 * std::fabs(v * v * v))) << "x = " << v;
    }
    EXPECT_EQ(y[8], 200.0f);
    EXPECT_EQ(y[9], -0.0f);
}

TEST(kernelsSimd, AttentionSoftmaxRowsOfEveryLengthMatchADoubleReference) {
    // seq = 21: rows of 1 … 21 columns, so both the eight-wide loop and its masked tail run.
    const std::int64_t seq = 21, heads = 2, hd = 4, d = heads * hd;
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<float> qkv(static_cast<std::size_t>(seq * 3 * d)),
        dout(static_cast<std::size_t>(seq * d));
    for (float& x : qkv)
        x = u(rng);
    for (float& x : dout)
        x = u(rng);
    std::vector<float> probs(static_cast<std::size_t>(heads * seq * seq)), out(dout.size());
    kernels::attentionForward(qkv.data(), probs.data(), out.data(), 1, seq, heads, hd);
    std::vector<float> dqkv(qkv.size(), 0.0f), scratch(static_cast<std::size_t>(seq * seq));
    kernels::attentionBackward(dout.data(), qkv.data(), probs.data(), dqkv.data(), scratch, 1, seq,
                               heads, hd);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    const auto at = [&](std::int64_t row, std::int64_t part, std::int64_t h, std::int64_t c) {
        return static_cast<double>(
            qkv[static_cast<std::size_t>(row * 3 * d + part * d + h * hd + c)]);
    };
    for (std::int64_t h = 0; h < heads; ++h) {
        for (std::int64_t i = 0; i < seq; ++i) {
            std::vector<double> logit(static_cast<std::size_t>(i + 1)), dp(logit.size());
            double maxv = -1e300, sum = 0, dot = 0;
            for (std::int64_t j = 0; j <= i; ++j) {
                double l = 0, g = 0;
                for (std::int64_t c = 0; c < hd; ++c) {
                    l += at(i, 0, h, c) * at(j, 1, h, c);
                    g += static_cast<double>(dout[static_cast<std::size_t>(i * d + h * hd + c)]) *
                         at(j, 2, h, c);
                }
                logit[static_cast<std::size_t>(j)] = l * scale;
                dp[static_cast<std::size_t>(j)] = g;
                maxv = std::max(maxv, l * scale);
            }
            for (double& l : logit)
                sum += std::exp(l - maxv);
            const float* prow = probs.data() + (h * seq + i) * seq;
            for (std::int64_t j = 0; j < seq; ++j) {
                const double ref =
                    j <= i ? std::exp(logit[static_cast<std::size_t>(j)] - maxv) / sum : 0.0;
                ASSERT_NEAR(prow[j], ref, 2e-6) << "head " << h << " row " << i << " col " << j;
                if (j <= i) dot += dp[static_cast<std::size_t>(j)] * static_cast<double>(prow[j]);
            }
            // dQ[i] = scale · Σ_j P[i,j] (dP[i,j] − dot) K[j], with the kernel's own P.
            for (std::int64_t c = 0; c < hd; ++c) {
                double dq = 0;
                for (std::int64_t j = 0; j <= i; ++j)
                    dq += static_cast<double>(prow[j]) * (dp[static_cast<std::size_t>(j)] - dot) *
                          at(j, 1, h, c);
                ASSERT_NEAR(dqkv[static_cast<std::size_t>(i * 3 * d + h * hd + c)], dq * scale,
                            1e-5)
                    << "dq head " << h << " row " << i;
            }
        }
    }
}

TEST(kernelsSimd, LayerNormVectorPathMatchesADoubleReference) {
    const std::int64_t rows = 3, d = 250; // 31 vectors of eight and a tail of two per row
    std::mt19937 rng(29);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    std::vector<float> x(static_cast<std::size_t>(rows * d)), gamma(static_cast<std::size_t>(d)),
        beta(gamma.size()), dout(x.size());
    for (float& v : x)
        v = u(rng) + 5.0f; // an offset, so the mean matters
    for (float& v : gamma)
        v = u(rng);
    for (float& v : beta)
        v = u(rng);
    for (float& v : dout)
        v = u(rng);
    std::vector<float> out(x.size()), mean(static_cast<std::size_t>(rows)), rstd(mean.size());
    kernels::layerNormForward(x.data(), gamma.data(), beta.data(), out.data(), mean.data(),
                              rstd.data(), rows, d);
    std::vector<float> dx(x.size(), 0.0f), dgamma(gamma.size(), 0.0f), dbeta(gamma.size(), 0.0f);
    kernels::layerNormBackward(dout.data(), x.data(), mean.data(), rstd.data(), gamma.data(),
                               dx.data(), dgamma.data(), dbeta.data(), rows, d);
    std::vector<double> refDgamma(gamma.size(), 0.0), refDbeta(gamma.size(), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto idx = [&](std::int64_t i) { return static_cast<std::size_t>(r * d + i); };
        double mu = 0, var = 0;
        for (std::int64_t i = 0; i < d; ++i)
            mu += static_cast<double>(x[idx(i)]);
        mu /= static_cast<double>(d);
        for (std::int64_t i = 0; i < d; ++i)
            var += (static_cast<double>(x[idx(i)]) - mu) * (static_cast<double>(x[idx(i)]) - mu);
        const double s = 1.0 / std::sqrt(var / static_cast<double>(d) + 1e-5);
        double meanG = 0, meanGX = 0;
        for (std::int64_t i = 0; i < d; ++i) {
            const double xhat = (static_cast<double>(x[idx(i)]) - mu) * s;
            const auto k = static_cast<std::size_t>(i);
            ASSERT_NEAR(out[idx(i)],
                        xhat * static_cast<double>(gamma[k]) + static_cast<double>(beta[k]), 1e-5);
            const double g = static_cast<double>(dout[idx(i)]) * static_cast<double>(gamma[k]);
            meanG += g / static_cast<double>(d);
            meanGX += g * xhat / static_cast<double>(d);
            refDgamma[k] += static_cast<double>(dout[idx(i)]) * xhat;
            refDbeta[k] += static_cast<double>(dout[idx(i)]);
        }
        for (std::int64_t i = 0; i < d; ++i) {
            const double xhat = (static_cast<double>(x[idx(i)]) - mu) * s;
            const double g = static_cast<double>(dout[idx(i)]) *
                             static_cast<double>(gamma[static_cast<std::size_t>(i)]);
            ASSERT_NEAR(dx[idx(i)], s * (g - meanG - xhat * meanGX), 1e-4)
                << "row " << r << " column " << i;
        }
    }
    for (std::size_t k = 0; k < gamma.size(); ++k) {
        ASSERT_NEAR(dgamma[k], refDgamma[k], 1e-4) << k;
        ASSERT_NEAR(dbeta[k], refDbeta[k], 1e-5) << k;
    }
}

} // namespace
} // namespace shardscope
