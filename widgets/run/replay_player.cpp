#include "run/replay_player.h"

#include <algorithm>

namespace shardscope::widgets {

ReplayPlayer::ReplayPlayer(const replay::ReplayModel& model, QObject* parent)
    : QObject(parent), model_(model), cursor_(model) {
    timer_.setInterval(16); // ~60 frames per second
    timer_.setTimerType(Qt::PreciseTimer);
    connect(&timer_, &QTimer::timeout, this, &ReplayPlayer::tick);
}

void ReplayPlayer::reset() {
    pause();
    clockNs_ = 0;
    cursor_.reset();
    Q_EMIT positionChanged(0);
}

void ReplayPlayer::play() {
    if (isPlaying()) return;
    if (model_.eventCount() > 0 && cursor_.index() >= model_.eventCount())
        seek(0); // replay from the start
    wall_.start();
    timer_.start();
    Q_EMIT playingChanged(true);
}

void ReplayPlayer::pause() {
    if (!isPlaying()) return;
    timer_.stop();
    Q_EMIT playingChanged(false);
}

void ReplayPlayer::seek(std::uint64_t index) {
    index = std::min(index, model_.eventCount());
    clockNs_ = static_cast<double>(model_.replayNsAt(index));
    moveCursor(index);
}

void ReplayPlayer::setSlowMotion(double factor) {
    slowMotion_ = std::clamp(factor, kMinSlowMotion, kMaxSlowMotion);
}

double ReplayPlayer::slowMotionFor(std::uint64_t stepNs) {
    if (stepNs == 0) return 1000;
    return std::clamp(kTargetStepSeconds * 1e9 / static_cast<double>(stepNs), kMinSlowMotion,
                      kMaxSlowMotion);
}

void ReplayPlayer::tick() {
    const double wallNs = static_cast<double>(wall_.nsecsElapsed());
    wall_.restart();
    const auto total = static_cast<double>(model_.totalReplayNs());
    clockNs_ = std::min(clockNs_ + wallNs / slowMotion_, total);
    moveCursor(model_.indexAtReplayNs(static_cast<std::uint64_t>(clockNs_)));
}

void ReplayPlayer::moveCursor(std::uint64_t index) {
    if (index == cursor_.index() && !cursor_.state().empty()) return;
    cursor_.moveTo(index);
    Q_EMIT positionChanged(cursor_.index());
}

} // namespace shardscope::widgets
