// shardscope-cli run/compare as a user runs them: real mpirun jobs, the JSON report and the
// recording, a rank killed with SIGKILL mid-run — reported within seconds, naming the rank and
// the step, with no process left behind — and the CLI itself stopped with SIGTERM or SIGHUP
// (as the GUI stops it), which must tear the whole job down and remove its private folder, or
// killed with SIGKILL, which must leave nothing running either. A rank stopped with SIGSTOP is
// named as the stuck one; a stopped mpirun after a complete run still yields the report;
// mpirun's own errors are its words or caught before launching; a local job listens on no
// address another machine can reach.
#include "cli_job_support.h"
#include "protocol/protocol.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using namespace shardscope::testing;

// Sends `signal` to the CLI in the middle of a 4-rank run: within 5 s no worker or mpirun of the
// job is left, its private stream folder is gone, and the CLI has exited non-zero with one line.
void signalTheCliMidRun(int signal, const std::string& marker) {
    const Proc p = start({"run", "--model", "tiny", "--ranks", "4", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker},
                         "signal" + std::to_string(signal));
    waitForSteps(p, 2);
    const auto job = processes(marker, {"shardscope-worker", "mpirun", "orterun"});
    ASSERT_GE(job.size(), 5u) << "mpirun and 4 ranks";
    // The private folder, from the --stream argument the CLI gave the workers.
    const std::smatch folder = [&] {
        std::smatch m;
        std::regex_search(job.front().cmd, m, std::regex(R"(--stream (\S+)/stream\.sock)"));
        return m;
    }();
    ASSERT_FALSE(folder.empty()) << job.front().cmd;
    const fs::path dir = folder[1].str();
    ASSERT_TRUE(fs::is_directory(dir));

    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(p.pid, signal), 0);
    const int code = finish(p);
    EXPECT_NE(code, 0);
    EXPECT_LT(code, 128) << "the CLI died of the signal instead of handling it";
    while (!processes(marker, {"shardscope-worker", "mpirun", "orterun"}).empty() &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    for (const Running& r : processes(marker, {"shardscope-worker", "mpirun", "orterun"})) {
        ADD_FAILURE() << "left running: " << r.cmd;
        ::kill(r.pid, SIGKILL);
    }
    EXPECT_FALSE(fs::exists(dir)) << dir;
    const std::string err = slurp(p.err);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("interrupted by SIG"), std::string::npos) << err;
    fs::remove(p.out);
    fs::remove(p.err);
}

// Socket inodes of `pid` ("socket:[123]" links under /proc/pid/fd).
std::vector<std::string> socketInodes(pid_t pid) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        const std::string target = fs::read_symlink(e.path(), ec).string();
        if (target.starts_with("socket:[")) out.push_back(target.substr(8, target.size() - 9));
    }
    return out;
}

} // namespace

TEST(cliJobs, RunWritesReportAndRecordingThatAgree) {
    const fs::path json = scratch("run.json"), trace = scratch("run.sstrace");
    const Proc p =
        start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero3", "--steps", "2",
               "--deterministic", "--json", json.string(), "--trace", trace.string()},
              "run");
    ASSERT_EQ(finish(p), 0) << slurp(p.err);
    const auto report = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(report["world_size"], 3);
    EXPECT_EQ(report["strategy"], "zero3");
    ASSERT_EQ(report["ranks"].size(), 3u);
    EXPECT_EQ(report["ranks"][1]["model_state_bytes"], report["theory"]["model_state_bytes"]);
    EXPECT_TRUE(report["comparison"]["model_states_equal"].get<bool>());
    const auto rec = shardscope::protocol::readRecording(trace.string());
    EXPECT_EQ(rec.handshakes.size(), 3u);
    EXPECT_EQ(rec.steps.size(), 2u);
    EXPECT_TRUE(rec.ended);
    ASSERT_TRUE(rec.reportJson);
    EXPECT_EQ(nlohmann::json::parse(*rec.reportJson)["param_digest"], report["param_digest"]);
    // Steps as people count them (core/step_number.h): the recording's steps 0 and 1 are the
    // progress lines' 1/2 and 2/2.
    EXPECT_EQ(rec.steps.front().step, 0);
    const std::string out = slurp(p.out);
    EXPECT_NE(out.find("step     1/2"), std::string::npos) << out;
    EXPECT_NE(out.find("step     2/2"), std::string::npos) << out;
    EXPECT_EQ(out.find("step     0/"), std::string::npos) << out;
    fs::remove(json);
    fs::remove(trace);
}

// A run that runs out of memory keeps the failing step's events in its recording: replayed, the
// rank's device ledger reaches what the failure says was live (the Ranks page shows the moment
// the allocation did not fit, not just the model states allocated before the step).
TEST(cliJobs, ARunOutOfMemoryRecordsTheMomentItFailed) {
    const fs::path trace = scratch("oom.sstrace");
    const Proc p = start({"run", "--model", "tiny", "--ranks", "1", "--strategy", "zero3",
                          "--steps", "2", "--capacity", "1300000", "--trace", trace.string()},
                         "oom");
    ASSERT_EQ(finish(p), 1) << slurp(p.err);
    shardscope::protocol::StreamDecoder decoder;
    decoder.feed(slurp(trace));
    std::int64_t live = 0, most = 0;
    std::optional<shardscope::protocol::Failure> failure;
    while (auto record = decoder.next()) {
        if (const auto* batch = std::get_if<shardscope::protocol::EventBatch>(&*record))
            for (const shardscope::Event& e : batch->events) {
                if (e.tier != shardscope::Tier::Device) continue;
                if (e.kind == shardscope::EventKind::Alloc)
                    live += static_cast<std::int64_t>(e.bytes);
                if (e.kind == shardscope::EventKind::Free)
                    live -= static_cast<std::int64_t>(e.bytes);
                most = std::max(most, live);
            }
        if (const auto* f = std::get_if<shardscope::protocol::Failure>(&*record)) failure = *f;
    }
    ASSERT_TRUE(failure) << slurp(p.err);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(failure->message, m, std::regex(R"(\((\d+) bytes live\))")))
        << failure->message;
    EXPECT_EQ(most, std::stoll(m[1].str())) << failure->message;
    fs::remove(trace);
}

TEST(cliJobs, CompareShowsBitwiseParityAndExactModelStates) {
    const fs::path json = scratch("compare.json");
    const Proc p = start({"compare", "--ranks", "2", "--strategies", "zero1,zero3", "--steps", "2",
                          "--json", json.string()},
                         "compare");
    ASSERT_EQ(finish(p), 0) << slurp(p.err);
    const auto out = slurp(p.out);
    EXPECT_NE(out.find("0 (bitwise)"), std::string::npos) << out;
    const auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["strategies"].size(), 3u); // ddp is always the baseline
    EXPECT_EQ(j["strategies"][0]["strategy"], "ddp");
    for (const auto& s : j["strategies"]) {
        EXPECT_EQ(s["max_abs_delta_vs_ddp"].get<double>(), 0.0) << s["strategy"];
        EXPECT_EQ(s["param_digest"], j["strategies"][0]["param_digest"]);
    }
    fs::remove(json);
}

TEST(cliJobs, InvalidConfigurationIsRejectedBeforeLaunch) {
    const Proc p = start({"run", "--model", "tiny", "--ranks", "4", "--strategy", "fsdp_hybrid",
                          "--hybrid-group", "3", "--steps", "1", "--seed", "424242"},
                         "invalid");
    EXPECT_EQ(finish(p), 2);
    const std::string err = slurp(p.err);
    EXPECT_NE(err.find("hybrid"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_TRUE(workers("424242").empty());
}

TEST(cliJobs, KilledRankEndsTheJobWithinTenSecondsNamingRankAndStep) {
    const std::string marker = "31337"; // the seed doubles as a tag for this job's processes
    const Proc p = start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker},
                         "kill");
    // Wait until the job is training (a few steps printed), then SIGKILL one rank.
    waitForSteps(p, 3);
    const auto pids = workers(marker);
    ASSERT_EQ(pids.size(), 3u);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(pids[1], SIGKILL), 0);
    const int code = finish(p);
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_NE(code, 0);
    EXPECT_LT(elapsed, std::chrono::seconds(10));
    const std::string err = slurp(p.err);
    std::smatch m;
    EXPECT_TRUE(
        std::regex_search(err, m, std::regex(R"(rank \d+ exited \(signal 9\) in step (\d+))")))
        << err;
    // The step counted from 1 in which the rank died: the one after the last step printed (the
    // GUI's ranks_page_test checks the same rule on its side).
    if (!m.empty()) {
        EXPECT_EQ(std::stoi(m[1]), countOf(slurp(p.out), "loss ") + 1) << slurp(p.out) << err;
    }
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_TRUE(workers(marker).empty()) << "orphan worker processes";
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(cliJobs, SigtermToTheCliTearsTheJobDown) {
    signalTheCliMidRun(SIGTERM, "31338");
}

TEST(cliJobs, SighupToTheCliTearsTheJobDown) {
    signalTheCliMidRun(SIGHUP, "31339");
}

TEST(cliJobs, KillNineOfTheCliLeavesNoProcessWithinFiveSeconds) {
    const std::string marker = "31340";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker},
                         "kill9");
    waitForSteps(p, 2);
    ASSERT_GE(processes(marker, {"shardscope-worker", "mpirun"}).size(), 4u);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(p.pid, SIGKILL), 0);
    EXPECT_EQ(finish(p), 128 + SIGKILL);
    expectNothingOfTheJobWithin(marker, t0, std::chrono::seconds(5));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    fs::remove(p.out);
    fs::remove(p.err);
}

// The nice value of a process (field 19 of /proc/PID/stat), or a value no process has.
int niceOf(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')'); // the command name may hold spaces
    if (close == std::string::npos) return 100;
    std::istringstream fields(stat.substr(close + 2));
    std::string f;
    for (int i = 3; i <= 19 && fields >> f; ++i)
        if (i == 19) return std::stoi(f);
    return 100;
}

// The supervising CLI only decodes and forwards the ranks' stream: it gives way to them (a
// higher nice value) while the ranks keep the priority they were started with.
TEST(cliJobs, TheSupervisorGivesWayToItsRanks) {
    const std::string marker = "31345";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker},
                         "nice");
    waitForSteps(p, 1);
    const pid_t rank0 = workerOfRank(marker, 0);
    ASSERT_GT(rank0, 0);
    const int ours = ::getpriority(PRIO_PROCESS, 0);
    EXPECT_EQ(niceOf(rank0), ours);
    EXPECT_EQ(niceOf(p.pid), std::min(ours + 5, 19));
    ::kill(p.pid, SIGTERM);
    finish(p);
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(5));
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(cliJobs, KillNineOfCompareLeavesNoProcessWithinFiveSeconds) {
    const std::string marker = "31341";
    const Proc p = start(
        {"compare", "--ranks", "2", "--strategies", "zero3", "--steps", "100000", "--seed", marker},
        "kill9compare");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (workers(marker).size() < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(workers(marker).size(), 2u);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(p.pid, SIGKILL), 0);
    finish(p);
    expectNothingOfTheJobWithin(marker, t0, std::chrono::seconds(5));
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(cliJobs, AStoppedRankIsNamedWithinTheStallTimeout) {
    const std::string marker = "31342";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker, "--stall-timeout", "4"},
                         "sigstop");
    waitForSteps(p, 3);
    const pid_t rank2 = workerOfRank(marker, 2);
    ASSERT_GT(rank2, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(rank2, SIGSTOP), 0);
    const int code = finish(p);
    EXPECT_EQ(code, 1);
    EXPECT_LT(std::chrono::steady_clock::now() - t0,
              std::chrono::seconds(4 + 5)); // the stall timeout + teardown
    const std::string err = slurp(p.err);
    EXPECT_TRUE(std::regex_search(
        err,
        std::regex(R"(rank 2 is stuck in step \d+: it (did not arrive at|stopped inside) the )")))
        << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove(p.out);
    fs::remove(p.err);
}

// DIR/latest's step (-1 when there is none).
std::int64_t latestStep(const fs::path& dir) {
    std::smatch m;
    const std::string text = slurp(dir / "latest");
    return std::regex_search(text, m, std::regex(R"(^step-(\d+))")) ? std::stoll(m[1]) : -1;
}

// The step folders of a checkpoint folder.
std::size_t stepFolders(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        n += e.path().filename().string().rfind("step-", 0) == 0;
    return n;
}

// The StepSummary records of a recording.
std::int64_t summariesIn(const fs::path& recording) {
    shardscope::protocol::StreamDecoder decoder;
    decoder.feed(slurp(recording));
    std::int64_t n = 0;
    while (auto record = decoder.next())
        n += std::holds_alternative<shardscope::protocol::StepSummary>(*record);
    return n;
}

// A stop freezes the job where it is: after SIGTERM to the CLI, or a stall on a stopped rank,
// no rank starts another step or commits another checkpoint (the stopped rank is never resumed
// to train on), and the ending, the recording and `latest` agree — the checkpoint at most one
// step ahead, since rank 0 commits a step's save before it sends that step's summary.
void nothingHappensAfterTheStop(bool stall, const std::string& marker) {
    const fs::path dir = scratch("stop-ck-" + marker),
                   recording = scratch("stop-" + marker + ".sstrace"),
                   ending = scratch("stop-" + marker + ".json");
    fs::remove_all(dir);
    std::vector<std::string> args = {"run",
                                     "--model",
                                     "tiny",
                                     "--ranks",
                                     "3",
                                     "--strategy",
                                     "zero3",
                                     "--steps",
                                     "100000",
                                     "--seed",
                                     marker,
                                     "--save",
                                     dir.string(),
                                     "--save-every",
                                     "1",
                                     "--trace",
                                     recording.string(),
                                     "--ending",
                                     ending.string()};
    if (stall) args.insert(args.end(), {"--stall-timeout", "3"});
    const Proc p = start(args, "stop" + marker);
    waitForSteps(p, 3);
    if (stall) {
        const pid_t rank1 = workerOfRank(marker, 1);
        ASSERT_GT(rank1, 0);
        ASSERT_EQ(::kill(rank1, SIGSTOP), 0);
    } else {
        ASSERT_EQ(::kill(p.pid, SIGTERM), 0);
    }
    EXPECT_EQ(finish(p), 1) << slurp(p.err);
    const std::int64_t latest = latestStep(dir);
    const std::size_t folders = stepFolders(dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(latestStep(dir), latest) << "a checkpoint was committed after the job ended";
    EXPECT_EQ(stepFolders(dir), folders);
    const nlohmann::json end = nlohmann::json::parse(slurp(ending));
    const std::int64_t completed = end.value("completed_steps", std::int64_t{-1});
    EXPECT_EQ(summariesIn(recording), completed) << end.dump();
    EXPECT_GE(latest, completed) << end.dump();
    EXPECT_LE(latest, completed + 1) << "the job went on after the stop: " << end.dump();
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove_all(dir);
    for (const fs::path& f : {recording, ending, p.out, p.err})
        fs::remove(f);
}

TEST(cliJobs, NothingHappensAfterASignalToTheCli) {
    nothingHappensAfterTheStop(false, "31350");
}

TEST(cliJobs, NothingHappensAfterAStall) {
    nothingHappensAfterTheStop(true, "31351");
}

// SIGTERM to mpirun, as a cluster scheduler sends it: the ending says so, at the step it
// happened (it was "launch_error" with an empty cause and no step).
TEST(cliJobs, ASchedulersSigtermToMpirunIsNamed) {
    const std::string marker = "31352";
    const fs::path ending = scratch("mpirun-term.json");
    const Proc p = start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker, "--ending", ending.string()},
                         "mpirunterm");
    waitForSteps(p, 3);
    const auto mpirun = processes(marker, {"mpirun", "orterun"});
    ASSERT_EQ(mpirun.size(), 1u);
    ASSERT_EQ(::kill(mpirun.front().pid, SIGTERM), 0);
    EXPECT_EQ(finish(p), 1);
    const std::string err = slurp(p.err);
    EXPECT_NE(err.find("terminated by SIGTERM from outside (sent to mpirun) in step "),
              std::string::npos)
        << err;
    const nlohmann::json end = nlohmann::json::parse(slurp(ending));
    EXPECT_EQ(end["kind"], "interrupted") << end.dump();
    EXPECT_EQ(end["signal"], SIGTERM) << end.dump();
    EXPECT_GE(end["step"].get<std::int64_t>(), 4) << end.dump();
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    for (const fs::path& f : {ending, p.out, p.err})
        fs::remove(f);
}

// The worker run directly (no CLI: under a user's own mpirun, or alone) keeps the CLI's promise:
// SIGINT, SIGTERM or SIGHUP end the run at a step boundary with a complete recording — its
// steps, a Failure record saying so, End — and no .partial left (it left only a .partial).
void signalTheWorker(int signal, bool threads, const std::string& tag) {
    const fs::path recording = scratch(tag + ".sstrace");
    std::vector<std::string> args = {"--model", "tiny",   "--strategy", "zero3",
                                     "--steps", "100000", "--trace",    recording.string()};
    if (threads) args.insert(args.end(), {"--shared-device", "--ranks", "2"});
    const Proc p = start(args, tag, std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-worker");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto partial = [&] {
        for (const auto& e : fs::directory_iterator(recording.parent_path()))
            if (e.path().filename().string().rfind(recording.filename().string() + ".", 0) == 0 &&
                e.path().extension() == ".partial" && fs::file_size(e.path()) > 100000)
                return true;
        return false;
    };
    while (!partial()) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(p.err);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(::kill(p.pid, signal), 0);
    EXPECT_EQ(finish(p), 128 + signal) << slurp(p.err);
    const std::string err = slurp(p.err);
    EXPECT_TRUE(std::regex_search(
        err, std::regex(R"(^shardscope-worker: interrupted by SIG[A-Z]+ after step \d+\n$)")))
        << err;
    EXPECT_FALSE(partial()) << "a .partial was left";
    shardscope::protocol::StreamDecoder decoder;
    decoder.feed(slurp(recording));
    std::vector<shardscope::protocol::Record> records;
    while (auto record = decoder.next())
        records.push_back(*record);
    ASSERT_GE(records.size(), 2u);
    EXPECT_TRUE(std::holds_alternative<shardscope::protocol::End>(records.back()));
    const auto* failure = std::get_if<shardscope::protocol::Failure>(&records[records.size() - 2]);
    ASSERT_NE(failure, nullptr);
    EXPECT_EQ(failure->rank, -1);
    EXPECT_NE(failure->message.find("interrupted by SIG"), std::string::npos) << failure->message;
    EXPECT_GE(summariesIn(recording), 1);
    for (const fs::path& f : {recording, p.out, p.err})
        fs::remove(f);
}

TEST(cliJobs, TheWorkerRunDirectlyKeepsACompleteRecordingOnSigterm) {
    signalTheWorker(SIGTERM, true, "wterm");
}

TEST(cliJobs, TheWorkerRunDirectlyKeepsACompleteRecordingOnSighupAlone) {
    signalTheWorker(SIGHUP, false, "whup");
}

TEST(cliJobs, AStoppedRankIsNamedWhenAHealthyRanksCollectiveTimesOut) {
    const std::string marker = "31343";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "3", "--strategy", "zero2",
                          "--steps", "100000", "--seed", marker, "--timeout-ms", "3000"},
                         "timeout");
    waitForSteps(p, 3);
    const pid_t rank1 = workerOfRank(marker, 1);
    ASSERT_GT(rank1, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(rank1, SIGSTOP), 0);
    EXPECT_EQ(finish(p), 1);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3 + 6));
    const std::string err = slurp(p.err);
    EXPECT_NE(err.find("rank 1 is stuck in step "), std::string::npos) << err;
    EXPECT_EQ(err.find("rank 0"), std::string::npos) << err;
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(cliJobs, AStoppedMpirunAfterACompleteRunStillWritesTheReport) {
    const std::string marker = "31344";
    const fs::path json = scratch("stopped_mpirun.json");
    const Proc p =
        start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "zero2", "--steps", "400",
               "--seed", marker, "--json", json.string(), "--stall-timeout", "20"},
              "stopmpirun");
    waitForSteps(p, 1);
    const auto runners = processes(marker, {"mpirun", "orterun"});
    ASSERT_EQ(runners.size(), 1u);
    ASSERT_EQ(::kill(runners.front().pid, SIGSTOP), 0);
    EXPECT_EQ(finish(p), 0) << slurp(p.err);
    EXPECT_TRUE(nlohmann::json::parse(slurp(json), nullptr, false).contains("param_digest"))
        << slurp(p.err);
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove(json);
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(cliJobs, MpirunErrorsAreCaughtBeforeLaunchOrShownInMpirunsWords) {
    {
        const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "ddp",
                              "--steps", "1", "--hostfile", "/nonexistent/hosts"},
                             "hostfile");
        EXPECT_EQ(finish(p), 2);
        const std::string err = slurp(p.err);
        EXPECT_NE(err.find("--hostfile: cannot read /nonexistent/hosts"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    {
        const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "ddp",
                              "--steps", "1", "--mpirun-args", "-x \"A=b"},
                             "quote");
        EXPECT_EQ(finish(p), 2);
        EXPECT_NE(slurp(p.err).find("--mpirun-args: unclosed"), std::string::npos) << slurp(p.err);
    }
    {
        const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "ddp",
                              "--steps", "1", "--mpirun-args", "--no-such-mpirun-flag"},
                             "badflag");
        EXPECT_NE(finish(p), 0);
        const std::string err = slurp(p.err);
        EXPECT_NE(err.find("--no-such-mpirun-flag"), std::string::npos) << err;
        EXPECT_EQ(err.find("reported to the developers"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
}

// During a local 2-rank run no socket of the job (mpirun, its ranks) listens on an address
// another machine can reach: bound to loopback, or in a network namespace whose only
// interface is loopback.
TEST(cliJobs, ALocalRunListensOnLoopbackOnly) {
    const std::string marker = "31345";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--strategy", "zero3",
                          "--steps", "100000", "--seed", marker},
                         "listen");
    waitForSteps(p, 2);
    const auto job = processes(marker, {"shardscope-worker", "mpirun", "orterun", "orted"});
    ASSERT_GE(job.size(), 3u);
    int listening = 0;
    for (const Running& r : job) {
        const std::string proc = "/proc/" + std::to_string(r.pid);
        std::vector<std::string> interfaces;
        {
            std::istringstream dev(slurp(proc + "/net/dev"));
            std::string line;
            std::getline(dev, line);
            std::getline(dev, line);
            while (std::getline(dev, line))
                interfaces.push_back(line.substr(0, line.find(':')));
        }
        const bool loopbackOnlyNamespace =
            std::all_of(interfaces.begin(), interfaces.end(), [](std::string n) {
                n.erase(0, n.find_first_not_of(' '));
                return n == "lo";
            });
        const std::vector<std::string> inodes = socketInodes(r.pid);
        for (const char* table : {"/net/tcp", "/net/tcp6"}) {
            std::istringstream rows(slurp(proc + table));
            std::string line;
            std::getline(rows, line); // header
            while (std::getline(rows, line)) {
                std::istringstream f(line);
                std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
                f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >>
                    timeout >> inode;
                if (state != "0A" || std::find(inodes.begin(), inodes.end(), inode) == inodes.end())
                    continue;
                ++listening;
                const std::string addr = local.substr(0, local.find(':'));
                const bool loopback =
                    addr == "0100007F" || addr == "00000000000000000000000001000000";
                EXPECT_TRUE(loopback || loopbackOnlyNamespace)
                    << r.cmd << " listens on " << local << " (" << table << ") in a namespace with "
                    << interfaces.size() << " interfaces";
            }
        }
    }
    EXPECT_GT(listening, 0) << "mpirun listens somewhere; the check must have seen it";
    ::kill(p.pid, SIGTERM);
    finish(p);
    fs::remove(p.out);
    fs::remove(p.err);
}
