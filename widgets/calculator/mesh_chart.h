#pragma once
// Per-rank device memory of the chosen strategy for every (T, D) of the fixed world size N:
// one stacked bar per mesh, by ledger category, the chosen T shaded. TP shrinks every rank's
// slice of the model (params, grads and optimizer state / T) before ZeRO shards it over D.
#include <QWidget>

#include "calculator/calculator_compute.h"

class QCustomPlot;

namespace shardscope::widgets {

class MeshChart : public QWidget {
    Q_OBJECT
public:
    explicit MeshChart(QWidget* parent = nullptr);

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
    bool cramped_ = false;
};

} // namespace shardscope::widgets
