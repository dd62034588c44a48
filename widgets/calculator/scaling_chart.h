#pragma once
// Per-rank model states on the device versus N (log-log), one curve per strategy, with the
// ZeRO stages' limits (ZeRO-1 → 4×, ZeRO-2 → 8×, ZeRO-3 → N× for mixed-precision Adam) and a
// marker at the chosen N.
#include "calculator/calculator_compute.h"

#include <QPointF>
#include <QVector>
#include <QWidget>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemTracer;

namespace shardscope::widgets {

class ScalingChart : public QWidget {
    Q_OBJECT
public:
    explicit ScalingChart(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const CalculatorResult> result);

    QCustomPlot* plot() const { return plot_; }
    // The curve of a strategy (nullptr when absent) and the chosen-N marker, for tests.
    QCPGraph* graphFor(plan::Strategy s) const;
    QPointF markerPosition() const;
    // Nothing of the model states on the device (everything offloaded): drawn as a "0 B" mark
    // on the axis floor, never as a point of the curve.
    QCPGraph* zeroGraphFor(plan::Strategy s) const;
    bool zeroOnDeviceAt(plan::Strategy s, int ranks) const;

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    void addLimitLines(double xMin, double xMax);
    void addLimitLine(double y, double xMin, double xMax, const QString& label);
    void addMarker();
    void addZeroMarks(const std::vector<std::pair<const StrategySeries*, QVector<double>>>& zeros);

    std::shared_ptr<const CalculatorResult> result_;
    QCustomPlot* plot_ = nullptr;
    QCPItemTracer* marker_ = nullptr;
    double zeroFloor_ = 1; // where "0 B" marks sit: just above the y axis' lower end
    bool narrow_ = false;  // fewer N labels below kNarrowWidth
    bool cramped_ = false; // limits named in the legend instead of labelled in the plot
    static constexpr int kNarrowWidth = 460;
};

} // namespace shardscope::widgets
