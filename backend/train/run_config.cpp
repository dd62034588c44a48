#include "train/run_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/args.h"
#include "core/error.h"

namespace shardscope::train {

namespace {

constexpr std::int64_t kMaxSteps = 1'000'000;
// Rank threads in one process: each holds a full model replica's worth of transients, and a
// thread per rank beyond this is a typo rather than a plan.
constexpr std::int64_t kMaxSharedRanks = 256;

std::string formatBytes(std::uint64_t b) { return std::to_string(b); }

void requireFolder(const std::string& flag, const std::string& path) {
    if (path.empty()) throwInvalid(flag + " needs a file name");
    const std::filesystem::path p(path);
    const auto dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(ErrorKind::Io, flag + ": directory '" + dir.string() + "' does not exist");
    // Refused now rather than after the whole run, when the file would replace the folder.
    if (std::filesystem::is_directory(p, ec)) throw Error(ErrorKind::Io, flag + ": '" + path + "' is a directory");
}

} // namespace

std::string_view backendName(Backend b) { return b == Backend::Cuda ? "cuda" : "cpu"; }

RunConfig parseRunConfig(std::span<const std::string> workerArgs, int worldSize) {
    Args args("shardscope-worker",
              {"--model", "--strategy", "--steps", "--seed", "--precision", "--micro-batch", "--lr",
               "--prefetch", "--bucket-bytes", "--reshard-after-forward", "--max-inflight",
               "--persistence-threshold", "--hybrid-group", "--grad-accum", "--capacity", "--data",
               "--stream", "--trace", "--json", "--weights-out", "--timeout-ms", "--backend", "--ranks"},
              {"--checkpointing", "--deterministic", "--no-events", "--no-sync", "--shared-device"});
    args.parse(workerArgs);
    if (worldSize < 1) throwInvalid("ranks (mpirun -np) must be at least 1, got " + std::to_string(worldSize));
    RunConfig c;
    c.worldSize = worldSize;
    c.sharedDevice = args.has("--shared-device");
    if (c.sharedDevice) {
        if (!args.has("--ranks")) throwInvalid("--shared-device needs --ranks N (the ranks to run as threads)");
        if (worldSize != 1)
            throwInvalid("--shared-device runs every rank as a thread of one process: start it without mpirun "
                         "(this job has " + std::to_string(worldSize) + " processes)");
        c.worldSize = static_cast<int>(args.integer("--ranks", 1, kMaxSharedRanks));
    } else if (args.has("--ranks")) {
        throwInvalid("--ranks is for --shared-device (under mpirun the ranks are mpirun -np)");
    }
    if (args.has("--backend")) {
        const std::string b = args.required("--backend");
        if (b == "cpu") c.backend = Backend::Cpu;
        else if (b == "cuda") c.backend = Backend::Cuda;
        else throwInvalid("--backend must be cpu or cuda, got '" + b + "'");
    }
    const std::string modelName = args.required("--model");
    try {
        c.preset = model::modelPreset(modelName);
    } catch (const Error& e) {
        throwInvalid(std::string("--model: ") + e.what());
    }
    const std::string strategyText = args.required("--strategy");
    const auto strategy = theory::parseStrategy(strategyText);
    if (!strategy)
        throwInvalid("--strategy: unknown strategy '" + strategyText +
                     "' (ddp, zero1, zero2, zero3, fsdp, fsdp_grad_op, fsdp_hybrid)");
    c.strategy = *strategy;
    c.steps = args.integer("--steps", 1, kMaxSteps);
    if (args.has("--seed")) c.seed = static_cast<std::uint64_t>(args.integer("--seed", 0, INT64_MAX));
    if (args.has("--precision")) {
        const std::string p = args.required("--precision");
        if (p == "bf16") c.precision = theory::PrecisionKind::MixedBf16;
        else if (p == "fp32") c.precision = theory::PrecisionKind::Fp32;
        else throwInvalid("--precision must be bf16 or fp32, got '" + p + "'");
    }
    c.checkpointing = args.has("--checkpointing");
    c.deterministic = args.has("--deterministic");
    c.events = !args.has("--no-events");
    if (args.has("--micro-batch")) c.preset.microBatch = args.integer("--micro-batch", 1, 4096);
    if (args.has("--lr")) {
        c.preset.learningRate = args.real("--lr", 0.0, 10.0);
        if (!(c.preset.learningRate > 0.0)) throwInvalid("--lr must be more than 0");
    }
    theory::Knobs& k = c.knobs;
    if (args.has("--bucket-bytes")) {
        const std::uint64_t b = args.bytes("--bucket-bytes");
        if (b < 1) throwInvalid("--bucket-bytes must be at least 1 byte");
        k.reduceBucketBytes = k.allGatherBucketBytes = b;
    }
    if (args.has("--prefetch")) k.prefetchDepth = static_cast<int>(args.integer("--prefetch", 0, 64));
    if (args.has("--reshard-after-forward"))
        k.reshardAfterForward = args.integer("--reshard-after-forward", 0, 1) == 1;
    if (c.strategy == theory::Strategy::FsdpShardGradOp) {
        if (args.has("--reshard-after-forward") && k.reshardAfterForward)
            throwInvalid("--reshard-after-forward 1 contradicts fsdp_grad_op (SHARD_GRAD_OP keeps "
                         "params gathered from forward to backward; use fsdp)");
        k.reshardAfterForward = false;
    }
    if (args.has("--max-inflight")) k.maxInflightAllGathers = static_cast<int>(args.integer("--max-inflight", 1, 64));
    if (args.has("--persistence-threshold"))
        k.persistenceThresholdParams =
            static_cast<std::uint64_t>(args.integer("--persistence-threshold", 0, std::int64_t{1} << 53));
    if (args.has("--hybrid-group")) k.hybridGroupSize = static_cast<int>(args.integer("--hybrid-group", 1, 1 << 20));
    if (args.has("--grad-accum")) k.gradAccumSteps = static_cast<int>(args.integer("--grad-accum", 1, 4096));
    k.noSync = args.has("--no-sync");
    if (k.noSync && c.strategy != theory::Strategy::FsdpFullShard &&
        c.strategy != theory::Strategy::FsdpShardGradOp && c.strategy != theory::Strategy::FsdpHybridShard)
        throwInvalid("--no-sync is an FSDP option (fsdp, fsdp_grad_op, fsdp_hybrid); DDP and ZeRO-1 "
                     "always accumulate locally, ZeRO-2/3 cannot");
    if (args.has("--capacity")) {
        const std::uint64_t cap = args.bytes("--capacity");
        if (cap < 1) throwInvalid("--capacity must be more than 0 bytes");
        c.capacityBytes = cap;
    }
    if (args.has("--data")) {
        c.dataFile = args.required("--data");
        std::ifstream probe(*c.dataFile, std::ios::binary);
        if (!probe) throw Error(ErrorKind::Io, "--data: cannot read '" + *c.dataFile + "'");
        c.preset.shape.vocab = 256; // byte-level
    }
    if (args.has("--stream")) {
        c.streamPath = args.required("--stream");
        if (c.streamPath->empty()) throwInvalid("--stream needs a socket path");
    }
    for (auto [flag, field] : {std::pair{"--trace", &c.tracePath}, std::pair{"--json", &c.jsonPath},
                               std::pair{"--weights-out", &c.weightsPath}}) {
        if (!args.has(flag)) continue;
        *field = args.required(flag);
        requireFolder(flag, **field);
    }
    if (args.has("--timeout-ms")) c.timeoutMs = args.integer("--timeout-ms", 100, 3'600'000);
    // Everything the theory engine checks (hybrid group dividing the ranks, knob ranges, sizes).
    const theory::Scenario s = scenarioOf(c);
    try {
        theory::validate(s);
    } catch (const Error& e) {
        std::string m = e.what();
        // theory speaks of --ranks; under mpirun the rank count is the job's size (mpirun -np).
        if (auto at = m.find("ranks (--ranks)"); at != std::string::npos && !c.sharedDevice)
            m.replace(at, 15, "ranks (mpirun -np)");
        throwInvalid(m);
    }
    return c;
}

std::vector<std::string> toWorkerArgs(const RunConfig& c) {
    const theory::Knobs defaults;
    std::vector<std::string> a = {"--model", c.preset.name, "--strategy", std::string(theory::strategyName(c.strategy)),
                                  "--steps", std::to_string(c.steps), "--seed", std::to_string(c.seed),
                                  "--precision", c.precision == theory::PrecisionKind::Fp32 ? "fp32" : "bf16"};
    const model::ModelPreset base = model::modelPreset(c.preset.name);
    if (c.checkpointing) a.push_back("--checkpointing");
    if (c.preset.microBatch != base.microBatch) a.insert(a.end(), {"--micro-batch", std::to_string(c.preset.microBatch)});
    if (c.preset.learningRate != base.learningRate) {
        char text[64];
        std::snprintf(text, sizeof(text), "%.17g", c.preset.learningRate);
        a.insert(a.end(), {"--lr", text});
    }
    if (c.deterministic) a.push_back("--deterministic");
    const theory::Knobs& k = c.knobs;
    if (k.reduceBucketBytes != defaults.reduceBucketBytes) a.insert(a.end(), {"--bucket-bytes", formatBytes(k.reduceBucketBytes)});
    if (k.prefetchDepth != defaults.prefetchDepth) a.insert(a.end(), {"--prefetch", std::to_string(k.prefetchDepth)});
    if (k.reshardAfterForward != defaults.reshardAfterForward && c.strategy != theory::Strategy::FsdpShardGradOp)
        a.insert(a.end(), {"--reshard-after-forward", k.reshardAfterForward ? "1" : "0"});
    if (k.maxInflightAllGathers != defaults.maxInflightAllGathers)
        a.insert(a.end(), {"--max-inflight", std::to_string(k.maxInflightAllGathers)});
    if (k.persistenceThresholdParams != 0)
        a.insert(a.end(), {"--persistence-threshold", std::to_string(k.persistenceThresholdParams)});
    if (k.hybridGroupSize != 0) a.insert(a.end(), {"--hybrid-group", std::to_string(k.hybridGroupSize)});
    if (k.gradAccumSteps != 1) a.insert(a.end(), {"--grad-accum", std::to_string(k.gradAccumSteps)});
    if (k.noSync) a.push_back("--no-sync");
    if (c.capacityBytes) a.insert(a.end(), {"--capacity", formatBytes(*c.capacityBytes)});
    if (c.dataFile) a.insert(a.end(), {"--data", *c.dataFile});
    if (c.streamPath) a.insert(a.end(), {"--stream", *c.streamPath});
    if (c.tracePath) a.insert(a.end(), {"--trace", *c.tracePath});
    if (c.jsonPath) a.insert(a.end(), {"--json", *c.jsonPath});
    if (c.weightsPath) a.insert(a.end(), {"--weights-out", *c.weightsPath});
    if (c.timeoutMs != 30000) a.insert(a.end(), {"--timeout-ms", std::to_string(c.timeoutMs)});
    if (!c.events) a.push_back("--no-events");
    if (c.backend != Backend::Cpu) a.insert(a.end(), {"--backend", std::string(backendName(c.backend))});
    if (c.sharedDevice) a.insert(a.end(), {"--shared-device", "--ranks", std::to_string(c.worldSize)});
    return a;
}

nlohmann::json toJson(const RunConfig& c) {
    const theory::Knobs& k = c.knobs;
    nlohmann::json j = {
        {"model", c.preset.name},
        {"strategy", std::string(theory::strategyName(c.strategy))},
        {"world_size", c.worldSize},
        {"steps", c.steps},
        {"seed", c.seed},
        {"precision", std::string(theory::precisionName(c.precision))},
        {"checkpointing", c.checkpointing},
        {"micro_batch", c.preset.microBatch},
        {"learning_rate", c.preset.learningRate},
        {"deterministic", c.deterministic},
        {"shape",
         {{"layers", c.preset.shape.layers}, {"d_model", c.preset.shape.dModel}, {"heads", c.preset.shape.heads},
          {"vocab", c.preset.shape.vocab}, {"seq_len", c.preset.shape.seqLen}}},
        {"knobs",
         {{"reduce_bucket_bytes", k.reduceBucketBytes},
          {"allgather_bucket_bytes", k.allGatherBucketBytes},
          {"prefetch", k.prefetchDepth},
          {"reshard_after_forward", k.reshardAfterForward},
          {"max_inflight", k.maxInflightAllGathers},
          {"persistence_threshold", k.persistenceThresholdParams},
          {"hybrid_group", k.hybridGroupSize},
          {"grad_accum", k.gradAccumSteps},
          {"no_sync", k.noSync}}},
        {"timeout_ms", c.timeoutMs},
        {"events", c.events},
        {"backend", std::string(backendName(c.backend))},
        {"shared_device", c.sharedDevice},
    };
    j["capacity_bytes"] = c.capacityBytes ? nlohmann::json(*c.capacityBytes) : nlohmann::json(nullptr);
    j["data"] = c.dataFile ? nlohmann::json(*c.dataFile) : nlohmann::json("synthetic");
    return j;
}

theory::Scenario scenarioOf(const RunConfig& c) {
    theory::Scenario s;
    s.shape = c.preset.shape;
    s.strategy = c.strategy;
    s.ranks = c.worldSize;
    s.precision.kind = c.precision;
    s.knobs = c.knobs;
    if (c.strategy == theory::Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
    s.knobs.deterministicReductions = c.deterministic;
    s.knobs.sharedDeviceCollectives = c.sharedDevice;
    s.activations = {c.preset.microBatch, c.checkpointing};
    return s;
}

TrainConfig trainConfigOf(const RunConfig& c) {
    TrainConfig t;
    t.model = {c.preset.shape, c.preset.microBatch, c.checkpointing};
    t.precision = c.precision;
    t.optimizer.learningRate = c.preset.learningRate;
    t.seed = c.seed;
    t.gradAccumSteps = c.knobs.gradAccumSteps;
    return t;
}

strategy::StrategyConfig strategyConfigOf(const RunConfig& c) {
    strategy::StrategyConfig s;
    s.strategy = c.strategy;
    s.knobs = scenarioOf(c).knobs;
    s.precision = c.precision;
    s.shape = c.preset.shape;
    s.seed = c.seed;
    return s;
}

std::unique_ptr<model::DataSource> makeDataSource(const RunConfig& c) {
    const auto& shape = c.preset.shape;
    if (c.dataFile)
        return std::make_unique<model::ByteFileSource>(*c.dataFile, shape.seqLen, c.preset.microBatch, c.seed);
    return std::make_unique<model::MarkovSource>(shape.vocab, shape.seqLen, c.preset.microBatch, c.seed);
}

} // namespace shardscope::train
