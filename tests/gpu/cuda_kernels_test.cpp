// Every CUDA op against the CPU op on the same random inputs (kernels/cuda/ops.h vs
// kernels/cpu/ops.h). fp32: norm-wise relative error ≤ 1e-4. bf16 GEMMs: ≤ 1e-4 against the CPU
// on the same bf16-rounded inputs (products of bf16 values are exact in fp32, only the summation
// order differs) and ≤ 2e-2 against unrounded fp32. Ops whose arithmetic the GPU reproduces
// operation by operation (bf16 casts, embedding, add, cross-entropy backward, AdamW, rank-order
// sums) must match bit for bit. Skips without a CUDA device.
#include "comm/communicator.h"
#include "gpu_test_support.h"
#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/ops.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace shardscope {
namespace {

namespace kc = kernels::cuda;
using gputest::bitDifferences;
using gputest::DeviceArray;
using gputest::randomFloats;
using gputest::relError;

constexpr double kFp32Tol = 1e-4;

std::vector<kernels::Bf16> toBf16(const std::vector<float>& f) {
    std::vector<kernels::Bf16> b(f.size());
    kernels::toBf16(f, b);
    return b;
}
std::vector<float> rounded(const std::vector<float>& f) { // f rounded through bf16
    std::vector<float> out(f.size());
    kernels::toFloat(toBf16(f), out);
    return out;
}

class gpuOps : public ::testing::Test {
protected:
    void SetUp() override {
        SHARDSCOPE_REQUIRE_CUDA();
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        blas_ = std::make_unique<kc::Blas>(stream_);
    }
    void TearDown() override {
        blas_.reset();
        if (stream_) cudaStreamDestroy(stream_);
    }
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<kc::Blas> blas_;
};

// Runs everywhere: a failing CUDA call becomes Error(Internal) naming the call, file and line
// (without a driver every call fails with error 35, with one an invalid ordinal does).
TEST(gpuCheck, CudaCheckThrowsInternalNamingTheCall) {
    try {
        CUDA_CHECK(cudaSetDevice(-1));
        FAIL() << "cudaSetDevice(-1) succeeded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal);
        const std::string what = e.what();
        EXPECT_NE(what.find("cuda_kernels_test.cpp:"), std::string::npos) << what;
        EXPECT_NE(what.find("cudaSetDevice(-1) failed: cudaError"), std::string::npos) << what;
    }
}

TEST_F(gpuOps, Bf16CastsAreBitwiseTheCpus) {
    std::vector<float> f = randomFloats(4096, 1, 100.0f);
    const float specials[] = {0.0f,
                              -0.0f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::max(),        // rounds to +Inf
                              std::numeric_limits<float>::denorm_min(), // kept (no FTZ)
                              1.00390625f /* tie: 1 + 2^-8 → even */,
                              1.01171875f /* tie → up */};
    f.insert(f.end(), std::begin(specials), std::end(specials));
    std::uint32_t nanBits = 0x7f800001u; // signalling NaN: must come back quiet, not Inf
    float sNaN;
    std::memcpy(&sNaN, &nanBits, 4);
    f.push_back(sNaN);
    DeviceArray<float> in(f);
    DeviceArray<kernels::Bf16> out(f.size());
    kc::toBf16(in.get(), out.get(), static_cast<std::int64_t>(f.size()), stream_);
    const std::vector<kernels::Bf16> gpu = out.download();
    EXPECT_EQ(bitDifferences(gpu, toBf16(f)), 0u);

    DeviceArray<float> back(f.size());
    kc::toFloat(out.get(), back.get(), static_cast<std::int64_t>(f.size()), stream_);
    std::vector<float> cpuBack(f.size());
    kernels::toFloat(toBf16(f), cpuBack);
    EXPECT_EQ(bitDifferences(back.download(), cpuBack), 0u);
}

TEST_F(gpuOps, GemmMatchesTheCpuInEveryTransposeAndPrecision) {
    const std::int64_t m = 37, n = 29, k = 53;
    for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
            // Leading dimensions with padding, to catch a swapped ld.
            const std::int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
            const std::vector<float> a =
                randomFloats(static_cast<std::size_t>((ta ? k : m) * lda), 2);
            const std::vector<float> b =
                randomFloats(static_cast<std::size_t>((tb ? n : k) * ldb), 3);
            const std::vector<float> c0 = randomFloats(static_cast<std::size_t>(m * ldc), 4);
            auto cpu = [&](const std::vector<float>& aa, const std::vector<float>& bb) {
                std::vector<float> c = c0;
                kernels::gemm(ta, tb, m, n, k, 0.7f, aa.data(), lda, bb.data(), ldb, 0.3f, c.data(),
                              ldc);
                return c;
            };
            DeviceArray<float> da(a), db(b), dc(c0);
            kc::gemm(*blas_, ta, tb, m, n, k, 0.7f, da.get(), lda, db.get(), ldb, 0.3f, dc.get(),
                     ldc, kc::Precision::Fp32);
            EXPECT_LE(relError(dc.download(), cpu(a, b)), kFp32Tol)
                << "fp32 ta=" << ta << " tb=" << tb;

            DeviceArray<kernels::Bf16> ha(toBf16(a)), hb(toBf16(b));
            dc.upload(c0);
            kc::gemm(*blas_, ta, tb, m, n, k, 0.7f, ha.get(), lda, hb.get(), ldb, 0.3f, dc.get(),
                     ldc, kc::Precision::Bf16);
            const std::vector<float> got = dc.download();
            EXPECT_LE(relError(got, cpu(rounded(a), rounded(b))), kFp32Tol)
                << "bf16 ta=" << ta << " tb=" << tb;
            EXPECT_LE(relError(got, cpu(a, b)), 2e-2) << "bf16 vs fp32 inputs";
        }
    }
}

TEST_F(gpuOps, EmbeddingIsBitwiseTheCpusWithRepeatedTokens) {
    const std::int64_t batch = 3, seq = 17, d = 40, vocab = 11; // 51 tokens, 11 ids: repeats
    std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * seq));
    for (std::size_t i = 0; i < ids.size(); ++i)
        ids[i] = static_cast<std::int32_t>((i * 7 + 3) % vocab);
    const auto wte = randomFloats(static_cast<std::size_t>(vocab * d), 5);
    const auto wpe = randomFloats(static_cast<std::size_t>(seq * d), 6);
    const auto dout = randomFloats(static_cast<std::size_t>(batch * seq * d), 7);
    auto dwte = randomFloats(wte.size(), 8), dwpe = randomFloats(wpe.size(), 9); // accumulate onto
    std::vector<float> out(dout.size());
    DeviceArray<std::int32_t> dIds(ids);
    DeviceArray<float> dWte(wte), dWpe(wpe), dOut(out.size()), dDout(dout), dDwte(dwte),
        dDwpe(dwpe);
    kernels::embeddingForward(ids.data(), wte.data(), wpe.data(), out.data(), batch, seq, d, vocab);
    kc::embeddingForward(dIds.get(), dWte.get(), dWpe.get(), dOut.get(), batch, seq, d, vocab,
                         stream_);
    EXPECT_EQ(bitDifferences(dOut.download(), out), 0u);
    kernels::embeddingBackward(ids.data(), dout.data(), dwte.data(), dwpe.data(), batch, seq, d);
    kc::embeddingBackward(dIds.get(), dDout.get(), dDwte.get(), dDwpe.get(), batch, seq, d, vocab,
                          stream_);
    EXPECT_EQ(bitDifferences(dDwte.download(), dwte), 0u) << "token order, no atomics";
    EXPECT_EQ(bitDifferences(dDwpe.download(), dwpe), 0u);

    ids[5] = static_cast<std::int32_t>(vocab); // out of range: a NaN row, no out-of-bounds read
    dIds.upload(ids);
    kc::embeddingForward(dIds.get(), dWte.get(), dWpe.get(), dOut.get(), batch, seq, d, vocab,
                         stream_);
    const auto got = dOut.download();
    EXPECT_TRUE(std::isnan(got[5 * d]));
    EXPECT_FALSE(std::isnan(got[4 * d]));
}

TEST_F(gpuOps, LayerNormMatchesTheCpu) {
    const std::int64_t rows = 45, d = 300;
    const auto x = randomFloats(static_cast<std::size_t>(rows * d), 10, 3.0f);
    auto gamma = randomFloats(static_cast<std::size_t>(d), 11),
         beta = randomFloats(static_cast<std::size_t>(d), 12);
    std::vector<float> out(x.size()), stats(static_cast<std::size_t>(2 * rows));
    kernels::layerNormForward(x.data(), gamma.data(), beta.data(), out.data(), stats.data(),
                              stats.data() + rows, rows, d);
    DeviceArray<float> dx(x), dg(gamma), db(beta), dOut(out.size()), dStats(stats.size());
    kc::layerNormForward(dx.get(), dg.get(), db.get(), dOut.get(), dStats.get(),
                         dStats.get() + rows, rows, d, stream_);
    EXPECT_LE(relError(dOut.download(), out), kFp32Tol);
    EXPECT_LE(relError(dStats.download(), stats), 1e-5);

    const auto dy = randomFloats(x.size(), 13);
    auto gx = randomFloats(x.size(), 14), gg = randomFloats(gamma.size(), 15),
         gb = randomFloats(beta.size(), 16);
    DeviceArray<float> dDy(dy), dGx(gx), dGg(gg), dGb(gb);
    DeviceArray<float> cpuStats(stats); // both sides use the CPU's saved statistics
    kernels::layerNormBackward(dy.data(), x.data(), stats.data(), stats.data() + rows, gamma.data(),
                               gx.data(), gg.data(), gb.data(), rows, d);
    kc::layerNormBackward(dDy.get(), dx.get(), cpuStats.get(), cpuStats.get() + rows, dg.get(),
                          dGx.get(), dGg.get(), dGb.get(), rows, d, stream_);
    EXPECT_LE(relError(dGx.download(), gx), kFp32Tol);
    EXPECT_EQ(bitDifferences(dGg.download(), gg), 0u) << "column sums in row order, unfused";
    EXPECT_EQ(bitDifferences(dGb.download(), gb), 0u);
}

TEST_F(gpuOps, LinearMatchesTheCpuInFp32AndBf16) {
    const std::int64_t rows = 33, in = 48, out = 70;
    const auto x = randomFloats(static_cast<std::size_t>(rows * in), 20);
    const auto w = randomFloats(static_cast<std::size_t>(in * out), 21, 0.2f);
    const auto bias = randomFloats(static_cast<std::size_t>(out), 22);
    const auto y0 = randomFloats(static_cast<std::size_t>(rows * out), 23);
    const auto dy = randomFloats(y0.size(), 24);
    const auto gx0 = randomFloats(x.size(), 25), gw0 = randomFloats(w.size(), 26),
               gb0 = randomFloats(bias.size(), 27);
    for (bool bf16 : {false, true}) {
        const auto xs = bf16 ? rounded(x) : x, ws = bf16 ? rounded(w) : w,
                   dys = bf16 ? rounded(dy) : dy;
        for (bool accumulate : {false, true}) {
            std::vector<float> y = y0;
            kernels::linearForward(xs.data(), ws.data(), bias.data(), y.data(), rows, in, out,
                                   accumulate);
            DeviceArray<float> dY(y0), dBias(bias), dX(x), dW(w);
            DeviceArray<kernels::Bf16> hX(toBf16(x)), hW(toBf16(w));
            if (bf16)
                kc::linearForward(*blas_, hX.get(), hW.get(), dBias.get(), dY.get(), rows, in, out,
                                  accumulate);
            else
                kc::linearForward(*blas_, dX.get(), dW.get(), dBias.get(), dY.get(), rows, in, out,
                                  accumulate);
            EXPECT_LE(relError(dY.download(), y), kFp32Tol)
                << "forward bf16=" << bf16 << " acc=" << accumulate;
        }
        auto gx = gx0, gw = gw0, gb = gb0;
        kernels::linearBackward(dys.data(), xs.data(), ws.data(), gx.data(), gw.data(), gb.data(),
                                rows, in, out);
        DeviceArray<float> dDy(dy), dX(x), dW(w), dGx(gx0), dGw(gw0), dGb(gb0);
        DeviceArray<kernels::Bf16> hDy(toBf16(dy)), hX(toBf16(x)), hW(toBf16(w));
        if (bf16)
            kc::linearBackward(*blas_, hDy.get(), hX.get(), hW.get(), dGx.get(), dGw.get(),
                               dGb.get(), rows, in, out);
        else
            kc::linearBackward(*blas_, dDy.get(), dX.get(), dW.get(), dGx.get(), dGw.get(),
                               dGb.get(), rows, in, out);
        EXPECT_LE(relError(dGx.download(), gx), kFp32Tol) << "dx bf16=" << bf16;
        EXPECT_LE(relError(dGw.download(), gw), kFp32Tol) << "dw bf16=" << bf16;
        EXPECT_EQ(bitDifferences(dGb.download(), gb), 0u) << "dbias bf16=" << bf16;
    }
}

TEST_F(gpuOps, AttentionMatchesTheCpuForEveryScratchSize) {
    const std::int64_t batch = 2, seq = 33, heads = 3, hd = 8, d = heads * hd;
    const auto qkv = randomFloats(static_cast<std::size_t>(batch * seq * 3 * d), 30);
    const auto dout = randomFloats(static_cast<std::size_t>(batch * seq * d), 31);
    std::vector<float> probs(static_cast<std::size_t>(batch * heads * seq * seq)), out(dout.size());
    kernels::attentionForward(qkv.data(), probs.data(), out.data(), batch, seq, heads, hd);
    DeviceArray<float> dQkv(qkv), dProbs(probs.size()), dOut(out.size()), dDout(dout);
    kc::attentionForward(*blas_, dQkv.get(), dProbs.get(), dOut.get(), batch, seq, heads, hd);
    EXPECT_LE(relError(dProbs.download(), probs), kFp32Tol);
    EXPECT_LE(relError(dOut.download(), out), kFp32Tol);

    std::vector<float> dqkv(qkv.size()), scratch(static_cast<std::size_t>(seq * seq));
    kernels::attentionBackward(dout.data(), qkv.data(), probs.data(), dqkv.data(), scratch, batch,
                               seq, heads, hd);
    DeviceArray<float> cpuProbs(probs);
    // One head per GEMM, two (with a remainder), all three: the grouping must not matter.
    for (std::int64_t group : {1, 2, 3}) {
        DeviceArray<float> dDqkv(qkv.size()), dScratch(static_cast<std::size_t>(group * seq * seq));
        kc::attentionBackward(*blas_, dDout.get(), dQkv.get(), cpuProbs.get(), dDqkv.get(),
                              dScratch.get(), group * seq * seq, batch, seq, heads, hd);
        EXPECT_LE(relError(dDqkv.download(), dqkv), kFp32Tol) << "heads per GEMM " << group;
    }
    DeviceArray<float> tooSmall(static_cast<std::size_t>(seq * seq - 1));
    EXPECT_THROW(kc::attentionBackward(*blas_, dDout.get(), dQkv.get(), cpuProbs.get(), dQkv.get(),
                                       tooSmall.get(), seq * seq - 1, batch, seq, heads, hd),
                 Error);
}

TEST_F(gpuOps, GeluAndAddMatchTheCpu) {
    const auto x = randomFloats(5000, 40, 3.0f), dy = randomFloats(5000, 41),
               b = randomFloats(5000, 42);
    std::vector<float> y(x.size()), dx(x.size()), sum(x.size());
    kernels::geluForward(x.data(), y.data(), 5000);
    kernels::geluBackward(dy.data(), x.data(), dx.data(), 5000);
    kernels::add(x.data(), b.data(), sum.data(), 5000);
    DeviceArray<float> dX(x), dDy(dy), dB(b), dY(5000), dDx(5000), dSum(5000);
    kc::geluForward(dX.get(), dY.get(), 5000, stream_);
    kc::geluBackward(dDy.get(), dX.get(), dDx.get(), 5000, stream_);
    kc::add(dX.get(), dB.get(), dSum.get(), 5000, stream_);
    EXPECT_LE(relError(dY.download(), y), kFp32Tol);
    EXPECT_LE(relError(dDx.download(), dx), kFp32Tol);
    EXPECT_EQ(bitDifferences(dSum.download(), sum), 0u);
}

TEST_F(gpuOps, CrossEntropyMatchesTheCpu) {
    const std::int64_t rows = 50, vocab = 509;
    auto logits = randomFloats(static_cast<std::size_t>(rows * vocab), 50, 4.0f);
    std::vector<std::int32_t> targets(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < targets.size(); ++r)
        targets[r] = static_cast<std::int32_t>((r * 37) % vocab);
    DeviceArray<float> dZ(logits);
    DeviceArray<std::int32_t> dT(targets);
    DeviceArray<double> rowLoss(static_cast<std::size_t>(rows)), mean(1);
    const double loss = kernels::crossEntropyForward(logits.data(), targets.data(), rows, vocab);
    kc::crossEntropyForward(dZ.get(), dT.get(), rowLoss.get(), mean.get(), rows, vocab, stream_);
    EXPECT_NEAR(mean.download()[0], loss, 1e-6 * std::fabs(loss));
    const std::vector<float> gpuProbs = dZ.download();
    EXPECT_LE(relError(gpuProbs, logits), kFp32Tol);

    // Backward from the same probabilities: the same two roundings per element.
    std::vector<float> grad(gpuProbs.size());
    kernels::crossEntropyBackward(gpuProbs.data(), targets.data(), grad.data(), rows, vocab,
                                  1.0f / 50);
    DeviceArray<float> dGrad(grad.size());
    kc::crossEntropyBackward(dZ.get(), dT.get(), dGrad.get(), rows, vocab, 1.0f / 50, stream_);
    EXPECT_EQ(bitDifferences(dGrad.download(), grad), 0u);

    targets[3] = -1; // out of range: NaN loss, no out-of-bounds read
    dT.upload(targets);
    kc::crossEntropyForward(dZ.get(), dT.get(), rowLoss.get(), mean.get(), rows, vocab, stream_);
    EXPECT_TRUE(std::isnan(mean.download()[0]));
}

TEST_F(gpuOps, AdamWIsBitwiseTheCpus) {
    const double lr = 3e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weightDecay = 0.1;
    const std::size_t n = 10000;
    for (bool bf16Grads : {false, true}) {
        for (bool decay : {false, true}) {
            auto p = randomFloats(n, 60), m = randomFloats(n, 61, 0.01f),
                 v = randomFloats(n, 62, 0.01f);
            for (float& x : v)
                x = std::fabs(x);
            const auto g = randomFloats(n, 63);
            const auto gb = toBf16(g);
            DeviceArray<float> dP(p), dM(m), dV(v), dG(g);
            DeviceArray<kernels::Bf16> hG(gb);
            for (std::int64_t step : {1, 2, 10}) {
                // One set of host scalars for both backends (kernels/cpu/adamw.h).
                const kernels::AdamWScalars sc =
                    kernels::adamwScalars(lr, beta1, beta2, eps, weightDecay, step, decay, 0.5f);
                if (bf16Grads)
                    kernels::adamwUpdate(sc, p.data(), gb.data(), m.data(), v.data(), n);
                else
                    kernels::adamwUpdate(sc, p.data(), g.data(), m.data(), v.data(), n);
                if (bf16Grads)
                    kc::adamwUpdate(sc, dP.get(), hG.get(), dM.get(), dV.get(),
                                    static_cast<std::int64_t>(n), stream_);
                else
                    kc::adamwUpdate(sc, dP.get(), dG.get(), dM.get(), dV.get(),
                                    static_cast<std::int64_t>(n), stream_);
            }
            // A CPU build with FMA contraction (-march=native) would explain 1-ulp differences.
            EXPECT_EQ(bitDifferences(dP.download(), p), 0u)
                << "bf16 grads " << bf16Grads << " decay " << decay;
            EXPECT_EQ(bitDifferences(dM.download(), m), 0u);
            EXPECT_EQ(bitDifferences(dV.download(), v), 0u);
        }
    }
}

TEST_F(gpuOps, RankOrderSumsAreBitwiseTheCommunicatorsReference) {
    const int n = 5;
    const std::size_t count = 3001;
    std::vector<std::vector<float>> f;
    for (int r = 0; r < n; ++r) {
        auto v = randomFloats(count, 70u + static_cast<unsigned>(r), 1000.0f);
        v[0] = r % 2 ? 1e8f : -1e8f; // order-sensitive
        f.push_back(v);
    }
    std::vector<const void*> hostParts;
    for (auto& v : f)
        hostParts.push_back(v.data());
    std::vector<float> expected(count);
    comm::sumInRankOrder(hostParts.data(), n, expected.data(), count, comm::DType::F32);

    std::vector<float> packed; // parts back to back, for the strided variant
    for (auto& v : f)
        packed.insert(packed.end(), v.begin(), v.end());
    DeviceArray<float> dPacked(packed), out(count);
    std::vector<const void*> devParts;
    for (int r = 0; r < n; ++r)
        devParts.push_back(dPacked.get() + static_cast<std::size_t>(r) * count);
    kc::sumInRankOrder(devParts.data(), n, out.get(), count, kc::Elem::F32, stream_);
    EXPECT_EQ(bitDifferences(out.download(), expected), 0u);
    kc::sumStridedInRankOrder(dPacked.get(), count, n, out.get(), count, kc::Elem::F32, stream_);
    EXPECT_EQ(bitDifferences(out.download(), expected), 0u);
    // In place into part 0, as the reduce-scatter of a rank's own chunk does.
    kc::sumInRankOrder(devParts.data(), n, dPacked.get(), count, kc::Elem::F32, stream_);
    std::vector<float> first = dPacked.download();
    first.resize(count);
    EXPECT_EQ(bitDifferences(first, expected), 0u);

    std::vector<std::vector<kernels::Bf16>> b;
    std::vector<const void*> bHost;
    for (auto& v : f)
        b.push_back(toBf16(v));
    for (auto& v : b)
        bHost.push_back(v.data());
    std::vector<kernels::Bf16> bExpected(count), bPacked;
    comm::sumInRankOrder(bHost.data(), n, bExpected.data(), count, comm::DType::Bf16);
    for (auto& v : b)
        bPacked.insert(bPacked.end(), v.begin(), v.end());
    DeviceArray<kernels::Bf16> dB(bPacked), bOut(count);
    kc::sumStridedInRankOrder(dB.get(), count, n, bOut.get(), count, kc::Elem::Bf16, stream_);
    EXPECT_EQ(bitDifferences(bOut.download(), bExpected), 0u);

    std::vector<const void*> tooMany(kc::kMaxRankParts + 1, dPacked.get());
    EXPECT_THROW(kc::sumInRankOrder(tooMany.data(), static_cast<int>(tooMany.size()), out.get(), 1,
                                    kc::Elem::F32, stream_),
                 Error);
}

} // namespace
} // namespace shardscope
