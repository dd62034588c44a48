// CudaOps (a CudaDevice's ops()) against CpuOps (a CpuDevice's ops()): every method of
// device/ops.h on the same small random inputs. Bitwise where docs/gpu.md says the GPU repeats
// the CPU's arithmetic (memory, bf16 casts, accumulation, embedding, add, cross-entropy
// backward, AdamW, the gradient-norm reductions); norm-wise relative error ≤ 1e-4 otherwise.
// GPU memory comes from the CudaDevice (ledgered Buffers), so the tests also check that the ops
// allocate nothing in the ledger or the rank's pool. Mixed precision (setBf16Linear): linear
// layers bitwise the kernels' Bf16 overloads on host-rounded operands, within bf16 tolerance of
// the CPU's fp32, and the cast buffer a declared workspace outside the ledger and the pool.
// Skips without a CUDA device.
//
// Note: NaN inputs are kept out of the additions: x86 and NVIDIA GPUs propagate different NaN
// payloads, so NaN sums are only equal as NaNs, not bit for bit.
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/cuda_device.h"
#include "device/cuda_ops.h"
#include "device/device.h"
#include "device/ops.h"
#include "gpu_test_support.h"
#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cuda/ops.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace shardscope::device {
namespace {

using gputest::bitDifferences;
using gputest::randomFloats;
using gputest::relError;

constexpr double kFp32Tol = 1e-4;
constexpr AllocTag kTag{Category::Workspace, Tier::Device, kNoUnit};

std::vector<Bf16> bf16Of(const std::vector<float>& f) {
    std::vector<Bf16> b(f.size());
    kernels::toBf16(f, b);
    return b;
}

// Gradients over a wide dynamic range (2^-40 … 2^10 times a normal sample), so the fixed-point
// sum truncates some terms to zero and carries across the 64-bit halves.
std::vector<float> wideRange(std::size_t n, unsigned seed) {
    std::vector<float> v = randomFloats(n, seed);
    std::mt19937 rng(seed + 1000);
    std::uniform_int_distribution<int> exponent(-40, 10);
    for (float& x : v)
        x = std::ldexp(x, exponent(rng));
    return v;
}

// train/grad_norm.cpp's choice of shift for one rank holding every element.
int shiftFor(double maxAbs, std::uint64_t totalElements) {
    int e = 0;
    std::frexp(maxAbs, &e);
    const int bits = static_cast<int>(std::bit_width(totalElements | 1));
    return (126 - bits) - 2 * e;
}

class gpuDeviceOps : public ::testing::Test {
protected:
    void SetUp() override {
        SHARDSCOPE_REQUIRE_CUDA();
        gpu_ = std::make_unique<CudaDevice>(gpuLedger_, 0);
    }
    void TearDown() override { gpu_.reset(); }

    Ops& cpu() { return cpuDevice_.ops(); }
    Ops& gpu() { return gpu_->ops(); }

    template <class T> Buffer toGpu(const std::vector<T>& host) {
        Buffer b = gpu_->allocateArray<T>(host.size(), kTag);
        gpu().upload(b.data(), host.data(), host.size() * sizeof(T));
        return b;
    }
    template <class T> Buffer gpuArray(std::size_t n) {
        return gpu_->allocateArray<T>(n, kTag, true);
    }
    template <class T> std::vector<T> fromGpu(const Buffer& b) {
        std::vector<T> host(b.bytes() / sizeof(T));
        gpu().download(host.data(), b.data(), b.bytes());
        return host;
    }

    Ledger cpuLedger_, gpuLedger_;
    CpuDevice cpuDevice_{cpuLedger_};
    std::unique_ptr<CudaDevice> gpu_;
};

TEST_F(gpuDeviceOps, OpsIsOneCudaOpsPerDevice) {
    EXPECT_EQ(&gpu_->ops(), &gpu_->ops());
    EXPECT_NE(dynamic_cast<CudaOps*>(&gpu_->ops()), nullptr);
}

TEST_F(gpuDeviceOps, MemoryCallsMoveBytesExactly) {
    std::vector<std::uint8_t> a(1001), b(1001);
    std::mt19937 rng(1);
    for (auto& x : a)
        x = static_cast<std::uint8_t>(rng());
    for (auto& x : b)
        x = static_cast<std::uint8_t>(rng());
    Buffer dA = toGpu(a), dB = toGpu(b);
    EXPECT_EQ(fromGpu<std::uint8_t>(dA), a);

    // Unaligned sub-ranges on both sides, then a zeroed range and an empty copy.
    cpu().copy(b.data() + 3, a.data() + 1, 500);
    gpu().copy(dB.ptr<std::uint8_t>() + 3, dA.ptr<std::uint8_t>() + 1, 500);
    cpu().zero(b.data() + 600, 123);
    gpu().zero(dB.ptr<std::uint8_t>() + 600, 123);
    gpu().copy(dB.data(), dA.data(), 0);
    gpu().synchronize();
    EXPECT_EQ(fromGpu<std::uint8_t>(dB), b);

    // Download into a sub-range of a host buffer.
    std::vector<std::uint8_t> part(10, 0xee);
    gpu().download(part.data() + 2, dA.ptr<std::uint8_t>() + 7, 5);
    EXPECT_EQ(part[1], 0xee);
    EXPECT_EQ(std::memcmp(part.data() + 2, a.data() + 7, 5), 0);
    EXPECT_EQ(part[7], 0xee);
    EXPECT_EQ(gpuLedger_.liveTierBytes(Tier::Device), 2002u) << "ops allocate nothing ledgered";
}

TEST_F(gpuDeviceOps, PrecisionCallsAreBitwiseTheCpus) {
    std::vector<float> f = randomFloats(3000, 2, 100.0f);
    const float inf = std::numeric_limits<float>::infinity();
    const float specials[] = {0.0f,
                              -0.0f,
                              inf,
                              -inf,
                              std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::max(),
                              std::numeric_limits<float>::denorm_min(),
                              1.00390625f,
                              1.01171875f};
    f.insert(f.end(), std::begin(specials), std::end(specials));
    const auto n = static_cast<std::uint64_t>(f.size());
    std::vector<Bf16> b(f.size());
    std::vector<float> back(f.size());
    cpu().toBf16(f.data(), b.data(), n);
    cpu().toFloat(b.data(), back.data(), n);
    Buffer dF = toGpu(f), dB = gpuArray<Bf16>(f.size()), dBack = gpuArray<float>(f.size());
    gpu().toBf16(dF.ptr<float>(), dB.ptr<Bf16>(), n);
    gpu().toFloat(dB.ptr<Bf16>(), dBack.ptr<float>(), n);
    EXPECT_EQ(bitDifferences(fromGpu<Bf16>(dB), b), 0u);
    EXPECT_EQ(bitDifferences(fromGpu<float>(dBack), back), 0u);

    // Accumulation: finite values of very different magnitudes (rounding matters), signed
    // zeros and same-signed infinities; no NaN (see the note at the top).
    std::vector<float> x = randomFloats(4099, 3, 1e3f), y = randomFloats(4099, 4, 1e-3f);
    x[0] = -0.0f;
    y[0] = -0.0f;
    x[1] = 0.0f;
    y[1] = -0.0f;
    x[2] = inf;
    y[2] = 1.0f;
    x[3] = -inf;
    y[3] = -inf;
    const auto m = static_cast<std::uint64_t>(x.size());
    {
        std::vector<float> dst = x;
        cpu().accumulate(dst.data(), y.data(), m, false);
        Buffer dDst = toGpu(x), dSrc = toGpu(y);
        gpu().accumulate(dDst.data(), dSrc.data(), m, false);
        EXPECT_EQ(bitDifferences(fromGpu<float>(dDst), dst), 0u) << "fp32";
    }
    {
        std::vector<Bf16> dst = bf16Of(x);
        const std::vector<Bf16> src = bf16Of(y);
        Buffer dDst = toGpu(dst), dSrc = toGpu(src);
        cpu().accumulate(dst.data(), src.data(), m, true);
        gpu().accumulate(dDst.data(), dSrc.data(), m, true);
        EXPECT_EQ(bitDifferences(fromGpu<Bf16>(dDst), dst), 0u) << "bf16";
    }
    {
        std::vector<Bf16> dst = bf16Of(x);
        Buffer dDst = toGpu(dst), dSrc = toGpu(y);
        cpu().accumulateRounded(dst.data(), y.data(), m);
        gpu().accumulateRounded(dDst.ptr<Bf16>(), dSrc.ptr<float>(), m);
        EXPECT_EQ(bitDifferences(fromGpu<Bf16>(dDst), dst), 0u) << "rounded";
    }
}

TEST_F(gpuDeviceOps, EmbeddingIsBitwiseTheCpus) {
    const std::int64_t batch = 2, seq = 13, d = 24, vocab = 7; // 26 tokens, 7 ids: repeats
    std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * seq));
    for (std::size_t i = 0; i < ids.size(); ++i)
        ids[i] = static_cast<std::int32_t>((i * 5 + 1) % vocab);
    const auto wte = randomFloats(static_cast<std::size_t>(vocab * d), 5);
    const auto wpe = randomFloats(static_cast<std::size_t>(seq * d), 6);
    const auto dout = randomFloats(static_cast<std::size_t>(batch * seq * d), 7);
    auto dwte = randomFloats(wte.size(), 8), dwpe = randomFloats(wpe.size(), 9); // accumulated onto
    std::vector<float> out(dout.size());
    Buffer gIds = toGpu(ids), gWte = toGpu(wte), gWpe = toGpu(wpe), gDout = toGpu(dout);
    Buffer gDwte = toGpu(dwte), gDwpe = toGpu(dwpe), gOut = gpuArray<float>(out.size());
    cpu().embeddingForward(ids.data(), wte.data(), wpe.data(), out.data(), batch, seq, d, vocab);
    gpu().embeddingForward(gIds.ptr<std::int32_t>(), gWte.ptr<float>(), gWpe.ptr<float>(),
                           gOut.ptr<float>(), batch, seq, d, vocab);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gOut), out), 0u);
    cpu().embeddingBackward(ids.data(), dout.data(), dwte.data(), dwpe.data(), batch, seq, d,
                            vocab);
    gpu().embeddingBackward(gIds.ptr<std::int32_t>(), gDout.ptr<float>(), gDwte.ptr<float>(),
                            gDwpe.ptr<float>(), batch, seq, d, vocab);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gDwte), dwte), 0u);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gDwpe), dwpe), 0u);
}

TEST_F(gpuDeviceOps, LayerNormMatchesTheCpu) {
    const std::int64_t rows = 19, d = 96;
    const auto x = randomFloats(static_cast<std::size_t>(rows * d), 10, 3.0f);
    const auto gamma = randomFloats(static_cast<std::size_t>(d), 11),
               beta = randomFloats(static_cast<std::size_t>(d), 12);
    std::vector<float> out(x.size()), mean(static_cast<std::size_t>(rows)), rstd(mean.size());
    cpu().layerNormForward(x.data(), gamma.data(), beta.data(), out.data(), mean.data(),
                           rstd.data(), rows, d);
    Buffer gX = toGpu(x), gGamma = toGpu(gamma), gBeta = toGpu(beta),
           gOut = gpuArray<float>(out.size());
    Buffer gMean = gpuArray<float>(mean.size()), gRstd = gpuArray<float>(rstd.size());
    gpu().layerNormForward(gX.ptr<float>(), gGamma.ptr<float>(), gBeta.ptr<float>(),
                           gOut.ptr<float>(), gMean.ptr<float>(), gRstd.ptr<float>(), rows, d);
    EXPECT_LE(relError(fromGpu<float>(gOut), out), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gMean), mean), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gRstd), rstd), kFp32Tol);

    const auto dy = randomFloats(x.size(), 13);
    auto dx = randomFloats(x.size(), 14), dgamma = randomFloats(gamma.size(), 15),
         dbeta = randomFloats(beta.size(), 16);
    Buffer gDy = toGpu(dy), gDx = toGpu(dx), gDgamma = toGpu(dgamma), gDbeta = toGpu(dbeta);
    cpu().layerNormBackward(dy.data(), x.data(), mean.data(), rstd.data(), gamma.data(), dx.data(),
                            dgamma.data(), dbeta.data(), rows, d);
    gpu().layerNormBackward(gDy.ptr<float>(), gX.ptr<float>(), gMean.ptr<float>(),
                            gRstd.ptr<float>(), gGamma.ptr<float>(), gDx.ptr<float>(),
                            gDgamma.ptr<float>(), gDbeta.ptr<float>(), rows, d);
    EXPECT_LE(relError(fromGpu<float>(gDx), dx), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gDgamma), dgamma), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gDbeta), dbeta), kFp32Tol);
}

TEST_F(gpuDeviceOps, LinearMatchesTheCpuWithAndWithoutOptionalOutputs) {
    const std::int64_t rows = 21, in = 32, out = 40;
    const auto x = randomFloats(static_cast<std::size_t>(rows * in), 20);
    const auto w = randomFloats(static_cast<std::size_t>(in * out), 21, 0.2f);
    const auto bias = randomFloats(static_cast<std::size_t>(out), 22);
    const auto y0 = randomFloats(static_cast<std::size_t>(rows * out), 23);
    const auto dy = randomFloats(y0.size(), 24);
    Buffer gX = toGpu(x), gW = toGpu(w), gBias = toGpu(bias), gDy = toGpu(dy);
    for (bool withBias : {false, true}) {
        for (bool accumulate : {false, true}) {
            std::vector<float> y = y0;
            Buffer gY = toGpu(y0);
            const float* b = withBias ? bias.data() : nullptr;
            cpu().linearForward(x.data(), w.data(), b, y.data(), rows, in, out, accumulate);
            gpu().linearForward(gX.ptr<float>(), gW.ptr<float>(),
                                withBias ? gBias.ptr<float>() : nullptr, gY.ptr<float>(), rows, in,
                                out, accumulate);
            EXPECT_LE(relError(fromGpu<float>(gY), y), kFp32Tol)
                << "bias " << withBias << " acc " << accumulate;
        }
    }
    for (bool optional : {false, true}) { // optional: dx and dbias present
        auto dx = randomFloats(x.size(), 25), dw = randomFloats(w.size(), 26),
             db = randomFloats(bias.size(), 27);
        Buffer gDx = toGpu(dx), gDw = toGpu(dw), gDb = toGpu(db);
        cpu().linearBackward(dy.data(), x.data(), w.data(), optional ? dx.data() : nullptr,
                             dw.data(), optional ? db.data() : nullptr, rows, in, out);
        gpu().linearBackward(gDy.ptr<float>(), gX.ptr<float>(), gW.ptr<float>(),
                             optional ? gDx.ptr<float>() : nullptr, gDw.ptr<float>(),
                             optional ? gDb.ptr<float>() : nullptr, rows, in, out);
        EXPECT_LE(relError(fromGpu<float>(gDx), dx), kFp32Tol) << "dx, optional " << optional;
        EXPECT_LE(relError(fromGpu<float>(gDw), dw), kFp32Tol) << "dw, optional " << optional;
        EXPECT_LE(relError(fromGpu<float>(gDb), db), kFp32Tol) << "dbias, optional " << optional;
    }
}

// ---- mixed precision: setBf16Linear(true) ------------------------------------------------------
//
// Tolerance against CpuOps's fp32 GEMMs. RNE to bf16 (8 significant bits) moves an operand by at
// most 2^-9 of itself, so a product of two rounded operands is off by at most ~2^-8 ≈ 3.9e-3
// relative, and a sum of K products by at most 3.9e-3 · Σ|a·b| — a bound that grows like √K
// against |Σ a·b| for random signs, but the per-term errors are independent and mostly cancel.
// Measured on the host (double sums of the exactly rounded operands, 200 seeds each, these
// distributions, shapes 21×32×40 … 64×256×128): the norm-wise error max|Δ| / max|y| of y, dx and
// dW is 1.6e-3 … 4.2e-3. kBf16Tol = 1e-2 leaves a 2.4× margin; fp32 accumulation adds ~1e-6.
// The same measurement bounds it from below (≥ 1.6e-3 when nothing else is added to y): an error
// above kBf16MinError shows the operands really were rounded.
constexpr double kBf16Tol = 1e-2;
constexpr double kBf16MinError = 5e-4;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// bf16(f) widened back: the value a bf16 GEMM multiplies (exact in fp32).
std::vector<float> bf16Rounded(const std::vector<float>& f) {
    std::vector<float> r(f.size());
    for (std::size_t i = 0; i < f.size(); ++i)
        r[i] = kernels::toFloat(kernels::toBf16(f[i]));
    return r;
}

TEST_F(gpuDeviceOps, Bf16LinearIsTheBf16KernelsOnRoundedOperands) {
    const std::int64_t rows = 37, in = 96, out = 80;
    const auto x = randomFloats(static_cast<std::size_t>(rows * in), 70);
    const auto w = randomFloats(static_cast<std::size_t>(in * out), 71, 0.2f);
    const auto bias = randomFloats(static_cast<std::size_t>(out), 72);
    const auto y0 = randomFloats(static_cast<std::size_t>(rows * out), 73);
    const auto dy = randomFloats(y0.size(), 74);
    const auto xr = bf16Rounded(x), wr = bf16Rounded(w), dyr = bf16Rounded(dy);
    Buffer gX = toGpu(x), gW = toGpu(w), gBias = toGpu(bias), gDy = toGpu(dy);
    // The reference: kernels::cuda's Bf16 overloads on operands rounded by kernels::toBf16 on the
    // host, on the same stream, through a cuBLAS handle with a workspace of the same size as
    // CudaOps's (cuBLAS chooses its algorithm by the problem AND the workspace size), so the
    // GEMMs are the same cuBLAS calls and must give the same bits.
    Buffer gXb = toGpu(bf16Of(x)), gWb = toGpu(bf16Of(w)), gDyb = toGpu(bf16Of(dy));
    auto& ops = dynamic_cast<CudaOps&>(gpu());
    gputest::DeviceArray<std::uint8_t> refWorkspace(ops.blasWorkspaceBytes());
    kernels::cuda::Blas ref(gpu_->stream());
    ref.setWorkspace(refWorkspace.get(), refWorkspace.size());

    gpu().setBf16Linear(true);
    EXPECT_TRUE(ops.bf16Linear());
    for (bool withBias : {false, true}) {
        for (bool accumulate : {false, true}) {
            Buffer gY = toGpu(y0), gRef = toGpu(y0);
            const float* gb = withBias ? gBias.ptr<float>() : nullptr;
            gpu().linearForward(gX.ptr<float>(), gW.ptr<float>(), gb, gY.ptr<float>(), rows, in,
                                out, accumulate);
            kernels::cuda::linearForward(ref, gXb.ptr<Bf16>(), gWb.ptr<Bf16>(), gb,
                                         gRef.ptr<float>(), rows, in, out, accumulate);
            const std::vector<float> got = fromGpu<float>(gY);
            EXPECT_EQ(bitDifferences(got, fromGpu<float>(gRef)), 0u)
                << "bias " << withBias << " acc " << accumulate;

            const float* b = withBias ? bias.data() : nullptr;
            std::vector<float> fp32 = y0, onRounded = y0;
            cpu().linearForward(x.data(), w.data(), b, fp32.data(), rows, in, out, accumulate);
            cpu().linearForward(xr.data(), wr.data(), b, onRounded.data(), rows, in, out,
                                accumulate);
            EXPECT_LE(relError(got, fp32), kBf16Tol)
                << "bias " << withBias << " acc " << accumulate;
            if (!withBias && !accumulate) {
                EXPECT_GT(relError(got, fp32), kBf16MinError) << "operands were rounded";
            }
            // Only x and W are rounded (the fp32 bias and y are not): the CPU's fp32 GEMM on the
            // rounded values differs by accumulation order alone.
            EXPECT_LE(relError(got, onRounded), kFp32Tol)
                << "bias " << withBias << " acc " << accumulate;
        }
    }
    for (bool optional : {false, true}) { // optional: dx and dbias present
        const auto dx0 = randomFloats(x.size(), 75), dw0 = randomFloats(w.size(), 76),
                   db0 = randomFloats(bias.size(), 77);
        Buffer gDx = toGpu(dx0), gDw = toGpu(dw0), gDb = toGpu(db0);
        Buffer gRefDx = toGpu(dx0), gRefDw = toGpu(dw0);
        gpu().linearBackward(gDy.ptr<float>(), gX.ptr<float>(), gW.ptr<float>(),
                             optional ? gDx.ptr<float>() : nullptr, gDw.ptr<float>(),
                             optional ? gDb.ptr<float>() : nullptr, rows, in, out);
        kernels::cuda::linearBackward(ref, gDyb.ptr<Bf16>(), gXb.ptr<Bf16>(), gWb.ptr<Bf16>(),
                                      optional ? gRefDx.ptr<float>() : nullptr, gRefDw.ptr<float>(),
                                      nullptr, rows, in, out);
        const std::vector<float> gotDx = fromGpu<float>(gDx), gotDw = fromGpu<float>(gDw),
                                 gotDb = fromGpu<float>(gDb);
        EXPECT_EQ(bitDifferences(gotDx, fromGpu<float>(gRefDx)), 0u) << "dx, optional " << optional;
        EXPECT_EQ(bitDifferences(gotDw, fromGpu<float>(gRefDw)), 0u) << "dw, optional " << optional;

        std::vector<float> dx = dx0, dw = dw0, db = db0, dxR = dx0, dwR = dw0;
        cpu().linearBackward(dy.data(), x.data(), w.data(), optional ? dx.data() : nullptr,
                             dw.data(), optional ? db.data() : nullptr, rows, in, out);
        cpu().linearBackward(dyr.data(), xr.data(), wr.data(), optional ? dxR.data() : nullptr,
                             dwR.data(), nullptr, rows, in, out);
        EXPECT_LE(relError(gotDx, dx), kBf16Tol) << "dx, optional " << optional;
        EXPECT_LE(relError(gotDw, dw), kBf16Tol) << "dw, optional " << optional;
        EXPECT_LE(relError(gotDx, dxR), kFp32Tol) << "dx, optional " << optional;
        EXPECT_LE(relError(gotDw, dwR), kFp32Tol) << "dw, optional " << optional;
        if (!optional) {
            EXPECT_EQ(bitDifferences(gotDx, dx0), 0u) << "dx skipped when null";
            EXPECT_EQ(bitDifferences(gotDb, db0), 0u) << "dbias skipped when null";
        }
        // dbias: the fp32 column sum of the fp32 dy, bitwise the CPU's (the bias is no GEMM
        // operand and stays fp32, as in fp32 mode).
        EXPECT_EQ(bitDifferences(gotDb, db), 0u) << "dbias, optional " << optional;
    }

    // Off again: fp32 GEMMs as before.
    gpu().setBf16Linear(false);
    EXPECT_FALSE(ops.bf16Linear());
    Buffer gY = toGpu(y0);
    std::vector<float> y = y0;
    gpu().linearForward(gX.ptr<float>(), gW.ptr<float>(), nullptr, gY.ptr<float>(), rows, in, out,
                        false);
    cpu().linearForward(x.data(), w.data(), nullptr, y.data(), rows, in, out, false);
    EXPECT_LE(relError(fromGpu<float>(gY), y), kFp32Tol);
    std::vector<float> dx = randomFloats(x.size(), 78), dw = randomFloats(w.size(), 79),
                       db = randomFloats(bias.size(), 80);
    Buffer gDx = toGpu(dx), gDw = toGpu(dw), gDb = toGpu(db);
    gpu().linearBackward(gDy.ptr<float>(), gX.ptr<float>(), gW.ptr<float>(), gDx.ptr<float>(),
                         gDw.ptr<float>(), gDb.ptr<float>(), rows, in, out);
    cpu().linearBackward(dy.data(), x.data(), w.data(), dx.data(), dw.data(), db.data(), rows, in,
                         out);
    EXPECT_LE(relError(fromGpu<float>(gDx), dx), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gDw), dw), kFp32Tol);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gDb), db), 0u);
}

TEST_F(gpuDeviceOps, Bf16CastBufferIsADeclaredWorkspaceOutsideTheLedgerAndThePool) {
    EXPECT_EQ(gpu_->declaredWorkspaceBytes(), 0u) << "before ops() was first used";
    EXPECT_EQ(gpu_->measure().declaredWorkspace, 0u);
    auto& ops = dynamic_cast<CudaOps&>(gpu());
    const std::uint64_t fixed = ops.declaredWorkspaceBytes();
    EXPECT_GE(ops.blasWorkspaceBytes(), 4 * kMiB);
    EXPECT_GE(fixed, ops.blasWorkspaceBytes() + kernels::cuda::kReductionScratchBytes);
    EXPECT_EQ(ops.castBufferBytes(), 0u);
    EXPECT_FALSE(ops.bf16Linear()) << "fp32 until the step driver says otherwise";
    EXPECT_EQ(gpu_->declaredWorkspaceBytes(), fixed);

    // A small problem (1 KiB of bf16 operands) and a large one: 512×1024 · 1024×1024 needs 3 MiB
    // forward (x, W) and 4 MiB backward (dy, x, W). Every buffer is made before `before`.
    const std::int64_t sRows = 8, sIn = 16, sOut = 24, lRows = 512, lIn = 1024, lOut = 1024;
    const auto sx = randomFloats(static_cast<std::size_t>(sRows * sIn), 90),
               sw = randomFloats(static_cast<std::size_t>(sIn * sOut), 91, 0.3f);
    const auto lx = randomFloats(static_cast<std::size_t>(lRows * lIn), 92),
               lw = randomFloats(static_cast<std::size_t>(lIn * lOut), 93, 0.03f),
               ldy = randomFloats(static_cast<std::size_t>(lRows * lOut), 94);
    Buffer gSx = toGpu(sx), gSw = toGpu(sw), gLx = toGpu(lx), gLw = toGpu(lw), gLdy = toGpu(ldy);
    Buffer gSy1 = gpuArray<float>(static_cast<std::size_t>(sRows * sOut)),
           gSy2 = gpuArray<float>(static_cast<std::size_t>(sRows * sOut)),
           gLy = gpuArray<float>(static_cast<std::size_t>(lRows * lOut)),
           gLdx = gpuArray<float>(lx.size()), gLdw = gpuArray<float>(lw.size());

    gpu().linearForward(gSx.ptr<float>(), gSw.ptr<float>(), nullptr, gSy1.ptr<float>(), sRows, sIn,
                        sOut, false);
    gpu().synchronize();
    EXPECT_EQ(ops.castBufferBytes(), 0u) << "fp32 GEMMs cast nothing";

    const CudaMemoryReport before = gpu_->measure();
    gpu().setBf16Linear(true);
    gpu().linearForward(gSx.ptr<float>(), gSw.ptr<float>(), nullptr, gSy1.ptr<float>(), sRows, sIn,
                        sOut, false);
    EXPECT_EQ(ops.castBufferBytes(), 2 * kMiB) << "grown in 2 MiB steps";
    // Queued work still reads the small buffer when the large problem grows it: growing waits
    // for the stream before freeing, so the small result must be intact.
    gpu().linearForward(gLx.ptr<float>(), gLw.ptr<float>(), nullptr, gLy.ptr<float>(), lRows, lIn,
                        lOut, false);
    EXPECT_EQ(ops.castBufferBytes(), 4 * kMiB);
    gpu().linearBackward(gLdy.ptr<float>(), gLx.ptr<float>(), gLw.ptr<float>(), gLdx.ptr<float>(),
                         gLdw.ptr<float>(), nullptr, lRows, lIn, lOut);
    EXPECT_EQ(ops.castBufferBytes(), 4 * kMiB) << "dy + x + W = 4 MiB exactly";
    gpu().linearForward(gSx.ptr<float>(), gSw.ptr<float>(), nullptr, gSy2.ptr<float>(), sRows, sIn,
                        sOut, false);
    EXPECT_EQ(ops.castBufferBytes(), 4 * kMiB) << "never shrinks";

    const std::vector<float> sy1 = fromGpu<float>(gSy1);
    EXPECT_EQ(bitDifferences(sy1, fromGpu<float>(gSy2)), 0u) << "the same call, the same bits";
    std::vector<float> sy(sy1.size());
    cpu().linearForward(sx.data(), sw.data(), nullptr, sy.data(), sRows, sIn, sOut, false);
    EXPECT_LE(relError(sy1, sy), kBf16Tol);
    std::vector<float> ly(static_cast<std::size_t>(lRows * lOut));
    cpu().linearForward(lx.data(), lw.data(), nullptr, ly.data(), lRows, lIn, lOut, false);
    EXPECT_LE(relError(fromGpu<float>(gLy), ly), kBf16Tol);
    std::vector<float> ldx(lx.size()), ldw(lw.size());
    cpu().linearBackward(ldy.data(), lx.data(), lw.data(), ldx.data(), ldw.data(), nullptr, lRows,
                         lIn, lOut);
    EXPECT_LE(relError(fromGpu<float>(gLdx), ldx), kBf16Tol);
    EXPECT_LE(relError(fromGpu<float>(gLdw), ldw), kBf16Tol);

    const CudaMemoryReport after = gpu_->measure();
    EXPECT_EQ(after.ledgerLive, before.ledgerLive) << "the cast buffer is not ledgered";
    EXPECT_EQ(after.poolUsed, before.poolUsed) << "nor taken from the rank's pool";
    EXPECT_EQ(after.poolReserved, before.poolReserved);
    EXPECT_EQ(after.declaredWorkspace, fixed + 4 * kMiB);
    EXPECT_EQ(after.declaredWorkspace, gpu_->declaredWorkspaceBytes());
    EXPECT_GE(after.outsideLedger(), after.declaredWorkspace) << "part of what the pools miss";
}

TEST_F(gpuDeviceOps, AttentionMatchesTheCpuWithTheSharedScratchSize) {
    const std::int64_t batch = 2, seq = 24, heads = 3, hd = 8, d = heads * hd;
    const auto qkv = randomFloats(static_cast<std::size_t>(batch * seq * 3 * d), 30);
    const auto dout = randomFloats(static_cast<std::size_t>(batch * seq * d), 31);
    std::vector<float> probs(static_cast<std::size_t>(batch * heads * seq * seq)), out(dout.size());
    cpu().attentionForward(qkv.data(), probs.data(), out.data(), batch, seq, heads, hd);
    Buffer gQkv = toGpu(qkv), gDout = toGpu(dout), gProbs = gpuArray<float>(probs.size()),
           gOut = gpuArray<float>(out.size());
    gpu().attentionForward(gQkv.ptr<float>(), gProbs.ptr<float>(), gOut.ptr<float>(), batch, seq,
                           heads, hd);
    EXPECT_LE(relError(fromGpu<float>(gProbs), probs), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gOut), out), kFp32Tol);

    const auto scratchFloats = static_cast<std::size_t>(Ops::attentionScratchFloats(seq));
    std::vector<float> dqkv(qkv.size()), scratch(scratchFloats);
    cpu().attentionBackward(dout.data(), qkv.data(), probs.data(), dqkv.data(), scratch.data(),
                            batch, seq, heads, hd);
    // dqkv is overwritten: start from garbage to prove it.
    Buffer gDqkv = toGpu(randomFloats(qkv.size(), 32)), gScratch = gpuArray<float>(scratchFloats);
    gpu().attentionBackward(gDout.ptr<float>(), gQkv.ptr<float>(), gProbs.ptr<float>(),
                            gDqkv.ptr<float>(), gScratch.ptr<float>(), batch, seq, heads, hd);
    EXPECT_LE(relError(fromGpu<float>(gDqkv), dqkv), kFp32Tol);
}

TEST_F(gpuDeviceOps, GeluAndAddMatchTheCpu) {
    const std::int64_t n = 3001;
    const auto x = randomFloats(static_cast<std::size_t>(n), 40, 3.0f),
               dy = randomFloats(static_cast<std::size_t>(n), 41),
               b = randomFloats(static_cast<std::size_t>(n), 42);
    std::vector<float> y(x.size()), dx(x.size()), sum(x.size());
    cpu().geluForward(x.data(), y.data(), n);
    cpu().geluBackward(dy.data(), x.data(), dx.data(), n);
    cpu().add(x.data(), b.data(), sum.data(), n);
    Buffer gX = toGpu(x), gDy = toGpu(dy), gB = toGpu(b);
    Buffer gY = gpuArray<float>(x.size()), gDx = gpuArray<float>(x.size()),
           gSum = gpuArray<float>(x.size());
    gpu().geluForward(gX.ptr<float>(), gY.ptr<float>(), n);
    gpu().geluBackward(gDy.ptr<float>(), gX.ptr<float>(), gDx.ptr<float>(), n);
    gpu().add(gX.ptr<float>(), gB.ptr<float>(), gSum.ptr<float>(), n);
    EXPECT_LE(relError(fromGpu<float>(gY), y), kFp32Tol);
    EXPECT_LE(relError(fromGpu<float>(gDx), dx), kFp32Tol);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gSum), sum), 0u);
}

TEST_F(gpuDeviceOps, CrossEntropyMatchesTheCpuAndLeavesTheMeanInScratch) {
    const std::int64_t rows = 30, vocab = 257;
    auto logits = randomFloats(static_cast<std::size_t>(rows * vocab), 50, 4.0f);
    std::vector<std::int32_t> targets(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < targets.size(); ++r)
        targets[r] = static_cast<std::int32_t>((r * 37) % vocab);
    Buffer gZ = toGpu(logits), gT = toGpu(targets);
    const auto scratchDoubles = static_cast<std::size_t>(Ops::crossEntropyScratchDoubles(rows));
    std::vector<double> scratch(scratchDoubles);
    Buffer gScratch = gpuArray<double>(scratchDoubles);
    const double loss =
        cpu().crossEntropyForward(logits.data(), targets.data(), scratch.data(), rows, vocab);
    const double gpuLoss = gpu().crossEntropyForward(gZ.ptr<float>(), gT.ptr<std::int32_t>(),
                                                     gScratch.ptr<double>(), rows, vocab);
    EXPECT_NEAR(gpuLoss, loss, kFp32Tol * std::fabs(loss));
    EXPECT_EQ(fromGpu<double>(gScratch)[static_cast<std::size_t>(rows)], gpuLoss);
    EXPECT_EQ(scratch[static_cast<std::size_t>(rows)], loss);
    const std::vector<float> gpuProbs = fromGpu<float>(gZ);
    EXPECT_LE(relError(gpuProbs, logits), kFp32Tol);

    // Backward from the same probabilities on both sides: the same two roundings per element.
    Buffer gProbs = toGpu(logits), gGrad = gpuArray<float>(logits.size());
    std::vector<float> grad(logits.size());
    cpu().crossEntropyBackward(logits.data(), targets.data(), grad.data(), rows, vocab, 1.0f / 30);
    gpu().crossEntropyBackward(gProbs.ptr<float>(), gT.ptr<std::int32_t>(), gGrad.ptr<float>(),
                               rows, vocab, 1.0f / 30);
    EXPECT_EQ(bitDifferences(fromGpu<float>(gGrad), grad), 0u);
}

TEST_F(gpuDeviceOps, AdamWIsBitwiseTheCpus) {
    const std::uint64_t n = 5003;
    for (bool bf16Grads : {false, true}) {
        for (bool decay : {false, true}) {
            auto p = randomFloats(n, 60), m = randomFloats(n, 61, 0.01f),
                 v = randomFloats(n, 62, 0.01f);
            for (float& x : v)
                x = std::fabs(x);
            const auto g = randomFloats(n, 63);
            const auto gb = bf16Of(g);
            Buffer gP = toGpu(p), gM = toGpu(m), gV = toGpu(v), gG = toGpu(g), gGb = toGpu(gb);
            const void* cpuGrads = bf16Grads ? static_cast<const void*>(gb.data()) : g.data();
            const void* gpuGrads = bf16Grads ? gGb.data() : gG.data();
            for (std::int64_t step : {1, 2, 7}) {
                const auto s =
                    kernels::adamwScalars(3e-3, 0.9, 0.95, 1e-8, 0.1, step, decay, 0.25f);
                cpu().adamw(s, p.data(), cpuGrads, bf16Grads, m.data(), v.data(), n);
                gpu().adamw(s, gP.ptr<float>(), gpuGrads, bf16Grads, gM.ptr<float>(),
                            gV.ptr<float>(), n);
            }
            EXPECT_EQ(bitDifferences(fromGpu<float>(gP), p), 0u)
                << "bf16 grads " << bf16Grads << " decay " << decay;
            EXPECT_EQ(bitDifferences(fromGpu<float>(gM), m), 0u);
            EXPECT_EQ(bitDifferences(fromGpu<float>(gV), v), 0u);
        }
    }
}

TEST_F(gpuDeviceOps, GradientStatsAreBitwiseTheCpus) {
    const double inf = std::numeric_limits<double>::infinity();
    // 1 element, one block's worth, and more elements than kReductionBlocks × 256 (grid stride).
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{300'001}}) {
        for (int special = 0; special < 3; ++special) { // none, +Inf, NaN
            std::vector<float> g = wideRange(n, static_cast<unsigned>(n));
            if (special == 1) g[n / 2] = static_cast<float>(inf);
            if (special == 2) g[n - 1] = std::numeric_limits<float>::quiet_NaN();
            const auto gb = bf16Of(g);
            Buffer gG = toGpu(g), gGb = toGpu(gb);
            for (bool bf16 : {false, true}) {
                const void* host = bf16 ? static_cast<const void*>(gb.data()) : g.data();
                const GradientStats want = cpu().gradientStats(host, n, bf16);
                const GradientStats got =
                    gpu().gradientStats(bf16 ? gGb.data() : gG.data(), n, bf16);
                EXPECT_EQ(got.maxAbs, want.maxAbs)
                    << "n " << n << " special " << special << " bf16 " << bf16;
                EXPECT_EQ(got.finite, want.finite)
                    << "n " << n << " special " << special << " bf16 " << bf16;
                EXPECT_EQ(want.finite, special == 0);
            }
        }
    }
    Buffer one = toGpu(std::vector<float>{-3.0f});
    const GradientStats empty = gpu().gradientStats(one.data(), 0, false);
    EXPECT_EQ(empty.maxAbs, 0.0);
    EXPECT_TRUE(empty.finite);
}

TEST_F(gpuDeviceOps, FixedPointSumOfSquaresIsBitwiseTheCpus) {
    Buffer one = toGpu(std::vector<float>{2.0f});
    const CudaMemoryReport before = gpu_->measure();
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{300'001}}) {
        const std::vector<float> g = wideRange(n, static_cast<unsigned>(n) + 7);
        const auto gb = bf16Of(g);
        Buffer gG = toGpu(g), gGb = toGpu(gb);
        for (bool bf16 : {false, true}) {
            const void* host = bf16 ? static_cast<const void*>(gb.data()) : g.data();
            const void* dev = bf16 ? gGb.data() : gG.data();
            const GradientStats stats = cpu().gradientStats(host, n, bf16);
            ASSERT_TRUE(stats.finite);
            const int shift = shiftFor(stats.maxAbs, n);
            // The norm's own shift, and a coarser one that truncates more terms to zero.
            for (int s : {shift, shift - 40}) {
                const Uint128Parts want = cpu().sumSquaresFixed(host, n, bf16, s);
                const Uint128Parts got = gpu().sumSquaresFixed(dev, n, bf16, s);
                EXPECT_EQ(got.lo, want.lo) << "n " << n << " bf16 " << bf16 << " shift " << s;
                EXPECT_EQ(got.hi, want.hi) << "n " << n << " bf16 " << bf16 << " shift " << s;
                if (s == shift && n > 1) {
                    EXPECT_NE(want.hi, 0u) << "the high half is exercised";
                }
            }
        }
    }
    const Uint128Parts empty = gpu().sumSquaresFixed(one.data(), 0, false, 10);
    EXPECT_EQ(empty.lo, 0u);
    EXPECT_EQ(empty.hi, 0u);
    const Uint128Parts single = gpu().sumSquaresFixed(one.data(), 1, false, 10);
    EXPECT_EQ(single.lo, 4096u); // 2² · 2^10
    EXPECT_EQ(single.hi, 0u);
    // The reductions' scratch is outside the ledger and the rank's pool (documented in cuda_ops.h).
    const CudaMemoryReport after = gpu_->measure();
    EXPECT_EQ(after.ledgerLive, before.ledgerLive);
    EXPECT_EQ(after.poolUsed, before.poolUsed);
}

} // namespace
} // namespace shardscope::device
