#pragma once
// How a multi-rank job is started: the mpirun command line, and what mpirun's last words mean
// (read by the ending classifier, ending.h). Scaling out is OpenMPI's job: hostfiles and extra
// mpirun arguments pass through.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::launch {

struct MpirunOptions {
    std::string mpirun = "mpirun";
    int ranks = 1;
    std::string hostfile;               // empty: one machine
    std::vector<std::string> extraArgs; // passed to mpirun verbatim, before the worker
    bool runningAsRoot = false;         // adds --allow-run-as-root
    int localCores = 1;                 // adds --oversubscribe when ranks exceed it
};

// mpirun [flags] -np N <worker> <workerArgs…>. On one machine: shared-memory transport only
// (btl self,vader) without single-copy (process_vm_readv is blocked in many containers).
std::vector<std::string> mpirunArgv(const MpirunOptions& options, const std::string& workerPath,
                                    const std::vector<std::string>& workerArgs);

// A rank that ended the job, as mpirun reports it on stderr.
struct RankExit {
    int rank = -1;
    int signal = 0;   // > 0 when killed by a signal
    int exitCode = 0; // when it exited with a non-zero status
};
std::optional<RankExit> parseMpirunFailure(std::string_view stderrText);

// Finds an executable: an absolute/relative path with a slash is taken as is, otherwise $PATH.
std::optional<std::string> findExecutable(const std::string& name);

} // namespace shardscope::launch
