#pragma once
// The GPT-2-style decoder, unit by unit: the step driver calls forward(u) for every unit in
// order and backward(u) in reverse, handing each call the unit's flat fp32 parameters (and
// gradients), so a sharding strategy can unshard/reshard around every call.
//
// Note: activations (category `activation`) are allocated by forward from the Device and freed
// in backward right after their last use; with checkpointing a block keeps only its output
// (the next block's input) and recomputes the rest at the start of its backward. The exact
// list of saved tensors is theory::activationBreakdown (tests compare the ledger against it).
// Gradients flowing between units and other transients are category `workspace`.
//
// Tensor parallelism (shape.tp = T > 1, Megatron-style): a block's parameters are this TP
// rank's slice (plan/units.h); QKV and the MLP's first linear are column-parallel (this rank's
// heads / T heads and 4d / T features, no communication in forward), the attention output
// projection and the MLP's second linear are row-parallel: their partial sums are all-reduced
// over the TP group in forward (TP rank 0 adds the residual and the bias into its part, so the
// sum is the whole output), and the input gradient of each column-parallel linear is
// all-reduced in backward. Embedding, head and LayerNorms are replicated: every TP rank computes
// them on the same replicated activations, so their gradients agree without a TP reduction.
#include "comm/communicator.h"
#include "device/device.h"
#include "device/ops.h"
#include "model/data.h"
#include "plan/shape.h"
#include "plan/units.h"

#include <cstdint>
#include <vector>

namespace shardscope::model {

struct ModelConfig {
    plan::GptShape shape;
    std::int64_t microBatch = 1;
    bool checkpointing = false;
};

class GptModel {
public:
    GptModel(ModelConfig config, device::Device& device); // validates the shape
    GptModel(const GptModel&) = delete;
    GptModel& operator=(const GptModel&) = delete;

    const ModelConfig& config() const { return config_; }
    const std::vector<plan::UnitLayout>& units() const { return units_; }
    std::int32_t unitCount() const { return static_cast<std::int32_t>(units_.size()); }
    std::int64_t tokensPerBatch() const { return tokens_; }

    // Linear layers on the CPU's bf16 units (train::TrainConfig::bf16Gemm): their inputs are kept
    // in bf16 (gemmInput) and forward/backward then need `paramsBf16`, the unit's parameters in
    // bf16 in the layout of `params` (a dry run's device has no memory: null there).
    void setBf16Gemm(bool on) { bf16Gemm_ = on; }

    // Forward of `unit` (units in order 0 … U−1 within a step); `params` is the unit's flat fp32
    // parameters. The batch must have microBatch × seqLen tokens.
    void forward(std::int32_t unit, const float* params, const Batch& batch,
                 const Bf16* paramsBf16 = nullptr);
    double loss() const { return loss_; } // mean cross-entropy of the last complete forward

    // Backward of `unit` (U−1 … 0, after a complete forward); ACCUMULATES into `grads`, the
    // unit's flat fp32 gradient.
    void backward(std::int32_t unit, const float* params, float* grads,
                  const Bf16* paramsBf16 = nullptr);

    // A split backward (the zb1 pipeline schedule) in two calls per unit, the same arithmetic as
    // backward(): backwardInput(u) (B) computes the gradient of the unit's input, which the
    // previous unit or stage waits for, and its LayerNorms' parameter gradients; it keeps what
    // the linear layers' weight gradients need — their inputs (activations) and output gradients
    // (workspace) — until backwardWeights(u) (W) computes every parameter gradient of the unit
    // into `grads` (ACCUMULATES, like backward) and frees them. W needs no parameters: the
    // strategy may reshard the unit after B. The embedding has no input gradient: its B keeps
    // the gradient of its output, its W scatters it.
    void backwardInput(std::int32_t unit, const float* params, const Bf16* paramsBf16 = nullptr);
    void backwardWeights(std::int32_t unit, float* grads);

    // Frees every saved activation and the gradient in flight (a step abandoned midway).
    void discardActivations();

    // Pipeline parallelism: a stage runs units [first, end) of the model. Its first forward
    // takes the previous stage's output as `unit`'s input (setInput, before forward(unit)), its
    // last hands its output on (takeOutput(end − 1), after forward); backward starts from the
    // next stage's gradient of that output (setOutputGrad, before backward(end − 1)) and ends
    // with the gradient of the stage's input (takeInputGrad, after backward(first)). Both are
    // [micro-batch × context × d] fp32: boundaryFloats().
    std::uint64_t boundaryFloats() const { return static_cast<std::uint64_t>(tokens_ * d_); }
    void setInput(std::int32_t unit, device::Buffer input);
    device::Buffer takeOutput(std::int32_t unit);
    void setOutputGrad(device::Buffer grad);
    device::Buffer takeInputGrad();

    // The TP group (its size must be shape.tp; it must outlive the model). Needed when
    // shape.tp > 1; this rank's slice is the group rank.
    void setTensorGroup(comm::Communicator* group);

private:
    class Bf16Params; // sets paramsBf16_ for one call
    struct BlockActs {
        device::Buffer ln1Stats, ln1Out, qkv, attnProbs, attnOut, resid1, ln2Stats, ln2Out, fcPre,
            geluOut;
        void reset();
    };
    struct HeadActs {
        device::Buffer lnfStats, lnfOut, probs, targets;
    };

    // What a unit's W needs from its B (backwardInput): per linear layer its input x and output
    // gradient dy; the LayerNorms' gradients B computed (normGradSlots' order, d floats each);
    // the embedding's token ids and output gradient.
    struct DeferredLinear {
        device::Buffer x, dy;
        const char* weight = nullptr;
        const char* bias = nullptr;
        std::int64_t rows = 0, in = 0, out = 0;
    };
    struct Deferred {
        bool pending = false;
        std::vector<DeferredLinear> linears;
        device::Buffer normGrads, tokenIds, embeddingGrad;
    };

    device::Buffer activation(std::uint64_t floats, std::int32_t unit);
    device::Buffer workspace(std::uint64_t floats, std::int32_t unit, bool zeroed);
    const float* slot(const float* params, std::int32_t unit, const char* name) const;
    float* slot(float* grads, std::int32_t unit, const char* name) const;
    // Where a LayerNorm's parameter gradient goes: its slot of `grads`, or during a B the unit's
    // small buffer (Deferred::normGrads) that W copies into place.
    float* normGrad(float* grads, std::int32_t unit, const char* name);
    // A linear layer y (+)= x·W + b of the unit's tensors named `w` and `bias` (may be null), and
    // its backward: fp32 GEMMs, or bf16 ones with bf16Gemm_ — then x is a GEMM input
    // made by gemmInput (bf16) and dy is copied to bf16 workspace for the call. During a B
    // (splitting_) linearGrad computes dx only and keeps x (moved out of the caller's buffer)
    // and dy (moved from dyOwner where the caller is done with it, else copied) for W.
    void linear(std::int32_t unit, const float* p, const device::Buffer& x, const char* w,
                const char* bias, float* y, std::int64_t rows, std::int64_t in, std::int64_t out,
                bool accumulate);
    void linearGrad(std::int32_t unit, const float* p, float* g, const float* dy, device::Buffer& x,
                    const char* w, const char* bias, float* dx, std::int64_t rows, std::int64_t in,
                    std::int64_t out, device::Buffer* dyOwner = nullptr);
    // W of one deferred linear layer: dW and dbias into the unit's gradient `g`.
    void weightGrad(std::int32_t unit, float* g, const DeferredLinear& l);
    // An activation only linear layers read (LayerNorm, attention and GELU outputs): `produce`
    // writes it in fp32; on the bf16 path it is kept in bf16 (as autocast saves the cast copy),
    // the fp32 values a transient workspace.
    template <class Produce>
    device::Buffer gemmInput(std::uint64_t n, std::int32_t unit, Produce produce);

    void embeddingForward(const float* params, const Batch& batch);
    void blockForward(std::int32_t unit, const float* params, BlockActs& acts, bool keepOutput);
    void headForward(const float* params, const Batch& batch);
    void embeddingBackward(float* grads);
    void blockBackward(std::int32_t unit, const float* params, float* grads);
    void headBackward(const float* params, float* grads);
    // Sums a row-parallel output or a column-parallel input gradient over the TP group.
    void tpSum(device::Buffer& b, std::uint64_t floats, std::int32_t unit);

    ModelConfig config_;
    device::Device& device_;
    device::Ops& ops_; // the device's arithmetic (CPU kernels or CUDA kernels on its stream)
    std::vector<plan::UnitLayout> units_;
    std::int64_t tokens_;
    std::int64_t d_;

    device::Buffer tokenIds_;          // embedding: the input ids (needed by its backward)
    std::vector<device::Buffer> outs_; // outs_[u]: unit u's output = unit u+1's input
    std::vector<BlockActs> blocks_;    // indexed by unit (embedding/head slots unused)
    HeadActs head_;
    device::Buffer gradStream_;            // ∂L/∂(output of the unit whose backward runs next)
    comm::Communicator* tensor_ = nullptr; // the TP group (shape.tp > 1)
    std::int64_t tpRank_ = 0;
    double loss_ = 0.0;
    bool bf16Gemm_ = false;
    const Bf16* paramsBf16_ = nullptr; // the unit's bf16 parameters during forward/backward
    std::vector<Deferred> deferred_;   // by unit: what each unit's W waits for
    Deferred* splitting_ = nullptr;    // during a B: the unit's Deferred
};

} // namespace shardscope::model
