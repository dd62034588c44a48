#pragma once
// Plays a ReplayModel in slow motion: a frame timer advances a replay clock by wall time ÷ the
// slow-motion factor, and the cursor follows to the last event at or before that clock. While
// a live run streams in, the player waits at the end for more steps instead of stopping.
#include "replay/replay_model.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace shardscope::widgets {

class ReplayPlayer : public QObject {
    Q_OBJECT
public:
    explicit ReplayPlayer(const replay::ReplayModel& model, QObject* parent = nullptr);

    void reset();
    void play();
    void pause();
    bool isPlaying() const { return timer_.isActive(); }
    void seek(std::uint64_t index);
    // Replay nanoseconds per wall nanosecond, inverted: 1000 means 1 ms of the run lasts 1 s.
    void setSlowMotion(double factor);
    double slowMotion() const { return slowMotion_; }
    // The factor that makes one step of `stepNs` last about kTargetStepSeconds on screen.
    static double slowMotionFor(std::uint64_t stepNs);
    static constexpr double kTargetStepSeconds = 4.0;
    static constexpr double kMinSlowMotion = 1.0;
    static constexpr double kMaxSlowMotion = 1e7;

    const replay::ReplayCursor& cursor() const { return cursor_; }
    std::uint64_t replayNs() const { return static_cast<std::uint64_t>(clockNs_); }

Q_SIGNALS:
    void positionChanged(std::uint64_t index);
    void playingChanged(bool playing);

private:
    void tick();
    void moveCursor(std::uint64_t index);

    const replay::ReplayModel& model_;
    replay::ReplayCursor cursor_;
    QTimer timer_;
    QElapsedTimer wall_;
    double clockNs_ = 0;
    double slowMotion_ = 1000;
};

} // namespace shardscope::widgets
