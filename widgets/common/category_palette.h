#pragma once
// One colour per ledger category, shared by every view (calculator bars, rank ledgers,
// timeline, flows) so "adam_m is orange" holds everywhere in the app.
#include <QColor>
#include <QString>
#include <array>

#include "core/categories.h"
#include "replay/timeline_index.h"

namespace shardscope::widgets {

QColor categoryColor(Category c);
// Translated, human-readable category name; the wire name (categoryName) stays in tooltips.
QString categoryLabel(Category c);
QString tierLabel(Tier t);
// Bar stacking order, bottom to top: persistent states first, transient on top.
const std::array<Category, kCategoryCount>& categoryStackOrder();
// One colour per timeline span kind (compute phases, collectives, gathered parameters), shared
// by the timeline and the compare page's communication bars.
QColor spanKindColor(replay::SpanKind k);

} // namespace shardscope::widgets

namespace shardscope::widgets {
// One colour per strategy, for every chart that compares strategies (calculator, compare page).
QColor strategyColor(int strategyIndex);
} // namespace shardscope::widgets
