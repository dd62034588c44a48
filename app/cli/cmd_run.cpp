// `shardscope-cli run`: real training steps of a GPT preset on this process (one rank for now;
// the sharded strategies over MPI extend this command), measured ledger vs theory, JSON report.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/device.h"
#include "kernels/cpu/gemm.h"
#include "model/data.h"
#include "model/presets.h"
#include "theory/activations.h"
#include "theory/estimate.h"
#include "train/trainer.h"

namespace shardscope::cli {

namespace {

constexpr const char* kRunHelp =
    "usage: shardscope-cli run --model PRESET --ranks N --strategy S --steps K [flags]\n"
    "  --model tiny|small|medium   GPT preset (resources/presets/models.json)\n"
    "  --ranks N                   data-parallel ranks (this build: 1)\n"
    "  --strategy S                ddp (zero1/zero2/zero3/fsdp arrive with the sharded run)\n"
    "  --steps K                   training steps (1-1000000)\n"
    "  --seed S                    data and initialisation seed (default 1)\n"
    "  --precision bf16|fp32       mixed bf16 + fp32 master (default) or pure fp32\n"
    "  --checkpointing             recompute each block's activations in backward\n"
    "  --micro-batch B             sequences per rank per step (default: the preset's)\n"
    "  --lr X                      AdamW learning rate (default: the preset's)\n"
    "  --data FILE                 byte-level training on FILE (vocab 256) instead of synthetic\n"
    "  --capacity BYTES            device memory budget, e.g. 64MiB (exceeding it is an error)\n"
    "  --backend cpu               compute backend (cuda arrives with the CUDA issue)\n"
    "  --deterministic             accepted; one rank is always bitwise deterministic\n"
    "  --json FILE                 write the report as JSON (atomically)\n";

struct RunOptions {
    model::ModelPreset preset;
    std::int64_t steps = 0;
    std::uint64_t seed = 1;
    theory::PrecisionKind precision = theory::PrecisionKind::MixedBf16;
    bool checkpointing = false;
    double learningRate = 0;
    std::optional<std::string> dataFile;
    std::optional<std::uint64_t> capacityBytes;
    std::optional<std::filesystem::path> jsonPath;
};

RunOptions parseOptions(const Args& args) {
    RunOptions o;
    o.preset = model::modelPreset(args.required("--model"));
    const std::int64_t ranks = args.integer("--ranks", 1, 4096);
    const std::string strategyText = args.required("--strategy");
    const auto strategy = theory::parseStrategy(strategyText);
    if (!strategy) throwInvalid("--strategy: unknown strategy '" + strategyText + "'");
    if (ranks != 1)
        throwInvalid("--ranks " + std::to_string(ranks) +
                     " is not yet supported: this build trains one rank (sharded runs over MPI come next)");
    if (*strategy != theory::Strategy::Ddp)
        throwInvalid("--strategy " + strategyText + " is not yet supported: this build runs ddp only");
    if (args.has("--backend") && args.required("--backend") != "cpu")
        throwInvalid("--backend " + args.required("--backend") + " is not yet supported (cpu only)");
    o.steps = args.integer("--steps", 1, 1000000);
    if (args.has("--seed")) o.seed = static_cast<std::uint64_t>(args.integer("--seed", 0, INT64_MAX));
    if (args.has("--precision")) {
        const std::string p = args.required("--precision");
        if (p == "bf16") o.precision = theory::PrecisionKind::MixedBf16;
        else if (p == "fp32") o.precision = theory::PrecisionKind::Fp32;
        else throwInvalid("--precision must be bf16 or fp32, got '" + p + "'");
    }
    o.checkpointing = args.has("--checkpointing");
    if (args.has("--micro-batch")) o.preset.microBatch = args.integer("--micro-batch", 1, 4096);
    o.learningRate = args.has("--lr") ? args.real("--lr", 0.0, 10.0) : o.preset.learningRate;
    if (args.has("--data")) {
        o.dataFile = args.required("--data");
        o.preset.shape.vocab = 256; // byte-level
    }
    if (args.has("--capacity")) o.capacityBytes = args.bytes("--capacity");
    if (args.has("--json")) {
        o.jsonPath = std::filesystem::path(args.required("--json"));
        const auto dir = o.jsonPath->parent_path().empty() ? std::filesystem::path(".")
                                                           : o.jsonPath->parent_path();
        if (!std::filesystem::is_directory(dir))
            throw Error(ErrorKind::Io, "--json: directory '" + dir.string() + "' does not exist");
    }
    return o;
}

nlohmann::json byCategory(const ByteTable& table, bool statesOnly) {
    nlohmann::json j = nlohmann::json::object();
    for (Category c : kAllCategories) {
        if (statesOnly && stateGroup(c) == StateGroup::Other) continue;
        j[std::string(categoryName(c))] = table.category(c);
    }
    return j;
}

ByteTable modelStatesOnly(const ByteTable& live) {
    ByteTable t;
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other)
            for (Tier tier : kAllTiers) t.at(c, tier) = live.at(c, tier);
    return t;
}

// Write to a temporary file beside the target, then rename: readers see all or nothing.
void writeAtomically(const std::filesystem::path& path, const std::string& text) {
    const std::filesystem::path tmp =
        path.string() + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw Error(ErrorKind::Io, "--json: cannot write '" + path.string() + "'");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(ErrorKind::Io, "--json: cannot create '" + path.string() + "'");
    }
}

std::string mib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f MiB", static_cast<double>(bytes) / 1048576.0);
    return text;
}

struct Measured {
    nlohmann::json losses = nlohmann::json::array();
    nlohmann::json stepMs = nlohmann::json::array();
};

std::unique_ptr<model::DataSource> makeData(const RunOptions& o) {
    const auto& shape = o.preset.shape;
    if (o.dataFile)
        return std::make_unique<model::ByteFileSource>(*o.dataFile, shape.seqLen, o.preset.microBatch, o.seed);
    return std::make_unique<model::MarkovSource>(shape.vocab, shape.seqLen, o.preset.microBatch, o.seed);
}

Measured runSteps(train::Trainer& trainer, std::int64_t steps) {
    Measured m;
    const double tokens = static_cast<double>(trainer.model().tokensPerBatch());
    for (std::int64_t k = 0; k < steps; ++k) {
        const train::StepResult r = trainer.step();
        const double ms = static_cast<double>(r.stepNs) / 1e6;
        std::printf("step %5lld/%lld  loss %.4f  grad-norm %.3f  %8.2f ms  %9.0f tokens/s\n",
                    static_cast<long long>(k + 1), static_cast<long long>(steps), r.loss, r.gradNorm,
                    ms, tokens / (ms / 1e3));
        m.losses.push_back(r.loss);
        m.stepMs.push_back(ms);
    }
    return m;
}

// What the theory engine predicts for this very run (one rank, DDP).
theory::Scenario scenarioOf(const RunOptions& o) {
    theory::Scenario s;
    s.shape = o.preset.shape;
    s.strategy = theory::Strategy::Ddp;
    s.ranks = 1;
    s.precision.kind = o.precision;
    s.activations = {o.preset.microBatch, o.checkpointing};
    return s;
}

void printSummary(const Ledger& ledger, const theory::ModelStates& states,
                  const theory::PeakPrediction& peak, double finalLoss, const std::string& digest) {
    const ByteTable measuredStates = modelStatesOnly(ledger.live());
    std::printf("model states: measured %s, theory %s%s\n", mib(measuredStates.total()).c_str(),
                mib(states.perRank.total()).c_str(),
                measuredStates == states.perRank ? " (equal byte for byte)" : " (DIFFER)");
    std::printf("activation peak: measured %s, theory %s\n",
                mib(ledger.peak().category(Category::Activation)).c_str(),
                mib(peak.activationBytes).c_str());
    std::printf("peak: measured %s (incl. workspace %s, which the theory does not model), theory %s\n",
                mib(ledger.peakBytes()).c_str(), mib(ledger.peak().category(Category::Workspace)).c_str(),
                mib(peak.peakBytes).c_str());
    std::printf("final loss %.4f; param digest %s\n", finalLoss, digest.c_str());
}

nlohmann::json report(const RunOptions& o, const train::Trainer& trainer, const Ledger& ledger,
                      const model::DataSource& data, const Measured& m,
                      const theory::ModelStates& states, const theory::PeakPrediction& peak,
                      const std::string& digest) {
    const nlohmann::json rank = {{"rank", 0},
                                 {"peak_bytes", byCategory(ledger.peak(), false)},
                                 {"peak_total_bytes", ledger.peakBytes()},
                                 {"model_state_bytes", byCategory(modelStatesOnly(ledger.live()), true)}};
    return {{"param_count", trainer.paramCount()},
            {"world_size", 1},
            {"strategy", "ddp"},
            {"model", o.preset.name},
            {"precision", std::string(theory::precisionName(o.precision))},
            {"checkpointing", o.checkpointing},
            {"micro_batch", o.preset.microBatch},
            {"steps", o.steps},
            {"seed", o.seed},
            {"data", data.describe()},
            {"losses", m.losses},
            {"step_ms", m.stepMs},
            {"ranks", nlohmann::json::array({rank})},
            {"comm_bytes_per_step", nlohmann::json::object()}, // one rank: no collectives
            {"theory",
             {{"model_state_bytes", byCategory(states.perRank, true)},
              {"activation_peak_bytes", peak.activationBytes},
              {"peak_bytes", peak.peakBytes}}},
            {"param_digest", digest}};
}

} // namespace

int cmdRun(std::span<const std::string> argv) {
    Args args("run",
              {"--model", "--ranks", "--strategy", "--steps", "--seed", "--precision",
               "--micro-batch", "--lr", "--data", "--capacity", "--json", "--backend"},
              {"--checkpointing", "--deterministic", "--help"});
    args.parse(argv);
    if (args.has("--help")) {
        std::fputs(kRunHelp, stdout);
        return 0;
    }
    const RunOptions o = parseOptions(args);
    const std::unique_ptr<model::DataSource> data = makeData(o);
    Ledger ledger(0);
    ledger.setCapacity(Tier::Device, o.capacityBytes);
    device::CpuDevice cpu(ledger);
    train::TrainConfig cfg;
    cfg.model = {o.preset.shape, o.preset.microBatch, o.checkpointing};
    cfg.precision = o.precision;
    cfg.optimizer.learningRate = o.learningRate;
    cfg.seed = o.seed;
    train::Trainer trainer(cfg, cpu, *data);

    std::printf("run: model %s (%llu params), %s, %s%s, micro-batch %lld, 1 rank ddp\n",
                o.preset.name.c_str(), static_cast<unsigned long long>(trainer.paramCount()),
                data->describe().c_str(), std::string(theory::precisionName(o.precision)).c_str(),
                o.checkpointing ? ", checkpointing" : "", static_cast<long long>(o.preset.microBatch));
    if (const std::string advice = kernels::blasAdvice(); !advice.empty())
        std::printf("note: %s\n", advice.c_str());
    std::printf("initial loss ≈ ln(vocab) = %.4f\n", std::log(static_cast<double>(o.preset.shape.vocab)));
    const Measured m = runSteps(trainer, o.steps);

    const theory::Scenario scenario = scenarioOf(o);
    const theory::ModelStates states = theory::modelStates(scenario);
    const theory::PeakPrediction peak = theory::predictPeak(scenario);
    const std::string digest = train::digestHex(trainer.paramDigest());
    printSummary(ledger, states, peak, m.losses.back().get<double>(), digest);
    if (o.jsonPath) {
        writeAtomically(*o.jsonPath, report(o, trainer, ledger, *data, m, states, peak, digest).dump(2) + "\n");
        std::printf("report written to %s\n", o.jsonPath->string().c_str());
    }
    return 0;
}

} // namespace shardscope::cli
