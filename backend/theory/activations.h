#pragma once
// Activation memory of *this* implementation (backend/kernels/cpu + backend/model), so the
// theory predicts exactly what the ledger will measure.
//
// Note: this file is the contract with backend/model's forward/backward (model/gpt.cpp):
//  - every tensor a unit's forward allocates in category `activation` is listed here, in
//    allocation order, with its bytes at the given micro-batch (activations are fp32 in every
//    precision mode; token ids and targets are int32);
//  - a unit's output is listed with the unit that produces it ("embedding.out",
//    "block.out") although the next unit's backward is what frees it;
//  - without checkpointing nothing is freed before backward and backward allocates no
//    activations, so the peak is the end of forward: embedding + L·block + head;
//  - with checkpointing a block's forward allocates the full set (blockFull), then keeps only
//    "block.out"; its backward recomputes blockFull minus "block.out". The peak is the larger
//    of (the last block's forward: embedding + (L−1)·out + blockFull) and (the head's
//    forward: embedding + L·out + head) — a recompute is always smaller than the former.
// Gradients flowing between units and other transients are `workspace`, not listed here.
// Change both sides together; tests/unit/ledger_training_test.cpp compares them byte for byte.
#include "plan/shape.h"
#include "plan/strategy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::theory {

struct ActivationTensor {
    std::string name;    // e.g. "block.ln1_out"
    std::uint64_t bytes; // for one block (or the embedding / head) at the given micro-batch
};

struct ActivationBreakdown {
    std::vector<ActivationTensor> embedding;
    std::vector<ActivationTensor> perBlock;  // kept by one block after its forward
    std::vector<ActivationTensor> blockFull; // allocated by one block's forward (= perBlock
                                             // without checkpointing; the recompute set with it)
    std::vector<ActivationTensor> head;      // final LN, logits/probabilities, targets
    std::uint64_t peakBytes = 0;             // the ledger's activation peak over one step
};

std::uint64_t totalBytes(const std::vector<ActivationTensor>& tensors);

// Throws Error(InvalidArgument) for an invalid shape or a micro-batch < 1.
ActivationBreakdown activationBreakdown(const plan::GptShape& shape,
                                        const plan::ActivationConfig& cfg,
                                        bool bf16GemmInputs = false);

} // namespace shardscope::theory
