// Strategies on one rank (self communicator) and their building blocks: the bucket planner
// shared with the theory engine, the policies, and the one-rank equivalence of every strategy
// (the multi-rank parity runs under mpirun: tests/mpi/strategy_mpi_test.cpp).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "model/data.h"
#include "predict/predict.h"
#include "runconfig/presets.h"
#include "strategy/policy.h"
#include "strategy/sharding.h"
#include "theory/buckets.h"
#include "theory/estimate.h"
#include "train/trainer.h"

namespace shardscope {
namespace {

using theory::Strategy;

TEST(strategyBuckets, PiecesFillBucketsInOrderAndSplitLargeUnits) {
    const std::vector<theory::UnitRange> ranges = {{3, 5}, {2, 12}, {1, 1}, {0, 4}};
    const auto plan = theory::planBuckets(ranges, 8);
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].count, 8u);
    ASSERT_EQ(plan[0].pieces.size(), 2u);
    EXPECT_EQ(plan[0].pieces[1].unit, 2);
    EXPECT_EQ(plan[0].pieces[1].offset, 0u);
    EXPECT_EQ(plan[0].pieces[1].length, 3u);
    EXPECT_EQ(plan[1].count, 8u);
    EXPECT_EQ(plan[1].pieces[0].offset, 3u);
    EXPECT_EQ(plan[1].pieces[0].length, 8u);
    EXPECT_EQ(plan[2].count, 6u); // 1 of unit 2, 1 of unit 1, 4 of unit 0
    std::uint64_t total = 0;
    for (const auto& b : plan) total += b.count;
    EXPECT_EQ(total, 22u);
    EXPECT_EQ(theory::bucketCapacity(25u << 20, 2, 4), (25u << 20) / 8);
    EXPECT_EQ(theory::bucketCapacity(3, 2, 4), 1u) << "at least one element";
}

TEST(strategyPolicy, EachStrategyShardsWhatTheZeroPaperSays) {
    const theory::Knobs k;
    EXPECT_FALSE(strategy::policyFor(Strategy::Ddp, k).shardOptimizer);
    const auto z1 = strategy::policyFor(Strategy::Zero1, k);
    EXPECT_TRUE(z1.shardOptimizer && !z1.shardGrads && !z1.shardParams);
    const auto z2 = strategy::policyFor(Strategy::Zero2, k);
    EXPECT_TRUE(z2.shardGrads && !z2.shardParams && z2.reduceEveryMicroStep);
    const auto z3 = strategy::policyFor(Strategy::Zero3, k);
    EXPECT_TRUE(z3.shardParams && z3.reshardAfterForward);
    EXPECT_EQ(z3.gatherWindow, 2);
    theory::Knobs fsdp;
    fsdp.prefetchDepth = 4;
    fsdp.maxInflightAllGathers = 3;
    EXPECT_EQ(strategy::policyFor(Strategy::FsdpFullShard, fsdp).gatherWindow, 3) << "limit_all_gathers";
    EXPECT_EQ(strategy::policyFor(Strategy::Zero3, fsdp).gatherWindow, 5);
    EXPECT_FALSE(strategy::policyFor(Strategy::FsdpShardGradOp, k).reshardAfterForward);
    fsdp.noSync = true;
    fsdp.gradAccumSteps = 2;
    EXPECT_FALSE(strategy::policyFor(Strategy::FsdpFullShard, fsdp).reduceEveryMicroStep);
    EXPECT_TRUE(strategy::policyFor(Strategy::Zero3, fsdp).reduceEveryMicroStep) << "ZeRO-3 has no no_sync";
}

struct OneRank {
    std::vector<double> losses;
    std::uint64_t digest = 0;
    ByteTable states;
    std::uint64_t peak = 0;
    std::uint64_t predictedPeak = 0;
    ByteTable predictedStates;
};

OneRank oneRank(Strategy s, theory::Knobs knobs = {}) {
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
    auto sharding = strategy::makeSharding(sc, cpu, {self.get(), self.get(), s == Strategy::FsdpHybridShard ? self.get() : nullptr});
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
    theory::Knobs hybrid;
    hybrid.hybridGroupSize = 1;
    for (Strategy s : theory::allStrategies()) {
        const OneRank r = oneRank(s, s == Strategy::FsdpHybridShard ? hybrid : theory::Knobs{});
        EXPECT_EQ(r.losses, ddp.losses) << theory::strategyName(s);
        EXPECT_EQ(r.digest, ddp.digest) << theory::strategyName(s);
        EXPECT_EQ(r.states, r.predictedStates) << theory::strategyName(s);
        EXPECT_EQ(r.peak, r.predictedPeak) << theory::strategyName(s);
    }
    theory::Knobs accum;
    accum.gradAccumSteps = 2;
    accum.noSync = true;
    const OneRank a = oneRank(Strategy::FsdpFullShard, accum);
    EXPECT_EQ(a.peak, a.predictedPeak) << "no_sync keeps every full gradient";
    EXPECT_EQ(a.states, a.predictedStates);
}

} // namespace
} // namespace shardscope
