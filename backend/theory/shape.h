#pragma once
// The theory engine's shapes and units are plan's (backend/plan/shape.h).
#include "plan/shape.h"

namespace shardscope::theory {

using plan::GptShape;
using plan::paddedElements;
using plan::paramCount;
using plan::UnitParams;
using plan::unitParams;
using plan::validate;

} // namespace shardscope::theory
