#include "ranks/rank_ledger_view.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/failure_text.h"
#include "common/run_labels.h"
#include "ranks/rank_ledger_geometry.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {

namespace {

// The axis' labels ("1.95 MB") in the font shown: it grows on a projector.
int axisWidth(const QFontMetrics& fm) {
    return std::max(64, fm.horizontalAdvance(QStringLiteral("0.00 MB")) + 10);
}
constexpr int kGuideWidth = 104;   // right of the columns: labels of the theory and capacity lines
constexpr double kSmoothing = 0.3; // fraction of the remaining distance covered per frame

} // namespace

RankLedgerView::RankLedgerView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("rankLedgerView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    frame_.setInterval(16);
    connect(&frame_, &QTimer::timeout, this, &RankLedgerView::animate);
}

// A unit another pipeline stage holds: no shard of it on this rank.
QColor RankLedgerView::otherStageColor() {
    return neutralColor(0xe4);
}

void RankLedgerView::setRunInfo(std::shared_ptr<const replay::RunInfo> info) {
    info_ = std::move(info);
    theories_ = info_ ? tierTheoriesOf(*info_) : std::vector<TierTheory>{};
    updateTiers();
    update();
}

// A tier gets its bar when the theory puts bytes there or the run did: staging buffers on the
// host count too, so nothing measured is left out of the picture.
void RankLedgerView::updateTiers() {
    std::vector<Tier> tiers{Tier::Device};
    for (Tier t : {Tier::Host, Tier::Nvme}) {
        bool used = false;
        for (const TierTheory& th : theories_)
            used = used || th.modelStates.tier(t) > 0 || th.peak[index(t)] > 0;
        for (const replay::RankState& s : state_)
            used = used || s.peakByTier[index(t)] > 0;
        if (used) tiers.push_back(t);
    }
    tiers_ = std::move(tiers);
}

QRect RankLedgerView::tierBarRect(int rank, Tier tier) const {
    const auto it = std::find(tiers_.begin(), tiers_.end(), tier);
    if (it == tiers_.end() || rank < 0 || rank >= static_cast<int>(state_.size())) return {};
    return geometry().tierBar(rank, static_cast<int>(it - tiers_.begin()));
}

double RankLedgerView::shownBytes(int rank, Category c, Tier tier) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= shown_.size()) return 0;
    return shown_[static_cast<std::size_t>(rank)][index(c)][index(tier)];
}

std::optional<int> RankLedgerView::capacityY() const {
    if (!info_ || !info_->capacityBytes) return std::nullopt;
    return yFor(geometry(), static_cast<double>(*info_->capacityBytes));
}

std::uint64_t RankLedgerView::theoryTallest() const {
    std::uint64_t tallest = info_ ? info_->predictedPeakBytes : 0;
    for (int st = 0; st < stageCount(); ++st)
        tallest = std::max(tallest, stagePredictedPeak(st));
    for (const TierTheory& th : theories_)
        for (std::uint64_t b : th.peak)
            tallest = std::max(tallest, b);
    return tallest;
}

const TierTheory* RankLedgerView::tierTheory(int rank) const {
    if (theories_.empty()) return nullptr;
    const int stage = info_ ? info_->stageOf(rank) : 0;
    return &theories_[static_cast<std::size_t>(
        std::clamp(stage, 0, static_cast<int>(theories_.size()) - 1))];
}

void RankLedgerView::clear() {
    info_.reset();
    state_.clear();
    shown_.clear();
    failure_.reset();
    theories_.clear();
    tiers_ = {Tier::Device};
    scale_ = 1;
    frame_.stop();
    update();
}

void RankLedgerView::setState(const replay::LedgerState& state) {
    state_ = state;
    if (tiers_.size() < kTierCount) updateTiers();
    if (shown_.size() != state_.size()) {
        shown_.assign(state_.size(), {});
        settle();
        return;
    }
    if (!frame_.isActive()) frame_.start();
}

void RankLedgerView::setScaleBytes(std::uint64_t bytes) {
    scale_ = std::max<std::uint64_t>(bytes, 1);
    update();
}

void RankLedgerView::setFailure(std::optional<replay::FailureInfo> failure) {
    failure_ = std::move(failure);
    update();
}

void RankLedgerView::settle() {
    for (std::size_t r = 0; r < state_.size() && r < shown_.size(); ++r)
        for (Category c : kAllCategories)
            for (Tier t : kAllTiers)
                shown_[r][index(c)][index(t)] = static_cast<double>(state_[r].live.at(c, t));
    frame_.stop();
    update();
}

void RankLedgerView::animate() {
    bool moving = false;
    const double epsilon = static_cast<double>(scale_) * 1e-3;
    for (std::size_t r = 0; r < state_.size(); ++r) {
        for (Category c : kAllCategories) {
            for (Tier t : kAllTiers) {
                double& v = shown_[r][index(c)][index(t)];
                const auto target = static_cast<double>(state_[r].live.at(c, t));
                v += (target - v) * kSmoothing;
                if (std::abs(target - v) > epsilon)
                    moving = true;
                else
                    v = target;
            }
        }
    }
    if (!moving) frame_.stop();
    update();
}

bool RankLedgerView::isCompact() const {
    return static_cast<int>(state_.size()) > kCompactAbove;
}

QRect RankLedgerView::plotArea() const {
    return geometry().plot;
}

RankLedgerView::Geometry RankLedgerView::geometry() const {
    Geometry g;
    g.ranks = std::max<int>(1, static_cast<int>(state_.size()));
    g.compact = isCompact();
    const QFontMetrics fm(font());
    const std::vector<QRect> keys = legendItems(width() - 16);
    const int legendRows = keys.empty() ? 0 : keys.back().top() / (fm.height() + 2) + 1;
    g.legend = QRect(8, 4, width() - 16, legendRows * (fm.height() + 2) + 2);
    g.stripHeight = g.compact ? 6 : 14;
    g.tiers = static_cast<int>(tiers_.size());
    g.bracket = g.tiers > 1 && !g.compact ? 5 : 0;
    // + a third of a line: a CJK fallback glyph sits lower than the Latin font's metrics say.
    const int textHeight = (g.compact ? fm.height() + 2 : 2 * fm.height() + 4) + fm.height() / 3;
    // Tier names get a row under the bars where the bars can spare it; otherwise they sit at
    // the top of each off-device slot.
    if (g.tiers > 1 && !g.compact &&
        height() - textHeight - g.stripHeight - g.legend.bottom() - 3 * fm.height() > 200)
        g.tierNames = fm.height();
    g.stripHeight += g.tierNames;
    const int bottom = height() - 4 - textHeight - g.stripHeight - 4;
    int top = g.legend.bottom() + 8;
    if (const QString failure = failureText(); !failure.isEmpty()) {
        // A band of its own, one line: drawn over the plot, the text hid peak labels and guide
        // lines; wrapped, it took the bars' height (the page's banner and the tooltip hold it
        // whole).
        QFont bold = font();
        bold.setBold(true);
        const int h = QFontMetrics(bold).height() + QFontMetrics(bold).height() / 3;
        g.failureBand = QRect(axisWidth(fm), top, std::max(40, width() - axisWidth(fm) - 8), h);
        top += h + 4;
    }
    // A T × D mesh's group frames name themselves in a row of their own, above the peak labels.
    if (tensorGroups() > 0) top += fm.height() + 2;
    top += fm.height(); // room for the peak labels
    // A pipeline's stage names take a row where the bars keep five lines' height beside it (a
    // projector's large text may not spare it: the stages' tinted groups and the tooltips
    // remain).
    if (const int band = fm.height() + fm.height() / 3 + 4;
        stageCount() > 1 && bottom - top - band - 2 >= 5 * fm.height()) {
        const int tpRow = tensorGroups() > 0 ? fm.height() + 2 : 0;
        g.stageBand = QRect(axisWidth(fm), top - fm.height() - tpRow,
                            std::max(40, width() - axisWidth(fm) - kGuideWidth), band);
        top += band + 2;
    }
    g.plot = QRect(axisWidth(fm), top, width() - axisWidth(fm) - kGuideWidth,
                   std::max(20, bottom - top));
    g.columnWidth = std::max(1, g.plot.width() / g.ranks);
    g.barWidth = g.tiers == 1 ? std::max(2, std::min(110, g.columnWidth * 3 / 5))
                              : std::max(3 * g.tiers,
                                         std::min(110 + 70 * (g.tiers - 1), g.columnWidth * 4 / 5));
    g.textTop = g.plot.bottom() + g.stripHeight + 6;
    return g;
}

int RankLedgerView::yFor(const Geometry& g, double bytes) const {
    const double f = std::clamp(bytes / static_cast<double>(scale_), 0.0, 1.05);
    return g.plot.bottom() - static_cast<int>(std::lround(f * g.plot.height()));
}

void RankLedgerView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const Geometry g = geometry();
    paintLegend(p, g.legend);
    if (state_.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(g.plot, Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No run yet. Press Run to train real sharded steps, or open a recording "
                      "(.sstrace)."));
        return;
    }
    paintAxis(p, g);
    paintStageTints(p, g);
    for (int r = 0; r < g.ranks; ++r)
        paintColumn(p, g, r);
    paintGuides(p, g);
    paintTensorGroups(p, g);
    paintStages(p, g);
}

void RankLedgerView::paintLegend(QPainter& p, const QRect& area) const {
    const QFontMetrics fm(font());
    const std::vector<QRect> items = legendItems(area.width());
    const QStringList labels = legendLabels();
    const auto& order = categoryStackOrder();
    const auto itemAt = [&](std::size_t i) { return items[i].translated(area.topLeft()); };
    const auto label = [&](const QRect& item, std::size_t i) {
        p.setPen(palette().color(QPalette::Text));
        p.drawText(
            item.adjusted(16, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
            fm.elidedText(labels[static_cast<qsizetype>(i)], Qt::ElideRight, item.width() - 16));
    };
    for (std::size_t i = 0; i < order.size() && i < items.size(); ++i) {
        const QRect item = itemAt(i);
        p.fillRect(QRect(item.left(), item.top() + 2, 12, fm.height() - 4),
                   categoryColor(order[i]));
        label(item, i);
    }
    // Split by tier, the keys of the off-device slots and of the theory's bracket follow in the
    // same rows (a row of their own would take the bars' height at 1024×700).
    if (tiers_.size() > 1) {
        std::size_t i = order.size();
        for (Tier t : tiers_) {
            if (t == Tier::Device || i >= items.size()) continue;
            const QRect item = itemAt(i);
            QColor tint = tierColor(t);
            tint.setAlpha(32);
            p.fillRect(QRect(item.left(), item.top() + 1, 12, fm.height() - 3), tint);
            p.fillRect(QRect(item.left(), item.top() + fm.height() - 4, 12, 3), tierColor(t));
            label(item, i++);
        }
        if (i < items.size()) {
            const QRect item = itemAt(i);
            p.setPen(QPen(neutralColor(0x40), 1.5));
            p.drawLine(item.left() + 6, item.top() + fm.height() - 2, item.left() + 6,
                       item.top() + 2);
            p.drawLine(item.left() + 2, item.top() + 2, item.left() + 7, item.top() + 2);
            label(item, i);
        }
    }
    // The unit strip's key: what "sharded" and "gathered" look like.
    const auto lead = static_cast<std::size_t>(labels.size());
    if (lead >= items.size()) return;
    p.setPen(palette().color(QPalette::Text));
    p.drawText(itemAt(lead), Qt::AlignVCenter | Qt::AlignLeft, unitKeyLead());
    const auto keys = unitKeys();
    for (std::size_t i = 0; i < keys.size() && lead + 1 + i < items.size(); ++i) {
        const auto& [colour, text] = keys[i];
        const QRect item = itemAt(lead + 1 + i);
        const QRect box(item.left(), item.top() + 2, 16, fm.height() - 4);
        if (colour.isValid())
            p.fillRect(box, colour);
        else {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(box.adjusted(1, 1, -1, -1));
        }
        p.setPen(palette().color(QPalette::Text));
        p.drawText(item.adjusted(20, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(text, Qt::ElideRight, item.width() - 20));
    }
}

void RankLedgerView::paintAxis(QPainter& p, const Geometry& g) const {
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(g.plot.bottomLeft(), g.plot.bottomRight());
    const QFontMetrics fm(font());
    // Quarters where the labels have room, else halves or the top alone: never overprinted.
    const int intervals = g.plot.height() >= 6 * fm.height()   ? 4
                          : g.plot.height() >= 3 * fm.height() ? 2
                                                               : 1;
    for (int i = 0; i <= intervals; ++i) {
        const double bytes = static_cast<double>(scale_) * i / intervals;
        const int y = yFor(g, bytes);
        p.setPen(QPen(palette().color(QPalette::Midlight), 1, Qt::DotLine));
        if (i > 0) p.drawLine(g.plot.left(), y, g.plot.right(), y);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, y - fm.height() / 2, axisWidth(fm) - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, formatDecimal(bytes));
    }
}

void RankLedgerView::paintColumn(QPainter& p, const Geometry& g, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    const replay::RankState& s = state_[r];
    const QRect column = g.column(rank);
    const QRect bar = g.bar(rank);
    const bool failed = failure_ && failure_->rank == rank;
    if (failed) p.fillRect(column.adjusted(1, 0, -1, 0), QColor(255, 226, 226));
    for (std::size_t slot = 0; slot < tiers_.size(); ++slot)
        paintTierBar(p, g, rank, slot);
    // The rank's device peak so far: a dark tick across the bar (without offload: its peak).
    const std::uint64_t devicePeak = s.peakByTier[index(Tier::Device)];
    const int peakY = yFor(g, static_cast<double>(devicePeak));
    p.setPen(QPen(neutralColor(0x20), 2));
    p.drawLine(bar.left() - 3, peakY, bar.right() + 3, peakY);
    const QFontMetrics fm(font());
    if (!g.compact) {
        // A narrow column keeps the number (the tick says what it is), never a clipped word;
        // neighbours' numbers must not run together: none where even the number has no margin
        // (the tooltip gives it).
        const QString value = formatDecimal(static_cast<double>(devicePeak));
        const QString named = tr("peak %1").arg(value);
        const int room = column.width() - 8;
        if (fm.horizontalAdvance(value) <= room)
            p.drawText(QRect(column.left(), peakY - fm.height() - 1, column.width(), fm.height()),
                       Qt::AlignHCenter | Qt::AlignBottom,
                       fm.horizontalAdvance(named) <= room ? named : value);
    }
    if (failed) {
        p.setPen(QPen(alertColor(), 2));
        p.drawRect(column.adjusted(1, 0, -2, 0));
    }
    paintUnits(p, QRect(bar.left(), g.plot.bottom() + 3, bar.width(), g.stripHeight - g.tierNames),
               rank, s);
    p.setPen(failed ? alertColor() : palette().color(QPalette::Text));
    const int every = g.compact ? std::max(1, (fm.horizontalAdvance(QStringLiteral("63")) + 6) /
                                                      std::max(1, g.columnWidth) +
                                                  1)
                                : 1;
    if (rank % every != 0) return;
    const QString label =
        g.compact
            ? QString::number(rank)
            : tr("rank %1 · %2").arg(rank).arg(formatDecimal(static_cast<double>(s.liveTotal)));
    // TextDontClip: a CJK fallback glyph is taller than the Latin font's height.
    p.drawText(QRect(column.left() - (g.compact ? 10 : 0), g.textTop,
                     column.width() + (g.compact ? 20 : 0), fm.height()),
               Qt::AlignHCenter | Qt::TextDontClip,
               fm.elidedText(label, Qt::ElideRight, column.width() + (g.compact ? 20 : 0)));
    if (!g.compact) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(column.left(), g.textTop + fm.height() + 2, column.width(), fm.height()),
                   Qt::AlignHCenter | Qt::TextDontClip,
                   fm.elidedText(activityText(s), Qt::ElideRight, column.width()));
    }
}

// One tier's bar of a column: its categories stacked; split by tier, also the tier's slot (a
// tint), its name, its own peak tick, the theory's model states (a bracket beside it) and, off
// the device, the theory's peak of that tier (a dotted tick).
void RankLedgerView::paintTierBar(QPainter& p, const Geometry& g, int rank,
                                  std::size_t slot) const {
    const auto r = static_cast<std::size_t>(rank);
    const Tier t = tiers_[slot];
    const QRect bar = g.tierBar(rank, static_cast<int>(slot));
    if (g.tiers > 1 && t != Tier::Device) {
        QColor tint = tierColor(t);
        tint.setAlpha(32);
        p.fillRect(bar, tint);
    }
    double below = 0;
    for (Category c : categoryStackOrder()) {
        const double bytes = r < shown_.size() ? shown_[r][index(c)][index(t)] : 0.0;
        if (bytes <= 0) continue;
        const int y0 = yFor(g, below);
        const int y1 = yFor(g, below + bytes);
        if (y0 > y1) p.fillRect(QRect(bar.left(), y1, bar.width(), y0 - y1), categoryColor(c));
        below += bytes;
    }
    if (g.tiers == 1) return;
    p.fillRect(QRect(bar.left(), g.plot.bottom() - 1, bar.width(), 3), tierColor(t));
    if (t != Tier::Device) {
        const int y = yFor(g, static_cast<double>(state_[r].peakByTier[index(t)]));
        p.setPen(QPen(neutralColor(0x20), 2));
        p.drawLine(bar.left() - 2, y, bar.right() + 2, y);
    }
    const TierTheory* theory = tierTheory(rank);
    if (theory && g.bracket > 0) {
        if (const std::uint64_t states = theory->modelStates.tier(t); states > 0) {
            const int y = yFor(g, static_cast<double>(states));
            const int x = bar.right() + 3;
            p.setPen(QPen(neutralColor(0x40), 1.5));
            p.drawLine(x, g.plot.bottom(), x, y);
            p.drawLine(x - 3, y, x + 1, y);
        }
        if (const std::uint64_t peak = theory->peak[index(t)]; peak > 0 && t != Tier::Device) {
            const int y = yFor(g, static_cast<double>(peak));
            p.setPen(QPen(neutralColor(0x55), 1.5, Qt::DotLine));
            p.drawLine(bar.left() - 2, y, bar.right() + 2, y);
        }
    }
    // Too narrow for its name, a slot goes without (the legend's tint says which it is).
    if (g.tierNames == 0 && t != Tier::Device && !g.compact &&
        QFontMetrics(font()).horizontalAdvance(tierLabel(t)) <= bar.width()) {
        const QFontMetrics fm(font());
        p.setPen(tierColor(Tier::Device));
        p.drawText(QRect(bar.left(), bar.top() + 2, bar.width(), fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(tierLabel(t), Qt::ElideRight, bar.width()));
    }
    if (g.tierNames > 0) {
        const QFontMetrics fm(font());
        p.setPen(tierColor(Tier::Device));
        const QRect name(bar.left() - 4, g.plot.bottom() + 3 + g.stripHeight - g.tierNames,
                         bar.width() + 8 + g.bracket, g.tierNames);
        p.drawText(name, Qt::AlignHCenter | Qt::AlignVCenter | Qt::TextDontClip,
                   fm.elidedText(tierLabel(t), Qt::ElideRight, name.width()));
    }
}

// One cell per unit: dark = only this rank's shard is here, light = the full unit is gathered
// (param_full live), outlined = computing now.
void RankLedgerView::paintUnits(QPainter& p, const QRect& strip, int rank,
                                const replay::RankState& s) const {
    const int units =
        info_ ? static_cast<int>(std::min(info_->units.size(), replay::kTrackedUnits)) : 0;
    if (units == 0 || strip.width() < units) return;
    const double w = static_cast<double>(strip.width()) / units;
    const int stage = stageCount() > 1 ? info_->stageOf(rank) : 0;
    for (int u = 0; u < units; ++u) {
        const QRectF cell(strip.left() + u * w, strip.top(), w - (w > 4 ? 1 : 0), strip.height());
        p.fillRect(cell, stageCount() > 1 && !info_->stageHolds(stage, u) ? otherStageColor()
                         : s.isGathered(u) ? categoryColor(Category::ParamFull)
                                           : categoryColor(Category::ParamShard));
        if (s.computeUnit == u) {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(cell.adjusted(1, 1, -1, -1));
        }
    }
}

void RankLedgerView::paintGuides(QPainter& p, const Geometry& g) const {
    const QFontMetrics fm(font());
    // Lines across every column; their labels sit right of the columns, clear of the peaks.
    // Split by tier, the lines are the device's: they cross the device bars only, so host and
    // NVMe bytes beside them never read as over the budget.
    struct Label {
        QRect rect;
        QColor colour;
        QString text;
    };
    std::vector<Label> labels;
    // Over columns [from, to) (a pipeline stage's; all by default), labelled when `name` is set.
    auto guide = [&](std::uint64_t bytes, const QColor& colour, Qt::PenStyle style,
                     const QString& name, int from = 0, int to = -1) {
        if (to < 0) to = g.ranks;
        const int y = yFor(g, static_cast<double>(bytes));
        p.setPen(QPen(colour, 1.5, style));
        if (g.tiers == 1) {
            p.drawLine(from == 0 ? g.plot.left() : g.column(from).left() + 2, y,
                       to == g.ranks ? g.plot.right() + 6 : g.column(to - 1).right() - 2, y);
        } else {
            for (int r = from; r < to; ++r) {
                const QRect bar = g.tierBar(r, 0);
                p.drawLine(bar.left() - 5, y, bar.right() + 5, y);
            }
            if (to == g.ranks) p.drawLine(g.plot.right() - 4, y, g.plot.right() + 6, y);
        }
        if (name.isEmpty()) return;
        const QString text = name + QLatin1Char('\n') + formatDecimal(static_cast<double>(bytes));
        const int w = kGuideWidth - 10;
        const int h =
            fm.boundingRect(QRect(0, 0, w, 1000), Qt::AlignLeft | Qt::TextWordWrap, text).height();
        labels.push_back({QRect(g.plot.right() + 8, y - h / 2, w, h), colour, text});
    };
    if (const int stages = stageCount(); stages > 1) {
        // Each stage's own prediction over its columns; the highest is named at the right (the
        // stage band and a rank's tooltip give each stage's).
        int highest = 0;
        for (int st = 1; st < stages; ++st)
            if (stagePredictedPeak(st) > stagePredictedPeak(highest)) highest = st;
        const int per = g.ranks / stages;
        for (int st = 0; st < stages; ++st) {
            const std::uint64_t peak = stagePredictedPeak(st);
            if (peak == 0) continue;
            QString name;
            if (st == highest)
                name = g.tiers == 1 ? tr("theory: stage %1 peak").arg(st)
                                    : tr("theory: stage %1 device peak").arg(st);
            guide(peak, neutralColor(0x55), Qt::DotLine, name, st * per, st * per + per);
        }
    } else if (info_ && info_->predictedPeakBytes > 0) {
        guide(info_->predictedPeakBytes, neutralColor(0x55), Qt::DotLine,
              g.tiers == 1 ? tr("theory: peak") : tr("theory: device peak"));
    }
    if (info_ && info_->capacityBytes)
        guide(*info_->capacityBytes, alertColor(), Qt::DashLine,
              g.tiers == 1 ? tr("capacity") : tr("device capacity"));
    // Close lines (a budget just above the predicted peak) must not print their labels over
    // each other: the lower label moves down below the upper one.
    std::sort(labels.begin(), labels.end(),
              [](const Label& a, const Label& b) { return a.rect.top() < b.rect.top(); });
    for (std::size_t i = 1; i < labels.size(); ++i)
        if (labels[i].rect.top() <= labels[i - 1].rect.bottom() + 2)
            labels[i].rect.moveTop(labels[i - 1].rect.bottom() + 3);
    for (const Label& l : labels) {
        p.setPen(l.colour);
        p.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, l.text);
    }
    if (!g.failureBand.isEmpty()) {
        p.setPen(alertColor());
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(
            g.failureBand, Qt::AlignTop | Qt::AlignHCenter,
            QFontMetrics(bold).elidedText(failureText(), Qt::ElideRight, g.failureBand.width()));
        p.setFont(font());
    }
}

int RankLedgerView::rankAt(QPoint pos) const {
    const Geometry g = geometry();
    if (state_.empty() || pos.x() < g.plot.left()) return -1;
    const int r = (pos.x() - g.plot.left()) / g.columnWidth;
    return r < g.ranks ? r : -1;
}

void RankLedgerView::mousePressEvent(QMouseEvent* event) {
    if (const int r = rankAt(event->pos()); r >= 0) Q_EMIT rankClicked(r);
    QWidget::mousePressEvent(event);
}

bool RankLedgerView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int r = rankAt(help->pos());
        if (r >= 0)
            QToolTip::showText(help->globalPos(), tooltipFor(r), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace shardscope::widgets
