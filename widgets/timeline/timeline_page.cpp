#include "timeline/timeline_page.h"

#include "playback/playback_bar.h"
#include "playback/replay_player.h"
#include "run/run_document.h"
#include "timeline/timeline_view.h"

namespace shardscope::widgets {

TimelinePage::TimelinePage(RunDocument& document, QWidget* parent)
    : ReplayPageBase(document, new TimelineView, parent) {
    view_ = static_cast<TimelineView*>(exportTarget());
    view_->setObjectName(QStringLiteral("timelineView"));
    connect(view_, &TimelineView::seekRequested, this, [this](std::uint64_t k) {
        this->document().player().pause();
        this->document().player().seek(k);
    });
    connect(playback(), &PlaybackBar::focusRankChanged, view_, [this] { view_->update(); });
    connectAll();
}

void TimelinePage::resetView() { view_->setModel(&document().model()); }
void TimelinePage::growView() { view_->refresh(); }
void TimelinePage::moveView(std::uint64_t index) { view_->setPlayheadEvent(index); }

void TimelinePage::zoomToCurrentStep() {
    const replay::ReplayModel& m = document().model();
    if (m.stepCount() == 0) return;
    const std::uint64_t k = document().player().cursor().index();
    const replay::StepData& s = m.step(m.stepIndexOf(k == 0 ? 0 : k - 1));
    const double margin = static_cast<double>(s.durationNs) * 0.02;
    view_->setWindow(static_cast<double>(s.replayStartNs) - margin, static_cast<double>(s.replayStartNs + s.durationNs) + margin);
}

} // namespace shardscope::widgets
