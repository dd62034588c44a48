#include "train/trainer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "kernels/cpu/bf16.h"

namespace shardscope::train {

using device::Buffer;
using kernels::Bf16;

Trainer::Trainer(TrainConfig config, device::Device& device, const model::DataSource& data,
                 StepHooks* hooks)
    : config_(config), device_(device), data_(data), hooks_(hooks ? hooks : &defaultHooks_),
      model_(config.model, device) {
    const auto& shape = config_.model.shape;
    if (!mixed() && config_.precision != theory::PrecisionKind::Fp32)
        throwInvalid("precision " + std::string(theory::precisionName(config_.precision)) +
                     " is not supported by the trainer (use bf16 or fp32)");
    if (config_.worldSize < 1 || config_.rank < 0 || config_.rank >= config_.worldSize)
        throwInvalid("rank " + std::to_string(config_.rank) + " is outside a world of " +
                     std::to_string(config_.worldSize));
    if (data.vocab() != shape.vocab || data.seqLen() != shape.seqLen ||
        data.microBatch() != config_.model.microBatch)
        throwInvalid("the data source (vocab " + std::to_string(data.vocab()) + ", context " +
                     std::to_string(data.seqLen()) + ") does not match the model (vocab " +
                     std::to_string(shape.vocab) + ", context " + std::to_string(shape.seqLen) + ")");
    std::vector<std::string> names;
    for (const auto& u : model_.units()) names.push_back(u.name());
    device_.ledger().setUnitNames(std::move(names));
    allocateStates();
}

std::uint64_t Trainer::paramCount() const {
    std::uint64_t n = 0;
    for (const auto& u : model_.units()) n += u.elements();
    return n;
}

void Trainer::allocateStates() {
    const auto shards = static_cast<std::uint64_t>(config_.worldSize);
    const std::uint64_t paramBytes = mixed() ? sizeof(Bf16) : sizeof(float);
    states_.resize(model_.units().size());
    for (std::int32_t u = 0; u < model_.unitCount(); ++u) {
        const auto& layout = model_.units()[static_cast<std::size_t>(u)];
        const std::uint64_t n = layout.paddedElements(shards);
        UnitState& s = states_[static_cast<std::size_t>(u)];
        s.param = device_.allocate(n * paramBytes, {Category::ParamFull, Tier::Device, u});
        s.grad = device_.allocate(n * paramBytes, {Category::GradFull, Tier::Device, u}, true);
        if (mixed())
            s.master = device_.allocateArray<float>(n, {Category::MasterFp32, Tier::Device, u});
        s.adamM = device_.allocateArray<float>(n, {Category::AdamM, Tier::Device, u}, true);
        s.adamV = device_.allocateArray<float>(n, {Category::AdamV, Tier::Device, u}, true);
        // Initialise in fp32 (the master), then round once into the bf16 working copy.
        Buffer& fp32 = mixed() ? s.master : s.param;
        model::initUnit(layout, config_.model.shape.layers, config_.seed, u, fp32.ptr<float>(), n);
        if (mixed()) kernels::toBf16(s.master.as<const float>(), s.param.as<Bf16>());
    }
}

void Trainer::emitSpan(EventKind kind, std::int32_t unit, Phase phase) const {
    Event e;
    e.kind = kind;
    e.unit = unit;
    e.phase = phase;
    device_.ledger().emit(e);
}

Buffer Trainer::widenParams(std::int32_t unit) {
    const UnitState& s = states_[static_cast<std::size_t>(unit)];
    const std::uint64_t n = model_.units()[static_cast<std::size_t>(unit)].elements();
    Buffer fp32 = device_.allocateArray<float>(n, {Category::Workspace, Tier::Device, unit});
    kernels::toFloat(s.param.as<const Bf16>().first(n), fp32.as<float>());
    return fp32;
}

void Trainer::forwardUnit(std::int32_t unit, const model::Batch& batch) {
    UnitContext ctx{unit, model_.units()[static_cast<std::size_t>(unit)],
                    states_[static_cast<std::size_t>(unit)]};
    hooks_->beforeForward(ctx);
    emitSpan(EventKind::ComputeBegin, unit, Phase::Forward);
    if (mixed()) {
        Buffer params = widenParams(unit);
        model_.forward(unit, params.ptr<float>(), batch);
    } else {
        model_.forward(unit, ctx.state.param.ptr<float>(), batch);
    }
    emitSpan(EventKind::ComputeEnd, unit, Phase::Forward);
    hooks_->afterForward(ctx);
}

void Trainer::backwardUnit(std::int32_t unit) {
    UnitContext ctx{unit, model_.units()[static_cast<std::size_t>(unit)],
                    states_[static_cast<std::size_t>(unit)]};
    hooks_->beforeBackward(ctx);
    emitSpan(EventKind::ComputeBegin, unit, Phase::Backward);
    const std::uint64_t n = ctx.layout.elements();
    if (mixed()) {
        Buffer params = widenParams(unit);
        Buffer grads = device_.allocateArray<float>(n, {Category::Workspace, Tier::Device, unit}, true);
        model_.backward(unit, params.ptr<float>(), grads.ptr<float>());
        kernels::toBf16(grads.as<const float>(), ctx.state.grad.as<Bf16>().first(n));
    } else {
        std::memset(ctx.state.grad.data(), 0, ctx.state.grad.bytes());
        model_.backward(unit, ctx.state.param.ptr<float>(), ctx.state.grad.ptr<float>());
    }
    emitSpan(EventKind::ComputeEnd, unit, Phase::Backward);
    hooks_->afterBackward(ctx);
}

double Trainer::computeGradients(const model::Batch& batch) {
    try {
        for (std::int32_t u = 0; u < model_.unitCount(); ++u) forwardUnit(u, batch);
        const double loss = model_.loss();
        for (std::int32_t u = model_.unitCount() - 1; u >= 0; --u) backwardUnit(u);
        return loss;
    } catch (...) {
        model_.discardActivations(); // leave the ledger at the model states
        throw;
    }
}

double Trainer::optimizerStep() {
    emitSpan(EventKind::ComputeBegin, kNoUnit, Phase::Optimizer);
    double local = 0.0;
    for (std::int32_t u = 0; u < model_.unitCount(); ++u) {
        const UnitState& s = states_[static_cast<std::size_t>(u)];
        local += mixed() ? sumSquares(s.grad.as<const Bf16>()) : sumSquares(s.grad.as<const float>());
    }
    const double norm = std::sqrt(hooks_->allReduceSum(local));
    AdamWStep step{step_ + 1, clipScale(norm, config_.optimizer.clipNorm), false};
    for (std::int32_t u = 0; u < model_.unitCount(); ++u) {
        UnitState& s = states_[static_cast<std::size_t>(u)];
        const auto& layout = model_.units()[static_cast<std::size_t>(u)];
        // Per tensor, so weight decay follows the layout; padding is never touched (stays 0).
        for (const model::TensorSlot& slot : layout.slots()) {
            step.decay = slot.decay;
            auto part = [&](const Buffer& b) { return b.as<float>().subspan(slot.offset, slot.elements()); };
            std::span<float> weights = mixed() ? part(s.master) : part(s.param);
            if (mixed())
                adamwUpdate(config_.optimizer, step, weights,
                            s.grad.as<const Bf16>().subspan(slot.offset, slot.elements()),
                            part(s.adamM), part(s.adamV));
            else
                adamwUpdate(config_.optimizer, step, weights,
                            s.grad.as<const float>().subspan(slot.offset, slot.elements()),
                            part(s.adamM), part(s.adamV));
        }
        if (mixed()) kernels::toBf16(s.master.as<const float>(), s.param.as<Bf16>());
    }
    emitSpan(EventKind::ComputeEnd, kNoUnit, Phase::Optimizer);
    hooks_->afterOptimizer();
    return norm;
}

StepResult Trainer::step() {
    Ledger& ledger = device_.ledger();
    ledger.setStep(step_);
    emitSpan(EventKind::StepBegin, kNoUnit, Phase::None);
    const std::uint64_t begin = monotonicNs();
    StepResult r;
    r.step = step_;
    const model::Batch batch = data_.batchFor(step_, config_.rank, config_.worldSize);
    r.loss = computeGradients(batch);
    r.gradNorm = optimizerStep();
    r.stepNs = monotonicNs() - begin;
    emitSpan(EventKind::StepEnd, kNoUnit, Phase::None);
    ++step_;
    return r;
}

std::vector<float> Trainer::weights(std::int32_t unit) const {
    const UnitState& s = states_.at(static_cast<std::size_t>(unit));
    const std::uint64_t n = model_.units()[static_cast<std::size_t>(unit)].elements();
    const auto fp32 = (mixed() ? s.master : s.param).as<const float>().first(n);
    return {fp32.begin(), fp32.end()};
}

std::uint64_t Trainer::paramDigest() const {
    std::uint64_t h = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis
    for (std::int32_t u = 0; u < model_.unitCount(); ++u) {
        for (float w : weights(u)) {
            unsigned char bytes[sizeof(float)];
            std::memcpy(bytes, &w, sizeof(float));
            for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull; // FNV prime
        }
    }
    return h;
}

std::string digestHex(std::uint64_t digest) {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
    return text;
}

} // namespace shardscope::train
