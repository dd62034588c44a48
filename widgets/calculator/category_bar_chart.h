#pragma once
// One stacked bar per strategy at the chosen N: the device bytes of each ledger category, in
// the shared category palette.
#include <QWidget>

#include "calculator/calculator_compute.h"

class QCustomPlot;

namespace shardscope::widgets {

class CategoryBarChart : public QWidget {
    Q_OBJECT
public:
    explicit CategoryBarChart(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const CalculatorResult> result);
    QCustomPlot* plot() const { return plot_; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    void addBars(double scale);
    void addTotals(double scale);

    std::shared_ptr<const CalculatorResult> result_;
    QCustomPlot* plot_ = nullptr;
    bool cramped_ = false; // see isCramped: fewer totals, the unit alone as the axis title
};

} // namespace shardscope::widgets
