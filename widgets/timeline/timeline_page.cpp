#include "timeline/timeline_page.h"

#include "common/palette_legend.h"
#include "playback/playback_bar.h"
#include "run/replay_player.h"
#include "run/run_document.h"
#include "timeline/timeline_view.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QToolButton>
#include <QVBoxLayout>

namespace shardscope::widgets {

namespace {
constexpr double kButtonZoom = 2.0;
}

TimelinePage::TimelinePage(RunDocument& document, QWidget* parent)
    : ReplayPageBase(document, new TimelineView, parent) {
    view_ = static_cast<TimelineView*>(exportTarget());
    if (auto* v = qobject_cast<QVBoxLayout*>(layout())) v->insertWidget(0, buildZoomRow());
    view_->installEventFilter(this);
    view_->setObjectName(QStringLiteral("timelineView"));
    connect(view_, &TimelineView::seekRequested, this, [this](std::uint64_t k) {
        this->document().player().pause();
        this->document().player().seek(k);
    });
    connect(playback(), &PlaybackBar::focusRankChanged, view_, [this] { view_->update(); });
    connect(&document.session(), &RunSession::started, this,
            [this](bool live) { followStep_ = live; });
    retranslateUi();
    connectAll();
}

QWidget* TimelinePage::buildZoomRow() {
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    const auto button = [&](const char* name, auto&& onClick) {
        auto* b = new QToolButton(row);
        b->setObjectName(QLatin1String(name));
        connect(b, &QToolButton::clicked, this, [this, onClick] {
            followStep_ = false; // the user chose the window now
            onClick();
        });
        h->addWidget(b);
        return b;
    };
    const auto centre = [this] { return view_->window().widthPx / 2; };
    zoomOut_ =
        button("timelineZoomOut", [this, centre] { view_->zoomBy(1 / kButtonZoom, centre()); });
    zoomIn_ = button("timelineZoomIn", [this, centre] { view_->zoomBy(kButtonZoom, centre()); });
    fit_ = button("timelineFit", [this] { view_->fitAll(); });
    step_ = button("timelineStep", [this] { zoomToCurrentStep(); });
    h->addSpacing(12);
    h->addWidget(new PaletteLegend(
                     {ColorFamily::Activities, ColorFamily::Transfers, ColorFamily::Memory}, row),
                 1);
    return row;
}

void TimelinePage::retranslateUi() {
    zoomOut_->setText(tr("−"));
    zoomOut_->setToolTip(tr("Zoom out (−)"));
    zoomIn_->setText(tr("+"));
    zoomIn_->setToolTip(tr("Zoom in (+)"));
    fit_->setText(tr("Fit run"));
    fit_->setToolTip(tr("Show the whole run (0)"));
    step_->setText(tr("Current step"));
    step_->setToolTip(tr("Show the step at the playhead"));
}

void TimelinePage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    ReplayPageBase::changeEvent(event);
}

bool TimelinePage::eventFilter(QObject* watched, QEvent* event) {
    // Wheel, drag or keys on the view: the user navigates, the view stops following the step.
    if (watched == view_ && (event->type() == QEvent::Wheel || event->type() == QEvent::KeyPress ||
                             (event->type() == QEvent::MouseMove &&
                              static_cast<QMouseEvent*>(event)->buttons() != Qt::NoButton)))
        followStep_ = false;
    return ReplayPageBase::eventFilter(watched, event);
}

void TimelinePage::resetView() {
    view_->setModel(&document().model());
    shownStep_ = SIZE_MAX;
}

void TimelinePage::growView() {
    view_->refresh();
    if (followStep_) zoomToCurrentStep();
}

void TimelinePage::moveView(std::uint64_t index) {
    view_->setPlayheadEvent(index);
    if (followStep_ && stepAt(index) != shownStep_) zoomToCurrentStep();
}

std::size_t TimelinePage::stepAt(std::uint64_t index) const {
    const replay::ReplayModel& m = document().model();
    if (m.stepCount() == 0) return SIZE_MAX;
    return m.stepIndexOf(index == 0 ? 0 : index - 1);
}

void TimelinePage::zoomToCurrentStep() {
    const replay::ReplayModel& m = document().model();
    if (m.stepCount() == 0) return;
    const std::uint64_t k = document().player().cursor().index();
    shownStep_ = stepAt(k);
    const replay::StepData& s = m.step(shownStep_);
    const double margin = static_cast<double>(s.durationNs) * 0.02;
    view_->setWindow(static_cast<double>(s.replayStartNs) - margin,
                     static_cast<double>(s.replayStartNs + s.durationNs) + margin);
}

} // namespace shardscope::widgets
