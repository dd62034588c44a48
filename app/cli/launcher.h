#pragma once
// Starts `mpirun … shardscope-worker …` (or the worker itself) under a launch::Job, follows
// its event stream, tees it into a recording and, for the GUI, forwards it to another socket;
// every way the job can end comes back as one typed launch::JobEnding.
#include "launch/ending.h"
#include "protocol/protocol.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::cli {

struct LaunchRequest {
    int ranks = 1;
    std::vector<std::string> workerArgs; // everything the worker needs except --stream
    std::string hostfile;
    std::vector<std::string> mpirunArgs; // extra, passed through
    std::string mpirun = "mpirun";
    std::string worker;      // empty: workerPath()
    std::string tracePath;   // empty: no recording
    std::string forwardPath; // empty: the stream is not forwarded
    std::chrono::milliseconds stallTimeout{60000};
    bool direct = false; // one rank on this machine: start the worker itself, without mpirun
    std::function<void(const protocol::StepSummary&)> onStep; // progress
    // The Report record's JSON → what the recording, the forwarded stream and reportJson carry
    // instead (the CLI's additions, e.g. config_import); empty: passed on as it came.
    std::function<std::string(const std::string&)> amendReport;
};

struct LaunchOutcome {
    std::optional<std::string> reportJson; // the worker's Report record
    std::vector<protocol::StepSummary> steps;
    launch::JobEnding ending;
    // Set when another process wrote the recording's path while the job ran: the recording
    // was kept under this name instead (core/user_files.h).
    std::optional<std::string> recordingKeptAs;
};

// The worker binary beside this executable (…/bin/shardscope-worker), or PATH.
std::string workerPath();

// Throws Error(InvalidArgument) when mpirun or the worker cannot be found, Error(Io) when the
// forwarding socket cannot be reached; every ending of the job itself is in LaunchOutcome::ending.
// SIGINT, SIGTERM and SIGHUP during the job tear it down (ending Interrupted).
LaunchOutcome launchJob(const LaunchRequest& request);

} // namespace shardscope::cli
