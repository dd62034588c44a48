#include "runconfig/run_config.h"

#include "checkpoint/store.h"
#include "core/args.h"
#include "core/error.h"
#include "core/user_files.h"
#include "plan/policy.h"
#include "plan/shape.h"
#include "runconfig/problems.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace shardscope::runconfig {

namespace {

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
    c.stepsBefore = opened.meta.step;
    if (!args.has("--lr")) c.preset.learningRate = opened.meta.optimizer.learningRate;
}

} // namespace

namespace {

// --nvme-dir and its I/O settings; the directory is checked here so that a bad one is exit 2
// before anything trains: it must be a writable directory with room for this rank's states.
void parseNvme(const Args& args, RunConfig& c) {
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
    if (c.aioBlockBytes % 4096 != 0)
        throwInvalid("--aio-block-bytes must be a multiple of 4096 between 4KiB and 1GiB, got " +
                     std::to_string(c.aioBlockBytes));
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

} // namespace

std::string_view backendName(Backend b) {
    return b == Backend::Cuda ? "cuda" : "cpu";
}

namespace {

// A flag's value as the table's kind reads it (limits of integers checked here, so the message
// names the flag and the range; sizes are at most 2^53 here, their ranges validate()'s).
FieldValue flagValue(const Args& args, const FieldSpec& s) {
    const std::string flag(s.flag);
    switch (s.kind) {
    case ValueKind::Integer:
        return args.integer(flag, s.min, s.max);
    case ValueKind::Bytes: // its range: validate(), after the NVMe tier's own checks
        return static_cast<std::int64_t>(args.bytes(flag));
    case ValueKind::Real:
        return args.real(flag, 0.0, static_cast<double>(s.max));
    case ValueKind::Switch:
        return !std::get<bool>(getField(RunConfig{}, s.field));
    case ValueKind::Bit:
        return args.integer(flag, 0, 1) == 1;
    case ValueKind::Choice:
    case ValueKind::Text: {
        std::string text = args.required(flag);
        if (text.empty()) throwInvalid(flag + " needs a value");
        return text;
    }
    }
    return {};
}

// The outputs, the data file and the NVMe folder are checked here, on the launching side too,
// so that a bad one is exit 2 before anything starts.
void checkFiles(const Args& args, RunConfig& c) {
    if (c.dataFile) {
        // Absolute, so that a recording reopened elsewhere (the GUI's working folder) names the
        // same file.
        std::error_code error;
        const std::filesystem::path absolute = std::filesystem::absolute(*c.dataFile, error);
        if (!error) c.dataFile = absolute.lexically_normal().string();
        const auto [fd, size] =
            openInputFile(*c.dataFile, "--data",
                          static_cast<std::uint64_t>(c.preset.shape.seqLen) + 1, kMaxDataFileBytes);
        ::close(fd);
    }
    for (auto [flag, field] : {std::pair{"--trace", &c.tracePath}, std::pair{"--json", &c.jsonPath},
                               std::pair{"--weights-out", &c.weightsPath}})
        if (*field) checkOutputPath(**field, flag);
    checkDistinctFiles({{"--data", c.dataFile.value_or("")},
                        {"--trace", c.tracePath.value_or("")},
                        {"--json", c.jsonPath.value_or("")},
                        {"--weights-out", c.weightsPath.value_or("")}});
    parseNvme(args, c);
}

} // namespace

namespace {
const std::string kMicroBatchesFlag = "--micro-batches"; // = --grad-accum
} // namespace

RunConfig parseRunConfig(std::span<const std::string> workerArgs, int worldSize) {
    std::set<std::string> valueFlags, switches;
    for (const FieldSpec& s : kFields) {
        if (!s.flag.starts_with("--")) continue;
        (s.kind == ValueKind::Switch ? switches : valueFlags).emplace(s.flag);
    }
    valueFlags.emplace(kMicroBatchesFlag);
    Args args("shardscope-worker", valueFlags, switches);
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
                         "without mpirun (this job has " +
                         std::to_string(worldSize) + " processes)");
    } else if (args.has("--ranks")) {
        throwInvalid("--ranks is for --shared-device (under mpirun the ranks are mpirun -np)");
    }
    for (const char* required : {"--model", "--strategy", "--steps"})
        (void)args.required(required);
    const std::string strategyText = args.required("--strategy");
    if (const auto strategy = plan::parseStrategy(strategyText);
        strategy && args.has("--hybrid-group") && !plan::policyFor(*strategy).usesHybridGroup())
        throwInvalid("--hybrid-group is an fsdp_hybrid option; --strategy " + strategyText +
                     " has no shard groups");
    // Every flag given, in the table's order (the preset first: it sets what later flags change).
    for (const FieldSpec& s : kFields) {
        if (!args.has(std::string(s.flag))) continue;
        if (s.role == Role::Checkpoint) continue; // parseCheckpointFlags: it opens the checkpoint
        // --steps 0 converts a checkpoint (--resume … --save NEW); validate() says when it may.
        if (s.field == Field::Steps && args.has("--resume")) {
            c.steps = args.integer("--steps", 0, s.max);
            continue;
        }
        setField(c, s.field, flagValue(args, s));
    }
    // A pipeline's micro-batches are its gradient accumulation steps (as DeepSpeed's are): the
    // name estimate --pp uses, one count.
    if (args.has(kMicroBatchesFlag)) {
        if (args.has("--grad-accum"))
            throwInvalid("--micro-batches and --grad-accum name the same count (a step's "
                         "micro-batches): give one");
        const Limit l = limitOf(Field::GradAccum);
        c.knobs.gradAccumSteps = static_cast<int>(args.integer(kMicroBatchesFlag, l.min, l.max));
    }
    if (args.has("--pp-schedule") && c.pipeParallel <= 1)
        throwInvalid("--pp-schedule needs --pp P > 1 (the schedule of a pipeline's stages)");
    if (args.has("--virtual-stages") && c.pipeParallel <= 1)
        throwInvalid("--virtual-stages needs --pp P > 1 (model chunks per pipeline rank)");
    // SHARD_GRAD_OP never reshards after forward: the default follows it, an explicit 1 is a
    // problem validate() reports.
    if (c.strategy == plan::Strategy::FsdpShardGradOp && !args.has("--reshard-after-forward"))
        c.knobs.reshardAfterForward = false;
    checkFiles(args, c);
    parseCheckpointFlags(args, c);
    if (const std::vector<Problem> problems = validate(c); !problems.empty())
        throwInvalid(describeForFlags(problems.front(), c.sharedDevice));
    return c;
}

namespace {

// Whether the worker needs to be told this field: it applies to the run and differs from what
// the worker would assume, or the table says it always goes (the job's identity).
bool passed(const RunConfig& c, const RunConfig& defaults, Field f) {
    if (!applies(c, f)) return false;
    if (specOf(f).always) return true;
    // A resume that read its checkpoint sends its learning rate always (the checkpoint's, or
    // --lr's override).
    if (f == Field::LearningRate && c.checkpointLearningRate) return true;
    return getField(c, f) != getField(defaults, f);
}

} // namespace

std::vector<std::string> toWorkerArgs(const RunConfig& c) {
    const RunConfig defaults = defaultsFor(c);
    std::vector<std::string> a;
    for (const FieldSpec& s : kFields) {
        if (!s.flag.starts_with("--") || !passed(c, defaults, s.field)) continue;
        a.emplace_back(s.flag);
        if (s.kind != ValueKind::Switch) a.push_back(fieldText(getField(c, s.field)));
    }
    return a;
}

std::string workerFlagsHelp(const std::vector<std::string>& ownedByCaller) {
    constexpr std::pair<Role, std::string_view> kSections[] = {
        {Role::Job, "training"},
        {Role::Offload, "memory tiers (ZeRO-Offload, ZeRO-Infinity; docs/strategies.md)"},
        {Role::Output, "outputs"},
        {Role::Checkpoint, "checkpoints (docs/checkpoints.md)"},
        {Role::Launch, "how the ranks run"}};
    constexpr std::size_t kColumn = 34; // where the help text starts
    constexpr std::size_t kWidth = 100;
    const auto owned = [&](std::string_view flag) {
        return std::find(ownedByCaller.begin(), ownedByCaller.end(), flag) != ownedByCaller.end();
    };
    std::string out;
    for (const auto& [role, title] : kSections) {
        std::string section;
        for (const FieldSpec& s : kFields) {
            if (s.role != role || !s.flag.starts_with("--") || owned(s.flag)) continue;
            std::string value(s.value);
            if (s.kind == ValueKind::Choice) {
                value.clear();
                for (const std::string& choice : choicesOf(s.field)) {
                    if (!value.empty()) value.push_back('|');
                    value.append(choice);
                }
            }
            std::string line = "  ";
            line.append(s.flag);
            if (!value.empty()) line.append(" ").append(value);
            if (line.size() >= kColumn) {
                section.append(line).append("\n");
                line.clear();
            }
            line.append(kColumn - line.size(), ' ');
            // The help, wrapped at word boundaries under its column.
            std::string_view help = s.help;
            while (!help.empty()) {
                std::size_t take = help.size();
                if (line.size() + take > kWidth) {
                    take = help.rfind(' ', kWidth - line.size());
                    if (take == std::string_view::npos || take == 0) take = help.find(' ');
                    if (take == std::string_view::npos) take = help.size();
                }
                line.append(help.substr(0, take));
                section.append(line).append("\n");
                help.remove_prefix(std::min(help.size(), take + 1));
                line.assign(kColumn, ' ');
            }
        }
        if (!section.empty()) out.append(title).append(":\n").append(section);
    }
    return out;
}

nlohmann::json toJson(const RunConfig& c) {
    nlohmann::json j = nlohmann::json::object();
    for (const FieldSpec& s : kFields) {
        if (s.key.empty() || !applies(c, s.field)) continue;
        const FieldValue v = getField(c, s.field);
        if (std::holds_alternative<std::monostate>(v)) continue;
        std::string pointer(1, '/');
        pointer.append(s.key);
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        nlohmann::json& slot = j[nlohmann::json::json_pointer(pointer)];
        // Counts and sizes as unsigned JSON numbers (as readers of sizes expect them).
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::int64_t>)
                    slot =
                        x >= 0 ? nlohmann::json(static_cast<std::uint64_t>(x)) : nlohmann::json(x);
                else if constexpr (!std::is_same_v<T, std::monostate>)
                    slot = x;
            },
            v);
    }
    // What the flags imply, for readers of a recording: the second bucket and the model's shape.
    j["knobs"]["allgather_bucket_bytes"] = c.knobs.allGatherBucketBytes;
    j["shape"] = {{"layers", c.preset.shape.layers},
                  {"d_model", c.preset.shape.dModel},
                  {"heads", c.preset.shape.heads},
                  {"vocab", c.preset.shape.vocab},
                  {"seq_len", c.preset.shape.seqLen}};
    // The ranks as a count, also for a job of threads.
    j["world_size"] = c.worldSize;
    return j;
}

theory::Scenario scenarioOf(const RunConfig& c, int stage) {
    theory::Scenario s;
    s.pipeStages = std::max(c.pipeParallel, 1);
    s.pipeStage = stage;
    s.pipeSchedule = c.pipeSchedule;
    s.virtualStages = c.pipeParallel > 1 ? c.virtualStages : 1;
    s.shape = c.preset.shape;
    s.shape->tp = c.tensorParallel;
    s.strategy = c.strategy;
    s.ranks = c.dataParallel();
    s.precision.kind = c.precision;
    s.knobs = c.knobs;
    if (c.strategy == plan::Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
    s.knobs.deterministicReductions = c.deterministic;
    s.knobs.sharedDeviceCollectives = c.sharedDevice;
    s.knobs.bf16Gemm = c.bf16Gemm && c.precision == plan::PrecisionKind::MixedBf16;
    s.activations = {c.preset.microBatch, c.checkpointing};
    s.offload = c.offload;
    return s;
}

} // namespace shardscope::runconfig
