#pragma once
// The step driver of one rank: forward over the units, backward in reverse, then the optimizer
// on this rank's slice of every unit, with a strategy (strategy/sharding.h) deciding where the
// states live and how they move between ranks around every unit.
//
// Note: compute runs in fp32. In mixed precision each unit's bf16 working copy (param_full) is
// widened into a `workspace` buffer for its forward and backward; the backward writes an fp32
// gradient into a second `workspace` buffer, which the strategy rounds (RNE) into its bf16
// gradient buffer before the workspace is freed. The gradients the optimizer sees are SUMS over
// ranks and micro-steps; the driver scales them by clip / (ranks × micro-steps) once, in the
// AdamW update, so every strategy applies the same arithmetic to the same values. The global
// norm is exact (train/grad_norm.h): bit-identical clip coefficients for every strategy.
#include "comm/communicator.h"
#include "core/categories.h"
#include "device/device.h"
#include "model/data.h"
#include "model/gpt.h"
#include "plan/pipeline.h"
#include "plan/strategy.h"
#include "strategy/sharding.h"
#include "train/optimizer.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace shardscope::train {

struct TrainConfig {
    model::ModelConfig model;
    plan::PrecisionKind precision = plan::PrecisionKind::MixedBf16; // MixedBf16 or Fp32
    AdamWConfig optimizer;
    std::uint64_t seed = 0; // parameter initialisation (the data source has its own seed)
    int gradAccumSteps = 1; // micro-steps per optimizer step
    bool bf16Gemm = false;  // mixed precision: linear layers on the CPU's bf16 units (plan::Knobs)
    // With a pipeline group (the strategy's pipeGroup, P > 1): the order of each stage's
    // forwards and backwards of the gradAccumSteps micro-batches (plan/pipeline.h).
    plan::PipeSchedule pipeSchedule = plan::PipeSchedule::OneFOneB;
    int virtualStages = 1; // V model chunks per stage (interleaved; the strategy's too)
};

struct StepResult {
    std::int64_t step = 0; // 0-based
    double loss = 0.0;     // mean over ranks and micro-steps
    double gradNorm = 0.0; // of the averaged gradient, before clipping
    std::uint64_t stepNs = 0;
    // The ledger's model-state cells at the end of the step's first forward, when every model
    // state coexists (SHARD_GRAD_OP's full params are held from forward to backward).
    ByteTable modelStates;
};

class Trainer {
public:
    // With `sharding` null the trainer runs one rank, DDP, on a self communicator it owns.
    // Otherwise the strategy must outlive the trainer and be built for the same shape, seed and
    // precision. `data` must match the model's vocab, context and micro-batch.
    Trainer(TrainConfig config, device::Device& device, const model::DataSource& data,
            strategy::Sharding* sharding = nullptr);
    ~Trainer();

    StepResult step();
    std::int64_t stepsDone() const { return step_; } // of this trainer (this invocation)

    // Continues a saved run: the next step is the run's step `step` (AdamW's bias correction
    // counts on from it) and reads the data source from micro-batch index `dataPosition`.
    // StepResult::step and the ledger keep counting this invocation's steps from 0.
    void continueFrom(std::int64_t step, std::int64_t dataPosition);
    std::int64_t runStep() const { return baseStep_ + step_; } // steps the run has done
    std::int64_t dataPosition() const { return baseData_ + step_ * config_.gradAccumSteps; }

    const TrainConfig& config() const { return config_; }
    const model::GptModel& model() const { return model_; }
    strategy::Sharding& sharding() { return *sharding_; }
    device::Ops& deviceOps() { return device_.ops(); } // copies between host and the states
    device::Device& device() { return device_; }
    // A span of this rank's work outside the step's phases (a checkpoint save) in its events.
    void markSpan(EventKind kind, Phase phase, std::uint64_t bytes = 0) const;
    std::uint64_t paramCount() const; // Ψ of the whole model (every TP slice), unpadded

    // Collective over the world: every unit's unpadded fp32 weights at rank 0 (empty elsewhere).
    std::vector<std::vector<float>> fullWeights();
    // One unit's weights (collective; meaningful at rank 0).
    std::vector<float> weights(std::int32_t unit);
    // FNV-1a 64 over the bytes of every unit's fp32 weights in order (collective; 0 off rank 0).
    std::uint64_t paramDigest();

    // Forward + backward of one micro-batch (micro-step `micro` of `micros`) without the
    // optimizer; returns this rank's loss. Public for benchmarks and gradient tests.
    double computeGradients(const model::Batch& batch, int micro = 0, int micros = 1);

    // Pipeline parallelism: this rank's stage (0 … stages − 1; one stage without a pipeline).
    int stage() const { return stage_; }
    int stages() const { return stages_; }

private:
    // A pipelined step's forwards and backwards on this rank's stage, in the schedule's order;
    // returns the sum of the micro-batches' losses (the last stage's; 0 elsewhere).
    double pipelineMicroSteps(StepResult& r);
    void post(device::Buffer tensor, int peer, std::int32_t unit); // sends, frees `tensor`
    void receive(device::Buffer& into, int peer, std::int32_t unit);
    void reapSends(bool wait); // frees the sent buffers whose receivers have them
    void abandonStep();        // frees every transient of a step that failed midway
    void forwardUnit(model::GptModel& model, std::int32_t unit, const model::Batch& batch);
    void backwardUnit(model::GptModel& model, std::int32_t unit, const strategy::MicroStep& micro);
    // A split backward's halves (zb1): B, the input gradient; W, the weight gradients, stored
    // and reduced by the strategy.
    void inputGradUnit(model::GptModel& model, std::int32_t unit);
    void weightGradUnit(model::GptModel& model, std::int32_t unit,
                        const strategy::MicroStep& micro);
    double optimizerStep(); // returns the norm of the averaged gradient
    device::Buffer widen(std::int32_t unit, const strategy::ParamView& view);
    void emitSpan(EventKind kind, std::int32_t unit, Phase phase) const;
    bool mixed() const { return config_.precision == plan::PrecisionKind::MixedBf16; }
    bool bf16Gemm() const { return config_.bf16Gemm && mixed(); }
    const Bf16* bf16Linear(const strategy::ParamView& view) const;

    TrainConfig config_;
    device::Device& device_;
    const model::DataSource& data_;
    std::unique_ptr<comm::Communicator> selfComm_;
    std::unique_ptr<strategy::Sharding> ownSharding_;
    strategy::Sharding* sharding_;
    model::GptModel model_;
    // Pipeline: the pipeline group, this stage's units [first_, end_), a model (its activation
    // set) per micro-batch in flight, and the sends whose buffers the receiver has not copied.
    comm::Communicator* pipe_ = nullptr;
    int stage_ = 0, stages_ = 1;
    std::int32_t first_ = 0, end_ = 0;
    std::vector<plan::StageUnits> chunks_; // the stage's chunks (one but with virtual stages)
    bool holds(std::int32_t unit) const;
    std::vector<std::unique_ptr<model::GptModel>> micro_;
    std::vector<std::pair<std::uint64_t, device::Buffer>> sending_;
    std::uint64_t paddedTotal_ = 0;
    std::int64_t step_ = 0;
    std::int64_t baseStep_ = 0; // a resumed run's step before this trainer's first
    std::int64_t baseData_ = 0; // … and its data position
};

std::uint64_t fnv1a(const std::vector<std::vector<float>>& weights);
std::string digestHex(std::uint64_t digest); // 16 lowercase hex digits

} // namespace shardscope::train
