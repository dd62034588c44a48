// The mpirun command line and the reading of mpirun's failure messages (real OpenMPI 4.1 text).
#include "launch/ending.h"
#include "launch/mpirun.h"
#include "launch/single_copy.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sys/wait.h>

using namespace shardscope::launch;

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
} // namespace

TEST(launchMpirun, OneMachineAsRootOversubscribed) {
    MpirunOptions o;
    o.ranks = 4;
    o.localCores = 2;
    o.runningAsRoot = true;
    const auto argv = mpirunArgv(o, "/opt/bin/shardscope-worker", {"--steps", "3"});
    EXPECT_EQ(argv.front(), "mpirun");
    EXPECT_TRUE(contains(argv, "--allow-run-as-root"));
    EXPECT_TRUE(contains(argv, "--oversubscribe"));
    EXPECT_TRUE(contains(argv, "self,vader"));
    EXPECT_TRUE(contains(argv, "btl_vader_single_copy_mechanism"));
    const auto np = std::find(argv.begin(), argv.end(), "-np");
    ASSERT_NE(np, argv.end());
    EXPECT_EQ(*(np + 1), "4");
    EXPECT_EQ(*(np + 2), "/opt/bin/shardscope-worker");
    EXPECT_EQ(argv.back(), "3");
}

// Single-copy transfers where the probe allowed them, the fragment path otherwise; the user's
// --mpirun-args still win.
TEST(launchMpirun, SingleCopyOnlyWhereTheProbeFoundItAllowed) {
    const auto mechanism = [](const std::vector<std::string>& argv) {
        const auto it = std::find(argv.begin(), argv.end(), "btl_vader_single_copy_mechanism");
        return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
    };
    MpirunOptions o;
    o.ranks = 2;
    EXPECT_EQ(mechanism(mpirunArgv(o, "w", {})), "none");
    o.singleCopy = true;
    EXPECT_EQ(mechanism(mpirunArgv(o, "w", {})), "cma");
    o.extraArgs = {"--mca", "btl_vader_single_copy_mechanism", "none"};
    const auto argv = mpirunArgv(o, "w", {});
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "btl_vader_single_copy_mechanism"), 1);
    EXPECT_EQ(mechanism(argv), "none");
}

// The probe reads a sibling process's memory the way two ranks would: where it says yes, a
// 2-rank job's large messages go single-copy (tests/mpi/* then run over it).
TEST(launchMpirun, TheCrossMemoryProbeAnswersTheSameTwiceAndLeavesNoChild) {
    const bool first = crossMemoryAttachWorks();
    EXPECT_EQ(crossMemoryAttachWorks(), first);
    int status = 0;
    EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a probe child is left";
}

TEST(launchMpirun, HostfileAndExtraArgsPassThroughWithoutLocalFlags) {
    MpirunOptions o;
    o.ranks = 2;
    o.localCores = 16;
    o.hostfile = "hosts.txt";
    o.extraArgs = {"--mca", "btl_tcp_if_include", "eth0"};
    const auto argv = mpirunArgv(o, "w", {});
    EXPECT_FALSE(contains(argv, "--allow-run-as-root"));
    EXPECT_FALSE(contains(argv, "self,vader"));
    EXPECT_TRUE(contains(argv, "hosts.txt"));
    EXPECT_TRUE(contains(argv, "btl_tcp_if_include"));
    EXPECT_EQ(argv.back(), "w");
}

TEST(launchMpirun, ParsesASignalledRank) {
    const char* text =
        "--------------------------------------------------------------------------\n"
        "mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).\n"
        "--------------------------------------------------------------------------\n";
    const auto e = parseMpirunFailure(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rank, 2);
    EXPECT_EQ(e->signal, 9);
    JobEvidence evidence;
    evidence.stderrText = text;
    evidence.exitCode = 137;
    evidence.lastCompleteStep = 1; // steps 1 and 2 complete: it died in step 3
    EXPECT_EQ(describe(classify(evidence)), "rank 2 exited (signal 9) in step 3");
}

TEST(launchMpirun, ParsesANonZeroExit) {
    const char* text =
        "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        "the job to be terminated. The first process to do so was:\n\n"
        "  Process name: [[19669,1],1]\n"
        "  Exit code:    3\n";
    const auto e = parseMpirunFailure(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rank, 1);
    EXPECT_EQ(e->exitCode, 3);
    JobEnding ending;
    ending.kind = EndingKind::Failed;
    ending.rank = e->rank;
    ending.exitCode = e->exitCode;
    ending.cause = "exited (exit code 3)";
    EXPECT_EQ(describe(ending), "rank 1 exited (exit code 3)");
}

TEST(launchMpirun, NothingToParseInOrdinaryOutput) {
    EXPECT_FALSE(parseMpirunFailure("step 1 loss 5.5\nall good\n"));
}

TEST(launchMpirun, FindsExecutablesOnPath) {
    EXPECT_TRUE(findExecutable("sh"));
    EXPECT_FALSE(findExecutable("definitely-not-a-program-xyz"));
    EXPECT_FALSE(findExecutable("/nonexistent/bin/tool"));
}
