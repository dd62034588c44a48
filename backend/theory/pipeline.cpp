#include "theory/pipeline.h"

#include "core/error.h"
#include "theory/activations.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace shardscope::theory {

double pipeBubble(plan::PipeSchedule schedule, const plan::PipeShape& shape,
                  const plan::PipeOpTimes& times) {
    const double p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    switch (schedule) {
    case plan::PipeSchedule::GPipe:
    case plan::PipeSchedule::OneFOneB:
        return (p - 1) / (m + p - 1);
    case plan::PipeSchedule::Interleaved:
        return (p - 1) / (v * m + p - 1);
    case plan::PipeSchedule::ZeroBubbleH1: {
        if (times.forward == times.backward && times.backward == times.weightGrad) {
            // Before M reaches P only M − 1 deferred Ws are there to fill the drain.
            const double lost = (p - 1) * (times.forward + times.backward) -
                                std::min(m - 1, p - 1) * times.weightGrad;
            return lost / (m * (times.forward + times.backward + times.weightGrad) + lost);
        }
        // Other times: the schedule run on them (the closed form misses the last stage's
        // deferred Ws outlasting the gradients' trip back once W > B, and can go negative).
        const plan::PipeRun run = plan::runPipe(
            shape, true, plan::pipeOrder(plan::PipeSchedule::ZeroBubbleH1, shape), times);
        return run.bubble(0);
    }
    }
    return 0;
}

int pipeActivationsInFlight(plan::PipeSchedule schedule, const plan::PipeShape& shape, int stage) {
    const int p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    switch (schedule) {
    case plan::PipeSchedule::GPipe:
        return m;
    case plan::PipeSchedule::OneFOneB:
        return std::min(p - stage, m);
    case plan::PipeSchedule::ZeroBubbleH1:
        return std::min(p, m);
    case plan::PipeSchedule::Interleaved:
        return m == p ? v * m : std::min(2 * (p - stage - 1) + (v - 1) * p + 1, v * m);
    }
    return 0;
}

std::vector<PipeStage> pipeStages(const plan::GptShape& gpt, const plan::PipeShape& shape) {
    const int p = shape.stages, v = shape.virtualStages, all = p * v;
    if (p < 1 || v < 1 || static_cast<std::int64_t>(all) > gpt.layers)
        throwInvalid(std::to_string(all) + " pipeline stages for a model of " +
                     std::to_string(gpt.layers) + " layers: every stage needs a layer");
    const std::vector<plan::UnitParams> units = plan::unitParams(gpt); // embedding, blocks, head
    const std::vector<int> first = plan::stageFirstLayers(static_cast<int>(gpt.layers), all);
    std::vector<PipeStage> out(static_cast<std::size_t>(p));
    for (int k = 0; k < all; ++k) { // virtual stages in model order: units stay in model order
        PipeStage& st = out[static_cast<std::size_t>(k % p)];
        const int lo = first[static_cast<std::size_t>(k)],
                  hi = first[static_cast<std::size_t>(k) + 1];
        st.layers.push_back({lo, hi});
        if (k == 0) {
            st.embedding = true;
            st.units.push_back(units.front());
        }
        for (int l = lo; l < hi; ++l)
            st.units.push_back(units[static_cast<std::size_t>(l) + 1]);
        if (k == all - 1) {
            st.head = true;
            st.units.push_back(units.back());
        }
    }
    for (PipeStage& st : out)
        for (const plan::UnitParams& u : st.units)
            st.params += u.params;
    return out;
}

SplitKept splitBackwardKept(const plan::GptShape& gpt, const plan::ActivationConfig& cfg) {
    const auto tokens = static_cast<std::uint64_t>(cfg.microBatch * gpt.seqLen);
    const auto d = static_cast<std::uint64_t>(gpt.dModel);
    const auto dl = d / static_cast<std::uint64_t>(std::max<std::int64_t>(gpt.tp, 1));
    const std::uint64_t f = sizeof(float);
    // mlp.proj's and attn.proj's dy (the residual stream, d each, copied), mlp.fc's (4d/T) and
    // attn.qkv's (3d/T), moved from B's buffers.
    return {tokens * (2 * d + 7 * dl) * f + 4 * d * f, tokens * d * f, 2 * d * f};
}

std::vector<PipeStageActivations>
pipeActivations(plan::PipeSchedule schedule, const plan::PipeShape& shape,
                const plan::GptShape& gpt, const plan::ActivationConfig& cfg, bool bf16GemmInputs) {
    const int p = shape.stages, v = shape.virtualStages, all = p * v;
    const ActivationBreakdown act = activationBreakdown(gpt, cfg, bf16GemmInputs);
    // The stage boundary: a block's output ("block.out"), in fp32 whatever the precision.
    const auto boundary =
        static_cast<std::uint64_t>(cfg.microBatch * gpt.seqLen * gpt.dModel) * sizeof(float);
    const std::vector<int> first = plan::stageFirstLayers(static_cast<int>(gpt.layers), all);
    // Sums of up to V·M chunks: every step checked (a bound on M alone would not say).
    const auto overflow = [] {
        throwInvalid("activation bytes overflow 64 bits: fewer micro-batches or a smaller "
                     "micro-batch");
    };
    const auto sum = [&](std::uint64_t a, std::uint64_t b) {
        std::uint64_t out = 0;
        if (__builtin_add_overflow(a, b, &out)) overflow();
        return out;
    };
    std::vector<std::uint64_t> chunkBytes(static_cast<std::size_t>(all));
    for (int k = 0; k < all; ++k) {
        const auto layers = static_cast<std::uint64_t>(first[static_cast<std::size_t>(k) + 1] -
                                                       first[static_cast<std::size_t>(k)]);
        std::uint64_t blocks = 0;
        if (__builtin_mul_overflow(layers, totalBytes(act.perBlock), &blocks)) overflow();
        // In: the received input (every chunk but the first); out: the last block's output,
        // handed on (every chunk but the last), which `blocks` counted.
        chunkBytes[static_cast<std::size_t>(k)] =
            sum(sum(sum(blocks, k == 0 ? totalBytes(act.embedding) : 0),
                    k == all - 1 ? totalBytes(act.head) : 0),
                k > 0 ? boundary : 0) -
            (k < all - 1 ? boundary : 0);
    }
    // A split backward's B frees a chunk's activations but the linear layers' inputs, which its W
    // reads (model/gpt.h: backwardInput): the kept set, whatever the checkpointing (B recomputes
    // them), and the probabilities the head's W reads as ∂logits.
    const auto named = [](const std::vector<ActivationTensor>& set,
                          std::initializer_list<std::string_view> names) {
        std::uint64_t bytes = 0;
        for (const ActivationTensor& t : set)
            for (std::string_view n : names)
                if (t.name == n) bytes += t.bytes;
        return bytes;
    };
    const std::uint64_t keptPerBlock = named(
        act.blockFull, {"block.ln1_out", "block.attn_out", "block.ln2_out", "block.gelu_out"});
    const SplitKept kept = splitBackwardKept(gpt, cfg);
    std::vector<std::uint64_t> keptBytes(static_cast<std::size_t>(all)),
        keptGradients(static_cast<std::size_t>(all));
    for (int k = 0; k < all; ++k) {
        const auto layers = static_cast<std::uint64_t>(first[static_cast<std::size_t>(k) + 1] -
                                                       first[static_cast<std::size_t>(k)]);
        std::uint64_t blocks = 0, gradients = 0;
        if (__builtin_mul_overflow(layers, keptPerBlock, &blocks) ||
            __builtin_mul_overflow(layers, kept.perBlock, &gradients))
            overflow();
        keptBytes[static_cast<std::size_t>(k)] =
            sum(sum(blocks, k == 0 ? named(act.embedding, {"embedding.token_ids"}) : 0),
                k == all - 1 ? named(act.head, {"head.lnf_out", "head.probs"}) : 0);
        keptGradients[static_cast<std::size_t>(k)] =
            sum(sum(gradients, k == 0 ? kept.embedding : 0), k == all - 1 ? kept.head : 0);
    }
    const bool split = plan::traits(schedule).splitBackward;
    const auto order = plan::pipeOrder(schedule, shape);
    std::vector<PipeStageActivations> out(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        PipeStageActivations& a = out[static_cast<std::size_t>(s)];
        for (int c = 0; c < v; ++c)
            a.perMicroBatchBytes =
                sum(a.perMicroBatchBytes, chunkBytes[static_cast<std::size_t>(c * p + s)]);
        int held = 0;
        std::uint64_t bytes = 0, gradients = 0;
        for (const plan::PipeOp& op : order[static_cast<std::size_t>(s)]) {
            const int k = op.chunk * p + s;
            const std::uint64_t b = chunkBytes[static_cast<std::size_t>(k)];
            if (op.kind == plan::PipeOpKind::Forward) {
                ++held;
                bytes = sum(bytes, b);
                a.heldChunks = std::max(a.heldChunks, held);
                // The forward's output is held a moment before it leaves: the peak's instant.
                a.peakBytes = std::max(a.peakBytes, sum(bytes, k < all - 1 ? boundary : 0));
            } else if (!split) {
                --held;
                bytes -= b;
            } else if (op.kind == plan::PipeOpKind::Backward) { // B: W's inputs stay
                bytes = bytes - b + keptBytes[static_cast<std::size_t>(k)];
                gradients = sum(gradients, keptGradients[static_cast<std::size_t>(k)]);
                a.keptGradientBytes = std::max(a.keptGradientBytes, gradients);
            } else { // W
                --held;
                bytes -= keptBytes[static_cast<std::size_t>(k)];
                gradients -= keptGradients[static_cast<std::size_t>(k)];
            }
        }
    }
    return out;
}

} // namespace shardscope::theory
