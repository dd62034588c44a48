// FlowState for known collectives of a ZeRO-3 and a DDP recording: which collective is current,
// the chunks' owners and sizes, and every rank's place in the unshard → compute → reshard cycle.
#include "replay/flow_state.h"
#include "timeline_test_recording.h"

#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::replay;

namespace {

auto collective(EventKind k, CollectiveOp op, int unit) {
    return [=](const Event& e) { return e.kind == k && e.collective == op && e.unit == unit; };
}
auto paramFull(EventKind k, int unit) {
    return [=](const Event& e) {
        return e.kind == k && e.category == Category::ParamFull && e.unit == unit;
    };
}

std::vector<UnitCycle> cycles(const FlowState& s) {
    std::vector<UnitCycle> out;
    for (const FlowRank& r : s.ranks)
        out.push_back(r.cycle);
    return out;
}

} // namespace

TEST(FlowState, nothingBeforeTheFirstCollective) {
    const auto model = testrec::loadModel(testrec::makeRecording({}));
    const std::uint64_t first = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, 0));
    EXPECT_TRUE(!computeFlowState(*model, 0).valid);
    // The first all-gather begins on rank 0 first (the others start 37 ns apart).
    EXPECT_TRUE(!computeFlowState(*model, first).valid);
    EXPECT_TRUE(computeFlowState(*model, first + 1).valid);
}

TEST(FlowState, allGatherOfAForwardUnit) {
    testrec::Spec spec;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    const int unit = 2;
    // Just after rank 1 began the forward all-gather of unit 2: ranks 0 and 1 are in it,
    // ranks 2 and 3 (slightly behind) are still on the previous unit.
    const std::uint64_t b1 = testrec::findEvent(
        *model, 1, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, unit));
    const std::uint64_t b2 = testrec::findEvent(
        *model, 2, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, unit));
    EXPECT_TRUE(b1 < b2);
    FlowState s = computeFlowState(*model, b1 + 1);
    EXPECT_TRUE(s.valid);
    EXPECT_TRUE(s.active);
    EXPECT_EQ(s.kind, CollectiveOp::AllGather);
    EXPECT_EQ(s.unit, unit);
    EXPECT_EQ(s.phase, Phase::Forward);
    EXPECT_EQ(s.step, std::int64_t{0});
    EXPECT_EQ(s.bytes, testrec::fullBytes(spec));
    EXPECT_EQ(s.chunkBytes, testrec::shardBytes(spec));
    EXPECT_EQ(s.sentPerRank, testrec::shardBytes(spec) * 3);
    EXPECT_EQ(s.chunkOwners, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(cycles(s), (std::vector<UnitCycle>{UnitCycle::Gathering, UnitCycle::Gathering,
                                                 UnitCycle::ShardOnly, UnitCycle::ShardOnly}));
    EXPECT_TRUE(s.progress >= 0 && s.progress < 0.05);

    // After every rank's all-gather ended and rank 0 began computing: rank 0 computes,
    // the rest hold full parameters.
    const std::uint64_t c0 = testrec::findEvent(*model, 0, [&](const Event& e) {
        return e.kind == EventKind::ComputeBegin && e.unit == unit && e.phase == Phase::Forward;
    });
    const std::uint64_t e3 = testrec::findEvent(
        *model, 3, collective(EventKind::CollectiveEnd, CollectiveOp::AllGather, unit));
    s = computeFlowState(*model, std::max(c0, e3) + 1);
    EXPECT_EQ(s.kind, CollectiveOp::AllGather);
    EXPECT_TRUE(!s.active);
    EXPECT_DOUBLE_EQ(s.progress, 1.0);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::Computing);
    EXPECT_EQ(s.ranks[0].phase, Phase::Forward);
    for (int r = 1; r < 4; ++r)
        EXPECT_TRUE(s.ranks[static_cast<std::size_t>(r)].cycle == UnitCycle::Computing ||
                    s.ranks[static_cast<std::size_t>(r)].cycle == UnitCycle::Gathered);

    // After rank 0 resharded (freed param_full) but before the next all-gather: freed.
    const std::uint64_t f0 = testrec::findEvent(*model, 0, paramFull(EventKind::Free, unit));
    s = computeFlowState(*model, f0 + 1);
    EXPECT_EQ(s.unit, unit);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::Freed);
}

TEST(FlowState, reduceScatterInBackward) {
    testrec::Spec spec;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    const int unit = 1;
    const std::uint64_t b0 = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::ReduceScatter, unit));
    FlowState s = computeFlowState(*model, b0 + 1);
    EXPECT_EQ(s.kind, CollectiveOp::ReduceScatter);
    EXPECT_EQ(s.unit, unit);
    EXPECT_EQ(s.phase, Phase::Backward);
    EXPECT_EQ(s.chunkOwners, (std::vector<int>{0, 1, 2, 3})); // chunk j lands on rank j
    EXPECT_EQ(s.chunkBytes, testrec::shardBytes(spec));
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::ReduceScattering);
    // Rank 1 freed its full parameters (resharded) before reaching its reduce-scatter.
    EXPECT_EQ(s.ranks[1].cycle, UnitCycle::Freed);
    // Once every rank finished: each holds its summed gradient shard.
    const std::uint64_t e3 = testrec::findEvent(
        *model, 3, collective(EventKind::CollectiveEnd, CollectiveOp::ReduceScatter, unit));
    s = computeFlowState(*model, e3 + 1);
    EXPECT_EQ(s.kind, CollectiveOp::ReduceScatter);
    EXPECT_EQ(cycles(s), std::vector<UnitCycle>(4, UnitCycle::Reduced));
    EXPECT_TRUE(!s.active);
    EXPECT_DOUBLE_EQ(s.progress, 1.0);
}

TEST(FlowState, allReduceUnderDdp) {
    testrec::Spec spec;
    spec.ddp = true;
    spec.ranks = 2;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    const std::uint64_t b0 = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllReduce, 3));
    const FlowState s = computeFlowState(*model, b0 + 1);
    EXPECT_EQ(s.kind, CollectiveOp::AllReduce);
    EXPECT_EQ(s.unit, 3);
    EXPECT_EQ(s.chunkOwners, (std::vector<int>{-1, -1}));
    EXPECT_EQ(s.sentPerRank, testrec::fullBytes(spec)); // 2(N−1)/N = 1 at N = 2
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::AllReducing);
    // DDP keeps full parameters: rank 1, not yet in the all-reduce, holds them.
    EXPECT_EQ(s.ranks[1].cycle, UnitCycle::Gathered);
}

// ZeRO-1 moves buckets spanning every unit: its collectives name no unit, yet they are not the
// gradient norm, and no rank is ever "shard only" for them.
TEST(FlowState, zero1BucketsAreNotTheGradientNorm) {
    testrec::Spec spec;
    spec.zero1 = true;
    spec.steps = 2;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    const std::uint64_t rs = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::ReduceScatter, kNoUnit));
    FlowState s = computeFlowState(*model, rs + 1);
    EXPECT_TRUE(s.valid);
    EXPECT_EQ(s.scope, CollectiveScope::Bucket);
    EXPECT_EQ(s.phase, Phase::Backward);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::ReduceScattering);
    EXPECT_EQ(s.ranks[3].cycle, UnitCycle::GradientsReady);

    const std::uint64_t norm = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllReduce, kNoUnit));
    s = computeFlowState(*model, norm + 1);
    EXPECT_EQ(s.scope, CollectiveScope::GradNorm);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::AllReducing);
    EXPECT_EQ(s.ranks[3].cycle, UnitCycle::NormPart);

    const std::uint64_t ag = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, kNoUnit));
    s = computeFlowState(*model, ag + 1);
    EXPECT_EQ(s.scope, CollectiveScope::Bucket);
    EXPECT_EQ(s.kind, CollectiveOp::AllGather);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::GatheringUpdates);
    EXPECT_EQ(s.ranks[3].cycle, UnitCycle::SliceUpdated);
    for (const FlowRank& r : s.ranks)
        EXPECT_NE(r.cycle, UnitCycle::ShardOnly);
}

// In step 1's backward nothing of step 1 has been communicated yet: the flows show no stale
// all-gather of step 0, and claim no prefetch overlapping the head's compute.
TEST(FlowState, noStaleCollectiveFromAnEarlierStep) {
    testrec::Spec spec;
    spec.zero1 = true;
    spec.steps = 2;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    const int head = spec.units - 1;
    const std::uint64_t k = testrec::findEvent(*model, 0, [&](const Event& e) {
        return e.kind == EventKind::ComputeBegin && e.phase == Phase::Backward && e.unit == head &&
               e.step == 1;
    });
    ASSERT_LT(k, model->eventCount());
    const FlowState s = computeFlowState(*model, k + 1);
    EXPECT_FALSE(s.valid);
    EXPECT_TRUE(s.earlierStep);
    EXPECT_EQ(s.playheadStep, 1);
    EXPECT_EQ(s.step, 0);
    EXPECT_EQ(s.kind, CollectiveOp::AllGather);
    EXPECT_EQ(s.overlapUnit, kNoUnit);
}

// Who talked to whom on a T × D mesh (plan/mesh.h, as the worker splits its communicators): a TP
// all-reduce over T consecutive ranks, ZeRO's collectives over the D ranks striding across them,
// HYBRID's over its shard or replica groups; a group size that fits none is no group at all.
TEST(FlowState, collectiveMembersFollowTheMesh) {
    using G = std::vector<std::vector<int>>;
    EXPECT_EQ(collectiveMembers(CollectiveOp::TpAllReduce, 2, 4, 2), (G{{0, 1}, {2, 3}}));
    EXPECT_EQ(collectiveMembers(CollectiveOp::AllGather, 2, 4, 2), (G{{0, 2}, {1, 3}}));
    EXPECT_EQ(collectiveMembers(CollectiveOp::ReduceScatter, 4, 8, 2),
              (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
    EXPECT_EQ(collectiveMembers(CollectiveOp::TpAllReduce, 4, 4, 4), (G{{0, 1, 2, 3}}));
    EXPECT_EQ(collectiveMembers(CollectiveOp::AllGather, 4, 4, 1), (G{{0, 1, 2, 3}}));
    // HYBRID, T = 2, D = 4, shard groups of 2: shards over DP ranks {0,1},{2,3} of each DP group.
    EXPECT_EQ(collectiveMembers(CollectiveOp::AllGather, 2, 8, 2),
              (G{{0, 2}, {4, 6}, {1, 3}, {5, 7}}));
    EXPECT_EQ(collectiveMembers(CollectiveOp::AllReduce, 2, 8, 2),
              (G{{0, 4}, {2, 6}, {1, 5}, {3, 7}}));
    EXPECT_TRUE(collectiveMembers(CollectiveOp::TpAllReduce, 3, 4, 2).empty());
    EXPECT_TRUE(collectiveMembers(CollectiveOp::AllGather, 3, 4, 2).empty());
    EXPECT_TRUE(collectiveMembers(CollectiveOp::AllGather, 5, 4, 1).empty());
    EXPECT_TRUE(collectiveMembers(CollectiveOp::AllGather, 2, 4, 3).empty()); // T does not divide N
    EXPECT_TRUE(collectiveMembers(CollectiveOp::AllGather, 0, 4, 1).empty());
}

// Without a mesh a state's members are one group of every rank, and its chunks are the group's.
TEST(FlowState, membersOfAPlainRunAreEveryRank) {
    const auto model = testrec::loadModel(testrec::makeRecording({}));
    const std::uint64_t b = testrec::findEvent(
        *model, 3, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, 1));
    const FlowState s = computeFlowState(*model, b + 1);
    ASSERT_TRUE(s.valid);
    EXPECT_EQ(s.members, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
    EXPECT_EQ(s.groupSize, 4);
    EXPECT_EQ(s.chunkOwners.size(), std::size_t{4});
    EXPECT_TRUE(s.atPlayhead);
}

// The nearest collective of a kind: the one in flight at the playhead (shown there), else the
// next one (shown complete), and within the playhead's step the last one begun.
TEST(FlowState, nearestGroupOfAKind) {
    const auto model = testrec::loadModel(testrec::makeRecording({}));
    FlowIndex index;
    index.reset(model->worldSize());
    index.update(*model);
    const auto reduceScatter = [](const CollectiveGroup& g) {
        return g.op == CollectiveOp::ReduceScatter;
    };
    // Before backward: no reduce-scatter begun yet, so the first one, shown complete.
    const std::uint64_t firstRs = testrec::findEvent(
        *model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::ReduceScatter, 3));
    const std::ptrdiff_t g = index.nearestGroup(1, 0, reduceScatter);
    ASSERT_GE(g, 0);
    EXPECT_EQ(index.groups()[static_cast<std::size_t>(g)].op, CollectiveOp::ReduceScatter);
    EXPECT_EQ(index.groups()[static_cast<std::size_t>(g)].firstBegin, firstRs);
    FlowState s = computeFlowStateOf(*model, index, static_cast<std::size_t>(g), 1);
    EXPECT_TRUE(s.valid);
    EXPECT_FALSE(s.atPlayhead);
    EXPECT_EQ(cycles(s), std::vector<UnitCycle>(4, UnitCycle::Reduced));
    // Inside it: the same group, at the playhead, rank 0 reduce-scattering.
    EXPECT_EQ(index.nearestGroup(firstRs + 1, 0, reduceScatter), g);
    s = computeFlowStateOf(*model, index, static_cast<std::size_t>(g), firstRs + 1);
    EXPECT_TRUE(s.atPlayhead && s.active);
    EXPECT_EQ(s.ranks[0].cycle, UnitCycle::ReduceScattering);
    // No such kind: −1.
    EXPECT_EQ(index.nearestGroup(
                  1, 0, [](const CollectiveGroup& c) { return c.op == CollectiveOp::TpAllReduce; }),
              -1);
}
