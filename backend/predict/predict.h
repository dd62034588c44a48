#pragma once
// The predicted peak of one training step, measured by running the real step driver
// (train::Trainer) and strategy (strategy/sharded.cpp) over the real model (model/gpt.cpp) on a
// CountingDevice (ledger only, no memory, no-op ops) with virtual communicators of the
// scenario's N ranks (events and scratch, no data). Whatever the code allocates and frees, in
// whatever order, is what the prediction counts: there is no second description of the step to
// keep in step with it.
//
// Note: this library links no kernels, no BLAS and no MPI (train, strategy, model, comm and
// device are arithmetic-free; the arithmetic is behind Device::ops()), so the GUI's Calculator
// can call it. theory/ stays pure formulas: its closed-form model states are the independent
// check of the dry run's (tests compare them).
#include "comm/communicator.h"
#include "core/categories.h"
#include "core/event.h"
#include "theory/estimate.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::predict {

// One collective as the strategy called it (the bucket / communication plan of the step).
struct CollectiveCall {
    CollectiveOp op = CollectiveOp::None;
    std::int32_t unit = kNoUnit; // kNoUnit for a bucket spanning units
    std::uint64_t bytes = 0;     // payload per rank (comm/communicator.h)
    std::int32_t peers = 0;      // ranks of the group it ran on
};

struct StepPrediction {
    std::uint64_t peakBytes = 0; // device tier, the ledger's peak over the step
    ByteTable atPeak;            // live bytes per cell at that peak
    ByteTable categoryPeaks;     // each cell's own maximum over the step
    ByteTable stepStart;         // live bytes when the step begins (the persistent states)
    std::string peakPhase;       // "forward of block0", "backward of head", …
    ByteTable modelStates;       // the ledger's model-state cells when they all coexist
    std::vector<CollectiveCall> collectives; // in call order
    comm::CommStats comm;                    // summed over the rank's communicators
    std::array<std::uint64_t, kTierCount>
        tierPeaks{}; // each tier's peak over the step (device = peakBytes)
};

// Runs one optimizer step (every micro-step) of rank `rank` of `s`. Needs s.shape (throws
// Error(InvalidArgument) without one). The trainer runs bf16 or fp32 with every state on the
// device: fp16 runs as bf16 (the same bytes); a custom optimizer's K bytes and offloaded states
// are persistent cells, rescaled and moved to their tier after the run.
StepPrediction predictStep(const theory::Scenario& s, int rank = 0);

// theory::PeakPrediction filled from the dry run (with a shape), or theory::closedFormPeak
// without one: what the report, the Calculator and the CLI show.
theory::PeakPrediction predictPeak(const theory::Scenario& s);

} // namespace shardscope::predict
