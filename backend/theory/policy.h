#pragma once
// The theory engine speaks plan's vocabulary (backend/plan/strategy.h): a scenario's strategy,
// precision, offload, knobs and activation settings are plan's types under theory's names.
#include "plan/strategy.h"

namespace shardscope::theory {

using plan::ActivationConfig;
using plan::allStrategies;
using plan::classicStrategies;
using plan::Knobs;
using plan::Offload;
using plan::parsePrecision;
using plan::parseStrategy;
using plan::Precision;
using plan::PrecisionKind;
using plan::precisionName;
using plan::Strategy;
using plan::strategyName;

} // namespace shardscope::theory
