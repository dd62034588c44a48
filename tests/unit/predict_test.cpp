// The dry run (predict/predict.h) against theory's closed forms and, while it exists, against
// theory::predictPeak's hand replay of the step: for every preset, strategy and FSDP flavour,
// rank counts 1..8 and the knobs that move the peak.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "runconfig/presets.h"
#include "predict/predict.h"
#include "plan/buckets.h"
#include "theory/estimate.h"
#include "theory/shape.h"

namespace shardscope {
namespace {

using theory::Scenario;
using theory::Strategy;

Scenario scenario(const runconfig::ModelPreset& p, Strategy s, int ranks) {
    Scenario sc;
    sc.shape = p.shape;
    sc.strategy = s;
    sc.ranks = ranks;
    sc.activations.microBatch = p.microBatch;
    if (s == Strategy::FsdpHybridShard) sc.knobs.hybridGroupSize = ranks % 2 == 0 ? ranks / 2 : ranks;
    if (s == Strategy::FsdpShardGradOp) sc.knobs.reshardAfterForward = false;
    return sc;
}

std::string label(const Scenario& s) {
    const auto& k = s.knobs;
    return std::string(theory::strategyName(s.strategy)) + " N=" + std::to_string(s.ranks) +
           " L=" + std::to_string(s.shape->layers) + " d=" + std::to_string(s.shape->dModel) +
           " prec=" + std::string(theory::precisionName(s.precision.kind)) +
           " mb=" + std::to_string(s.activations.microBatch) + " ckpt=" + std::to_string(s.activations.checkpointing) +
           " prefetch=" + std::to_string(k.prefetchDepth) + " inflight=" + std::to_string(k.maxInflightAllGathers) +
           " persist=" + std::to_string(k.persistenceThresholdParams) + " rb=" + std::to_string(k.reduceBucketBytes) +
           " gb=" + std::to_string(k.allGatherBucketBytes) + " accum=" + std::to_string(k.gradAccumSteps) +
           " nosync=" + std::to_string(k.noSync) + " det=" + std::to_string(k.deterministicReductions) +
           " shared=" + std::to_string(k.sharedDeviceCollectives) + " raf=" + std::to_string(k.reshardAfterForward) +
           " hybrid=" + std::to_string(k.hybridGroupSize);
}

// The dry run's peak equals the hand replay's, cell by cell, and its model states equal the
// closed form's.
void expectSame(const Scenario& s) {
    SCOPED_TRACE(label(s));
    const theory::PeakPrediction replay = theory::predictPeak(s);
    const theory::PeakPrediction dry = predict::predictPeak(s);
    EXPECT_EQ(dry.peakBytes, replay.peakBytes);
    EXPECT_EQ(dry.atPeak, replay.atPeak);
    EXPECT_EQ(dry.categoryPeaks, replay.categoryPeaks);
    EXPECT_EQ(dry.peakPhase, replay.peakPhase);
    EXPECT_EQ(dry.gatheredBytes, replay.gatheredBytes);
    EXPECT_EQ(dry.gradFullBytes, replay.gradFullBytes);
    EXPECT_EQ(dry.bucketBytes, replay.bucketBytes);
    EXPECT_EQ(dry.workspaceBytes, replay.workspaceBytes);
    EXPECT_EQ(dry.activationBytes, replay.activationBytes);
    EXPECT_EQ(dry.paddingBytes, replay.paddingBytes);
    EXPECT_EQ(dry.notes.size(), replay.notes.size());
    EXPECT_EQ(dry.modelStates, theory::modelStates(s).perRank);
}

void forEachStrategy(const std::function<void(Strategy)>& f) {
    for (Strategy s : theory::allStrategies()) f(s);
}

TEST(predictDryRun, EveryPresetStrategyAndRankCount) {
    for (const runconfig::ModelPreset& p : runconfig::modelPresets())
        forEachStrategy([&](Strategy s) {
            for (int n = 1; n <= 8; ++n) expectSame(scenario(p, s, n));
        });
}

TEST(predictDryRun, Knobs) {
    const runconfig::ModelPreset tiny = runconfig::modelPreset("tiny");
    const runconfig::ModelPreset small = runconfig::modelPreset("small");
    std::vector<std::function<void(Scenario&)>> knobs = {
        [](Scenario& s) { s.knobs.prefetchDepth = 0; },
        [](Scenario& s) { s.knobs.prefetchDepth = 2; },
        [](Scenario& s) { s.knobs.prefetchDepth = 3; s.knobs.maxInflightAllGathers = 1; },
        [](Scenario& s) { s.knobs.prefetchDepth = 3; s.knobs.maxInflightAllGathers = 4; },
        [](Scenario& s) { s.knobs.persistenceThresholdParams = 3000; },
        [](Scenario& s) { s.knobs.persistenceThresholdParams = 200000; },
        [](Scenario& s) { s.knobs.reduceBucketBytes = 4096; },
        [](Scenario& s) { s.knobs.reduceBucketBytes = 100000; s.knobs.allGatherBucketBytes = 3000; },
        [](Scenario& s) { s.knobs.allGatherBucketBytes = 1 << 20; },
        [](Scenario& s) { s.activations.checkpointing = true; },
        [](Scenario& s) { s.precision.kind = theory::PrecisionKind::Fp32; },
        [](Scenario& s) { s.precision.kind = theory::PrecisionKind::MixedFp16; },
        [](Scenario& s) { s.activations.microBatch = 1; },
        [](Scenario& s) { s.activations.microBatch = 3; },
        [](Scenario& s) { s.knobs.gradAccumSteps = 2; },
        [](Scenario& s) { s.knobs.gradAccumSteps = 3; s.knobs.noSync = true; },
        [](Scenario& s) { s.knobs.deterministicReductions = true; },
        [](Scenario& s) { s.knobs.deterministicReductions = true; s.knobs.reduceBucketBytes = 5000; },
        [](Scenario& s) { s.knobs.sharedDeviceCollectives = true; },
        [](Scenario& s) { s.knobs.sharedDeviceCollectives = true; s.knobs.gradAccumSteps = 2; },
        [](Scenario& s) { s.knobs.reshardAfterForward = false; },
        [](Scenario& s) {
            s.activations.checkpointing = true;
            s.knobs.deterministicReductions = true;
            s.knobs.gradAccumSteps = 2;
            s.knobs.prefetchDepth = 2;
            s.precision.kind = theory::PrecisionKind::Fp32;
        },
    };
    for (const runconfig::ModelPreset* p : {&tiny, &small})
        for (const auto& knob : knobs)
            forEachStrategy([&](Strategy st) {
                for (int n : {1, 2, 3, 4, 8}) {
                    Scenario s = scenario(*p, st, n);
                    knob(s);
                    if (st == Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
                    expectSame(s);
                }
            });
}

TEST(predictDryRun, HybridGroups) {
    const runconfig::ModelPreset tiny = runconfig::modelPreset("tiny");
    for (int n : {2, 4, 6, 8})
        for (int g = 1; g <= n; ++g) {
            if (n % g != 0) continue;
            Scenario s = scenario(tiny, Strategy::FsdpHybridShard, n);
            s.knobs.hybridGroupSize = g;
            expectSame(s);
            s.knobs.deterministicReductions = true;
            expectSame(s);
            s.knobs.sharedDeviceCollectives = true;
            expectSame(s);
        }
}

// The communication plan the dry run records is the one the strategy ran: its totals are the
// communicator's counters, and every collective names its group.
TEST(predictDryRun, RecordsTheCollectives) {
    Scenario s = scenario(runconfig::modelPreset("small"), Strategy::Zero3, 4);
    const predict::StepPrediction step = predict::predictStep(s);
    ASSERT_FALSE(step.collectives.empty());
    std::uint64_t calls = 0;
    for (auto c : step.comm.calls) calls += c;
    EXPECT_EQ(step.collectives.size(), calls);
    std::uint64_t gathered = 0;
    for (const auto& c : step.collectives) {
        EXPECT_EQ(c.peers, 4);
        if (c.op == CollectiveOp::AllGather) gathered += c.bytes;
    }
    EXPECT_EQ(gathered, step.comm.payloadBytes[static_cast<std::size_t>(CollectiveOp::AllGather)]);
}

// The bucket plan the dry run records is plan/buckets.h's cut of the units: DDP all-reduces
// whole units, ZeRO-1/2 reduce-scatter and all-gather shards, in bucket order.
std::vector<std::uint64_t> payloads(const predict::StepPrediction& p, CollectiveOp op) {
    std::vector<std::uint64_t> out;
    for (const auto& c : p.collectives)
        if (c.op == op) out.push_back(c.bytes);
    return out;
}

std::vector<std::uint64_t> planned(const Scenario& s, bool backward, bool shards, std::uint64_t bucketBytes) {
    const auto units = theory::unitParams(*s.shape);
    const auto n = static_cast<std::uint64_t>(s.ranks);
    std::vector<plan::UnitRange> ranges;
    for (std::size_t i = 0; i < units.size(); ++i) {
        const std::size_t u = backward ? units.size() - 1 - i : i;
        const std::uint64_t length = shards ? theory::paddedElements(units[u].params, n) / n : units[u].params;
        ranges.push_back({static_cast<std::int32_t>(u), length});
    }
    const std::uint64_t eb = 2; // bf16 params and grads
    std::vector<std::uint64_t> out;
    for (const plan::Bucket& b : plan::planBuckets(ranges, plan::bucketCapacity(bucketBytes, eb, shards ? n : 1)))
        out.push_back(b.count * eb * (shards ? n : 1));
    return out;
}

TEST(predictDryRun, BucketPlanIsTheTheorysCut) {
    for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{100000}, std::uint64_t{25} << 20}) {
        Scenario s = scenario(runconfig::modelPreset("small"), Strategy::Ddp, 4);
        s.knobs.reduceBucketBytes = bytes;
        s.knobs.allGatherBucketBytes = bytes;
        ASSERT_FALSE(planned(s, true, false, bytes).empty());
        EXPECT_EQ(payloads(predict::predictStep(s), CollectiveOp::AllReduce), planned(s, true, false, bytes)) << bytes;
        for (Strategy st : {Strategy::Zero1, Strategy::Zero2}) {
            s.strategy = st;
            const predict::StepPrediction p = predict::predictStep(s);
            EXPECT_EQ(payloads(p, CollectiveOp::ReduceScatter), planned(s, true, true, bytes)) << bytes;
            EXPECT_EQ(payloads(p, CollectiveOp::AllGather), planned(s, false, true, bytes)) << bytes;
        }
    }
}

// The Calculator's scale: a 7B GPT at N = 64 runs without any memory, and its model states are
// theory's closed form.
TEST(predictDryRun, SevenBillionAtSixtyFourRanks) {
    theory::GptShape shape;
    shape.layers = 32;
    shape.dModel = 4096;
    shape.heads = 32;
    shape.vocab = 50257;
    shape.seqLen = 2048;
    for (Strategy st : {Strategy::Ddp, Strategy::Zero3, Strategy::FsdpFullShard}) {
        Scenario s;
        s.shape = shape;
        s.strategy = st;
        s.ranks = 64;
        const auto t0 = std::chrono::steady_clock::now();
        const predict::StepPrediction step = predict::predictStep(s);
        const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::cout << theory::strategyName(st) << " 7B, N=64: dry run " << ms << " ms, peak "
                  << step.peakBytes << " B\n";
        EXPECT_EQ(step.modelStates, theory::modelStates(s).perRank);
        EXPECT_GT(step.peakBytes, step.modelStates.tier(Tier::Device));
    }
}

// The trainer has neither offload nor a custom optimizer: those persistent cells are restated.
TEST(predictDryRun, OffloadAndCustomOptimizerBytes) {
    for (const char* preset : {"tiny", "small"})
        forEachStrategy([&](Strategy st) {
            for (int n : {1, 2, 4}) {
                for (std::uint32_t k : {6u, 12u, 2u, 16u}) {
                    Scenario s = scenario(runconfig::modelPreset(preset), st, n);
                    s.precision = {theory::PrecisionKind::Custom, k};
                    expectSame(s);
                }
                for (Tier opt : {Tier::Device, Tier::Host, Tier::Nvme})
                    for (Tier param : {Tier::Device, Tier::Host}) {
                        Scenario s = scenario(runconfig::modelPreset(preset), st, n);
                        const bool shardsParams = st == Strategy::Zero3 || st == Strategy::FsdpFullShard ||
                                                  st == Strategy::FsdpHybridShard;
                        if (param != Tier::Device && !shardsParams) continue;
                        s.offload.optimizer = opt;
                        s.offload.param = param;
                        expectSame(s);
                    }
            }
        });
}

TEST(predictDryRun, NeedsAShape) {
    Scenario s;
    s.params = 1000;
    EXPECT_ANY_THROW(predict::predictStep(s));
}

} // namespace
} // namespace shardscope
