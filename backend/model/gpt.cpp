#include "model/gpt.h"

#include "core/error.h"
#include "device/ops.h"

#include <algorithm>
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

void GptModel::forward(std::int32_t unit, const float* params, const Batch& batch) {
    if (unit < 0 || unit >= unitCount()) throw Error(ErrorKind::Internal, "forward: bad unit");
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

void GptModel::backward(std::int32_t unit, const float* params, float* grads) {
    if (unit < 0 || unit >= unitCount()) throw Error(ErrorKind::Internal, "backward: bad unit");
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

void GptModel::discardActivations() {
    tokenIds_.reset();
    for (Buffer& b : outs_)
        b.reset();
    for (BlockActs& a : blocks_)
        a.reset();
    head_ = HeadActs{};
    gradStream_.reset();
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
    auto rowParallel = [&](const float* in, const char* w, const char* bias, Buffer& out,
                           std::int64_t inWidth, const float* residual) {
        if (addsResidual) {
            ops_.copy(out.data(), residual, td * sizeof(float));
            ops_.linearForward(in, slot(p, unit, w), slot(p, unit, bias), out.ptr<float>(), T,
                               inWidth, d, true);
        } else {
            ops_.linearForward(in, slot(p, unit, w), nullptr, out.ptr<float>(), T, inWidth, d,
                               false);
        }
        tpSum(out, td, unit);
    };

    a.ln1Stats = activation(2 * t, unit);
    a.ln1Out = activation(td, unit);
    ops_.layerNormForward(x, slot(p, unit, "ln1.weight"), slot(p, unit, "ln1.bias"),
                          a.ln1Out.ptr<float>(), a.ln1Stats.ptr<float>(),
                          a.ln1Stats.ptr<float>() + T, T, d);
    a.qkv = activation(3 * tdl, unit);
    ops_.linearForward(a.ln1Out.ptr<float>(), slot(p, unit, "attn.qkv.weight"),
                       slot(p, unit, "attn.qkv.bias"), a.qkv.ptr<float>(), T, d, 3 * dl, false);
    a.attnProbs =
        activation(static_cast<std::uint64_t>(config_.microBatch * (heads / tp) * seq * seq), unit);
    a.attnOut = activation(tdl, unit);
    ops_.attentionForward(a.qkv.ptr<float>(), a.attnProbs.ptr<float>(), a.attnOut.ptr<float>(),
                          config_.microBatch, seq, heads / tp, d / heads);
    // Residual: resid1 = x + attnOut·Wproj + b.
    a.resid1 = activation(td, unit);
    rowParallel(a.attnOut.ptr<float>(), "attn.proj.weight", "attn.proj.bias", a.resid1, dl, x);
    a.ln2Stats = activation(2 * t, unit);
    a.ln2Out = activation(td, unit);
    ops_.layerNormForward(a.resid1.ptr<float>(), slot(p, unit, "ln2.weight"),
                          slot(p, unit, "ln2.bias"), a.ln2Out.ptr<float>(), a.ln2Stats.ptr<float>(),
                          a.ln2Stats.ptr<float>() + T, T, d);
    a.fcPre = activation(tfl, unit);
    ops_.linearForward(a.ln2Out.ptr<float>(), slot(p, unit, "mlp.fc.weight"),
                       slot(p, unit, "mlp.fc.bias"), a.fcPre.ptr<float>(), T, d, fl, false);
    a.geluOut = activation(tfl, unit);
    ops_.geluForward(a.fcPre.ptr<float>(), a.geluOut.ptr<float>(), T * fl);
    // The recompute in backward does not need the block output (nobody reads it there).
    if (!keepOutput) return;
    Buffer& out = outs_[static_cast<std::size_t>(unit)];
    out = activation(td, unit);
    rowParallel(a.geluOut.ptr<float>(), "mlp.proj.weight", "mlp.proj.bias", out, fl,
                a.resid1.ptr<float>());
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
    ops_.linearBackward(dStream, a.geluOut.ptr<float>(), slot(p, unit, "mlp.proj.weight"),
                        dGelu.ptr<float>(), slot(g, unit, "mlp.proj.weight"),
                        slot(g, unit, "mlp.proj.bias"), T, fl, d);
    a.geluOut.reset();
    Buffer dFcPre = workspace(tfl, unit, false);
    ops_.geluBackward(dGelu.ptr<float>(), a.fcPre.ptr<float>(), dFcPre.ptr<float>(), T * fl);
    a.fcPre.reset();
    dGelu.reset();
    Buffer dLn2 = workspace(td, unit, true);
    ops_.linearBackward(dFcPre.ptr<float>(), a.ln2Out.ptr<float>(), slot(p, unit, "mlp.fc.weight"),
                        dLn2.ptr<float>(), slot(g, unit, "mlp.fc.weight"),
                        slot(g, unit, "mlp.fc.bias"), T, d, fl);
    a.ln2Out.reset();
    dFcPre.reset();
    tpSum(dLn2, td, unit); // column-parallel input gradient: partial over this rank's features
    ops_.layerNormBackward(dLn2.ptr<float>(), a.resid1.ptr<float>(), a.ln2Stats.ptr<float>(),
                           a.ln2Stats.ptr<float>() + T, slot(p, unit, "ln2.weight"), dStream,
                           slot(g, unit, "ln2.weight"), slot(g, unit, "ln2.bias"), T, d);
    a.resid1.reset();
    a.ln2Stats.reset();
    dLn2.reset();

    Buffer dAttn = workspace(tdl, unit, true);
    ops_.linearBackward(dStream, a.attnOut.ptr<float>(), slot(p, unit, "attn.proj.weight"),
                        dAttn.ptr<float>(), slot(g, unit, "attn.proj.weight"),
                        slot(g, unit, "attn.proj.bias"), T, dl, d);
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
    ops_.linearBackward(dQkv.ptr<float>(), a.ln1Out.ptr<float>(), slot(p, unit, "attn.qkv.weight"),
                        dLn1.ptr<float>(), slot(g, unit, "attn.qkv.weight"),
                        slot(g, unit, "attn.qkv.bias"), T, d, 3 * dl);
    a.ln1Out.reset();
    dQkv.reset();
    tpSum(dLn1, td, unit);
    Buffer& input = outs_[static_cast<std::size_t>(unit - 1)];
    ops_.layerNormBackward(dLn1.ptr<float>(), input.ptr<float>(), a.ln1Stats.ptr<float>(),
                           a.ln1Stats.ptr<float>() + T, slot(p, unit, "ln1.weight"), dStream,
                           slot(g, unit, "ln1.weight"), slot(g, unit, "ln1.bias"), T, d);
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
    head_.lnfOut = activation(t * static_cast<std::uint64_t>(d), unit);
    ops_.layerNormForward(x, slot(p, unit, "ln_f.weight"), slot(p, unit, "ln_f.bias"),
                          head_.lnfOut.ptr<float>(), head_.lnfStats.ptr<float>(),
                          head_.lnfStats.ptr<float>() + T, T, d);
    head_.probs = activation(t * static_cast<std::uint64_t>(vocab), unit);
    ops_.linearForward(head_.lnfOut.ptr<float>(), slot(p, unit, "lm_head.weight"), nullptr,
                       head_.probs.ptr<float>(), T, d, vocab, false);
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
    ops_.linearBackward(dLogits, head_.lnfOut.ptr<float>(), slot(p, unit, "lm_head.weight"),
                        dLnf.ptr<float>(), slot(g, unit, "lm_head.weight"), nullptr, T, d, vocab);
    head_.probs.reset();
    head_.lnfOut.reset();
    gradStream_ = workspace(td, unit, true);
    Buffer& input = outs_[static_cast<std::size_t>(unit - 1)];
    ops_.layerNormBackward(dLnf.ptr<float>(), input.ptr<float>(), head_.lnfStats.ptr<float>(),
                           head_.lnfStats.ptr<float>() + T, slot(p, unit, "ln_f.weight"),
                           gradStream_.ptr<float>(), slot(g, unit, "ln_f.weight"),
                           slot(g, unit, "ln_f.bias"), T, d);
    head_.lnfStats.reset();
    dLnf.reset();
    input.reset();
}

} // namespace shardscope::model
