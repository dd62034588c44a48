#pragma once
// The step driver of one rank: forward over the units, backward in reverse, then the optimizer,
// with per-unit hooks where a sharding strategy (DDP / ZeRO / FSDP, a later issue) unshards,
// reshards and reduce-scatters. For one rank the hooks are no-ops, but the seams are where
// they will be.
//
// Note: model states per unit (what theory::modelStates predicts, byte for byte):
//   mixed bf16: param_full bf16 (2 B), grad_full bf16 (2 B), master_fp32, adam_m, adam_v (4 B
//   each) = 16 B per (padded) parameter; fp32: param_full, grad_full, adam_m, adam_v (4 B
//   each) = 16 B. Buffers are padded to a multiple of worldSize (FSDP's flat parameter).
//   Compute runs in fp32: in mixed precision each unit's bf16 params are widened into a
//   `workspace` buffer for its forward/backward, and fp32 gradients are rounded (RNE) into
//   grad_full after the unit's backward.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/categories.h"
#include "device/device.h"
#include "model/data.h"
#include "model/gpt.h"
#include "theory/policy.h"
#include "train/optimizer.h"

namespace shardscope::train {

struct TrainConfig {
    model::ModelConfig model;
    theory::PrecisionKind precision = theory::PrecisionKind::MixedBf16; // MixedBf16 or Fp32
    AdamWConfig optimizer;
    std::uint64_t seed = 0; // parameter initialisation (the data source has its own seed)
    int rank = 0;
    int worldSize = 1;      // the shard count units are padded for
};

struct UnitState {
    device::Buffer param;  // param_full: bf16 (mixed) or fp32
    device::Buffer grad;   // grad_full: same dtype as param
    device::Buffer master; // master_fp32 (mixed precision only)
    device::Buffer adamM;
    device::Buffer adamV;
};

struct UnitContext {
    std::int32_t unit;
    const model::UnitLayout& layout;
    UnitState& state;
};

// Where a strategy hooks into the step. Default implementations are the one-rank no-ops.
class StepHooks {
public:
    virtual ~StepHooks() = default;
    virtual void beforeForward(UnitContext&) {}  // unshard: all-gather the unit's parameters
    virtual void afterForward(UnitContext&) {}   // reshard (ZeRO-3 / FSDP)
    virtual void beforeBackward(UnitContext&) {} // unshard again for the backward
    virtual void afterBackward(UnitContext&) {}  // reduce-scatter / all-reduce the gradients
    virtual double allReduceSum(double local) { return local; } // the global gradient norm²
    virtual void afterOptimizer() {}             // ZeRO-1/2: all-gather the updated parameters
};

struct StepResult {
    std::int64_t step = 0; // 0-based
    double loss = 0.0;
    double gradNorm = 0.0; // before clipping
    std::uint64_t stepNs = 0;
};

class Trainer {
public:
    // Allocates and initialises the model states (throws Error(OutOfMemory) if they exceed the
    // ledger's capacity). `data` must match the model's vocab, context and micro-batch.
    Trainer(TrainConfig config, device::Device& device, const model::DataSource& data,
            StepHooks* hooks = nullptr);

    StepResult step();
    std::int64_t stepsDone() const { return step_; }

    const TrainConfig& config() const { return config_; }
    const model::GptModel& model() const { return model_; }
    std::uint64_t paramCount() const; // Ψ, unpadded
    std::span<UnitState> states() { return states_; }

    // The fp32 weights of a unit (master in mixed precision, the params in fp32), unpadded.
    std::vector<float> weights(std::int32_t unit) const;
    // FNV-1a 64 over the bytes of weights(u) for every unit in order.
    std::uint64_t paramDigest() const;

    // Forward + backward on a batch without an optimizer step; leaves the gradients in
    // grad_full and returns the loss (used by step(); public for gradient tests).
    double computeGradients(const model::Batch& batch);

private:
    void allocateStates();
    device::Buffer widenParams(std::int32_t unit); // fp32 workspace copy (mixed precision)
    void forwardUnit(std::int32_t unit, const model::Batch& batch);
    void backwardUnit(std::int32_t unit);
    double optimizerStep(); // returns the global gradient norm
    void emitSpan(EventKind kind, std::int32_t unit, Phase phase) const;
    bool mixed() const { return config_.precision == theory::PrecisionKind::MixedBf16; }

    TrainConfig config_;
    device::Device& device_;
    const model::DataSource& data_;
    StepHooks defaultHooks_;
    StepHooks* hooks_;
    model::GptModel model_;
    std::vector<UnitState> states_;
    std::int64_t step_ = 0;
};

std::string digestHex(std::uint64_t digest); // 16 lowercase hex digits

} // namespace shardscope::train
