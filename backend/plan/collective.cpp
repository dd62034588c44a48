// Collective traits (collective.h).
#include "plan/collective.h"

namespace shardscope::plan {

namespace {

constexpr bool tableInEnumOrder() {
    for (std::size_t i = 0; i < kCollectiveTraits.size(); ++i)
        if (static_cast<std::size_t>(kCollectiveTraits[i].op) != i) return false;
    return true;
}
static_assert(tableInEnumOrder(), "kCollectiveTraits: one row per CollectiveOp, in enum order");

// 128-bit intermediates for payload·2·(N−1) before the division (GCC/Clang extension;
// __extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 Uint128;

} // namespace

double busBandwidthFactor(CollectiveOp op, int ranks) {
    const CollectiveTraits& t = traits(op);
    if (t.fullPayload) return 1.0;
    if (ranks <= 1) return 0.0;
    const double n = ranks;
    return t.busNumerator * (n - 1.0) / n;
}

double busBandwidth(CollectiveOp op, std::uint64_t payload, double seconds, int ranks) {
    if (seconds <= 0) return 0.0;
    return static_cast<double>(payload) / seconds * busBandwidthFactor(op, ranks);
}

std::uint64_t sentBytes(CollectiveOp op, std::uint64_t payload, std::uint64_t ranks) {
    if (ranks <= 1) return 0;
    const CollectiveTraits& t = traits(op);
    if (t.fullPayload) return payload;
    return static_cast<std::uint64_t>(static_cast<Uint128>(payload) * t.busNumerator * (ranks - 1) /
                                      ranks);
}

} // namespace shardscope::plan
