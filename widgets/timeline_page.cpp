#include "timeline_page.h"

#include <QSplitter>
#include <QVBoxLayout>

#include "explain_panel.h"
#include "flow_view.h"
#include "playback_bar.h"
#include "ranks_page.h"
#include "replay_player.h"
#include "timeline_view.h"

namespace shardscope::widgets {

ReplayPageBase::ReplayPageBase(RanksPage& ranks, QWidget* view, QWidget* parent)
    : QWidget(parent), ranks_(ranks), view_(view) {
    explain_ = new ExplainPanel(this);
    playback_ = new PlaybackBar(ranks.model(), ranks.player(), this);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(view);
    split->addWidget(explain_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split, 1);
    layout->addWidget(playback_);
}

void ReplayPageBase::connectAll() {
    // The Ranks page resets its model on these signals (connected first, so it runs first):
    // then the views re-read it from scratch.
    const auto reset = [this] {
        explain_->setModel(&ranks_.model());
        playback_->refresh();
        resetView();
    };
    connect(&ranks_.session(), &RunSession::started, this, reset);
    connect(&ranks_.session(), &RunSession::runInfoReady, this, reset);
    connect(&ranks_, &RanksPage::stepsAvailable, this, [this] {
        playback_->refresh();
        growView();
    });
    connect(&ranks_.player(), &ReplayPlayer::positionChanged, this, [this](std::uint64_t k) {
        explain_->setPosition(k);
        moveView(k);
    });
    reset();
    growView();
    const std::uint64_t k = ranks_.player().cursor().index();
    explain_->setPosition(k);
    moveView(k);
}

TimelinePage::TimelinePage(RanksPage& ranks, QWidget* parent)
    : ReplayPageBase(ranks, new TimelineView, parent) {
    view_ = static_cast<TimelineView*>(exportTarget());
    connect(view_, &TimelineView::seekRequested, this, [this](std::uint64_t k) {
        this->ranks().player().pause();
        this->ranks().player().seek(k);
    });
    connect(playback(), &PlaybackBar::focusRankChanged, view_, [this] { view_->update(); });
    connectAll();
}

void TimelinePage::resetView() { view_->setModel(&ranks().model()); }
void TimelinePage::growView() { view_->refresh(); }
void TimelinePage::moveView(std::uint64_t index) { view_->setPlayheadEvent(index); }

void TimelinePage::zoomToCurrentStep() {
    const ReplayModel& m = ranks().model();
    if (m.stepCount() == 0) return;
    const std::uint64_t k = ranks().player().cursor().index();
    const StepData& s = m.step(m.stepIndexOf(k == 0 ? 0 : k - 1));
    const double margin = static_cast<double>(s.durationNs) * 0.02;
    view_->setWindow(static_cast<double>(s.replayStartNs) - margin, static_cast<double>(s.replayStartNs + s.durationNs) + margin);
}

FlowPage::FlowPage(RanksPage& ranks, QWidget* parent) : ReplayPageBase(ranks, new FlowView, parent) {
    view_ = static_cast<FlowView*>(exportTarget());
    connectAll();
}

void FlowPage::resetView() { view_->setModel(&ranks().model()); }
void FlowPage::growView() { view_->refresh(); }
void FlowPage::moveView(std::uint64_t index) { view_->setPosition(index); }

} // namespace shardscope::widgets
