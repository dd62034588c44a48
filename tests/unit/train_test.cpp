// Training on one rank: the loss really falls, runs are bit-for-bit reproducible, the optimizer
// does what AdamW says, and the strategy hooks fire in FSDP order.
#include "comm/communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "kernels/cpu/adamw.h"
#include "kernels/cpu/bf16.h"
#include "model/data.h"
#include "runconfig/presets.h"
#include "strategy/sharding.h"
#include "train/optimizer.h"
#include "train/trainer.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

namespace shardscope {
namespace {

using plan::PrecisionKind;

struct TrainingRun {
    std::vector<double> losses;
    std::uint64_t digest = 0;
};

TrainingRun train(int steps, std::uint64_t seed, PrecisionKind precision, bool checkpointing,
                  strategy::Sharding* sharding = nullptr) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, seed);
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, checkpointing};
    cfg.precision = precision;
    cfg.optimizer.learningRate = preset.learningRate;
    cfg.seed = seed;
    train::Trainer trainer(cfg, cpu, data, sharding);
    TrainingRun run;
    for (int k = 0; k < steps; ++k)
        run.losses.push_back(trainer.step().loss);
    run.digest = trainer.paramDigest();
    return run;
}

TEST(train, LossFallsFromLnVocabToWellBelow) {
    const double lnVocab = std::log(89.0);
    for (PrecisionKind precision : {PrecisionKind::MixedBf16, PrecisionKind::Fp32}) {
        const TrainingRun run = train(20, 1, precision, false);
        EXPECT_NEAR(run.losses.front(), lnVocab, 0.15) << "an untrained GPT-2 init is near uniform";
        const double tail = (run.losses[17] + run.losses[18] + run.losses[19]) / 3.0;
        EXPECT_LT(tail, 0.8 * lnVocab) << "mean of the last three losses after 20 steps";
        for (double l : run.losses)
            EXPECT_TRUE(std::isfinite(l));
    }
}

TEST(train, SameSeedIsBitIdenticalAndCheckpointingChangesNothing) {
    const TrainingRun a = train(4, 9, PrecisionKind::MixedBf16, false);
    const TrainingRun b = train(4, 9, PrecisionKind::MixedBf16, false);
    const TrainingRun ckpt = train(4, 9, PrecisionKind::MixedBf16, true);
    const TrainingRun other = train(4, 10, PrecisionKind::MixedBf16, false);
    const TrainingRun fp32 = train(4, 9, PrecisionKind::Fp32, false);
    EXPECT_EQ(a.losses, b.losses);
    EXPECT_EQ(a.digest, b.digest);
    EXPECT_EQ(a.losses, ckpt.losses) << "recompute reproduces the forward exactly";
    EXPECT_EQ(a.digest, ckpt.digest);
    EXPECT_NE(a.digest, other.digest);
    EXPECT_NE(a.digest, fp32.digest) << "bf16 rounding must be visible in the weights";
    EXPECT_EQ(train::digestHex(0x00ab'cdef'0123'4567ull), "00abcdef01234567");
}

TEST(train, WorkingCopyIsTheRoundedMaster) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 1);
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    train::Trainer trainer(cfg, cpu, data);
    const std::vector<float> before = trainer.weights(1);
    trainer.step();
    const std::vector<float> master = trainer.weights(1);
    EXPECT_NE(before, master);
    const auto* bf16 = static_cast<const kernels::Bf16*>(trainer.sharding().params(1).data);
    for (std::size_t i = 0; i < master.size(); ++i)
        ASSERT_EQ(bf16[i], kernels::toBf16(master[i])) << i;
}

TEST(trainOptimizer, AdamWMatchesTheFormulas) {
    train::AdamWConfig cfg;
    cfg.learningRate = 0.1;
    cfg.beta1 = 0.9;
    cfg.beta2 = 0.99;
    cfg.eps = 1e-8;
    cfg.weightDecay = 0.5;
    std::vector<float> p = {1.0f, -2.0f}, m = {0.0f, 0.0f}, v = {0.0f, 0.0f};
    const std::vector<float> g = {0.5f, -0.25f};
    // The host scalars + the elementwise update the device ops run (kernels/cpu/adamw.h).
    auto update = [&](std::int64_t step, float gradScale, bool decay) {
        const kernels::AdamWScalars s =
            kernels::adamwScalars(cfg.learningRate, cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay,
                                  step, decay, gradScale);
        kernels::adamwUpdate(s, p.data(), g.data(), m.data(), v.data(), p.size());
    };
    update(1, 1.0f, true);
    // Step 1: m̂ = g, v̂ = g², so the Adam step is lr·sign(g) (up to ε); decay first.
    EXPECT_NEAR(static_cast<double>(p[0]), 1.0 * (1 - 0.05) - 0.1, 1e-6);
    EXPECT_NEAR(static_cast<double>(p[1]), -2.0 * (1 - 0.05) + 0.1, 1e-6);
    EXPECT_NEAR(static_cast<double>(m[0]), 0.05, 1e-7);
    EXPECT_NEAR(static_cast<double>(v[0]), 0.0025, 1e-8);
    // Step 2 without decay, gradient scaled by a clip coefficient of 0.5.
    const double m2 = 0.9 * 0.05 + 0.1 * 0.25, v2 = 0.99 * 0.0025 + 0.01 * 0.0625;
    const double expected =
        static_cast<double>(p[0]) - 0.1 * (m2 / (1 - 0.81)) / (std::sqrt(v2 / (1 - 0.9801)) + 1e-8);
    update(2, 0.5f, false);
    EXPECT_NEAR(static_cast<double>(p[0]), expected, 1e-6);
}

TEST(trainOptimizer, GlobalNormClipping) {
    EXPECT_NEAR(train::clipCoefficient(5.0, 1.0), 0.2, 1e-6);
    EXPECT_EQ(train::clipCoefficient(0.5, 1.0), 1.0);
    EXPECT_EQ(train::clipCoefficient(5.0, 0.0), 1.0) << "clipNorm ≤ 0 disables clipping";
    EXPECT_EQ(train::clipCoefficient(std::numeric_limits<double>::infinity(), 1.0), 1.0)
        << "a non-finite norm leaves the gradients alone";
}

// Records the order of strategy calls around a real one-rank DDP strategy: the seams where
// ZeRO/FSDP unshard, reshard and reduce-scatter.
class RecordingSharding : public strategy::Sharding {
public:
    RecordingSharding(const runconfig::ModelPreset& preset, Ledger& ledger, device::CpuDevice& cpu,
                      std::uint64_t seed)
        : self(comm::makeSelfCommunicator(&cpu)) {
        (void)ledger;
        strategy::StrategyConfig sc;
        sc.shape = preset.shape;
        sc.seed = seed;
        inner = strategy::makeSharding(sc, cpu, {self.get(), self.get(), nullptr});
    }
    std::vector<std::string> calls;
    std::string name() const override { return "recording"; }
    const std::vector<plan::UnitLayout>& units() const override { return inner->units(); }
    comm::Communicator& world() override { return inner->world(); }
    int dataRank() const override { return 0; }
    int dataRanks() const override { return 1; }
    comm::Communicator* pipeGroup() override { return nullptr; }
    std::int32_t firstUnit() const override { return 0; }
    std::int32_t endUnit() const override { return inner->endUnit(); }
    void beforeForward(std::int32_t u) override {
        calls.push_back("unshard " + nameOf(u));
        inner->beforeForward(u);
    }
    void afterForward(std::int32_t u) override {
        calls.push_back("reshard " + nameOf(u));
        inner->afterForward(u);
    }
    void beforeBackward(std::int32_t u) override {
        calls.push_back("unshard-bw " + nameOf(u));
        inner->beforeBackward(u);
    }
    strategy::ParamView params(std::int32_t u) const override { return inner->params(u); }
    void storeGradients(std::int32_t u, std::span<const float> g,
                        const strategy::MicroStep& m) override {
        EXPECT_EQ(g.size(), inner->units()[static_cast<std::size_t>(u)].elements());
        inner->storeGradients(u, g, m);
    }
    void afterInputGradients(std::int32_t u) override { inner->afterInputGradients(u); }
    void afterWeightGradients(std::int32_t u, const strategy::MicroStep& m) override {
        calls.push_back("reduce-scatter " + nameOf(u));
        inner->afterWeightGradients(u, m);
    }
    void endBackward(const strategy::MicroStep& m) override { inner->endBackward(m); }
    strategy::OwnedSlice owned(std::int32_t u) override {
        if (u == 0) calls.push_back("optimizer");
        return inner->owned(u);
    }
    strategy::OwnedSlice beginUpdate(std::int32_t u, strategy::OwnedSlice o) override {
        return inner->beginUpdate(u, o);
    }
    void endUpdate(std::int32_t u) override { inner->endUpdate(u); }
    void afterOptimizer() override {
        calls.push_back("all-gather");
        inner->afterOptimizer();
    }
    std::vector<std::vector<float>> gatherWeights() override { return inner->gatherWeights(); }
    void discardTransients() override { inner->discardTransients(); }

private:
    std::string nameOf(std::int32_t u) const {
        return inner->units()[static_cast<std::size_t>(u)].name();
    }
    std::unique_ptr<comm::Communicator> self;
    std::unique_ptr<strategy::Sharding> inner;
};

TEST(train, StrategyCallsComeAroundEveryUnitInFsdpOrderAndDoNotChangeTheMath) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    RecordingSharding hooks(preset, ledger, cpu, 3);
    const TrainingRun hooked = train(1, 3, PrecisionKind::MixedBf16, false, &hooks);
    const TrainingRun plain = train(1, 3, PrecisionKind::MixedBf16, false);
    EXPECT_EQ(hooked.digest, plain.digest);
    const std::vector<std::string> expected = {"unshard embedding",
                                               "reshard embedding",
                                               "unshard block0",
                                               "reshard block0",
                                               "unshard block1",
                                               "reshard block1",
                                               "unshard head",
                                               "reshard head",
                                               "unshard-bw head",
                                               "reduce-scatter head",
                                               "unshard-bw block1",
                                               "reduce-scatter block1",
                                               "unshard-bw block0",
                                               "reduce-scatter block0",
                                               "unshard-bw embedding",
                                               "reduce-scatter embedding",
                                               "optimizer",
                                               "all-gather"};
    EXPECT_EQ(hooks.calls, expected);
}

} // namespace
} // namespace shardscope
