// `shardscope-cli run`: real training steps on N ranks (mpirun + shardscope-worker; one rank,
// or --shared-device, runs the worker directly), progress per step, then measured vs theory
// and the JSON report.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "run_common.h"
#include "train/report.h"
#include "train/run_config.h"

namespace shardscope::cli {
namespace {

constexpr const char* kRunHelp =
    "usage: shardscope-cli run --model PRESET --ranks N --strategy S --steps K [flags]\n"
    "launcher:\n"
    "  --ranks N                 data-parallel ranks (mpirun -np N; 1 runs the worker directly)\n"
    "  --shared-device           run the N ranks as threads of one worker process, no mpirun\n"
    "                            (with --backend cuda: all on one GPU)\n"
    "  --backend cpu|cuda        compute backend (cpu); cuda: one GPU per rank under mpirun\n"
    "  --json FILE               write the report as JSON (atomically)\n"
    "  --trace FILE              write the recording (.sstrace) for the GUI\n"
    "  --hostfile FILE           mpirun --hostfile (multi-node)\n"
    "  --mpirun-args \"…\"         extra mpirun arguments, passed through\n"
    "  --stall-timeout SECONDS   tear the job down after this long without progress (60)\n"
    "  --stream SOCKET           also forward the live event stream to this Unix socket\n"
    "  --ending FILE             write how the job ended as JSON (kind, rank, step, cause)\n"
    "  --worker PATH             the shardscope-worker to run (default: beside this binary)\n"
    "  --mpirun PATH             the mpirun to run (default: mpirun on PATH)\n"
    "worker (see docs/strategies.md):\n"
    "  --model tiny|small|medium --strategy ddp|zero1|zero2|zero3|fsdp|fsdp_grad_op|fsdp_hybrid\n"
    "  --steps K [--seed S] [--precision bf16|fp32] [--checkpointing] [--micro-batch B] [--lr X]\n"
    "  [--deterministic] [--prefetch D] [--bucket-bytes BYTES] [--reshard-after-forward 0|1]\n"
    "  [--max-inflight N] [--persistence-threshold PARAMS] [--hybrid-group G] [--grad-accum A]\n"
    "  [--no-sync] [--capacity BYTES] [--data FILE] [--timeout-ms T] [--no-events]\n";

std::uint64_t u64(const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<std::uint64_t>() : 0;
}

std::uint64_t sumValues(const nlohmann::json& obj) {
    std::uint64_t sum = 0;
    if (obj.is_object())
        for (const auto& [k, v] : obj.items())
            if (k != "total" && v.is_number()) sum += v.get<std::uint64_t>();
    return sum;
}

// The median share of a step this rank spent in communication that no compute hid.
std::string exposedText(const nlohmann::json& rank) {
    if (!rank.contains("exposed_comm")) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%% of step", 100.0 * rank["exposed_comm"].value("fraction_median", 0.0));
    return text;
}

void printSummary(const nlohmann::json& r) {
    const auto& theory = r["theory"];
    const std::uint64_t predictedPeak = u64(theory, "predicted_peak_bytes");
    const std::uint64_t theoryStates = sumValues(theory["model_state_bytes"]);
    std::printf("\n%-6s %-28s %-28s %-28s %s\n", "rank", "model states (measured)", "peak (measured)",
                "comm sent/step", "exposed comm");
    for (const auto& rank : r["ranks"]) {
        std::printf("%-6d %-28s %-28s %-28s %s\n", rank["rank"].get<int>(),
                    humanBytes(sumValues(rank["model_state_bytes"])).c_str(),
                    humanBytes(u64(rank["peak_bytes"], "total")).c_str(),
                    humanBytes(sumValues(rank["comm_bytes_per_step"])).c_str(),
                    exposedText(rank).c_str());
    }
    std::printf("theory: model states %s, predicted peak %s, comm %s per step (≈ %.2f Ψ)\n",
                humanBytes(theoryStates).c_str(), humanBytes(predictedPeak).c_str(),
                humanBytes(sumValues(theory["comm_bytes_per_step"])).c_str(),
                theory.value("psi_equivalents", 0.0));
    if (r.contains("comparison")) {
        const auto& c = r["comparison"];
        std::printf("model states equal theory: %s; peak Δ %+.2f%%; comm Δ %+.2f%%\n",
                    c.value("model_states_equal", false) ? "yes, byte for byte" : "NO",
                    100.0 * c.value("peak_delta_fraction", 0.0),
                    100.0 * c.value("comm_delta_fraction", 0.0));
    }
    if (r.contains("notes"))
        for (const auto& n : r["notes"]) std::printf("note: %s\n", n.get<std::string>().c_str());
    std::printf("final loss %.4f; param digest %s\n", r["losses"].back().get<double>(),
                r["param_digest"].get<std::string>().c_str());
}

} // namespace

int cmdRun(std::span<const std::string> argv) {
    LauncherFlags flags;
    std::vector<std::pair<std::string, std::string>> extras;
    const std::vector<std::string> workerArgs = splitLauncherFlags(argv, flags, {}, extras);
    if (flags.help) {
        std::fputs(kRunHelp, stdout);
        return 0;
    }
    // Everything is validated here, before anything is launched.
    const train::RunConfig config = parseJobConfig(workerArgs, flags);
    if (flags.jsonPath) checkOutputPath(*flags.jsonPath, "--json");
    if (flags.tracePath) checkOutputPath(*flags.tracePath, "--trace");

    std::printf("run: %s (vocab %lld, %s), %d rank%s%s on %s, %s, %lld steps\n", config.preset.name.c_str(),
                static_cast<long long>(config.preset.shape.vocab),
                config.dataFile ? ("bytes of " + *config.dataFile).c_str() : "synthetic Markov data",
                flags.ranks, flags.ranks == 1 ? "" : "s", config.sharedDevice ? " (threads of one process)" : "",
                std::string(train::backendName(config.backend)).c_str(),
                std::string(theory::strategyName(config.strategy)).c_str(),
                static_cast<long long>(config.steps));
    std::fflush(stdout);
    const nlohmann::json report = runJob(config, flags, flags.tracePath, false);
    printSummary(report);
    if (flags.jsonPath) {
        train::writeTextFile(*flags.jsonPath, report.dump(2) + "\n", "--json");
        std::printf("report written to %s\n", flags.jsonPath->c_str());
    }
    if (flags.tracePath) std::printf("recording written to %s\n", flags.tracePath->c_str());
    return 0;
}

} // namespace shardscope::cli
