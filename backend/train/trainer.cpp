#include "train/trainer.h"

#include "core/error.h"
#include "core/numeric.h"
#include "device/ops.h"
#include "offload/host_adamw.h"
#include "train/grad_norm.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace shardscope::train {

using device::Buffer;

namespace {
// The ledger's model-state cells now (StepResult::modelStates).
ByteTable modelStatesNow(const Ledger& ledger) {
    ByteTable out;
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other)
            for (Tier t : kAllTiers)
                out.at(c, t) = ledger.live().at(c, t);
    return out;
}
} // namespace

Trainer::Trainer(TrainConfig config, device::Device& device, const model::DataSource& data,
                 strategy::Sharding* sharding)
    : config_(config), device_(device), data_(data), sharding_(sharding),
      model_(config.model, device) {
    const auto& shape = config_.model.shape;
    if (!mixed() && config_.precision != plan::PrecisionKind::Fp32)
        throwInvalid("precision " + std::string(plan::precisionName(config_.precision)) +
                     " is not supported by the trainer (use bf16 or fp32)");
    if (config_.gradAccumSteps < 1)
        throwInvalid("gradient accumulation steps must be at least 1, got " +
                     std::to_string(config_.gradAccumSteps));
    if (data.vocab() != shape.vocab || data.seqLen() != shape.seqLen ||
        data.microBatch() != config_.model.microBatch)
        throwInvalid("the data source (vocab " + std::to_string(data.vocab()) + ", context " +
                     std::to_string(data.seqLen()) + ") does not match the model (vocab " +
                     std::to_string(shape.vocab) + ", context " + std::to_string(shape.seqLen) +
                     ")");
    device_.ops().setBf16Linear(mixed());
    std::vector<std::string> names;
    for (const auto& u : model_.units())
        names.push_back(u.name());
    device_.ledger().setUnitNames(std::move(names));
    if (!sharding_) {
        selfComm_ = comm::makeSelfCommunicator(&device_);
        strategy::StrategyConfig sc;
        sc.strategy = plan::Strategy::Ddp;
        sc.precision = config_.precision;
        sc.shape = shape;
        sc.seed = config_.seed;
        sc.knobs.gradAccumSteps = config_.gradAccumSteps;
        ownSharding_ =
            strategy::makeSharding(sc, device_, {selfComm_.get(), selfComm_.get(), nullptr});
        sharding_ = ownSharding_.get();
    }
    if (sharding_->units().size() != model_.units().size())
        throw Error(ErrorKind::Internal, "the strategy was built for another model");
    model_.setTensorGroup(sharding_->tensorGroup());
    model_.setBf16Gemm(bf16Gemm());
    first_ = sharding_->firstUnit();
    end_ = sharding_->endUnit();
    chunks_ = {{first_, end_}};
    if (comm::Communicator* pipe = sharding_->pipeGroup(); pipe && pipe->size() > 1) {
        pipe_ = pipe;
        stage_ = pipe->rank();
        stages_ = pipe->size();
        const bool first = stage_ == 0, last = stage_ + 1 == stages_;
        if ((first_ == 0) != first || (end_ == model_.unitCount()) != last)
            throw Error(ErrorKind::Internal, "a pipeline stage's units do not match its rank");
        if (config_.virtualStages > 1) {
            chunks_ = plan::stageChunks(static_cast<int>(shape.layers), stages_,
                                        config_.virtualStages, stage_);
            if (chunks_.front().first != first_ || chunks_.back().end != end_)
                throw Error(ErrorKind::Internal,
                            "a pipeline stage's chunks do not match its units");
        }
        // Every micro-batch of the step may be in flight at once (GPipe): an activation set each.
        for (int m = 0; m < config_.gradAccumSteps; ++m) {
            micro_.push_back(std::make_unique<model::GptModel>(config_.model, device_));
            micro_.back()->setTensorGroup(sharding_->tensorGroup());
            micro_.back()->setBf16Gemm(bf16Gemm());
        }
    }
    // The norm's fixed-point sum runs over every TP slice: T times the slice's elements bound it.
    for (const auto& u : model_.units())
        paddedTotal_ += u.paddedElements(static_cast<std::uint64_t>(sharding_->dataRanks()));
    paddedTotal_ *= static_cast<std::uint64_t>(shape.tp);
    // Initialisation transients are not part of any step.
    device_.ledger().resetPeaks();
}

Trainer::~Trainer() = default;

std::uint64_t Trainer::paramCount() const {
    return plan::modelParamCount(config_.model.shape);
}

void Trainer::emitSpan(EventKind kind, std::int32_t unit, Phase phase) const {
    // A span ends when the device has finished the work, not when the host queued it: on a
    // stream-ordered device this waits (CPU: nothing to wait for). That makes compute spans and
    // the exposed-communication fraction device time, at the cost of one sync per unit.
    if (kind == EventKind::ComputeEnd) device_.ops().synchronize();
    Event e;
    e.kind = kind;
    e.unit = unit;
    e.phase = phase;
    device_.ledger().emit(e);
}

// The unit's bf16 parameters for the model's bf16 linear layers (TrainConfig::bf16Gemm), or null.
const Bf16* Trainer::bf16Linear(const strategy::ParamView& view) const {
    return bf16Gemm() ? static_cast<const Bf16*>(view.data) : nullptr;
}

Buffer Trainer::widen(std::int32_t unit, const strategy::ParamView& view) {
    const std::uint64_t n = model_.units()[static_cast<std::size_t>(unit)].elements();
    Buffer fp32 = device_.allocateArray<float>(n, {Category::Workspace, Tier::Device, unit});
    device_.ops().toFloat(static_cast<const Bf16*>(view.data), fp32.ptr<float>(), n);
    return fp32;
}

void Trainer::forwardUnit(model::GptModel& model, std::int32_t unit, const model::Batch& batch) {
    if (!sending_.empty()) reapSends(false); // see pipelineMicroSteps: a message's progress
    sharding_->beforeForward(unit);
    emitSpan(EventKind::ComputeBegin, unit, Phase::Forward);
    const strategy::ParamView view = sharding_->params(unit);
    if (mixed()) {
        Buffer params = widen(unit, view);
        model.forward(unit, params.ptr<float>(), batch, bf16Linear(view));
    } else {
        model.forward(unit, static_cast<const float*>(view.data), batch);
    }
    emitSpan(EventKind::ComputeEnd, unit, Phase::Forward);
    sharding_->afterForward(unit);
}

void Trainer::backwardUnit(model::GptModel& model, std::int32_t unit,
                           const strategy::MicroStep& micro) {
    if (!sending_.empty()) reapSends(false);
    sharding_->beforeBackward(unit);
    emitSpan(EventKind::ComputeBegin, unit, Phase::Backward);
    const std::uint64_t n = model_.units()[static_cast<std::size_t>(unit)].elements();
    const strategy::ParamView view = sharding_->params(unit);
    Buffer params;
    if (mixed()) params = widen(unit, view);
    Buffer grads = device_.allocateArray<float>(n, {Category::Workspace, Tier::Device, unit}, true);
    model.backward(unit, mixed() ? params.ptr<float>() : static_cast<const float*>(view.data),
                   grads.ptr<float>(), bf16Linear(view));
    params.reset();
    emitSpan(EventKind::ComputeEnd, unit, Phase::Backward);
    sharding_->storeGradients(unit, grads.as<const float>(), micro);
    grads.reset();
    sharding_->afterBackward(unit, micro);
}

void Trainer::inputGradUnit(model::GptModel& model, std::int32_t unit) {
    if (!sending_.empty()) reapSends(false);
    sharding_->beforeBackward(unit);
    emitSpan(EventKind::ComputeBegin, unit, Phase::Backward);
    const strategy::ParamView view = sharding_->params(unit);
    Buffer params;
    if (mixed()) params = widen(unit, view);
    model.backwardInput(unit, mixed() ? params.ptr<float>() : static_cast<const float*>(view.data),
                        bf16Linear(view));
    params.reset();
    emitSpan(EventKind::ComputeEnd, unit, Phase::Backward);
    sharding_->afterInputGradients(unit);
}

void Trainer::weightGradUnit(model::GptModel& model, std::int32_t unit,
                             const strategy::MicroStep& micro) {
    if (!sending_.empty()) reapSends(false);
    emitSpan(EventKind::ComputeBegin, unit, Phase::WeightGrad);
    const std::uint64_t n = model_.units()[static_cast<std::size_t>(unit)].elements();
    Buffer grads = device_.allocateArray<float>(n, {Category::Workspace, Tier::Device, unit}, true);
    model.backwardWeights(unit, grads.ptr<float>());
    emitSpan(EventKind::ComputeEnd, unit, Phase::WeightGrad);
    sharding_->storeGradients(unit, grads.as<const float>(), micro);
    grads.reset();
    sharding_->afterWeightGradients(unit, micro);
}

double Trainer::computeGradients(const model::Batch& batch, int micro, int micros) {
    const strategy::MicroStep m{micro, micros};
    try {
        if (pipe_)
            throw Error(ErrorKind::Internal, "computeGradients runs one stage of a pipeline");
        device_.ledger().setMicroBatch(micro);
        for (std::int32_t u = 0; u < model_.unitCount(); ++u)
            forwardUnit(model_, u, batch);
        const double loss = model_.loss();
        for (std::int32_t u = model_.unitCount() - 1; u >= 0; --u)
            backwardUnit(model_, u, m);
        sharding_->endBackward(m);
        device_.ledger().setMicroBatch(-1);
        return loss;
    } catch (...) {
        device_.ledger().setMicroBatch(-1);
        model_.discardActivations(); // leave the ledger at the model states
        sharding_->discardTransients();
        throw;
    }
}

double Trainer::optimizerStep() {
    emitSpan(EventKind::ComputeBegin, kNoUnit, Phase::Optimizer);
    const std::int32_t units = model_.unitCount();
    std::vector<strategy::OwnedSlice> slices;
    std::vector<GradRange> normRanges;
    // Tensor parallelism: every TP rank holds the same gradient of a replicated tensor, so only
    // TP rank 0 adds those to the norm; the TP-split tensors are disjoint and all count.
    const comm::Communicator* tensor = sharding_->tensorGroup();
    const bool skipReplicated = tensor && tensor->size() > 1 && tensor->rank() != 0;
    // With a pipeline the stage's units only: the norm's sum over the world adds the others.
    slices.resize(static_cast<std::size_t>(units));
    for (std::int32_t u = first_; u < end_; ++u) {
        if (!holds(u)) continue; // between two chunks: another stage's
        const strategy::OwnedSlice o = sharding_->owned(u);
        slices[static_cast<std::size_t>(u)] = o;
        const std::uint64_t eb = o.gradsBf16 ? sizeof(Bf16) : sizeof(float);
        const char* base = static_cast<const char*>(o.grads);
        if (!skipReplicated) {
            normRanges.push_back(
                {base + (o.normBegin - o.begin) * eb, o.normEnd - o.normBegin, o.gradsBf16});
            continue;
        }
        for (const plan::TensorSlot& slot : model_.units()[static_cast<std::size_t>(u)].slots()) {
            const std::uint64_t a = std::max(o.normBegin, slot.offset);
            const std::uint64_t b = std::min(o.normEnd, slot.offset + slot.elements());
            if (a < b && slot.tp != plan::TpSplit::Replicated)
                normRanges.push_back({base + (a - o.begin) * eb, b - a, o.gradsBf16});
        }
    }
    // The gradients are sums over ranks and micro-steps: average once, with the clip.
    const double parts = static_cast<double>(sharding_->dataRanks()) * config_.gradAccumSteps;
    const double norm =
        std::sqrt(globalSquaredNorm(normRanges, device_.ops(), sharding_->world(), paddedTotal_)) /
        parts;
    const double coefficient = clipCoefficient(norm, config_.optimizer.clipNorm);
    const auto gradScale = static_cast<float>(coefficient / parts);
    const AdamWConfig& opt = config_.optimizer;
    device::Ops& ops = device_.ops();
    for (std::int32_t u = first_; u < end_; ++u) {
        if (!holds(u)) continue;
        strategy::OwnedSlice o = sharding_->beginUpdate(u, slices[static_cast<std::size_t>(u)]);
        const auto& layout = model_.units()[static_cast<std::size_t>(u)];
        // ZeRO-Offload with device gradients (ZeRO-1's slice of the all-reduced gradient): the
        // CPU optimizer reads them from a host staging copy.
        Buffer hostGrads;
        if (o.stateOnHost && !o.gradsOnHost && o.end > o.begin) {
            const std::uint64_t bytes =
                (o.end - o.begin) * (o.gradsBf16 ? sizeof(Bf16) : sizeof(float));
            hostGrads = device_.allocate(bytes, {Category::Workspace, Tier::Host, u});
            if (device_.holdsData()) device_.recordedDownload(hostGrads.data(), o.grads, bytes, u);
            o.grads = hostGrads.data();
        }
        // Per tensor, so weight decay follows the layout; padding is never touched (stays 0).
        for (const plan::TensorSlot& slot : layout.slots()) {
            const std::uint64_t a = std::max(o.begin, slot.offset);
            const std::uint64_t b = std::min(o.end, slot.offset + slot.elements());
            if (a >= b) continue;
            const AdamWScalars scalars =
                adamwScalars(opt.learningRate, opt.beta1, opt.beta2, opt.eps, opt.weightDecay,
                             baseStep_ + step_ + 1, slot.decay, gradScale);
            const std::uint64_t at = a - o.begin, len = b - a;
            const std::uint64_t gradBytes = o.gradsBf16 ? sizeof(Bf16) : sizeof(float);
            const void* grads = static_cast<const char*>(o.grads) + at * gradBytes;
            if (!o.stateOnHost)
                ops.adamw(scalars, o.weights + at, grads, o.gradsBf16, o.m + at, o.v + at, len);
            else if (device_.holdsData()) // the CPU optimizer: bitwise the device update
                offload::hostAdamW(scalars, o.weights + at, grads, o.gradsBf16, o.m + at, o.v + at,
                                   len);
        }
        sharding_->endUpdate(u);
    }
    emitSpan(EventKind::ComputeEnd, kNoUnit, Phase::Optimizer);
    sharding_->afterOptimizer();
    return norm;
}

StepResult Trainer::step() {
    Ledger& ledger = device_.ledger();
    ledger.setStep(step_);
    emitSpan(EventKind::StepBegin, kNoUnit, Phase::None);
    const std::uint64_t begin = monotonicNs();
    StepResult r;
    r.step = step_;
    const int micros = config_.gradAccumSteps;
    double lossSum = 0.0;
    try {
        if (pipe_) {
            lossSum = pipelineMicroSteps(r);
        } else {
            for (int m = 0; m < micros; ++m) {
                ledger.setMicroBatch(m);
                const strategy::MicroStep micro{m, micros};
                const model::Batch batch = data_.batchFor(
                    baseData_ + step_ * micros + m, sharding_->dataRank(), sharding_->dataRanks());
                for (std::int32_t u = 0; u < model_.unitCount(); ++u)
                    forwardUnit(model_, u, batch);
                lossSum += model_.loss();
                if (m == 0) r.modelStates = modelStatesNow(ledger);
                for (std::int32_t u = model_.unitCount() - 1; u >= 0; --u)
                    backwardUnit(model_, u, micro);
                sharding_->endBackward(micro);
            }
        }
        ledger.setMicroBatch(-1); // the update belongs to the whole step
        r.gradNorm = optimizerStep();
    } catch (...) {
        ledger.setMicroBatch(-1);
        abandonStep();
        throw;
    }
    // TP ranks compute the same loss (the head is replicated): the mean runs over the DP group.
    // With a pipeline only the last stage has it: the pipeline group adds it to the others'
    // zeros (exactly: x + 0 = x).
    r.loss = sharding_->dataGroup().sumScalar(lossSum) /
             (static_cast<double>(sharding_->dataRanks()) * micros);
    if (pipe_) r.loss = pipe_->sumScalar(stage_ + 1 == stages_ ? r.loss : 0.0);
    r.stepNs = monotonicNs() - begin;
    emitSpan(EventKind::StepEnd, kNoUnit, Phase::None);
    ++step_;
    return r;
}

namespace {
// A message buffer MPI could not withdraw may still be read or written: it outlives the process
// (the job is ending; the ledger keeps counting it, as it is still held).
void keepForever(Buffer buffer) {
    static auto* const kept = new std::vector<Buffer>();
    kept->push_back(std::move(buffer));
}
} // namespace

void Trainer::receive(Buffer& into, int peer, std::int32_t unit) {
    try {
        pipe_->recv(into.data(), into.bytes() / sizeof(float), comm::DType::F32, peer, unit);
    } catch (...) {
        if (pipe_->receiveAbandoned()) keepForever(std::move(into));
        throw;
    }
}

void Trainer::abandonStep() {
    if (pipe_) { // before the buffers they read are freed
        const std::vector<std::uint64_t> stuck = pipe_->cancelSends();
        for (auto& [ticket, buffer] : sending_)
            if (std::find(stuck.begin(), stuck.end(), ticket) != stuck.end())
                keepForever(std::move(buffer));
    }
    sending_.clear();
    model_.discardActivations();
    for (auto& m : micro_)
        m->discardActivations();
    sharding_->discardTransients();
}

// ---- pipeline ---------------------------------------------------------------------------------

void Trainer::reapSends(bool wait) {
    std::erase_if(sending_, [&](const auto& s) {
        if (wait) {
            pipe_->waitSend(s.first);
            return true;
        }
        return pipe_->sendDone(s.first);
    });
}

// The message leaves from a comm_buffer copy: the activation or gradient it carries is freed at
// once (its category's bytes do not depend on when the neighbour copies it), the copy when the
// neighbour has it.
void Trainer::post(Buffer tensor, int peer, std::int32_t unit) {
    Buffer message = device_.allocate(tensor.bytes(), {Category::CommBuffer, Tier::Device, unit});
    device_.ops().copy(message.data(), tensor.data(), tensor.bytes());
    tensor.reset();
    const std::uint64_t ticket =
        pipe_->send(message.data(), message.bytes() / sizeof(float), comm::DType::F32, peer, unit);
    sending_.emplace_back(ticket, std::move(message));
}

bool Trainer::holds(std::int32_t unit) const {
    return std::any_of(chunks_.begin(), chunks_.end(), [unit](const plan::StageUnits& c) {
        return unit >= c.first && unit < c.end;
    });
}

double Trainer::pipelineMicroSteps(StepResult& r) {
    const int micros = config_.gradAccumSteps, chunks = static_cast<int>(chunks_.size());
    const std::vector<plan::PipeOp> ops = plan::pipeOrder(
        config_.pipeSchedule, {stages_, micros, chunks})[static_cast<std::size_t>(stage_)];
    const int virtualStages = stages_ * chunks;
    // Chunk c of this rank is virtual stage c·P + s: its input comes from the previous rank (the
    // last rank's chunk c − 1 for rank 0), its output goes to the next (rank 0's chunk c + 1 for
    // the last rank).
    const int previous = (stage_ + stages_ - 1) % stages_, next = (stage_ + 1) % stages_;
    const bool split = plan::traits(config_.pipeSchedule).splitBackward;
    const std::uint64_t floats = model_.boundaryFloats();
    // A message's unit is its boundary's: the unit whose output crosses it (the earlier chunk's
    // last), on both sides and in both directions, so a send and its receive name the same.
    double lossSum = 0.0;
    bool statesTaken = false;
    // Note: MPI moves a large message (a rendezvous) only while its sender calls into MPI, and
    // the sender computes on after posting it: its pending sends are tested before every unit,
    // not only between ops, or the neighbour would wait for a whole op's compute beyond the
    // schedule's bubble.
    for (const plan::PipeOp& op : ops) {
        reapSends(false);
        device_.ledger().setMicroBatch(op.microBatch);
        model::GptModel& model = *micro_[static_cast<std::size_t>(op.microBatch)];
        const strategy::MicroStep micro{op.microBatch, micros};
        const plan::StageUnits& units = chunks_[static_cast<std::size_t>(op.chunk)];
        const int k = op.chunk * stages_ + stage_;
        const bool first = k == 0, last = k + 1 == virtualStages;
        // Tokens on the first virtual stage (embedding), targets on the last (loss): both read
        // the same micro-batch of the data source; the stages between need neither.
        model::Batch batch;
        if ((first || last) && op.kind == plan::PipeOpKind::Forward)
            batch = data_.batchFor(baseData_ + step_ * micros + op.microBatch,
                                   sharding_->dataRank(), sharding_->dataRanks());
        if (op.kind == plan::PipeOpKind::Forward) {
            if (!first) {
                // A new micro-batch: nothing of its previous step may survive (a later chunk
                // keeps the earlier chunks' activations of the same micro-batch).
                if (op.chunk == 0) model.discardActivations();
                Buffer in = device_.allocateArray<float>(
                    floats, {Category::Activation, Tier::Device, units.first - 1});
                receive(in, previous, units.first - 1);
                model.setInput(units.first, std::move(in));
            }
            for (std::int32_t u = units.first; u < units.end; ++u)
                forwardUnit(model, u, batch);
            if (last)
                lossSum += model.loss();
            else
                post(model.takeOutput(units.end - 1), next, units.end - 1);
            // Every chunk's states coexist once the last chunk has run its first forward (the
            // earlier chunks' gathered parameters wait for their backwards).
            if (!statesTaken && op.chunk + 1 == chunks) {
                r.modelStates = modelStatesNow(device_.ledger());
                statesTaken = true;
            }
        } else if (op.kind == plan::PipeOpKind::Backward) {
            if (!last) {
                Buffer grad = device_.allocateArray<float>(
                    floats, {Category::Workspace, Tier::Device, units.end - 1});
                receive(grad, next, units.end - 1);
                model.setOutputGrad(std::move(grad));
            }
            for (std::int32_t u = units.end - 1; u >= units.first; --u)
                if (split)
                    inputGradUnit(model, u);
                else
                    backwardUnit(model, u, micro);
            if (!first) post(model.takeInputGrad(), previous, units.first - 1);
            // The micro-batch's backward is done on this rank with its first chunk's.
            if (!split && op.chunk == 0) sharding_->endBackward(micro);
        } else { // W: nobody waits for it, it fills what would be the bubble
            for (std::int32_t u = units.end - 1; u >= units.first; --u)
                weightGradUnit(model, u, micro);
            if (op.chunk == 0) sharding_->endBackward(micro);
        }
    }
    reapSends(true);
    return lossSum;
}

void Trainer::markSpan(EventKind kind, Phase phase, std::uint64_t bytes) const {
    Event e;
    e.kind = kind;
    e.phase = phase;
    e.bytes = bytes;
    device_.ledger().emit(e);
}

void Trainer::continueFrom(std::int64_t step, std::int64_t dataPosition) {
    baseStep_ = step - step_;
    baseData_ = dataPosition - step_ * config_.gradAccumSteps;
}

std::vector<std::vector<float>> Trainer::fullWeights() {
    return sharding_->gatherWeights();
}

std::vector<float> Trainer::weights(std::int32_t unit) {
    auto all = fullWeights();
    if (all.empty()) return {};
    return std::move(all.at(static_cast<std::size_t>(unit)));
}

std::uint64_t fnv1a(const std::vector<std::vector<float>>& weights) {
    std::uint64_t h = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis
    for (const auto& unit : weights) {
        for (float w : unit) {
            unsigned char bytes[sizeof(float)];
            std::memcpy(bytes, &w, sizeof(float));
            for (unsigned char c : bytes)
                h = (h ^ c) * 0x100000001b3ull; // FNV prime
        }
    }
    return h;
}

std::uint64_t Trainer::paramDigest() {
    const auto all = fullWeights();
    return all.empty() ? 0 : fnv1a(all);
}

std::string digestHex(std::uint64_t digest) {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
    return text;
}

} // namespace shardscope::train
