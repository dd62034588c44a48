#pragma once
// Where a unit's parameters, gradients and optimizer states live on one rank, and how they move
// between ranks around the step driver's (train::Trainer) forward, backward and optimizer.
//
// Note: one implementation (strategy/sharded.cpp) serves every strategy; a strategy is a Policy
// (plan/policy.h) — which states are sharded, when parameters are unsharded and resharded, how
// gradients are reduced — not a class hierarchy. The driver calls, per micro-step:
//   forward:  beforeForward(u) → params(u) → afterForward(u)                    u = 0 … U−1
//   backward: beforeBackward(u) → params(u) → storeGradients(u, fp32) → afterBackward(u)
//                                                                              u = U−1 … 0
//             endBackward()
// A split backward (the zb1 pipeline schedule) calls afterBackward's two halves apart: in its B
// beforeBackward(u) → params(u) → afterInputGradients(u) (the parameters may be resharded), in
// its W, later, storeGradients(u) → afterWeightGradients(u) for every unit, then endBackward().
// then owned(u) for the optimizer (AdamW on the rank's slice) and afterOptimizer().
// Every allocation goes through the device (ledger category per docs/design.md), every transfer
// through a comm::Communicator (events + CommStats), so the ledger and the counters are
// measurements of what this code did.
#include "comm/communicator.h"
#include "device/device.h"
#include "offload/nvme_store.h"
#include "plan/shape.h"
#include "plan/strategy.h"
#include "plan/units.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace shardscope::strategy {

// The communicators a rank takes part in. `world` is every rank of the job. With tensor
// parallelism (a T × D mesh) `tensor` is this rank's TP group (T consecutive ranks) and `data`
// its DP group (the D ranks holding the same TP slice, stride T); without it both may be null
// (data = world). `shard` is where a unit's flat buffer is split (the DP group, or the
// HYBRID_SHARD group inside it); `replica` joins the ranks that hold the same shard
// (HYBRID_SHARD only). With pipeline parallelism (a P × T × D mesh) `pipe` joins the ranks of
// the same DP and TP position across the P stages (group rank = stage), and tensor/data are the
// stage's groups. A single-rank run may pass the same self communicator everywhere.
struct CommGroups {
    comm::Communicator* world = nullptr;
    comm::Communicator* shard = nullptr;
    comm::Communicator* replica = nullptr;
    comm::Communicator* tensor = nullptr;
    comm::Communicator* data = nullptr;
    comm::Communicator* pipe = nullptr;
    std::vector<comm::Communicator*> distinct() const; // each communicator once
};

struct StrategyConfig {
    plan::Strategy strategy = plan::Strategy::Ddp;
    plan::Knobs knobs{};
    plan::PrecisionKind precision = plan::PrecisionKind::MixedBf16; // MixedBf16 or Fp32
    plan::GptShape shape{};
    std::uint64_t seed = 0; // parameter initialisation
    // ZeRO-Offload: master, m, v in the host or NVMe tier (the gradient shards the CPU optimizer
    // reads, where grads are sharded, in the host tier); param shards in the host tier (ZeRO-3 /
    // FSDP).
    plan::Offload offload{};
    offload::NvmeOptions nvme{}; // where and how the NVMe tier's file is written (offload nvme)
    // Pipeline parallelism: the rank's stage holds the units [firstUnit, endUnit) (endUnit 0:
    // every unit). units() stays the whole model's list; the others have no states here. With
    // V > 1 virtual stages (the interleaved schedule) it holds V chunks (plan::stageChunks of the
    // pipe group's size and rank), and [firstUnit, endUnit) is their span.
    std::int32_t firstUnit = 0;
    std::int32_t endUnit = 0;
    int virtualStages = 1;
};

struct MicroStep {
    int index = 0;
    int count = 1;
    bool first() const { return index == 0; }
    bool last() const { return index + 1 == count; }
};

// The full (padded) working copy of a unit: bf16 in mixed precision, fp32 otherwise.
struct ParamView {
    const void* data = nullptr;
    bool bf16 = true;
};

// What the optimizer updates on this rank for one unit: elements [begin, end) of the unit's
// flat index space (padding beyond the unit's elements is never updated). Index i of the unit
// is weights[i − begin], grads[i − begin], m[i − begin], v[i − begin].
struct OwnedSlice {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    float* weights = nullptr;    // fp32 master shard, or the fp32 params themselves
    const void* grads = nullptr; // the reduced gradient SUM over ranks (and micro-steps)
    bool gradsBf16 = true;
    float* m = nullptr;
    float* v = nullptr;
    // The part of the unit whose squared gradient this rank adds to the global norm: the
    // ranges of all ranks partition every unit exactly once.
    std::uint64_t normBegin = 0;
    std::uint64_t normEnd = 0;
    // ZeRO-Offload: weights, m and v are host-tier memory (the CPU optimizer updates them);
    // grads are host memory too where gradsOnHost, device memory otherwise.
    bool stateOnHost = false;
    bool gradsOnHost = false;
};

class Sharding {
public:
    virtual ~Sharding() = default;
    Sharding() = default;
    Sharding(const Sharding&) = delete;
    Sharding& operator=(const Sharding&) = delete;

    virtual std::string name() const = 0;
    virtual const std::vector<plan::UnitLayout>& units() const = 0;
    virtual comm::Communicator& world() = 0;
    // Ranks that see different data (the data-parallel world size) and this rank's index.
    virtual int dataRank() const = 0;
    virtual int dataRanks() const = 0;
    // The DP group (the world without tensor parallelism) and the TP group (null: none).
    virtual comm::Communicator& dataGroup() { return world(); }
    virtual comm::Communicator* tensorGroup() { return nullptr; }
    // The pipeline group (null: one stage) and the units of this rank's stage [first, end). A
    // wrapper around another Sharding must forward them (no default: a wrapper that did not
    // would turn a stage into a whole model).
    virtual comm::Communicator* pipeGroup() = 0;
    virtual std::int32_t firstUnit() const = 0;
    virtual std::int32_t endUnit() const = 0;

    virtual void beforeForward(std::int32_t unit) = 0;
    virtual void afterForward(std::int32_t unit) = 0;
    virtual void beforeBackward(std::int32_t unit) = 0;
    virtual ParamView params(std::int32_t unit) const = 0;
    // The unit's local fp32 gradient of this micro-step (its unpadded elements).
    virtual void storeGradients(std::int32_t unit, std::span<const float> grads,
                                const MicroStep& micro) = 0;
    // Reshards what the backward read (after the input gradients), then reduces the gradients.
    void afterBackward(std::int32_t unit, const MicroStep& micro) {
        afterInputGradients(unit);
        afterWeightGradients(unit, micro);
    }
    virtual void afterInputGradients(std::int32_t unit) = 0;
    virtual void afterWeightGradients(std::int32_t unit, const MicroStep& micro) = 0;
    virtual void endBackward(const MicroStep& micro) = 0;

    virtual OwnedSlice owned(std::int32_t unit) = 0;
    // The optimizer's view of one unit around its update, given owned(unit): beginUpdate brings
    // states that live in files (the NVMe tier) into host staging and points the slice at them;
    // endUpdate writes them back. Elsewhere the slice is unchanged and endUpdate does nothing. A
    // wrapper around another Sharding forwards both.
    virtual OwnedSlice beginUpdate(std::int32_t unit, OwnedSlice slice) {
        (void)unit;
        return slice;
    }
    virtual void endUpdate(std::int32_t unit) { (void)unit; }
    virtual void afterOptimizer() = 0;

    // Collective over the world: the unpadded fp32 weights of every unit, at world rank 0
    // (other ranks get an empty vector). Instrumentation traffic: no events, no CommStats.
    virtual std::vector<std::vector<float>> gatherWeights() = 0;

    // Frees every transient buffer (a step abandoned midway): the ledger returns to the states.
    virtual void discardTransients() = 0;
};

// The strategy for `config` over `groups` (see plan/policy.h for what each strategy does).
// Allocates and initialises the model states; throws Error(OutOfMemory) when they exceed the
// ledger's capacity, Error(InvalidArgument) for a configuration the strategy cannot run
// (offloading the optimizer without a sharded optimizer or in fp32, params without sharded
// params or to NVMe, the NVMe tier without a directory or liburing), Error(Io) when the NVMe
// tier's file cannot be created or written.
std::unique_ptr<Sharding> makeSharding(const StrategyConfig& config, device::Device& device,
                                       const CommGroups& groups);

} // namespace shardscope::strategy
