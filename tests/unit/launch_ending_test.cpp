// The one classifier of how a job ended. The fixture is one death — rank 2 killed in step 3
// (steps 1 and 2 complete, so the stream's last StepSummary::step is 1) — as each source reports
// it; every source must yield the same 1-based step, which the CLI prints and the GUI shows.
#include "core/error.h"
#include "launch/ending.h"

#include <csignal>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace shardscope::launch;

namespace {

JobEvidence diedInStep3() {
    JobEvidence e;
    e.lastCompleteStep = 1;
    e.exited = true;
    e.exitCode = 137;
    e.stallTimeout = std::chrono::seconds(60);
    return e;
}

constexpr const char* kMpirunSignal9 =
    "--------------------------------------------------------------------------\n"
    "mpirun noticed that process rank 2 with PID 4242 on node vm exited on signal 9 (Killed).\n"
    "--------------------------------------------------------------------------\n";

} // namespace

TEST(launchEnding, FailureRecordCountsFromZeroAndIsReportedFromOne) {
    JobEvidence e = diedInStep3();
    e.failureRank = 2;
    e.failureStep = 2; // protocol: counted from 0
    e.failureMessage = "out of memory: 4096 bytes of activation";
    e.stderrText = kMpirunSignal9; // the worker's own word wins over mpirun's summary
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Failed);
    EXPECT_EQ(end.rank, 2);
    EXPECT_EQ(end.step, 3);
    EXPECT_EQ(describe(end), "rank 2, step 3: out of memory: 4096 bytes of activation");
}

// A resumed run's steps count on from its checkpoint (the handshake's steps_before): a failure
// in its first step, a stop in its second, are steps 4 and 5 after a checkpoint at 3.
TEST(launchEnding, AResumedRunsStepsCountOn) {
    JobEvidence e = diedInStep3();
    e.stepsBefore = 3;
    e.lastCompleteStep = -1;
    e.failureRank = 1;
    e.failureStep = 0;
    e.failureMessage = "out of memory";
    EXPECT_EQ(classify(e).step, 4);
    EXPECT_EQ(describe(classify(e)), "rank 1, step 4: out of memory");
    JobEvidence stop;
    stop.stepsBefore = 3;
    stop.lastCompleteStep = 0;
    stop.stopRequested = true;
    EXPECT_EQ(classify(stop).step, 5);
    EXPECT_EQ(classify(stop).completedSteps, 1); // this run's own steps
}

TEST(launchEnding, WorkerStderrLineIsAlreadyFromOne) {
    JobEvidence e = diedInStep3();
    e.exitCode = 1;
    e.stderrText =
        "some noise\nshardscope-worker: rank 2, step 3: collective timed out after 5000 ms\n" +
        std::string(kMpirunSignal9);
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Failed);
    EXPECT_EQ(end.rank, 2);
    EXPECT_EQ(end.step, 3);
    EXPECT_EQ(end.cause, "collective timed out after 5000 ms");
}

TEST(launchEnding, WorkerStderrLineDuringSetupHasNoStep) {
    JobEvidence e;
    e.exited = true;
    e.exitCode = 1;
    e.stderrText = "shardscope-worker: rank 1, setup: capacity below the model states\n";
    const JobEnding end = classify(e);
    EXPECT_EQ(end.rank, 1);
    EXPECT_FALSE(end.step);
    EXPECT_TRUE(end.setup);
    EXPECT_EQ(describe(end), "rank 1, setup: capacity below the model states");
}

TEST(launchEnding, MpirunSummaryDiesInTheStepAfterTheLastCompleteOne) {
    JobEvidence e = diedInStep3();
    e.stderrText = kMpirunSignal9;
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Failed);
    EXPECT_EQ(end.rank, 2);
    EXPECT_EQ(end.signal, 9);
    EXPECT_EQ(end.step, 3);
    EXPECT_EQ(end.completedSteps, 2);
    EXPECT_EQ(describe(end), "rank 2 exited (signal 9) in step 3");
}

TEST(launchEnding, DirectWorkerKilledIsRankZero) {
    JobEvidence e = diedInStep3();
    e.direct = true;
    const JobEnding end = classify(e);
    EXPECT_EQ(end.rank, 0);
    EXPECT_EQ(end.signal, 9);
    EXPECT_EQ(end.step, 3);
}

TEST(launchEnding, StallIsReportedInTheStepThatHung) {
    JobEvidence e = diedInStep3();
    e.exited = false;
    e.exitCode = 1;
    e.stalled = true;
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    EXPECT_EQ(end.step, 3);
    EXPECT_EQ(describe(end),
              "no progress for 60 s: a rank is stuck in step 3; the job was torn down");
}

TEST(launchEnding, SignalsAndStopTearDownInTheRunningStep) {
    JobEvidence e = diedInStep3();
    e.exited = false;
    e.interruptSignal = SIGHUP;
    JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Interrupted);
    EXPECT_EQ(end.step, 3);
    EXPECT_EQ(describe(end), "interrupted by SIGHUP in step 3: the job was torn down");
    e.interruptSignal = 0;
    e.stopRequested = true;
    end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Stopped);
    EXPECT_EQ(end.completedSteps, 2);
}

TEST(launchEnding, RefusedConfigurationIsUserInput) {
    JobEvidence e;
    e.exited = true;
    e.exitCode = 2;
    e.direct = true;
    e.stderrText = "shardscope-worker: --hybrid-group 3 must divide --ranks 4\n";
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::InvalidInput);
    EXPECT_EQ(describe(end), "--hybrid-group 3 must divide --ranks 4");
}

TEST(launchEnding, MpirunWithoutARankAndAMissingReport) {
    JobEvidence e;
    e.exited = true;
    e.exitCode = 1;
    e.stderrText = "mpirun was unable to launch the specified application\n----\n";
    JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::LaunchError);
    EXPECT_EQ(describe(end),
              "mpirun exited with code 1: mpirun was unable to launch the specified application");
    e.exitCode = 0;
    e.stderrText.clear();
    e.sawEnd = true;
    EXPECT_EQ(classify(e).kind, EndingKind::LaunchError); // End without a Report
    e.sawReport = true;
    end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Completed);
    EXPECT_EQ(describe(end), "");
}

TEST(launchEnding, JsonRoundTrip) {
    JobEvidence e = diedInStep3();
    e.stderrText = kMpirunSignal9;
    const JobEnding end = classify(e);
    const JobEnding back = endingFromJson(nlohmann::json::parse(toJson(end).dump()));
    EXPECT_EQ(back.kind, end.kind);
    EXPECT_EQ(back.rank, end.rank);
    EXPECT_EQ(back.step, end.step);
    EXPECT_EQ(back.signal, end.signal);
    EXPECT_EQ(back.cause, end.cause);
    EXPECT_EQ(back.completedSteps, end.completedSteps);
    EXPECT_EQ(toJson(end)["kind"], "failed");
    EXPECT_THROW(endingFromJson(nlohmann::json{{"kind", "exploded"}, {"cause", ""}}),
                 shardscope::Error);
    EXPECT_THROW(endingFromJson(nlohmann::json::array()), shardscope::Error);
}

// SIGTERM to mpirun (a scheduler's): mpirun exits 1 without a word and passes the signal on;
// every rank's progress record noted it. Named as what it is, at the running step — it was
// "launch_error", cause "", step null.
TEST(launchEnding, ASignalToMpirunFromOutsideIsNamed) {
    JobEvidence e;
    e.lastCompleteStep = 207;
    e.exited = true;
    e.exitCode = 1;
    e.stallTimeout = std::chrono::seconds(60);
    for (int r = 0; r < 3; ++r) {
        RankProgress p;
        p.rank = r;
        p.signal = SIGTERM;
        e.progress.push_back(p);
    }
    const JobEnding end = classify(e);
    EXPECT_EQ(end.kind, EndingKind::Interrupted);
    EXPECT_EQ(end.signal, SIGTERM);
    EXPECT_EQ(end.step, 209);
    EXPECT_EQ(
        describe(end),
        "terminated by SIGTERM from outside (sent to mpirun) in step 209: the job was torn down");
    // One rank without the note (it died otherwise): not claimed as an outside signal, but the
    // step is named and what a silent mpirun usually means is said.
    e.progress[1].signal = 0;
    EXPECT_EQ(classify(e).kind, EndingKind::LaunchError);
    EXPECT_EQ(describe(classify(e)),
              "mpirun exited with code 1 in step 209: it ended without a message, as it does on a "
              "signal from outside (a scheduler's SIGTERM)");
    // The same before any step completed (the ranks still starting, their notes not written).
    JobEvidence early;
    early.exited = true;
    early.exitCode = 1;
    early.stallTimeout = std::chrono::seconds(60);
    EXPECT_EQ(describe(classify(early)),
              "mpirun exited with code 1: before the first step completed: it ended without a "
              "message, as it does on a signal from outside (a scheduler's SIGTERM)");
    // … and after the job's End (the signal came while mpirun tore the finished job down).
    early.sawEnd = true;
    early.lastCompleteStep = 299;
    EXPECT_EQ(describe(classify(early)),
              "mpirun exited with code 1: after the job's last record (300 steps done): it ended "
              "without a message, as it does on a signal from outside (a scheduler's SIGTERM)");
    // mpirun naming a rank that exited on the signal: that rank was signalled alone.
    e.progress[1].signal = SIGTERM;
    e.stderrText = kMpirunSignal9;
    EXPECT_EQ(classify(e).kind, EndingKind::Failed);
}
