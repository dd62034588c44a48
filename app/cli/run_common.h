#pragma once
// What `run` and `compare` share: splitting the launcher's flags from the worker's, starting a
// job through launchJob, and reading its report.
#include "estimate_common.h" // humanBytes
#include "launcher.h"
#include "report/report.h"
#include "runconfig/run_config.h"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace shardscope::cli {

// Flags the CLI itself consumes; everything else goes to the worker (runconfig/run_config.h).
struct LauncherFlags {
    int ranks = 1;
    std::string hostfile;
    std::vector<std::string> mpirunArgs; // --mpirun-args "…" split on spaces
    std::optional<std::string> jsonPath;
    std::optional<std::string> tracePath;
    std::int64_t stallSeconds = 60;
    std::string streamPath; // --stream: also forward the live event stream to this socket
    std::string endingPath; // --ending: write the job's typed ending here (JSON)
    std::string workerPath; // --worker: this shardscope-worker instead of the one beside the CLI
    std::string mpirun = "mpirun"; // --mpirun
    bool sharedDevice = false; // --shared-device: the worker runs the ranks as threads (no mpirun)
    // --progress json: progress as one JSON object per line on stdout, for programs (the GUI's
    // supervisor); the human text goes nowhere. Events: {"event":"job","strategy","index",
    // "jobs","ranks"} as a job starts, {"event":"step","step","steps","loss","ms"} per step.
    bool progressJson = false;
    bool help = false;
};

// One progress event as a JSON line on stdout (--progress json), flushed.
void printProgressEvent(const nlohmann::json& event);

// Takes the launcher flags out of argv; the rest (including --backend) is returned.
// `extraValueFlags` / `extraSwitches` are command-specific flags also taken out (values land
// in `extras`). Throws Error(InvalidArgument) naming the flag.
std::vector<std::string>
splitLauncherFlags(std::span<const std::string> argv, LauncherFlags& out,
                   const std::vector<std::string>& extraValueFlags,
                   std::vector<std::pair<std::string, std::string>>& extras);

// The worker's configuration for these flags, validated before anything is launched: with
// --shared-device the worker gets --shared-device --ranks N (one process, N rank threads);
// --backend cuda needs a CUDA device here unless --hostfile sends the ranks elsewhere
// (otherwise the probe's reason). Throws
// Error(InvalidArgument) / Error(Io) naming the flag.
runconfig::RunConfig parseJobConfig(const std::vector<std::string>& workerArgs,
                                    const LauncherFlags& flags);

// Runs one configuration (already validated) and returns its report, or throws with the job's
// one-line ending (launch::describe): Error(InvalidArgument) when the worker refused its
// configuration, else Error(Comm); Error(Format) for a report that does not read. With --ending
// the typed ending is written first. Progress lines go to stdout unless quiet. `amend` adds the
// CLI's part to the report (config_import) where it arrives, so the recording and the
// forwarded stream carry the same report as the return value.
report::RunReport runJob(const runconfig::RunConfig& config, const LauncherFlags& flags,
                         const std::optional<std::string>& tracePath, bool quiet,
                         const std::function<void(report::RunReport&)>& amend = {});

// Every output path (--json, --trace, --ending; --weights-out with the worker's flags) is
// checked before anything runs (core/user_files.h: not a directory or special file, its folder
// exists and takes new files), and no two of them, nor --data, name the same file. Throws
// Error(InvalidArgument) / Error(Io) naming the flag.
void checkOutputs(const LauncherFlags& flags, const runconfig::RunConfig& config);

// An output that another process wrote meanwhile is not replaced (OutputFile::commit): says so
// on stderr when `wentTo` is not `path` and counts it (the command then exits 1). Returns
// whether the file went where it was asked to.
bool noteWhereWritten(const std::string& path, const std::string& wentTo);
// A knob the strategy does not read is neither passed nor recorded: a note on stderr per such
// flag among `workerArgs`, printed as its job starts (after every refusal could have happened).
void noteUnreadFlags(const std::vector<std::string>& workerArgs, plan::Strategy strategy);
// The flags run and compare take for themselves (the rest go to the worker): for the help.
std::vector<std::string> launcherFlags();
int& conflicts(); // how many outputs this process could not put in place

} // namespace shardscope::cli
