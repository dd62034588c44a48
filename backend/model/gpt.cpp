#include "model/gpt.h"

#include "core/error.h"
#include "device/ops.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

namespace shardscope::model {

using device::Buffer;

namespace {

// Ids come from the host; the device kernels cannot throw, so they are checked here, once.
void checkIds(const std::vector<std::int32_t>& ids, std::int64_t vocab, const char* what) {
    for (std::int32_t id : ids)
        if (id < 0 || id >= vocab)
            throwInvalid(std::string(what) + " id " + std::to_string(id) +
                         " is outside the vocabulary (" + std::to_string(vocab) + ")");
}

// The LayerNorm parameters of a unit kind, d floats each: the parameter gradients a split
// backward's B computes (GptModel::Deferred::normGrads, in this order).
std::span<const char* const> normGradSlots(plan::UnitKind kind) {
    static constexpr const char* kBlock[] = {"ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias"};
    static constexpr const char* kHead[] = {"ln_f.weight", "ln_f.bias"};
    switch (kind) {
    case plan::UnitKind::Block:
        return kBlock;
    case plan::UnitKind::Head:
        return kHead;
    case plan::UnitKind::Embedding:
        break;
    }
    return {};
}

} // namespace

void GptModel::BlockActs::reset() {
    for (Buffer* b : {&ln1Stats, &ln1Out, &qkv, &attnProbs, &attnOut, &resid1, &ln2Stats, &ln2Out,
                      &fcPre, &geluOut})
        b->reset();
}

GptModel::GptModel(ModelConfig config, device::Device& device)
    : config_(config), device_(device), ops_(device.ops()), units_(plan::unitLayouts(config.shape)),
      tokens_(config.microBatch * config.shape.seqLen), d_(config.shape.dModel) {
    plan::validate(config_.shape);
    if (config_.microBatch < 1) throwInvalid("micro-batch must be at least 1");
    outs_.resize(units_.size());
    blocks_.resize(units_.size());
    deferred_.resize(units_.size());
}

Buffer GptModel::activation(std::uint64_t floats, std::int32_t unit) {
    return device_.allocateArray<float>(floats, {Category::Activation, Tier::Device, unit});
}

Buffer GptModel::workspace(std::uint64_t floats, std::int32_t unit, bool zeroed) {
    return device_.allocateArray<float>(floats, {Category::Workspace, Tier::Device, unit}, zeroed);
}

const float* GptModel::slot(const float* params, std::int32_t unit, const char* name) const {
    return params + units_[static_cast<std::size_t>(unit)].slot(name).offset;
}

float* GptModel::slot(float* grads, std::int32_t unit, const char* name) const {
    return grads + units_[static_cast<std::size_t>(unit)].slot(name).offset;
}

float* GptModel::normGrad(float* grads, std::int32_t unit, const char* name) {
    if (!splitting_) return slot(grads, unit, name);
    const auto names = normGradSlots(units_[static_cast<std::size_t>(unit)].kind());
    for (std::size_t i = 0; i < names.size(); ++i)
        if (std::strcmp(names[i], name) == 0)
            return splitting_->normGrads.ptr<float>() + i * static_cast<std::uint64_t>(d_);
    throw Error(ErrorKind::Internal, std::string("normGrad: ") + name + " is not a LayerNorm's");
}

// Note: paramsBf16_ lives for one forward/backward call (the strategy may free or move the
// unit's parameters after it); every path out of the call clears it.
class GptModel::Bf16Params {
public:
    Bf16Params(const Bf16*& slot, const Bf16* params) : slot_(slot) { slot_ = params; }
    ~Bf16Params() { slot_ = nullptr; }
    Bf16Params(const Bf16Params&) = delete;
    Bf16Params& operator=(const Bf16Params&) = delete;

private:
    const Bf16*& slot_;
};

template <class Produce>
Buffer GptModel::gemmInput(std::uint64_t n, std::int32_t unit, Produce produce) {
    if (!bf16Gemm_) {
        Buffer out = activation(n, unit);
        produce(out.ptr<float>());
        return out;
    }
    Buffer fp32 = workspace(n, unit, false);
    produce(fp32.ptr<float>());
    Buffer out = device_.allocateArray<Bf16>(n, {Category::Activation, Tier::Device, unit});
    ops_.toBf16(fp32.ptr<const float>(), out.ptr<Bf16>(), n);
    return out;
}

void GptModel::linear(std::int32_t unit, const float* p, const Buffer& x, const char* w,
                      const char* bias, float* y, std::int64_t rows, std::int64_t in,
                      std::int64_t out, bool accumulate) {
    const float* b = bias ? slot(p, unit, bias) : nullptr;
    if (!bf16Gemm_)
        return ops_.linearForward(x.ptr<const float>(), slot(p, unit, w), b, y, rows, in, out,
                                  accumulate);
    const auto offset = units_[static_cast<std::size_t>(unit)].slot(w).offset;
    ops_.linearForwardBf16(x.ptr<const Bf16>(), paramsBf16_ + offset, b, y, rows, in, out,
                           accumulate);
}

void GptModel::linearGrad(std::int32_t unit, const float* p, float* g, const float* dy, Buffer& x,
                          const char* w, const char* bias, float* dx, std::int64_t rows,
                          std::int64_t in, std::int64_t out, Buffer* dyOwner) {
    const auto offset = units_[static_cast<std::size_t>(unit)].slot(w).offset;
    const auto n = static_cast<std::uint64_t>(rows * out);
    // B of a split backward: dx now, dW and dbias by W from what is kept here.
    float* dw = splitting_ ? nullptr : slot(g, unit, w);
    float* db = splitting_ || !bias ? nullptr : slot(g, unit, bias);
    if (!bf16Gemm_) {
        ops_.linearBackward(dy, x.ptr<const float>(), slot(p, unit, w), dx, dw, db, rows, in, out);
    } else {
        const Buffer dyBf16 =
            device_.allocateArray<Bf16>(n, {Category::Workspace, Tier::Device, unit});
        ops_.toBf16(dy, dyBf16.ptr<Bf16>(), n);
        ops_.linearBackwardBf16(dy, dyBf16.ptr<const Bf16>(), x.ptr<const Bf16>(),
                                paramsBf16_ + offset, dx, dw, db, rows, in, out);
    }
    if (!splitting_) return;
    DeferredLinear kept{std::move(x), {}, w, bias, rows, in, out};
    if (dyOwner) {
        kept.dy = std::move(*dyOwner);
    } else { // the caller goes on writing into dy (the residual stream): a copy
        kept.dy = workspace(n, unit, false);
        ops_.copy(kept.dy.data(), dy, n * sizeof(float));
    }
    splitting_->linears.push_back(std::move(kept));
}

void GptModel::weightGrad(std::int32_t unit, float* g, const DeferredLinear& l) {
    float* dw = slot(g, unit, l.weight);
    float* db = l.bias ? slot(g, unit, l.bias) : nullptr;
    const float* dy = l.dy.ptr<const float>();
    if (!bf16Gemm_)
        return ops_.linearBackward(dy, l.x.ptr<const float>(), nullptr, nullptr, dw, db, l.rows,
                                   l.in, l.out);
    // The bf16 copy of dy B made for its dx GEMM, made again: the same rounding, the same bits.
    const auto n = static_cast<std::uint64_t>(l.rows * l.out);
    const Buffer dyBf16 = device_.allocateArray<Bf16>(n, {Category::Workspace, Tier::Device, unit});
    ops_.toBf16(dy, dyBf16.ptr<Bf16>(), n);
    ops_.linearBackwardBf16(dy, dyBf16.ptr<const Bf16>(), l.x.ptr<const Bf16>(), nullptr, nullptr,
                            dw, db, l.rows, l.in, l.out);
}

void GptModel::forward(std::int32_t unit, const float* params, const Batch& batch,
                       const Bf16* paramsBf16) {
    if (unit < 0 || unit >= unitCount()) throw Error(ErrorKind::Internal, "forward: bad unit");
    const Bf16Params bf16(paramsBf16_, paramsBf16);
    switch (units_[static_cast<std::size_t>(unit)].kind()) {
    case plan::UnitKind::Embedding:
        embeddingForward(params, batch);
        break;
    case plan::UnitKind::Block:
        blockForward(unit, params, blocks_[static_cast<std::size_t>(unit)], true);
        // Checkpointing: only the output survives the forward (it is the next unit's input).
        if (config_.checkpointing) blocks_[static_cast<std::size_t>(unit)].reset();
        break;
    case plan::UnitKind::Head:
        headForward(params, batch);
        break;
    }
}

void GptModel::backward(std::int32_t unit, const float* params, float* grads,
                        const Bf16* paramsBf16) {
    if (unit < 0 || unit >= unitCount()) throw Error(ErrorKind::Internal, "backward: bad unit");
    const Bf16Params bf16(paramsBf16_, paramsBf16);
    switch (units_[static_cast<std::size_t>(unit)].kind()) {
    case plan::UnitKind::Embedding:
        embeddingBackward(grads);
        break;
    case plan::UnitKind::Block:
        blockBackward(unit, params, grads);
        break;
    case plan::UnitKind::Head:
        headBackward(params, grads);
        break;
    }
}

void GptModel::backwardInput(std::int32_t unit, const float* params, const Bf16* paramsBf16) {
    if (unit < 0 || unit >= unitCount())
        throw Error(ErrorKind::Internal, "backwardInput: bad unit");
    Deferred& kept = deferred_[static_cast<std::size_t>(unit)];
    if (kept.pending)
        throw Error(ErrorKind::Internal, "backwardInput: the unit's weight gradients are pending");
    const Bf16Params bf16(paramsBf16_, paramsBf16);
    const plan::UnitKind kind = units_[static_cast<std::size_t>(unit)].kind();
    kept = Deferred{};
    kept.pending = true;
    if (const auto norms = normGradSlots(kind); !norms.empty())
        kept.normGrads = workspace(norms.size() * static_cast<std::uint64_t>(d_), unit, true);
    // Note: splitting_ routes linearGrad and the LayerNorms' gradients into `kept` for this call.
    splitting_ = &kept;
    struct Reset {
        Deferred*& at;
        ~Reset() { at = nullptr; }
    } const reset{splitting_};
    switch (kind) {
    case plan::UnitKind::Embedding: // no input gradient: all of it is W's
        kept.tokenIds = std::move(tokenIds_);
        kept.embeddingGrad = std::move(gradStream_);
        break;
    case plan::UnitKind::Block:
        blockBackward(unit, params, nullptr);
        break;
    case plan::UnitKind::Head:
        headBackward(params, nullptr);
        break;
    }
}

void GptModel::backwardWeights(std::int32_t unit, float* grads) {
    if (unit < 0 || unit >= unitCount())
        throw Error(ErrorKind::Internal, "backwardWeights: bad unit");
    Deferred& kept = deferred_[static_cast<std::size_t>(unit)];
    if (!kept.pending)
        throw Error(ErrorKind::Internal, "backwardWeights: no input gradient of the unit before");
    const plan::UnitLayout& layout = units_[static_cast<std::size_t>(unit)];
    if (layout.kind() == plan::UnitKind::Embedding) {
        ops_.embeddingBackward(kept.tokenIds.ptr<std::int32_t>(), kept.embeddingGrad.ptr<float>(),
                               slot(grads, 0, "wte"), slot(grads, 0, "wpe"), config_.microBatch,
                               config_.shape.seqLen, d_, config_.shape.vocab);
    } else {
        const auto norms = normGradSlots(layout.kind());
        for (std::size_t i = 0; i < norms.size(); ++i) {
            float* into = slot(grads, unit, norms[i]);
            ops_.add(into, kept.normGrads.ptr<const float>() + i * static_cast<std::uint64_t>(d_),
                     into, d_);
        }
        // In B's order: each layer's dW and dbias as the fused backward computes them.
        for (const DeferredLinear& l : kept.linears)
            weightGrad(unit, grads, l);
    }
    kept = Deferred{};
}

void GptModel::discardActivations() {
    for (Deferred& d : deferred_)
        d = Deferred{};
    tokenIds_.reset();
    for (Buffer& b : outs_)
        b.reset();
    for (BlockActs& a : blocks_)
        a.reset();
    head_ = HeadActs{};
    gradStream_.reset();
}

// ---- stage boundaries (pipeline parallelism) ---------------------------------------------------

void GptModel::setInput(std::int32_t unit, device::Buffer input) {
    if (unit < 1 || unit >= unitCount() || input.bytes() != boundaryFloats() * sizeof(float))
        throw Error(ErrorKind::Internal, "setInput: not a stage's input");
    outs_[static_cast<std::size_t>(unit - 1)] = std::move(input);
}

device::Buffer GptModel::takeOutput(std::int32_t unit) {
    if (unit < 0 || unit + 1 >= unitCount() || outs_[static_cast<std::size_t>(unit)].empty())
        throw Error(ErrorKind::Internal, "takeOutput: no output of that unit");
    return std::move(outs_[static_cast<std::size_t>(unit)]);
}

void GptModel::setOutputGrad(device::Buffer grad) {
    if (grad.bytes() != boundaryFloats() * sizeof(float))
        throw Error(ErrorKind::Internal, "setOutputGrad: not a stage's output gradient");
    gradStream_ = std::move(grad);
}

device::Buffer GptModel::takeInputGrad() {
    if (gradStream_.empty()) throw Error(ErrorKind::Internal, "takeInputGrad: no gradient");
    return std::move(gradStream_);
}

// ---- embedding -------------------------------------------------------------------------------

void GptModel::embeddingForward(const float* params, const Batch& batch) {
    if (batch.sequences != config_.microBatch || batch.seqLen != config_.shape.seqLen ||
        static_cast<std::int64_t>(batch.inputs.size()) != tokens_)
        throwInvalid("batch shape does not match the model (micro-batch × context)");
    discardActivations(); // a new step: nothing of the previous one may survive
    const auto tokens = static_cast<std::uint64_t>(tokens_);
    tokenIds_ =
        device_.allocateArray<std::int32_t>(tokens, {Category::Activation, Tier::Device, 0});
    checkIds(batch.inputs, config_.shape.vocab, "token");
    ops_.upload(tokenIds_.data(), batch.inputs.data(), tokens * sizeof(std::int32_t));
    outs_[0] = activation(tokens * static_cast<std::uint64_t>(d_), 0);
    ops_.embeddingForward(tokenIds_.ptr<std::int32_t>(), slot(params, 0, "wte"),
                          slot(params, 0, "wpe"), outs_[0].ptr<float>(), config_.microBatch,
                          config_.shape.seqLen, d_, config_.shape.vocab);
}

void GptModel::embeddingBackward(float* grads) {
    ops_.embeddingBackward(tokenIds_.ptr<std::int32_t>(), gradStream_.ptr<float>(),
                           slot(grads, 0, "wte"), slot(grads, 0, "wpe"), config_.microBatch,
                           config_.shape.seqLen, d_, config_.shape.vocab);
    tokenIds_.reset();
    gradStream_.reset();
}

// ---- transformer block -----------------------------------------------------------------------

void GptModel::setTensorGroup(comm::Communicator* group) {
    if (config_.shape.tp > 1 && (!group || group->size() != config_.shape.tp))
        throw Error(ErrorKind::Internal, "tensor parallel " + std::to_string(config_.shape.tp) +
                                             " needs a TP group of that many ranks");
    tensor_ = group;
    tpRank_ = group ? group->rank() : 0;
}

void GptModel::tpSum(Buffer& b, std::uint64_t floats, std::int32_t unit) {
    if (config_.shape.tp <= 1) return;
    if (!tensor_) throw Error(ErrorKind::Internal, "tensor parallel without a TP group");
    tensor_->tpAllReduce(b.data(), floats, comm::DType::F32, unit);
}

void GptModel::blockForward(std::int32_t unit, const float* p, BlockActs& a, bool keepOutput) {
    const std::int64_t T = tokens_, d = d_, tp = config_.shape.tp;
    const std::int64_t dl = d / tp, fl = 4 * d / tp; // this TP rank's attention and MLP widths
    const auto td = static_cast<std::uint64_t>(T * d);
    const auto tdl = static_cast<std::uint64_t>(T * dl), tfl = static_cast<std::uint64_t>(T * fl);
    const auto t = static_cast<std::uint64_t>(T);
    const std::int64_t heads = config_.shape.heads, seq = config_.shape.seqLen;
    const float* x = outs_[static_cast<std::size_t>(unit - 1)].ptr<float>();
    // Row-parallel outputs: TP rank 0 starts from the residual and adds the bias, the others
    // contribute their partial product alone, so the TP sum is residual + x·W + b.
    const bool addsResidual = tpRank_ == 0;
    auto rowParallel = [&](const Buffer& in, const char* w, const char* bias, Buffer& out,
                           std::int64_t inWidth, const float* residual) {
        if (addsResidual) {
            ops_.copy(out.data(), residual, td * sizeof(float));
            linear(unit, p, in, w, bias, out.ptr<float>(), T, inWidth, d, true);
        } else {
            linear(unit, p, in, w, nullptr, out.ptr<float>(), T, inWidth, d, false);
        }
        tpSum(out, td, unit);
    };

    a.ln1Stats = activation(2 * t, unit);
    a.ln1Out = gemmInput(td, unit, [&](float* out) {
        ops_.layerNormForward(x, slot(p, unit, "ln1.weight"), slot(p, unit, "ln1.bias"), out,
                              a.ln1Stats.ptr<float>(), a.ln1Stats.ptr<float>() + T, T, d);
    });
    a.qkv = activation(3 * tdl, unit);
    linear(unit, p, a.ln1Out, "attn.qkv.weight", "attn.qkv.bias", a.qkv.ptr<float>(), T, d, 3 * dl,
           false);
    a.attnProbs =
        activation(static_cast<std::uint64_t>(config_.microBatch * (heads / tp) * seq * seq), unit);
    a.attnOut = gemmInput(tdl, unit, [&](float* out) {
        ops_.attentionForward(a.qkv.ptr<float>(), a.attnProbs.ptr<float>(), out, config_.microBatch,
                              seq, heads / tp, d / heads);
    });
    // Residual: resid1 = x + attnOut·Wproj + b.
    a.resid1 = activation(td, unit);
    rowParallel(a.attnOut, "attn.proj.weight", "attn.proj.bias", a.resid1, dl, x);
    a.ln2Stats = activation(2 * t, unit);
    a.ln2Out = gemmInput(td, unit, [&](float* out) {
        ops_.layerNormForward(a.resid1.ptr<float>(), slot(p, unit, "ln2.weight"),
                              slot(p, unit, "ln2.bias"), out, a.ln2Stats.ptr<float>(),
                              a.ln2Stats.ptr<float>() + T, T, d);
    });
    a.fcPre = activation(tfl, unit);
    linear(unit, p, a.ln2Out, "mlp.fc.weight", "mlp.fc.bias", a.fcPre.ptr<float>(), T, d, fl,
           false);
    a.geluOut = gemmInput(tfl, unit,
                          [&](float* out) { ops_.geluForward(a.fcPre.ptr<float>(), out, T * fl); });
    // The recompute in backward does not need the block output (nobody reads it there).
    if (!keepOutput) return;
    Buffer& out = outs_[static_cast<std::size_t>(unit)];
    out = activation(td, unit);
    rowParallel(a.geluOut, "mlp.proj.weight", "mlp.proj.bias", out, fl, a.resid1.ptr<float>());
}

void GptModel::blockBackward(std::int32_t unit, const float* p, float* g) {
    BlockActs& a = blocks_[static_cast<std::size_t>(unit)];
    if (config_.checkpointing) {
        Event span;
        span.kind = EventKind::ComputeBegin;
        span.unit = unit;
        span.phase = Phase::Recompute;
        device_.ledger().emit(span);
        blockForward(unit, p, a, false);
        ops_.synchronize(); // the span is device time (train/trainer.cpp's emitSpan)
        span.kind = EventKind::ComputeEnd;
        device_.ledger().emit(span);
    }
    const std::int64_t T = tokens_, d = d_, tp = config_.shape.tp;
    const std::int64_t dl = d / tp, fl = 4 * d / tp;
    const auto td = static_cast<std::uint64_t>(T * d);
    const auto tdl = static_cast<std::uint64_t>(T * dl), tfl = static_cast<std::uint64_t>(T * fl);
    const std::int64_t heads = config_.shape.heads, seq = config_.shape.seqLen;
    // gradStream_ holds ∂L/∂out on entry (the same on every TP rank); the residual paths add
    // into it in place, so on exit it holds ∂L/∂x for the previous unit.
    float* dStream = gradStream_.ptr<float>();

    Buffer dGelu = workspace(tfl, unit, true);
    linearGrad(unit, p, g, dStream, a.geluOut, "mlp.proj.weight", "mlp.proj.bias",
               dGelu.ptr<float>(), T, fl, d);
    a.geluOut.reset();
    Buffer dFcPre = workspace(tfl, unit, false);
    ops_.geluBackward(dGelu.ptr<float>(), a.fcPre.ptr<float>(), dFcPre.ptr<float>(), T * fl);
    a.fcPre.reset();
    dGelu.reset();
    Buffer dLn2 = workspace(td, unit, true);
    linearGrad(unit, p, g, dFcPre.ptr<float>(), a.ln2Out, "mlp.fc.weight", "mlp.fc.bias",
               dLn2.ptr<float>(), T, d, fl, &dFcPre);
    a.ln2Out.reset();
    dFcPre.reset();
    tpSum(dLn2, td, unit); // column-parallel input gradient: partial over this rank's features
    ops_.layerNormBackward(dLn2.ptr<float>(), a.resid1.ptr<float>(), a.ln2Stats.ptr<float>(),
                           a.ln2Stats.ptr<float>() + T, slot(p, unit, "ln2.weight"), dStream,
                           normGrad(g, unit, "ln2.weight"), normGrad(g, unit, "ln2.bias"), T, d);
    a.resid1.reset();
    a.ln2Stats.reset();
    dLn2.reset();

    Buffer dAttn = workspace(tdl, unit, true);
    linearGrad(unit, p, g, dStream, a.attnOut, "attn.proj.weight", "attn.proj.bias",
               dAttn.ptr<float>(), T, dl, d);
    a.attnOut.reset();
    Buffer dQkv = workspace(3 * tdl, unit, false);
    Buffer scratch = workspace(static_cast<std::uint64_t>(device::Ops::attentionScratchFloats(seq)),
                               unit, false);
    ops_.attentionBackward(dAttn.ptr<float>(), a.qkv.ptr<float>(), a.attnProbs.ptr<float>(),
                           dQkv.ptr<float>(), scratch.ptr<float>(), config_.microBatch, seq,
                           heads / tp, d / heads);
    a.attnProbs.reset();
    a.qkv.reset();
    scratch.reset();
    dAttn.reset();
    Buffer dLn1 = workspace(td, unit, true);
    linearGrad(unit, p, g, dQkv.ptr<float>(), a.ln1Out, "attn.qkv.weight", "attn.qkv.bias",
               dLn1.ptr<float>(), T, d, 3 * dl, &dQkv);
    a.ln1Out.reset();
    dQkv.reset();
    tpSum(dLn1, td, unit);
    Buffer& input = outs_[static_cast<std::size_t>(unit - 1)];
    ops_.layerNormBackward(dLn1.ptr<float>(), input.ptr<float>(), a.ln1Stats.ptr<float>(),
                           a.ln1Stats.ptr<float>() + T, slot(p, unit, "ln1.weight"), dStream,
                           normGrad(g, unit, "ln1.weight"), normGrad(g, unit, "ln1.bias"), T, d);
    a.ln1Stats.reset();
    dLn1.reset();
    input.reset(); // the previous unit's output: this was its last use
}

// ---- head ------------------------------------------------------------------------------------

void GptModel::headForward(const float* p, const Batch& batch) {
    const std::int32_t unit = unitCount() - 1;
    const std::int64_t T = tokens_, d = d_, vocab = config_.shape.vocab;
    const auto t = static_cast<std::uint64_t>(T);
    const float* x = outs_[static_cast<std::size_t>(unit - 1)].ptr<float>();
    head_.lnfStats = activation(2 * t, unit);
    head_.lnfOut = gemmInput(t * static_cast<std::uint64_t>(d), unit, [&](float* out) {
        ops_.layerNormForward(x, slot(p, unit, "ln_f.weight"), slot(p, unit, "ln_f.bias"), out,
                              head_.lnfStats.ptr<float>(), head_.lnfStats.ptr<float>() + T, T, d);
    });
    head_.probs = activation(t * static_cast<std::uint64_t>(vocab), unit);
    linear(unit, p, head_.lnfOut, "lm_head.weight", nullptr, head_.probs.ptr<float>(), T, d, vocab,
           false);
    head_.targets =
        device_.allocateArray<std::int32_t>(t, {Category::Activation, Tier::Device, unit});
    checkIds(batch.targets, vocab, "target");
    ops_.upload(head_.targets.data(), batch.targets.data(), t * sizeof(std::int32_t));
    // Row terms and the mean (device::Ops: the same scratch on every backend).
    const Buffer lossScratch = device_.allocateArray<double>(
        static_cast<std::uint64_t>(device::Ops::crossEntropyScratchDoubles(T)),
        {Category::Workspace, Tier::Device, unit});
    loss_ = ops_.crossEntropyForward(head_.probs.ptr<float>(), head_.targets.ptr<std::int32_t>(),
                                     lossScratch.ptr<double>(), T, vocab);
}

void GptModel::headBackward(const float* p, float* g) {
    const std::int32_t unit = unitCount() - 1;
    const std::int64_t T = tokens_, d = d_, vocab = config_.shape.vocab;
    const auto td = static_cast<std::uint64_t>(T * d);
    // The probabilities become ∂L/∂logits in place: no second [T × vocab] buffer.
    float* dLogits = head_.probs.ptr<float>();
    ops_.crossEntropyBackward(dLogits, head_.targets.ptr<std::int32_t>(), dLogits, T, vocab,
                              1.0f / static_cast<float>(T));
    head_.targets.reset();
    Buffer dLnf = workspace(td, unit, true);
    linearGrad(unit, p, g, dLogits, head_.lnfOut, "lm_head.weight", nullptr, dLnf.ptr<float>(), T,
               d, vocab, &head_.probs);
    head_.probs.reset();
    head_.lnfOut.reset();
    gradStream_ = workspace(td, unit, true);
    Buffer& input = outs_[static_cast<std::size_t>(unit - 1)];
    ops_.layerNormBackward(dLnf.ptr<float>(), input.ptr<float>(), head_.lnfStats.ptr<float>(),
                           head_.lnfStats.ptr<float>() + T, slot(p, unit, "ln_f.weight"),
                           gradStream_.ptr<float>(), normGrad(g, unit, "ln_f.weight"),
                           normGrad(g, unit, "ln_f.bias"), T, d);
    head_.lnfStats.reset();
    dLnf.reset();
    input.reset();
}

} // namespace shardscope::model
