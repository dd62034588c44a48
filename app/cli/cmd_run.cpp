// `shardscope-cli run`: real training steps on N ranks (mpirun + shardscope-worker; one rank,
// or --shared-device, runs the worker directly), progress per step, then measured vs theory
// and the JSON report.
#include "checkpoint/store.h"
#include "commands.h"
#include "config_flags.h"
#include "core/error.h"
#include "core/step_number.h"
#include "report/files.h"
#include "report_print.h"
#include "run_common.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::cli {
namespace {

constexpr const char* kRunHelp =
    "usage: shardscope-cli run --model PRESET --ranks N --strategy S --steps K [flags]\n"
    "launcher:\n"
    "  --ranks N                 data-parallel ranks (mpirun -np N; 1 runs the worker directly)\n"
    "  --shared-device           run the N ranks as threads of one worker process, no mpirun\n"
    "                            (with --backend cuda: all on one GPU)\n"
    "  --backend cpu|cuda        compute backend (cpu); cuda: one GPU per rank under mpirun\n"
    "  --json FILE               write the report as JSON (atomically; never over a device or "
    "FIFO)\n"
    "  --trace FILE              write the recording (.sstrace) for the GUI\n"
    "  --hostfile FILE           mpirun --hostfile (multi-node)\n"
    "  --mpirun-args \"…\"         extra mpirun arguments, passed through\n"
    "  --stall-timeout SECONDS   tear the job down after this long without progress (60)\n"
    "  --stream SOCKET           also forward the live event stream to this Unix socket\n"
    "  --ending FILE             write how the job ended as JSON (kind, rank, step, cause)\n"
    "  --worker PATH             the shardscope-worker to run (default: beside this binary)\n"
    "  --mpirun PATH             the mpirun to run (default: mpirun on PATH)\n"
    "  --progress human|json     json: one JSON object per line on stdout per job and step\n"
    "                            (for programs; the human text is left out)\n"
    "  --ds-config FILE          DeepSpeed ds_config.json: its keys become flags (flags given "
    "win);\n"
    "                            every key is listed as applied or ignored, with why\n"
    "  --accelerate-config FILE  Accelerate's config YAML (FSDP or DEEPSPEED, num_processes,\n"
    "                            …), the same way\n"
    "  --config-import FILE      (the GUI's) the listing of a configuration it imported, as the\n"
    "                            report's config_import {source, applied, ignored}: carried\n"
    "                            into the report and notes\n"
    "worker (see docs/strategies.md):\n";

// A checkpoint to resume is re-hashed before anything starts: a damaged file is bad input
// (exit 2, one line naming it), not a failure of the job.
void verifyCheckpoint(const std::string& path) {
    const checkpoint::Opened c = checkpoint::openCheckpoint(path);
    for (const checkpoint::FileCheck& f : checkpoint::verifyFiles(c))
        if (f.state != checkpoint::FileCheck::State::Ok)
            throw Error(ErrorKind::Format,
                        "--resume: '" + c.dir + "/" + f.name + "': " + f.problem);
}

} // namespace

int cmdRun(std::span<const std::string> argv) {
    LauncherFlags flags;
    std::vector<std::pair<std::string, std::string>> extras;
    std::vector<std::string> workerArgs = splitLauncherFlags(
        argv, flags, {"--ds-config", "--accelerate-config", "--config-import"}, extras);
    if (flags.help) {
        std::fputs(kRunHelp, stdout);
        std::fputs(runconfig::workerFlagsHelp(launcherFlags()).c_str(), stdout);
        return 0;
    }
    std::optional<ConfigImportResult> imported;
    if (const auto file = configFileFlag(extras)) {
        imported = importForJob(*file, "run", argv, flags.ranks, workerArgs);
        if (imported->ranks) flags.ranks = *imported->ranks;
    }
    if (auto listing = importListing(extras)) {
        if (imported)
            throwInvalid("--config-import: give it or --ds-config / --accelerate-config, not both");
        imported = std::move(listing);
    }
    // Everything is validated here, before anything is launched; a refusal is one line (naming
    // the file's key where one set the flag), the file's listing only for a run that starts.
    const runconfig::RunConfig config = validatedWith(imported, [&] {
        runconfig::RunConfig c = parseJobConfig(workerArgs, flags);
        checkOutputs(flags, c);
        return c;
    });
    if (imported) printImport(*imported);
    if (config.resumePath) verifyCheckpoint(*config.resumePath);
    std::optional<checkpoint::SaveFolderLock> saveLock;
    if (config.saveDir) saveLock.emplace(*config.saveDir);
    if (saveLock)
        for (const std::string& left : saveLock->swept())
            std::printf("note: removed %s, left by a save that did not finish\n", left.c_str());

    std::printf("run: %s (vocab %lld, %s), %d rank%s%s on %s, %s, %lld steps\n",
                config.preset.name.c_str(), static_cast<long long>(config.preset.shape.vocab),
                config.dataFile ? ("bytes of " + *config.dataFile).c_str()
                                : "synthetic Markov data",
                flags.ranks, flags.ranks == 1 ? "" : "s",
                config.sharedDevice ? " (threads of one process)" : "",
                std::string(runconfig::backendName(config.backend)).c_str(),
                std::string(plan::strategyName(config.strategy)).c_str(),
                static_cast<long long>(config.steps));
    if (config.resumePath && config.steps > 0)
        std::printf("resuming %s after step %lld: this run makes steps %lld to %lld\n",
                    config.resumePath->c_str(), static_cast<long long>(config.stepsBefore),
                    static_cast<long long>(displayStep(0, config.stepsBefore)),
                    static_cast<long long>(config.stepsBefore + config.steps));
    std::fflush(stdout);
    std::function<void(report::RunReport&)> amend;
    if (imported) amend = [&imported](report::RunReport& r) { addToReport(*imported, r); };
    noteUnreadFlags(workerArgs, config.strategy);
    report::RunReport result = runJob(config, flags, flags.tracePath, false, amend);
    printRunSummary(result);
    if (flags.jsonPath &&
        noteWhereWritten(*flags.jsonPath,
                         report::writeTextFile(*flags.jsonPath,
                                               report::toJson(result).dump(2) + "\n", "--json")))
        std::printf("report written to %s\n", flags.jsonPath->c_str());
    if (flags.tracePath && conflicts() == 0)
        std::printf("recording written to %s\n", flags.tracePath->c_str());
    return conflicts() == 0 ? 0 : 1;
}

} // namespace shardscope::cli
