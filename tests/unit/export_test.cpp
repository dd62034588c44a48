// Exports of a real recording (tests/data/golden_zero3_tiny_2r.sstrace), parsed back: Chrome
// trace-event JSON (phases, pids/tids, per-track monotonic times, matched B/E, flows with both
// ends inside slices, counters reaching the recorded peak) and the ledger CSV (per-rank maximum
// of the summed categories = the report's peak per rank); a broken recording through the real
// CLI: one line, exit 2, no output file.
#include "../support/cli_process.h"
#include "plan/pipeline.h"
#include "replay/timeline_index.h"
#include "trace_export/exports.h"
#include "trace_export/recording_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace {

namespace trace_export = shardscope::trace_export;
namespace fs = std::filesystem;

const std::string kGolden = SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace";

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "export_test_XXXXXX").string();
        path = mkdtemp(tmpl.data());
    }
    ~TempDir() { fs::remove_all(path); }
};

class exportGolden : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        rec_ = new trace_export::LoadedRecording(trace_export::loadRecording(kGolden, "test"));
    }
    static void TearDownTestSuite() {
        delete rec_;
        rec_ = nullptr;
    }
    static trace_export::LoadedRecording* rec_;
    TempDir dir_;
};
trace_export::LoadedRecording* exportGolden::rec_ = nullptr;

TEST_F(exportGolden, PerfettoJsonParsesBackAndNests) {
    const std::string out = (dir_.path / "trace.json").string();
    trace_export::ExportCounts counts;
    ASSERT_EQ(trace_export::writePerfetto(rec_->model, out, "--perfetto", counts), out);
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(out));
    ASSERT_TRUE(j["traceEvents"].is_array());
    const int world = rec_->model.worldSize();
    ASSERT_EQ(world, 2);
    struct Slice {
        double b, e;
    };
    std::map<std::pair<int, int>, std::vector<double>> open;    // (pid, tid) → begin stack
    std::map<std::pair<int, int>, double> last;                 // (pid, tid) → last B/E ts
    std::map<std::pair<int, int>, std::vector<Slice>> slices;   // closed
    std::map<int, double> livePeak;                             // pid → max "live total"
    std::map<std::uint64_t, std::vector<nlohmann::json>> flows; // id → its events
    std::set<int> pids;
    std::uint64_t begins = 0;
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e["ph"];
        ASSERT_TRUE(ph == "M" || ph == "B" || ph == "E" || ph == "C" || ph == "s" || ph == "t" ||
                    ph == "f")
            << e;
        const int pid = e["pid"];
        ASSERT_GE(pid, 1);
        ASSERT_LE(pid, world);
        pids.insert(pid);
        if (ph == "B" || ph == "E") {
            const std::pair key{pid, e["tid"].get<int>()};
            const double ts = e["ts"];
            if (last.count(key)) {
                EXPECT_GE(ts, last[key]) << "time goes back on " << key.first << "/" << key.second;
            }
            last[key] = ts;
            if (ph == "B") {
                open[key].push_back(ts);
                ++begins;
                // A slice of a unit names it; one of none (the optimizer, the norm's
                // all-reduce) is its kind alone.
                EXPECT_TRUE(e["args"].contains("unit") ||
                            e["name"].get<std::string>().find(' ') == std::string::npos)
                    << e;
                const std::string cat = e["cat"];
                if (cat == "communication") {
                    EXPECT_GT(e["args"]["algbw_GBps"].get<double>(), 0.0) << e;
                    EXPECT_TRUE(e["args"].contains("busbw_GBps"));
                    EXPECT_GT(e["args"]["bytes"].get<std::uint64_t>(), 0u);
                }
            } else {
                ASSERT_FALSE(open[key].empty()) << "an E without its B: " << e;
                slices[key].push_back({open[key].back(), ts});
                open[key].pop_back();
            }
        } else if (ph == "C" && e["name"] == "live total") {
            livePeak[pid] = std::max(livePeak[pid], e["args"]["bytes"].get<double>());
        } else if (ph == "s" || ph == "t" || ph == "f") {
            flows[e["id"].get<std::uint64_t>()].push_back(e);
        }
    }
    for (const auto& [key, stack] : open)
        EXPECT_TRUE(stack.empty()) << "unclosed B on " << key.first << "/" << key.second;
    EXPECT_EQ(pids.size(), 2u);
    EXPECT_EQ(begins, counts.slices);
    EXPECT_GT(counts.slices, 0u);
    // Every flow has one start and one finish, in time order, each inside a slice of its track.
    ASSERT_FALSE(flows.empty());
    EXPECT_EQ(flows.size(), counts.flows);
    for (const auto& [id, events] : flows) {
        ASSERT_EQ(events.size(), 2u) << "two ranks: s and f";
        EXPECT_EQ(events.front()["ph"], "s");
        EXPECT_EQ(events.back()["ph"], "f");
        EXPECT_NE(events.front()["pid"], events.back()["pid"]);
        EXPECT_LE(events.front()["ts"].get<double>(), events.back()["ts"].get<double>());
        for (const auto& e : events) {
            const auto& onTrack = slices[{e["pid"].get<int>(), e["tid"].get<int>()}];
            const double ts = e["ts"];
            EXPECT_TRUE(std::any_of(onTrack.begin(), onTrack.end(),
                                    [&](const Slice& s) { return s.b <= ts && ts <= s.e; }))
                << "flow end outside any slice: " << e;
        }
    }
    // The live-total counters reach each rank's recorded peak.
    ASSERT_TRUE(rec_->report);
    for (int r = 0; r < world; ++r)
        EXPECT_EQ(static_cast<std::uint64_t>(livePeak[r + 1]),
                  rec_->report->ranks[static_cast<std::size_t>(r)].peakTotal)
            << r;
}

TEST_F(exportGolden, CsvPerRankMaximumIsTheRecordedPeak) {
    const std::string out = (dir_.path / "ledger.csv").string();
    trace_export::ExportCounts counts;
    ASSERT_EQ(trace_export::writeLedgerCsv(rec_->model, out, "--csv", counts), out);
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "time_ns,rank,category,tier,unit,live_bytes");
    // As a spreadsheet would: the latest live bytes per (category, tier), summed per rank.
    std::map<int, std::map<std::string, std::uint64_t>> live;
    std::map<int, std::uint64_t> peak;
    std::map<int, std::uint64_t> lastTime;
    std::uint64_t rows = 0;
    while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string time, rank, category, tier, unit, bytes;
        std::getline(ss, time, ',');
        std::getline(ss, rank, ',');
        std::getline(ss, category, ',');
        std::getline(ss, tier, ',');
        std::getline(ss, unit, ',');
        std::getline(ss, bytes, ',');
        const int r = std::stoi(rank);
        ASSERT_TRUE(r == 0 || r == 1) << line;
        EXPECT_GE(std::stoull(time), lastTime[r]) << line;
        lastTime[r] = std::stoull(time);
        live[r][category + "/" + tier] = std::stoull(bytes);
        std::uint64_t sum = 0;
        for (const auto& [k, v] : live[r])
            sum += v;
        peak[r] = std::max(peak[r], sum);
        ++rows;
    }
    EXPECT_EQ(rows, counts.rows);
    ASSERT_TRUE(rec_->report);
    for (int r = 0; r < 2; ++r)
        EXPECT_EQ(peak[r], rec_->report->ranks[static_cast<std::size_t>(r)].peakTotal) << r;
}

// The CLI stops an export on SIGINT / SIGTERM by throwing from the poll; the file being written
// must vanish with its temporary (a killed export left a 56 MB "<target>.<pid>-<n>.partial").
TEST_F(exportGolden, AnExportStoppedByItsPollLeavesNoFile) {
    struct Stop {};
    int polls = 0;
    const auto stop = [&polls] {
        ++polls;
        throw Stop{};
    };
    trace_export::ExportCounts counts;
    EXPECT_THROW(trace_export::writePerfetto(rec_->model, (dir_.path / "trace.json").string(),
                                             "--perfetto", counts, stop),
                 Stop);
    EXPECT_THROW(trace_export::writeLedgerCsv(rec_->model, (dir_.path / "ledger.csv").string(),
                                              "--csv", counts, stop),
                 Stop);
    EXPECT_EQ(polls, 2);
    EXPECT_TRUE(fs::is_empty(dir_.path));
}

// A recording with every kind of transfer (tests/data/offload_nvme_tiny_2r.sstrace): the
// timeline index puts them on the transfers row, and the Perfetto export has a "transfers" thread
// per rank whose slices carry direction, bytes, GB/s and unit, adding up to the recorded bytes.
const std::string kOffload = SHARDSCOPE_SOURCE_DIR "/tests/data/offload_nvme_tiny_2r.sstrace";

TEST(exportTransfers, TimelineRowAndPerfettoTrackPerRank) {
    namespace replay = shardscope::replay;
    using shardscope::EventKind;
    const trace_export::LoadedRecording rec = trace_export::loadRecording(kOffload, "test");
    const int world = rec.model.worldSize();
    ASSERT_EQ(world, 2);
    // What the events say: bytes per (rank, direction name).
    std::map<std::pair<int, std::string>, std::uint64_t> recorded;
    for (std::uint64_t i = 0; i < rec.model.eventCount(); ++i) {
        const shardscope::Event& e = rec.model.event(i);
        if (e.kind == EventKind::TransferBegin)
            recorded[{e.rank, std::string(shardscope::transferName(e.transfer))}] += e.bytes;
    }
    replay::TimelineIndex index;
    index.update(rec.model);
    ASSERT_TRUE(index.hasTransfers());
    for (int r = 0; r < world; ++r) {
        const auto& row =
            index.lane(r).rows[static_cast<std::size_t>(replay::TimelineRow::Transfers)];
        std::set<replay::SpanKind> kinds;
        for (const replay::TimelineSpan& s : row) {
            EXPECT_TRUE(replay::isTransfer(s.kind));
            EXPECT_EQ(rec.model.event(s.beginEvent).kind, EventKind::TransferBegin);
            EXPECT_EQ(rec.model.event(s.endEvent).kind, EventKind::TransferEnd);
            EXPECT_EQ(rec.model.event(s.endEvent).transfer, rec.model.event(s.beginEvent).transfer);
            EXPECT_GT(s.bytes, 0u);
            kinds.insert(s.kind);
        }
        EXPECT_EQ(kinds.size(), 4u) << "rank " << r << ": every direction";
    }

    TempDir dir;
    const std::string out = (dir.path / "trace.json").string();
    trace_export::ExportCounts counts;
    ASSERT_EQ(trace_export::writePerfetto(rec.model, out, "--perfetto", counts), out);
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(out));
    std::set<std::pair<int, int>> transferThreads; // (pid, tid) named "transfers…"
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name" &&
            e["args"]["name"].get<std::string>().rfind("transfers", 0) == 0)
            transferThreads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    std::set<int> pids;
    for (const auto& [pid, tid] : transferThreads)
        pids.insert(pid);
    EXPECT_EQ(pids, (std::set<int>{1, 2})) << "a transfers track per rank";
    std::map<std::pair<int, std::string>, std::uint64_t> exported;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "B" || e["cat"] != "transfers") continue;
        const int pid = e["pid"].get<int>();
        EXPECT_TRUE(transferThreads.count({pid, e["tid"].get<int>()})) << e.dump();
        const auto& a = e["args"];
        ASSERT_TRUE(a.contains("direction") && a.contains("bytes") && a.contains("GBps") &&
                    a.contains("unit"))
            << e.dump();
        EXPECT_GE(a["GBps"].get<double>(), 0.0);
        EXPECT_FALSE(a["unit"].get<std::string>().empty());
        exported[{pid - 1, a["direction"].get<std::string>()}] += a["bytes"].get<std::uint64_t>();
    }
    EXPECT_EQ(exported, recorded);
    EXPECT_EQ(exported.size(), 8u) << "4 directions on each of 2 ranks";
    // The optimizer belongs to no unit: its slice is "optimizer", never "optimizer unit -1".
    int optimizers = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "B") continue;
        EXPECT_EQ(e["name"].get<std::string>().find("unit -1"), std::string::npos) << e.dump();
        if (e["name"] == "optimizer") ++optimizers;
    }
    EXPECT_GT(optimizers, 0);
}

TEST(exportCli, BrokenRecordingIsOneLineAndWritesNothing) {
    TempDir dir;
    const std::string golden = shardscope::testing::slurpFile(kGolden);
    const fs::path truncated = dir.path / "cut.sstrace", garbage = dir.path / "junk.sstrace";
    { std::ofstream(truncated, std::ios::binary) << golden.substr(0, golden.size() / 2 + 7); }
    { std::ofstream(garbage, std::ios::binary) << "not a recording at all, just text\n"; }
    const std::string json = (dir.path / "out.json").string(),
                      csv = (dir.path / "out.csv").string();
    for (const fs::path& bad : {truncated, garbage, dir.path / "missing.sstrace"}) {
        const shardscope::testing::CliResult r = shardscope::testing::runProgram(
            SHARDSCOPE_BIN_DIR "/shardscope-cli",
            {"export", bad.string(), "--perfetto", json, "--csv", csv});
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_EQ(r.out, "");
        ASSERT_FALSE(r.err.empty());
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
        EXPECT_NE(r.err.find(bad.filename().string()), std::string::npos) << r.err;
    }
    // Nothing but the inputs is left in the folder (no output, no temporary file).
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(dir.path))
        left.insert(e.path().filename().string());
    EXPECT_EQ(left, (std::set<std::string>{"cut.sstrace", "junk.sstrace"}));
    // And a good one through the CLI.
    const shardscope::testing::CliResult ok = shardscope::testing::runProgram(
        SHARDSCOPE_BIN_DIR "/shardscope-cli", {"export", kGolden, "--csv", csv});
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    EXPECT_TRUE(fs::exists(csv));
}

// A pipelined run's recording names the micro-batch of every forward and backward: each stage
// ran its schedule's ops in the schedule's order (plan::pipeOrder), op by op; the update belongs
// to no micro-batch; the timeline's bubble (idle inside each step's work) lies between the
// stage's compute spans, never over one.
TEST(exportCli, APipelinesRecordingNamesEachOpsMicroBatchInScheduleOrder) {
    using namespace shardscope;
    TempDir dir;
    for (const char* schedule : {"gpipe", "1f1b"}) {
        const std::string trace = (dir.path / (std::string(schedule) + ".sstrace")).string();
        const shardscope::testing::CliResult r = shardscope::testing::runProgram(
            SHARDSCOPE_BIN_DIR "/shardscope-cli",
            {"run", "--model", "tiny", "--strategy", "zero2", "--shared-device", "--ranks", "4",
             "--pp", "2", "--pp-schedule", schedule, "--grad-accum", "4", "--steps", "2", "--trace",
             trace});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const trace_export::LoadedRecording rec = trace_export::loadRecording(trace, "test");
        const replay::ReplayModel& model = rec.model;
        const auto kind = *plan::pipeScheduleFromFlag(schedule);
        const auto order = plan::pipeOrder(kind, {2, 4, 1});
        for (int rank = 0; rank < 4; ++rank) {
            const int stage = rank / 2;
            const plan::StageUnits units = plan::stageUnits(2, 2, stage);
            for (std::size_t step = 0; step < model.stepCount(); ++step) {
                std::vector<plan::PipeOp> ran;
                for (const Event& e : model.step(step).events) {
                    if (e.rank != rank || e.kind != EventKind::ComputeBegin) continue;
                    if (e.phase == Phase::Optimizer) {
                        EXPECT_EQ(e.microBatch, -1);
                    }
                    if (e.phase != Phase::Forward && e.phase != Phase::Backward) continue;
                    EXPECT_GE(e.microBatch, 0);
                    EXPECT_LT(e.microBatch, 4);
                    // One op = the stage's units in order: its first unit opens it.
                    if (e.phase == Phase::Forward && e.unit == units.first)
                        ran.push_back({plan::PipeOpKind::Forward, e.microBatch, 0});
                    if (e.phase == Phase::Backward && e.unit == units.end - 1)
                        ran.push_back({plan::PipeOpKind::Backward, e.microBatch, 0});
                }
                EXPECT_EQ(ran, order[static_cast<std::size_t>(stage)])
                    << schedule << " rank " << rank << " step " << step;
            }
        }
        replay::TimelineIndex index;
        index.update(model);
        for (int rank = 0; rank < 4; ++rank) {
            const replay::TimelineLane& lane = index.lane(rank);
            std::uint64_t sum = 0;
            for (const replay::IdleGap& g : lane.idle) {
                EXPECT_LT(g.beginNs, g.endNs);
                sum += g.endNs - g.beginNs;
                for (const replay::TimelineSpan& s :
                     lane.rows[static_cast<std::size_t>(replay::TimelineRow::Compute)])
                    if (s.depth == 0 && (s.kind == replay::SpanKind::Forward ||
                                         s.kind == replay::SpanKind::Backward)) {
                        EXPECT_TRUE(s.endNs <= g.beginNs || s.beginNs >= g.endNs)
                            << "a gap over a compute span, rank " << rank;
                    }
            }
            EXPECT_EQ(sum, lane.idleNs);
            ASSERT_TRUE(lane.idleFraction());
            EXPECT_LT(*lane.idleFraction(), 1.0);
            // The first stage waits for its first gradient at least: a bubble there is physics.
            if (rank < 2) {
                EXPECT_GT(lane.idleNs, 0u) << schedule << " rank " << rank;
            }
        }
    }
}

} // namespace
