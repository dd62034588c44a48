// The whole step on a CUDA device against the same step on the CPU: same seed, same data, one
// rank. Losses and gradients agree within 1e-4 in fp32 and within bf16 tolerances in mixed
// precision (where the CUDA backend runs its linear layers as bf16 GEMMs), and the ledger is
// the same allocation for allocation — so the theory's peak replay holds on both backends.
// Skips without a device (SHARDSCOPE_EXPECT_GPU=1 turns that into a failure).
#include "core/ledger.h"
#include "core/numeric.h"
#include "device/cpu_device.h"
#include "device/cuda_device.h"
#include "device/device.h"
#include "device/ops.h"
#include "gpu_test_support.h"
#include "model/data.h"
#include "runconfig/presets.h"
#include "train/trainer.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace shardscope {
namespace {

using plan::PrecisionKind;

struct Outcome {
    std::vector<double> losses;
    std::vector<std::vector<float>> grads; // first micro-batch, per unit (fp32 view)
    std::vector<std::vector<float>> weights;
    std::uint64_t ledgerPeak = 0;
};

train::TrainConfig configFor(PrecisionKind precision) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    cfg.precision = precision;
    cfg.optimizer.learningRate = preset.learningRate;
    cfg.seed = 5;
    return cfg;
}

std::vector<float> download(device::Device& dev, const void* data, std::uint64_t n, bool bf16) {
    std::vector<float> out(n);
    if (bf16) {
        std::vector<Bf16> raw(n);
        dev.ops().download(raw.data(), data, n * sizeof(Bf16));
        for (std::uint64_t i = 0; i < n; ++i)
            out[i] = toFloat(raw[i]);
    } else {
        dev.ops().download(out.data(), data, n * sizeof(float));
    }
    return out;
}

Outcome run(device::Device& dev, PrecisionKind precision, int steps) {
    const train::TrainConfig cfg = configFor(precision);
    model::MarkovSource data(cfg.model.shape.vocab, cfg.model.shape.seqLen, cfg.model.microBatch,
                             5);
    train::Trainer trainer(cfg, dev, data);
    Outcome o;
    trainer.computeGradients(data.batchFor(0, 0, 1));
    for (std::int32_t u = 0; u < trainer.model().unitCount(); ++u) {
        const strategy::OwnedSlice s = trainer.sharding().owned(u);
        o.grads.push_back(download(dev, s.grads, s.end - s.begin, s.gradsBf16));
    }
    // computeGradients left gradients behind; a fresh trainer trains from the same start.
    train::Trainer fresh(cfg, dev, data);
    dev.ledger().resetPeaks();
    for (int k = 0; k < steps; ++k)
        o.losses.push_back(fresh.step().loss);
    o.ledgerPeak = dev.ledger().peakBytes();
    o.weights = fresh.fullWeights();
    return o;
}

// ‖a − b‖ / ‖b‖ over a whole tensor: elementwise ratios blow up where values cross zero.
double relativeError(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, ref = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        diff += d * d;
        ref += static_cast<double>(b[i]) * static_cast<double>(b[i]);
    }
    return ref == 0 ? std::sqrt(diff) : std::sqrt(diff / ref);
}

void compare(PrecisionKind precision, double lossTol, double gradTol, double weightTol) {
    Ledger cpuLedger, gpuLedger;
    device::CpuDevice cpu(cpuLedger);
    device::CudaDevice gpu(gpuLedger, 0);
    const Outcome c = run(cpu, precision, 5);
    const Outcome g = run(gpu, precision, 5);
    ASSERT_EQ(c.losses.size(), g.losses.size());
    for (std::size_t k = 0; k < c.losses.size(); ++k)
        EXPECT_LE(std::fabs(g.losses[k] - c.losses[k]) / c.losses[k], lossTol) << "step " << k + 1;
    ASSERT_EQ(c.grads.size(), g.grads.size());
    for (std::size_t u = 0; u < c.grads.size(); ++u)
        EXPECT_LE(relativeError(g.grads[u], c.grads[u]), gradTol) << "gradient of unit " << u;
    for (std::size_t u = 0; u < c.weights.size(); ++u)
        EXPECT_LE(relativeError(g.weights[u], c.weights[u]), weightTol) << "weights of unit " << u;
    EXPECT_EQ(g.ledgerPeak, c.ledgerPeak) << "both backends allocate the same buffers";
    const device::CudaMemoryReport m = gpu.measure();
    EXPECT_GE(m.poolUsedHigh, m.ledgerPeak) << "the pool holds at least what the ledger asked for";
}

TEST(gpuTrain, Fp32StepsMatchTheCpuWithin1e4) {
    SHARDSCOPE_REQUIRE_CUDA();
    compare(PrecisionKind::Fp32, 1e-4, 1e-4, 1e-4);
}

// bf16 tolerances: gradients are stored in bf16 (8 significant bits: relative rounding 2^-9)
// and the CUDA linear layers round their operands to bf16, so a gradient differs by a few
// roundings; 3e-2 is ~15 bf16 ulps of headroom over a tensor, losses move less.
TEST(gpuTrain, MixedBf16StepsMatchTheCpuWithinBf16Tolerances) {
    SHARDSCOPE_REQUIRE_CUDA();
    compare(PrecisionKind::MixedBf16, 1e-2, 3e-2, 3e-2);
}

} // namespace
} // namespace shardscope
