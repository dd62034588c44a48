#pragma once
// The strategies as data: what each one shards, when it unshards/reshards parameters and how
// it reduces gradients (docs/design.md "Step semantics"). This is the one classification of a
// strategy: backend/strategy runs it, theory/ predicts it, the GUI greys out knobs by it.
//
//   DDP        full params, grads, optimizer; gradients accumulate locally over micro-steps and
//              are all-reduced once per step in buckets of reduceBucketBytes during the last
//              backward (PyTorch DDP with no_sync during accumulation).
//   ZeRO-1     optimizer states sharded; full gradients accumulate locally and are
//              reduce-scattered (bucketed) after the last backward (DeepSpeed stage 1 reduces at
//              the accumulation boundary); the rank updates its slice; updated params are
//              all-gathered in buckets of allGatherBucketBytes.
//   ZeRO-2     as ZeRO-1, but each unit's full gradient is packed into the reduce bucket right
//              after its backward and freed; buckets are reduce-scattered during backward, every
//              micro-step, and the shards accumulate.
//   ZeRO-3     params sharded too: unshard (all-gather) before forward and again before backward,
//              reshard after each; prefetchDepth units ahead are gathered before the current one
//              computes; units with ≤ persistenceThresholdParams parameters stay whole (and are
//              all-gathered after the optimizer). Gradients reduce-scatter per unit after its
//              backward, every micro-step.
//   FSDP       as ZeRO-3 with FSDP's knobs: reshard_after_forward (SHARD_GRAD_OP = false: params
//              stay gathered from forward until the unit's backward), in-flight all-gathers
//              limited to maxInflightAllGathers, no_sync (full gradients kept and accumulated
//              locally, reduce-scattered in the last micro-step), HYBRID_SHARD (shard within a
//              group of hybridGroupSize ranks, all-reduce the shard across the groups).
#include "plan/strategy.h"

#include <cstdint>

namespace shardscope::plan {

struct Policy {
    Strategy strategy = Strategy::Ddp;
    bool fsdp = false;                 // one of the FSDP flavours (FSDP's knobs apply)
    bool shardOptimizer = false;       // master, m, v hold the rank's slice only
    bool shardGrads = false;           // grad_shard persists; grad_full is transient
    bool shardParams = false;          // param_shard persists; param_full is gathered on demand
    bool bucketedReduce = false;       // DDP / ZeRO-1 / ZeRO-2: gradients go through reduce buckets
    bool reduceEveryMicroStep = false; // else: accumulate locally, reduce in the last micro-step
    // FSDP no_sync over several micro-steps: full gradients of every unit are kept until the last.
    bool keepFullGrads = false;
    bool reshardAfterForward =
        false; // params all-gathered before forward and again before backward
    bool keepsParamsGathered = false; // sharded params stay gathered from forward to backward
    bool hybrid = false;
    int hybridGroup = 0;  // HYBRID_SHARD: ranks per shard group
    int gatherWindow = 1; // units unsharded at once in a pass: the current one + prefetch
    std::uint64_t persistenceThreshold = 0; // ZeRO-3: units this small are never sharded

    // Ranks a unit's flat buffer is split over: 1 for DDP, the hybrid group, N else.
    int shardCount(int ranks) const;
    // Which knobs change this strategy's step (the others are ignored by it).
    bool usesPrefetch() const { return shardParams; }
    bool usesReshardAfterForward() const { return strategy == Strategy::FsdpFullShard || hybrid; }
    bool usesMaxInflight() const { return fsdp; }
    bool usesPersistence() const { return strategy == Strategy::Zero3; }
    bool usesHybridGroup() const { return hybrid; }
    bool usesNoSync() const { return fsdp; }
};

Policy policyFor(Strategy strategy, const Knobs& knobs);
// The classification alone (knobs at their defaults): what a strategy shards.
inline Policy policyFor(Strategy strategy) {
    return policyFor(strategy, Knobs{});
}

} // namespace shardscope::plan
