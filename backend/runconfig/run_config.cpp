#include "runconfig/run_config.h"

#include "checkpoint/store.h"
#include "core/args.h"
#include "core/error.h"
#include "core/user_files.h"
#include "plan/policy.h"
#include "plan/shape.h"
#include "runconfig/problems.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace shardscope::runconfig {

namespace {

// A flag's integer value, checked against the one table of limits.
std::int64_t integerFlag(const Args& args, const std::string& flag, Field field) {
    const Limit& l = limitOf(field);
    return args.integer(flag, l.min, l.max);
}

std::string formatBytes(std::uint64_t b) {
    return std::to_string(b);
}

void checkStepFolders(const RunConfig& c, std::int64_t start);
void checkResumable(const Args& args, const checkpoint::Opened& opened, RunConfig& c);

// --save, --save-every, --resume. The checkpoint to resume is opened here, on the launching side
// too: not a checkpoint, malformed, or of another model is exit 2 before anything starts.
void parseCheckpointFlags(const Args& args, RunConfig& c) {
    if (args.has("--save")) {
        c.saveDir = args.required("--save");
        if (c.saveDir->empty()) throwInvalid("--save needs a folder");
        struct stat st {};
        const std::string& dir = *c.saveDir;
        if (::stat(dir.c_str(), &st) != 0) {
            // Missing is fine (created at the first save); a symlink loop or the like is not.
            if (errno != ENOENT)
                throw Error(ErrorKind::Io,
                            "--save: cannot use '" + dir + "': " + ioErrorText(errno));
        } else if (!S_ISDIR(st.st_mode)) {
            throw Error(ErrorKind::Io, "--save: '" + dir + "' is not a folder");
        } else if (::lstat((dir + "/metadata.json").c_str(), &st) == 0) {
            throwInvalid(
                "--save: '" + dir +
                "' is a step folder of a checkpoint; give the folder that holds the steps");
        } else if (::lstat((dir + "/latest").c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
                   !S_ISLNK(st.st_mode)) {
            throw Error(ErrorKind::Io, "--save: '" + dir +
                                           "/latest' is not a file; the save could not replace it");
        }
    }
    if (args.has("--save-every")) c.saveEvery = args.integer("--save-every", 1, kMaxSaveEvery);
    c.saveAsync = args.has("--save-async");
    if (c.saveAsync && !c.saveDir) throwInvalid("--save-async needs --save");
    std::optional<checkpoint::Opened> resumed;
    if (args.has("--resume")) {
        c.resumePath = args.required("--resume");
        resumed = checkpoint::openCheckpoint(*c.resumePath);
        checkResumable(args, *resumed, c);
    }
    if (c.saveDir) checkStepFolders(c, resumed ? resumed->meta.step : 0);
}

// Every step folder this run will save that exists already must be a checkpoint step: a save
// replaces nothing else (a folder of the user's named step-K stays; refused before training).
void checkStepFolders(const RunConfig& c, std::int64_t start) {
    const std::string& dir = *c.saveDir;
    for (const std::int64_t k : checkpoint::stepFolders(dir)) {
        const std::int64_t j = k - start;
        const bool saved = c.steps == 0
                               ? j == 0
                               : j >= 1 && j <= c.steps &&
                                     (j == c.steps || (c.saveEvery > 0 && j % c.saveEvery == 0));
        if (!saved) continue;
        if (const std::string problem = checkpoint::replaceProblem(dir, k); !problem.empty())
            throwInvalid("--save: '" + dir + "/" + checkpoint::stepDirName(k) +
                         "' would be replaced by this run's step " + std::to_string(k) + ", but " +
                         problem + "; move it or give another folder");
    }
}

void checkResumable(const Args& args, const checkpoint::Opened& opened, RunConfig& c) {
    const plan::GptShape& a = opened.meta.shape;
    const plan::GptShape& b = c.preset.shape;
    if (a.layers != b.layers || a.dModel != b.dModel || a.heads != b.heads || a.vocab != b.vocab ||
        a.seqLen != b.seqLen) {
        auto shape = [](const plan::GptShape& s) {
            return std::to_string(s.layers) + " layers, d_model " + std::to_string(s.dModel) +
                   ", " + std::to_string(s.heads) + " heads, vocab " + std::to_string(s.vocab) +
                   ", context " + std::to_string(s.seqLen);
        };
        throwInvalid("--resume: '" + opened.dir + "' holds another model (" + shape(a) +
                     "); --model " + c.preset.name + (c.dataFile ? " with --data" : "") + " is " +
                     shape(b));
    }
    if (args.has("--seed") && c.seed != opened.meta.seed)
        throwInvalid("--resume: the checkpoint's run used --seed " +
                     std::to_string(opened.meta.seed) +
                     "; its data would not continue with --seed " + std::to_string(c.seed));
    c.seed = opened.meta.seed;
    // The optimizer continues as it was saved: its learning rate too, unless --lr is given.
    c.checkpointLearningRate = opened.meta.optimizer.learningRate;
    if (!args.has("--lr")) c.preset.learningRate = opened.meta.optimizer.learningRate;
}

} // namespace

// --nvme-dir and its I/O settings; the directory is checked here so that a bad one is exit 2
// before anything trains: it must be a writable directory with room for this rank's states.
static void parseNvme(const Args& args, RunConfig& c) {
    const bool nvme = c.offload.optimizer == Tier::Nvme || c.offload.param == Tier::Nvme;
    for (const char* flag : {"--nvme-dir", "--keep-nvme", "--aio-block-bytes", "--aio-queue-depth"})
        if (args.has(flag) && !nvme)
            throwInvalid(
                std::string(flag) +
                " is for the NVMe tier (--offload-optimizer nvme or --offload-params nvme)");
    if (!nvme) return;
    if (!args.has("--nvme-dir"))
        throwInvalid(std::string(c.offload.param == Tier::Nvme ? "--offload-params"
                                                               : "--offload-optimizer") +
                     " nvme needs --nvme-dir DIR (where each rank's file goes)");
    c.nvmeDir = args.required("--nvme-dir");
    c.keepNvme = args.has("--keep-nvme");
    if (args.has("--aio-block-bytes")) {
        c.aioBlockBytes = args.bytes("--aio-block-bytes");
        if (c.aioBlockBytes < 4096 || c.aioBlockBytes % 4096 != 0 || c.aioBlockBytes > (1ull << 30))
            throwInvalid(
                "--aio-block-bytes must be a multiple of 4096 between 4KiB and 1GiB, got " +
                std::to_string(c.aioBlockBytes));
    }
    if (args.has("--aio-queue-depth")) c.aioQueueDepth = args.integer("--aio-queue-depth", 1, 1024);
    struct stat st {};
    if (::stat(c.nvmeDir.c_str(), &st) != 0)
        throwInvalid("--nvme-dir " + c.nvmeDir + ": " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) throwInvalid("--nvme-dir " + c.nvmeDir + " is not a directory");
    if (::access(c.nvmeDir.c_str(), W_OK | X_OK) != 0)
        throwInvalid("--nvme-dir " + c.nvmeDir + " is not writable: " + std::strerror(errno));
    struct statvfs fs {};
    if (::statvfs(c.nvmeDir.c_str(), &fs) == 0 && !(fs.f_flag & ST_RDONLY)) {
        // Each rank's states, rounded up per unit to the 4 KiB alignment of O_DIRECT (up to four
        // regions per unit: params, master, m, v).
        const theory::Scenario scenario = scenarioOf(c);
        const std::uint64_t perRank =
            scenario.shape ? theory::modelStates(scenario).perRank.tier(Tier::Nvme) : 0;
        const std::uint64_t units = plan::unitParams(c.preset.shape).size();
        const std::uint64_t need =
            (perRank + 4096 * 4 * units) * static_cast<std::uint64_t>(c.worldSize);
        const std::uint64_t room = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
        if (need > room)
            throwInvalid("--nvme-dir " + c.nvmeDir + " has " + std::to_string(room) +
                         " bytes free; the NVMe tier needs " + std::to_string(need));
    } else {
        throwInvalid("--nvme-dir " + c.nvmeDir + " is on a read-only file system");
    }
}

std::string_view backendName(Backend b) {
    return b == Backend::Cuda ? "cuda" : "cpu";
}

RunConfig parseRunConfig(std::span<const std::string> workerArgs, int worldSize) {
    Args args("shardscope-worker",
              {"--model",
               "--strategy",
               "--steps",
               "--seed",
               "--precision",
               "--micro-batch",
               "--lr",
               "--prefetch",
               "--bucket-bytes",
               "--reshard-after-forward",
               "--max-inflight",
               "--persistence-threshold",
               "--hybrid-group",
               "--grad-accum",
               "--capacity",
               "--data",
               "--stream",
               "--trace",
               "--json",
               "--weights-out",
               "--timeout-ms",
               "--backend",
               "--ranks",
               "--tp",
               "--save",
               "--save-every",
               "--resume",
               "--offload-optimizer",
               "--offload-params",
               "--nvme-dir",
               "--aio-block-bytes",
               "--aio-queue-depth"},
              {"--checkpointing", "--deterministic", "--no-events", "--no-sync", "--shared-device",
               "--keep-nvme", "--save-async"});
    args.parse(workerArgs);
    if (worldSize < 1)
        throwInvalid("ranks (mpirun -np) must be at least 1, got " + std::to_string(worldSize));
    RunConfig c;
    c.worldSize = worldSize;
    c.sharedDevice = args.has("--shared-device");
    if (c.sharedDevice) {
        if (!args.has("--ranks"))
            throwInvalid("--shared-device needs --ranks N (the ranks to run as threads)");
        if (worldSize != 1)
            throwInvalid("--shared-device runs every rank as a thread of one process: start it "
                         "without mpirun "
                         "(this job has " +
                         std::to_string(worldSize) + " processes)");
        c.worldSize = static_cast<int>(integerFlag(args, "--ranks", Field::SharedRanks));
    } else if (args.has("--ranks")) {
        throwInvalid("--ranks is for --shared-device (under mpirun the ranks are mpirun -np)");
    }
    if (args.has("--backend")) {
        const std::string b = args.required("--backend");
        if (b == "cpu")
            c.backend = Backend::Cpu;
        else if (b == "cuda")
            c.backend = Backend::Cuda;
        else
            throwInvalid("--backend must be cpu or cuda, got '" + b + "'");
    }
    const std::string modelName = args.required("--model");
    const ModelPreset* preset = findPreset(modelName);
    if (!preset)
        throwInvalid(describeForFlags({Field::Model, Code::UnknownName, 0, 0, 0, modelName},
                                      c.sharedDevice));
    c.preset = *preset;
    const std::string strategyText = args.required("--strategy");
    const auto strategy = plan::parseStrategy(strategyText);
    if (!strategy)
        throwInvalid("--strategy: unknown strategy '" + strategyText +
                     "' (ddp, zero1, zero2, zero3, fsdp, fsdp_grad_op, fsdp_hybrid)");
    c.strategy = *strategy;
    // --steps 0 converts a checkpoint (--resume … --save NEW); validate() says when it may.
    c.steps = args.has("--resume") ? args.integer("--steps", 0, limitOf(Field::Steps).max)
                                   : integerFlag(args, "--steps", Field::Steps);
    if (args.has("--seed"))
        c.seed = static_cast<std::uint64_t>(integerFlag(args, "--seed", Field::Seed));
    if (args.has("--precision")) {
        const std::string p = args.required("--precision");
        if (p == "bf16")
            c.precision = plan::PrecisionKind::MixedBf16;
        else if (p == "fp32")
            c.precision = plan::PrecisionKind::Fp32;
        else
            throwInvalid("--precision must be bf16 or fp32, got '" + p + "'");
    }
    c.checkpointing = args.has("--checkpointing");
    c.deterministic = args.has("--deterministic");
    c.events = !args.has("--no-events");
    if (args.has("--micro-batch"))
        c.preset.microBatch = integerFlag(args, "--micro-batch", Field::MicroBatch);
    if (args.has("--lr")) c.preset.learningRate = args.real("--lr", 0.0, kMaxLearningRate);
    plan::Knobs& k = c.knobs;
    if (args.has("--bucket-bytes")) {
        const std::uint64_t b = args.bytes("--bucket-bytes");
        k.reduceBucketBytes = k.allGatherBucketBytes = b;
    }
    if (args.has("--prefetch"))
        k.prefetchDepth = static_cast<int>(integerFlag(args, "--prefetch", Field::Prefetch));
    if (args.has("--reshard-after-forward"))
        k.reshardAfterForward = args.integer("--reshard-after-forward", 0, 1) == 1;
    // SHARD_GRAD_OP never reshards after forward: the default follows it, an explicit 1 is a
    // problem validate() reports.
    if (c.strategy == plan::Strategy::FsdpShardGradOp && !args.has("--reshard-after-forward"))
        k.reshardAfterForward = false;
    if (args.has("--max-inflight"))
        k.maxInflightAllGathers =
            static_cast<int>(integerFlag(args, "--max-inflight", Field::MaxInflight));
    if (args.has("--persistence-threshold"))
        k.persistenceThresholdParams = static_cast<std::uint64_t>(
            integerFlag(args, "--persistence-threshold", Field::Persistence));
    if (args.has("--hybrid-group") && !plan::policyFor(c.strategy).usesHybridGroup())
        throwInvalid("--hybrid-group is an fsdp_hybrid option; --strategy " + strategyText +
                     " has no shard groups");
    if (args.has("--hybrid-group"))
        k.hybridGroupSize =
            static_cast<int>(integerFlag(args, "--hybrid-group", Field::HybridGroup));
    if (args.has("--grad-accum"))
        k.gradAccumSteps = static_cast<int>(integerFlag(args, "--grad-accum", Field::GradAccum));
    k.noSync = args.has("--no-sync");
    if (args.has("--capacity")) {
        const std::uint64_t cap = args.bytes("--capacity");
        c.capacityBytes = cap;
    }
    for (const auto& [flag, tier] : {std::pair{"--offload-optimizer", &c.offload.optimizer},
                                     std::pair{"--offload-params", &c.offload.param}}) {
        if (!args.has(flag)) continue;
        const std::string t = args.required(flag);
        const std::optional<Tier> parsed =
            t == "cpu" ? std::optional<Tier>(Tier::Host) : parseTier(t);
        if (!parsed)
            throwInvalid(std::string(flag) + " must be device, host or nvme, got '" + t + "'");
        *tier = *parsed;
    }
    parseNvme(args, c);
    if (args.has("--data")) {
        c.dataFile = args.required("--data");
        // Checked here, on the launching side too, so that bad data is exit 2 before a launch.
        const auto [fd, size] =
            openInputFile(*c.dataFile, "--data",
                          static_cast<std::uint64_t>(c.preset.shape.seqLen) + 1, kMaxDataFileBytes);
        ::close(fd);
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
        checkOutputPath(**field, flag);
    }
    checkDistinctFiles({{"--data", c.dataFile.value_or("")},
                        {"--trace", c.tracePath.value_or("")},
                        {"--json", c.jsonPath.value_or("")},
                        {"--weights-out", c.weightsPath.value_or("")}});
    if (args.has("--timeout-ms")) c.timeoutMs = integerFlag(args, "--timeout-ms", Field::TimeoutMs);
    if (args.has("--tp"))
        c.tensorParallel = static_cast<int>(integerFlag(args, "--tp", Field::TensorParallel));
    parseCheckpointFlags(args, c);
    if (const std::vector<Problem> problems = validate(c); !problems.empty())
        throwInvalid(describeForFlags(problems.front(), c.sharedDevice));
    return c;
}

std::vector<std::string> toWorkerArgs(const RunConfig& c) {
    const plan::Knobs defaults;
    std::vector<std::string> a = {
        "--model",     c.preset.name,
        "--strategy",  std::string(plan::strategyName(c.strategy)),
        "--steps",     std::to_string(c.steps),
        "--seed",      std::to_string(c.seed),
        "--precision", c.precision == plan::PrecisionKind::Fp32 ? "fp32" : "bf16"};
    // Micro-batch and learning rate are sent where they differ from the preset's; a resume that
    // read its checkpoint sends its learning rate always (the checkpoint's, or --lr's override).
    const ModelPreset* base = findPreset(c.preset.name);
    if (c.checkpointing) a.push_back("--checkpointing");
    if (!base || c.preset.microBatch != base->microBatch)
        a.insert(a.end(), {"--micro-batch", std::to_string(c.preset.microBatch)});
    if (!base || c.preset.learningRate != base->learningRate || c.checkpointLearningRate) {
        char text[64];
        std::snprintf(text, sizeof(text), "%.17g", c.preset.learningRate);
        a.insert(a.end(), {"--lr", text});
    }
    if (c.deterministic) a.push_back("--deterministic");
    const plan::Knobs& k = c.knobs;
    if (k.reduceBucketBytes != defaults.reduceBucketBytes)
        a.insert(a.end(), {"--bucket-bytes", formatBytes(k.reduceBucketBytes)});
    if (k.prefetchDepth != defaults.prefetchDepth)
        a.insert(a.end(), {"--prefetch", std::to_string(k.prefetchDepth)});
    if (k.reshardAfterForward != defaults.reshardAfterForward &&
        c.strategy != plan::Strategy::FsdpShardGradOp)
        a.insert(a.end(), {"--reshard-after-forward", k.reshardAfterForward ? "1" : "0"});
    if (k.maxInflightAllGathers != defaults.maxInflightAllGathers)
        a.insert(a.end(), {"--max-inflight", std::to_string(k.maxInflightAllGathers)});
    if (k.persistenceThresholdParams != 0)
        a.insert(a.end(),
                 {"--persistence-threshold", std::to_string(k.persistenceThresholdParams)});
    if (k.hybridGroupSize != 0 && plan::policyFor(c.strategy).usesHybridGroup())
        a.insert(a.end(), {"--hybrid-group", std::to_string(k.hybridGroupSize)});
    if (k.gradAccumSteps != 1)
        a.insert(a.end(), {"--grad-accum", std::to_string(k.gradAccumSteps)});
    if (k.noSync) a.push_back("--no-sync");
    if (c.capacityBytes) a.insert(a.end(), {"--capacity", formatBytes(*c.capacityBytes)});
    if (c.offload.optimizer != Tier::Device)
        a.insert(a.end(), {"--offload-optimizer", std::string(tierName(c.offload.optimizer))});
    if (c.offload.param != Tier::Device)
        a.insert(a.end(), {"--offload-params", std::string(tierName(c.offload.param))});
    if (!c.nvmeDir.empty()) {
        a.insert(a.end(), {"--nvme-dir", c.nvmeDir});
        if (c.keepNvme) a.push_back("--keep-nvme");
        if (c.aioBlockBytes != (1u << 20))
            a.insert(a.end(), {"--aio-block-bytes", formatBytes(c.aioBlockBytes)});
        if (c.aioQueueDepth != 8)
            a.insert(a.end(), {"--aio-queue-depth", std::to_string(c.aioQueueDepth)});
    }
    if (c.dataFile) a.insert(a.end(), {"--data", *c.dataFile});
    if (c.streamPath) a.insert(a.end(), {"--stream", *c.streamPath});
    if (c.tracePath) a.insert(a.end(), {"--trace", *c.tracePath});
    if (c.jsonPath) a.insert(a.end(), {"--json", *c.jsonPath});
    if (c.weightsPath) a.insert(a.end(), {"--weights-out", *c.weightsPath});
    if (c.timeoutMs != 30000) a.insert(a.end(), {"--timeout-ms", std::to_string(c.timeoutMs)});
    if (c.saveDir) a.insert(a.end(), {"--save", *c.saveDir});
    if (c.saveEvery != 0) a.insert(a.end(), {"--save-every", std::to_string(c.saveEvery)});
    if (c.saveAsync) a.push_back("--save-async");
    if (c.resumePath) a.insert(a.end(), {"--resume", *c.resumePath});
    if (!c.events) a.push_back("--no-events");
    if (c.backend != Backend::Cpu)
        a.insert(a.end(), {"--backend", std::string(backendName(c.backend))});
    if (c.sharedDevice)
        a.insert(a.end(), {"--shared-device", "--ranks", std::to_string(c.worldSize)});
    if (c.tensorParallel != 1) a.insert(a.end(), {"--tp", std::to_string(c.tensorParallel)});
    return a;
}

std::string workerFlagsHelp() {
    std::string models, strategies;
    for (const ModelPreset& m : modelPresets()) {
        if (!models.empty()) models += '|';
        models += m.name;
    }
    for (const plan::Strategy st : plan::allStrategies()) {
        if (!strategies.empty()) strategies += '|';
        strategies += plan::strategyName(st);
    }
    return "  --model " + models +
           "\n"
           "  --strategy " +
           strategies +
           "\n"
           "  --steps K [--seed S] [--precision bf16|fp32] [--checkpointing] [--micro-batch B] "
           "[--lr X]\n"
           "  [--deterministic] [--prefetch D] [--bucket-bytes BYTES] [--reshard-after-forward "
           "0|1]\n"
           "  [--max-inflight N] [--persistence-threshold PARAMS] [--hybrid-group G] [--grad-accum "
           "A]\n"
           "  [--no-sync] [--capacity BYTES] [--data FILE] [--timeout-ms T] [--no-events]\n"
           "  [--offload-optimizer device|host|nvme] [--offload-params device|host|nvme]\n"
           "  [--nvme-dir DIR] [--keep-nvme] [--aio-block-bytes BYTES] [--aio-queue-depth Q]\n"
           "  [--weights-out FILE]        the final fp32 master weights, raw little-endian\n"
           "  [--tp T]  tensor parallel: a T x D mesh of the ranks (T consecutive ranks split "
           "each\n"
           "            block's heads and MLP; the strategy shards over the D = ranks / T ranks)\n"
           "checkpoints (docs/checkpoints.md):\n"
           "  --save DIR                save DIR/step-K after the last step (and every "
           "--save-every K)\n"
           "  --save-every K            also every K steps\n"
           "  --save-async              snapshot to host memory and write on a thread while "
           "training\n"
           "                            goes on\n"
           "  --resume DIR|DIR/step-K   continue a saved run at any ranks and --strategy (--steps "
           "0\n"
           "                            --save NEW converts it to this layout)\n";
}

nlohmann::json toJson(const RunConfig& c) {
    const plan::Knobs& k = c.knobs;
    nlohmann::json j = {
        {"model", c.preset.name},
        {"strategy", std::string(plan::strategyName(c.strategy))},
        {"world_size", c.worldSize},
        {"steps", c.steps},
        {"seed", c.seed},
        {"precision", std::string(plan::precisionName(c.precision))},
        {"checkpointing", c.checkpointing},
        {"micro_batch", c.preset.microBatch},
        {"learning_rate", c.preset.learningRate},
        {"deterministic", c.deterministic},
        {"shape",
         {{"layers", c.preset.shape.layers},
          {"d_model", c.preset.shape.dModel},
          {"heads", c.preset.shape.heads},
          {"vocab", c.preset.shape.vocab},
          {"seq_len", c.preset.shape.seqLen}}},
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
        {"tp", c.tensorParallel},
    };
    j["capacity_bytes"] =
        c.capacityBytes ? nlohmann::json(*c.capacityBytes) : nlohmann::json(nullptr);
    j["offload"] = {{"optimizer", std::string(tierName(c.offload.optimizer))},
                    {"param", std::string(tierName(c.offload.param))},
                    {"nvme_dir", c.nvmeDir},
                    {"keep_nvme", c.keepNvme},
                    {"aio_block_bytes", c.aioBlockBytes},
                    {"aio_queue_depth", c.aioQueueDepth}};
    j["data"] = c.dataFile ? nlohmann::json(*c.dataFile) : nlohmann::json("synthetic");
    if (c.saveDir)
        j["save"] = {{"dir", *c.saveDir}, {"every", c.saveEvery}, {"async", c.saveAsync}};
    if (c.resumePath) j["resume"] = *c.resumePath;
    return j;
}

theory::Scenario scenarioOf(const RunConfig& c) {
    theory::Scenario s;
    s.shape = c.preset.shape;
    s.shape->tp = c.tensorParallel;
    s.strategy = c.strategy;
    s.ranks = c.dataParallel();
    s.precision.kind = c.precision;
    s.knobs = c.knobs;
    if (c.strategy == plan::Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
    s.knobs.deterministicReductions = c.deterministic;
    s.knobs.sharedDeviceCollectives = c.sharedDevice;
    s.activations = {c.preset.microBatch, c.checkpointing};
    s.offload = c.offload;
    return s;
}

} // namespace shardscope::runconfig
