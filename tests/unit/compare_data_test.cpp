// The compare table: reports as the worker writes them (report::toJson) read back as the typed
// reports the Compare page charts; which rank waits most; parity against DDP (bitwise equal,
// |Δ|, digest).
#include "core/error.h"
#include "replay/compare_data.h"
#include "sample_reports.h"

#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::replay;
using shardscope::testing::reportJson;
using shardscope::testing::typedReport;

TEST(CompareData, ParsesWorkerReports) {
    const std::vector<report::RunReport> one =
        parseCompareRuns(reportJson("zero3", 100, 5000, "abc"));
    ASSERT_EQ(one.size(), std::size_t{1});
    const report::RunReport& r = one[0];
    EXPECT_EQ(r.strategy, std::string("zero3"));
    EXPECT_EQ(r.worldSize, 4);
    EXPECT_EQ(r.ranks.size(), std::size_t{4});
    EXPECT_EQ(r.ranks[2].peakTotal, std::uint64_t{5002});
    EXPECT_EQ(r.peakMax(), std::uint64_t{5003});
    EXPECT_EQ(r.ranks[1].modelStateBytes[index(Category::AdamM)], std::uint64_t{200});
    EXPECT_EQ(report::total(r.commBytesPerStep), 4500.5);
    EXPECT_EQ(report::total(r.theory.commBytesPerStep), 4500.0);
    EXPECT_EQ(r.theory.predictedPeakBytes, std::uint64_t{5000});
    EXPECT_FALSE(r.maxAbsDeltaVsDdp);
    // One run report; shardscope-cli compare --json (app/cli/cmd_compare.cpp); errors name
    // the problem.
    EXPECT_EQ(parseCompareRuns(reportJson("zero2", 1, 2, "x")).size(), std::size_t{1});
    report::CompareReport both;
    both.ranks = 4;
    both.strategies = {typedReport("ddp", 400, 9000, "d"),
                       typedReport("zero3", 100, 5000, "d", 0.0)};
    const auto cli = parseCompareRuns(report::toJson(both).dump());
    EXPECT_EQ(cli.size(), std::size_t{2});
    EXPECT_EQ(cli[1].maxAbsDeltaVsDdp.value_or(-1), 0.0);
    EXPECT_THROW(parseCompareRuns("{\"runs\":[" + reportJson("ddp", 400, 9000, "d") + "]}"), Error);
    EXPECT_THROW(parseCompareRuns("[" + reportJson("zero2", 1, 2, "x") + "]"), Error);
    EXPECT_THROW(parseCompareRuns("not json"), Error);
}

TEST(CompareData, ParityAgainstDdp) {
    const std::vector<report::RunReport> runs = {
        typedReport("ddp", 400, 9000, "d1"), typedReport("zero1", 200, 7000, "d1"),
        typedReport("zero2", 150, 6000, "ff"), typedReport("zero3", 100, 5000, "ff", 0.0),
        typedReport("fsdp", 100, 5000, "ff", 2.5e-7)};
    EXPECT_EQ(parityOf(runs[0], runs).kind, Parity::Kind::Reference);
    EXPECT_EQ(parityOf(runs[1], runs).kind, Parity::Kind::DigestEqual);
    EXPECT_EQ(parityOf(runs[2], runs).kind, Parity::Kind::DigestDiffers);
    EXPECT_EQ(parityOf(runs[3], runs).kind, Parity::Kind::BitwiseEqual);
    const Parity fsdp = parityOf(runs[4], runs);
    EXPECT_EQ(fsdp.kind, Parity::Kind::Delta);
    EXPECT_EQ(fsdp.delta, 2.5e-7);
    EXPECT_EQ(parityOf(runs[1], {runs[1]}).kind, Parity::Kind::NoReference);
}

TEST(CompareData, ExposedRankIsTheRankThatWaitsMost) {
    report::RunReport r = typedReport("zero3", 100, 5000, "d");
    for (std::size_t i = 0; i < r.ranks.size(); ++i)
        r.ranks[i].exposedComm.fractionMedian = 0.1 * static_cast<double>(i);
    r.exposedCommFraction = 0.2;
    EXPECT_EQ(exposedRank(r), 2);
    r.exposedCommFraction = 0.25; // no rank's median: unknown
    EXPECT_EQ(exposedRank(r), -1);
}

// A badge compares only runs of one configuration: a 3-step DDP says nothing about a 10-step
// ZeRO-1, nor a DDP of another model, N, seed, precision, data or batch.
TEST(CompareData, ParityOnlyWithinOneConfiguration) {
    const report::RunReport ddp = typedReport("ddp", 400, 9000, "d1");
    report::RunReport zero1 = typedReport("zero1", 200, 7000, "other");
    zero1.steps = 10;
    EXPECT_FALSE(comparable(ddp, zero1));
    EXPECT_EQ(parityOf(zero1, {ddp, zero1}).kind, Parity::Kind::NoComparableReference);
    const auto differsIn = [&ddp](auto change) {
        report::RunReport r = typedReport("zero3", 100, 5000, "d1");
        EXPECT_TRUE(comparable(ddp, r));
        change(r);
        return !comparable(ddp, r) &&
               parityOf(r, {ddp, r}).kind == Parity::Kind::NoComparableReference;
    };
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.model = "small"; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.paramCount = 7; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.worldSize = 2; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.seed = 3; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.precision = "fp32"; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.data = "corpus.txt"; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.microBatch = 2; }));
    EXPECT_TRUE(differsIn([](report::RunReport& r) { r.gradAccum = 4; }));
    // A comparable DDP among others is found; the groups keep the order of first appearance.
    report::RunReport ddp10 = typedReport("ddp", 400, 9000, "other");
    ddp10.steps = 10;
    const std::vector<report::RunReport> all = {ddp, zero1, ddp10};
    EXPECT_EQ(parityOf(zero1, all).kind, Parity::Kind::DigestEqual);
    EXPECT_EQ(configurationGroups(all), (std::vector<std::vector<std::size_t>>{{0}, {1, 2}}));
}
