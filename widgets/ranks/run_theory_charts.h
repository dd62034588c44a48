#pragma once
// Measured against theory: per-category model states of one rank next to what the handshake's
// theory predicted, and the savings against DDP at this N placed on the
// theory's curves for ZeRO-1/2/3 as N grows, with their limits (4×, 8× and N× for
// mixed-precision Adam).
#include "replay/run_data.h"

#include <QWidget>
#include <optional>

class QCustomPlot;

namespace shardscope::widgets {

// What both charts need from a run, gathered by the page from the replay and the report.
struct TheoryComparison {
    std::shared_ptr<const replay::RunInfo> info;
    int rank = 0;
    replay::CategoryBytes measuredStates{}; // model states of `rank` at the end of the last step
    std::uint64_t measuredPeak = 0;         // highest live total of `rank` so far
    bool fromReport = false;                // measuredStates came from the final report
};

// Model-state categories only (params, grads, optimizer): what the ZeRO paper's table counts.
std::uint64_t modelStateTotal(const replay::CategoryBytes& bytes);

class MeasuredVsTheoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MeasuredVsTheoryChart(QWidget* parent = nullptr);
    void setComparison(const TheoryComparison& c);
    QCustomPlot* plot() const { return plot_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    QCustomPlot* plot_;
    TheoryComparison data_;
};

class SavingsChart : public QWidget {
    Q_OBJECT
public:
    explicit SavingsChart(QWidget* parent = nullptr);
    void setComparison(const TheoryComparison& c);
    QCustomPlot* plot() const { return plot_; }
    // DDP's model states ÷ this run's, at its N (nullopt before any step).
    std::optional<double> measuredSavings() const { return measured_; }
    std::optional<double> theorySavings() const { return theory_; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    void addLimits(double xMax);
    void addMeasuredPoint();
    QCustomPlot* plot_;
    TheoryComparison data_;
    std::optional<double> measured_;
    bool cramped_ = false; // the limits are named by the right axis' ticks alone, not the legend
    std::optional<double> theory_;
};

// DDP's model states for `rank` of this run (a pipeline's: its stage's units): from the
// handshake, else the theory engine.
std::optional<std::uint64_t> ddpModelStates(const replay::RunInfo& info, int rank);

} // namespace shardscope::widgets
