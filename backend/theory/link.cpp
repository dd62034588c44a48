#include "theory/link.h"

#include "plan/collective.h"

#include <algorithm>

namespace shardscope::theory {

LinkEstimate estimateCollectives(const LinkModel& link, CollectiveOp op, double sentBytes,
                                 double calls, int groupSize) {
    LinkEstimate e;
    if (op == CollectiveOp::None || groupSize < 2 || !(calls > 0)) return e;
    // The ring's steps: as many as the busbw factor's numerator says (an all-reduce goes round
    // twice); a pipelined broadcast once.
    const std::uint32_t rounds = std::max<std::uint32_t>(plan::traits(op).busNumerator, 1);
    const double hops = rounds * (groupSize - 1.0);
    e.latencySeconds = calls * (link.callLatencyUs + hops * link.hopLatencyUs) * 1e-6;
    e.bandwidthSeconds = std::max(sentBytes, 0.0) / (link.busGBs * 1e9);
    return e;
}

} // namespace shardscope::theory
