// The one strategy classification (policy.h).
#include "plan/policy.h"

#include <algorithm>

namespace shardscope::plan {

Policy policyFor(Strategy strategy, const Knobs& knobs) {
    Policy p;
    p.strategy = strategy;
    p.fsdp = strategy == Strategy::FsdpFullShard || strategy == Strategy::FsdpShardGradOp ||
             strategy == Strategy::FsdpHybridShard;
    p.shardOptimizer = strategy != Strategy::Ddp;
    p.shardGrads = strategy != Strategy::Ddp && strategy != Strategy::Zero1;
    p.shardParams = strategy == Strategy::Zero3 || p.fsdp;
    p.bucketedReduce = !p.shardParams;
    p.keepFullGrads = p.fsdp && knobs.noSync && knobs.gradAccumSteps > 1;
    // ZeRO-2/3 keep no full gradient between micro-steps; FSDP does only under no_sync.
    p.reduceEveryMicroStep =
        strategy == Strategy::Zero2 || strategy == Strategy::Zero3 || (p.fsdp && !p.keepFullGrads);
    // DeepSpeed releases after each module; SHARD_GRAD_OP keeps params from forward to backward.
    if (strategy == Strategy::Zero3) p.reshardAfterForward = true;
    if (strategy == Strategy::FsdpFullShard || strategy == Strategy::FsdpHybridShard)
        p.reshardAfterForward = knobs.reshardAfterForward;
    p.keepsParamsGathered = p.shardParams && !p.reshardAfterForward;
    p.hybrid = strategy == Strategy::FsdpHybridShard;
    p.hybridGroup = p.hybrid ? knobs.hybridGroupSize : 0;
    int window = 1 + std::max(0, knobs.prefetchDepth);
    if (p.fsdp) window = std::min(window, std::max(1, knobs.maxInflightAllGathers));
    p.gatherWindow = window;
    if (strategy == Strategy::Zero3) p.persistenceThreshold = knobs.persistenceThresholdParams;
    return p;
}

int Policy::shardCount(int ranks) const {
    if (strategy == Strategy::Ddp) return 1;
    if (hybrid) return std::max(1, hybridGroup); // a group of 0 is refused by validation
    return ranks;
}

} // namespace shardscope::plan
