// One span pairing for every reader of a rank's events: an End closes the most recent open
// Begin with the same key, so prefetched all-gathers that end out of order pair correctly in
// the pairing itself, the exposed-communication tracker's inputs, the timeline and the flows.
#include "core/span_pairing.h"
#include "protocol/protocol.h"
#include "replay/flow_state.h"
#include "replay/timeline_index.h"
#include "timeline_test_recording.h"

#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::replay;

namespace {

Event collective(EventKind kind, int rank, int unit, CollectiveOp op, std::uint64_t t) {
    Event e;
    e.kind = kind;
    e.rank = rank;
    e.unit = unit;
    e.collective = op;
    e.timeNs = t;
    e.step = 0;
    e.bytes = 1000;
    e.peers = 2;
    return e;
}

// Two ranks; each starts the all-gathers of units 1 and 2 (prefetch of two units), then unit 1's
// ends before unit 2's; a reduce-scatter of unit 0 begins and ends in between.
std::unique_ptr<ReplayModel> outOfOrderPrefetch() {
    std::string out;
    protocol::writeHeader(out);
    for (int r = 0; r < 2; ++r)
        protocol::writeRecord(out, protocol::Handshake{r, 2, "{}"});
    for (int r = 0; r < 2; ++r) {
        const std::uint64_t t = 1000 + static_cast<std::uint64_t>(r) * 10;
        std::vector<Event> events = {
            collective(EventKind::CollectiveBegin, r, 1, CollectiveOp::AllGather, t),
            collective(EventKind::CollectiveBegin, r, 2, CollectiveOp::AllGather, t + 100),
            collective(EventKind::CollectiveBegin, r, 0, CollectiveOp::ReduceScatter, t + 200),
            collective(EventKind::CollectiveEnd, r, 0, CollectiveOp::ReduceScatter, t + 300),
            collective(EventKind::CollectiveEnd, r, 1, CollectiveOp::AllGather, t + 400),
            collective(EventKind::CollectiveEnd, r, 2, CollectiveOp::AllGather, t + 500),
        };
        protocol::writeRecord(out, protocol::EventBatch{r, events});
    }
    protocol::writeRecord(out, protocol::StepSummary{0, 1.0, 600});
    protocol::writeRecord(out, protocol::End{});
    return testrec::loadModel(out);
}

} // namespace

TEST(SpanPairing, EndClosesTheMostRecentBeginWithItsKey) {
    SpanPairing<int> open;
    const Event ag1 = collective(EventKind::CollectiveBegin, 0, 1, CollectiveOp::AllGather, 0);
    const Event ag2 = collective(EventKind::CollectiveBegin, 0, 2, CollectiveOp::AllGather, 0);
    open.open(*spanKeyOf(ag1), 1);
    open.open(*spanKeyOf(ag2), 2);
    EXPECT_EQ(open.openCount(), 2u);
    // Unit 1's end closes unit 1's begin, not the innermost (unit 2).
    EXPECT_EQ(open.close(*spanKeyOf(
                  collective(EventKind::CollectiveEnd, 0, 1, CollectiveOp::AllGather, 0))),
              1);
    // Another kind on the same unit does not match.
    EXPECT_FALSE(open.close(
        *spanKeyOf(collective(EventKind::CollectiveEnd, 0, 2, CollectiveOp::ReduceScatter, 0))));
    EXPECT_EQ(open.close(*spanKeyOf(
                  collective(EventKind::CollectiveEnd, 0, 2, CollectiveOp::AllGather, 0))),
              2);
    EXPECT_EQ(open.openCount(), 0u);
    // An end with nothing open closes nothing.
    EXPECT_FALSE(open.close(*spanKeyOf(ag1)));
}

TEST(SpanPairing, KeysSeparateComputeCollectivesAndBuffers) {
    Event compute;
    compute.kind = EventKind::ComputeEnd;
    compute.unit = 3;
    compute.phase = Phase::Backward;
    Event recompute = compute;
    recompute.phase = Phase::Recompute;
    EXPECT_NE(*spanKeyOf(compute), *spanKeyOf(recompute));
    Event alloc;
    alloc.kind = EventKind::Alloc;
    alloc.unit = 3;
    alloc.category = Category::ParamFull;
    Event free = alloc;
    free.kind = EventKind::Free;
    EXPECT_EQ(*spanKeyOf(alloc), *spanKeyOf(free));
    EXPECT_EQ(spanKeyOf(alloc)->cls, SpanClass::Buffer);
    Event step;
    step.kind = EventKind::StepEnd;
    EXPECT_FALSE(spanKeyOf(step).has_value());
    EXPECT_TRUE(opensSpan(EventKind::Alloc));
    EXPECT_FALSE(opensSpan(EventKind::CollectiveEnd));
}

// A transfer pairs by (unit, direction): an NVMe read and write of one unit in flight together
// close separately; a wait mark inside a transfer neither opens nor closes anything.
TEST(SpanPairing, TransfersPairByUnitAndDirection) {
    Event read;
    read.kind = EventKind::TransferBegin;
    read.unit = 2;
    read.transfer = Transfer::NvmeRead;
    Event write = read;
    write.transfer = Transfer::NvmeWrite;
    Event readEnd = read;
    readEnd.kind = EventKind::TransferEnd;
    EXPECT_EQ(spanKeyOf(read)->cls, SpanClass::Transfer);
    EXPECT_EQ(*spanKeyOf(read), *spanKeyOf(readEnd));
    EXPECT_NE(*spanKeyOf(read), *spanKeyOf(write));
    EXPECT_TRUE(opensSpan(EventKind::TransferBegin));
    EXPECT_FALSE(opensSpan(EventKind::TransferEnd));
    Event wait = read;
    wait.kind = EventKind::TransferWait;
    EXPECT_FALSE(spanKeyOf(wait).has_value());
    SpanPairing<int> open;
    open.open(*spanKeyOf(read), 1);
    open.open(*spanKeyOf(write), 2);
    EXPECT_EQ(open.close(*spanKeyOf(readEnd)), 1);
    EXPECT_EQ(open.openCount(), 1u);
}

TEST(SpanPairing, TimelinePairsPrefetchesThatEndOutOfOrder) {
    const auto model = outOfOrderPrefetch();
    TimelineIndex index;
    index.update(*model);
    ASSERT_EQ(index.laneCount(), 2);
    for (int r = 0; r < 2; ++r) {
        const auto& comm = index.lane(r).rows[static_cast<std::size_t>(TimelineRow::Comm)];
        ASSERT_EQ(comm.size(), 3u);
        for (const TimelineSpan& s : comm) {
            const Event& begin = model->event(s.beginEvent);
            const Event& end = model->event(s.endEvent);
            EXPECT_EQ(begin.unit, s.unit);
            EXPECT_EQ(end.unit, s.unit);
            EXPECT_EQ(end.collective, begin.collective);
            EXPECT_EQ(end.kind, EventKind::CollectiveEnd);
        }
        // Unit 1's all-gather lasts 400 ns (begin 0, end 400), unit 2's 400 ns (100 … 500).
        EXPECT_EQ(comm[0].unit, 1);
        EXPECT_EQ(comm[0].durationNs(), 400u);
        EXPECT_EQ(comm[1].unit, 2);
        EXPECT_EQ(comm[1].durationNs(), 400u);
    }
}

TEST(SpanPairing, FlowGroupsEndWithTheirOwnCollective) {
    const auto model = outOfOrderPrefetch();
    FlowIndex index;
    index.reset(model->worldSize());
    index.update(*model);
    ASSERT_EQ(index.groups().size(), 3u);
    for (const CollectiveGroup& g : index.groups())
        for (int r = 0; r < 2; ++r) {
            const auto rr = static_cast<std::size_t>(r);
            ASSERT_LT(g.endEvent[rr], model->eventCount());
            const Event& end = model->event(g.endEvent[rr]);
            EXPECT_EQ(end.unit, g.unit);
            EXPECT_EQ(end.collective, g.op);
            EXPECT_EQ(end.rank, r);
        }
}
