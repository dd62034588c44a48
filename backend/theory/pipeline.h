#pragma once
// Pipeline parallelism's closed forms, beside which a schedule's execution (plan/pipeline.h) and
// a run's recording are read: the bubble each schedule leaves and the activations each stage
// holds at once.
//
// Note: the bubble is the share of the step a stage spends idle, (P − 1)·(one stage's
// micro-batch time lost per pipeline fill and drain) ÷ the step:
//   GPipe, 1F1B   (P − 1) / (M + P − 1)
//   interleaved   (P − 1) / (V·M + P − 1)        (Narayanan et al. 2021: the fill costs 1/V)
//   ZB-H1         (P − 1)(F + B − W) / (M(F + B + W) + (P − 1)(F + B − W))  (Qi et al. 2024)
// with F, B, W one stage's forward, input-gradient and weight-gradient times per micro-batch.
// ZB-H1's is the paper's at equal F, B and W, once M ≥ P (before that, M − 1 in place of P − 1
// in front of W: fewer deferred Ws to fill the drain). At other times it is the schedule run on
// them (plan::runPipe): the formula misses the last stage's deferred Ws outlasting the
// gradients' trip back once W > B (and goes negative for W large enough).
#include "plan/pipeline.h"
#include "plan/shape.h"
#include "plan/strategy.h"

#include <cstdint>
#include <vector>

namespace shardscope::theory {

double pipeBubble(plan::PipeSchedule schedule, const plan::PipeShape& shape,
                  const plan::PipeOpTimes& times);

// The most micro-batches (with V chunks: model chunks of micro-batches, 1/V of a stage's layers
// each) whose activations stage `stage` holds at once, from a forward until its last backward op
// (W where split): GPipe M; 1F1B min(P − s, M); ZB-H1 min(P, M) on every stage (as many as
// 1F1B's stage 0, partly: between B and W only W's inputs); interleaved
// min(2(P − s − 1) + (V − 1)·P + 1, V·M), or V·M when M = P.
int pipeActivationsInFlight(plan::PipeSchedule schedule, const plan::PipeShape& shape, int stage);

// What one pipeline rank holds of a GPT: its chunks' layers (virtual stage c·P + s for chunk c),
// the embedding on the first virtual stage, the final LayerNorm + head on the last; its units
// (unitParams' names and counts, TP slices when shape.tp > 1) in model order.
struct PipeStage {
    std::vector<std::pair<int, int>> layers; // [first, end) per chunk
    bool embedding = false, head = false;
    std::vector<plan::UnitParams> units;
    std::uint64_t params = 0;
};
// Throws Error(InvalidArgument) when P·V exceeds the layers or the GPT shape is invalid.
std::vector<PipeStage> pipeStages(const plan::GptShape& gpt, const plan::PipeShape& shape);

// The activations each rank holds at its peak under the schedule: the activations one chunk
// keeps from its forward to its backward (theory/activations.h: the embedding's on the first
// virtual stage, a block's per layer, the head's on the last; a chunk's input, received from
// the previous stage, is its activation too, while its output leaves for the next one: one
// [micro-batch × context × d] fp32 boundary in, one out, held a moment at the end of the
// chunk's forward) summed over what the schedule's order has in flight at once, walked op by op.
// A split backward (zb1) frees a chunk's activations in two parts: its B all but the linear
// layers' inputs (and the head's probabilities, ∂logits by then), its W those.
// With checkpointing the recompute set a block's forward allocates for a moment is not in it (the
// dry run, predict/, has it).
struct PipeStageActivations {
    int heldChunks = 0;                   // most micro-batch chunks held at once
    std::uint64_t peakBytes = 0;          // their activations at the worst moment
    std::uint64_t perMicroBatchBytes = 0; // one micro-batch through all of the rank's chunks
    // A split backward (zb1): the most workspace its Bs keep for their Ws at once (SplitKept's
    // gradients), beside the activations; 0 for the other schedules.
    std::uint64_t keptGradientBytes = 0;
};

// What a split backward's B keeps for its W besides activations (model/gpt.h: backwardInput):
// each linear layer's output gradient (fp32 whatever the precision: 2·d + 7·d/T floats per
// token of a block) and the LayerNorms' parameter gradients (4·d floats a block, 2·d the head's);
// the embedding's B keeps its output gradient (d floats per token). Workspace, in bytes at the
// given micro-batch.
struct SplitKept {
    std::uint64_t perBlock = 0, embedding = 0, head = 0;
};
SplitKept splitBackwardKept(const plan::GptShape& gpt, const plan::ActivationConfig& cfg);
std::vector<PipeStageActivations> pipeActivations(plan::PipeSchedule schedule,
                                                  const plan::PipeShape& shape,
                                                  const plan::GptShape& gpt,
                                                  const plan::ActivationConfig& cfg,
                                                  bool bf16GemmInputs = false);

} // namespace shardscope::theory
