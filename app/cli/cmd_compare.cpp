// `shardscope-cli compare`: the same job under several strategies with the same seed, side by
// side — per-rank peak by category, model states measured vs theory, savings vs DDP measured
// vs theoretical, communication measured vs theory, step time, and the largest |Δ| of the
// final fp32 weights against DDP (bitwise 0 with --deterministic).
#include "commands.h"
#include "config_flags.h"
#include "core/error.h"
#include "launch/job.h"
#include "plan/policy.h"
#include "report/files.h"
#include "report_print.h"
#include "run_common.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace shardscope::cli {
namespace {

constexpr const char* kCompareHelp =
    "usage: shardscope-cli compare --ranks N --strategies ddp,zero1,zero2,zero3,fsdp --steps K\n"
    "                              [--model PRESET] [--json FILE] [--ending FILE]\n"
    "                              [--progress human|json]\n"
    "                              [worker flags]\n"
    "  Runs each strategy with the same seed (DDP first: the baseline) and prints them side by\n"
    "  side. --deterministic is on unless --nondeterministic is given. Worker flags as in `run`\n"
    "  (--shared-device and --backend too). The exposed column is the median share of a step\n"
    "  spent in communication that no compute hid (the rank that waits most). --ending FILE\n"
    "  writes how the last job ended as JSON (kind, rank, step, cause). --ds-config FILE and\n"
    "  --accelerate-config FILE set worker flags from those files (flags given win; the file's\n"
    "  ZeRO stage is listed as ignored: --strategies decides).\n";

std::vector<std::string> strategiesFlag(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string s; std::getline(in, s, ',');) {
        if (!plan::parseStrategy(s)) throwInvalid("--strategies: unknown strategy '" + s + "'");
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
    std::vector<std::string> workerArgs = splitLauncherFlags(
        argv, flags, {"--strategies", "--ds-config", "--accelerate-config"}, extras);
    if (flags.help) {
        std::fputs(kCompareHelp, stdout);
        return 0;
    }
    std::optional<ConfigImportResult> imported;
    if (const auto file = configFileFlag(extras)) {
        imported = importForJob(*file, "compare", argv, flags.ranks, workerArgs);
        if (imported->ranks) flags.ranks = *imported->ranks;
    }
    if (flags.tracePath)
        throwInvalid("--trace: compare runs several jobs; record them one by one with `run`");
    if (!flags.streamPath.empty())
        throwInvalid("--stream: compare runs several jobs; stream them one by one with `run`");
    // Its jobs would save into one folder one after the other, without the folder's lock.
    if (std::find(workerArgs.begin(), workerArgs.end(), "--save") != workerArgs.end())
        throwInvalid("--save: compare runs several jobs; save them one by one with `run`");
    std::string strategiesText = plan::strategyList(plan::classicStrategies());
    for (const auto& [flag, value] : extras)
        if (flag == "--strategies") strategiesText = value;
    const std::vector<std::string> strategies = strategiesFlag(strategiesText);
    if (std::find(workerArgs.begin(), workerArgs.end(), "--strategy") != workerArgs.end())
        throwInvalid("--strategy: compare takes --strategies (a comma list)");
    if (std::find(workerArgs.begin(), workerArgs.end(), "--weights-out") != workerArgs.end())
        throwInvalid(
            "--weights-out: compare writes each strategy's weights itself (to a temporary folder)");
    const auto nondet = std::find(workerArgs.begin(), workerArgs.end(), "--nondeterministic");
    const bool deterministic = nondet == workerArgs.end();
    const bool askedDeterministic =
        std::find(workerArgs.begin(), workerArgs.end(), "--deterministic") != workerArgs.end();
    if (!deterministic && askedDeterministic)
        throwInvalid("--nondeterministic and --deterministic contradict each other; give one");
    if (!deterministic) {
        workerArgs.erase(nondet);
        if (std::find(workerArgs.begin(), workerArgs.end(), "--nondeterministic") !=
            workerArgs.end())
            throwInvalid("--nondeterministic is given twice; give it once");
    } else if (!askedDeterministic) {
        workerArgs.push_back("--deterministic");
    }
    if (std::find(workerArgs.begin(), workerArgs.end(), "--model") == workerArgs.end())
        workerArgs.insert(workerArgs.end(), {"--model", "tiny"});

    // Validate every configuration before the first job starts.
    std::vector<runconfig::RunConfig> configs;
    // --hybrid-group is fsdp_hybrid's: given to the rows that have shard groups, refused when
    // none has (parseRunConfig refuses it for any other strategy).
    std::vector<std::string> hybridGroup;
    for (auto it = workerArgs.begin(); it != workerArgs.end();) {
        if (*it == "--hybrid-group" && it + 1 != workerArgs.end()) {
            hybridGroup.insert(hybridGroup.end(), it, it + 2);
            it = workerArgs.erase(it, it + 2);
        } else if (it->rfind("--hybrid-group=", 0) == 0) {
            hybridGroup.push_back(*it);
            it = workerArgs.erase(it);
        } else {
            ++it;
        }
    }
    const auto hasGroups = [](const std::string& s) {
        return plan::policyFor(*plan::parseStrategy(s)).usesHybridGroup();
    };
    if (!hybridGroup.empty() && std::none_of(strategies.begin(), strategies.end(), hasGroups))
        throwInvalid("--hybrid-group is an fsdp_hybrid option; --strategies " + strategiesText +
                     " has no shard groups");
    validatedWith(imported, [&] {
        for (const auto& s : strategies) {
            std::vector<std::string> args = workerArgs;
            if (hasGroups(s)) args.insert(args.end(), hybridGroup.begin(), hybridGroup.end());
            args.insert(args.end(), {"--strategy", s});
            configs.push_back(parseJobConfig(args, flags));
        }
        checkOutputs(flags, configs.front());
        return 0;
    });
    if (imported) printImport(*imported);
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
            if (flags.progressJson) {
                printProgressEvent({{"event", "job"},
                                    {"strategy", strategies[i]},
                                    {"index", i + 1},
                                    {"jobs", configs.size()},
                                    {"ranks", flags.ranks}});
            } else {
                std::printf("compare: %s on %d rank%s%s …\n", strategies[i].c_str(), flags.ranks,
                            flags.ranks == 1 ? "" : "s",
                            flags.sharedDevice ? " (shared device)" : "");
                std::fflush(stdout);
            }
            if (const int signal = launch::pendingSignal()) {
                const char* name = signal == SIGINT    ? "SIGINT"
                                   : signal == SIGTERM ? "SIGTERM"
                                                       : "SIGHUP";
                throw Error(ErrorKind::Comm, std::string("interrupted by ") + name + " before " +
                                                 strategies[i] + " started: the job was torn down");
            }
            noteUnreadFlags(workerArgs, cfg.strategy);
            report::RunReport run = runJob(cfg, flags, std::nullopt, true);
            if (imported) addToReport(*imported, run);
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
    if (flags.jsonPath &&
        noteWhereWritten(*flags.jsonPath,
                         report::writeTextFile(*flags.jsonPath,
                                               report::toJson(result).dump(2) + "\n", "--json")))
        std::printf("report written to %s\n", flags.jsonPath->c_str());
    return conflicts() == 0 ? 0 : 1;
}

} // namespace shardscope::cli
