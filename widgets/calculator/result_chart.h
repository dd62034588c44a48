#pragma once
// The shell of a Calculator chart: one QCustomPlot with a title row and its legend below, redrawn
// from the latest CalculatorResult, on a language change, and when the plot becomes cramped or
// roomy again (plot_setup's isCramped). A chart implements rebuild() and nothing else.
#include "calculator/calculator_compute.h"
#include "core/categories.h"

#include <QSize>
#include <QString>
#include <QVector>
#include <QWidget>
#include <memory>

class QCustomPlot;
class QCPBars;

namespace shardscope::widgets {

class ResultChart : public QWidget {
    Q_OBJECT
public:
    void setResult(std::shared_ptr<const CalculatorResult> result);
    QCustomPlot* plot() const { return plot_; }

protected:
    ResultChart(QWidget* parent, const QString& plotName, QSize minimumSize);
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    // Redraws everything from result_ (may be null); sets cramped_ = isCramped(plot_).
    virtual void rebuild() = 0;
    // One category's bars (keys 1…n) stacked on `below` (null: the first), in the palette's colour;
    // returns the new top, or `below` when every value is 0 (nothing drawn).
    QCPBars* stackBars(Category c, const QVector<double>& keys, const QVector<double>& values,
                       QCPBars* below);

    std::shared_ptr<const CalculatorResult> result_;
    QCustomPlot* plot_ = nullptr;
    bool cramped_ = false; // see isCramped: fewer labels, shorter axis titles
};

} // namespace shardscope::widgets
