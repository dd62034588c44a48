#pragma once
// Every run setting, declared once: its flag, its key in the configuration JSON, its kind and
// limits, whether a DeepSpeed/Accelerate configuration may set it, whether the Ranks page shows
// it, which strategies read it, and its help. The worker's and the CLI's flag parsing and help,
// the JSON written into every recording and read back, validation, the GUI's run request and
// the config importers' targets all walk this table (run_config.cpp, config_json.cpp,
// problems.cpp, widgets/run/run_request.cpp, config_import).
//
// Note: kFields is in Field's order (static_assert below); that order is also the order in which
// a configuration is built from flags or JSON — Model first, because choosing a preset sets the
// micro-batch, learning rate and vocabulary that later rows may override (--data last of those).
// Adding a setting is one row here plus its use (and, where it needs one, a getter/setter pair
// in fields.cpp; the round-trip tests fail until every path carries it).
#include "plan/policy.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace shardscope::runconfig {

struct RunConfig;

enum class Field : std::uint8_t {
    Model,
    Strategy,
    Steps,
    Seed,
    Precision,
    Checkpointing,
    MicroBatch,
    LearningRate,
    Deterministic,
    BucketBytes,
    Prefetch,
    ReshardAfterForward,
    MaxInflight,
    Persistence,
    HybridGroup,
    GradAccum,
    NoSync,
    Capacity,
    TimeoutMs,
    OffloadOptimizer,
    OffloadParams,
    NvmeDir,
    KeepNvme,
    AioBlockBytes,
    AioQueueDepth,
    Data,
    Events,
    Stream,
    Trace,
    Json,
    WeightsOut,
    Save,
    SaveEvery,
    SaveAsync,
    Resume,
    Backend,
    Ranks,
    SharedDevice,
    SharedRanks,
    TensorParallel,
    PipeParallel,
    PipeSchedule,
    VirtualStages,
    kCount
};
inline constexpr std::size_t kFieldCount = static_cast<std::size_t>(Field::kCount);

enum class ValueKind : std::uint8_t {
    Integer, // plain decimal digits, within [min, max]
    Bytes,   // a size: 25MiB, 1GB, 4096 (core/args.h: parseBytes), within [min, max]
    Real,    // a finite decimal number in (0, max]
    Switch,  // a flag without a value; present: the opposite of the default
    Bit,     // 0 or 1
    Choice,  // one name of a fixed list (the field's choices)
    Text,    // a path or a name, not empty
};

// What a field is to a run; the help lists fields by role.
enum class Role : std::uint8_t {
    Job,        // what trains: the model, the strategy and their settings
    Offload,    // where model states live (host and NVMe tiers)
    Output,     // files and sockets of this one run: never in the configuration JSON, never kept
    Checkpoint, // saving and resuming (docs/checkpoints.md)
    Launch,     // how the ranks run: backend, processes or threads, the tensor-parallel mesh
};

struct FieldSpec {
    Field field;
    std::string_view flag; // "--prefetch"; "mpirun -np" for the ranks of a job of processes
    std::string_view key;  // JSON path, "knobs.prefetch"; empty: not in the configuration JSON
    ValueKind kind;
    Role role;
    std::int64_t min = 0; // Integer, Bytes: the one table of limits; Real: max only
    std::int64_t max = 0;
    bool importable = false; // a DeepSpeed / Accelerate configuration may set it
    bool panel = false;      // the Ranks page has a widget for it (others are kept as loaded)
    // The strategies that read it (nullptr: every one). A setting the strategy does not read is
    // not passed to the worker, not written into the JSON, and an imported key setting it is
    // listed as ignored.
    bool (plan::Policy::*usedBy)() const = nullptr;
    std::string_view value; // the value's name in the help ("K", "BYTES"); empty for a switch
    std::string_view help;
    // Always passed to the worker and kept: the job's identity, which has no "unset".
    bool always = false;
};

inline constexpr std::int64_t kMaxSharedRanks = 256;
inline constexpr std::int64_t kMaxSaveEvery = 1'000'000;
inline constexpr double kMaxLearningRate = 10.0;
// Sizes and counts stop at 2^53, where a double (the size grammar's, JSON readers') still holds
// every integer: the flags (core/args.h) and the JSON read the same range.
inline constexpr std::int64_t kMaxExactCount = std::int64_t{1} << 53;

inline constexpr std::array<FieldSpec, kFieldCount> kFields = {{
    {Field::Model, "--model", "model", ValueKind::Choice, Role::Job, 0, 0, false, true, nullptr,
     "NAME", "the GPT preset (required)", true},
    {Field::Strategy, "--strategy", "strategy", ValueKind::Choice, Role::Job, 0, 0, true, true,
     nullptr, "NAME", "the data-parallel strategy (required)", true},
    {Field::Steps, "--steps", "steps", ValueKind::Integer, Role::Job, 1, 1'000'000, false, true,
     nullptr, "K", "training steps (required; 0 with --resume and --save converts a checkpoint)",
     true},
    {Field::Seed, "--seed", "seed", ValueKind::Integer, Role::Job, 0, INT64_MAX, false, false,
     nullptr, "S", "data and initialisation (default 1; a resume takes the checkpoint's)"},
    {Field::Precision, "--precision", "precision", ValueKind::Choice, Role::Job, 0, 0, true, true,
     nullptr, "bf16|fp32", "bf16: bf16 compute copies, fp32 master and optimizer (default)", true},
    {Field::Checkpointing, "--checkpointing", "checkpointing", ValueKind::Switch, Role::Job, 0, 0,
     true, true, nullptr, "", "activation checkpointing: keep each block's input, recompute"},
    {Field::MicroBatch, "--micro-batch", "micro_batch", ValueKind::Integer, Role::Job, 1, 4096,
     true, true, nullptr, "B", "sequences per rank per micro-step (default: the preset's)"},
    {Field::LearningRate, "--lr", "learning_rate", ValueKind::Real, Role::Job, 0, 10, true, false,
     nullptr, "X", "AdamW's learning rate (default: the preset's; a resume: the checkpoint's)"},
    {Field::Deterministic, "--deterministic", "deterministic", ValueKind::Switch, Role::Job, 0, 0,
     false, false, nullptr, "", "reductions summed in rank order: bitwise equal across strategies"},
    {Field::BucketBytes, "--bucket-bytes", "knobs.reduce_bucket_bytes", ValueKind::Bytes, Role::Job,
     1, kMaxExactCount, true, true, nullptr, "BYTES",
     "reduce and all-gather bucket size (DDP, ZeRO-1/2; default 25MiB)"},
    {Field::Prefetch, "--prefetch", "knobs.prefetch", ValueKind::Integer, Role::Job, 0, 64, true,
     true, &plan::Policy::usesPrefetch, "D", "units gathered ahead (ZeRO-3, FSDP; default 1)"},
    {Field::ReshardAfterForward, "--reshard-after-forward", "knobs.reshard_after_forward",
     ValueKind::Bit, Role::Job, 0, 1, true, true, &plan::Policy::usesReshardAfterForward, "0|1",
     "free gathered params after forward (fsdp, fsdp_hybrid; default 1)"},
    {Field::MaxInflight, "--max-inflight", "knobs.max_inflight", ValueKind::Integer, Role::Job, 1,
     64, true, true, &plan::Policy::usesMaxInflight, "N",
     "all-gathers in flight at once (FSDP's limit_all_gathers; default 2)"},
    {Field::Persistence, "--persistence-threshold", "knobs.persistence_threshold",
     ValueKind::Integer, Role::Job, 0, kMaxExactCount, true, true, &plan::Policy::usesPersistence,
     "PARAMS", "units this small stay whole (ZeRO-3; default 0)"},
    {Field::HybridGroup, "--hybrid-group", "knobs.hybrid_group", ValueKind::Integer, Role::Job, 1,
     1 << 20, true, true, &plan::Policy::usesHybridGroup, "G",
     "ranks per shard group (fsdp_hybrid, required there)"},
    {Field::GradAccum, "--grad-accum", "knobs.grad_accum", ValueKind::Integer, Role::Job, 1, 4096,
     true, true, nullptr, "A", "micro-steps per step (gradient accumulation; default 1)"},
    {Field::NoSync, "--no-sync", "knobs.no_sync", ValueKind::Switch, Role::Job, 0, 0, false, false,
     &plan::Policy::usesNoSync, "", "FSDP no_sync: keep full gradients while accumulating"},
    {Field::Capacity, "--capacity", "capacity_bytes", ValueKind::Bytes, Role::Job, 1,
     kMaxExactCount, false, true, nullptr, "BYTES",
     "the device memory budget per rank (the ledger's limit)"},
    {Field::TimeoutMs, "--timeout-ms", "timeout_ms", ValueKind::Integer, Role::Job, 100, 3'600'000,
     false, false, nullptr, "T", "collective deadline: a rank silent this long is named"},
    {Field::OffloadOptimizer, "--offload-optimizer", "offload.optimizer", ValueKind::Choice,
     Role::Offload, 0, 0, true, true, nullptr, "device|host|nvme",
     "master weights and Adam moments (ZeRO-Offload, ZeRO-Infinity)"},
    {Field::OffloadParams, "--offload-params", "offload.param", ValueKind::Choice, Role::Offload, 0,
     0, true, true, nullptr, "device|host|nvme", "parameter shards (ZeRO-3, FSDP)"},
    {Field::NvmeDir, "--nvme-dir", "offload.nvme_dir", ValueKind::Text, Role::Offload, 0, 0, true,
     true, nullptr, "DIR", "the NVMe tier's files, one per rank (needs an nvme tier above)"},
    {Field::KeepNvme, "--keep-nvme", "offload.keep_nvme", ValueKind::Switch, Role::Offload, 0, 0,
     false, false, nullptr, "", "leave the NVMe tier's files behind"},
    {Field::AioBlockBytes, "--aio-block-bytes", "offload.aio_block_bytes", ValueKind::Bytes,
     Role::Offload, 4096, std::int64_t{1} << 30, true, true, nullptr, "BYTES",
     "NVMe I/O block, a multiple of 4KiB (DeepSpeed aio block_size; default 1MiB)"},
    {Field::AioQueueDepth, "--aio-queue-depth", "offload.aio_queue_depth", ValueKind::Integer,
     Role::Offload, 1, 1024, true, true, nullptr, "Q",
     "NVMe requests in flight (DeepSpeed aio queue_depth; default 8)"},
    {Field::Data, "--data", "data", ValueKind::Text, Role::Job, 0, 0, false, false, nullptr, "FILE",
     "train on FILE's bytes (vocabulary 256) instead of synthetic tokens"},
    {Field::Events, "--no-events", "events", ValueKind::Switch, Role::Job, 0, 0, false, false,
     nullptr, "", "no per-event tracing (steps and memory only)"},
    {Field::Stream, "--stream", "", ValueKind::Text, Role::Output, 0, 0, false, false, nullptr,
     "SOCKET", "the launcher's Unix socket (shardscope-cli sets it)"},
    {Field::Trace, "--trace", "", ValueKind::Text, Role::Output, 0, 0, false, false, nullptr,
     "FILE", "the recording (.sstrace)"},
    {Field::Json, "--json", "", ValueKind::Text, Role::Output, 0, 0, false, false, nullptr, "FILE",
     "the report"},
    {Field::WeightsOut, "--weights-out", "", ValueKind::Text, Role::Output, 0, 0, false, false,
     nullptr, "FILE", "the final fp32 master weights, raw little-endian"},
    {Field::Save, "--save", "save.dir", ValueKind::Text, Role::Checkpoint, 0, 0, false, true,
     nullptr, "DIR", "save DIR/step-K after the last step (and every --save-every K)"},
    {Field::SaveEvery, "--save-every", "save.every", ValueKind::Integer, Role::Checkpoint, 1,
     kMaxSaveEvery, false, true, nullptr, "K", "also every K steps"},
    {Field::SaveAsync, "--save-async", "save.async", ValueKind::Switch, Role::Checkpoint, 0, 0,
     false, false, nullptr, "", "snapshot to host memory and write on a thread while training"},
    {Field::Resume, "--resume", "resume", ValueKind::Text, Role::Checkpoint, 0, 0, false, true,
     nullptr, "DIR|DIR/step-K", "continue a saved run at any ranks and --strategy"},
    {Field::Backend, "--backend", "backend", ValueKind::Choice, Role::Launch, 0, 0, false, true,
     nullptr, "cpu|cuda", "where the ranks compute (default cpu)"},
    {Field::Ranks, "mpirun -np", "world_size", ValueKind::Integer, Role::Launch, 1, 1024, false,
     true, nullptr, "N", "the job's processes, one rank each", true},
    {Field::SharedDevice, "--shared-device", "shared_device", ValueKind::Switch, Role::Launch, 0, 0,
     false, true, nullptr, "", "every rank a thread of this one process (not under mpirun)"},
    {Field::SharedRanks, "--ranks", "", ValueKind::Integer, Role::Launch, 1, kMaxSharedRanks, true,
     true, nullptr, "N", "the ranks to run as threads (with --shared-device)", true},
    {Field::TensorParallel, "--tp", "tp", ValueKind::Integer, Role::Launch, 1, 1024, false, true,
     nullptr, "T",
     "a T x D mesh: T consecutive ranks split each block's heads and MLP, the strategy shards "
     "over D = ranks / T"},
    {Field::PipeParallel, "--pp", "pp", ValueKind::Integer, Role::Launch, 1, 64, true, true,
     nullptr, "P",
     "a P x T x D mesh: P pipeline stages of consecutive layers; a step sends --grad-accum "
     "(or --micro-batches) micro-batches through them"},
    {Field::PipeSchedule, "--pp-schedule", "pp_schedule", ValueKind::Choice, Role::Launch, 0, 0,
     false, true, nullptr, "gpipe|1f1b|interleaved|zb1",
     "the pipeline's schedule (with --pp; default 1f1b)"},
    {Field::VirtualStages, "--virtual-stages", "virtual_stages", ValueKind::Integer, Role::Launch,
     1, 16, false, true, nullptr, "V",
     "model chunks per pipeline rank (--pp-schedule interleaved: at least 2)"},
}};

constexpr bool fieldsInEnumOrder() {
    for (std::size_t i = 0; i < kFields.size(); ++i)
        if (static_cast<std::size_t>(kFields[i].field) != i) return false;
    return true;
}
static_assert(fieldsInEnumOrder(), "kFields lists every Field once, in the enum's order");

constexpr const FieldSpec& specOf(Field field) {
    return kFields[static_cast<std::size_t>(field)];
}

struct Limit {
    std::int64_t min;
    std::int64_t max;
};
// The limits of an Integer or Bytes field.
constexpr Limit limitOf(Field field) {
    return {specOf(field).min, specOf(field).max};
}

std::string_view flagName(Field field); // "--prefetch"
// The field a flag sets (the flag as written, "--offload-params"), or nullopt.
std::optional<Field> fieldOfFlag(std::string_view flag);
// The flags a configuration file may set (the importers' targets), by the table's column.
std::vector<std::string> importableFlags();

// A setting's value as the table's paths pass it around: nothing (an unset optional), a whole
// number (Integer, Bytes), a real, a boolean (Switch, Bit), or text (Choice, Text).
using FieldValue = std::variant<std::monostate, std::int64_t, double, bool, std::string>;

FieldValue getField(const RunConfig& config, Field field);
// Sets the field; a value of the wrong type or an unknown choice throws
// Error(InvalidArgument) naming the flag. Ranges are validate()'s (problems.h).
void setField(RunConfig& config, Field field, const FieldValue& value);
// Whether `config`'s strategy (or its other settings: the NVMe tier, a save folder, threads)
// makes this field mean anything; a field that does not apply is neither passed nor written.
bool applies(const RunConfig& config, Field field);
// Whether the strategy reads the field (the table's usedBy column; true for most).
bool appliesToStrategy(Field field, plan::Strategy strategy);
// The configuration whose values count as unset for `config`: its preset's micro-batch and
// learning rate, its strategy's reshard default.
RunConfig defaultsFor(const RunConfig& config);
// The value as a flag's text ("25MiB" as "26214400", a switch as "").
std::string fieldText(const FieldValue& value);
// The choices of a Choice field ("ddp", "zero1", …).
std::vector<std::string> choicesOf(Field field);

} // namespace shardscope::runconfig
