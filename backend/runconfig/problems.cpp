#include "runconfig/problems.h"

#include "core/error.h"
#include "plan/policy.h"
#include "runconfig/build_features.h"
#include "runconfig/run_config.h"
#include "theory/input_error.h"

namespace shardscope::runconfig {

namespace {

std::int64_t clampToInt64(std::uint64_t v) {
    return v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
}

void checkRange(std::vector<Problem>& out, Field field, std::int64_t value) {
    const Limit& l = limitOf(field);
    if (value < l.min || value > l.max)
        out.push_back({field, Code::OutOfRange, value, l.min, l.max, {}});
}

// The run-configuration field behind an input theory refused (the model preset for what the
// configuration does not set directly: the shape, its parameter count).
Field fieldOf(theory::InputField f, bool sharedDevice) {
    using theory::InputField;
    switch (f) {
    case InputField::Ranks:
        return sharedDevice ? Field::SharedRanks : Field::Ranks;
    case InputField::MicroBatch:
        return Field::MicroBatch;
    case InputField::HybridGroup:
        return Field::HybridGroup;
    case InputField::Knobs:
        return Field::Strategy;
    default:
        return Field::Model;
    }
}

} // namespace

std::vector<Problem> validate(const RunConfig& c) {
    std::vector<Problem> out;
    if (!findPreset(c.preset.name))
        out.push_back({Field::Model, Code::UnknownName, 0, 0, 0, c.preset.name});
    checkRange(out, c.sharedDevice ? Field::SharedRanks : Field::Ranks, c.worldSize);
    // --steps 0 with --resume and --save converts a checkpoint to this run's layout.
    if (!(c.steps == 0 && c.resumePath && c.saveDir)) checkRange(out, Field::Steps, c.steps);
    if (c.saveEvery != 0 && !c.saveDir)
        out.push_back({Field::SaveEvery, Code::NeedsFlag, c.saveEvery, 0, 0, "--save"});
    // The checkpoint format describes DP shards of whole units held in device or host memory; a
    // TP slice or states in NVMe files are not in it, so such a run refuses before it starts.
    if (c.saveDir || c.resumePath) {
        const Field f = c.saveDir ? Field::Save : Field::Resume;
        if (c.tensorParallel > 1)
            out.push_back({f, Code::CheckpointUnsupported, c.tensorParallel, 0, 0,
                           "--tp " + std::to_string(c.tensorParallel)});
        else if (c.offload.optimizer == Tier::Nvme || c.offload.param == Tier::Nvme)
            out.push_back({f, Code::CheckpointUnsupported, 0, 0, 0, "the NVMe tier"});
    }
    if (c.saveEvery < 0 || c.saveEvery > kMaxSaveEvery)
        out.push_back({Field::SaveEvery, Code::OutOfRange, c.saveEvery, 1, kMaxSaveEvery, {}});
    checkRange(out, Field::Seed, clampToInt64(c.seed));
    checkRange(out, Field::MicroBatch, c.preset.microBatch);
    if (!(c.preset.learningRate > 0.0 && c.preset.learningRate <= kMaxLearningRate))
        out.push_back({Field::LearningRate,
                       Code::OutOfRange,
                       0,
                       0,
                       static_cast<std::int64_t>(kMaxLearningRate),
                       {}});
    const plan::Knobs& k = c.knobs;
    checkRange(out, Field::BucketBytes, clampToInt64(k.reduceBucketBytes));
    checkRange(out, Field::Prefetch, k.prefetchDepth);
    checkRange(out, Field::MaxInflight, k.maxInflightAllGathers);
    checkRange(out, Field::Persistence, clampToInt64(k.persistenceThresholdParams));
    checkRange(out, Field::GradAccum, k.gradAccumSteps);
    checkRange(out, Field::TimeoutMs, c.timeoutMs);
    if (c.capacityBytes && *c.capacityBytes < 1)
        out.push_back({Field::Capacity, Code::OutOfRange, 0, 1, INT64_MAX, {}});
    if (c.strategy == plan::Strategy::FsdpShardGradOp && k.reshardAfterForward)
        out.push_back({Field::ReshardAfterForward, Code::ContradictsStrategy, 1, 0, 0, {}});
    const plan::Policy policy = plan::policyFor(c.strategy);
    if (k.noSync && !policy.usesNoSync())
        out.push_back({Field::NoSync, Code::NotForStrategy, 1, 0, 0, {}});
    if (policy.usesHybridGroup()) {
        const Limit& g = limitOf(Field::HybridGroup);
        if (k.hybridGroupSize < g.min || k.hybridGroupSize > g.max)
            out.push_back(
                {Field::HybridGroup, Code::OutOfRange, k.hybridGroupSize, g.min, g.max, {}});
        else if (c.dataParallel() >= 1 && c.dataParallel() % k.hybridGroupSize != 0)
            out.push_back({Field::HybridGroup, Code::NotADivisor, k.hybridGroupSize, 0,
                           c.dataParallel(), c.tensorParallel > 1 ? "data-parallel" : ""});
    }
    checkRange(out, Field::TensorParallel, c.tensorParallel);
    if (c.tensorParallel >= 1) {
        const std::int64_t t = c.tensorParallel;
        const plan::GptShape& shape = c.preset.shape;
        if (c.worldSize >= 1 && c.worldSize % t != 0)
            out.push_back({Field::TensorParallel, Code::NotADivisor, t, 0, c.worldSize, "ranks"});
        else if (shape.heads >= 1 && shape.heads % t != 0)
            out.push_back(
                {Field::TensorParallel, Code::NotADivisor, t, 0, shape.heads, "attention heads"});
        else if (shape.dModel >= 1 && (4 * shape.dModel) % t != 0)
            out.push_back(
                {Field::TensorParallel, Code::NotADivisor, t, 0, 4 * shape.dModel, "MLP width"});
    }
    const std::string strategyText(plan::strategyName(c.strategy));
    for (const auto& [field, tier] : {std::pair{Field::OffloadOptimizer, c.offload.optimizer},
                                      std::pair{Field::OffloadParams, c.offload.param}}) {
        if (tier == Tier::Device) continue;
        const bool fits =
            field == Field::OffloadOptimizer ? policy.shardOptimizer : policy.shardParams;
        if (tier == Tier::Nvme && !kNvmeTierBuilt)
            out.push_back({field, Code::OffloadTierNotBuilt, 0, 0, 0, "nvme"});
        else if (!fits)
            out.push_back({field, Code::OffloadNotForStrategy, 0, 0, 0, strategyText});
        else if (c.precision != plan::PrecisionKind::MixedBf16)
            out.push_back({field, Code::OffloadNeedsBf16, 0, 0, 0, {}});
    }
    if (!out.empty()) return out;
    // Everything else the theory engine checks (sizes that would overflow, …).
    try {
        theory::validate(scenarioOf(c));
    } catch (const theory::InputError& e) {
        out.push_back({fieldOf(e.field(), c.sharedDevice), Code::Theory, 0, 0, 0, e.what()});
    }
    return out;
}

std::string_view flagName(Field field) {
    switch (field) {
    case Field::Model:
        return "--model";
    case Field::Strategy:
        return "--strategy";
    case Field::Ranks:
        return "mpirun -np";
    case Field::SharedRanks:
        return "--ranks";
    case Field::Steps:
        return "--steps";
    case Field::Seed:
        return "--seed";
    case Field::Precision:
        return "--precision";
    case Field::MicroBatch:
        return "--micro-batch";
    case Field::LearningRate:
        return "--lr";
    case Field::BucketBytes:
        return "--bucket-bytes";
    case Field::Prefetch:
        return "--prefetch";
    case Field::ReshardAfterForward:
        return "--reshard-after-forward";
    case Field::MaxInflight:
        return "--max-inflight";
    case Field::Persistence:
        return "--persistence-threshold";
    case Field::HybridGroup:
        return "--hybrid-group";
    case Field::GradAccum:
        return "--grad-accum";
    case Field::NoSync:
        return "--no-sync";
    case Field::Capacity:
        return "--capacity";
    case Field::TimeoutMs:
        return "--timeout-ms";
    case Field::Backend:
        return "--backend";
    case Field::SharedDevice:
        return "--shared-device";
    case Field::Data:
        return "--data";
    case Field::Stream:
        return "--stream";
    case Field::Trace:
        return "--trace";
    case Field::Json:
        return "--json";
    case Field::WeightsOut:
        return "--weights-out";
    case Field::OffloadOptimizer:
        return "--offload-optimizer";
    case Field::OffloadParams:
        return "--offload-params";
    case Field::TensorParallel:
        return "--tp";
    case Field::Save:
        return "--save";
    case Field::SaveEvery:
        return "--save-every";
    case Field::Resume:
        return "--resume";
    }
    return "?";
}

std::string describeForFlags(const Problem& p, bool sharedDevice) {
    const std::string flag(flagName(p.field));
    const std::string ranks = sharedDevice ? "ranks (--ranks)" : "ranks (mpirun -np)";
    switch (p.code) {
    case Code::OutOfRange:
        if (p.field == Field::LearningRate)
            return "--lr must be more than 0 and at most " + std::to_string(p.max);
        if (p.field == Field::HybridGroup && p.value < 1)
            return "fsdp_hybrid needs a shard group size (--hybrid-group) of at least 1";
        if (p.max == INT64_MAX) return flag + " must be at least " + std::to_string(p.min);
        return flag + " must be between " + std::to_string(p.min) + " and " +
               std::to_string(p.max) + ", got " + std::to_string(p.value);
    case Code::UnknownName:
        if (p.field == Field::Model)
            return "--model: unknown model preset '" + p.text + "' (choices: " + presetChoices() +
                   ")";
        return flag + ": unknown value '" + p.text + "'";
    case Code::NotADivisor:
        if (p.field == Field::TensorParallel) {
            const std::string what = p.text == "ranks" ? ranks : p.text;
            return "tensor parallel (--tp) " + std::to_string(p.value) + " does not divide the " +
                   what + " " + std::to_string(p.max) + (p.text == "ranks" ? "" : " of this model");
        }
        // With --tp the shard groups split the data-parallel ranks, not the world.
        return "hybrid group size (--hybrid-group) " + std::to_string(p.value) +
               " does not divide " +
               (p.text == "data-parallel" ? "the data-parallel ranks (ranks / --tp)" : ranks) +
               " " + std::to_string(p.max);
    case Code::ContradictsStrategy:
        return "--reshard-after-forward 1 contradicts fsdp_grad_op (SHARD_GRAD_OP keeps params "
               "gathered from "
               "forward to backward; use fsdp)";
    case Code::NotForStrategy:
        return "--no-sync is an FSDP option (fsdp, fsdp_grad_op, fsdp_hybrid); DDP and ZeRO-1 "
               "always accumulate "
               "locally, ZeRO-2/3 cannot";
    case Code::Theory:
        return flag + ": " + p.text;
    case Code::OffloadNotForStrategy:
        if (p.field == Field::OffloadOptimizer)
            return flag +
                   " needs a strategy that shards the optimizer (zero1, zero2, zero3, fsdp, "
                   "fsdp_grad_op, "
                   "fsdp_hybrid), not " +
                   p.text;
        return flag +
               " needs a strategy that shards params (zero3, fsdp, fsdp_grad_op, fsdp_hybrid), "
               "not " +
               p.text;
    case Code::OffloadNeedsBf16:
        return flag +
               " needs --precision bf16 (the host tier holds fp32 master weights and bf16 params)";
    case Code::OffloadTierNotBuilt:
        return flag + " " + p.text +
               ": the NVMe tier is not available in this build (configured without liburing); use "
               "host";
    case Code::NeedsFlag:
        return flag + " needs " + p.text;
    case Code::CheckpointUnsupported:
        return flag + ": checkpoints of a run with " + p.text + " are not supported";
    }
    return p.text;
}

} // namespace shardscope::runconfig
