#include "timeline/timeline_view.h"

#include "common/byte_format.h"
#include "common/run_labels.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {
namespace {
constexpr double kMinWindowNs = 200; // below this, single events' timestamps dominate
constexpr double kKeyZoom = 1.5;
constexpr double kKeyPanShare = 0.1; // arrow keys pan a tenth of the window
constexpr int kDragThresholdPx = 4;
constexpr double kHitSlackPx = 2;
} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::setModel(const replay::ReplayModel* model) {
    model_ = model;
    index_.reset(model ? model->worldSize() : 0);
    hover_.reset();
    playheadNs_.reset();
    fitted_ = true;
    refresh();
}

void TimelineView::refresh() {
    if (!model_) {
        index_.reset(0);
    } else {
        index_.update(*model_);
    }
    if (fitted_) fitAll();
    update();
}

void TimelineView::setPlayheadEvent(std::uint64_t index) {
    if (!model_) return;
    setPlayheadNs(model_->replayNsAt(index));
}

void TimelineView::setPlayheadNs(std::uint64_t ns) {
    playheadNs_ = ns;
    const double t = static_cast<double>(ns);
    if (follow_ && !fitted_ && (t < t0_ || t > t1_)) {
        const double span = t1_ - t0_;
        t0_ = t - span * 0.1; // keep a little context before the playhead
        t1_ = t0_ + span;
        clampWindow();
        Q_EMIT windowChanged();
    }
    update();
}

TimelineGeometry TimelineView::geometry() const {
    return TimelineGeometry::compute(rect(), index_.laneCount(), index_.hasTransfers(),
                                     TimelinePainter::frame(font(), &index_, width(), model_));
}

replay::TimeWindow TimelineView::window() const {
    return replay::TimeWindow{t0_, t1_, static_cast<double>(std::max(geometry().plot.width(), 1))};
}

void TimelineView::setWindow(double t0, double t1) {
    t0_ = t0;
    t1_ = t1;
    fitted_ = false;
    clampWindow();
    update();
    Q_EMIT windowChanged();
}

void TimelineView::fitAll() {
    const double end = std::max(static_cast<double>(index_.endNs()), kMinWindowNs);
    t0_ = 0;
    t1_ = end * 1.01; // room for the last span's edge and the playhead at the very end
    fitted_ = true;
    update();
    Q_EMIT windowChanged();
}

void TimelineView::clampWindow() {
    const double total = std::max(static_cast<double>(index_.endNs()), kMinWindowNs);
    const double lo = -0.05 * total, hi = total * 1.05;
    double span = std::clamp(t1_ - t0_, kMinWindowNs, hi - lo);
    double t0 = std::clamp(t0_, lo, hi - span);
    t0_ = t0;
    t1_ = t0 + span;
}

void TimelineView::zoomBy(double factor, double anchorX) {
    const replay::TimeWindow w = window();
    const double anchor = w.tOf(anchorX);
    const double span = (t1_ - t0_) / factor;
    const double share = std::clamp(anchorX / w.widthPx, 0.0, 1.0);
    setWindow(anchor - span * share, anchor - span * share + span);
}

void TimelineView::panByPx(double dx) {
    const double dt = dx * window().nsPerPx();
    setWindow(t0_ + dt, t1_ + dt);
}

std::optional<TimelineView::Hit> TimelineView::spanAt(QPoint pos) const {
    const TimelineGeometry g = geometry();
    if (!g.plot.contains(pos)) return std::nullopt;
    const int lane = g.laneAt(pos.y());
    if (lane < 0) return std::nullopt;
    const auto row = g.rowAt(lane, pos.y());
    if (!row) return std::nullopt;
    const replay::TimeWindow w = window();
    const double t = w.tOf(pos.x() - g.plot.left());
    if (t < 0) return std::nullopt;
    const auto slack = static_cast<std::uint64_t>(kHitSlackPx * w.nsPerPx());
    const auto i = index_.spanAt(lane, *row, static_cast<std::uint64_t>(t), slack);
    if (!i) return std::nullopt;
    return Hit{lane, *row, *i, index_.lane(lane).rows[static_cast<std::size_t>(*row)][*i]};
}

QString TimelineView::describe(const Hit& h) const {
    const replay::TimelineSpan& s = h.span;
    const auto info = model_ ? model_->info() : nullptr;
    QString unit;
    if (s.unit >= 0)
        unit = info ? QString::fromStdString(info->unitName(s.unit)) : tr("unit %1").arg(s.unit);
    QString text = QStringLiteral("<b>%1</b>").arg(spanKindLabel(s.kind).toHtmlEscaped());
    if (!unit.isEmpty()) text += QStringLiteral(" · ") + unit.toHtmlEscaped();
    text += QStringLiteral("<br>") +
            tr("rank %1, %2")
                .arg(h.rank)
                .arg(TimelinePainter::formatDuration(static_cast<double>(s.durationNs())));
    text += QStringLiteral("<br>") +
            tr("from %1 to %2")
                .arg(TimelinePainter::formatDuration(static_cast<double>(s.beginNs)),
                     TimelinePainter::formatDuration(static_cast<double>(s.endNs)));
    if (replay::isCollective(s.kind)) {
        text +=
            QStringLiteral("<br>") +
            tr("%1 across %2 ranks").arg(formatDecimal(static_cast<double>(s.bytes))).arg(s.peers);
        text += QStringLiteral("<br>") +
                tr("algbw %1, busbw %2")
                    .arg(TimelinePainter::formatRate(replay::algBandwidth(s.bytes, s.durationNs())),
                         TimelinePainter::formatRate(
                             replay::busBandwidth(s.kind, s.bytes, s.durationNs(), s.peers)));
    } else if (replay::isTransfer(s.kind)) {
        text +=
            QStringLiteral("<br>") +
            tr("%1 at %2")
                .arg(formatDecimal(static_cast<double>(s.bytes)),
                     TimelinePainter::formatRate(replay::algBandwidth(s.bytes, s.durationNs())));
    } else if (s.kind == replay::SpanKind::ParamFull) {
        text += QStringLiteral("<br>") + tr("%1 of full parameters, alive from unshard to reshard")
                                             .arg(formatDecimal(static_cast<double>(s.bytes)));
    }
    text += QStringLiteral("<br><i>") +
            tr("events %1–%2; click to seek here").arg(s.beginEvent).arg(s.endEvent) +
            QStringLiteral("</i>");
    return text;
}

std::optional<std::pair<int, replay::DrawBox>> TimelineView::boxFor(const Hit& h) const {
    const replay::TimeWindow w = window();
    replay::DrawBox b;
    b.row = h.row;
    b.depth = h.span.depth;
    b.kind = h.span.kind;
    b.span = h.index;
    b.x0 = w.xOf(static_cast<double>(h.span.beginNs));
    b.x1 = w.xOf(static_cast<double>(h.span.endNs));
    return std::make_pair(h.rank, b);
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    TimelineScene scene;
    scene.index = &index_;
    scene.model = model_;
    scene.window = window();
    scene.playheadNs = playheadNs_;
    scene.palette = palette();
    if (hover_) scene.highlight = boxFor(*hover_);
    stats_ = TimelinePainter::paint(p, rect(), scene);
    if (hasFocus()) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DotLine));
        p.drawRect(rect().adjusted(0, 0, -1, -1));
    }
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    const double steps = e->angleDelta().y() / 120.0;
    if (steps == 0) {
        panByPx(-e->angleDelta().x() / 2.0); // horizontal wheel / touchpad: pan
    } else {
        zoomBy(std::pow(1.25, steps), e->position().x() - geometry().plot.left());
    }
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
    pressed_ = true;
    dragging_ = false;
    pressPos_ = e->position().toPoint();
    pressT0_ = t0_;
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    const QPoint pos = e->position().toPoint();
    if (pressed_ && (dragging_ || (pos - pressPos_).manhattanLength() > kDragThresholdPx)) {
        dragging_ = true;
        setCursor(Qt::ClosedHandCursor);
        const double dt = (pos.x() - pressPos_.x()) * window().nsPerPx();
        const double span = t1_ - t0_;
        setWindow(pressT0_ - dt, pressT0_ - dt + span);
        return;
    }
    const auto hit = spanAt(pos);
    const bool changed = hit.has_value() != hover_.has_value() ||
                         (hit && (hit->rank != hover_->rank || hit->row != hover_->row ||
                                  hit->index != hover_->index));
    hover_ = hit;
    if (changed) update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !pressed_) return QWidget::mouseReleaseEvent(e);
    pressed_ = false;
    unsetCursor();
    if (dragging_) {
        dragging_ = false;
        return;
    }
    if (!model_ || model_->eventCount() == 0) return;
    const QPoint pos = e->position().toPoint();
    const TimelineGeometry g = geometry();
    if (!g.plot.contains(pos)) return;
    // On a span: the state just after it began (the story of that span); elsewhere: the
    // last event at or before the clicked time.
    if (const auto hit = spanAt(pos)) {
        Q_EMIT seekRequested(std::min(hit->span.beginEvent + 1, model_->eventCount()));
        return;
    }
    const double t = std::max(window().tOf(pos.x() - g.plot.left()), 0.0);
    Q_EMIT seekRequested(model_->indexAtReplayNs(static_cast<std::uint64_t>(t)));
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    const replay::TimeWindow w = window();
    // Keyboard zoom anchors on the playhead when it is in sight, else on the centre.
    double anchor = w.widthPx / 2;
    if (playheadNs_) {
        const double x = w.xOf(static_cast<double>(*playheadNs_));
        if (x >= 0 && x <= w.widthPx) anchor = x;
    }
    const double span = t1_ - t0_;
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(kKeyZoom, anchor);
        break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        zoomBy(1 / kKeyZoom, anchor);
        break;
    case Qt::Key_Left:
        setWindow(t0_ - span * kKeyPanShare, t1_ - span * kKeyPanShare);
        break;
    case Qt::Key_Right:
        setWindow(t0_ + span * kKeyPanShare, t1_ + span * kKeyPanShare);
        break;
    case Qt::Key_Home:
        setWindow(0, span);
        break;
    case Qt::Key_End: {
        const double end = static_cast<double>(index_.endNs()) * 1.01;
        setWindow(end - span, end);
        break;
    }
    case Qt::Key_0:
        fitAll();
        break;
    default:
        QWidget::keyPressEvent(e);
        return;
    }
    e->accept();
}

void TimelineView::leaveEvent(QEvent* e) {
    if (hover_) {
        hover_.reset();
        update();
    }
    QWidget::leaveEvent(e);
}

bool TimelineView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        if (const auto hit = spanAt(help->pos())) {
            QToolTip::showText(help->globalPos(), describe(*hit), this);
        } else {
            QToolTip::hideText();
            e->ignore();
        }
        return true;
    }
    if (e->type() == QEvent::LanguageChange) update();
    return QWidget::event(e);
}

} // namespace shardscope::widgets
