#pragma once
// One job as a supervised child: mpirun (or the worker itself) in its own process group,
// streaming to a Unix socket in a private 0700 folder. The job ends by itself, by a stall, by
// stop(), or by SIGINT / SIGTERM / SIGHUP to this process (while a SignalGuard is installed);
// in every case nothing is left running and the folder is removed, and classify() turns what
// was seen into one JobEnding.
//
// Note: nothing outlives the supervisor either. The child gets SIGTERM when the thread that
// started it dies (PR_SET_PDEATHSIG: call run() from a thread that lives as long as the job —
// the CLI's main thread), mpirun then ends its ranks, and every rank gets SIGKILL when its own
// parent dies (the worker sets that itself). This process is a child subreaper while a job
// runs, so ranks whose mpirun died are re-parented here and killed with the rest of the tree.
#include "launch/ending.h"
#include "launch/process_tree.h"
#include "protocol/protocol.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::launch {

// While one exists, SIGINT, SIGTERM and SIGHUP are recorded instead of ending this process, so
// a running Job can tear its tree down first. The previous handlers come back on destruction.
// Guards nest (one thread): an inner guard keeps a signal the outer one recorded, so a command
// that runs several jobs notices a signal that came between them.
class SignalGuard {
public:
    SignalGuard();
    ~SignalGuard();
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;
};
int pendingSignal(); // the first signal the installed SignalGuard recorded; 0: none (or no guard)

// A private 0700 folder /tmp/<prefix>-<pid>-XXXXXX. Folders of the same prefix that a process of
// this user left behind and that no longer exists (killed with SIGKILL, so it could not clean
// up) are removed first.
std::string makePrivateFolder(const std::string& prefix);

class Job {
public:
    Job();  // creates the 0700 folder with the listening socket inside
    ~Job(); // tears down anything still running, removes the folder
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    const std::string& socketPath() const { return socketPath_; }
    const std::string& folder() const { return dir_; }

    // Starts argv[0] and pumps until the job ends. Records go to onRecord as they are decoded,
    // the raw stream bytes to onBytes (either may be empty). `direct`: argv[0] is the worker.
    JobEnding run(const std::vector<std::string>& argv,
                  const std::function<void(const protocol::Record&)>& onRecord,
                  const std::function<void(std::string_view)>& onBytes,
                  std::chrono::milliseconds stallTimeout, bool direct);

    // Asks a running job to end (from any thread); run() tears it down and returns Stopped.
    void stop() { stopRequested_ = true; }

    // Runs the job in a network namespace of its own whose only interface is loopback, so that
    // no socket it opens (mpirun's out-of-band listener binds every interface whatever the MCA
    // settings) can be reached from another machine. For jobs on this machine only; where the
    // kernel refuses namespaces the job runs as before.
    void setLoopbackOnly(bool on) { loopbackOnly_ = on; }
    static bool loopbackIsolationAvailable();

    static constexpr std::chrono::milliseconds kGrace{3000};      // SIGTERM to SIGKILL
    static constexpr std::chrono::milliseconds kRanksGrace{1000}; // a frozen rank's SIGTERM
    static constexpr std::chrono::milliseconds kDrain{2000};      // after exit: the stream's tail
    static constexpr std::chrono::milliseconds kAfterEnd{5000};   // a complete stream, then no exit

private:
    void freeze(); // stops every process of the job where it is (SIGSTOP)
    void teardown();
    void collectTree();
    void killStragglers();
    std::string dir_;
    std::string socketPath_;
    int listenFd_ = -1;
    int pid_ = -1;
    std::atomic<bool> stopRequested_{false};
    bool loopbackOnly_ = false;
    std::vector<ProcessId> tree_;      // every process of the job seen so far
    unsigned long long startTime_ = 0; // the child's start time (process_tree.h)
};

} // namespace shardscope::launch
