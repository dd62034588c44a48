// Every CPU op's backward against central differences of an independent double-precision
// reference (tests/unit/model_reference.h), on random non-zero inputs.
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ops.h"
#include "model/rng.h"
#include "model_reference.h"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace shardscope {
namespace {

using testref::Vec;

Vec randomVec(std::size_t n, std::uint64_t seed, double scale = 1.0, double offset = 0.0) {
    model::Rng rng(seed);
    Vec v(n);
    for (double& x : v)
        x = offset + scale * rng.normal();
    return v;
}

std::vector<float> toF(const Vec& v) {
    std::vector<float> f(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        f[i] = static_cast<float>(v[i]);
    return f;
}

// The fp32 values rounded back to double, so the reference sees exactly the kernel's inputs.
Vec roundTrip(const Vec& v) {
    Vec r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        r[i] = static_cast<double>(static_cast<float>(v[i]));
    return r;
}

double weighted(const Vec& out, const Vec& w) {
    double s = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        s += out[i] * w[i];
    return s;
}

// analytic[i] (from an fp32 kernel) must match ∂f/∂x_i by central differences in double.
void expectGradient(const std::function<double(const Vec&)>& f, const Vec& x,
                    const std::vector<float>& analytic, const std::string& what, double rtol = 2e-3,
                    double atol = 2e-4) {
    ASSERT_EQ(x.size(), analytic.size()) << what;
    double maxAbs = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double numeric = testref::centralDifference(f, x, i);
        const auto a = static_cast<double>(analytic[i]);
        EXPECT_NEAR(a, numeric, atol + rtol * std::abs(numeric)) << what << "[" << i << "]";
        maxAbs = std::max(maxAbs, std::abs(numeric));
    }
    EXPECT_GT(maxAbs, 1e-3) << what << ": gradient is (near) zero, the check would be vacuous";
}

void expectClose(const std::vector<float>& got, const Vec& want, double tol,
                 const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(static_cast<double>(got[i]), want[i], tol * (1 + std::abs(want[i])))
            << what << "[" << i << "]";
}

TEST(kernelsGradcheck, LayerNorm) {
    const std::int64_t rows = 3, d = 7;
    const Vec x = roundTrip(randomVec(rows * d, 1, 2.0, 0.5));
    const Vec gamma = roundTrip(randomVec(d, 2, 0.5, 1.0)), beta = roundTrip(randomVec(d, 3, 0.3));
    const Vec w = roundTrip(randomVec(rows * d, 4));
    auto xf = toF(x), gf = toF(gamma), bf = toF(beta), wf = toF(w);
    std::vector<float> out(xf.size()), mean(rows), rstd(rows);
    kernels::layerNormForward(xf.data(), gf.data(), bf.data(), out.data(), mean.data(), rstd.data(),
                              rows, d);
    expectClose(out, testref::layerNorm(x, gamma.data(), beta.data(), rows, d), 1e-5, "ln forward");

    // Backward accumulates: start from a known value and subtract it afterwards.
    std::vector<float> dx(xf.size(), 0.25f), dg(d, 0.0f), db(d, 0.0f);
    kernels::layerNormBackward(wf.data(), xf.data(), mean.data(), rstd.data(), gf.data(), dx.data(),
                               dg.data(), db.data(), rows, d);
    for (float& v : dx)
        v -= 0.25f;
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::layerNorm(v, gamma.data(), beta.data(), rows, d), w);
        },
        x, dx, "dx");
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::layerNorm(x, v.data(), beta.data(), rows, d), w);
        },
        gamma, dg, "dgamma");
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::layerNorm(x, gamma.data(), v.data(), rows, d), w);
        },
        beta, db, "dbeta");
}

TEST(kernelsGradcheck, Linear) {
    const std::int64_t rows = 4, in = 5, out = 6;
    const Vec x = roundTrip(randomVec(rows * in, 5)), wt = roundTrip(randomVec(in * out, 6, 0.5));
    const Vec bias = roundTrip(randomVec(out, 7)), w = roundTrip(randomVec(rows * out, 8));
    auto xf = toF(x), wtf = toF(wt), bf = toF(bias), wf = toF(w);
    std::vector<float> y(static_cast<std::size_t>(rows * out));
    kernels::linearForward(xf.data(), wtf.data(), bf.data(), y.data(), rows, in, out, false);
    const Vec ref = testref::linear(x, wt.data(), bias.data(), rows, in, out);
    expectClose(y, ref, 1e-5, "linear forward");
    // accumulate = true adds onto what is there (the residual connection).
    kernels::linearForward(xf.data(), wtf.data(), bf.data(), y.data(), rows, in, out, true);
    expectClose(y, testref::add(ref, ref), 1e-5, "linear accumulate");

    std::vector<float> dx(xf.size(), 0.0f), dw(wtf.size(), 0.0f), db(bf.size(), 0.0f);
    kernels::linearBackward(wf.data(), xf.data(), wtf.data(), dx.data(), dw.data(), db.data(), rows,
                            in, out);
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::linear(v, wt.data(), bias.data(), rows, in, out), w);
        },
        x, dx, "dx");
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::linear(x, v.data(), bias.data(), rows, in, out), w);
        },
        wt, dw, "dW");
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::linear(x, wt.data(), v.data(), rows, in, out), w);
        },
        bias, db, "dbias");
}

void checkCausalAttention(std::int64_t batch, std::int64_t seq, std::int64_t heads,
                          std::int64_t hd) {
    const std::int64_t d = heads * hd;
    const Vec qkv = roundTrip(randomVec(batch * seq * 3 * d, 9, 1.5));
    const Vec w = roundTrip(randomVec(batch * seq * d, 10));
    auto qf = toF(qkv), wf = toF(w);
    std::vector<float> probs(static_cast<std::size_t>(batch * heads * seq * seq)), out(wf.size());
    kernels::attentionForward(qf.data(), probs.data(), out.data(), batch, seq, heads, hd);
    expectClose(out, testref::attention(qkv, batch, seq, heads, hd), 1e-5, "attention forward");
    for (std::int64_t r = 0; r < batch * heads * seq; ++r) {
        const std::int64_t i = r % seq; // query position
        double sum = 0;
        for (std::int64_t j = 0; j < seq; ++j) {
            const float p = probs[static_cast<std::size_t>(r * seq + j)];
            if (j > i) {
                EXPECT_EQ(p, 0.0f) << "future position " << j << " leaks into query " << i;
            }
            sum += static_cast<double>(p);
        }
        EXPECT_NEAR(sum, 1.0, 1e-6);
    }
    std::vector<float> dqkv(qf.size(), 7.0f), scratch(static_cast<std::size_t>(seq * seq));
    kernels::attentionBackward(wf.data(), qf.data(), probs.data(), dqkv.data(), scratch, batch, seq,
                               heads, hd);
    expectGradient(
        [&](const Vec& v) { return weighted(testref::attention(v, batch, seq, heads, hd), w); },
        qkv, dqkv, "dqkv");
}

TEST(kernelsGradcheck, CausalAttention) {
    checkCausalAttention(2, 5, 2, 3);
}

// Longer than the kernel's causal row blocks (32 rows), with a ragged last block: the blocked
// products must leave out only masked entries.
TEST(kernelsGradcheck, CausalAttentionAcrossRowBlocks) {
    checkCausalAttention(1, 45, 2, 3);
}

TEST(kernelsGradcheck, Gelu) {
    Vec x(41);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = -5.0 + 0.25 * static_cast<double>(i) + 0.01;
    const Vec w = roundTrip(randomVec(x.size(), 11));
    auto xf = toF(x), wf = toF(w);
    std::vector<float> y(xf.size()), dx(xf.size());
    kernels::geluForward(xf.data(), y.data(), static_cast<std::int64_t>(xf.size()));
    expectClose(y, testref::gelu(roundTrip(x)), 1e-6, "gelu forward");
    kernels::geluBackward(wf.data(), xf.data(), dx.data(), static_cast<std::int64_t>(xf.size()));
    expectGradient([&](const Vec& v) { return weighted(testref::gelu(v), w); }, roundTrip(x), dx,
                   "dx");
}

TEST(kernelsGradcheck, EmbeddingWithRepeatedIds) {
    const std::int64_t batch = 3, seq = 4, d = 5, vocab = 7;
    std::vector<std::int32_t> ids = {0, 3, 3, 6, 1, 3, 0, 2, 6, 6, 5, 3}; // repeats accumulate
    const Vec wte = roundTrip(randomVec(vocab * d, 12)), wpe = roundTrip(randomVec(seq * d, 13));
    const Vec w = roundTrip(randomVec(batch * seq * d, 14));
    auto tf = toF(wte), pf = toF(wpe), wf = toF(w);
    std::vector<float> out(wf.size());
    kernels::embeddingForward(ids.data(), tf.data(), pf.data(), out.data(), batch, seq, d, vocab);
    expectClose(out, testref::embedding(ids, wte.data(), wpe.data(), batch, seq, d), 1e-6,
                "embedding forward");
    std::vector<float> dwte(tf.size(), 0.0f), dwpe(pf.size(), 0.0f);
    kernels::embeddingBackward(ids.data(), wf.data(), dwte.data(), dwpe.data(), batch, seq, d);
    // Rows of tokens that never occur (4) must get exactly zero gradient.
    for (std::int64_t i = 0; i < d; ++i)
        EXPECT_EQ(dwte[static_cast<std::size_t>(4 * d + i)], 0.0f);
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::embedding(ids, v.data(), wpe.data(), batch, seq, d), w);
        },
        wte, dwte, "dwte");
    expectGradient(
        [&](const Vec& v) {
            return weighted(testref::embedding(ids, wte.data(), v.data(), batch, seq, d), w);
        },
        wpe, dwpe, "dwpe");
    std::vector<std::int32_t> bad = ids;
    bad[5] = static_cast<std::int32_t>(vocab);
    EXPECT_THROW(kernels::embeddingForward(bad.data(), tf.data(), pf.data(), out.data(), batch, seq,
                                           d, vocab),
                 std::exception);
}

TEST(kernelsGradcheck, CrossEntropy) {
    const std::int64_t rows = 6, vocab = 9;
    const Vec logits = roundTrip(randomVec(rows * vocab, 15, 2.0));
    const std::vector<std::int32_t> targets = {0, 8, 3, 3, 5, 1};
    auto lf = toF(logits);
    const double loss = kernels::crossEntropyForward(lf.data(), targets.data(), rows, vocab);
    EXPECT_NEAR(loss, testref::crossEntropy(logits, targets, rows, vocab), 1e-6);
    std::vector<float> dlogits(lf.size());
    kernels::crossEntropyBackward(lf.data(), targets.data(), dlogits.data(), rows, vocab,
                                  1.0f / static_cast<float>(rows));
    expectGradient([&](const Vec& v) { return testref::crossEntropy(v, targets, rows, vocab); },
                   logits, dlogits, "dlogits");
}

TEST(kernelsGradcheck, ResidualAddIsIdentityInBackward) {
    const Vec a = roundTrip(randomVec(10, 16)), b = roundTrip(randomVec(10, 17)),
              w = roundTrip(randomVec(10, 18));
    auto af = toF(a), bf = toF(b);
    std::vector<float> y(10);
    kernels::add(af.data(), bf.data(), y.data(), 10);
    expectClose(y, testref::add(a, b), 1e-7, "add");
    // The model implements the residual backward as "the same gradient flows to both inputs".
    expectGradient([&](const Vec& v) { return weighted(testref::add(v, b), w); }, a, toF(w), "da");
    expectGradient([&](const Vec& v) { return weighted(testref::add(a, v), w); }, b, toF(w), "db");
}

TEST(kernelsGemm, TransposesAndTimer) {
    const std::int64_t m = 3, n = 4, k = 5;
    const Vec a = roundTrip(randomVec(m * k, 19)), b = roundTrip(randomVec(k * n, 20));
    // Aᵀ stored [k × m], Bᵀ stored [n × k].
    std::vector<float> at(static_cast<std::size_t>(k * m)), bt(static_cast<std::size_t>(n * k));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < k; ++j)
            at[static_cast<std::size_t>(j * m + i)] =
                static_cast<float>(a[static_cast<std::size_t>(i * k + j)]);
    for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            bt[static_cast<std::size_t>(j * k + i)] =
                static_cast<float>(b[static_cast<std::size_t>(i * n + j)]);
    const Vec want = testref::linear(a, b.data(), nullptr, m, k, n);
    kernels::GemmTimer timer;
    kernels::GemmTimer* previous = kernels::setGemmTimer(&timer);
    std::vector<float> c(static_cast<std::size_t>(m * n), 1.0f);
    kernels::gemm(true, true, m, n, k, 1.0f, at.data(), m, bt.data(), k, 0.0f, c.data(), n);
    kernels::setGemmTimer(previous);
    expectClose(c, want, 1e-5, "gemm(Aᵀ, Bᵀ)");
    EXPECT_EQ(timer.calls, 1u);
    EXPECT_DOUBLE_EQ(timer.flops, 2.0 * m * n * k);
    kernels::gemm(false, false, m, n, k, 1.0f, toF(a).data(), k, toF(b).data(), n, 0.0f, c.data(),
                  n);
    EXPECT_EQ(timer.calls, 1u) << "the timer must be off once uninstalled";
}

} // namespace
} // namespace shardscope
