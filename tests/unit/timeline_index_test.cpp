// The timeline's index: spans per lane match the recorded events (also when indexed step by
// step), the memory curve keeps every peak, and the bandwidths follow nccl-tests.
#include "replay/timeline_index.h"
#include "timeline_test_recording.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::replay;

TEST(TimelineIndex, indexHoldsEverySpan) {
    testrec::Spec spec;
    spec.steps = 2;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    TimelineIndex index;
    index.update(*model);
    EXPECT_EQ(index.laneCount(), 4);
    const auto steps = static_cast<std::size_t>(spec.steps),
               units = static_cast<std::size_t>(spec.units);
    for (int r = 0; r < 4; ++r) {
        const TimelineLane& lane = index.lane(r);
        // forward + backward per unit, one optimizer span per step
        EXPECT_EQ(lane.rows[0].size(), steps * (2 * units + 1));
        // two all-gathers and one reduce-scatter per unit, the norm's all-reduce
        EXPECT_EQ(lane.rows[1].size(), steps * (3 * units + 1));
        // param_full lives twice per unit per step (forward and backward)
        EXPECT_EQ(lane.rows[2].size(), steps * 2 * units);
        for (std::size_t row = 0; row < kTimelineRowCount; ++row)
            EXPECT_TRUE(std::is_sorted(lane.rows[row].begin(), lane.rows[row].end(),
                                       [](const TimelineSpan& a, const TimelineSpan& b) {
                                           return a.beginNs < b.beginNs;
                                       }));
        // Every span's events are the rank's own, opening and closing it.
        for (const TimelineSpan& s : lane.rows[1]) {
            EXPECT_EQ(model->event(s.beginEvent).kind, EventKind::CollectiveBegin);
            EXPECT_EQ(model->event(s.endEvent).kind, EventKind::CollectiveEnd);
            EXPECT_EQ(model->event(s.beginEvent).rank, r);
        }
        for (const TimelineSpan& s : lane.rows[2]) {
            EXPECT_EQ(model->event(s.beginEvent).category, Category::ParamFull);
            EXPECT_EQ(s.bytes, testrec::fullBytes(spec));
        }
    }
    // Incremental: indexing one step, then the next, gives the same spans.
    ReplayModel partial;
    partial.reset(model->info());
    partial.append({model->steps()[0]});
    TimelineIndex grown;
    grown.update(partial);
    partial.append({model->steps()[1]});
    grown.update(partial);
    EXPECT_EQ(grown.spanCount(), index.spanCount());
    EXPECT_EQ(grown.peakBytes(), index.peakBytes());
}

TEST(TimelineIndex, memoryCurveKeepsPeaks) {
    testrec::Spec spec;
    spec.steps = 50;
    const auto model = testrec::loadModel(testrec::makeRecording(spec));
    TimelineIndex index;
    index.update(*model);
    std::vector<MemColumn> cols;
    const TimeWindow w{0, static_cast<double>(index.endNs()) + 1, 300};
    memoryColumns(index.lane(1), w, 300, cols);
    std::uint64_t hi = 0;
    for (const MemColumn& c : cols)
        hi = std::max(hi, c.valid ? c.hi : 0);
    EXPECT_EQ(hi, index.lane(1).peakBytes);
    // The peak equals the ledger replay's.
    EXPECT_EQ(index.lane(1).peakBytes, model->steps().back()->endState[1].peakTotal);
}

TEST(TimelineIndex, bandwidthFollowsNcclTests) {
    // 1 MB in 1 ms: algbw 1 GB/s; AG/RS × (N−1)/N, all-reduce × 2(N−1)/N.
    EXPECT_DOUBLE_EQ(algBandwidth(1000000, 1000000), 1e9);
    EXPECT_DOUBLE_EQ(busBandwidth(SpanKind::AllGather, 1000000, 1000000, 4), 0.75e9);
    EXPECT_DOUBLE_EQ(busBandwidth(SpanKind::ReduceScatter, 1000000, 1000000, 4), 0.75e9);
    EXPECT_DOUBLE_EQ(busBandwidth(SpanKind::AllReduce, 1000000, 1000000, 4), 1.5e9);
    EXPECT_DOUBLE_EQ(busBandwidth(SpanKind::Broadcast, 1000000, 1000000, 4), 1e9);
    EXPECT_DOUBLE_EQ(algBandwidth(5, 0), 0.0);
    // A tensor-parallel all-reduce is its own kind on the communication row (its own colour),
    // with the all-reduce's factor over the TP group.
    EXPECT_EQ(spanKindOf(CollectiveOp::TpAllReduce), SpanKind::TpAllReduce);
    EXPECT_TRUE(isCollective(SpanKind::TpAllReduce));
    EXPECT_EQ(rowOf(SpanKind::TpAllReduce), TimelineRow::Comm);
    EXPECT_DOUBLE_EQ(busBandwidth(SpanKind::TpAllReduce, 1000000, 1000000, 2), 1e9);
}
