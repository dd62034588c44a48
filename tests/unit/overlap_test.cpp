// The exposed-communication arithmetic (train/overlap.h): unions of spans, communication not
// covered by compute, per-step records from an event sequence, and the run's summary.
#include "core/event.h"
#include "train/overlap.h"

#include <gtest/gtest.h>
#include <vector>

namespace shardscope::train {
namespace {

using Spans = std::vector<Span>;

TEST(trainOverlap, UnionOfNothingIsZero) {
    EXPECT_EQ(unionNs(Spans{}), 0u);
    EXPECT_EQ(exposedNs(Spans{}, Spans{{0, 100}}), 0u);
    EXPECT_EQ(exposedNs(Spans{{10, 30}}, Spans{}), 20u);
    EXPECT_EQ(unionNs(Spans{{5, 5}, {9, 3}}), 0u) << "empty and inverted spans count as nothing";
}

TEST(trainOverlap, DisjointSpansAdd) {
    EXPECT_EQ(unionNs(Spans{{40, 50}, {0, 10}, {20, 25}}), 25u);
    // Compute elsewhere hides nothing.
    EXPECT_EQ(exposedNs(Spans{{0, 10}, {20, 25}}, Spans{{10, 20}, {30, 40}}), 15u);
}

TEST(trainOverlap, OverlappingCollectivesCountTheirCommonTimeOnce) {
    // Two collectives in flight together: 0–30 and 20–50 are 50 ns of communication, not 60.
    EXPECT_EQ(unionNs(Spans{{0, 30}, {20, 50}}), 50u);
    EXPECT_EQ(exposedNs(Spans{{0, 30}, {20, 50}}, Spans{}), 50u);
    // Touching spans leave no gap.
    EXPECT_EQ(unionNs(Spans{{0, 10}, {10, 20}}), 20u);
    EXPECT_EQ(mergeSpans(Spans{{10, 20}, {0, 10}}).size(), 1u);
}

TEST(trainOverlap, NestedSpansAreTheOuterOne) {
    EXPECT_EQ(unionNs(Spans{{0, 100}, {10, 20}, {30, 90}}), 100u);
    // A collective nested in another, partly under compute.
    EXPECT_EQ(exposedNs(Spans{{0, 100}, {40, 60}}, Spans{{30, 70}}), 60u);
}

TEST(trainOverlap, CommunicationFullyUnderComputeIsHidden) {
    EXPECT_EQ(exposedNs(Spans{{10, 20}, {30, 40}}, Spans{{0, 50}}), 0u);
    // Covered by two compute spans that together span it.
    EXPECT_EQ(exposedNs(Spans{{10, 40}}, Spans{{0, 25}, {25, 60}}), 0u);
}

TEST(trainOverlap, PartlyHiddenCommunicationExposesTheGaps) {
    // comm 0–100, compute 10–20, 50–60, 90–120: exposed 0–10, 20–50, 60–90 = 70.
    EXPECT_EQ(exposedNs(Spans{{0, 100}}, Spans{{90, 120}, {10, 20}, {50, 60}}), 70u);
    // Several comm spans against one long compute span in the middle.
    EXPECT_EQ(exposedNs(Spans{{0, 10}, {15, 40}, {45, 60}}, Spans{{5, 50}}), 5u + 10u);
}

TEST(trainOverlap, StepClipsToItsBoundariesAndKeepsTheOrdering) {
    const StepOverlap o = stepOverlap(100, 200, Spans{{90, 120}, {150, 260}}, Spans{{110, 160}});
    EXPECT_EQ(o.stepNs, 100u);
    EXPECT_EQ(o.commUnionNs, 20u + 50u);
    EXPECT_EQ(o.exposedNs, 10u + 40u);
    EXPECT_DOUBLE_EQ(o.fraction(), 0.5);
    EXPECT_LE(o.exposedNs, o.commUnionNs);
    EXPECT_LE(o.commUnionNs, o.stepNs);
    EXPECT_EQ(stepOverlap(5, 5, Spans{{0, 10}}, Spans{}).fraction(), 0.0) << "an empty step";
}

TEST(trainOverlap, SummaryIsTheMedianFractionAndTheTotals) {
    EXPECT_EQ(summarize(std::vector<StepOverlap>{}).medianFraction, 0.0);
    const std::vector<StepOverlap> odd = {{100, 50, 10}, {100, 80, 80}, {200, 60, 40}};
    const OverlapSummary s = summarize(odd);
    EXPECT_DOUBLE_EQ(s.medianFraction, 0.2); // 0.1, 0.8, 0.2
    EXPECT_EQ(s.stepNs, 400u);
    EXPECT_EQ(s.commUnionNs, 190u);
    EXPECT_EQ(s.exposedNs, 130u);
    const std::vector<StepOverlap> even = {{100, 50, 10}, {100, 80, 80}};
    EXPECT_DOUBLE_EQ(summarize(even).medianFraction, 0.45);
}

Event at(EventKind kind, std::uint64_t t, std::int32_t unit = kNoUnit, Phase phase = Phase::None,
         CollectiveOp op = CollectiveOp::None) {
    Event e;
    e.kind = kind;
    e.timeNs = t;
    e.unit = unit;
    e.phase = phase;
    e.collective = op;
    return e;
}

TEST(trainOverlap, TrackerPairsSpansThatDoNotNest) {
    using K = EventKind;
    OverlapTracker t;
    const std::vector<Event> events = {
        at(K::CollectiveBegin, 0, 0, Phase::None, CollectiveOp::Broadcast), // setup: ignored
        at(K::CollectiveEnd, 5, 0, Phase::None, CollectiveOp::Broadcast),
        at(K::StepBegin, 10),
        at(K::CollectiveBegin, 10, 0, Phase::None, CollectiveOp::AllGather),
        at(K::CollectiveEnd, 20, 0, Phase::None, CollectiveOp::AllGather),
        // unit 1's gather is prefetched under unit 0's forward and ends after it
        at(K::CollectiveBegin, 20, 1, Phase::None, CollectiveOp::AllGather),
        at(K::ComputeBegin, 22, 0, Phase::Forward),
        at(K::Alloc, 23),
        at(K::ComputeEnd, 40, 0, Phase::Forward),
        // a reduce-scatter begins and ends inside the gather's span
        at(K::CollectiveBegin, 42, 0, Phase::None, CollectiveOp::ReduceScatter),
        at(K::CollectiveEnd, 45, 0, Phase::None, CollectiveOp::ReduceScatter),
        at(K::CollectiveEnd, 50, 1, Phase::None, CollectiveOp::AllGather),
        at(K::ComputeBegin, 50, 1, Phase::Forward),
        at(K::ComputeEnd, 70, 1, Phase::Forward),
        at(K::StepEnd, 110),
        at(K::CollectiveBegin, 120, 0, Phase::None, CollectiveOp::AllGather), // after the step
        at(K::CollectiveEnd, 130, 0, Phase::None, CollectiveOp::AllGather),
    };
    for (const Event& e : events)
        t.onEvent(e);
    ASSERT_EQ(t.steps().size(), 1u);
    const StepOverlap& o = t.steps()[0];
    EXPECT_EQ(o.stepNs, 100u);
    EXPECT_EQ(o.commUnionNs, 40u);          // 10–50
    EXPECT_EQ(o.exposedNs, 10u + 2u + 10u); // 10–22 and 40–50
    // A step abandoned without StepEnd leaves no record.
    t.onEvent(at(K::StepBegin, 200));
    t.onEvent(at(K::ComputeBegin, 201, 0, Phase::Forward));
    EXPECT_EQ(t.steps().size(), 1u);
}

// A pipeline stage's bubble as the recording sees it: the idle time between its first and last
// forward/backward span (a receive's wait in between), not before or after them, nor the
// optimizer's.
TEST(trainOverlap, AStagesWorkWindowHoldsItsIdleBetweenFirstAndLastCompute) {
    using K = EventKind;
    OverlapTracker t;
    const std::vector<Event> events = {
        at(K::StepBegin, 0),
        at(K::CollectiveBegin, 0, 0, Phase::None, CollectiveOp::PipeRecv), // waits to start
        at(K::CollectiveEnd, 15, 0, Phase::None, CollectiveOp::PipeRecv),
        at(K::ComputeBegin, 15, 1, Phase::Forward),
        at(K::ComputeEnd, 25, 1, Phase::Forward),
        at(K::CollectiveBegin, 25, 1, Phase::None, CollectiveOp::PipeRecv), // the bubble
        at(K::CollectiveEnd, 45, 1, Phase::None, CollectiveOp::PipeRecv),
        at(K::ComputeBegin, 45, 1, Phase::Backward),
        at(K::ComputeBegin, 47, 1, Phase::Recompute), // nested: counted once
        at(K::ComputeEnd, 50, 1, Phase::Recompute),
        at(K::ComputeEnd, 65, 1, Phase::Backward),
        at(K::ComputeBegin, 70, kNoUnit, Phase::Optimizer),
        at(K::ComputeEnd, 90, kNoUnit, Phase::Optimizer),
        at(K::StepEnd, 100),
    };
    for (const Event& e : events)
        t.onEvent(e);
    ASSERT_EQ(t.steps().size(), 1u);
    const StepOverlap& o = t.steps()[0];
    EXPECT_EQ(o.workWindowNs, 50u); // 15–65
    EXPECT_EQ(o.workNs, 30u);       // 10 forward + 20 backward
    EXPECT_EQ(o.forwardNs, 10u);
    EXPECT_EQ(o.backwardNs, 20u);
}

// A tensor-parallel all-reduce runs inside its unit's compute span, yet the compute waits for
// it: it is exposed, unlike a data-parallel collective under the same span.
TEST(trainOverlap, TensorParallelAllReducesInsideComputeAreExposed) {
    using K = EventKind;
    OverlapTracker t;
    const std::vector<Event> events = {
        at(K::StepBegin, 0),
        at(K::ComputeBegin, 0, 1, Phase::Forward),
        at(K::CollectiveBegin, 10, 1, Phase::None, CollectiveOp::TpAllReduce),
        at(K::CollectiveEnd, 20, 1, Phase::None, CollectiveOp::TpAllReduce),
        // a prefetched all-gather under the same compute stays hidden
        at(K::CollectiveBegin, 30, 2, Phase::None, CollectiveOp::AllGather),
        at(K::CollectiveEnd, 40, 2, Phase::None, CollectiveOp::AllGather),
        at(K::ComputeEnd, 50, 1, Phase::Forward),
        at(K::StepEnd, 100),
    };
    for (const Event& e : events)
        t.onEvent(e);
    ASSERT_EQ(t.steps().size(), 1u);
    EXPECT_EQ(t.steps()[0].commUnionNs, 20u);
    EXPECT_EQ(t.steps()[0].exposedNs, 10u); // the TP all-reduce, all of it
    const std::vector<Span> a = {{0, 50}}, b = {{10, 20}, {45, 60}};
    const std::vector<Span> left = subtractSpans(a, b);
    ASSERT_EQ(left.size(), 2u);
    EXPECT_EQ(left[0].begin, 0u);
    EXPECT_EQ(left[0].end, 10u);
    EXPECT_EQ(left[1].begin, 20u);
    EXPECT_EQ(left[1].end, 45u);
}

Event transfer(EventKind k, std::uint64_t t, std::int32_t unit, Transfer dir) {
    Event e = at(k, t, unit);
    e.transfer = dir;
    return e;
}

// Exposed transfer: a device ↔ host copy is the rank's own work (exposed even inside a compute
// span); an NVMe read under compute is hidden until the rank waits for it.
TEST(trainOverlap, TransfersAreExposedWhereTheRankComputesNothing) {
    using K = EventKind;
    OverlapTracker t;
    const std::vector<Event> events = {
        at(K::StepBegin, 0),
        transfer(K::TransferBegin, 0, 0, Transfer::DeviceToHost), // before any compute: exposed
        transfer(K::TransferEnd, 10, 0, Transfer::DeviceToHost),
        at(K::ComputeBegin, 10, kNoUnit, Phase::Optimizer),
        transfer(K::TransferBegin, 12, 1, Transfer::NvmeRead), // in flight under compute: hidden
        transfer(K::TransferBegin, 20, 0, Transfer::HostToDevice), // a copy inside compute: exposed
        transfer(K::TransferEnd, 25, 0, Transfer::HostToDevice),
        transfer(K::TransferWait, 40, 1, Transfer::NvmeRead), // the rank waits 40–50: exposed
        transfer(K::TransferEnd, 50, 1, Transfer::NvmeRead),
        transfer(K::TransferBegin, 55, 1,
                 Transfer::NvmeWrite), // drains past the compute: 80–90 exposed
        at(K::ComputeEnd, 80, kNoUnit, Phase::Optimizer),
        transfer(K::TransferEnd, 90, 1, Transfer::NvmeWrite),
        at(K::StepEnd, 100),
    };
    for (const Event& e : events)
        t.onEvent(e);
    ASSERT_EQ(t.steps().size(), 1u);
    const StepOverlap& o = t.steps()[0];
    EXPECT_EQ(o.transferUnionNs, 10u + 38u + 35u); // 0–10, 12–50, 55–90
    EXPECT_EQ(o.transferExposedNs, 10u + 5u + 10u + 10u);
    EXPECT_DOUBLE_EQ(o.transferFraction(), 0.35);
    EXPECT_EQ(o.commUnionNs, 0u);
    // Without transfers the fraction is 0.
    OverlapTracker none;
    for (const Event& e : {at(K::StepBegin, 0), at(K::ComputeBegin, 1, 0, Phase::Forward),
                           at(K::ComputeEnd, 9, 0, Phase::Forward), at(K::StepEnd, 10)})
        none.onEvent(e);
    ASSERT_EQ(none.steps().size(), 1u);
    EXPECT_EQ(none.steps()[0].transferFraction(), 0.0);
    const std::vector<StepOverlap> steps = {o, none.steps()[0], o};
    EXPECT_DOUBLE_EQ(summarize(steps).medianTransferFraction, 0.35);
}

} // namespace
} // namespace shardscope::train
