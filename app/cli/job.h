#pragma once
// Runs one job (mpirun + workers) as a child process group and reads its event stream from a
// private Unix socket. A dead or stuck job is torn down and reported; nothing is left running.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/launch.h"
#include "core/protocol.h"

namespace shardscope::cli {

struct JobResult {
    int exitCode = 0;        // the launcher's exit status (128 + signal when signalled)
    bool stalled = false;    // no stream bytes for the stall timeout: torn down
    bool interrupted = false;// Ctrl-C: torn down
    bool sawEnd = false;     // the stream closed with an End record
    std::string stderrText;  // mpirun's and the ranks' stderr
    std::optional<launch::RankExit> rankExit; // parsed from stderr
};

class Job {
public:
    Job();  // creates a 0700 folder with the socket inside
    ~Job(); // tears down anything still running, removes the folder
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    const std::string& socketPath() const { return socketPath_; }

    // Starts argv[0] (looked up on PATH) and pumps until it exits. Records go to onRecord as
    // they are decoded; the raw stream bytes go to onBytes (for the recording tee).
    JobResult run(const std::vector<std::string>& argv,
                  const std::function<void(const protocol::Record&)>& onRecord,
                  const std::function<void(std::string_view)>& onBytes,
                  std::chrono::milliseconds stallTimeout);

private:
    void teardown();
    std::string dir_;
    std::string socketPath_;
    int listenFd_ = -1;
    int pid_ = -1;
};

} // namespace shardscope::cli
