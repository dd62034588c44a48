// launch::Job with real process trees (sh starting sleeps in the background): every way a job
// is ended by the supervisor — stop(), a stall, a signal to this process — leaves no process of
// the tree and no private folder behind.
#include "launch/job.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace shardscope::launch;
using namespace std::chrono_literals;

namespace {

// sh writes the pids of two background sleeps (a tree under the job's root) to `pidFile`.
std::vector<std::string> treeCommand(const std::string& pidFile) {
    return {"/bin/sh", "-c",
            "sleep 30 & echo $! > " + pidFile + "; sleep 30 & echo $! >> " + pidFile + "; wait"};
}

std::vector<pid_t> readPids(const std::string& pidFile) {
    std::vector<pid_t> pids;
    std::ifstream in(pidFile);
    for (pid_t p; in >> p;)
        pids.push_back(p);
    return pids;
}

bool alive(pid_t pid) {
    // A zombie is gone for our purposes; kill(pid, 0) still succeeds on one.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return false;
    const auto close = text.rfind(')');
    return close != std::string::npos && text.size() > close + 2 && text[close + 2] != 'Z';
}

struct Outcome {
    JobEnding ending;
    std::vector<pid_t> tree;
    std::string folder;
};

Outcome runUntilEnded(std::chrono::milliseconds stall,
                      const std::function<void(Job&)>& whileRunning) {
    Outcome out;
    const std::string pidFile = "/tmp/shardscope_launch_job_test_" + std::to_string(::getpid());
    std::filesystem::remove(pidFile);
    {
        Job job;
        out.folder = job.folder();
        EXPECT_TRUE(std::filesystem::is_directory(out.folder));
        EXPECT_EQ(std::filesystem::status(out.folder).permissions() & std::filesystem::perms::all,
                  std::filesystem::perms::owner_all);
        std::thread helper([&] {
            for (int i = 0; i < 100 && readPids(pidFile).size() < 2; ++i)
                std::this_thread::sleep_for(20ms);
            if (whileRunning) whileRunning(job);
        });
        out.ending = job.run(treeCommand(pidFile), nullptr, nullptr, stall, true);
        helper.join();
    }
    out.tree = readPids(pidFile);
    std::filesystem::remove(pidFile);
    return out;
}

void expectNothingLeft(const Outcome& out) {
    EXPECT_EQ(out.tree.size(), 2u);
    for (pid_t p : out.tree)
        EXPECT_FALSE(alive(p)) << "pid " << p << " survived the teardown";
    EXPECT_FALSE(std::filesystem::exists(out.folder));
}

} // namespace

TEST(launchJob, StopTearsDownTheWholeTree) {
    const Outcome out = runUntilEnded(60s, [](Job& job) { job.stop(); });
    EXPECT_EQ(out.ending.kind, EndingKind::Stopped);
    expectNothingLeft(out);
}

TEST(launchJob, StallTearsDownTheWholeTree) {
    const auto t0 = std::chrono::steady_clock::now();
    const Outcome out = runUntilEnded(500ms, nullptr);
    EXPECT_EQ(out.ending.kind, EndingKind::Stalled);
    EXPECT_EQ(out.ending.step, 1); // nothing complete: stuck in step 1
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    expectNothingLeft(out);
}

TEST(launchJob, SignalsToThisProcessTearDownTheWholeTree) {
    for (int signal : {SIGTERM, SIGHUP, SIGINT}) {
        const SignalGuard guard;
        const Outcome out = runUntilEnded(60s, [signal](Job&) { ::kill(::getpid(), signal); });
        EXPECT_EQ(out.ending.kind, EndingKind::Interrupted) << signal;
        EXPECT_EQ(out.ending.signal, signal);
        expectNothingLeft(out);
    }
}

TEST(launchJob, ExitWithoutAStreamIsALaunchError) {
    Job job;
    const JobEnding end = job.run({"/bin/sh", "-c", "echo 'no such thing' >&2; exit 3"}, nullptr,
                                  nullptr, 60s, false);
    EXPECT_EQ(end.kind, EndingKind::LaunchError);
    EXPECT_EQ(end.exitCode, 3);
    EXPECT_EQ(describe(end), "mpirun exited with code 3: no such thing");
}

TEST(launchJob, MissingProgramIsALaunchError) {
    Job job;
    const JobEnding end = job.run({"/nonexistent/shardscope-worker"}, nullptr, nullptr, 60s, true);
    EXPECT_EQ(end.kind, EndingKind::LaunchError);
    EXPECT_NE(end.cause.find("/nonexistent/shardscope-worker"), std::string::npos) << end.cause;
}

TEST(launchJob, ProcessesLeftByAnExitedRootAreKilled) {
    // The root exits at once, leaving two sleeps in process groups of their own (as mpirun
    // killed with SIGKILL leaves its ranks): they are this job's and must not outlive it.
    const std::string pidFile = "/tmp/shardscope_launch_orphans_" + std::to_string(::getpid());
    std::filesystem::remove(pidFile);
    std::string folder;
    {
        Job job;
        folder = job.folder();
        job.run({"/bin/sh", "-c",
                 "setsid sleep 30 & echo $! > " + pidFile + "; setsid sleep 30 & echo $! >> " +
                     pidFile + "; exit 0"},
                nullptr, nullptr, 60s, true);
    }
    const std::vector<pid_t> left = readPids(pidFile);
    EXPECT_EQ(left.size(), 2u);
    for (pid_t p : left)
        EXPECT_FALSE(alive(p)) << "pid " << p << " outlived its job";
    EXPECT_FALSE(std::filesystem::exists(folder));
    std::filesystem::remove(pidFile);
}

TEST(launchJob, TheJobGetsTheProgressFolderAndLoopbackOnlyWhereAvailable) {
    const std::string out = "/tmp/shardscope_launch_env_" + std::to_string(::getpid());
    Job job;
    job.setLoopbackOnly(true);
    job.run({"/bin/sh", "-c",
             "echo \"$SHARDSCOPE_PROGRESS_DIR\" > " + out + "; cat /proc/net/dev >> " + out},
            nullptr, nullptr, 60s, true);
    std::ifstream in(out);
    std::string dir;
    std::getline(in, dir);
    EXPECT_EQ(dir, job.folder());
    if (Job::loopbackIsolationAvailable()) {
        std::string line;
        std::getline(in, line); // two header lines
        std::getline(in, line);
        int interfaces = 0;
        while (std::getline(in, line)) {
            ++interfaces;
            EXPECT_NE(line.find("lo:"), std::string::npos) << line;
        }
        EXPECT_EQ(interfaces, 1);
    }
    std::filesystem::remove(out);
}

TEST(launchJob, FoldersLeftByAKilledSupervisorAreRemovedNextTime) {
    // A supervisor killed with SIGKILL cannot remove its folder: the next one does.
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    const std::filesystem::path stale =
        "/tmp/shardscope-launchtest-" + std::to_string(dead) + "-abcdef";
    const std::filesystem::path mine =
        "/tmp/shardscope-launchtest-" + std::to_string(::getpid()) + "-ghijkl";
    const std::filesystem::path other = "/tmp/shardscope-launchtest-1-mnopqr"; // init never dies
    for (const auto& p : {stale, mine, other}) {
        std::filesystem::create_directories(p);
        std::ofstream(p / "leftover") << "x";
    }
    const std::string made = makePrivateFolder("shardscope-launchtest");
    EXPECT_TRUE(made.starts_with("/tmp/shardscope-launchtest-" + std::to_string(::getpid()) + "-"))
        << made;
    EXPECT_EQ(std::filesystem::status(made).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_TRUE(std::filesystem::exists(mine));
    EXPECT_TRUE(std::filesystem::exists(other));
    for (const auto& p : {std::filesystem::path(made), mine, other})
        std::filesystem::remove_all(p);
}

TEST(launchJob, AStoppedDirectWorkerIsReportedStoppedAndTornDown) {
    Job job;
    const JobEnding end =
        job.run({"/bin/sh", "-c", "kill -STOP $$; sleep 30"}, nullptr, nullptr, 500ms, true);
    EXPECT_EQ(end.kind, EndingKind::Stalled);
    EXPECT_NE(end.cause.find("stopped (SIGSTOP)"), std::string::npos) << end.cause;
}
