#pragma once
// Translated display names for the theory engine's enums (the engine keeps its CLI names).
#include "plan/strategy.h"

#include <QString>

namespace shardscope::widgets {

QString strategyLabel(plan::Strategy s);
// Short form for chart legends and bar labels, e.g. "FSDP grad-op".
QString strategyShortLabel(plan::Strategy s);
QString precisionLabel(plan::PrecisionKind k);

} // namespace shardscope::widgets
