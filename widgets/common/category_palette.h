#pragma once
// The app's one palette. Every colour that carries a meaning comes from here, drawn from one of
// four families whose hues never overlap, so a colour means the same thing on every page:
//   memory      ledger categories and tiers     greens, teals, blues   (hue  62°–233°)
//   activities  compute phases and collectives  reds, oranges, yellows (hue 345°–55°)
//   transfers   state crossing tiers            blue-violets           (hue 235°–248°)
//   ranks       ranks and strategies            violets, magentas      (hue 250°–335°)
// Greys (no hue) mean "no meaning of their own": theory lines, idle states, axes.
// Each page says which families it uses in a legend line (common/palette_legend.h).
#include "core/categories.h"
#include "replay/timeline_index.h"

#include <QColor>
#include <QString>
#include <array>
#include <vector>

namespace shardscope::widgets {

enum class ColorFamily : std::uint8_t { Memory, Activities, Ranks, Transfers };
inline constexpr std::size_t kColorFamilyCount = 4;

// What a rank is busy with: the timeline's compute phases and collectives, plus the
// tensor-parallel all-reduce of a layer's partial outputs and a pipeline stage's messages.
enum class Activity : std::uint8_t {
    Forward,
    Backward,
    Recompute,
    Optimizer,
    AllGather,
    ReduceScatter,
    AllReduce,
    Broadcast,
    TpAllReduce,
    Save,
    PipeSend,
    PipeRecv,
    WeightGrad,
};
inline constexpr std::size_t kActivityCount = 13;
// The span kind each activity colours, in Activity's order: the compute and communication rows.
inline constexpr std::array<replay::SpanKind, kActivityCount> kActivityKinds = {
    replay::SpanKind::Forward,   replay::SpanKind::Backward,  replay::SpanKind::Recompute,
    replay::SpanKind::Optimizer, replay::SpanKind::AllGather, replay::SpanKind::ReduceScatter,
    replay::SpanKind::AllReduce, replay::SpanKind::Broadcast, replay::SpanKind::TpAllReduce,
    replay::SpanKind::Save,      replay::SpanKind::PipeSend,  replay::SpanKind::PipeRecv,
    replay::SpanKind::WeightGrad};
constexpr bool activitiesAreComputeAndComm() {
    for (const replay::SpanKind k : kActivityKinds)
        if (replay::rowOf(k) != replay::TimelineRow::Compute &&
            replay::rowOf(k) != replay::TimelineRow::Comm)
            return false;
    return true;
}
static_assert(activitiesAreComputeAndComm());
constexpr Activity activityOf(replay::SpanKind k) {
    for (std::size_t i = 0; i < kActivityKinds.size(); ++i)
        if (kActivityKinds[i] == k) return static_cast<Activity>(i);
    return Activity::Forward;
}

// Memory family.
QColor categoryColor(Category c);
QColor tierColor(Tier t);
// Activities family.
QColor activityColor(Activity a);
// Transfers family: device → host, host → device, NVMe read, NVMe write (Transfer::None: grey).
QColor transferColor(Transfer t);
// The timeline's span kinds: activities, transfers, and a gathered unit's lifetime (param_full,
// memory).
QColor spanKindColor(replay::SpanKind k);
// Ranks family: one colour per strategy (calculator, compare, ranks pages) and per rank.
QColor strategyColor(int strategyIndex);
QColor rankColor(int rank, int ranks);
// Neutral (no hue): reference lines, idle states.
QColor neutralColor(int lightness); // 0 black … 255 white

// A failure or a crossed limit: text and outlines only, never a fill, so it never reads as an
// activity.
QColor alertColor();
// Black or white, whichever reads on `background`.
QColor textOn(const QColor& background);

// Every colour of a family (tests check the families' hues are disjoint; legends show them).
std::vector<QColor> familyColors(ColorFamily f);
// Inclusive hue range of a family, degrees; a range may wrap past 360.
std::pair<int, int> familyHues(ColorFamily f);
QString familyName(ColorFamily f);

// Translated, human-readable category name; the wire name (categoryName) stays in tooltips.
QString categoryLabel(Category c);
QString tierLabel(Tier t);
// Bar stacking order, bottom to top: persistent states first, transient on top.
const std::array<Category, kCategoryCount>& categoryStackOrder();

} // namespace shardscope::widgets
