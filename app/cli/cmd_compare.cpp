// `shardscope-cli compare`: the same job under several strategies with the same seed, side by
// side — per-rank peak by category, model states measured vs theory, savings vs DDP measured
// vs theoretical, communication measured vs theory, step time, and the largest |Δ| of the
// final fp32 weights against DDP (bitwise 0 with --deterministic).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "launch/job.h"
#include "report/files.h"
#include "report_print.h"
#include "run_common.h"

namespace shardscope::cli {
namespace {

constexpr const char* kCompareHelp =
    "usage: shardscope-cli compare --ranks N --strategies ddp,zero1,zero2,zero3,fsdp --steps K\n"
    "                              [--model tiny|small|medium|gpt100m] [--json FILE] [--ending FILE]\n"
    "                              [worker flags]\n"
    "  Runs each strategy with the same seed (DDP first: the baseline) and prints them side by\n"
    "  side. --deterministic is on unless --nondeterministic is given. Worker flags as in `run`\n"
    "  (--shared-device and --backend too). The exposed column is the median share of a step\n"
    "  spent in communication that no compute hid (the rank that waits most). --ending FILE\n"
    "  writes how the last job ended as JSON (kind, rank, step, cause).\n";

std::vector<std::string> strategiesFlag(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string s; std::getline(in, s, ',');) {
        if (!theory::parseStrategy(s)) throwInvalid("--strategies: unknown strategy '" + s + "'");
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
    if (out.empty()) throwInvalid("--strategies needs at least one strategy");
    // DDP is the baseline every other row is measured against.
    out.erase(std::remove(out.begin(), out.end(), "ddp"), out.end());
    out.insert(out.begin(), "ddp");
    return out;
}

} // namespace

int cmdCompare(std::span<const std::string> argv) {
    LauncherFlags flags;
    std::vector<std::pair<std::string, std::string>> extras;
    std::vector<std::string> workerArgs =
        splitLauncherFlags(argv, flags, {"--strategies"}, extras);
    if (flags.help) {
        std::fputs(kCompareHelp, stdout);
        return 0;
    }
    if (flags.tracePath) throwInvalid("--trace: compare runs several jobs; record them one by one with `run`");
    if (!flags.streamPath.empty()) throwInvalid("--stream: compare runs several jobs; stream them one by one with `run`");
    std::string strategiesText = "ddp,zero1,zero2,zero3,fsdp";
    for (const auto& [flag, value] : extras) strategiesText = value;
    const std::vector<std::string> strategies = strategiesFlag(strategiesText);
    if (std::find(workerArgs.begin(), workerArgs.end(), "--strategy") != workerArgs.end())
        throwInvalid("--strategy: compare takes --strategies (a comma list)");
    const auto nondet = std::find(workerArgs.begin(), workerArgs.end(), "--nondeterministic");
    const bool deterministic = nondet == workerArgs.end();
    if (!deterministic) workerArgs.erase(nondet);
    else if (std::find(workerArgs.begin(), workerArgs.end(), "--deterministic") == workerArgs.end())
        workerArgs.push_back("--deterministic");
    if (std::find(workerArgs.begin(), workerArgs.end(), "--model") == workerArgs.end())
        workerArgs.insert(workerArgs.end(), {"--model", "tiny"});
    if (flags.jsonPath) checkOutputPath(*flags.jsonPath, "--json");

    // Validate every configuration before the first job starts.
    std::vector<runconfig::RunConfig> configs;
    for (const auto& s : strategies) {
        std::vector<std::string> args = workerArgs;
        args.insert(args.end(), {"--strategy", s});
        configs.push_back(parseJobConfig(args, flags));
    }
    // Installed before the folder exists: a signal between two jobs is noticed, and the folder
    // with the weights goes with it; one left by a compare killed with SIGKILL goes next time.
    const launch::SignalGuard guard;
    const std::filesystem::path dir(launch::makePrivateFolder("shardscope-compare"));
    report::CompareReport result;
    result.ranks = flags.ranks;
    result.deterministic = deterministic;
    std::vector<float> ddpWeights;
    try {
        for (std::size_t i = 0; i < configs.size(); ++i) {
            runconfig::RunConfig cfg = configs[i];
            cfg.weightsPath = (dir / (strategies[i] + ".weights")).string();
            std::printf("compare: %s on %d rank%s%s …\n", strategies[i].c_str(), flags.ranks,
                        flags.ranks == 1 ? "" : "s", flags.sharedDevice ? " (shared device)" : "");
            std::fflush(stdout);
            if (const int signal = launch::pendingSignal()) {
                const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP";
                throw Error(ErrorKind::Comm, std::string("interrupted by ") + name + " before " + strategies[i] +
                                                 " started: the job was torn down");
            }
            report::RunReport run = runJob(cfg, flags, std::nullopt, true);
            const std::vector<float> weights = report::readWeightsFile(*cfg.weightsPath);
            if (i == 0) ddpWeights = weights; // strategiesFlag puts DDP first
            run.maxAbsDeltaVsDdp = report::maxAbsDelta(weights, ddpWeights);
            result.strategies.push_back(std::move(run));
        }
    } catch (...) {
        std::filesystem::remove_all(dir);
        throw;
    }
    std::filesystem::remove_all(dir);
    printCompareTable(result);
    if (flags.jsonPath) {
        report::writeTextFile(*flags.jsonPath, report::toJson(result).dump(2) + "\n", "--json");
        std::printf("report written to %s\n", flags.jsonPath->c_str());
    }
    return 0;
}

} // namespace shardscope::cli
