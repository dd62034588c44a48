// The run's values: applyEvent's open compute and collective spans close by the one span
// pairing (core/span_pairing.h), an End closes the span with its own key, never simply "the
// latest"; the final report handed on as the typed report; the handshake.
#include "core/error.h"
#include "replay/run_data.h"
#include "replay/stream_assembler.h"
#include "report/report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace shardscope;
using namespace shardscope::replay;

namespace {

Event compute(EventKind kind, std::int32_t unit, Phase phase) {
    Event e;
    e.kind = kind;
    e.unit = unit;
    e.phase = phase;
    return e;
}

Event collective(EventKind kind, std::int32_t unit, CollectiveOp op, std::uint64_t bytes = 0) {
    Event e;
    e.kind = kind;
    e.unit = unit;
    e.collective = op;
    e.bytes = bytes;
    return e;
}

} // namespace

TEST(RunData, RecomputeEndKeepsTheEnclosingBackward) {
    RankState s;
    applyEvent(s, compute(EventKind::ComputeBegin, 3, Phase::Backward));
    applyEvent(s, compute(EventKind::ComputeBegin, 3, Phase::Recompute));
    EXPECT_EQ(s.phase, Phase::Recompute);
    applyEvent(s, compute(EventKind::ComputeEnd, 3, Phase::Recompute));
    EXPECT_EQ(s.phase, Phase::Backward);
    EXPECT_EQ(s.computeUnit, 3);
    applyEvent(s, compute(EventKind::ComputeEnd, 3, Phase::Backward));
    EXPECT_EQ(s.phase, Phase::None);
    EXPECT_EQ(s.computeUnit, kNoUnit);
}

TEST(RunData, ComputeEndMatchingNothingClosesNothing) {
    RankState s;
    applyEvent(s, compute(EventKind::ComputeBegin, 2, Phase::Forward));
    applyEvent(s, compute(EventKind::ComputeEnd, 1, Phase::Forward)); // a stream cut at its start
    EXPECT_EQ(s.phase, Phase::Forward);
    EXPECT_EQ(s.computeUnit, 2);
}

TEST(RunData, InnerCollectiveEndShowsTheOuterAgain) {
    RankState s;
    applyEvent(s, collective(EventKind::CollectiveBegin, 4, CollectiveOp::AllGather, 100));
    applyEvent(s, collective(EventKind::CollectiveBegin, 2, CollectiveOp::ReduceScatter, 50));
    applyEvent(s, collective(EventKind::CollectiveEnd, 2, CollectiveOp::ReduceScatter));
    EXPECT_EQ(s.collective, CollectiveOp::AllGather);
    EXPECT_EQ(s.collectiveUnit, 4);
    EXPECT_EQ(s.collectiveBytes, 100u);
}

TEST(RunData, OuterCollectiveEndingFirstKeepsTheCurrentOne) {
    RankState s;
    applyEvent(s, collective(EventKind::CollectiveBegin, 4, CollectiveOp::AllGather, 100));
    applyEvent(s, collective(EventKind::CollectiveBegin, 2, CollectiveOp::ReduceScatter, 50));
    // The prefetched all-gather ends while the reduce-scatter is still running.
    applyEvent(s, collective(EventKind::CollectiveEnd, 4, CollectiveOp::AllGather));
    EXPECT_EQ(s.collective, CollectiveOp::ReduceScatter);
    EXPECT_EQ(s.collectiveUnit, 2);
    EXPECT_EQ(s.collectiveBytes, 50u);
    EXPECT_EQ(s.outerCollective, CollectiveOp::None);
    applyEvent(s, collective(EventKind::CollectiveEnd, 2, CollectiveOp::ReduceScatter));
    EXPECT_EQ(s.collective, CollectiveOp::None);
    EXPECT_EQ(s.collectiveUnit, kNoUnit);
}

// The final report reaches the pages as the typed report the worker wrote (report/report.h),
// read by the one report reader: exposed communication per rank, a CUDA rank's device.
TEST(RunData, AssemblerHandsOnTheTypedReport) {
    report::RunReport typed;
    typed.worldSize = 3;
    typed.steps = 3;
    typed.losses = {4.5, 4.3};
    typed.exposedCommFraction = 0.47;
    typed.ranks.resize(3);
    for (int i = 0; i < 3; ++i)
        typed.ranks[static_cast<std::size_t>(i)].rank = i;
    typed.ranks[0].exposedComm = {0.47, {0.5, 0.47, 0.4}, 2400, 1300, 2800};
    typed.ranks[1].exposedComm = {0.0625, {0.07, 0.0625}, 0, 0, 0};
    typed.ranks[1].device = report::DeviceMemory{};
    typed.ranks[1].device->name = "cuda:0 (Test GPU)";
    typed.ranks[1].device->poolReservedHighBytes = 4096;
    typed.ranks[1].device->outsideLedgerBytes = 512;
    typed.commBytesPerStep = {{"all_gather", 1500.5}}; // per-step values may be fractional
    const std::string json = report::toJson(typed).dump();
    {
        StreamAssembler assembler;
        assembler.consume(protocol::Report{json});
        const StreamAssembler::Output out = assembler.take();
        ASSERT_TRUE(out.report);
        EXPECT_TRUE(out.reportProblem.empty()) << out.reportProblem;
        EXPECT_EQ(*out.report, typed);
        EXPECT_EQ(out.report->ranks[0].exposedComm.fractionPerStep,
                  (std::vector<double>{0.5, 0.47, 0.4}));
        EXPECT_FALSE(out.report->ranks[0].device.has_value());
        ASSERT_TRUE(out.report->ranks[1].device.has_value());
        EXPECT_EQ(out.report->ranks[1].device->name, "cuda:0 (Test GPU)");
        EXPECT_EQ(out.report->commBytesPerStep[0].second, 1500.5);
    }
    // In a recording the report is a summary beside the events: a report from before reports
    // carried a schema still lets the run replay, and the assembler says why it has no report.
    nlohmann::json old = nlohmann::json::parse(json);
    old.erase("schema");
    StreamAssembler assembler;
    assembler.consume(protocol::Report{old.dump()});
    const StreamAssembler::Output out = assembler.take();
    EXPECT_FALSE(out.report);
    EXPECT_NE(out.reportProblem.find("report has no schema field"), std::string::npos)
        << out.reportProblem;
    EXPECT_NE(out.reportProblem.find("re-run to regenerate"), std::string::npos)
        << out.reportProblem;
}

// The handshake says how the ranks ran.
TEST(RunData, RunInfoSaysHowTheRanksRan) {
    const RunInfo info =
        parseRunInfo(R"({"strategy":"zero3","backend":"cuda","shared_device":true})", 2);
    EXPECT_EQ(info.backend, "cuda");
    EXPECT_TRUE(info.sharedDevice);
    EXPECT_FALSE(parseRunInfo("{}", 2).sharedDevice);
}
