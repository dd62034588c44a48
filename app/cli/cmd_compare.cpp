// `shardscope-cli compare`: the same job under several strategies with the same seed, side by
// side — per-rank peak by category, model states measured vs theory, savings vs DDP measured
// vs theoretical, communication measured vs theory, step time, and the largest |Δ| of the
// final fp32 weights against DDP (bitwise 0 with --deterministic).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "run_common.h"
#include "train/report.h"
#include "train/run_config.h"

namespace shardscope::cli {
namespace {

constexpr const char* kCompareHelp =
    "usage: shardscope-cli compare --ranks N --strategies ddp,zero1,zero2,zero3,fsdp --steps K\n"
    "                              [--model tiny|small|medium] [--json FILE] [--ending FILE] [worker flags]\n"
    "  Runs each strategy with the same seed (DDP first: the baseline) and prints them side by\n"
    "  side. --deterministic is on unless --nondeterministic is given. Worker flags as in `run`\n"
    "  (--shared-device and --backend too). The exposed column is the median share of a step\n"
    "  spent in communication that no compute hid (the rank that waits most). --ending FILE\n"
    "  writes how the last job ended as JSON (kind, rank, step, cause).\n";

struct Row {
    std::string strategy;
    nlohmann::json report;
    std::vector<float> weights;
    double maxDelta = 0;
};

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

std::uint64_t sumOf(const nlohmann::json& obj) {
    std::uint64_t sum = 0;
    if (obj.is_object())
        for (const auto& [k, v] : obj.items())
            if (k != "total" && v.is_number()) sum += v.get<std::uint64_t>();
    return sum;
}

// The rank with the largest peak: the one that decides whether a job fits.
const nlohmann::json& worstRank(const nlohmann::json& report) {
    const auto& ranks = report["ranks"];
    std::size_t best = 0;
    for (std::size_t i = 1; i < ranks.size(); ++i)
        if (ranks[i]["peak_bytes"]["total"].get<std::uint64_t>() >
            ranks[best]["peak_bytes"]["total"].get<std::uint64_t>())
            best = i;
    return ranks[best];
}

double medianStepMs(const nlohmann::json& report) {
    std::vector<double> ms;
    for (const auto& v : report["step_ms"]) ms.push_back(v.get<double>());
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void printTable(const std::vector<Row>& rows) {
    const auto& ddp = rows.front().report;
    const double ddpStates = static_cast<double>(sumOf(worstRank(ddp)["model_state_bytes"]));
    const double ddpTheory = static_cast<double>(sumOf(ddp["theory"]["model_state_bytes"]));
    std::printf("\n%-13s %13s %13s %6s %15s %13s %13s %9s %8s %12s\n", "strategy", "states meas.",
                "states theory", "equal", "savings m/t", "comm meas.", "comm theory", "step ms",
                "exposed", "max|Δ| vs ddp");
    for (const Row& r : rows) {
        const auto& rank = worstRank(r.report);
        const std::uint64_t states = sumOf(rank["model_state_bytes"]);
        const std::uint64_t theoryStates = sumOf(r.report["theory"]["model_state_bytes"]);
        char savings[32];
        std::snprintf(savings, sizeof savings, "%.2f×/%.2f×", ddpStates / static_cast<double>(states),
                      ddpTheory / static_cast<double>(theoryStates));
        char delta[32];
        std::snprintf(delta, sizeof delta, r.maxDelta == 0 ? "0 (bitwise)" : "%.3g", r.maxDelta);
        // Exposed communication: the median share of a step the most-waiting rank spent in
        // collectives no compute hid.
        char exposed[16];
        std::snprintf(exposed, sizeof exposed, "%.1f%%", 100.0 * r.report.value("exposed_comm_fraction", 0.0));
        std::printf("%-13s %13llu %13llu %6s %15s %13llu %13llu %9.2f %8s %12s\n", r.strategy.c_str(),
                    static_cast<unsigned long long>(states),
                    static_cast<unsigned long long>(theoryStates),
                    states == theoryStates ? "yes" : "NO", savings,
                    static_cast<unsigned long long>(sumOf(r.report["comm_bytes_per_step"])),
                    static_cast<unsigned long long>(sumOf(r.report["theory"]["comm_bytes_per_step"])),
                    medianStepMs(r.report), exposed, delta);
    }
    std::printf("\nper-rank peak by category (the rank with the largest peak; bytes):\n%-13s", "strategy");
    const std::vector<std::string> cats = {"param_shard", "param_full", "grad_full", "grad_shard",
                                           "master_fp32", "adam_m", "adam_v", "activation",
                                           "comm_buffer", "workspace"};
    for (const auto& c : cats) std::printf(" %11s", c.c_str());
    std::printf(" %11s %11s\n", "peak", "predicted");
    for (const Row& r : rows) {
        const auto& peak = worstRank(r.report)["peak_bytes"];
        std::printf("%-13s", r.strategy.c_str());
        for (const auto& c : cats) std::printf(" %11llu", static_cast<unsigned long long>(peak.value(c, 0ull)));
        std::printf(" %11llu %11llu\n", static_cast<unsigned long long>(peak.value("total", 0ull)),
                    static_cast<unsigned long long>(r.report["theory"].value("predicted_peak_bytes", 0ull)));
    }
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
    std::vector<train::RunConfig> configs;
    char dirTemplate[] = "/tmp/shardscope-compare-XXXXXX";
    for (const auto& s : strategies) {
        std::vector<std::string> args = workerArgs;
        args.insert(args.end(), {"--strategy", s});
        configs.push_back(parseJobConfig(args, flags));
    }
    if (!::mkdtemp(dirTemplate)) throw Error(ErrorKind::Io, "cannot create a temporary folder");
    const std::filesystem::path dir(dirTemplate);
    std::vector<Row> rows;
    try {
        for (std::size_t i = 0; i < configs.size(); ++i) {
            train::RunConfig cfg = configs[i];
            cfg.weightsPath = (dir / (strategies[i] + ".weights")).string();
            std::printf("compare: %s on %d rank%s%s …\n", strategies[i].c_str(), flags.ranks,
                        flags.ranks == 1 ? "" : "s", flags.sharedDevice ? " (shared device)" : "");
            std::fflush(stdout);
            Row row{strategies[i], runJob(cfg, flags, std::nullopt, true), {}, 0};
            row.weights = train::readWeightsFile(*cfg.weightsPath);
            row.maxDelta = train::maxAbsDelta(row.weights, rows.empty() ? row.weights : rows.front().weights);
            row.report["max_abs_delta_vs_ddp"] = row.maxDelta;
            rows.push_back(std::move(row));
        }
    } catch (...) {
        std::filesystem::remove_all(dir);
        throw;
    }
    std::filesystem::remove_all(dir);
    printTable(rows);
    if (flags.jsonPath) {
        nlohmann::json out = {{"ranks", flags.ranks}, {"deterministic", deterministic},
                              {"strategies", nlohmann::json::array()}};
        for (const Row& r : rows) out["strategies"].push_back(r.report);
        train::writeTextFile(*flags.jsonPath, out.dump(2) + "\n", "--json");
        std::printf("report written to %s\n", flags.jsonPath->c_str());
    }
    return 0;
}

} // namespace shardscope::cli
