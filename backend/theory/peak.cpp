// The closed-form peak (estimate.h: closedFormPeak) and the bound on gathered parameters.
// A shaped scenario's peak is predict::predictPeak's dry run of the real step; these formulas
// are the ZeRO paper's view and the independent checks of that dry run.
#include "theory/estimate.h"
#include "theory/shard_plan.h"

#include <algorithm>

namespace shardscope::theory {

std::uint64_t gatheredBytesBound(const Scenario& s) {
    const plan::Policy policy = detail::policyOf(s);
    if (!policy.reshardAfterForward) return 0;
    const detail::ShardPlan plan = detail::makePlan(s);
    const auto inflight = std::min<std::uint64_t>(static_cast<std::uint64_t>(policy.gatherWindow),
                                                  plan.gatheredUnitCount());
    return plan.largestGatheredUnit() * s.precision.paramBytes() * inflight;
}

PeakPrediction closedFormPeak(const Scenario& s) {
    const ModelStates states = modelStates(s);
    const detail::ShardPlan plan = detail::makePlan(s);
    const plan::Policy policy = detail::policyOf(s);
    const std::uint64_t g = s.precision.gradBytes();
    PeakPrediction out;
    out.modelStates = states.perRank;
    out.paddingBytes = states.paddingBytes;
    // States + one gathered unit (+ prefetch) + a gradient + a bucket.
    out.notes.emplace_back(
        s.shape || !s.units.empty()
            ? "closed form: activations and workspaces are not predicted"
            : "no model shape: activations and workspaces are not predicted and the whole "
              "model counts as one unit");
    out.gatheredBytes = gatheredBytesBound(s);
    if (policy.shardGrads) {
        std::uint64_t largest = 0;
        for (const auto& u : plan.units)
            largest = std::max(largest, u.padded);
        out.gradFullBytes = policy.keepFullGrads ? plan.fullBytes(g) : largest * g;
    }
    if (!policy.shardParams)
        out.bucketBytes = std::min(s.knobs.reduceBucketBytes, plan.fullBytes(g));
    out.peakBytes =
        states.perRank.tier(Tier::Device) + out.gatheredBytes + out.gradFullBytes + out.bucketBytes;
    out.tierPeaks = {out.peakBytes, states.perRank.tier(Tier::Host),
                     states.perRank.tier(Tier::Nvme)};
    out.atPeak = states.perRank;
    out.atPeak.at(Category::ParamFull, Tier::Device) += out.gatheredBytes;
    out.atPeak.at(Category::GradFull, Tier::Device) += out.gradFullBytes;
    out.atPeak.at(Category::CommBuffer, Tier::Device) += out.bucketBytes;
    out.categoryPeaks = out.atPeak;
    out.peakPhase = "backward";
    return out;
}

} // namespace shardscope::theory
