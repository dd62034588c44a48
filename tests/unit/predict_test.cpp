// The dry run (predict/predict.h) against theory's closed forms and the facts of the plan
// (bucket cuts, gathered windows, activation breakdown): for every preset, strategy and FSDP
// flavour, rank counts 1..8 and the knobs that move the peak.
#include "plan/buckets.h"
#include "plan/policy.h"
#include "plan/shape.h"
#include "predict/predict.h"
#include "report/prediction.h"
#include "runconfig/presets.h"
#include "theory/activations.h"
#include "theory/estimate.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <string>
#include <vector>

namespace shardscope {
namespace {

using plan::Strategy;
using theory::Scenario;

Scenario scenario(const runconfig::ModelPreset& p, Strategy s, int ranks) {
    Scenario sc;
    sc.shape = p.shape;
    sc.strategy = s;
    sc.ranks = ranks;
    sc.activations.microBatch = p.microBatch;
    if (s == Strategy::FsdpHybridShard)
        sc.knobs.hybridGroupSize = ranks % 2 == 0 ? ranks / 2 : ranks;
    if (s == Strategy::FsdpShardGradOp) sc.knobs.reshardAfterForward = false;
    return sc;
}

std::string label(const Scenario& s) {
    const auto& k = s.knobs;
    return std::string(plan::strategyName(s.strategy)) + " N=" + std::to_string(s.ranks) +
           " L=" + std::to_string(s.shape->layers) + " d=" + std::to_string(s.shape->dModel) +
           " prec=" + std::string(plan::precisionName(s.precision.kind)) +
           " mb=" + std::to_string(s.activations.microBatch) +
           " ckpt=" + std::to_string(s.activations.checkpointing) +
           " prefetch=" + std::to_string(k.prefetchDepth) +
           " inflight=" + std::to_string(k.maxInflightAllGathers) +
           " persist=" + std::to_string(k.persistenceThresholdParams) +
           " rb=" + std::to_string(k.reduceBucketBytes) +
           " gb=" + std::to_string(k.allGatherBucketBytes) +
           " accum=" + std::to_string(k.gradAccumSteps) + " nosync=" + std::to_string(k.noSync) +
           " det=" + std::to_string(k.deterministicReductions) +
           " shared=" + std::to_string(k.sharedDeviceCollectives) +
           " raf=" + std::to_string(k.reshardAfterForward) +
           " hybrid=" + std::to_string(k.hybridGroupSize);
}

// The largest unit's padded elements (the unit a gathered pass or a transient gradient holds).
std::uint64_t largestPadded(const Scenario& s) {
    const auto shards = static_cast<std::uint64_t>(theory::shardCount(s));
    std::uint64_t largest = 0;
    for (const auto& u : plan::unitParams(*s.shape))
        largest = std::max(largest, plan::paddedElements(u.params, shards));
    return largest;
}

std::uint64_t paddedTotal(const Scenario& s) {
    const auto shards = static_cast<std::uint64_t>(theory::shardCount(s));
    std::uint64_t total = 0;
    for (const auto& u : plan::unitParams(*s.shape))
        total += plan::paddedElements(u.params, shards);
    return total;
}

// The reduce buckets plan/buckets.h cuts for a bucketed strategy: the largest one's payload.
std::uint64_t largestReduceBucket(const Scenario& s, const plan::Policy& policy) {
    const auto units = plan::unitParams(*s.shape);
    const auto shards =
        static_cast<std::uint64_t>(policy.shardOptimizer ? theory::shardCount(s) : 1);
    const std::uint64_t g = s.precision.gradBytes();
    std::vector<plan::UnitRange> ranges;
    for (std::size_t i = units.size(); i-- > 0;)
        ranges.push_back(
            {static_cast<std::int32_t>(i), plan::paddedElements(units[i].params, shards) / shards});
    std::uint64_t largest = 0;
    for (const plan::Bucket& b :
         plan::planBuckets(ranges, plan::bucketCapacity(s.knobs.reduceBucketBytes, g, shards)))
        largest = std::max(largest, b.count * g * shards);
    return largest;
}

// The dry run against facts that do not come from running the step: theory's closed-form model
// states and padding, the activation breakdown (theory/activations.h, the model's contract), the
// gathered window's bounds, the transient gradient and bucket sizes, and the ledger's own
// arithmetic (the peak is what is live at one moment, never more than every cell at its maximum).
void expectConsistent(const Scenario& s) {
    SCOPED_TRACE(label(s));
    const theory::PeakPrediction dry = predict::predictPeak(s);
    const theory::ModelStates states = theory::modelStates(s);
    const plan::Policy policy = plan::policyFor(s.strategy, s.knobs);
    const std::uint64_t g = s.precision.gradBytes();

    EXPECT_EQ(dry.modelStates, states.perRank);
    EXPECT_EQ(dry.paddingBytes, states.paddingBytes);
    // Persistent states are the same at every moment of the step (the peak is the device's).
    for (Category c : {Category::ParamShard, Category::GradShard, Category::MasterFp32,
                       Category::AdamM, Category::AdamV}) {
        EXPECT_EQ(dry.categoryPeaks.at(c, Tier::Device), states.perRank.at(c, Tier::Device))
            << categoryName(c);
        EXPECT_EQ(dry.atPeak.at(c, Tier::Device), states.perRank.at(c, Tier::Device))
            << categoryName(c);
    }

    const theory::ActivationBreakdown acts = theory::activationBreakdown(*s.shape, s.activations);
    EXPECT_EQ(dry.activationBytes, acts.peakBytes);
    EXPECT_EQ(dry.categoryPeaks.category(Category::Activation), acts.peakBytes);

    EXPECT_EQ(dry.peakBytes, dry.atPeak.tier(Tier::Device));
    std::uint64_t everyMaximum = 0;
    for (Category c : kAllCategories) {
        EXPECT_LE(dry.atPeak.at(c, Tier::Device), dry.categoryPeaks.at(c, Tier::Device))
            << categoryName(c);
        everyMaximum += dry.categoryPeaks.at(c, Tier::Device);
    }
    EXPECT_LE(dry.peakBytes, everyMaximum);
    EXPECT_GT(dry.peakBytes, states.perRank.tier(Tier::Device));
    EXPECT_GT(dry.workspaceBytes, 0u);
    EXPECT_FALSE(dry.peakPhase.empty());

    // Gathered params: at least the largest unit, at most the largest unit × the window.
    if (!policy.shardParams) {
        EXPECT_EQ(dry.gatheredBytes, 0u);
    } else if (policy.reshardAfterForward && policy.persistenceThreshold == 0) {
        Scenario one = s;
        one.knobs.prefetchDepth = 0;
        EXPECT_GE(dry.gatheredBytes, theory::gatheredBytesBound(one));
        EXPECT_LE(dry.gatheredBytes, theory::gatheredBytesBound(s));
    }
    // Transient full gradients: none where grads are a full model state; else at least one unit's.
    if (!policy.shardGrads)
        EXPECT_EQ(dry.gradFullBytes, 0u);
    else {
        EXPECT_GE(dry.gradFullBytes, largestPadded(s) * g);
        EXPECT_LE(dry.gradFullBytes, paddedTotal(s) * g);
    }
    // Buckets: at least the largest reduce bucket of plan/buckets.h's cut; none without buckets
    // or scratch (offloaded shards cross the tiers through device comm buffers: the reduced
    // gradient before it goes to the host, a host param shard before its all-gather).
    const bool offloaded = s.offload.optimizer != Tier::Device || s.offload.param != Tier::Device;
    if (policy.bucketedReduce && s.ranks > 1) {
        EXPECT_GE(dry.bucketBytes, largestReduceBucket(s, policy));
    } else if (!s.knobs.deterministicReductions && !s.knobs.sharedDeviceCollectives &&
               s.knobs.gradAccumSteps == 1 && policy.persistenceThreshold == 0 && !offloaded) {
        EXPECT_EQ(dry.bucketBytes, 0u);
    }

    const auto has = [&](const std::string& start) {
        for (const std::string& n : dry.notes)
            if (n.rfind(start, 0) == 0) return true;
        return false;
    };
    EXPECT_TRUE(has("dry run of this implementation's step: the peak is at the " + dry.peakPhase));
    EXPECT_EQ(has("gathered params at most"), policy.reshardAfterForward);
}

void forEachStrategy(const std::function<void(Strategy)>& f) {
    for (Strategy s : plan::allStrategies())
        f(s);
}

TEST(predictDryRun, EveryPresetStrategyAndRankCount) {
    for (const runconfig::ModelPreset& p : runconfig::modelPresets())
        forEachStrategy([&](Strategy s) {
            for (int n = 1; n <= 8; ++n)
                expectConsistent(scenario(p, s, n));
        });
}

TEST(predictDryRun, Knobs) {
    const runconfig::ModelPreset tiny = runconfig::modelPreset("tiny");
    const runconfig::ModelPreset small = runconfig::modelPreset("small");
    std::vector<std::function<void(Scenario&)>> knobs = {
        [](Scenario& s) { s.knobs.prefetchDepth = 0; },
        [](Scenario& s) { s.knobs.prefetchDepth = 2; },
        [](Scenario& s) {
            s.knobs.prefetchDepth = 3;
            s.knobs.maxInflightAllGathers = 1;
        },
        [](Scenario& s) {
            s.knobs.prefetchDepth = 3;
            s.knobs.maxInflightAllGathers = 4;
        },
        [](Scenario& s) { s.knobs.persistenceThresholdParams = 3000; },
        [](Scenario& s) { s.knobs.persistenceThresholdParams = 200000; },
        [](Scenario& s) { s.knobs.reduceBucketBytes = 4096; },
        [](Scenario& s) {
            s.knobs.reduceBucketBytes = 100000;
            s.knobs.allGatherBucketBytes = 3000;
        },
        [](Scenario& s) { s.knobs.allGatherBucketBytes = 1 << 20; },
        [](Scenario& s) { s.activations.checkpointing = true; },
        [](Scenario& s) { s.precision.kind = plan::PrecisionKind::Fp32; },
        [](Scenario& s) { s.precision.kind = plan::PrecisionKind::MixedFp16; },
        [](Scenario& s) { s.activations.microBatch = 1; },
        [](Scenario& s) { s.activations.microBatch = 3; },
        [](Scenario& s) { s.knobs.gradAccumSteps = 2; },
        [](Scenario& s) {
            s.knobs.gradAccumSteps = 3;
            s.knobs.noSync = true;
        },
        [](Scenario& s) { s.knobs.deterministicReductions = true; },
        [](Scenario& s) {
            s.knobs.deterministicReductions = true;
            s.knobs.reduceBucketBytes = 5000;
        },
        [](Scenario& s) { s.knobs.sharedDeviceCollectives = true; },
        [](Scenario& s) {
            s.knobs.sharedDeviceCollectives = true;
            s.knobs.gradAccumSteps = 2;
        },
        [](Scenario& s) { s.knobs.reshardAfterForward = false; },
        [](Scenario& s) {
            s.activations.checkpointing = true;
            s.knobs.deterministicReductions = true;
            s.knobs.gradAccumSteps = 2;
            s.knobs.prefetchDepth = 2;
            s.precision.kind = plan::PrecisionKind::Fp32;
        },
    };
    for (const runconfig::ModelPreset* p : {&tiny, &small})
        for (const auto& knob : knobs)
            forEachStrategy([&](Strategy st) {
                for (int n : {1, 2, 3, 4, 8}) {
                    Scenario s = scenario(*p, st, n);
                    knob(s);
                    if (st == Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
                    expectConsistent(s);
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
            expectConsistent(s);
            s.knobs.deterministicReductions = true;
            expectConsistent(s);
            s.knobs.sharedDeviceCollectives = true;
            expectConsistent(s);
        }
}

// The communication plan the dry run records is the one the strategy ran: its totals are the
// communicator's counters, and every collective names its group.
TEST(predictDryRun, RecordsTheCollectives) {
    Scenario s = scenario(runconfig::modelPreset("small"), Strategy::Zero3, 4);
    const predict::StepPrediction step = predict::predictStep(s);
    ASSERT_FALSE(step.collectives.empty());
    std::uint64_t calls = 0;
    for (auto c : step.comm.calls)
        calls += c;
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

std::vector<std::uint64_t> planned(const Scenario& s, bool backward, bool shards,
                                   std::uint64_t bucketBytes) {
    const auto units = plan::unitParams(*s.shape);
    const auto n = static_cast<std::uint64_t>(s.ranks);
    std::vector<plan::UnitRange> ranges;
    for (std::size_t i = 0; i < units.size(); ++i) {
        const std::size_t u = backward ? units.size() - 1 - i : i;
        const std::uint64_t length =
            shards ? plan::paddedElements(units[u].params, n) / n : units[u].params;
        ranges.push_back({static_cast<std::int32_t>(u), length});
    }
    const std::uint64_t eb = 2; // bf16 params and grads
    std::vector<std::uint64_t> out;
    for (const plan::Bucket& b :
         plan::planBuckets(ranges, plan::bucketCapacity(bucketBytes, eb, shards ? n : 1)))
        out.push_back(b.count * eb * (shards ? n : 1));
    return out;
}

TEST(predictDryRun, BucketPlanIsTheTheorysCut) {
    for (std::uint64_t bytes :
         {std::uint64_t{4096}, std::uint64_t{100000}, std::uint64_t{25} << 20}) {
        Scenario s = scenario(runconfig::modelPreset("small"), Strategy::Ddp, 4);
        s.knobs.reduceBucketBytes = bytes;
        s.knobs.allGatherBucketBytes = bytes;
        ASSERT_FALSE(planned(s, true, false, bytes).empty());
        EXPECT_EQ(payloads(predict::predictStep(s), CollectiveOp::AllReduce),
                  planned(s, true, false, bytes))
            << bytes;
        for (Strategy st : {Strategy::Zero1, Strategy::Zero2}) {
            s.strategy = st;
            const predict::StepPrediction p = predict::predictStep(s);
            EXPECT_EQ(payloads(p, CollectiveOp::ReduceScatter), planned(s, true, true, bytes))
                << bytes;
            EXPECT_EQ(payloads(p, CollectiveOp::AllGather), planned(s, false, true, bytes))
                << bytes;
        }
    }
}

// The Calculator's scale: a 7B GPT at N = 64 runs without any memory, and its model states are
// theory's closed form.
TEST(predictDryRun, SevenBillionAtSixtyFourRanks) {
    plan::GptShape shape;
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
        const auto ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        std::cout << plan::strategyName(st) << " 7B, N=64: dry run " << ms << " ms, peak "
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
                    s.precision = {plan::PrecisionKind::Custom, k};
                    expectConsistent(s);
                }
                for (Tier opt : {Tier::Device, Tier::Host, Tier::Nvme})
                    for (Tier param : {Tier::Device, Tier::Host, Tier::Nvme}) {
                        Scenario s = scenario(runconfig::modelPreset(preset), st, n);
                        const bool shardsParams = st == Strategy::Zero3 ||
                                                  st == Strategy::FsdpFullShard ||
                                                  st == Strategy::FsdpHybridShard;
                        if (param != Tier::Device && !shardsParams) continue;
                        s.offload.optimizer = opt;
                        s.offload.param = param;
                        expectConsistent(s);
                    }
            }
        });
}

// The peak is what is live at one moment (the ledger's peak of a real run, tests/mpi/strategy_*),
// not a sum of worst cases: the terms are each category's maximum over the step.
TEST(predictDryRun, PeakSumsWhatIsLiveAtOneMoment) {
    Scenario s;
    s.shape = plan::GptShape{4, 64, 4, 1000, 128};
    s.strategy = Strategy::Zero3;
    s.ranks = 8;
    s.activations.microBatch = 2;
    const theory::PeakPrediction peak = predict::predictPeak(s);
    const theory::ModelStates ms = theory::modelStates(s);
    EXPECT_EQ(peak.modelStates, ms.perRank);
    EXPECT_EQ(peak.activationBytes, theory::activationBreakdown(*s.shape, s.activations).peakBytes);
    const std::uint64_t largestPadded =
        72192; // embedding 1000·64 + 128·64, already a multiple of 8
    const std::uint64_t blockPadded = 49984; // 12·64² + 13·64, a multiple of 8
    // 1 + prefetch 1 consecutive units at most: the embedding and block0, ≤ largest × 2.
    EXPECT_EQ(peak.gatheredBytes, (largestPadded + blockPadded) * 2);
    EXPECT_LE(peak.gatheredBytes, largestPadded * 2 * 2);
    EXPECT_EQ(peak.gradFullBytes, largestPadded * 2);
    EXPECT_EQ(peak.bucketBytes, 0u);
    EXPECT_GT(peak.workspaceBytes, 0u) << "widened fp32 params and gradients, backward scratch";
    EXPECT_EQ(peak.peakBytes, peak.atPeak.tier(Tier::Device));
    EXPECT_LE(peak.atPeak.category(Category::Activation), peak.activationBytes);
    EXPECT_GT(peak.peakBytes, ms.perRank.tier(Tier::Device) + peak.activationBytes);
    EXPECT_LE(peak.peakBytes, ms.perRank.tier(Tier::Device) + peak.activationBytes +
                                  peak.gatheredBytes + peak.gradFullBytes + peak.workspaceBytes);
    EXPECT_FALSE(peak.peakPhase.empty());
    s.knobs.prefetchDepth = 0;
    EXPECT_EQ(predict::predictPeak(s).gatheredBytes, largestPadded * 2);
}

TEST(predictDryRun, CheckpointingLowersTheActivationPeak) {
    Scenario s;
    s.shape = plan::GptShape{4, 64, 4, 1000, 128};
    s.strategy = Strategy::Ddp;
    const theory::PeakPrediction full = predict::predictPeak(s);
    s.activations.checkpointing = true;
    const theory::PeakPrediction checkpointed = predict::predictPeak(s);
    EXPECT_LT(checkpointed.activationBytes, full.activationBytes);
    EXPECT_LT(checkpointed.categoryPeaks.category(Category::Activation),
              full.categoryPeaks.category(Category::Activation));
    EXPECT_LT(checkpointed.peakBytes, full.peakBytes);
}

// Without a shape there is nothing to run: the ZeRO paper's closed form.
TEST(predictDryRun, WithoutAShapeTheClosedForm) {
    Scenario s;
    s.params = 1'000'000'000;
    s.strategy = Strategy::Zero3;
    s.ranks = 8;
    const theory::PeakPrediction closed = theory::closedFormPeak(s);
    const theory::PeakPrediction peak = predict::predictPeak(s);
    EXPECT_EQ(peak.peakBytes, closed.peakBytes);
    EXPECT_EQ(peak.notes, closed.notes);
}

// The worker's --predict exchange (report/prediction.h): every field of a scenario and of a
// prediction survives JSON, and a request that does not read is one line, not a default.
TEST(predictDryRun, ScenarioAndPredictionSurviveJson) {
    Scenario s = scenario(runconfig::modelPreset("small"), Strategy::FsdpHybridShard, 4);
    s.precision = {plan::PrecisionKind::Custom, 6};
    s.offload = {Tier::Host, Tier::Nvme};
    s.knobs.reduceBucketBytes = 12345;
    s.knobs.allGatherBucketBytes = 678;
    s.knobs.prefetchDepth = 3;
    s.knobs.reshardAfterForward = false;
    s.knobs.maxInflightAllGathers = 5;
    s.knobs.persistenceThresholdParams = 99;
    s.knobs.gradAccumSteps = 2;
    s.knobs.noSync = true;
    s.knobs.deterministicReductions = true;
    s.knobs.sharedDeviceCollectives = true;
    s.activations = {3, true};
    Scenario bare;
    bare.params = 7'500'000'000;
    bare.ranks = 64;
    const auto request = report::parsePredictRequest(report::predictRequestJson({s, bare}).dump());
    ASSERT_TRUE(request) << request.error;
    ASSERT_EQ(request.value->size(), 2u);
    EXPECT_EQ(report::toJson((*request.value)[0]), report::toJson(s));
    const Scenario& back = (*request.value)[0];
    EXPECT_EQ(back.shape->dModel, s.shape->dModel);
    EXPECT_EQ(back.offload.param, Tier::Nvme);
    EXPECT_EQ(back.knobs.persistenceThresholdParams, 99u);
    EXPECT_EQ(back.activations.microBatch, 3);
    EXPECT_FALSE((*request.value)[1].shape.has_value());
    EXPECT_EQ((*request.value)[1].params, 7'500'000'000u);

    const theory::PeakPrediction dry =
        predict::predictPeak(scenario(runconfig::modelPreset("small"), Strategy::Zero3, 4));
    const auto answer = report::parsePredictAnswer(report::predictAnswerJson({dry}).dump());
    ASSERT_TRUE(answer) << answer.error;
    const theory::PeakPrediction& p = answer.value->front();
    EXPECT_EQ(p.peakBytes, dry.peakBytes);
    EXPECT_EQ(p.modelStates, dry.modelStates);
    EXPECT_EQ(p.atPeak, dry.atPeak);
    EXPECT_EQ(p.categoryPeaks, dry.categoryPeaks);
    EXPECT_EQ(p.peakPhase, dry.peakPhase);
    EXPECT_EQ(p.notes, dry.notes);
    EXPECT_EQ(report::toJson(p), report::toJson(dry));

    for (const char* bad : {"", "{}", "[1]", R"({"schema":"shardscope.predict/1"})",
                            R"({"schema":"shardscope.predict/1","scenarios":[{"ranks":4}]})",
                            R"({"schema":"shardscope.run/1","scenarios":[]})"}) {
        const auto r = report::parsePredictRequest(bad);
        EXPECT_FALSE(r) << bad;
        EXPECT_FALSE(r.error.empty()) << bad;
    }
    nlohmann::json broken = report::predictAnswerJson({dry});
    broken["predictions"][0]["peak_bytes"] = "many";
    EXPECT_FALSE(report::parsePredictAnswer(broken.dump()));
}

TEST(predictDryRun, NeedsAShape) {
    Scenario s;
    s.params = 1000;
    EXPECT_ANY_THROW(predict::predictStep(s));
}

} // namespace
} // namespace shardscope
