#include "playback/replay_page.h"

#include "common/side_column.h"
#include "playback/explain_panel.h"
#include "playback/playback_bar.h"
#include "run/replay_player.h"
#include "run/run_document.h"

#include <QEvent>
#include <QShortcut>
#include <QSplitter>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace shardscope::widgets {

ReplayPageBase::ReplayPageBase(RunDocument& document, QWidget* view, QWidget* parent)
    : QWidget(parent), document_(document), view_(view) {
    explain_ = new ExplainPanel(this);
    explain_->setObjectName(QStringLiteral("explainPanel"));
    playback_ = new PlaybackBar(document.model(), document.player(), this);
    playback_->setObjectName(QStringLiteral("playbackBar"));
    // A live run animating here stops here too (as on the Ranks page: the button and Escape).
    stop_ = new QToolButton(this);
    stop_->setObjectName(QStringLiteral("replayStop"));
    stop_->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
    stop_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    stop_->setFocusPolicy(Qt::NoFocus);
    playback_->insertAfterPlay(stop_);
    RunSession& session = document.session();
    connect(stop_, &QToolButton::clicked, this, [&session] {
        if (session.canStop()) session.stop();
    });
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    connect(escape, &QShortcut::activated, this, [&session] {
        if (session.canStop()) session.stop();
    });
    const auto updateStop = [this, &session] {
        stop_->setVisible(session.isLive());
        stop_->setEnabled(session.canStop());
    };
    connect(&session, &RunSession::started, this, updateStop);
    connect(&session, &RunSession::runInfoReady, this, updateStop);
    connect(&session, &RunSession::finished, this, updateStop);
    connect(&session, &RunSession::stopRequested, this, updateStop);
    updateStop();
    retranslateStop();
    split_ = new QSplitter(Qt::Vertical, this);
    split_->addWidget(view);
    split_->addWidget(explain_);
    split_->setStretchFactor(0, 1);
    split_->setStretchFactor(1, 0);
    split_->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split_, 1);
    layout->addWidget(playback_);
}

void ReplayPageBase::setPresenting(bool on) {
    // The view takes the height; the explain panel is a drag of the splitter's handle away (a
    // lesson's card narrates in its place).
    presentPane(split_, 0, on);
    // The view's least height follows its font, raised just now: the page's layout asks the
    // splitter again once the fonts have landed (a splitter does not pass its panes' new least
    // sizes up on its own).
    QTimer::singleShot(0, split_, [split = split_] { split->updateGeometry(); });
}

void ReplayPageBase::retranslateStop() {
    stop_->setText(tr("Stop"));
    stop_->setToolTip(tr("Stop the running job: every rank ends, what it recorded stays (Esc)"));
}

void ReplayPageBase::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateStop();
    QWidget::changeEvent(event);
}

void ReplayPageBase::connectAll() {
    // The document resets its model on these signals (connected first, so it runs first):
    // then the views re-read it from scratch.
    const auto reset = [this] {
        explain_->setModel(&document_.model());
        playback_->refresh();
        explain_->setFocusRank(playback_->focusRank());
        resetView();
    };
    connect(&document_.session(), &RunSession::started, this, reset);
    connect(&document_.session(), &RunSession::runInfoReady, this, reset);
    // The sentence narrates the rank the bar follows.
    connect(playback_, &PlaybackBar::focusRankChanged, explain_, &ExplainPanel::setFocusRank);
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

} // namespace shardscope::widgets
