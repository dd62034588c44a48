// The plan layer: the collective traits table against nccl-tests' formulas, the one strategy
// classification (policyFor) for every strategy and FSDP flavour, the bucket cutter shared by
// the prediction and the run, and the static properties of the recorded enums.
#include "core/categories.h"
#include "core/event.h"
#include "plan/buckets.h"
#include "plan/collective.h"
#include "plan/policy.h"
#include "plan/strategy.h"
#include "protocol/protocol.h"

#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace shardscope;
using namespace shardscope::plan;

// nccl-tests doc/PERFORMANCE.md, written out independently of the table.
double ncclTestsBusFactor(CollectiveOp op, int n) {
    switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
        return static_cast<double>(n - 1) / n;
    case CollectiveOp::AllReduce:
    case CollectiveOp::TpAllReduce:
        return 2.0 * (n - 1) / n; // an all-reduce over the TP group
    case CollectiveOp::Broadcast:
    case CollectiveOp::PipeSend: // a point-to-point message: the whole payload on one link
    case CollectiveOp::PipeRecv:
        return 1.0;
    case CollectiveOp::None:
        return 0.0;
    }
    return -1.0;
}

TEST(planCollective, BusBandwidthFactorsAreNcclTests) {
    for (int n : {1, 2, 4, 8})
        for (CollectiveOp op : kCollectives)
            EXPECT_DOUBLE_EQ(busBandwidthFactor(op, n), ncclTestsBusFactor(op, n))
                << traits(op).displayName << " N=" << n;
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveOp::AllReduce, 8), 2.0 * 7 / 8);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveOp::AllGather, 2), 0.5);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveOp::ReduceScatter, 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveOp::None, 8), 0.0);
    // busbw = algbw × factor: 1 MB in 1 ms over 4 ranks.
    EXPECT_DOUBLE_EQ(busBandwidth(CollectiveOp::AllGather, 1'000'000, 1e-3, 4), 0.75e9);
    EXPECT_DOUBLE_EQ(busBandwidth(CollectiveOp::AllReduce, 1'000'000, 1e-3, 4), 1.5e9);
    EXPECT_DOUBLE_EQ(busBandwidth(CollectiveOp::Broadcast, 1'000'000, 1e-3, 4), 1e9);
    EXPECT_DOUBLE_EQ(busBandwidth(CollectiveOp::AllGather, 1'000'000, 0.0, 4), 0.0);
}

TEST(planCollective, SentBytesAreTheRingAlgorithms) {
    // All-gather / reduce-scatter: each rank sends N−1 of the N slices of the payload.
    EXPECT_EQ(sentBytes(CollectiveOp::AllGather, 4096, 4), 3072u);
    EXPECT_EQ(sentBytes(CollectiveOp::ReduceScatter, 4096, 8), 3584u);
    // All-reduce = reduce-scatter + all-gather: 2(N−1)/N, rounded down.
    EXPECT_EQ(sentBytes(CollectiveOp::AllReduce, 1000, 3), 1333u);
    EXPECT_EQ(sentBytes(CollectiveOp::AllReduce, 4096, 2), 4096u);
    // The root of a broadcast sends the payload once.
    EXPECT_EQ(sentBytes(CollectiveOp::Broadcast, 4096, 4), 4096u);
    // One participant exchanges nothing.
    for (CollectiveOp op : kCollectives)
        EXPECT_EQ(sentBytes(op, 4096, 1), 0u) << collectiveOpName(op);
    EXPECT_EQ(sentBytes(CollectiveOp::None, 4096, 4), 0u);
    // No 64-bit wrap for payloads near the top of the range.
    const std::uint64_t big = std::uint64_t{1} << 62;
    EXPECT_EQ(sentBytes(CollectiveOp::AllReduce, big, 2), big);
    // Sent bytes / payload is the busbw factor whenever N divides the payload.
    for (int n : {2, 4, 8})
        for (CollectiveOp op : kCollectives) {
            const std::uint64_t payload = 8 * 1024;
            EXPECT_DOUBLE_EQ(
                static_cast<double>(sentBytes(op, payload, static_cast<std::uint64_t>(n))) /
                    payload,
                busBandwidthFactor(op, n))
                << collectiveOpName(op) << " N=" << n;
        }
}

TEST(planCollective, TableNamesEveryKindOnce) {
    static_assert(kCollectiveTraits.size() == kCollectiveOpCount);
    static_assert(traits(CollectiveOp::ReduceScatter).wireName == "reduce_scatter");
    std::set<std::string_view> wire, display;
    for (std::size_t i = 0; i < kCollectiveOpCount; ++i) {
        const auto op = static_cast<CollectiveOp>(i);
        EXPECT_EQ(traits(op).op, op);
        EXPECT_EQ(traits(op).wireName, collectiveOpName(op));
        wire.insert(traits(op).wireName);
        display.insert(traits(op).displayName);
    }
    EXPECT_EQ(wire.size(), kCollectiveOpCount);
    EXPECT_EQ(display.size(), kCollectiveOpCount);
    EXPECT_EQ(traits(CollectiveOp::AllGather).displayName, "all-gather");
    EXPECT_EQ(traits(CollectiveOp::AllReduce).wireName, "all_reduce");
}

TEST(planStatic, RecordedEnumsAndEventLayout) {
    // Counts cover every enumerator, and every enum fits the record's u8 field.
    static_assert(kEventKindCount == static_cast<std::size_t>(EventKind::TransferWait) + 1);
    static_assert(kTransferCount == static_cast<std::size_t>(Transfer::NvmeWrite) + 1);
    static_assert(kPhaseCount == static_cast<std::size_t>(Phase::WeightGrad) + 1);
    static_assert(kCollectiveOpCount == static_cast<std::size_t>(CollectiveOp::PipeRecv) + 1);
    static_assert(kCategoryCount == static_cast<std::size_t>(Category::Workspace) + 1);
    static_assert(kTierCount == static_cast<std::size_t>(Tier::Nvme) + 1);
    static_assert(sizeof(CollectiveOp) == 1 && sizeof(EventKind) == 1 && sizeof(Phase) == 1 &&
                  sizeof(Transfer) == 1);
    // Version 3's event: three u64/i64, three i32, six u8 (version 2's had five: no transfer).
    static_assert(protocol::kEventBytes == 3 * 8 + 3 * 4 + 6 * 1 + 2);
    static_assert(protocol::kEventBytesV3 == 3 * 8 + 3 * 4 + 6 * 1);
    static_assert(protocol::kEventBytesV2 == 3 * 8 + 3 * 4 + 5 * 1);
    // The encoder writes exactly kEventBytes per event.
    protocol::EventBatch one;
    one.events.resize(1);
    protocol::EventBatch two = one;
    two.events.resize(2);
    EXPECT_EQ(protocol::encode(two).size() - protocol::encode(one).size(), protocol::kEventBytes);
    EXPECT_EQ(kStrategyCount, allStrategies().size());
    for (Strategy s : allStrategies())
        EXPECT_EQ(parseStrategy(strategyName(s)), s);
}

TEST(planBuckets, PiecesFillBucketsInOrderAndSplitLargeUnits) {
    const std::vector<UnitRange> ranges = {{3, 5}, {2, 12}, {1, 1}, {0, 4}};
    const auto buckets = planBuckets(ranges, 8);
    ASSERT_EQ(buckets.size(), 3u);
    EXPECT_EQ(buckets[0].count, 8u);
    ASSERT_EQ(buckets[0].pieces.size(), 2u);
    EXPECT_EQ(buckets[0].pieces[1].unit, 2);
    EXPECT_EQ(buckets[0].pieces[1].offset, 0u);
    EXPECT_EQ(buckets[0].pieces[1].length, 3u);
    EXPECT_EQ(buckets[1].count, 8u);
    EXPECT_EQ(buckets[1].pieces[0].offset, 3u);
    EXPECT_EQ(buckets[1].pieces[0].length, 8u);
    EXPECT_EQ(buckets[2].count, 6u); // 1 of unit 2, 1 of unit 1, 4 of unit 0
    std::uint64_t total = 0;
    for (const auto& b : buckets)
        total += b.count;
    EXPECT_EQ(total, 22u);
    EXPECT_EQ(bucketCapacity(25u << 20, 2, 4), (25u << 20) / 8);
    EXPECT_EQ(bucketCapacity(3, 2, 4), 1u) << "at least one element";
}

TEST(planPolicy, EachStrategyShardsWhatTheZeroPaperSays) {
    const Knobs k;
    EXPECT_FALSE(policyFor(Strategy::Ddp, k).shardOptimizer);
    const auto z1 = policyFor(Strategy::Zero1, k);
    EXPECT_TRUE(z1.shardOptimizer && !z1.shardGrads && !z1.shardParams);
    const auto z2 = policyFor(Strategy::Zero2, k);
    EXPECT_TRUE(z2.shardGrads && !z2.shardParams && z2.reduceEveryMicroStep);
    const auto z3 = policyFor(Strategy::Zero3, k);
    EXPECT_TRUE(z3.shardParams && z3.reshardAfterForward);
    EXPECT_EQ(z3.gatherWindow, 2);
    Knobs fsdp;
    fsdp.prefetchDepth = 4;
    fsdp.maxInflightAllGathers = 3;
    EXPECT_EQ(policyFor(Strategy::FsdpFullShard, fsdp).gatherWindow, 3) << "limit_all_gathers";
    EXPECT_EQ(policyFor(Strategy::Zero3, fsdp).gatherWindow, 5);
    EXPECT_FALSE(policyFor(Strategy::FsdpShardGradOp, k).reshardAfterForward);
    fsdp.noSync = true;
    fsdp.gradAccumSteps = 2;
    EXPECT_FALSE(policyFor(Strategy::FsdpFullShard, fsdp).reduceEveryMicroStep);
    EXPECT_TRUE(policyFor(Strategy::Zero3, fsdp).reduceEveryMicroStep) << "ZeRO-3 has no no_sync";
}

TEST(planPolicy, EveryStrategyAndFsdpFlavour) {
    const Knobs k;
    struct Row {
        Strategy s;
        bool fsdp, optimizer, grads, params, bucketed, everyMicro, reshard, gathered, hybrid;
    };
    const std::vector<Row> rows = {
        {Strategy::Ddp, false, false, false, false, true, false, false, false, false},
        {Strategy::Zero1, false, true, false, false, true, false, false, false, false},
        {Strategy::Zero2, false, true, true, false, true, true, false, false, false},
        {Strategy::Zero3, false, true, true, true, false, true, true, false, false},
        {Strategy::FsdpFullShard, true, true, true, true, false, true, true, false, false},
        {Strategy::FsdpShardGradOp, true, true, true, true, false, true, false, true, false},
        {Strategy::FsdpHybridShard, true, true, true, true, false, true, true, false, true},
    };
    ASSERT_EQ(rows.size(), kStrategyCount);
    for (const Row& r : rows) {
        const Policy p = policyFor(r.s, k);
        const std::string name(strategyName(r.s));
        EXPECT_EQ(p.strategy, r.s);
        EXPECT_EQ(p.fsdp, r.fsdp) << name;
        EXPECT_EQ(p.shardOptimizer, r.optimizer) << name;
        EXPECT_EQ(p.shardGrads, r.grads) << name;
        EXPECT_EQ(p.shardParams, r.params) << name;
        EXPECT_EQ(p.bucketedReduce, r.bucketed) << name;
        EXPECT_EQ(p.reduceEveryMicroStep, r.everyMicro) << name;
        EXPECT_EQ(p.reshardAfterForward, r.reshard) << name;
        EXPECT_EQ(p.keepsParamsGathered, r.gathered) << name;
        EXPECT_EQ(p.hybrid, r.hybrid) << name;
        EXPECT_FALSE(p.keepFullGrads) << name;
        EXPECT_EQ(p.usesPrefetch(), r.params) << name;
        EXPECT_EQ(p.usesMaxInflight(), r.fsdp) << name;
        EXPECT_EQ(p.usesNoSync(), r.fsdp) << name;
        EXPECT_EQ(p.usesHybridGroup(), r.hybrid) << name;
        EXPECT_EQ(p.usesPersistence(), r.s == Strategy::Zero3) << name;
        EXPECT_EQ(p.usesReshardAfterForward(), r.s == Strategy::FsdpFullShard || r.hybrid) << name;
        EXPECT_EQ(policyFor(r.s).shardParams, r.params) << name << ": the knob-free overload";
    }
}

TEST(planPolicy, KnobsThatChangeTheClassification) {
    Knobs k;
    k.reshardAfterForward = false; // FULL_SHARD without resharding ≈ SHARD_GRAD_OP for params
    EXPECT_TRUE(policyFor(Strategy::FsdpFullShard, k).keepsParamsGathered);
    EXPECT_TRUE(policyFor(Strategy::FsdpHybridShard, k).keepsParamsGathered);
    EXPECT_TRUE(policyFor(Strategy::Zero3, k).reshardAfterForward) << "ZeRO-3 always releases";

    Knobs noSync;
    noSync.noSync = true;
    EXPECT_FALSE(policyFor(Strategy::FsdpFullShard, noSync).keepFullGrads)
        << "one micro-step: nothing to keep";
    noSync.gradAccumSteps = 4;
    for (Strategy s :
         {Strategy::FsdpFullShard, Strategy::FsdpShardGradOp, Strategy::FsdpHybridShard}) {
        EXPECT_TRUE(policyFor(s, noSync).keepFullGrads) << strategyName(s);
        EXPECT_FALSE(policyFor(s, noSync).reduceEveryMicroStep) << strategyName(s);
    }

    Knobs persist;
    persist.persistenceThresholdParams = 1000;
    EXPECT_EQ(policyFor(Strategy::Zero3, persist).persistenceThreshold, 1000u);
    EXPECT_EQ(policyFor(Strategy::FsdpFullShard, persist).persistenceThreshold, 0u)
        << "ZeRO-3 only";

    Knobs hybrid;
    hybrid.hybridGroupSize = 2;
    EXPECT_EQ(policyFor(Strategy::FsdpHybridShard, hybrid).shardCount(8), 2);
    EXPECT_EQ(policyFor(Strategy::FsdpFullShard, hybrid).shardCount(8), 8);
    EXPECT_EQ(policyFor(Strategy::Zero1, hybrid).shardCount(8), 8);
    EXPECT_EQ(policyFor(Strategy::Ddp, hybrid).shardCount(8), 1);
}

} // namespace
