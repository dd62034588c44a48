#pragma once
// Internal to backend/theory: how a scenario's parameters split into units and shards.
// Shared by estimate.cpp (model states), comm.cpp (volumes) and peak.cpp (the closed form).
#include "plan/policy.h"
#include "theory/estimate.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::theory::detail {

// 128-bit intermediates for products like Ψ·b·(P−1) before a division (GCC/Clang extension;
// __extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 Uint128;

struct PlanUnit {
    std::string name;
    std::uint64_t params = 0; // elements before padding
    std::uint64_t padded = 0; // elements padded to a multiple of the shard count
    bool persistent = false;  // ZeRO-3 param persistence: the param stays whole on every rank
    int chunk = 0;            // the pipeline chunk holding it (interleaved: 0 … V − 1)
};

struct ShardPlan {
    bool bare = true;         // no shape: the ZeRO paper's view, one unpadded unit of Ψ
    std::uint64_t shards = 1; // shard count S
    std::uint64_t params = 0; // Ψ
    std::vector<PlanUnit> units;

    // Bytes one rank holds of a sharded state with `bytesPerElement`. With a shape: Σ padded/S
    // per unit. Bare: ⌈Ψ·b / S⌉ — exact whenever S divides Ψ·b, else < 1 byte above Ψ·b/S.
    std::uint64_t shardBytes(std::uint64_t bytesPerElement, bool includePersistent = true) const;
    // Bytes of the full (unsharded, padded) flat buffers of the selected units.
    std::uint64_t fullBytes(std::uint64_t bytesPerElement, bool persistentOnly = false,
                            bool includePersistent = true) const;
    std::uint64_t paddedTotal() const;
    std::uint64_t largestGatheredUnit() const; // padded elements of the largest sharded unit
    std::size_t gatheredUnitCount() const;     // units that are sharded and unsharded per pass
};

ShardPlan makePlan(const Scenario& s);

// What the scenario's strategy does with its knobs (the one classification, plan/policy.h).
inline plan::Policy policyOf(const Scenario& s) {
    return plan::policyFor(s.strategy, s.knobs);
}

} // namespace shardscope::theory::detail
