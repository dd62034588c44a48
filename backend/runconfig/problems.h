#pragma once
// Validation of a RunConfig as data: which field, what is wrong, the values involved. Each front
// end phrases a Problem itself — the worker and the CLI with flag names (describeForFlags), the
// GUI with tr() and its own field labels — so no message is rewritten after the fact.
//
// Note: kLimits is the one table of numeric ranges. parseRunConfig reads each flag against it,
// validate() checks a RunConfig built any other way (the GUI's panel) against it, and the GUI
// sets its spin boxes from it: CLI, worker and GUI accept the same values.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::runconfig {

struct RunConfig;

enum class Field : std::uint8_t {
    Model,
    Strategy,
    Ranks,
    SharedRanks,
    Steps,
    Seed,
    Precision,
    MicroBatch,
    LearningRate,
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
    Backend,
    SharedDevice,
    Data,
    Stream,
    Trace,
    Json,
    WeightsOut,
    OffloadOptimizer,
    OffloadParams,
    TensorParallel,
    Save,
    SaveEvery,
    Resume,
};

enum class Code : std::uint8_t {
    OutOfRange,  // value outside [min, max]
    UnknownName, // text: the name given (model, strategy, precision, backend)
    NotADivisor, // value: the hybrid group or T; max: the number it must divide (text: what,
                 // for --tp: "ranks", "attention heads", "MLP width")
    ContradictsStrategy,   // the field's value cannot hold for this strategy (reshard with
                           // SHARD_GRAD_OP)
    NotForStrategy,        // the strategy does not have this option (no_sync outside FSDP)
    Theory,                // text: the theory engine's own check (theory::validate), verbatim
    OffloadNotForStrategy, // text: the strategy; the optimizer needs a sharded optimizer, params
                           // sharded params
    OffloadNeedsBf16,      // offload keeps fp32 master + bf16 params: not with --precision fp32
    OffloadTierNotBuilt,   // text: the tier (nvme) this build cannot run (no liburing)
    NeedsFlag,             // the field needs another one: text is the flag it needs
    CheckpointUnsupported, // --save/--resume with a layout the checkpoint format does not describe:
                           // text names it
};

struct Problem {
    Field field;
    Code code;
    std::int64_t value = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::string text;
    bool operator==(const Problem&) const = default;
};

struct Limit {
    Field field;
    std::int64_t min;
    std::int64_t max;
};

// Rank threads in one process: each holds a full model replica's worth of transients, and a
// thread per rank beyond this is a typo rather than a plan.
inline constexpr std::int64_t kMaxSharedRanks = 256;
inline constexpr std::array<Limit, 13> kLimits = {{
    {Field::Ranks, 1, 1024},
    {Field::SharedRanks, 1, kMaxSharedRanks},
    {Field::Steps, 1, 1'000'000},
    {Field::Seed, 0, INT64_MAX},
    {Field::MicroBatch, 1, 4096},
    {Field::BucketBytes, 1, INT64_MAX},
    {Field::Prefetch, 0, 64},
    {Field::MaxInflight, 1, 64},
    {Field::Persistence, 0, std::int64_t{1} << 53},
    {Field::HybridGroup, 1, 1 << 20},
    {Field::GradAccum, 1, 4096},
    {Field::TimeoutMs, 100, 3'600'000},
    {Field::TensorParallel, 1, 1024},
}};
// --save-every: at most this many steps between saves.
inline constexpr std::int64_t kMaxSaveEvery = 1'000'000;
// The learning rate is real: more than 0, at most this.
inline constexpr double kMaxLearningRate = 10.0;

// Fields of kLimits only (others: std::out_of_range, or a compile error in a constant).
constexpr const Limit& limitOf(Field field) {
    for (const Limit& l : kLimits)
        if (l.field == field) return l;
    throw std::out_of_range("runconfig: no limit for this field");
}

// Every problem of a configuration (empty: it can run): ranges, the strategy's options, the
// hybrid group dividing the ranks, then the theory engine's checks.
std::vector<Problem> validate(const RunConfig& config);

std::string_view flagName(Field field); // "--prefetch"
// One line naming the flag; `sharedDevice`: the ranks are --ranks (else mpirun's -np).
std::string describeForFlags(const Problem& problem, bool sharedDevice);

} // namespace shardscope::runconfig
