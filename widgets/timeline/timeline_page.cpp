#include "timeline/timeline_page.h"

#include <QSplitter>
#include <QVBoxLayout>

#include "flows/flow_view.h"
#include "playback/explain_panel.h"
#include "playback/playback_bar.h"
#include "playback/replay_player.h"
#include "run/run_document.h"
#include "timeline/timeline_view.h"

namespace shardscope::widgets {

ReplayPageBase::ReplayPageBase(RunDocument& document, QWidget* view, QWidget* parent)
    : QWidget(parent), document_(document), view_(view) {
    explain_ = new ExplainPanel(this);
    playback_ = new PlaybackBar(document.model(), document.player(), this);
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
    // The document resets its model on these signals (connected first, so it runs first):
    // then the views re-read it from scratch.
    const auto reset = [this] {
        explain_->setModel(&document_.model());
        playback_->refresh();
        resetView();
    };
    connect(&document_.session(), &RunSession::started, this, reset);
    connect(&document_.session(), &RunSession::runInfoReady, this, reset);
    connect(&document_, &RunDocument::stepsAppended, this, [this] {
        playback_->refresh();
        growView();
    });
    connect(&document_.player(), &ReplayPlayer::positionChanged, this, [this](std::uint64_t k) {
        explain_->setPosition(k);
        moveView(k);
    });
    reset();
    growView();
    const std::uint64_t k = document_.player().cursor().index();
    explain_->setPosition(k);
    moveView(k);
}

TimelinePage::TimelinePage(RunDocument& document, QWidget* parent)
    : ReplayPageBase(document, new TimelineView, parent) {
    view_ = static_cast<TimelineView*>(exportTarget());
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
    const StepData& s = m.step(m.stepIndexOf(k == 0 ? 0 : k - 1));
    const double margin = static_cast<double>(s.durationNs) * 0.02;
    view_->setWindow(static_cast<double>(s.replayStartNs) - margin, static_cast<double>(s.replayStartNs + s.durationNs) + margin);
}

FlowPage::FlowPage(RunDocument& document, QWidget* parent) : ReplayPageBase(document, new FlowView, parent) {
    view_ = static_cast<FlowView*>(exportTarget());
    connectAll();
}

void FlowPage::resetView() { view_->setModel(&document().model()); }
void FlowPage::growView() { view_->refresh(); }
void FlowPage::moveView(std::uint64_t index) { view_->setPosition(index); }

} // namespace shardscope::widgets
