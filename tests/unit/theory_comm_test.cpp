// Communication volume per rank per step: ZeRO paper §7 (DDP ≈ 2Ψ, ZeRO-1/2 ≈ 2Ψ, ZeRO-3 ≈ 3Ψ)
// with nccl-tests' ring factors (plan_test.cpp tests the factors themselves), SHARD_GRAD_OP's
// single all-gather and HYBRID_SHARD's cross-group all-reduce.
#include "theory/estimate.h"

#include <gtest/gtest.h>

namespace {

using namespace shardscope;
using namespace shardscope::theory;

constexpr std::uint64_t kPsi = 1'000'000'000;

Scenario bare(plan::Strategy strategy, int ranks) {
    Scenario s;
    s.strategy = strategy;
    s.params = kPsi;
    s.ranks = ranks;
    return s;
}

const CommVolume* find(const CommPerStep& c, CollectiveOp k) {
    for (const auto& v : c.byKind)
        if (v.kind == k) return &v;
    return nullptr;
}

TEST(theoryComm, DdpAllReducesGradientsOnce) {
    const CommPerStep c = commPerStep(bare(plan::Strategy::Ddp, 8));
    ASSERT_EQ(c.byKind.size(), 1u);
    const CommVolume& ar = c.byKind[0];
    EXPECT_EQ(ar.kind, CollectiveOp::AllReduce);
    EXPECT_EQ(ar.payloadBytes, 2 * kPsi);
    EXPECT_EQ(ar.sentBytes, 2 * 2 * kPsi * 7 / 8);
    EXPECT_EQ(ar.calls, static_cast<int>((2 * kPsi + (25u << 20) - 1) / (25u << 20)));
    EXPECT_DOUBLE_EQ(c.psiEquivalents, 2.0 * 7 / 8);
}

TEST(theoryComm, Zero1And2ReduceScatterPlusAllGather) {
    for (plan::Strategy st : {plan::Strategy::Zero1, plan::Strategy::Zero2}) {
        const CommPerStep c = commPerStep(bare(st, 8));
        ASSERT_NE(find(c, CollectiveOp::ReduceScatter), nullptr);
        ASSERT_NE(find(c, CollectiveOp::AllGather), nullptr);
        EXPECT_EQ(find(c, CollectiveOp::ReduceScatter)->sentBytes, 2 * kPsi * 7 / 8);
        EXPECT_EQ(find(c, CollectiveOp::AllGather)->sentBytes, 2 * kPsi * 7 / 8);
        EXPECT_DOUBLE_EQ(c.psiEquivalents, 2.0 * 7 / 8);
    }
}

TEST(theoryComm, Zero3GathersTwiceAndApproaches3Psi) {
    const CommPerStep c = commPerStep(bare(plan::Strategy::Zero3, 8));
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->payloadBytes, 2 * 2 * kPsi);
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->calls, 2);
    EXPECT_EQ(find(c, CollectiveOp::ReduceScatter)->payloadBytes, 2 * kPsi);
    EXPECT_DOUBLE_EQ(c.psiEquivalents, 3.0 * 7 / 8);
    Scenario big = bare(plan::Strategy::FsdpFullShard, 1024);
    EXPECT_NEAR(commPerStep(big).psiEquivalents, 3.0, 0.003);
}

TEST(theoryComm, NoReshardAfterForwardGathersOnce) {
    EXPECT_DOUBLE_EQ(commPerStep(bare(plan::Strategy::FsdpShardGradOp, 8)).psiEquivalents,
                     2.0 * 7 / 8);
    Scenario s = bare(plan::Strategy::FsdpFullShard, 8);
    s.knobs.reshardAfterForward = false;
    EXPECT_DOUBLE_EQ(commPerStep(s).psiEquivalents, 2.0 * 7 / 8);
}

TEST(theoryComm, HybridAllReducesTheShardAcrossGroups) {
    Scenario s = bare(plan::Strategy::FsdpHybridShard, 8);
    s.knobs.hybridGroupSize = 4; // 2 replicas of a 4-way shard
    const CommPerStep c = commPerStep(s);
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->sentBytes, 2 * 2 * kPsi * 3 / 4);
    EXPECT_EQ(find(c, CollectiveOp::ReduceScatter)->sentBytes, 2 * kPsi * 3 / 4);
    const CommVolume* ar = find(c, CollectiveOp::AllReduce);
    ASSERT_NE(ar, nullptr);
    EXPECT_EQ(ar->payloadBytes, 2 * kPsi / 4);
    EXPECT_EQ(ar->sentBytes, 2 * (2 * kPsi / 4) * 1 / 2);
    EXPECT_EQ(c.totalSentBytes, 3 * kPsi + 3 * kPsi / 2 + kPsi / 2);
}

TEST(theoryComm, OneRankSendsNothing) {
    for (plan::Strategy st : plan::classicStrategies()) {
        const CommPerStep c = commPerStep(bare(st, 1));
        EXPECT_TRUE(c.byKind.empty()) << plan::strategyName(st);
        EXPECT_EQ(c.totalSentBytes, 0u);
    }
}

TEST(theoryComm, GradientAccumulationRepeatsGathersPerMicroStep) {
    Scenario s = bare(plan::Strategy::Zero3, 8);
    s.knobs.gradAccumSteps = 4;
    const CommPerStep c = commPerStep(s);
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->payloadBytes, 4 * 2 * 2 * kPsi);
    EXPECT_EQ(find(c, CollectiveOp::ReduceScatter)->payloadBytes, 4 * 2 * kPsi);
    Scenario fsdp = bare(plan::Strategy::FsdpFullShard, 8);
    fsdp.knobs.gradAccumSteps = 4;
    fsdp.knobs.noSync = true; // accumulate unsharded, reduce once
    EXPECT_EQ(find(commPerStep(fsdp), CollectiveOp::ReduceScatter)->payloadBytes, 2 * kPsi);
}

TEST(theoryComm, ShapedUnitsCallOncePerUnitPerPass) {
    Scenario s;
    s.strategy = plan::Strategy::Zero3;
    s.shape = plan::GptShape{4, 64, 4, 1000, 128};
    s.ranks = 8;
    const CommPerStep c = commPerStep(s);
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->calls, 2 * 6);
    EXPECT_EQ(find(c, CollectiveOp::ReduceScatter)->calls, 6);
    EXPECT_EQ(find(c, CollectiveOp::AllGather)->payloadBytes,
              2 * 2 * modelStates(s).paddedParamCount);
}

} // namespace
