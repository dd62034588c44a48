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
    bool singleCopy = false;            // one machine: ranks may use CMA (single_copy.h)
};

// True when the job stays on this machine: no hostfile, and no host given in the extra
// arguments (-H / --host / --hostfile / --machinefile …).
bool singleHost(const MpirunOptions& options);

// mpirun [flags] -np N <worker> <workerArgs…>. On one machine: shared-memory transport only
// (btl self,vader), single-copy by CMA where `singleCopy` (launch/single_copy.h: the probe
// found process_vm_readv allowed between sibling processes), else without it, and
// mpirun's own out-of-band traffic and any TCP transport on loopback (oob_tcp_if_include lo,
// btl_tcp_if_include lo). mpirun's listener still binds every interface; Job::setLoopbackOnly
// is what keeps it unreachable (docs/architecture.md, "What a job opens").
std::vector<std::string> mpirunArgv(const MpirunOptions& options, const std::string& workerPath,
                                    const std::vector<std::string>& workerArgs);

// A rank that ended the job, as mpirun reports it on stderr.
struct RankExit {
    int rank = -1;
    int signal = 0;   // > 0 when killed by a signal
    int exitCode = 0; // when it exited with a non-zero status
};
std::optional<RankExit> parseMpirunFailure(std::string_view stderrText);

// mpirun's own reason for failing, from its stderr: the first line of its first message that is
// not a frame of dashes, with a trailing "…:" line joined to its indented continuation ("Open
// RTE was unable to open the hostfile: /x"), without "mpirun: Error: "; capped at 300 bytes.
// Empty when there is none.
std::string mpirunMessage(std::string_view stderrText);

// --mpirun-args as words: split on blanks, with '…' and "…" quoting and backslash escapes
// like a shell (nothing is expanded). Throws Error(InvalidArgument) on an unclosed quote, and
// on -np / -n / --np / -c, which the launcher sets itself from --ranks.
std::vector<std::string> splitMpirunArgs(std::string_view text);

// Throws Error(InvalidArgument) naming the hostfile when it is not a readable regular file or
// names no host.
void checkHostfile(const std::string& path);

// Finds an executable: an absolute/relative path with a slash is taken as is, otherwise $PATH.
std::optional<std::string> findExecutable(const std::string& name);

} // namespace shardscope::launch
