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
                                        const plan::ActivationConfig& cfg) {
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

    ActivationBreakdown a;
    a.embedding = {{"embedding.token_ids", t * kI32}, {"embedding.out", td}};
    a.blockFull = {{"block.ln1_stats", 2 * t * kF32}, // mean and 1/σ per token
                   {"block.ln1_out", td},
                   {"block.qkv", 3 * tdl},
                   {"block.attn_probs", b * (h / tp) * s * s * kF32},
                   {"block.attn_out", tdl},
                   {"block.resid1", td},
                   {"block.ln2_stats", 2 * t * kF32},
                   {"block.ln2_out", td},
                   {"block.fc_pre", 4 * tdl},
                   {"block.gelu_out", 4 * tdl},
                   {"block.out", td}};
    a.head = {{"head.lnf_stats", 2 * t * kF32},
              {"head.lnf_out", td},
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
