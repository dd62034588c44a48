// Naming the stuck rank (progress records), finishing a complete run, and mpirun's own errors:
// its first meaningful line, its arguments split like a shell, a hostfile checked beforehand.
#include "core/error.h"
#include "core/event.h"
#include "launch/ending.h"
#include "launch/mpirun.h"
#include "launch/progress.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace shardscope;
using namespace shardscope::launch;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

RankProgress rankAt(int rank, std::uint64_t entered, bool inside, std::uint64_t heartbeat,
                    const char* what = "all-gather", std::int32_t unit = 2, std::int64_t step = 2) {
    RankProgress p;
    p.rank = rank;
    p.entered = entered;
    p.inside = inside;
    p.what = what;
    p.unit = unit;
    p.step = step;
    p.heartbeatNs = heartbeat;
    return p;
}

// Rank 2 of 3 stopped in step 3 (0-based 2) before the all-gather of block1 (unit 2) that
// ranks 0 and 1 wait in, beating.
std::vector<RankProgress> rank2Stopped(std::uint64_t now) {
    return {rankAt(0, 40, true, now), rankAt(1, 40, true, now),
            rankAt(2, 39, false, now - 10 * kSecond, "reduce-scatter", 1)};
}

JobEvidence stalledWith(std::vector<RankProgress> progress) {
    JobEvidence e;
    e.stalled = true;
    e.stallTimeout = std::chrono::seconds(10);
    e.lastCompleteStep = 1;
    e.progress = std::move(progress);
    e.unitNames = {"embedding", "block0", "block1", "head"};
    return e;
}

} // namespace

TEST(launchProgress, TheSilentRankIsStuckNotTheOneThatNoticed) {
    const std::uint64_t now = 100 * kSecond;
    const auto stuck = findStuckRank(rank2Stopped(now));
    ASSERT_TRUE(stuck);
    EXPECT_EQ(stuck->rank, 2);
    EXPECT_EQ(stuck->step, 2);
    EXPECT_EQ(stuck->what, "all-gather");
    EXPECT_EQ(stuck->unit, 2);
    EXPECT_FALSE(stuck->arrived);
    EXPECT_TRUE(stuck->alsoStuck.empty());
}

TEST(launchProgress, ARankStoppedInsideTheCollectiveIsFoundByItsHeartbeat) {
    const std::uint64_t now = 100 * kSecond;
    const auto stuck =
        findStuckRank({rankAt(0, 40, true, now), rankAt(1, 40, true, now - 5 * kSecond)});
    ASSERT_TRUE(stuck);
    EXPECT_EQ(stuck->rank, 1);
    EXPECT_TRUE(stuck->arrived);
}

TEST(launchProgress, AfterTeardownTheFewestCollectivesNameTheRank) {
    const std::uint64_t now = 100 * kSecond;
    auto ranks = rank2Stopped(now);
    for (auto& r : ranks)
        r.heartbeatNs = now - 20 * kSecond; // all stopped together
    const auto stuck = findStuckRank(ranks);
    ASSERT_TRUE(stuck);
    EXPECT_EQ(stuck->rank, 2);
}

TEST(launchProgress, NothingSinglesARankOut) {
    const std::uint64_t now = 100 * kSecond;
    EXPECT_FALSE(findStuckRank({rankAt(0, 40, true, now), rankAt(1, 40, true, now)}));
    EXPECT_FALSE(findStuckRank({rankAt(0, 40, true, now)}));
    EXPECT_FALSE(findStuckRank({}));
    // Read long after a teardown: the one that went silent first is still told apart.
    const auto late =
        findStuckRank({rankAt(0, 40, true, now), rankAt(1, 40, true, now - 5 * kSecond)});
    ASSERT_TRUE(late);
    EXPECT_EQ(late->rank, 1);
}

TEST(launchProgress, WriterAndReaderAgreeThroughTheFolder) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("shardscope_progress_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        ProgressWriter r0(dir.string(), 0), r1(dir.string(), 1);
        ASSERT_TRUE(r0.active());
        r0.entered("all-gather", 3, 4);
        r1.entered("all-gather", 3, 4);
        r1.left();
        r1.entered("reduce-scatter", 1, 4);
        r1.entered("reduce-scatter", 1, 4, false); // waiting again: not a new collective
        const auto read = readProgress(dir.string());
        ASSERT_EQ(read.size(), 2u);
        EXPECT_EQ(read[0].rank, 0);
        EXPECT_EQ(read[0].entered, 1u);
        EXPECT_TRUE(read[0].inside);
        EXPECT_EQ(read[0].what, "all-gather");
        EXPECT_EQ(read[0].unit, 3);
        EXPECT_EQ(read[0].step, 4);
        EXPECT_EQ(read[1].entered, 2u);
        EXPECT_EQ(read[1].what, "reduce-scatter");
        EXPECT_LE(read[1].heartbeatNs, monotonicNs());
    }
    EXPECT_FALSE(ProgressWriter("", 0).active());
    std::ofstream(dir / "progress.7") << "short";     // a rank killed while creating its record
    EXPECT_EQ(readProgress(dir.string()).size(), 2u); // ranks 0 and 1, not the short one
    std::filesystem::remove_all(dir);
}

TEST(launchEnding, AStallNamesTheStuckRankTheStepAndTheCollective) {
    const std::uint64_t now = 100 * kSecond;
    const JobEnding end = classify(stalledWith(rank2Stopped(now)));
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    ASSERT_TRUE(end.rank);
    EXPECT_EQ(*end.rank, 2);
    ASSERT_TRUE(end.step);
    EXPECT_EQ(*end.step, 3);
    EXPECT_EQ(describe(end), "rank 2 is stuck in step 3: it did not arrive at the all-gather of "
                             "block1; the job was torn down");
}

// Rank 0's all-gather timed out after `seconds` in step 3 (stream step 2); the records say rank 2
// went silent first.
JobEvidence rank0TimedOut(int seconds) {
    JobEvidence e = stalledWith(rank2Stopped(100 * kSecond));
    e.stalled = false;
    e.exited = true;
    e.exitCode = 1;
    e.failureRank = 0;
    e.failureStep = 2;
    e.failureMessage = "all-gather on rank 0 timed out after " + std::to_string(seconds) +
                       " s waiting for its peers";
    return e;
}

TEST(launchEnding, ACollectiveTimeoutOnAHealthyRankNamesTheRankThatDidNotArrive) {
    JobEvidence e = rank0TimedOut(30);
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    ASSERT_TRUE(end.rank);
    EXPECT_EQ(*end.rank, 2) << describe(end);
    // The same from the worker's stderr line alone.
    e.failureRank.reset();
    e.stderrText = "shardscope-worker: rank 0, step 3: all-gather on rank 0 timed out after 30 s "
                   "waiting for its peers\n";
    EXPECT_EQ(classify(e).rank.value_or(-1), 2);
    // Without records the rank that reported it stays the one named.
    e.progress.clear();
    EXPECT_EQ(classify(e).kind, EndingKind::Failed);
    EXPECT_EQ(classify(e).rank.value_or(-1), 0);
}

// The records say rank 2 went silent first (a rank starved on a loaded machine), but rank 1's
// process is stopped: the stopped one is named, from the failure record or the stderr line.
TEST(launchEnding, AStoppedProcessOutweighsAStaleHeartbeat) {
    JobEvidence e = rank0TimedOut(3);
    e.stoppedRanks = {1};
    JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    EXPECT_EQ(end.rank.value_or(-1), 1) << describe(end);
    EXPECT_NE(describe(end).find("rank 1 is stuck in step "), std::string::npos) << describe(end);
    EXPECT_NE(describe(end).find("stopped (SIGSTOP)"), std::string::npos) << describe(end);
    e.failureRank.reset();
    e.stderrText = "shardscope-worker: rank 0, step 3: all-gather on rank 0 timed out after 3 s "
                   "waiting for its peers\n";
    EXPECT_EQ(classify(e).rank.value_or(-1), 1);
    // The reporting rank's own process is never the stuck one.
    e.stoppedRanks = {0};
    EXPECT_EQ(classify(e).rank.value_or(-1), 2);
    // Stopped before its first step: it is stuck during setup, not in a step.
    e.stoppedRanks = {1};
    e.progress[1].step = -1;
    end = classify(e);
    EXPECT_EQ(end.rank.value_or(-1), 1);
    EXPECT_TRUE(end.setup && !end.step) << describe(end);
}

// Pipeline stages: stage 0 (rank 0, the stream's writer) is stopped, so stage 1's timeout is never
// reported; a stage posts sends the other does not enter, so the counts of collectives entered
// (rank 1 fewer) would name the waiting stage. Its process state names the stopped one.
TEST(launchEnding, AStoppedStreamWriterIsNamedWhenTheJobStalls) {
    JobEvidence e;
    e.stalled = true;
    e.stallTimeout = std::chrono::seconds(5);
    e.lastCompleteStep = 17;
    RankProgress stage0, stage1;
    stage0.rank = 0;
    stage0.entered = 90;
    stage0.what = "pipeline send";
    stage0.step = 18;
    stage0.heartbeatNs = 12 * kSecond;
    stage1.rank = 1;
    stage1.entered = 60;
    stage1.inside = true;
    stage1.what = "pipeline receive";
    stage1.step = 18;
    stage1.heartbeatNs = 13 * kSecond; // its timeout ended it: as silent as the stopped one now
    e.progress = {stage0, stage1};
    EXPECT_EQ(classify(e).rank.value_or(-1), 1) << "the counts alone name the waiting stage";
    e.stoppedRanks = {0};
    const JobEnding end = classify(e);
    EXPECT_EQ(end.rank.value_or(-1), 0) << describe(end);
    EXPECT_NE(describe(end).find("rank 0 is stuck in step 19: its process is stopped"),
              std::string::npos)
        << describe(end);
}

TEST(launchEnding, ACompleteRunWhoseMpirunHangsIsCompleted) {
    JobEvidence e;
    e.sawEnd = true;
    e.sawReport = true;
    e.lastCompleteStep = 4;
    e.hungAfterEnd = true;
    e.exitCode = 1; // torn down
    EXPECT_EQ(classify(e).kind, EndingKind::Completed);
    e.hungAfterEnd = false;
    e.stalled = true;
    EXPECT_EQ(classify(e).kind, EndingKind::Completed);
    e.failureRank = 1; // a failure after the report is still a failure
    EXPECT_EQ(classify(e).kind, EndingKind::Failed);
}

TEST(launchMpirun, MpirunsOwnMessageIsItsFirstMeaningfulLine) {
    const std::string hostfile =
        "--------------------------------------------------------------------------\n"
        "Open RTE was unable to open the hostfile:\n"
        "    /nonexistent\n"
        "Check to make sure the path and filename are correct.\n"
        "--------------------------------------------------------------------------\n"
        "--------------------------------------------------------------------------\n"
        "An internal error has occurred in ORTE:\n\n"
        "[[26002,0],0] FORCE-TERMINATE AT (null):1 - error "
        "../../../../../orte/mca/ras/base/ras_base_allocate.c(352)\n\n"
        "This is something that should be reported to the developers.\n"
        "--------------------------------------------------------------------------\n";
    EXPECT_EQ(mpirunMessage(hostfile), "Open RTE was unable to open the hostfile: /nonexistent");
    EXPECT_EQ(mpirunMessage(
                  "mpirun: Error: unknown option \"--bogus\"\nType 'mpirun --help' for usage.\n"),
              "unknown option \"--bogus\"");
    EXPECT_EQ(mpirunMessage("/usr/bin/mpirun: Error: unknown option \"--x\"\n"),
              "unknown option \"--x\"");
    EXPECT_EQ(mpirunMessage("\n---\n"), "");
    EXPECT_LE(mpirunMessage(std::string(1000, 'x')).size(), 300u);

    JobEvidence e;
    e.exited = true;
    e.exitCode = 1;
    e.stderrText = hostfile;
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::LaunchError);
    EXPECT_EQ(describe(end).find("reported to the developers"), std::string::npos) << describe(end);
    EXPECT_NE(describe(end).find("unable to open the hostfile: /nonexistent"), std::string::npos)
        << describe(end);
}

TEST(launchMpirun, ExtraArgumentsAreSplitLikeAShell) {
    EXPECT_EQ(splitMpirunArgs("  --mca  btl_tcp_if_include eth0 "),
              (std::vector<std::string>{"--mca", "btl_tcp_if_include", "eth0"}));
    EXPECT_EQ(splitMpirunArgs(R"(-x "A=b c" -x 'D=e f' g\ h)"),
              (std::vector<std::string>{"-x", "A=b c", "-x", "D=e f", "g h"}));
    EXPECT_THROW(splitMpirunArgs("-x \"A=b"), Error);
    EXPECT_THROW(splitMpirunArgs("--mca x y -np 3"), Error);
    EXPECT_TRUE(splitMpirunArgs("").empty());
}

TEST(launchMpirun, AHostfileIsCheckedBeforeLaunching) {
    EXPECT_THROW(checkHostfile("/nonexistent/hostfile"), Error);
    EXPECT_THROW(checkHostfile("/tmp"), Error);
    const auto path = std::filesystem::temp_directory_path() /
                      ("shardscope_hostfile_" + std::to_string(::getpid()));
    std::ofstream(path) << "# only a comment\n\n";
    EXPECT_THROW(checkHostfile(path.string()), Error);
    std::ofstream(path) << "# a node\nnode1 slots=2\n";
    EXPECT_NO_THROW(checkHostfile(path.string()));
    std::filesystem::remove(path);
}

TEST(launchMpirun, OneMachineKeepsMpirunsTcpOnLoopback) {
    MpirunOptions o;
    o.ranks = 2;
    auto argv = mpirunArgv(o, "w", {});
    const auto oob = std::find(argv.begin(), argv.end(), "oob_tcp_if_include");
    ASSERT_NE(oob, argv.end());
    EXPECT_EQ(*(oob + 1), "lo");
    EXPECT_NE(std::find(argv.begin(), argv.end(), "btl_tcp_if_include"), argv.end());
    EXPECT_TRUE(singleHost(o));
    o.extraArgs = {"--mca", "oob_tcp_if_include", "eth0", "--mca", "btl", "self,tcp"};
    argv = mpirunArgv(o, "w", {});
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "oob_tcp_if_include"), 1)
        << "mpirun refuses a parameter twice";
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "btl"), 1);
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "btl_tcp_if_include"), 1);
    o.extraArgs = {"--host", "a,b"};
    EXPECT_FALSE(singleHost(o));
    argv = mpirunArgv(o, "w", {});
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "oob_tcp_if_include"), argv.end());
    o.extraArgs.clear();
    o.hostfile = "/etc/hosts.mpi";
    EXPECT_FALSE(singleHost(o));
}

TEST(launchEnding, RankThreadsNameTheRankThatDidNotArriveThemselves) {
    JobEvidence e;
    e.exited = true;
    e.exitCode = 1;
    e.direct = true;
    e.failureRank = 2;
    e.failureStep = 4;
    e.failureMessage = "it did not arrive at the all-gather (rank 0 waited 30000 ms)";
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    EXPECT_EQ(
        describe(end),
        "rank 2 is stuck in step 5: it did not arrive at the all-gather (rank 0 waited 30000 ms); "
        "the job was torn down");
}

TEST(launchEnding, AStoppedWorkerProcessIsSaidToBeStopped) {
    JobEvidence e;
    e.stalled = true;
    e.direct = true;
    e.childStopped = true;
    e.stallTimeout = std::chrono::seconds(5);
    e.lastCompleteStep = 6;
    e.worldSize = 1;
    EXPECT_EQ(describe(classify(e)),
              "rank 0 is stuck in step 8: its process is stopped (SIGSTOP); the job was torn down");
    e.worldSize = 3;
    EXPECT_EQ(describe(classify(e)), "no progress for 5 s: the worker process holding every rank "
                                     "thread is stopped (SIGSTOP) in step 8; "
                                     "the job was torn down");
    e.direct = false; // mpirun itself stopped before the ranks could start
    EXPECT_EQ(describe(classify(e)),
              "no progress for 5 s: mpirun is stopped (SIGSTOP) in step 8; the job was torn down");
}

TEST(launchEnding, MpirunKilledIsSaidSo) {
    JobEvidence e;
    e.exited = true;
    e.exitCode = 128 + 9;
    e.lastCompleteStep = 3;
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::LaunchError);
    EXPECT_EQ(end.signal, 9);
    EXPECT_EQ(describe(end), "mpirun was killed (signal 9) in step 5; the job was torn down");
}

TEST(launchEnding, TheKilledProcessOfRankThreadsIsNotRankZero) {
    JobEvidence e;
    e.exited = true;
    e.direct = true;
    e.exitCode = 128 + 9;
    e.lastCompleteStep = 3;
    e.worldSize = 4;
    EXPECT_EQ(describe(classify(e)),
              "the worker process with every rank thread exited (signal 9) in step 5");
    e.worldSize = 1; // one rank: it is rank 0
    EXPECT_EQ(describe(classify(e)), "rank 0 exited (signal 9) in step 5");
}

TEST(launchEnding, ARankStoppedBeforeItsFirstCollectiveIsNamedByItsProcessState) {
    JobEvidence e;
    e.stalled = true;
    e.stallTimeout = std::chrono::seconds(5);
    e.stoppedRanks = {2};
    EXPECT_EQ(describe(classify(e)),
              "rank 2 is stuck in step 1: its process is stopped (SIGSTOP); the job was torn down");
}
