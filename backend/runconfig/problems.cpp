#include "runconfig/problems.h"

#include "core/error.h"
#include "plan/policy.h"
#include "runconfig/build_features.h"
#include "runconfig/run_config.h"
#include "theory/input_error.h"

#include <cstdint>

namespace shardscope::runconfig {

namespace {

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
    // Every whole number against the table's limits, where the field means something for this run.
    for (const FieldSpec& s : kFields) {
        if (s.kind != ValueKind::Integer && s.kind != ValueKind::Bytes) continue;
        if (!applies(c, s.field)) continue;
        const FieldValue v = getField(c, s.field);
        const std::int64_t* x = std::get_if<std::int64_t>(&v);
        if (!x) continue; // unset: no budget, …
        // --steps 0 with --resume and --save converts a checkpoint to this run's layout; a
        // --save-every of 0 saves after the last step only.
        if (s.field == Field::Steps && *x == 0 && c.resumePath && c.saveDir) continue;
        if (s.field == Field::SaveEvery && *x == 0) continue;
        if (*x < s.min || *x > s.max)
            out.push_back({s.field, Code::OutOfRange, *x, s.min, s.max, {}});
    }
    if (c.saveEvery != 0 && !c.saveDir)
        out.push_back({Field::SaveEvery, Code::NeedsFlag, c.saveEvery, 0, 0, "--save"});
    // The checkpoint format describes DP shards of whole units held in device or host memory (a
    // pipeline stage's ranks save their units' shards); a TP slice or states in NVMe files are
    // not in it, so such a run refuses before it starts.
    if (c.saveDir || c.resumePath) {
        const Field f = c.saveDir ? Field::Save : Field::Resume;
        if (c.tensorParallel > 1)
            out.push_back({f, Code::CheckpointUnsupported, c.tensorParallel, 0, 0,
                           "--tp " + std::to_string(c.tensorParallel)});
        else if (c.offload.optimizer == Tier::Nvme || c.offload.param == Tier::Nvme)
            out.push_back({f, Code::CheckpointUnsupported, 0, 0, 0, "the NVMe tier"});
        else if (c.pipeParallel > 1 && c.virtualStages > 1)
            out.push_back({f, Code::CheckpointUnsupported, c.virtualStages, 0, 0,
                           "--virtual-stages " + std::to_string(c.virtualStages)});
    }
    if (!(c.preset.learningRate > 0.0 && c.preset.learningRate <= kMaxLearningRate))
        out.push_back({Field::LearningRate,
                       Code::OutOfRange,
                       0,
                       0,
                       static_cast<std::int64_t>(kMaxLearningRate),
                       {}});
    const plan::Knobs& k = c.knobs;
    if (c.strategy == plan::Strategy::FsdpShardGradOp && k.reshardAfterForward)
        out.push_back({Field::ReshardAfterForward, Code::ContradictsStrategy, 1, 0, 0, {}});
    const plan::Policy policy = plan::policyFor(c.strategy);
    if (k.noSync && !policy.usesNoSync())
        out.push_back({Field::NoSync, Code::NotForStrategy, 1, 0, 0, {}});
    const Limit g = limitOf(Field::HybridGroup);
    if (policy.usesHybridGroup() && k.hybridGroupSize >= g.min && k.hybridGroupSize <= g.max) {
        if (c.dataParallel() >= 1 && c.dataParallel() % k.hybridGroupSize != 0)
            out.push_back({Field::HybridGroup, Code::NotADivisor, k.hybridGroupSize, 0,
                           c.dataParallel(),
                           c.tensorParallel > 1 || c.pipeParallel > 1 ? "data-parallel" : ""});
    }
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
    if (c.pipeParallel > 1) {
        const int p = c.pipeParallel, t = std::max(c.tensorParallel, 1);
        const std::string line = plan::validatePipe(
            c.pipeSchedule, {p, c.knobs.gradAccumSteps, c.virtualStages}, c.preset.shape.layers);
        auto problem = [&](std::string text) {
            out.push_back({Field::PipeParallel, Code::Pipeline, p, 0, 0, std::move(text)});
        };
        if (!line.empty())
            problem(line);
        else if (c.worldSize >= 1 && c.worldSize % (p * t) != 0)
            problem("--pp " + std::to_string(p) + (t > 1 ? " × --tp " + std::to_string(t) : "") +
                    " does not divide the " + std::to_string(c.worldSize) + " ranks");
        else if (c.backend == Backend::Cuda)
            problem("--pp " + std::to_string(p) +
                    ": pipeline stages run on CPU ranks (--backend cpu) in this build");
        else if (c.offload.optimizer == Tier::Nvme || c.offload.param == Tier::Nvme)
            problem("--pp " + std::to_string(p) + ": the NVMe tier does not run with pipelines");
        else if (const double bytes = static_cast<double>(c.preset.microBatch) *
                                      static_cast<double>(c.preset.shape.seqLen) *
                                      static_cast<double>(c.preset.shape.dModel) * sizeof(float);
                 !c.sharedDevice && bytes > static_cast<double>(INT32_MAX))
            // MPI counts a message's bytes in an int: one activation must fit in it.
            problem("--pp " + std::to_string(p) + ": a stage's activation message of " +
                    std::to_string(static_cast<std::uint64_t>(bytes)) +
                    " bytes (micro-batch × context × d × 4) exceeds MPI's 2 GiB message; use a "
                    "smaller --micro-batch");
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

std::string describeForFlags(const Problem& p, bool sharedDevice) {
    const std::string flag(flagName(p.field));
    const std::string ranks = sharedDevice ? "ranks (--ranks)" : "ranks (mpirun -np)";
    switch (p.code) {
    case Code::OutOfRange:
        if (p.field == Field::LearningRate)
            return "--lr must be more than 0 and at most " + std::to_string(p.max);
        if (p.field == Field::HybridGroup && p.value < 1)
            return "fsdp_hybrid needs a shard group size (--hybrid-group) of at least 1";
        if (p.value < p.min && p.max >= kMaxExactCount)
            return flag + " must be at least " + std::to_string(p.min);
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
        // With --tp or --pp the shard groups split the data-parallel ranks, not the world.
        return "hybrid group size (--hybrid-group) " + std::to_string(p.value) +
               " does not divide " +
               (p.text == "data-parallel" ? "the data-parallel ranks D = ranks / (--pp × --tp) ="
                                          : ranks) +
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
    case Code::Pipeline:
        return p.text;
    }
    return p.text;
}

} // namespace shardscope::runconfig
