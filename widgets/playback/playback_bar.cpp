#include "playback/playback_bar.h"

#include "common/flow_layout.h"
#include "core/step_number.h"
#include "run/replay_player.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {
namespace {
// The speed slider is log-scaled: value v ↦ 10^(v / kSpeedTicks) × the default pace.
constexpr int kSpeedTicks = 100;

QString navText(replay::NavTarget t, bool forward) {
    switch (t) {
    case replay::NavTarget::Event:
        return forward ? PlaybackBar::tr("event ›") : PlaybackBar::tr("‹ event");
    case replay::NavTarget::Unit:
        return forward ? PlaybackBar::tr("unit ▸") : PlaybackBar::tr("◂ unit");
    case replay::NavTarget::Phase:
        return forward ? PlaybackBar::tr("phase ▸▸") : PlaybackBar::tr("◂◂ phase");
    case replay::NavTarget::Step:
        return forward ? PlaybackBar::tr("step ▸|") : PlaybackBar::tr("|◂ step");
    }
    return {};
}

QString navTip(replay::NavTarget t, bool forward) {
    switch (t) {
    case replay::NavTarget::Event:
        return forward ? PlaybackBar::tr("Next event, any rank (→)")
                       : PlaybackBar::tr("Previous event, any rank (←)");
    case replay::NavTarget::Unit:
        return forward
                   ? PlaybackBar::tr(
                         "Next unit: where the focus rank starts work on another unit (Shift+→)")
                   : PlaybackBar::tr("Previous unit boundary of the focus rank (Shift+←)");
    case replay::NavTarget::Phase:
        return forward
                   ? PlaybackBar::tr(
                         "Next phase: forward → backward → optimizer, on the focus rank (Ctrl+→)")
                   : PlaybackBar::tr("Previous phase change of the focus rank (Ctrl+←)");
    case replay::NavTarget::Step:
        return forward ? PlaybackBar::tr("Start of the next step (Page Down)")
                       : PlaybackBar::tr("Start of this or the previous step (Page Up)");
    }
    return {};
}

} // namespace

PlaybackBar::PlaybackBar(const replay::ReplayModel& model, ReplayPlayer& player, QWidget* parent)
    : QWidget(parent), model_(model), player_(player) {
    setFocusPolicy(Qt::StrongFocus);
    // The buttons wrap onto a second line rather than widen the page (large text on a projector).
    auto* top = new FlowLayout(nullptr, 4, 2);
    top_ = top;
    top->setContentsMargins(0, 0, 0, 0);
    for (replay::NavTarget t : {replay::NavTarget::Step, replay::NavTarget::Phase,
                                replay::NavTarget::Unit, replay::NavTarget::Event})
        top->addWidget(navButton(t, false));
    play_ = new QToolButton(this);
    play_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    play_->setFocusPolicy(Qt::NoFocus);
    connect(play_, &QToolButton::clicked, this,
            [this] { player_.isPlaying() ? player_.pause() : player_.play(); });
    top->addWidget(play_);
    for (replay::NavTarget t : {replay::NavTarget::Event, replay::NavTarget::Unit,
                                replay::NavTarget::Phase, replay::NavTarget::Step})
        top->addWidget(navButton(t, true));
    rankLabel_ = new QLabel(this);
    rank_ = new QSpinBox(this);
    rank_->setRange(0, 0);
    connect(rank_, &QSpinBox::valueChanged, this, &PlaybackBar::setFocusRank);
    auto* rankPair = new QWidget(this); // label and box wrap together
    auto* rankRow = new QHBoxLayout(rankPair);
    rankRow->setContentsMargins(8, 0, 0, 0);
    rankRow->addWidget(rankLabel_);
    rankRow->addWidget(rank_);
    top->addWidget(rankPair);
    followLive_ = new QCheckBox(this);
    followLive_->setObjectName(QStringLiteral("followLive"));
    connect(followLive_, &QCheckBox::toggled, this, [this] { catchUp(); });
    top->addWidget(followLive_);
    loop_ = new QCheckBox(this);
    top->addWidget(loop_);

    auto* bottom = new QHBoxLayout;
    bottom->setContentsMargins(0, 0, 0, 0);
    scrub_ = new QSlider(Qt::Horizontal, this);
    scrub_->setRange(0, 0);
    connect(scrub_, &QSlider::valueChanged, this, [this](int v) {
        if (static_cast<std::uint64_t>(v) != position())
            player_.seek(static_cast<std::uint64_t>(v));
    });
    positionLabel_ = new QLabel(this);
    speedSlider_ = new QSlider(Qt::Horizontal, this);
    speedSlider_->setRange(static_cast<int>(std::lround(std::log10(kMinSpeed) * kSpeedTicks)),
                           static_cast<int>(std::lround(std::log10(kMaxSpeed) * kSpeedTicks)));
    speedSlider_->setValue(0);
    speedSlider_->setFixedWidth(140);
    connect(speedSlider_, &QSlider::valueChanged, this,
            [this](int v) { setSpeed(std::pow(10.0, v / double(kSpeedTicks))); });
    speedLabel_ = new QLabel(this);
    fitLabels();
    bottom->addWidget(scrub_, 1);
    bottom->addWidget(positionLabel_);
    bottom->addSpacing(8);
    bottom->addWidget(speedSlider_);
    bottom->addWidget(speedLabel_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addLayout(bottom);

    connect(&player_, &ReplayPlayer::positionChanged, this, &PlaybackBar::onPosition);
    connect(&player_, &ReplayPlayer::playingChanged, this, &PlaybackBar::onPlaying);
    retranslateUi();
    refresh();
}

QToolButton* PlaybackBar::navButton(replay::NavTarget target, bool forward) {
    auto* b = new QToolButton(this);
    b->setFocusPolicy(Qt::NoFocus); // keys stay with the bar, so arrows keep navigating
    b->setAutoRepeat(true);
    connect(b, &QToolButton::clicked, this, [this, target, forward] { go(target, forward); });
    nav_.push_back({b, {target, forward}});
    return b;
}

QString PlaybackBar::positionText() const {
    return positionLabel_->text();
}

std::uint64_t PlaybackBar::position() const {
    return player_.cursor().index();
}

void PlaybackBar::refresh() {
    const QSignalBlocker block(scrub_);
    scrub_->setRange(0, static_cast<int>(std::min<std::uint64_t>(model_.eventCount(), INT32_MAX)));
    scrub_->setValue(static_cast<int>(std::min<std::uint64_t>(position(), INT32_MAX)));
    const QSignalBlocker blockRank(rank_);
    rank_->setRange(0, std::max(model_.worldSize() - 1, 0));
    focusRank_ = std::min(focusRank_, rank_->maximum());
    rank_->setValue(focusRank_);
    applySpeed();
    onPosition(position());
    catchUp();
}

// Following a live run: the replay is slower than the run, so when a newer step has arrived
// the playhead jumps to its start and plays it, skipping the steps in between.
void PlaybackBar::catchUp() {
    if (!followLive_->isChecked() || model_.stepCount() == 0) return;
    const replay::StepData& newest = model_.step(model_.stepCount() - 1);
    if (position() >= newest.firstEvent) return;
    player_.seek(newest.firstEvent);
    if (!player_.isPlaying()) player_.play();
}

bool PlaybackBar::followsLive() const {
    return followLive_->isChecked();
}
void PlaybackBar::setFollowLive(bool follow) {
    followLive_->setChecked(follow);
}

double PlaybackBar::baseSlowMotion() const {
    // The first complete step sets the pace (the first may include one-off allocations, but
    // its duration is the same order; a live run has at least one step before playing).
    for (std::size_t i = 0; i < model_.stepCount(); ++i)
        if (model_.step(i).durationNs > 0)
            return ReplayPlayer::slowMotionFor(model_.step(i).durationNs);
    return ReplayPlayer::slowMotionFor(0);
}

void PlaybackBar::setSpeed(double speed) {
    speed_ = std::clamp(speed, kMinSpeed, kMaxSpeed);
    const QSignalBlocker block(speedSlider_);
    speedSlider_->setValue(static_cast<int>(std::lround(std::log10(speed_) * kSpeedTicks)));
    applySpeed();
}

void PlaybackBar::applySpeed() {
    player_.setSlowMotion(baseSlowMotion() / speed_);
    speedLabel_->setText(tr("speed %1×").arg(speed_, 0, 'g', speed_ < 1 ? 2 : 3));
}

bool PlaybackBar::loops() const {
    return loop_->isChecked();
}
void PlaybackBar::setLoop(bool loop) {
    loop_->setChecked(loop);
}

void PlaybackBar::setFocusRank(int rank) {
    rank = std::clamp(rank, 0, std::max(model_.worldSize() - 1, 0));
    if (rank == focusRank_) return;
    focusRank_ = rank;
    const QSignalBlocker block(rank_);
    rank_->setValue(rank);
    Q_EMIT focusRankChanged(rank);
}

void PlaybackBar::go(replay::NavTarget target, bool forward) {
    const std::uint64_t k = position();
    const std::uint64_t to = forward ? replay::nextTarget(model_, k, target, focusRank_)
                                     : replay::previousTarget(model_, k, target, focusRank_);
    player_.pause(); // stepping is a paused activity: the frame shown is the one asked for
    player_.seek(to);
}

void PlaybackBar::onPosition(std::uint64_t index) {
    const std::uint64_t n = model_.eventCount();
    if (loops() && player_.isPlaying() && n > 0 && index >= n) {
        player_.seek(0);
        return;
    }
    {
        const QSignalBlocker block(scrub_);
        if (static_cast<std::uint64_t>(scrub_->maximum()) < n)
            scrub_->setMaximum(static_cast<int>(std::min<std::uint64_t>(n, INT32_MAX)));
        scrub_->setValue(static_cast<int>(std::min<std::uint64_t>(index, INT32_MAX)));
    }
    QString step;
    if (model_.stepCount() > 0 && n > 0)
        step = tr(" · step %1")
                   .arg(displayStep(model_.step(model_.stepIndexOf(std::min(index, n - 1))).step,
                                    model_.info() ? model_.info()->stepsBefore : 0));
    positionLabel_->setText(tr("event %1 / %2").arg(index).arg(n) + step);
}

void PlaybackBar::onPlaying(bool playing) {
    play_->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    play_->setText(playing ? tr("Pause") : tr("Play"));
}

void PlaybackBar::keyPressEvent(QKeyEvent* e) {
    const bool shift = e->modifiers() & Qt::ShiftModifier;
    const bool ctrl = e->modifiers() & Qt::ControlModifier;
    const replay::NavTarget arrowTarget =
        ctrl ? replay::NavTarget::Phase
             : (shift ? replay::NavTarget::Unit : replay::NavTarget::Event);
    switch (e->key()) {
    case Qt::Key_Space:
        player_.isPlaying() ? player_.pause() : player_.play();
        break;
    case Qt::Key_Left:
        go(arrowTarget, false);
        break;
    case Qt::Key_Right:
        go(arrowTarget, true);
        break;
    case Qt::Key_PageUp:
        go(replay::NavTarget::Step, false);
        break;
    case Qt::Key_PageDown:
        go(replay::NavTarget::Step, true);
        break;
    case Qt::Key_Home:
        player_.pause();
        player_.seek(0);
        break;
    case Qt::Key_End:
        player_.pause();
        player_.seek(model_.eventCount());
        break;
    default:
        QWidget::keyPressEvent(e);
        return;
    }
    e->accept();
}

// Room for the longest position and speed texts in the font shown (it grows on a projector), so
// the row does not jump as the numbers change.
void PlaybackBar::fitLabels() {
    positionLabel_->setMinimumWidth(positionLabel_->fontMetrics().horizontalAdvance(
        QStringLiteral("event 0000000 / 0000000 · step 0000")));
    speedLabel_->setMinimumWidth(
        speedLabel_->fontMetrics().horizontalAdvance(QStringLiteral("speed 100×")));
}

void PlaybackBar::insertAfterPlay(QWidget* w) {
    top_->insertWidget(top_->indexOf(play_) + 1, w);
}

QSize PlaybackBar::minimumSizeHint() const {
    QSize least = QWidget::minimumSizeHint();
    // Only once laid out at a real width (not yet shown, its width is a default, far too narrow).
    if (layout() && layout()->hasHeightForWidth() && width() >= least.width())
        least.setHeight(std::max(least.height(), layout()->totalMinimumHeightForWidth(width())));
    return least;
}

void PlaybackBar::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    // A new width may wrap the buttons onto another row (or unwrap them): ask again.
    const int h = layout() && layout()->hasHeightForWidth()
                      ? layout()->totalMinimumHeightForWidth(width())
                      : 0;
    if (h != wrappedHeight_) {
        wrappedHeight_ = h;
        updateGeometry();
    }
}

void PlaybackBar::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    if (event->type() == QEvent::FontChange) fitLabels();
    QWidget::changeEvent(event);
}

void PlaybackBar::retranslateUi() {
    for (auto& [button, what] : nav_) {
        button->setText(navText(what.first, what.second));
        button->setToolTip(navTip(what.first, what.second));
    }
    onPlaying(player_.isPlaying());
    play_->setToolTip(tr("Play or pause the replay (Space)"));
    rankLabel_->setText(tr("focus rank"));
    rank_->setToolTip(tr("Unit and phase steps follow this rank (ranks reach each boundary at "
                         "slightly different times)"));
    followLive_->setText(tr("Follow live"));
    followLive_->setToolTip(
        tr("Keep up with the running job: jump to each new step as it arrives and play it"));
    loop_->setText(tr("Loop"));
    loop_->setToolTip(tr("Start again from the beginning when the replay reaches the end"));
    scrub_->setToolTip(tr("Drag to scrub through every event of the run"));
    speedSlider_->setToolTip(
        tr("Replay speed, 0.1× to 100× of the default pace (one step in about %1 s)")
            .arg(ReplayPlayer::kTargetStepSeconds));
    applySpeed();
    onPosition(position());
}

} // namespace shardscope::widgets
