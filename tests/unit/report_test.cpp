// What a rank sends rank 0 (RankResult) survives the trip, and the report shows the exposed
// communication and a CUDA rank's device memory under the documented keys.
#include "core/error.h"
#include "train/report.h"
#include "train/run_config.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace shardscope::train {
namespace {

RankResult sample(std::int32_t rank, bool cuda) {
    RankResult r;
    r.rank = rank;
    r.peak.at(Category::Activation, Tier::Device) = 1234;
    r.peakTotal = 5678;
    r.modelStates.at(Category::ParamShard, Tier::Device) = 42;
    r.comm.calls[1] = 3;
    r.comm.sentBytes[1] = 300;
    r.overlap = {{1000, 400, 100, 0, 0}, {1000, 500, 300, 50, 20}, {2000, 600, 200, 700, 300}};
    r.overlap[2].workWindowNs = 1500; // a pipeline stage's work: 1200 ns of it in 1500
    r.overlap[2].workNs = 1200;
    r.overlap[2].forwardNs = 500;
    r.overlap[2].backwardNs = 700;
    if (cuda) {
        DeviceMemory d;
        d.name = "cuda:0 (test GPU)";
        d.ordinal = 0;
        d.ledgerPeakBytes = 5678;
        d.poolUsedBytes = 4096;
        d.poolUsedHighBytes = 8192;
        d.poolReservedBytes = 1 << 20;
        d.poolReservedHighBytes = 2 << 20;
        d.deviceTotalBytes = 80ull << 30;
        d.deviceUsedBytes = 3ull << 30;
        d.outsideLedgerBytes = 500ull << 20;
        d.declaredWorkspaceBytes = 96ull << 20;
        r.device = d;
    }
    return r;
}

TEST(trainReport, RankResultRoundTripsWithOverlapAndDeviceMemory) {
    for (bool cuda : {false, true}) {
        const RankResult r = sample(3, cuda);
        const std::string bytes = encodeRankResult(r);
        const RankResult back = decodeRankResult(bytes);
        EXPECT_EQ(back.rank, 3);
        EXPECT_EQ(back.peak, r.peak);
        EXPECT_EQ(back.peakTotal, r.peakTotal);
        EXPECT_EQ(back.modelStates, r.modelStates);
        EXPECT_EQ(back.comm.sentBytes, r.comm.sentBytes);
        ASSERT_EQ(back.overlap.size(), 3u);
        EXPECT_EQ(back.overlap[2].stepNs, 2000u);
        EXPECT_EQ(back.overlap[2].commUnionNs, 600u);
        EXPECT_EQ(back.overlap[2].exposedNs, 200u);
        EXPECT_EQ(back.overlap[2].transferUnionNs, r.overlap[2].transferUnionNs);
        EXPECT_EQ(back.overlap[2].transferExposedNs, r.overlap[2].transferExposedNs);
        EXPECT_EQ(back.overlap[2].workWindowNs, 1500u);
        EXPECT_EQ(back.overlap[2].workNs, 1200u);
        EXPECT_EQ(back.overlap[2].forwardNs, 500u);
        EXPECT_EQ(back.overlap[2].backwardNs, 700u);
        EXPECT_EQ(back.device, r.device);
        // Work beyond its window (or a window beyond the step) is corrupt, not a huge bubble.
        RankResult bad = r;
        bad.overlap[2].workNs = 1600;
        EXPECT_THROW(decodeRankResult(encodeRankResult(bad)), Error);
        // Every truncation is a Format error, never a crash or a partial result.
        for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
            try {
                decodeRankResult(bytes.substr(0, cut));
                ADD_FAILURE() << "decoded " << cut << " of " << bytes.size() << " bytes";
            } catch (const Error& e) {
                EXPECT_EQ(e.kind(), ErrorKind::Format);
            }
        }
        EXPECT_THROW(decodeRankResult(bytes + "x"), Error);
    }
}

TEST(trainReport, ReportShowsExposedCommunicationAndDeviceMemory) {
    RunOutcome o;
    o.config = parseRunConfig(
        std::vector<std::string>{"--model", "tiny", "--strategy", "zero3", "--steps", "3"}, 2);
    o.paramCount = 71900;
    o.losses = {4.0, 3.9, 3.8};
    o.stepMs = {1.0, 1.0, 2.0};
    o.ranks = {sample(0, false), sample(1, true)};
    o.ranks[1].overlap = {
        {1000, 900, 800, 500, 200}, {1000, 900, 700, 500, 100}, {1000, 900, 900, 500, 300}};
    const nlohmann::json j = buildReport(o);
    const auto& e0 = j["ranks"][0]["exposed_comm"];
    EXPECT_DOUBLE_EQ(e0["fraction_median"].get<double>(), 0.1); // 0.1, 0.3, 0.1
    EXPECT_EQ(e0["fraction_per_step"].size(), 3u);
    EXPECT_EQ(e0["comm_union_ns"], 1500);
    EXPECT_EQ(e0["exposed_ns"], 600);
    EXPECT_EQ(e0["step_ns"], 4000);
    EXPECT_FALSE(j["ranks"][0].contains("device")) << "CPU ranks have no device figures";
    EXPECT_DOUBLE_EQ(j["ranks"][1]["exposed_comm"]["fraction_median"].get<double>(), 0.8);
    EXPECT_DOUBLE_EQ(j["exposed_comm_fraction"].get<double>(), 0.8) << "the rank that waits most";
    const auto& t1 = j["ranks"][1]["exposed_transfer"];
    EXPECT_DOUBLE_EQ(t1["fraction_median"].get<double>(), 0.2);
    EXPECT_EQ(t1["fraction_per_step"].size(), 3u);
    EXPECT_EQ(t1["transfer_union_ns"], 1500);
    EXPECT_EQ(t1["exposed_ns"], 600);
    EXPECT_DOUBLE_EQ(j["ranks"][0]["exposed_transfer"]["fraction_median"].get<double>(),
                     0.02); // 0, 0.02, 0.15
    EXPECT_DOUBLE_EQ(j["exposed_transfer_fraction"].get<double>(), 0.2);
    const auto& d = j["ranks"][1]["device"];
    EXPECT_EQ(d["name"], "cuda:0 (test GPU)");
    EXPECT_EQ(d["ledger_peak_bytes"], 5678);
    EXPECT_EQ(d["pool_used_high_bytes"], 8192);
    EXPECT_EQ(d["pool_reserved_high_bytes"], 2 << 20);
    EXPECT_EQ(d["device_total_bytes"], 80ull << 30);
    EXPECT_EQ(d["device_used_bytes"], 3ull << 30);
    EXPECT_EQ(d["outside_ledger_bytes"], 500ull << 20);
    EXPECT_EQ(d["declared_workspace_bytes"], 96ull << 20);
    for (const char* key : {"ordinal", "pool_used_bytes", "pool_reserved_bytes"})
        EXPECT_TRUE(d.contains(key)) << key;
    EXPECT_EQ(j["config"]["backend"], "cpu");
    EXPECT_EQ(j["config"]["shared_device"], false);
    EXPECT_EQ(j["schema"], "shardscope.run/1");
}

// What the worker writes is what every reader gets back: the typed report survives JSON.
TEST(trainReport, ReportRoundTripsThroughTheReader) {
    RunOutcome o;
    o.config = parseRunConfig(
        std::vector<std::string>{"--model", "tiny", "--strategy", "fsdp", "--steps", "3"}, 2);
    o.paramCount = 71900;
    o.losses = {4.0, 3.9, 3.8};
    o.stepMs = {1.0, 1.0, 2.0};
    o.ranks = {sample(0, true), sample(1, false)};
    const report::RunReport typed = makeReport(o);
    const report::Parsed<report::RunReport> back = report::parseRunReport(buildReport(o).dump(2));
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, typed);
    EXPECT_EQ(back.value->ranks[0].device->ledgerPeakBytes, 5678u);
}

} // namespace
} // namespace shardscope::train
