#include "run_common.h"

#include "checkpoint/store.h"
#include "core/args.h"
#include "core/error.h"
#include "core/step_number.h"
#include "core/user_files.h"
#include "launch/ending.h"
#include "launch/mpirun.h"
#include "platform/cuda_probe.h"
#include "report/files.h"
#include "runconfig/fields.h"
#include "runconfig/problems.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope::cli {

namespace {
const std::vector<std::string> kLauncherValueFlags = {
    "--ranks",  "--hostfile", "--mpirun-args", "--json",   "--trace",   "--stall-timeout",
    "--stream", "--ending",   "--worker",      "--mpirun", "--progress"};

} // namespace

namespace {
FILE* gEvents = stdout; // --progress json: the real stdout; fd 1 then goes to /dev/null

// The human text (summaries, tables, notes on stdout) goes nowhere, so that what a program reads
// on stdout is the events alone, whatever a later printf says.
void divertHumanOutput() {
    const int events = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (events < 0 || null < 0) throw Error(ErrorKind::Io, "--progress json: cannot set up stdout");
    std::fflush(stdout);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
    ::fcntl(events, F_SETFD, FD_CLOEXEC);
    gEvents = ::fdopen(events, "w");
    if (!gEvents) throw Error(ErrorKind::Io, "--progress json: cannot set up stdout");
}
} // namespace

void printProgressEvent(const nlohmann::json& event) {
    std::fprintf(gEvents, "%s\n", event.dump().c_str());
    std::fflush(gEvents);
}

void noteUnreadFlags(const std::vector<std::string>& workerArgs, plan::Strategy strategy) {
    std::set<std::string> noted;
    for (const std::string& a : workerArgs) {
        const std::string flag = a.substr(0, a.find('='));
        const std::optional<runconfig::Field> field = runconfig::fieldOfFlag(flag);
        if (field && !runconfig::appliesToStrategy(*field, strategy) && noted.insert(flag).second)
            std::fprintf(stderr,
                         "shardscope-cli: note: %s is not read by %s; the run does not use it\n",
                         flag.c_str(), std::string(plan::strategyName(strategy)).c_str());
    }
}

std::vector<std::string> launcherFlags() {
    std::vector<std::string> out = kLauncherValueFlags;
    out.insert(out.end(), {"--shared-device", "--backend"});
    return out;
}

bool noteWhereWritten(const std::string& path, const std::string& wentTo) {
    if (wentTo == path) return true;
    std::fprintf(stderr,
                 "shardscope-cli: '%s' was written by another process while this job ran; it was "
                 "not replaced, "
                 "this job's file is '%s'\n",
                 path.c_str(), wentTo.c_str());
    conflicts() += 1;
    return false;
}

int& conflicts() {
    static int count = 0;
    return count;
}

std::vector<std::string>
splitLauncherFlags(std::span<const std::string> argv, LauncherFlags& out,
                   const std::vector<std::string>& extraValueFlags,
                   std::vector<std::pair<std::string, std::string>>& extras) {
    std::vector<std::string> worker;
    auto isIn = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    std::set<std::string>
        seen; // a launcher flag given twice is refused, as Args refuses worker flags
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string flag = argv[i];
        std::optional<std::string> value;
        if (auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        }
        if (flag == "--help") {
            out.help = true;
            continue;
        }
        const bool ours = flag == "--shared-device" || isIn(kLauncherValueFlags, flag) ||
                          isIn(extraValueFlags, flag);
        if (ours && !seen.insert(flag).second) throwInvalid(flag + " is given twice; give it once");
        if (flag == "--shared-device") {
            if (value) throwInvalid("--shared-device takes no value");
            out.sharedDevice = true;
            continue;
        }
        const bool launcher = isIn(kLauncherValueFlags, flag);
        if (!launcher && !isIn(extraValueFlags, flag)) {
            worker.push_back(argv[i]);
            continue;
        }
        if (!value) {
            if (i + 1 >= argv.size()) throwInvalid(flag + " needs a value");
            value = argv[++i];
        }
        if (!launcher) {
            extras.emplace_back(flag, *value);
            continue;
        }
        Args one("run", {flag}, {});
        const std::vector<std::string> pair = {flag, *value};
        one.parse(pair);
        if (flag == "--ranks") {
            const runconfig::Limit& ranks = runconfig::limitOf(runconfig::Field::Ranks);
            out.ranks = static_cast<int>(one.integer("--ranks", ranks.min, ranks.max));
        } else if (flag == "--hostfile")
            out.hostfile = *value;
        else if (flag == "--json")
            out.jsonPath = *value;
        else if (flag == "--trace")
            out.tracePath = *value;
        else if (flag == "--stall-timeout")
            out.stallSeconds = one.integer(flag, 1, 86400);
        else if (flag == "--stream")
            out.streamPath = *value;
        else if (flag == "--ending")
            out.endingPath = *value;
        else if (flag == "--worker")
            out.workerPath = *value;
        else if (flag == "--mpirun")
            out.mpirun = *value;
        else if (flag == "--progress") {
            if (*value != "human" && *value != "json")
                throwInvalid("--progress must be human or json, got '" + *value + "'");
            out.progressJson = *value == "json";
        } else { // --mpirun-args
            for (std::string& w : launch::splitMpirunArgs(*value))
                out.mpirunArgs.push_back(std::move(w));
        }
    }
    if (out.progressJson && !out.help) divertHumanOutput();
    return worker;
}

runconfig::RunConfig parseJobConfig(const std::vector<std::string>& workerArgs,
                                    const LauncherFlags& flags) {
    std::vector<std::string> args = workerArgs;
    int processes = flags.ranks;
    if (flags.sharedDevice) {
        // One worker process on this machine runs every rank: nothing for mpirun to place.
        if (!flags.hostfile.empty())
            throwInvalid(
                "--hostfile: --shared-device runs every rank in one process on this machine");
        if (!flags.mpirunArgs.empty())
            throwInvalid("--mpirun-args: --shared-device does not use mpirun");
        // In front: a last flag given without its value must not take these as its value.
        args.insert(args.begin(), {"--shared-device", "--ranks", std::to_string(flags.ranks)});
        processes = 1;
    }
    runconfig::RunConfig config = runconfig::parseRunConfig(args, processes);
    // mpirun would say so only after starting, in its own words.
    if (!flags.hostfile.empty()) launch::checkHostfile(flags.hostfile);
    if (config.backend == runconfig::Backend::Cuda && flags.hostfile.empty()) {
        // Say why here, before any process starts (the worker probes again on its machine;
        // with a hostfile the GPUs are on other machines, and the ranks agree on the verdict).
        const auto cuda = platform::probeCuda();
        if (!cuda.available) throwInvalid("--backend cuda: " + cuda.reason);
    }
    return config;
}

namespace {

// An output written over the checkpoint being resumed (its metadata, a rank's file, 'latest') or
// over the --save folder's 'latest' would destroy the checkpoint: refused before anything runs.
// No output of the run may land in a step folder (or on `latest`) of the checkpoint it saves to
// or resumes from: a report or recording there could replace a rank file or metadata of any step.
void checkOutputsSpareCheckpoints(const std::vector<std::pair<std::string, std::string>>& outputs,
                                  const runconfig::RunConfig& config) {
    std::vector<std::string> folders;
    if (config.resumePath) folders.push_back(checkpoint::openCheckpoint(*config.resumePath).root);
    if (config.saveDir) folders.push_back(*config.saveDir);
    for (const auto& [flag, out] : outputs)
        for (const std::string& dir : folders)
            if (!out.empty() && checkpoint::touchesCheckpoint(out, dir))
                throwInvalid(flag + ": '" + out + "' could replace a part of the checkpoint in '" +
                             dir + "'; give a path outside its steps");
}

} // namespace

void checkOutputs(const LauncherFlags& flags, const runconfig::RunConfig& config) {
    if (flags.jsonPath) checkOutputPath(*flags.jsonPath, "--json");
    if (flags.tracePath) checkOutputPath(*flags.tracePath, "--trace");
    if (!flags.endingPath.empty()) checkOutputPath(flags.endingPath, "--ending");
    checkOutputsSpareCheckpoints({{"--json", flags.jsonPath.value_or("")},
                                  {"--trace", flags.tracePath.value_or("")},
                                  {"--ending", flags.endingPath},
                                  {"--weights-out", config.weightsPath.value_or("")}},
                                 config);
    // --weights-out was checked with the worker's flags (parseRunConfig).
    checkDistinctFiles({{"--data", config.dataFile.value_or("")},
                        {"--json", flags.jsonPath.value_or("")},
                        {"--trace", flags.tracePath.value_or("")},
                        {"--ending", flags.endingPath},
                        {"--weights-out", config.weightsPath.value_or("")}});
}

report::RunReport runJob(const runconfig::RunConfig& config, const LauncherFlags& flags,
                         const std::optional<std::string>& tracePath, bool quiet,
                         const std::function<void(report::RunReport&)>& amend) {
    LaunchRequest req;
    if (amend)
        req.amendReport = [&amend](const std::string& json) {
            report::Parsed<report::RunReport> parsed = report::parseRunReport(json);
            if (!parsed) return json; // refused below, with the reader's reason
            amend(*parsed.value);
            return report::toJson(*parsed.value).dump();
        };
    req.ranks = flags.ranks;
    req.hostfile = flags.hostfile;
    req.mpirunArgs = flags.mpirunArgs;
    req.mpirun = flags.mpirun;
    req.worker = flags.workerPath;
    req.forwardPath = flags.streamPath;
    req.tracePath = tracePath.value_or("");
    req.stallTimeout = std::chrono::seconds(flags.stallSeconds);
    // One process without mpirun: a single rank, or every rank as a thread (--shared-device).
    req.direct = config.sharedDevice ||
                 (flags.ranks == 1 && flags.hostfile.empty() && flags.mpirunArgs.empty());
    runconfig::RunConfig workerConfig = config;
    // The launcher owns the stream and the recording; the report comes back in the stream.
    workerConfig.streamPath.reset();
    workerConfig.tracePath.reset();
    workerConfig.jsonPath.reset();
    req.workerArgs = runconfig::toWorkerArgs(workerConfig);
    // A resumed run counts on from its checkpoint: saved at 3 and resumed for 2, it prints
    // steps 4/5 and 5/5 (json: "step" the same, "steps_before" 3).
    const std::int64_t before = config.stepsBefore, last = before + config.steps;
    if (flags.progressJson)
        req.onStep = [before, last](const protocol::StepSummary& s) {
            printProgressEvent({{"event", "step"},
                                {"step", displayStep(s.step, before)},
                                {"steps", last},
                                {"steps_before", before},
                                {"loss", s.loss},
                                {"ms", static_cast<double>(s.stepNs) / 1e6}});
        };
    else if (!quiet)
        req.onStep = [before, last](const protocol::StepSummary& s) {
            std::printf("step %5lld/%lld  loss %.4f  %9.2f ms\n",
                        static_cast<long long>(displayStep(s.step, before)),
                        static_cast<long long>(last), s.loss, static_cast<double>(s.stepNs) / 1e6);
            std::fflush(stdout);
        };
    const LaunchOutcome out = launchJob(req);
    if (!flags.endingPath.empty())
        noteWhereWritten(flags.endingPath,
                         report::writeTextFile(flags.endingPath,
                                               launch::toJson(out.ending).dump() + "\n",
                                               "--ending"));
    if (out.recordingKeptAs) noteWhereWritten(*tracePath, *out.recordingKeptAs);
    if (out.ending.kind == launch::EndingKind::InvalidInput)
        throwInvalid(launch::describe(out.ending));
    if (out.ending.kind != launch::EndingKind::Completed)
        throw Error(ErrorKind::Comm, launch::describe(out.ending));
    report::Parsed<report::RunReport> parsed = report::parseRunReport(*out.reportJson);
    if (!parsed) throw Error(ErrorKind::Format, "the worker's report: " + parsed.error);
    return std::move(*parsed.value);
}

} // namespace shardscope::cli
