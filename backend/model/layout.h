#pragma once
// The model's part of the sharding units: their initialisation. The layout itself is plan's
// (plan/units.h, the one list of units and tensor slots).
#include "plan/units.h"

#include <cstdint>

namespace shardscope::model {

// GPT-2 initialisation, deterministic in (seed, unit index): weights N(0, 0.02), the two
// residual projections N(0, 0.02/√(2L)), biases 0, LayerNorm γ = 1, β = 0. `flat` may be
// longer than the layout (padding); the padding is set to 0.
void initUnit(const plan::UnitLayout& layout, std::int64_t layers, std::uint64_t seed,
              std::int32_t unitIndex, float* flat, std::uint64_t flatElements);

} // namespace shardscope::model
