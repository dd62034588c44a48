#pragma once
// Transport controls over the shared ReplayPlayer (the window's RunDocument): play/pause, step
// to the previous/next event, unit, phase or step (replay/playback_nav.h), a scrubbing slider,
// the speed as 0.1× … 100× of a comfortable default (one step ≈
// ReplayPlayer::kTargetStepSeconds on screen) on a log slider, and loop. Every view follows the
// player's positionChanged, so the timeline, flows, explain panel and rank view move together
// whichever control moved them.
//
// Keys (when the bar or a child has focus): Space play/pause; ←/→ event; Shift+←/→ unit;
// Ctrl+←/→ phase; PgUp/PgDn step; Home/End start/end.
#include "replay/playback_nav.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QSlider;
class QSpinBox;
class QToolButton;

namespace shardscope::widgets {

class FlowLayout;
class ReplayPlayer;

class PlaybackBar : public QWidget {
    Q_OBJECT
public:
    PlaybackBar(const replay::ReplayModel& model, ReplayPlayer& player, QWidget* parent = nullptr);

    void refresh(); // the model grew or was reset: slider range, default speed
    void go(replay::NavTarget target, bool forward);
    std::uint64_t position() const;
    QString positionText() const; // "event K / N · step S" as shown

    double speed() const { return speed_; } // multiple of the default pace
    void setSpeed(double speed);            // clamped to [kMinSpeed, kMaxSpeed]
    bool loops() const;
    void setLoop(bool loop);
    // Follow live: each new step of a running job is played as it arrives (older ones skipped).
    bool followsLive() const;
    void setFollowLive(bool follow);
    int focusRank() const { return focusRank_; }
    void setFocusRank(int rank);
    // Puts `w` right after Play (the replay pages' Stop for a live run).
    void insertAfterPlay(QWidget* w);
    // Slow-motion factor at 1×: one step of the run lasts about kTargetStepSeconds.
    double baseSlowMotion() const;

    // At least the height its rows take at its width: the buttons wrap in large text, and the
    // page's layout must give them that room instead of taking it from the view above.
    QSize minimumSizeHint() const override;

    static constexpr double kMinSpeed = 0.1;
    static constexpr double kMaxSpeed = 100.0;

Q_SIGNALS:
    void focusRankChanged(int rank);

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void onPosition(std::uint64_t index);
    void onPlaying(bool playing);
    void applySpeed();
    void catchUp();
    void retranslateUi();
    void fitLabels();
    QToolButton* navButton(replay::NavTarget target, bool forward);

    const replay::ReplayModel& model_;
    ReplayPlayer& player_;
    double speed_ = 1.0;
    int focusRank_ = 0;
    int wrappedHeight_ = 0; // the rows' height at the last width
    QToolButton* play_ = nullptr;
    FlowLayout* top_ = nullptr;
    std::vector<std::pair<QToolButton*, std::pair<replay::NavTarget, bool>>> nav_;
    QSlider* scrub_ = nullptr;
    QSlider* speedSlider_ = nullptr;
    QLabel* speedLabel_ = nullptr;
    QLabel* positionLabel_ = nullptr;
    QLabel* rankLabel_ = nullptr;
    QSpinBox* rank_ = nullptr;
    QCheckBox* loop_ = nullptr;
    QCheckBox* followLive_ = nullptr;
};

} // namespace shardscope::widgets
