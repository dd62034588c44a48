#pragma once
// The words on a Timeline bar: the unit, then what it does — a collective's or transfer's short
// name, a pipeline op by micro-batch (F3, B3, W3; F3.1 with virtual stages: micro-batch 3 through
// the rank's chunk 1), a message's micro-batch (#3). Translated in TimelinePainter's context.
#include "timeline/timeline_paint.h"

#include <QString>

namespace shardscope::widgets {

QString timelineBoxLabel(const TimelineScene& scene, const replay::TimelineSpan& span,
                         bool microLabels, int rank);

} // namespace shardscope::widgets
