#pragma once
// Per-rank model states, communication and the closed-form peak for one scenario.
// Every formula names its source next to it in estimate.cpp.
#include "core/categories.h"
#include "core/event.h"
#include "plan/pipeline.h"
#include "plan/shape.h"
#include "plan/strategy.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::theory {

// Either a bare parameter count (the ZeRO paper's view: one unit, no padding) or a GPT
// shape (unit-wise flat buffers padded to a multiple of the shard count).
struct Scenario {
    std::optional<plan::GptShape> shape;
    std::uint64_t params = 0; // used when shape is empty
    // Without a shape: a model's own units (estimate --model-config), padded and gathered one by
    // one like a shape's; Σ params must equal `params`. Empty: the whole model is one unit.
    std::vector<plan::UnitParams> units;
    plan::Strategy strategy = plan::Strategy::Ddp;
    int ranks = 1;
    plan::Precision precision{};
    plan::Offload offload{};
    plan::Knobs knobs{};
    plan::ActivationConfig activations{};
    // Pipeline parallelism (with a shape): the scenario is one rank of stage `pipeStage` of
    // `pipeStages` (plan::stageUnits): its units' states and collectives (`ranks` stays the
    // stage's DP group), plus the stage's messages to its neighbours, knobs.gradAccumSteps
    // micro-batches per step run in `pipeSchedule`'s order.
    // With V virtual stages (interleaved) the rank holds V chunks (plan::stageChunks).
    int pipeStages = 1;
    int pipeStage = 0;
    int virtualStages = 1;
    plan::PipeSchedule pipeSchedule = plan::PipeSchedule::OneFOneB;
    // The stage's chunks of the shape's unit list (one, all units, without a pipeline), and
    // their span [first, end).
    std::vector<plan::StageUnits> stageChunks() const;
    plan::StageUnits stageUnits() const;
};

// Throws InputError (theory/input_error.h) naming the input at fault: ranks < 1, params == 0,
// a hybrid group that does not divide ranks, offloading params with a strategy that does not
// shard them, custom optimizer bytes > 64, knobs out of range, a bad model shape, and sizes
// whose byte counts would overflow 64 bits. Every other function here assumes a validated
// scenario.
void validate(const Scenario& s);

// One line of the derivation table: which bytes, by which formula, from which source.
struct DerivationLine {
    Category category;
    Tier tier;
    std::string formula; // e.g. "2 B × ⌈Ψ/N⌉·N / N"
    std::string source;  // e.g. "ZeRO paper §5.1 (Pos+g+p)"
    std::uint64_t bytes;
};

struct ModelStates {
    ByteTable perRank;                  // bytes per (category, tier) on one rank
    std::vector<DerivationLine> lines;  // how each non-zero entry was derived
    std::uint64_t paramCount = 0;       // Ψ
    std::uint64_t paddedParamCount = 0; // Σ units padded to a multiple of the shard count
    int shardCount = 1;                 // ranks a unit is split over: 1 (DDP), N, or G (hybrid)
    std::uint64_t paddingBytes = 0;     // of perRank, bytes that only pad shards to equal size
};
ModelStates modelStates(const Scenario& s);

// Names, sent bytes and busbw of each collective: plan/collective.h.
struct CommVolume {
    CollectiveOp kind;
    std::uint64_t
        payloadBytes;        // the collective's buffer size summed over calls (nccl-tests "size")
    std::uint64_t sentBytes; // what one rank actually sends per step (ring algorithm)
    int calls;               // collective calls per step
};
struct CommPerStep {
    std::vector<CommVolume> byKind;
    std::uint64_t totalSentBytes = 0;
    double psiEquivalents = 0; // data-parallel sent bytes / (paramBytes × Ψ): DDP ≈ 2, ZeRO-3 ≈ 3
                               // (TP all-reduces not counted)
};
CommPerStep commPerStep(const Scenario& s);

// A predicted peak and its terms. With a GPT shape, predict::predictPeak fills it by dry-running
// this implementation's step (train::Trainer, strategy/sharded.cpp, model/gpt.cpp on a counting
// device), so it equals the ledger's peak of a real run; closedFormPeak below fills it from the
// ZeRO paper's terms.
struct PeakPrediction {
    ByteTable modelStates;             // persistent states (as modelStates().perRank)
    std::uint64_t activationBytes = 0; // activation peak for the shape, micro-batch, checkpointing
    std::uint64_t gatheredBytes =
        0; // param_full in flight at most (≤ largest unit × (1 + prefetch))
    std::uint64_t gradFullBytes = 0;  // transient full-gradient buffers at most
    std::uint64_t bucketBytes = 0;    // communication buffers (buckets, scratch) at most
    std::uint64_t workspaceBytes = 0; // workspaces at most (0 without a shape)
    std::uint64_t paddingBytes = 0;   // included above; reported for the derivation
    std::uint64_t peakBytes = 0;      // device tier
    std::array<std::uint64_t, kTierCount>
        tierPeaks{};                // each tier's peak (device = peakBytes; dry run only)
    ByteTable atPeak;               // live bytes per category at the predicted peak
    ByteTable categoryPeaks;        // each category's own maximum over the step
    std::string peakPhase;          // where the peak happens, e.g. "backward of block1"
    std::vector<std::string> notes; // why it may differ from a measurement
};

// The ZeRO paper's peak: persistent states + the gathered units in flight (gatheredBytesBound)
// + one full gradient (all of them where the strategy keeps them) + one bucket. Activations and
// workspaces are not predicted. What `estimate --params` shows; a shaped scenario's peak is the
// dry run's (predict/predict.h).
PeakPrediction closedFormPeak(const Scenario& s);

// param_full in flight at most: the largest gathered unit × the units a pass keeps gathered
// (1 + prefetch, capped by the FSDP in-flight limit and the unit count) × param bytes; 0 where
// params are not resharded after forward.
std::uint64_t gatheredBytesBound(const Scenario& s);

// Ranks a unit's flat buffer is split over (plan::Policy::shardCount).
int shardCount(const Scenario& s);

// The ZeRO paper's per-device total for a stage (Table 1's cells), in bytes, with K = 12.
// stage: 0 = baseline DDP, 1 = Pos, 2 = Pos+g, 3 = Pos+g+p.
double zeroPaperBytes(double psi, double ranks, int stage);

} // namespace shardscope::theory
