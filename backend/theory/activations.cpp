#include "theory/activations.h"

#include "core/error.h"

#include <algorithm>

namespace shardscope::theory {

std::uint64_t totalBytes(const std::vector<ActivationTensor>& tensors) {
    std::uint64_t sum = 0;
    for (const ActivationTensor& t : tensors)
        sum += t.bytes;
    return sum;
}

ActivationBreakdown activationBreakdown(const plan::GptShape& shape,
                                        const plan::ActivationConfig& cfg, bool bf16GemmInputs) {
    plan::validate(shape);
    if (cfg.microBatch < 1) throwInvalid("micro-batch must be at least 1");
    constexpr std::uint64_t kF32 = 4, kI32 = 4;
    const auto b = static_cast<std::uint64_t>(cfg.microBatch);
    const auto s = static_cast<std::uint64_t>(shape.seqLen);
    const auto d = static_cast<std::uint64_t>(shape.dModel);
    const auto h = static_cast<std::uint64_t>(shape.heads);
    const auto v = static_cast<std::uint64_t>(shape.vocab);
    const auto L = static_cast<std::uint64_t>(shape.layers);
    const std::uint64_t t = b * s; // tokens
    const std::uint64_t td = t * d * kF32;
    // Tensor parallelism splits what lies between a column-parallel and a row-parallel linear
    // (this rank's heads and MLP features); LayerNorm outputs and residuals stay whole.
    const auto tp = static_cast<std::uint64_t>(shape.tp);
    const std::uint64_t tdl = td / tp;
    // What only linear layers read (LayerNorm, attention and GELU outputs) is kept in bf16 when
    // they run on the CPU's bf16 units (model/gpt.cpp's gemmInput): half the bytes.
    const std::uint64_t in = bf16GemmInputs ? 2 : 1; // divisor

    ActivationBreakdown a;
    a.embedding = {{"embedding.token_ids", t * kI32}, {"embedding.out", td}};
    a.blockFull = {{"block.ln1_stats", 2 * t * kF32}, // mean and 1/σ per token
                   {"block.ln1_out", td / in},
                   {"block.qkv", 3 * tdl},
                   {"block.attn_probs", b * (h / tp) * s * s * kF32},
                   {"block.attn_out", tdl / in},
                   {"block.resid1", td},
                   {"block.ln2_stats", 2 * t * kF32},
                   {"block.ln2_out", td / in},
                   {"block.fc_pre", 4 * tdl},
                   {"block.gelu_out", 4 * tdl / in},
                   {"block.out", td}};
    a.head = {{"head.lnf_stats", 2 * t * kF32},
              {"head.lnf_out", td / in},
              {"head.probs", t * v * kF32}, // logits, softmaxed in place; ∂logits in backward
              {"head.targets", t * kI32}};

    const std::uint64_t emb = totalBytes(a.embedding);
    const std::uint64_t full = totalBytes(a.blockFull);
    const std::uint64_t head = totalBytes(a.head);
    if (cfg.checkpointing) {
        a.perBlock = {{"block.out", td}};
        const std::uint64_t lastBlockForward = emb + (L - 1) * td + full;
        const std::uint64_t headForward = emb + L * td + head;
        a.peakBytes = std::max(lastBlockForward, headForward);
    } else {
        a.perBlock = a.blockFull;
        a.peakBytes = emb + L * full + head;
    }
    return a;
}

} // namespace shardscope::theory
