// Per-rank model states: category mapping, sharding properties, padding, persistence,
// hybrid sharding, offload tiers, validation, the closed-form peak and the gathered-bytes bound.
#include "core/error.h"
#include "theory/activations.h"
#include "theory/estimate.h"
#include "theory/input_error.h"

#include <gtest/gtest.h>
#include <optional>
#include <string>

namespace {

using namespace shardscope;
using namespace shardscope::theory;

constexpr std::uint64_t kPsi = 1'000'000'000;

Scenario bare(plan::Strategy strategy, std::uint64_t params, int ranks) {
    Scenario s;
    s.strategy = strategy;
    s.params = params;
    s.ranks = ranks;
    return s;
}

plan::GptShape smallGpt() {
    return plan::GptShape{4, 64, 4, 1000, 128};
}

Scenario shaped(plan::Strategy strategy, int ranks, plan::GptShape shape = smallGpt()) {
    Scenario s;
    s.strategy = strategy;
    s.shape = shape;
    s.ranks = ranks;
    return s;
}

std::string messageOf(const Scenario& s) {
    try {
        validate(s);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        return e.what();
    }
    return "";
}

// The input a refusal names; nullopt when the scenario is valid. Messages never spell a front
// end's flag: the CLI and the GUI phrase the field themselves.
std::optional<InputField> fieldOf(const Scenario& s) {
    try {
        validate(s);
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
        return e.field();
    }
    return std::nullopt;
}

TEST(theoryEstimate, DdpHoldsEverythingFull) {
    const ByteTable t = modelStates(bare(plan::Strategy::Ddp, kPsi, 8)).perRank;
    EXPECT_EQ(t.at(Category::ParamFull, Tier::Device), 2 * kPsi);
    EXPECT_EQ(t.at(Category::GradFull, Tier::Device), 2 * kPsi);
    for (Category c : {Category::MasterFp32, Category::AdamM, Category::AdamV})
        EXPECT_EQ(t.at(c, Tier::Device), 4 * kPsi);
    EXPECT_EQ(t.category(Category::ParamShard) + t.category(Category::GradShard), 0u);
    EXPECT_EQ(t.total(), 16 * kPsi);
}

TEST(theoryEstimate, Zero1ShardsOnlyTheOptimizer) {
    const ByteTable t = modelStates(bare(plan::Strategy::Zero1, kPsi, 8)).perRank;
    EXPECT_EQ(t.at(Category::ParamFull, Tier::Device), 2 * kPsi);
    EXPECT_EQ(t.at(Category::GradFull, Tier::Device), 2 * kPsi);
    EXPECT_EQ(t.group(StateGroup::Optimizer), 12 * kPsi / 8);
}

TEST(theoryEstimate, Zero2ShardsGradientsToo) {
    const ByteTable t = modelStates(bare(plan::Strategy::Zero2, kPsi, 8)).perRank;
    EXPECT_EQ(t.at(Category::ParamFull, Tier::Device), 2 * kPsi);
    EXPECT_EQ(t.category(Category::GradFull), 0u);
    EXPECT_EQ(t.at(Category::GradShard, Tier::Device), 2 * kPsi / 8);
    EXPECT_EQ(t.group(StateGroup::Optimizer), 12 * kPsi / 8);
}

TEST(theoryEstimate, Zero3AndFsdpShardEverything) {
    for (plan::Strategy st : {plan::Strategy::Zero3, plan::Strategy::FsdpFullShard}) {
        const ByteTable t = modelStates(bare(st, kPsi, 8)).perRank;
        EXPECT_EQ(t.at(Category::ParamShard, Tier::Device), 2 * kPsi / 8);
        EXPECT_EQ(t.category(Category::ParamFull), 0u);
        EXPECT_EQ(t.at(Category::GradShard, Tier::Device), 2 * kPsi / 8);
        EXPECT_EQ(t.total(), 16 * kPsi / 8);
    }
}

TEST(theoryEstimate, ShardGradOpKeepsGatheredParamsFromForwardToBackward) {
    const ModelStates ms = modelStates(bare(plan::Strategy::FsdpShardGradOp, kPsi, 8));
    EXPECT_EQ(ms.perRank.at(Category::ParamShard, Tier::Device), 2 * kPsi / 8);
    EXPECT_EQ(ms.perRank.at(Category::ParamFull, Tier::Device), 2 * kPsi);
    Scenario noReshard = bare(plan::Strategy::FsdpFullShard, kPsi, 8);
    noReshard.knobs.reshardAfterForward = false;
    EXPECT_EQ(modelStates(noReshard).perRank, ms.perRank);
}

TEST(theoryEstimate, Zero3Is16PsiOverNExactly) {
    for (int n : {1, 2, 3, 8, 64, 1000, 4096}) {
        const std::uint64_t psi = 7'000'000ull * static_cast<std::uint64_t>(n) * 3; // N | Ψ
        EXPECT_EQ(modelStates(bare(plan::Strategy::Zero3, psi, n)).perRank.total(),
                  16 * psi / static_cast<std::uint64_t>(n))
            << "N=" << n;
    }
    // Ψ not a multiple of N: ⌈⌉ per category keeps us within 5 bytes above 16Ψ/N.
    const std::uint64_t total =
        modelStates(bare(plan::Strategy::Zero3, 1'000'000'007, 64)).perRank.total();
    EXPECT_GE(static_cast<double>(total), 16.0 * 1'000'000'007 / 64);
    EXPECT_LT(static_cast<double>(total), 16.0 * 1'000'000'007 / 64 + 5);
}

TEST(theoryEstimate, SavingsVsDdpApproach4x8xAndN) {
    const int n = 1 << 20;
    const std::uint64_t psi = std::uint64_t{1} << 40; // divisible by N
    const double ddp =
        static_cast<double>(modelStates(bare(plan::Strategy::Ddp, psi, n)).perRank.total());
    auto ratio = [&](plan::Strategy st) {
        return ddp / static_cast<double>(modelStates(bare(st, psi, n)).perRank.total());
    };
    EXPECT_GT(ratio(plan::Strategy::Zero1), 3.999);
    EXPECT_LT(ratio(plan::Strategy::Zero1), 4.0);
    EXPECT_GT(ratio(plan::Strategy::Zero2), 7.999);
    EXPECT_LT(ratio(plan::Strategy::Zero2), 8.0);
    EXPECT_DOUBLE_EQ(ratio(plan::Strategy::Zero3), n);
    // …and the ratios grow towards those limits.
    const double small =
        ddp / static_cast<double>(modelStates(bare(plan::Strategy::Zero1, psi, 4)).perRank.total());
    EXPECT_LT(small, ratio(plan::Strategy::Zero1));
}

// Bare Ψ: every strategy is non-increasing in N. With a shape, sharded-only strategies stay
// monotonic; ZeRO-1/2 pad their *full* buffers to a multiple of N, which can grow with N.
TEST(theoryEstimate, PerRankBytesNonIncreasingInRanks) {
    for (plan::Strategy st : plan::classicStrategies()) {
        std::uint64_t previous = UINT64_MAX;
        for (int n = 1; n <= 300; ++n) {
            const std::uint64_t now = modelStates(bare(st, 123'456'789, n)).perRank.total();
            EXPECT_LE(now, previous) << plan::strategyName(st) << " N=" << n;
            previous = now;
        }
    }
    for (plan::Strategy st : {plan::Strategy::Zero3, plan::Strategy::FsdpFullShard}) {
        std::uint64_t previous = UINT64_MAX;
        for (int n = 1; n <= 300; ++n) {
            const std::uint64_t now = modelStates(shaped(st, n)).perRank.total();
            EXPECT_LE(now, previous) << plan::strategyName(st) << " shape N=" << n;
            previous = now;
        }
    }
}

TEST(theoryEstimate, PaddedShardsCoverTheModelWithLessThanOneRowOfPadding) {
    const plan::GptShape shape = smallGpt();
    const std::uint64_t psi = plan::paramCount(shape);
    const std::uint64_t units = plan::unitParams(shape).size();
    for (int n : {1, 3, 7, 64, 1000}) {
        const ModelStates ms = modelStates(shaped(plan::Strategy::Zero3, n));
        const auto bigN = static_cast<std::uint64_t>(n);
        for (auto [c, b] : {std::pair{Category::ParamShard, 2ull},
                            {Category::GradShard, 2ull},
                            {Category::AdamM, 4ull}}) {
            const std::uint64_t all = ms.perRank.category(c) * bigN;
            EXPECT_GE(all, psi * b) << "N=" << n;
            EXPECT_LT(all, psi * b + bigN * units * b) << "N=" << n;
        }
        EXPECT_EQ(ms.paramCount, psi);
        EXPECT_EQ(ms.paddedParamCount % bigN, 0u);
        EXPECT_EQ(ms.paddingBytes, (ms.paddedParamCount - psi) * 16 / bigN);
    }
}

TEST(theoryEstimate, PersistenceThresholdKeepsSmallUnitsWhole) {
    Scenario s = shaped(plan::Strategy::Zero3, 8);
    const std::uint64_t block = 12 * 64 * 64 + 13 * 64; // 49984 < embedding, head
    s.knobs.persistenceThresholdParams = block;
    const ModelStates ms = modelStates(s);
    EXPECT_EQ(ms.perRank.at(Category::ParamFull, Tier::Device), 4 * block * 2);
    const std::uint64_t embedding = 1000 * 64 + 128 * 64, head = 2 * 64 + 1000 * 64;
    EXPECT_EQ(ms.perRank.at(Category::ParamShard, Tier::Device), (embedding + head) / 8 * 2);
    // Gradients and optimizer states of persistent units are still sharded.
    EXPECT_EQ(ms.perRank.at(Category::GradShard, Tier::Device),
              (embedding + head + 4 * block) / 8 * 2);
    // FSDP has no persistence threshold.
    s.strategy = plan::Strategy::FsdpFullShard;
    EXPECT_EQ(modelStates(s).perRank.category(Category::ParamFull), 0u);
}

TEST(theoryEstimate, HybridShardsWithinTheGroup) {
    Scenario s = bare(plan::Strategy::FsdpHybridShard, kPsi, 8);
    s.knobs.hybridGroupSize = 4;
    validate(s);
    const ModelStates ms = modelStates(s);
    EXPECT_EQ(ms.shardCount, 4);
    EXPECT_EQ(ms.perRank.total(), 16 * kPsi / 4);
}

TEST(theoryEstimate, OptimizerOffloadMovesStatesAndGradShardsOffDevice) {
    Scenario s = bare(plan::Strategy::Zero2, kPsi, 8);
    s.offload.optimizer = Tier::Host;
    ByteTable t = modelStates(s).perRank;
    // ZeRO-Offload: only the 16-bit params stay on the GPU (DeepSpeed's 2Ψ gpu_mem).
    EXPECT_EQ(t.tier(Tier::Device), 2 * kPsi);
    EXPECT_EQ(t.at(Category::GradShard, Tier::Host), 2 * kPsi / 8);
    EXPECT_EQ(t.group(StateGroup::Optimizer, Tier::Host), 12 * kPsi / 8);
    s.offload.optimizer = Tier::Nvme;
    t = modelStates(s).perRank;
    EXPECT_EQ(t.group(StateGroup::Optimizer, Tier::Nvme), 12 * kPsi / 8);
    EXPECT_EQ(t.total(), 2 * kPsi + 14 * kPsi / 8);
}

TEST(theoryEstimate, ParamOffloadOnlyForParamShardingStrategies) {
    Scenario s = bare(plan::Strategy::Zero3, kPsi, 8);
    s.offload.param = Tier::Nvme;
    validate(s);
    EXPECT_EQ(modelStates(s).perRank.at(Category::ParamShard, Tier::Nvme), 2 * kPsi / 8);
    for (plan::Strategy st : {plan::Strategy::Ddp, plan::Strategy::Zero1, plan::Strategy::Zero2}) {
        s.strategy = st;
        EXPECT_EQ(fieldOf(s), InputField::OffloadParam) << plan::strategyName(st);
    }
}

TEST(theoryEstimate, PrecisionBytesPerParameter) {
    Scenario s = bare(plan::Strategy::Ddp, kPsi, 1);
    s.precision.kind = plan::PrecisionKind::Fp32;
    ByteTable t = modelStates(s).perRank;
    EXPECT_EQ(t.category(Category::ParamFull), 4 * kPsi);
    EXPECT_EQ(t.category(Category::MasterFp32), 0u);
    EXPECT_EQ(t.total(), 16 * kPsi);
    s.precision = {plan::PrecisionKind::Custom, 6}; // 8-bit Adam states + fp32 master
    t = modelStates(s).perRank;
    EXPECT_EQ(t.category(Category::MasterFp32), 4 * kPsi);
    EXPECT_EQ(t.category(Category::AdamM), kPsi);
    EXPECT_EQ(t.category(Category::AdamV), kPsi);
    EXPECT_EQ(t.total(), 10 * kPsi);
    s.precision.kind = plan::PrecisionKind::MixedFp16;
    EXPECT_EQ(modelStates(s).perRank.total(), 16 * kPsi);
}

TEST(theoryEstimate, EveryEntryHasADerivationLine) {
    for (plan::Strategy st : plan::allStrategies()) {
        Scenario s = shaped(st, 8);
        s.knobs.hybridGroupSize = 4;
        const ModelStates ms = modelStates(s);
        std::uint64_t sum = 0;
        for (const auto& line : ms.lines) {
            EXPECT_FALSE(line.formula.empty());
            EXPECT_FALSE(line.source.empty());
            sum += line.bytes;
        }
        EXPECT_EQ(sum, ms.perRank.total()) << plan::strategyName(st);
    }
    const ModelStates z2 = modelStates(bare(plan::Strategy::Zero2, kPsi, 8));
    EXPECT_NE(z2.lines.front().source.find("§5.2"), std::string::npos);
}

TEST(theoryEstimate, ValidationNamesTheField) {
    EXPECT_EQ(fieldOf(bare(plan::Strategy::Ddp, kPsi, 0)), InputField::Ranks);
    EXPECT_EQ(fieldOf(bare(plan::Strategy::Ddp, 0, 4)), InputField::Params);
    EXPECT_EQ(fieldOf(bare(plan::Strategy::Ddp, (std::uint64_t{1} << 53) + 1, 4)),
              InputField::Params);
    Scenario hybrid = bare(plan::Strategy::FsdpHybridShard, kPsi, 4);
    hybrid.knobs.hybridGroupSize = 3;
    EXPECT_EQ(fieldOf(hybrid), InputField::HybridGroup);
    hybrid.knobs.hybridGroupSize = 0;
    EXPECT_EQ(fieldOf(hybrid), InputField::HybridGroup);
    Scenario custom = bare(plan::Strategy::Ddp, kPsi, 4);
    custom.precision = {plan::PrecisionKind::Custom, 65};
    EXPECT_EQ(fieldOf(custom), InputField::OptimizerBytes);
    Scenario badShape = shaped(plan::Strategy::Zero3, 4, plan::GptShape{2, 10, 3, 100, 16});
    EXPECT_NE(messageOf(badShape).find("heads"), std::string::npos);
    EXPECT_EQ(fieldOf(badShape), InputField::ModelShape);
    // Every block is a unit; absurd layer counts are refused before any unit list is built.
    Scenario manyUnits =
        shaped(plan::Strategy::Zero3, 1 << 30, plan::GptShape{100'000'000, 8, 1, 8, 8});
    EXPECT_NE(messageOf(manyUnits).find("layers"), std::string::npos);
    Scenario fine = shaped(plan::Strategy::Zero3, 4);
    EXPECT_EQ(messageOf(fine), "");
    // 2048 units of 2^53 and one of 2048 add up to 2^64 + 2048, which wraps to the Ψ of 2048 given.
    Scenario wrapped = bare(plan::Strategy::Zero3, 2048, 4);
    for (int i = 0; i < 2048; ++i)
        wrapped.units.push_back({"block", std::uint64_t{1} << 53});
    wrapped.units.push_back({"last", 2048});
    EXPECT_EQ(fieldOf(wrapped), InputField::Params);
    EXPECT_NE(messageOf(wrapped).find("add up to more than 2^53"), std::string::npos)
        << messageOf(wrapped);
}

// The closed form (the ZeRO paper's view): states + gathered units + a gradient + a bucket. A
// shaped scenario's peak is the dry run's (tests/unit/predict_test.cpp).
TEST(theoryEstimate, ClosedFormPeakAddsThePapersTerms) {
    const PeakPrediction ddp = closedFormPeak(bare(plan::Strategy::Ddp, kPsi, 8));
    EXPECT_EQ(ddp.bucketBytes, 25ull << 20);
    EXPECT_EQ(ddp.gatheredBytes, 0u);
    EXPECT_EQ(ddp.activationBytes, 0u);
    EXPECT_FALSE(ddp.notes.empty());
    EXPECT_EQ(ddp.peakBytes,
              modelStates(bare(plan::Strategy::Ddp, kPsi, 8)).perRank.tier(Tier::Device) +
                  (25ull << 20));

    const Scenario zero3 = bare(plan::Strategy::Zero3, kPsi, 8);
    const PeakPrediction z = closedFormPeak(zero3);
    EXPECT_EQ(z.gatheredBytes, gatheredBytesBound(zero3));
    EXPECT_EQ(z.gatheredBytes, kPsi * 2) << "one unit: the whole model, gathered once";
    EXPECT_EQ(z.gradFullBytes, kPsi * 2);
    EXPECT_EQ(z.bucketBytes, 0u);
    EXPECT_EQ(z.peakBytes, modelStates(zero3).perRank.tier(Tier::Device) + 2 * kPsi * 2);
    EXPECT_EQ(z.peakBytes, z.atPeak.tier(Tier::Device));
}

// param_full in flight: the largest gathered unit × the pass's window (1 + prefetch, capped by
// the FSDP in-flight limit and the unit count); nothing where params stay gathered.
TEST(theoryEstimate, GatheredBytesBound) {
    Scenario s = shaped(plan::Strategy::Zero3, 8);
    const std::uint64_t largestPadded =
        72192; // embedding 1000·64 + 128·64, already a multiple of 8
    EXPECT_EQ(gatheredBytesBound(s), largestPadded * 2 * 2);
    s.knobs.prefetchDepth = 0;
    EXPECT_EQ(gatheredBytesBound(s), largestPadded * 2);
    s.knobs.prefetchDepth = 100;
    EXPECT_EQ(gatheredBytesBound(s), largestPadded * 2 * 6) << "4 blocks + embedding + head";
    s.strategy = plan::Strategy::FsdpFullShard;
    s.knobs.maxInflightAllGathers = 3;
    EXPECT_EQ(gatheredBytesBound(s), largestPadded * 2 * 3);
    EXPECT_EQ(gatheredBytesBound(shaped(plan::Strategy::Zero2, 8)), 0u);
    EXPECT_EQ(gatheredBytesBound(shaped(plan::Strategy::FsdpShardGradOp, 8)), 0u);
}

} // namespace
