#pragma once
// Starts `mpirun … shardscope-worker …`, follows its event stream, tees it into a recording,
// and turns every way a job can end into one outcome: a report, or one line naming the failure.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol.h"

namespace shardscope::cli {

struct LaunchRequest {
    int ranks = 1;
    std::vector<std::string> workerArgs; // everything the worker needs except --stream
    std::string hostfile;
    std::vector<std::string> mpirunArgs; // extra, passed through
    std::string mpirun = "mpirun";
    std::string tracePath;               // empty: no recording
    std::chrono::milliseconds stallTimeout{60000};
    bool direct = false; // one rank on this machine: start the worker itself, without mpirun
    std::function<void(const protocol::StepSummary&)> onStep; // progress
};

struct LaunchOutcome {
    std::optional<std::string> reportJson; // the worker's Report record
    std::vector<protocol::StepSummary> steps;
    std::optional<std::string> failure;    // one line: what went wrong
    bool userInputError = false;           // the worker refused its configuration (exit 2)
};

// The worker binary beside this executable (…/bin/shardscope-worker), or PATH.
std::string workerPath();

// Throws Error(InvalidArgument) when mpirun or the worker cannot be found; every failure of
// the job itself comes back in LaunchOutcome::failure.
LaunchOutcome launchJob(const LaunchRequest& request);

} // namespace shardscope::cli
