#pragma once
// Translated display names for the theory engine's enums (the engine keeps its CLI names).
#include <QString>

#include "theory/policy.h"

namespace shardscope::widgets {

QString strategyLabel(theory::Strategy s);
// Short form for chart legends and bar labels, e.g. "FSDP grad-op".
QString strategyShortLabel(theory::Strategy s);
QString precisionLabel(theory::PrecisionKind k);

} // namespace shardscope::widgets
