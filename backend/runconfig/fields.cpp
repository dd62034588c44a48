#include "runconfig/fields.h"

#include "core/categories.h"
#include "core/error.h"
#include "plan/pipeline.h"
#include "plan/strategy.h"
#include "runconfig/run_config.h"

#include <charconv>

namespace shardscope::runconfig {

// A recorded micro-batch index is bounded by the most a step may have (core/event.h).
static_assert(limitOf(Field::GradAccum).max == plan::kMaxMicroBatches);
static_assert(limitOf(Field::VirtualStages).max == plan::kMaxVirtualStages);

namespace {

using Get = FieldValue (*)(const RunConfig&);
using Set = void (*)(RunConfig&, const FieldValue&);

// One getter and one setter per field, in Field's order (checked below): the only place a
// field's value is read from or written into RunConfig by name.
struct Access {
    Field field;
    Get get;
    Set set;
};

[[noreturn]] void wrongType(Field f) {
    throwInvalid(std::string(flagName(f)) + ": a value of the wrong kind");
}

template <class T> const T& as(Field f, const FieldValue& v) {
    if (const T* p = std::get_if<T>(&v)) return *p;
    wrongType(f);
}

std::int64_t clamped(std::uint64_t v) {
    return v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
}

// An integer field's value, which validate() checks against the table's limits afterwards;
// here only what the C++ type can hold.
template <class T> T narrow(Field f, const FieldValue& v) {
    const std::int64_t x = as<std::int64_t>(f, v);
    if constexpr (std::is_unsigned_v<T>) {
        if (x < 0) wrongType(f);
        return static_cast<T>(x);
    } else {
        if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
            throwInvalid(std::string(flagName(f)) + " " + std::to_string(x) + " is out of range");
        return static_cast<T>(x);
    }
}

FieldValue optionalText(const std::optional<std::string>& s) {
    return s ? FieldValue(*s) : FieldValue();
}

std::optional<std::string> textOrNone(Field f, const FieldValue& v) {
    if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
    return as<std::string>(f, v);
}

Tier tierOf(Field f, const FieldValue& v) {
    const std::string& name = as<std::string>(f, v);
    // "cpu" is DeepSpeed's name for the host tier.
    const std::optional<Tier> t = name == "cpu" ? std::optional<Tier>(Tier::Host) : parseTier(name);
    if (!t)
        throwInvalid(std::string(flagName(f)) + " must be device, host or nvme, got '" + name +
                     "'");
    return *t;
}

std::string choiceList(Field f) {
    std::string out;
    for (const std::string& name : choicesOf(f))
        out += (out.empty() ? "" : ", ") + name;
    return out;
}

#define SHARDSCOPE_FIELD(F, GET, SET)                                                              \
    Access {                                                                                       \
        Field::F, [](const RunConfig& c) -> FieldValue { return GET; },                            \
            [](RunConfig& c, const FieldValue& v) {                                                \
                [[maybe_unused]] constexpr Field f = Field::F;                                     \
                SET;                                                                               \
            }                                                                                      \
    }

const std::array<Access, kFieldCount> kAccess =
    {
        {
            SHARDSCOPE_FIELD(Model, c.preset.name,
                             {
                                 const std::string& name = as<std::string>(f, v);
                                 const ModelPreset* p = findPreset(name);
                                 if (!p)
                                     throwInvalid("--model: unknown model preset '" +
                                                  name.substr(0, 64) +
                                                  "' (choices: " + presetChoices() + ")");
                                 c.preset = *p;
                             }),
            SHARDSCOPE_FIELD(Strategy, std::string(plan::strategyName(c.strategy)),
                             {
                                 const std::string& name = as<std::string>(f, v);
                                 const auto s = plan::parseStrategy(name);
                                 if (!s)
                                     throwInvalid("--strategy: unknown strategy '" +
                                                  name.substr(0, 64) + "' (" +
                                                  choiceList(Field::Strategy) + ")");
                                 c.strategy = *s;
                             }),
            SHARDSCOPE_FIELD(Steps, c.steps, c.steps = narrow<std::int64_t>(f, v)),
            SHARDSCOPE_FIELD(Seed, clamped(c.seed), c.seed = narrow<std::uint64_t>(f, v)),
            SHARDSCOPE_FIELD(Precision, std::string(plan::precisionName(c.precision)),
                             {
                                 const std::string& name = as<std::string>(f, v);
                                 if (name == "bf16")
                                     c.precision = plan::PrecisionKind::MixedBf16;
                                 else if (name == "fp32")
                                     c.precision = plan::PrecisionKind::Fp32;
                                 else
                                     throwInvalid("--precision must be bf16 or fp32, got '" +
                                                  name.substr(0, 64) + "'");
                             }),
            SHARDSCOPE_FIELD(Checkpointing, c.checkpointing, c.checkpointing = as<bool>(f, v)),
            SHARDSCOPE_FIELD(MicroBatch, c.preset.microBatch,
                             c.preset.microBatch = narrow<std::int64_t>(f, v)),
            SHARDSCOPE_FIELD(LearningRate, c.preset.learningRate,
                             c.preset.learningRate = as<double>(f, v)),
            SHARDSCOPE_FIELD(Deterministic, c.deterministic, c.deterministic = as<bool>(f, v)),
            // One flag for both buckets, as DeepSpeed's reduce and all-gather bucket sizes usually
            // are.
            SHARDSCOPE_FIELD(BucketBytes, clamped(c.knobs.reduceBucketBytes),
                             c.knobs.reduceBucketBytes = c.knobs.allGatherBucketBytes =
                                 narrow<std::uint64_t>(f, v)),
            SHARDSCOPE_FIELD(Prefetch, std::int64_t{c.knobs.prefetchDepth},
                             c.knobs.prefetchDepth = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(ReshardAfterForward, c.knobs.reshardAfterForward,
                             c.knobs.reshardAfterForward = as<bool>(f, v)),
            SHARDSCOPE_FIELD(MaxInflight, std::int64_t{c.knobs.maxInflightAllGathers},
                             c.knobs.maxInflightAllGathers = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(Persistence, clamped(c.knobs.persistenceThresholdParams),
                             c.knobs.persistenceThresholdParams = narrow<std::uint64_t>(f, v)),
            SHARDSCOPE_FIELD(HybridGroup, std::int64_t{c.knobs.hybridGroupSize},
                             c.knobs.hybridGroupSize = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(GradAccum, std::int64_t{c.knobs.gradAccumSteps},
                             c.knobs.gradAccumSteps = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(NoSync, c.knobs.noSync, c.knobs.noSync = as<bool>(f, v)),
            SHARDSCOPE_FIELD(Capacity,
                             c.capacityBytes ? FieldValue(clamped(*c.capacityBytes)) : FieldValue(),
                             {
                                 if (std::holds_alternative<std::monostate>(v))
                                     c.capacityBytes.reset();
                                 else
                                     c.capacityBytes = narrow<std::uint64_t>(f, v);
                             }),
            SHARDSCOPE_FIELD(TimeoutMs, c.timeoutMs, c.timeoutMs = narrow<std::int64_t>(f, v)),
            SHARDSCOPE_FIELD(OffloadOptimizer, std::string(tierName(c.offload.optimizer)),
                             c.offload.optimizer = tierOf(f, v)),
            SHARDSCOPE_FIELD(OffloadParams, std::string(tierName(c.offload.param)),
                             c.offload.param = tierOf(f, v)),
            SHARDSCOPE_FIELD(NvmeDir, c.nvmeDir.empty() ? FieldValue() : FieldValue(c.nvmeDir),
                             c.nvmeDir = textOrNone(f, v).value_or("")),
            SHARDSCOPE_FIELD(KeepNvme, c.keepNvme, c.keepNvme = as<bool>(f, v)),
            SHARDSCOPE_FIELD(AioBlockBytes, clamped(c.aioBlockBytes),
                             c.aioBlockBytes = narrow<std::uint64_t>(f, v)),
            SHARDSCOPE_FIELD(AioQueueDepth, c.aioQueueDepth,
                             c.aioQueueDepth = narrow<std::int64_t>(f, v)),
            // Training on a file's bytes makes the vocabulary the 256 byte values.
            SHARDSCOPE_FIELD(Data, optionalText(c.dataFile),
                             {
                                 c.dataFile = textOrNone(f, v);
                                 if (c.dataFile) c.preset.shape.vocab = 256;
                             }),
            SHARDSCOPE_FIELD(Events, c.events, c.events = as<bool>(f, v)),
            SHARDSCOPE_FIELD(Stream, optionalText(c.streamPath), c.streamPath = textOrNone(f, v)),
            SHARDSCOPE_FIELD(Trace, optionalText(c.tracePath), c.tracePath = textOrNone(f, v)),
            SHARDSCOPE_FIELD(Json, optionalText(c.jsonPath), c.jsonPath = textOrNone(f, v)),
            SHARDSCOPE_FIELD(WeightsOut, optionalText(c.weightsPath),
                             c.weightsPath = textOrNone(f, v)),
            SHARDSCOPE_FIELD(Save, optionalText(c.saveDir), c.saveDir = textOrNone(f, v)),
            SHARDSCOPE_FIELD(SaveEvery, c.saveEvery, c.saveEvery = narrow<std::int64_t>(f, v)),
            SHARDSCOPE_FIELD(SaveAsync, c.saveAsync, c.saveAsync = as<bool>(f, v)),
            SHARDSCOPE_FIELD(Resume, optionalText(c.resumePath), c.resumePath = textOrNone(f, v)),
            SHARDSCOPE_FIELD(Backend, std::string(backendName(c.backend)),
                             {
                                 const std::string& name = as<std::string>(f, v);
                                 if (name == "cpu")
                                     c.backend = Backend::Cpu;
                                 else if (name == "cuda")
                                     c.backend = Backend::Cuda;
                                 else
                                     throwInvalid("--backend must be cpu or cuda, got '" +
                                                  name.substr(0, 64) + "'");
                             }),
            SHARDSCOPE_FIELD(Ranks, std::int64_t{c.worldSize}, c.worldSize = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(SharedDevice, c.sharedDevice, c.sharedDevice = as<bool>(f, v)),
            SHARDSCOPE_FIELD(SharedRanks, std::int64_t{c.worldSize},
                             c.worldSize = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(TensorParallel, std::int64_t{c.tensorParallel},
                             c.tensorParallel = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(PipeParallel, std::int64_t{c.pipeParallel},
                             c.pipeParallel = narrow<int>(f, v)),
            SHARDSCOPE_FIELD(PipeSchedule, std::string(plan::traits(c.pipeSchedule).flag),
                             {
                                 const std::string& name = as<std::string>(f, v);
                                 const auto s = plan::pipeScheduleFromFlag(name);
                                 if (!s)
                                     throwInvalid("--pp-schedule must be gpipe, 1f1b, interleaved "
                                                  "or zb1, got '" +
                                                  name.substr(0, 64) + "'");
                                 c.pipeSchedule = *s;
                             }),
            SHARDSCOPE_FIELD(VirtualStages, std::int64_t{c.virtualStages},
                             c.virtualStages = narrow<int>(f, v)),
        }};
#undef SHARDSCOPE_FIELD

bool accessInEnumOrder() {
    for (std::size_t i = 0; i < kAccess.size(); ++i)
        if (static_cast<std::size_t>(kAccess[i].field) != i) return false;
    return true;
}

const Access& accessOf(Field f) {
    static const bool ordered = accessInEnumOrder();
    if (!ordered) throw Error(ErrorKind::Internal, "runconfig: kAccess is not in Field's order");
    return kAccess[static_cast<std::size_t>(f)];
}

bool usesNvme(const RunConfig& c) {
    return c.offload.optimizer == Tier::Nvme || c.offload.param == Tier::Nvme;
}

} // namespace

std::string_view flagName(Field field) {
    return specOf(field).flag;
}

std::optional<Field> fieldOfFlag(std::string_view flag) {
    for (const FieldSpec& s : kFields)
        if (s.flag == flag) return s.field;
    return std::nullopt;
}

std::vector<std::string> importableFlags() {
    std::vector<std::string> out;
    for (const FieldSpec& s : kFields)
        if (s.importable) out.emplace_back(s.flag);
    return out;
}

FieldValue getField(const RunConfig& config, Field field) {
    return accessOf(field).get(config);
}

void setField(RunConfig& config, Field field, const FieldValue& value) {
    accessOf(field).set(config, value);
}

bool appliesToStrategy(Field field, plan::Strategy strategy) {
    const FieldSpec& s = specOf(field);
    return !s.usedBy || (plan::policyFor(strategy).*s.usedBy)();
}

bool applies(const RunConfig& c, Field field) {
    if (!appliesToStrategy(field, c.strategy)) return false;
    switch (field) {
    case Field::NvmeDir:
    case Field::KeepNvme:
    case Field::AioBlockBytes:
    case Field::AioQueueDepth:
        return usesNvme(c);
    case Field::SaveEvery:
    case Field::SaveAsync:
        return c.saveDir.has_value();
    case Field::SharedRanks:
        return c.sharedDevice;
    case Field::Ranks:
        return !c.sharedDevice;
    case Field::PipeSchedule:
    case Field::VirtualStages:
        return c.pipeParallel > 1;
    default:
        return true;
    }
}

RunConfig defaultsFor(const RunConfig& c) {
    RunConfig d;
    const ModelPreset* base = findPreset(c.preset.name);
    d.preset = base ? *base : c.preset;
    d.strategy = c.strategy;
    // SHARD_GRAD_OP never reshards after forward: that is its default, not a choice.
    if (c.strategy == plan::Strategy::FsdpShardGradOp) d.knobs.reshardAfterForward = false;
    d.worldSize = c.worldSize;
    return d;
}

std::string fieldText(const FieldValue& value) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&value)) {
        // The shortest text that reads back as the same double ("0.003", not
        // 0.0030000000000000001).
        char text[64];
        const auto [end, ec] = std::to_chars(text, text + sizeof(text), *d);
        return ec == std::errc() ? std::string(text, end) : std::string();
    }
    if (const auto* b = std::get_if<bool>(&value)) return *b ? "1" : "0";
    if (const auto* s = std::get_if<std::string>(&value)) return *s;
    return {};
}

std::vector<std::string> choicesOf(Field field) {
    std::vector<std::string> out;
    switch (field) {
    case Field::Model:
        for (const ModelPreset& m : modelPresets())
            out.push_back(m.name);
        break;
    case Field::Strategy:
        for (const plan::Strategy s : plan::allStrategies())
            out.emplace_back(plan::strategyName(s));
        break;
    case Field::Precision:
        out = {"bf16", "fp32"};
        break;
    case Field::OffloadOptimizer:
    case Field::OffloadParams:
        for (const Tier t : {Tier::Device, Tier::Host, Tier::Nvme})
            out.emplace_back(tierName(t));
        break;
    case Field::Backend:
        out = {"cpu", "cuda"};
        break;
    case Field::PipeSchedule:
        for (const plan::PipeScheduleTraits& t : plan::kPipeScheduleTraits)
            out.emplace_back(t.flag);
        break;
    default:
        break;
    }
    return out;
}

} // namespace shardscope::runconfig
