#pragma once
// Pipeline parallelism as data: the schedules (which op each stage runs, in which order), what
// makes a pipeline shape valid, and an execution of a schedule on given op times that says when
// each op runs, how long each stage idles (the bubble), how many micro-batches' activations each
// stage holds at once, and whether the order can deadlock.
//
// Note: stages are ranks of the pipeline, 0 first (embedding) to P − 1 last (head and loss).
// With V virtual stages (interleaved), rank s holds model chunks c = 0 … V − 1, chunk c being
// virtual stage c·P + s of the P·V in the model (Megatron-LM's layout: a micro-batch passes every
// rank V times). Forward of virtual stage k needs forward of k − 1 (the activation it sends);
// backward of k needs forward of k (its stashed activations) and backward of k + 1 (the gradient
// it sends); a weight-gradient op (zb1) needs the backward of its own micro-batch and chunk.
// A micro-batch's activations are held from its forward until its last backward op of the chunk
// (B, or W where the schedule splits the backward).
#include "core/event.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::plan {

enum class PipeSchedule : std::uint8_t { GPipe, OneFOneB, Interleaved, ZeroBubbleH1 };
inline constexpr std::size_t kPipeScheduleCount = 4;

struct PipeScheduleTraits {
    PipeSchedule kind;
    std::string_view flag;     // --pp-schedule's value
    std::string_view name;     // as the literature names it
    bool virtualStages;        // takes --virtual-stages V > 1
    bool splitBackward;        // backward as B (input gradients) + W (weight gradients)
    bool microBatchesByStages; // needs M to be a multiple of P
};

inline constexpr std::array<PipeScheduleTraits, kPipeScheduleCount> kPipeScheduleTraits = {{
    {PipeSchedule::GPipe, "gpipe", "GPipe", false, false, false},
    {PipeSchedule::OneFOneB, "1f1b", "1F1B", false, false, false},
    {PipeSchedule::Interleaved, "interleaved", "Interleaved 1F1B", true, false, true},
    {PipeSchedule::ZeroBubbleH1, "zb1", "Zero Bubble H1", false, true, false},
}};
static_assert(kPipeScheduleTraits[static_cast<std::size_t>(PipeSchedule::ZeroBubbleH1)].kind ==
                  PipeSchedule::ZeroBubbleH1,
              "kPipeScheduleTraits is in enum order");

constexpr const PipeScheduleTraits& traits(PipeSchedule s) {
    return kPipeScheduleTraits[static_cast<std::size_t>(s)];
}
std::optional<PipeSchedule> pipeScheduleFromFlag(std::string_view flag);

// Bounds of what a shape may ask for (the tests cover every shape within them).
inline constexpr int kMaxPipeStages = 64;
inline constexpr int kMaxMicroBatches = shardscope::kMaxMicroBatches; // core/event.h's
inline constexpr int kMaxVirtualStages = 16;

struct PipeShape {
    int stages = 1;        // P
    int microBatches = 1;  // M per step and data-parallel rank
    int virtualStages = 1; // V: model chunks per rank (interleaved only)
};

// One line naming what is wrong with the shape for this schedule on a model of `layers` layers,
// or empty when it runs.
std::string validatePipe(PipeSchedule schedule, const PipeShape& shape, int layers);

// The layers of each stage: contiguous ranges, as even as possible, earlier stages one more when
// P does not divide L (range of stage s = [first[s], first[s + 1])). With V chunks: ranges of the
// P·V virtual stages.
std::vector<int> stageFirstLayers(int layers, int virtualStagesInAll);

// The units (plan/units.h: embedding, block0 … block{L−1}, head) stage `stage` of `stages`
// runs: its layers' blocks (stageFirstLayers), the embedding on the first stage, the head on
// the last: [first, end).
struct StageUnits {
    int first = 0, end = 0;
    bool operator==(const StageUnits&) const = default;
};
StageUnits stageUnits(int layers, int stages, int stage);
// With V virtual stages: the units of each of the stage's V chunks, chunk c being virtual stage
// c·P + stage (its layers' blocks, the embedding on virtual stage 0, the head on the last), in
// chunk order; V = 1 gives stageUnits. Needs P·V ≤ layers.
std::vector<StageUnits> stageChunks(int layers, int stages, int virtualStages, int stage);

enum class PipeOpKind : std::uint8_t { Forward, Backward, WeightGrad };

struct PipeOp {
    PipeOpKind kind = PipeOpKind::Forward;
    int microBatch = 0;
    int chunk = 0; // 0 … V − 1
    bool operator==(const PipeOp&) const = default;
};

// Every stage's ops in execution order. The shape must be valid (validatePipe with any L ≥ P·V).
std::vector<std::vector<PipeOp>> pipeOrder(PipeSchedule schedule, const PipeShape& shape);

// Op times of one stage's whole share of the model for one micro-batch (a chunk takes 1/V of
// them). Without a split backward, Backward takes backward + weightGrad.
struct PipeOpTimes {
    double forward = 1;
    double backward = 1;   // input gradients
    double weightGrad = 1; // weight gradients
};

struct PipeSpan {
    PipeOp op;
    double begin = 0, end = 0;
};

struct PipeRun {
    bool deadlock = false;
    std::string stuck; // the first stage that cannot go on and what it waits for
    std::vector<std::vector<PipeSpan>> ops; // per stage, in order
    double makespan = 0;
    std::vector<double> busy;      // per stage: time computing
    std::vector<int> peakInFlight; // per stage: most micro-batch chunks held at once
    // The textbook bubble: idle share of the step, 1 − busy / makespan, per stage.
    double bubble(int stage) const;
    // Idle time between the stage's first and last op ÷ the step (a recording's measure).
    double innerIdle(int stage) const;
};

// Runs the order on the times, every op as early as its inputs and its stage allow (sends cost
// nothing: the schedule's own bubble). The order may be any (a deadlocking one is reported).
PipeRun runPipe(const PipeShape& shape, bool splitBackward,
                const std::vector<std::vector<PipeOp>>& order, const PipeOpTimes& times);

} // namespace shardscope::plan
