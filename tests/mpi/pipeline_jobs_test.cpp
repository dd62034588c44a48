// A pipeline's failures as the user meets them (shardscope-cli run --pp under mpirun): a stage
// that stops (SIGSTOP) is named as the stuck one — not the neighbour waiting in its receive,
// whose message deadline runs out first — and a stage that dies is named; either way the job
// ends with one line and leaves no process behind.
#include "cli_job_support.h"

#include <chrono>
#include <gtest/gtest.h>
#include <signal.h>
#include <string>

namespace {

using namespace shardscope::testing;

// Two stages of one rank each; `victim` is stopped once the job trains.
void stopAStage(int victim, const std::string& marker) {
    const Proc p =
        start({"run", "--model", "tiny", "--ranks", "2", "--pp", "2", "--grad-accum", "2",
               "--strategy", "ddp", "--steps", "100000", "--seed", marker, "--timeout-ms", "3000"},
              "pipestop" + std::to_string(victim));
    waitForSteps(p, 3);
    const pid_t pid = workerOfRank(marker, victim);
    ASSERT_GT(pid, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(pid, SIGSTOP), 0);
    EXPECT_EQ(finish(p), 1);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3 + 6));
    const std::string err = slurp(p.err);
    EXPECT_NE(err.find("rank " + std::to_string(victim) + " is stuck in step "), std::string::npos)
        << err;
    EXPECT_EQ(err.find("rank " + std::to_string(1 - victim)), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove(p.out);
    fs::remove(p.err);
}

TEST(pipelineJobs, AStoppedFirstStageIsNamedNotTheStageWaitingForItsActivations) {
    stopAStage(0, "31351");
}

TEST(pipelineJobs, AStoppedLastStageIsNamedNotTheStageWaitingForItsGradients) {
    stopAStage(1, "31352");
}

TEST(pipelineJobs, AKilledStageEndsTheJobNamingIt) {
    const std::string marker = "31353";
    const Proc p = start({"run", "--model", "tiny", "--ranks", "2", "--pp", "2", "--grad-accum",
                          "4", "--strategy", "zero2", "--steps", "100000", "--seed", marker},
                         "pipekill");
    waitForSteps(p, 3);
    const pid_t pid = workerOfRank(marker, 1);
    ASSERT_GT(pid, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    EXPECT_NE(finish(p), 0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    const std::string err = slurp(p.err);
    EXPECT_NE(err.find("rank 1 exited (signal 9) in step "), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    expectNothingOfTheJobWithin(marker, std::chrono::steady_clock::now(), std::chrono::seconds(3));
    fs::remove(p.out);
    fs::remove(p.err);
}

} // namespace
