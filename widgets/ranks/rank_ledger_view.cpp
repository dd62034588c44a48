#include "ranks/rank_ledger_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <cmath>

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/run_labels.h"

namespace shardscope::widgets {

struct RankLedgerView::Geometry {
    QRect legend;
    QRect plot;     // bars live here
    int columnWidth = 0;
    int barWidth = 0;
    int stripHeight = 0; // unit strip under each bar
    int textTop = 0;     // rank labels start here
    QRect failureBand;   // the failure's text, above the plot and its peak labels (empty: none)
    int ranks = 0;
    bool compact = false;
    QRect column(int rank) const { return {plot.left() + rank * columnWidth, plot.top(), columnWidth, plot.height()}; }
    QRect bar(int rank) const {
        const QRect c = column(rank);
        return {c.center().x() - barWidth / 2, c.top(), barWidth, c.height()};
    }
};

namespace {

constexpr int kAxisWidth = 64;
constexpr int kGuideWidth = 104; // right of the columns: labels of the theory and capacity lines
constexpr double kSmoothing = 0.3; // fraction of the remaining distance covered per frame

} // namespace

RankLedgerView::RankLedgerView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("rankLedgerView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    frame_.setInterval(16);
    connect(&frame_, &QTimer::timeout, this, &RankLedgerView::animate);
}

void RankLedgerView::setRunInfo(std::shared_ptr<const replay::RunInfo> info) {
    info_ = std::move(info);
    update();
}

void RankLedgerView::clear() {
    info_.reset();
    state_.clear();
    shown_.clear();
    failure_.reset();
    scale_ = 1;
    frame_.stop();
    update();
}

void RankLedgerView::setState(const replay::LedgerState& state) {
    state_ = state;
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
        for (Category c : kAllCategories) shown_[r][index(c)] = static_cast<double>(state_[r].live.category(c));
    frame_.stop();
    update();
}

void RankLedgerView::animate() {
    bool moving = false;
    const double epsilon = static_cast<double>(scale_) * 1e-3;
    for (std::size_t r = 0; r < state_.size(); ++r) {
        for (Category c : kAllCategories) {
            double& v = shown_[r][index(c)];
            const auto target = static_cast<double>(state_[r].live.category(c));
            v += (target - v) * kSmoothing;
            if (std::abs(target - v) > epsilon) moving = true;
            else v = target;
        }
    }
    if (!moving) frame_.stop();
    update();
}

bool RankLedgerView::isCompact() const { return static_cast<int>(state_.size()) > kCompactAbove; }

// As wide as the longest category name needs: more keys per row leave the bars more height.
int RankLedgerView::legendItemWidth() const {
    const QFontMetrics fm(font());
    int widest = 0;
    for (Category c : kAllCategories) widest = std::max(widest, fm.horizontalAdvance(categoryLabel(c)));
    return std::min(170, widest + 24);
}

QRect RankLedgerView::plotArea() const { return geometry().plot; }

RankLedgerView::Geometry RankLedgerView::geometry() const {
    Geometry g;
    g.ranks = std::max<int>(1, static_cast<int>(state_.size()));
    g.compact = isCompact();
    const QFontMetrics fm(font());
    const int itemWidth = legendItemWidth();
    const int perRow = std::max(1, (width() - 16) / itemWidth);
    const int legendRows = (static_cast<int>(kCategoryCount) + perRow - 1) / perRow + 1; // + the unit strip's key
    g.legend = QRect(8, 4, width() - 16, legendRows * (fm.height() + 2) + 2);
    g.stripHeight = g.compact ? 6 : 14;
    // + a third of a line: a CJK fallback glyph sits lower than the Latin font's metrics say.
    const int textHeight = (g.compact ? fm.height() + 2 : 2 * fm.height() + 4) + fm.height() / 3;
    const int bottom = height() - 4 - textHeight - g.stripHeight - 4;
    int top = g.legend.bottom() + 8;
    if (const QString failure = failureText(); !failure.isEmpty()) {
        // A band of its own: drawn over the plot, the text hid peak labels and guide lines.
        QFont bold = font();
        bold.setBold(true);
        const QRect area(kAxisWidth, top, std::max(40, width() - kAxisWidth - 8), 1000);
        const int h = QFontMetrics(bold).boundingRect(area, Qt::AlignHCenter | Qt::TextWordWrap, failure).height();
        g.failureBand = QRect(area.left(), top, area.width(), h);
        top += h + 4;
    }
    top += fm.height(); // room for the peak labels
    g.plot = QRect(kAxisWidth, top, width() - kAxisWidth - kGuideWidth, std::max(20, bottom - top));
    g.columnWidth = std::max(1, g.plot.width() / g.ranks);
    g.barWidth = std::max(2, std::min(110, g.columnWidth * (g.compact ? 3 : 3) / 5));
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
                   tr("No run yet. Press Run to train real sharded steps, or open a recording (.sstrace)."));
        return;
    }
    paintAxis(p, g);
    for (int r = 0; r < g.ranks; ++r) paintColumn(p, g, r);
    paintGuides(p, g);
    paintTensorGroups(p, g);
}

// A T × D mesh: each TP group (T consecutive ranks, one DP rank) in a violet frame — the
// colour of its TP all-reduces in the timeline.
void RankLedgerView::paintTensorGroups(QPainter& p, const Geometry& g) const {
    const int t = info_ ? info_->tensorParallel : 1;
    if (t <= 1 || g.ranks % t != 0) return;
    const QFontMetrics fm(font());
    const QColor violet(0x7b, 0x3f, 0xb5);
    for (int k = 0; k < g.ranks / t; ++k) {
        const QRect first = g.column(k * t), last = g.column(k * t + t - 1);
        const QRect frame(first.left() + 2, g.plot.top() - fm.height(), last.right() - first.left() - 3,
                          g.textTop - g.plot.top() + fm.height() + 2);
        p.setPen(QPen(violet, 1.5, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(frame, 4, 4);
        p.setPen(violet);
        p.drawText(QRect(frame.left() + 4, frame.top(), frame.width() - 8, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(tr("TP group %1 (DP rank %1)").arg(k), Qt::ElideRight, frame.width() - 8));
    }
}

void RankLedgerView::paintLegend(QPainter& p, const QRect& area) const {
    const QFontMetrics fm(font());
    const int itemWidth = legendItemWidth();
    const int perRow = std::max(1, area.width() / itemWidth);
    const auto& order = categoryStackOrder();
    for (std::size_t i = 0; i < order.size(); ++i) {
        const int row = static_cast<int>(i) / perRow;
        const int col = static_cast<int>(i) % perRow;
        const QRect item(area.left() + col * itemWidth, area.top() + row * (fm.height() + 2), itemWidth, fm.height());
        p.fillRect(QRect(item.left(), item.top() + 2, 12, fm.height() - 4), categoryColor(order[i]));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(item.adjusted(16, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(categoryLabel(order[i]), Qt::ElideRight, itemWidth - 20));
    }
    // The unit strip's key, on its own line: what "sharded" and "gathered" look like.
    const int y = area.top() + ((static_cast<int>(order.size()) + perRow - 1) / perRow) * (fm.height() + 2);
    int x = area.left();
    p.setPen(palette().color(QPalette::Text));
    const QString lead = tr("Units under each bar:");
    p.drawText(QRect(x, y, fm.horizontalAdvance(lead) + 4, fm.height()), Qt::AlignVCenter, lead);
    x += fm.horizontalAdvance(lead) + 10;
    const std::pair<QColor, QString> keys[] = {
        {categoryColor(Category::ParamShard), tr("only this rank's shard")},
        {categoryColor(Category::ParamFull), tr("gathered: the full unit is here")},
        {QColor(), tr("computing")}};
    for (const auto& [colour, text] : keys) {
        const QRect box(x, y + 2, 16, fm.height() - 4);
        if (colour.isValid()) p.fillRect(box, colour);
        else {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(box.adjusted(1, 1, -1, -1));
        }
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(x + 20, y, fm.horizontalAdvance(text) + 4, fm.height()), Qt::AlignVCenter, text);
        x += 20 + fm.horizontalAdvance(text) + 16;
    }
}

void RankLedgerView::paintAxis(QPainter& p, const Geometry& g) const {
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(g.plot.bottomLeft(), g.plot.bottomRight());
    const QFontMetrics fm(font());
    for (int i = 0; i <= 4; ++i) {
        const double bytes = static_cast<double>(scale_) * i / 4.0;
        const int y = yFor(g, bytes);
        p.setPen(QPen(palette().color(QPalette::Midlight), 1, Qt::DotLine));
        if (i > 0) p.drawLine(g.plot.left(), y, g.plot.right(), y);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, y - fm.height() / 2, kAxisWidth - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter, formatDecimal(bytes));
    }
}

void RankLedgerView::paintColumn(QPainter& p, const Geometry& g, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    const replay::RankState& s = state_[r];
    const QRect column = g.column(rank);
    const QRect bar = g.bar(rank);
    const bool failed = failure_ && failure_->rank == rank;
    if (failed) p.fillRect(column.adjusted(1, 0, -1, 0), QColor(255, 226, 226));
    double below = 0;
    for (Category c : categoryStackOrder()) {
        const double bytes = r < shown_.size() ? shown_[r][index(c)] : 0.0;
        if (bytes <= 0) continue;
        const int y0 = yFor(g, below);
        const int y1 = yFor(g, below + bytes);
        if (y0 > y1) p.fillRect(QRect(bar.left(), y1, bar.width(), y0 - y1), categoryColor(c));
        below += bytes;
    }
    // The rank's peak so far: a dark tick across the bar.
    const int peakY = yFor(g, static_cast<double>(s.peakTotal));
    p.setPen(QPen(neutralColor(0x20), 2));
    p.drawLine(bar.left() - 3, peakY, bar.right() + 3, peakY);
    const QFontMetrics fm(font());
    if (!g.compact)
        p.drawText(QRect(column.left(), peakY - fm.height() - 1, column.width(), fm.height()), Qt::AlignHCenter | Qt::AlignBottom,
                   tr("peak %1").arg(formatDecimal(static_cast<double>(s.peakTotal))));
    if (failed) {
        p.setPen(QPen(alertColor(), 2));
        p.drawRect(column.adjusted(1, 0, -2, 0));
    }
    paintUnits(p, QRect(bar.left(), g.plot.bottom() + 3, bar.width(), g.stripHeight), s);
    p.setPen(failed ? alertColor() : palette().color(QPalette::Text));
    const int every = g.compact ? std::max(1, (fm.horizontalAdvance(QStringLiteral("63")) + 6) / std::max(1, g.columnWidth) + 1) : 1;
    if (rank % every != 0) return;
    const QString label = g.compact ? QString::number(rank)
                                    : tr("rank %1 · %2").arg(rank).arg(formatDecimal(static_cast<double>(s.liveTotal)));
    // TextDontClip: a CJK fallback glyph is taller than the Latin font's height.
    p.drawText(QRect(column.left() - (g.compact ? 10 : 0), g.textTop, column.width() + (g.compact ? 20 : 0), fm.height()),
               Qt::AlignHCenter | Qt::TextDontClip, fm.elidedText(label, Qt::ElideRight, column.width() + (g.compact ? 20 : 0)));
    if (!g.compact) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(column.left(), g.textTop + fm.height() + 2, column.width(), fm.height()), Qt::AlignHCenter | Qt::TextDontClip,
                   fm.elidedText(activityText(s), Qt::ElideRight, column.width()));
    }
}

// One cell per unit: dark = only this rank's shard is here, light = the full unit is gathered
// (param_full live), outlined = computing now.
void RankLedgerView::paintUnits(QPainter& p, const QRect& strip, const replay::RankState& s) const {
    const int units = info_ ? static_cast<int>(std::min(info_->units.size(), replay::kTrackedUnits)) : 0;
    if (units == 0 || strip.width() < units) return;
    const double w = static_cast<double>(strip.width()) / units;
    for (int u = 0; u < units; ++u) {
        const QRectF cell(strip.left() + u * w, strip.top(), w - (w > 4 ? 1 : 0), strip.height());
        p.fillRect(cell, s.isGathered(u) ? categoryColor(Category::ParamFull) : categoryColor(Category::ParamShard));
        if (s.computeUnit == u) {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(cell.adjusted(1, 1, -1, -1));
        }
    }
}

void RankLedgerView::paintGuides(QPainter& p, const Geometry& g) const {
    const QFontMetrics fm(font());
    // Lines across every column; their labels sit right of the columns, clear of the peaks.
    auto guide = [&](std::uint64_t bytes, const QColor& colour, Qt::PenStyle style, const QString& name) {
        const int y = yFor(g, static_cast<double>(bytes));
        p.setPen(QPen(colour, 1.5, style));
        p.drawLine(g.plot.left(), y, g.plot.right() + 6, y);
        p.setPen(colour);
        const QRect label(g.plot.right() + 8, y - fm.height(), kGuideWidth - 10, 2 * fm.height());
        p.drawText(label, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                   name + QLatin1Char('\n') + formatDecimal(static_cast<double>(bytes)));
    };
    if (info_ && info_->predictedPeakBytes > 0)
        guide(info_->predictedPeakBytes, neutralColor(0x55), Qt::DotLine, tr("theory: peak"));
    if (info_ && info_->capacityBytes)
        guide(*info_->capacityBytes, alertColor(), Qt::DashLine, tr("capacity"));
    if (!g.failureBand.isEmpty()) {
        p.setPen(alertColor());
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(g.failureBand, Qt::AlignTop | Qt::AlignHCenter | Qt::TextWordWrap, failureText());
        p.setFont(font());
    }
}

QString RankLedgerView::failureText() const {
    if (!failure_) return {};
    const QString message = QString::fromStdString(failure_->message);
    return failure_->rank >= 0 ? tr("Rank %1 failed %2: %3").arg(failure_->rank).arg(failureWhen(failure_->step)).arg(message)
                               : tr("The launcher failed: %1").arg(message);
}

QString RankLedgerView::activityText(const replay::RankState& s) const {
    auto unit = [this](std::int32_t u) { return info_ ? QString::fromStdString(info_->unitName(u)) : QString::number(u); };
    if (s.collective != CollectiveOp::None)
        return s.collectiveUnit >= 0 ? tr("%1 %2").arg(collectiveLabel(s.collective), unit(s.collectiveUnit)) : collectiveLabel(s.collective);
    if (s.phase != Phase::None)
        return s.computeUnit >= 0 ? tr("%1 %2").arg(phaseLabel(s.phase), unit(s.computeUnit)) : phaseLabel(s.phase);
    return {};
}

int RankLedgerView::rankAt(QPoint pos) const {
    const Geometry g = geometry();
    if (state_.empty() || pos.x() < g.plot.left()) return -1;
    const int r = (pos.x() - g.plot.left()) / g.columnWidth;
    return r < g.ranks ? r : -1;
}

QString RankLedgerView::tooltipFor(int rank) const {
    const replay::RankState& s = state_[static_cast<std::size_t>(rank)];
    QString html = tr("<b>Rank %1</b>: %2 live, peak %3").arg(rank).arg(formatBoth(static_cast<double>(s.liveTotal)),
                                                                        formatBoth(static_cast<double>(s.peakTotal)));
    for (auto it = categoryStackOrder().rbegin(); it != categoryStackOrder().rend(); ++it) {
        const std::uint64_t b = s.live.category(*it);
        if (b == 0) continue;
        const auto wire = categoryName(*it);
        html += QStringLiteral("<br><span style='color:%1'>■</span> %2 <i>(%3)</i>: %4")
                    .arg(categoryColor(*it).name(), categoryLabel(*it).toHtmlEscaped(),
                         QString::fromLatin1(wire.data(), static_cast<qsizetype>(wire.size())), formatDecimal(static_cast<double>(b)));
    }
    const QString activity = activityText(s);
    if (!activity.isEmpty()) html += QStringLiteral("<br>") + tr("Now: %1").arg(activity.toHtmlEscaped());
    return html;
}

void RankLedgerView::mousePressEvent(QMouseEvent* event) {
    if (const int r = rankAt(event->pos()); r >= 0) Q_EMIT rankClicked(r);
    QWidget::mousePressEvent(event);
}

bool RankLedgerView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int r = rankAt(help->pos());
        if (r >= 0) QToolTip::showText(help->globalPos(), tooltipFor(r), this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace shardscope::widgets
