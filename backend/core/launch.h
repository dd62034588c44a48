#pragma once
// How a multi-rank job is started: the mpirun command line, and what mpirun's last words mean.
// Shared by the CLI (posix_spawn) and the GUI (QProcess with an argument list, never a shell
// string). Scaling out is OpenMPI's job: hostfiles and extra mpirun arguments pass through.
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

// "rank 2 exited (signal 9) in step 3" — step < 0 omits the step.
std::string describe(const RankExit& exit, std::int64_t step);

// Finds an executable: an absolute/relative path with a slash is taken as is, otherwise $PATH.
std::optional<std::string> findExecutable(const std::string& name);

} // namespace shardscope::launch
