#include "strategy/policy.h"

#include <algorithm>

namespace shardscope::strategy {

Policy policyFor(theory::Strategy strategy, const theory::Knobs& knobs) {
    using theory::Strategy;
    Policy p;
    p.strategy = strategy;
    const bool fsdp = strategy == Strategy::FsdpFullShard || strategy == Strategy::FsdpShardGradOp ||
                      strategy == Strategy::FsdpHybridShard;
    p.shardOptimizer = strategy != Strategy::Ddp;
    p.shardGrads = strategy != Strategy::Ddp && strategy != Strategy::Zero1;
    p.shardParams = strategy == Strategy::Zero3 || fsdp;
    p.bucketedReduce = !p.shardParams;
    // ZeRO-2/3 keep no full gradient between micro-steps; FSDP does unless no_sync.
    p.reduceEveryMicroStep = strategy == Strategy::Zero2 || strategy == Strategy::Zero3 ||
                             (fsdp && !(knobs.noSync && knobs.gradAccumSteps > 1));
    if (strategy == Strategy::Zero3) p.reshardAfterForward = true;
    if (strategy == Strategy::FsdpFullShard || strategy == Strategy::FsdpHybridShard)
        p.reshardAfterForward = knobs.reshardAfterForward;
    p.hybrid = strategy == Strategy::FsdpHybridShard;
    int window = 1 + std::max(0, knobs.prefetchDepth);
    if (fsdp) window = std::min(window, std::max(1, knobs.maxInflightAllGathers));
    p.gatherWindow = window;
    if (strategy == Strategy::Zero3) p.persistenceThreshold = knobs.persistenceThresholdParams;
    return p;
}

} // namespace shardscope::strategy
