#pragma once
// QCustomPlot charts over a run's time: memory of one rank (stacked by ledger category, with a
// cursor at the replay position) and the loss per step. Both redraw through a single-shot
// timer, so steps arriving in bursts and a cursor moving at 60 fps cost one replot per tick.
#include "replay/rank_series.h"

#include <QTimer>
#include <QWidget>

class QCustomPlot;
class QCPItemStraightLine;

namespace shardscope::widgets {

class MemoryTimelineChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryTimelineChart(QWidget* parent = nullptr);

    void reset();
    void appendSteps(const replay::StepList& steps);
    void setRank(int rank);
    int rank() const { return rank_; }
    void setCursorNs(std::uint64_t replayNs);
    void redrawNow();

    QCustomPlot* plot() const { return plot_; }
    std::size_t pointCount() const { return shownPoints_; }
    static constexpr std::size_t kPointsPerStep = 400;
    static constexpr std::size_t kMaxPoints = 1600; // about one per pixel on a wide screen
    static constexpr int kRedrawMs = 60;

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void retranslateUi();

    QCustomPlot* plot_;
    QCPItemStraightLine* cursor_ = nullptr;
    QTimer redraw_;
    replay::StepList steps_;
    std::vector<std::vector<replay::SeriesPoint>> perStep_; // for rank_, one entry per step
    int rank_ = 0;
    std::uint64_t cursorNs_ = 0;
    std::size_t shownPoints_ = 0;
    bool dataDirty_ = false;
};

class LossChart : public QWidget {
    Q_OBJECT
public:
    explicit LossChart(QWidget* parent = nullptr);
    void reset();
    // A resumed run's steps before it: the x axis counts on from the checkpoint's step.
    void setStepsBefore(std::int64_t steps) { stepsBefore_ = steps; }
    void appendSteps(const replay::StepList& steps);
    QCustomPlot* plot() const { return plot_; }
    int pointCount() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    QCustomPlot* plot_;
    QTimer redraw_;
    std::int64_t stepsBefore_ = 0;
};

} // namespace shardscope::widgets
