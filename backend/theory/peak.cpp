// Predicted peak device bytes per rank (estimate.h: predictPeak): model states + activations
// + gathered units in flight + transient full gradients + communication buckets.
#include <algorithm>

#include "theory/activations.h"
#include "theory/estimate.h"
#include "theory/shard_plan.h"

namespace shardscope::theory {

namespace {

// Units gathered at once: the one computing plus the prefetched ones (DeepSpeed
// stage3_prefetch_bucket_size / FSDP forward_prefetch), capped by FSDP's limit_all_gathers.
std::uint64_t unitsInFlight(const Scenario& s, const detail::ShardPlan& plan) {
    std::uint64_t inflight = 1 + static_cast<std::uint64_t>(s.knobs.prefetchDepth);
    if (detail::isFsdp(s.strategy))
        inflight = std::min<std::uint64_t>(inflight, static_cast<std::uint64_t>(s.knobs.maxInflightAllGathers));
    return std::min<std::uint64_t>(inflight, plan.gatheredUnitCount());
}

bool shardsGrads(Strategy s) { return s != Strategy::Ddp && s != Strategy::Zero1; }

} // namespace

PeakPrediction predictPeak(const Scenario& s) {
    const ModelStates states = modelStates(s);
    const detail::ShardPlan plan = detail::makePlan(s);
    const std::uint64_t p = s.precision.paramBytes();
    const std::uint64_t g = s.precision.gradBytes();
    PeakPrediction out;
    out.modelStates = states.perRank;
    out.paddingBytes = states.paddingBytes;

    if (s.shape) {
        out.activationBytes = activationBreakdown(*s.shape, s.activations).peakBytes;
    } else {
        out.notes.emplace_back("no model shape: activations are not predicted and the whole model "
                               "counts as one unit");
    }
    // ZeRO paper §5.3 / FSDP §3.2: a resharding strategy unshards one unit at a time (plus
    // prefetch); the unsharded buffer is padded to a multiple of the shard count.
    if (detail::reshardsAfterForward(s)) {
        const std::uint64_t largest = plan.largestGatheredUnit();
        const std::uint64_t inflight = unitsInFlight(s, plan);
        out.gatheredBytes = largest * p * inflight;
        for (const auto& u : plan.units)
            if (!u.persistent && u.padded == largest) {
                out.paddingBytes += (u.padded - u.params) * p * inflight;
                break;
            }
    }
    // A unit's full gradient exists until its reduce-scatter; FSDP no_sync keeps all of them.
    if (shardsGrads(s.strategy)) {
        const bool keepAll = detail::isFsdp(s.strategy) && s.knobs.noSync && s.knobs.gradAccumSteps > 1;
        std::uint64_t largest = 0;
        for (const auto& u : plan.units) largest = std::max(largest, u.padded);
        out.gradFullBytes = keepAll ? plan.fullBytes(g) : largest * g;
    }
    // DDP / ZeRO-1/2 stage gradients through one reduce bucket at a time.
    if (!detail::shardsParams(s.strategy))
        out.bucketBytes = std::min(s.knobs.reduceBucketBytes, plan.fullBytes(g));

    out.peakBytes = states.perRank.tier(Tier::Device) + out.activationBytes + out.gatheredBytes +
                    out.gradFullBytes + out.bucketBytes;
    out.notes.emplace_back("workspaces (GEMM scratch, loss) and allocator fragmentation are not included");
    return out;
}

} // namespace shardscope::theory
