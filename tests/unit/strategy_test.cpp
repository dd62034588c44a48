// Strategies on one rank (self communicator): the one-rank equivalence of every strategy (the
// multi-rank parity runs under mpirun: tests/mpi/strategy_mpi_test.cpp; the bucket planner and
// the policies they share with the theory engine are tested in plan_test.cpp).
#include "comm/communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "model/data.h"
#include "predict/predict.h"
#include "runconfig/presets.h"
#include "strategy/sharding.h"
#include "theory/estimate.h"
#include "train/trainer.h"

#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace shardscope {
namespace {

using plan::Strategy;

struct OneRank {
    std::vector<double> losses;
    std::uint64_t digest = 0;
    ByteTable states;
    std::uint64_t peak = 0;
    std::uint64_t predictedPeak = 0;
    ByteTable predictedStates;
};

OneRank oneRank(Strategy s, plan::Knobs knobs = {}) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    auto self = comm::makeSelfCommunicator(&cpu);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 2);
    strategy::StrategyConfig sc;
    sc.strategy = s;
    sc.knobs = knobs;
    sc.shape = preset.shape;
    sc.seed = 2;
    auto sharding = strategy::makeSharding(
        sc, cpu, {self.get(), self.get(), s == Strategy::FsdpHybridShard ? self.get() : nullptr});
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    cfg.optimizer.learningRate = preset.learningRate;
    cfg.seed = 2;
    cfg.gradAccumSteps = knobs.gradAccumSteps;
    train::Trainer trainer(cfg, cpu, data, sharding.get());
    OneRank out;
    for (int k = 0; k < 2; ++k) {
        const auto r = trainer.step();
        if (k == 0) out.states = r.modelStates;
        out.losses.push_back(r.loss);
    }
    out.digest = trainer.paramDigest();
    out.peak = ledger.peakBytes();
    theory::Scenario scenario;
    scenario.shape = preset.shape;
    scenario.strategy = s;
    scenario.ranks = 1;
    scenario.knobs = knobs;
    scenario.activations = {preset.microBatch, false};
    out.predictedPeak = predict::predictPeak(scenario).peakBytes;
    out.predictedStates = theory::modelStates(scenario).perRank;
    return out;
}

TEST(strategyOneRank, EveryStrategyIsDdpOnOneRankAndMatchesTheTheory) {
    const OneRank ddp = oneRank(Strategy::Ddp);
    plan::Knobs hybrid;
    hybrid.hybridGroupSize = 1;
    for (Strategy s : plan::allStrategies()) {
        const OneRank r = oneRank(s, s == Strategy::FsdpHybridShard ? hybrid : plan::Knobs{});
        EXPECT_EQ(r.losses, ddp.losses) << plan::strategyName(s);
        EXPECT_EQ(r.digest, ddp.digest) << plan::strategyName(s);
        EXPECT_EQ(r.states, r.predictedStates) << plan::strategyName(s);
        EXPECT_EQ(r.peak, r.predictedPeak) << plan::strategyName(s);
    }
    plan::Knobs accum;
    accum.gradAccumSteps = 2;
    accum.noSync = true;
    const OneRank a = oneRank(Strategy::FsdpFullShard, accum);
    EXPECT_EQ(a.peak, a.predictedPeak) << "no_sync keeps every full gradient";
    EXPECT_EQ(a.states, a.predictedStates);
}

} // namespace
} // namespace shardscope
