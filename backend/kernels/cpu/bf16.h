#pragma once
// Bulk bfloat16 conversions; the type and its scalar conversions are core vocabulary
// (core/numeric.h).
#include "core/numeric.h"

#include <span>

namespace shardscope::kernels {

using shardscope::Bf16;
using shardscope::toBf16;
using shardscope::toFloat;

// Bulk conversions; sizes must match (checked, throws Error(Internal)).
void toBf16(std::span<const float> in, std::span<Bf16> out);
void toFloat(std::span<const Bf16> in, std::span<float> out);

} // namespace shardscope::kernels
