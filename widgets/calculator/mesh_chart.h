#pragma once
// Per-rank device memory of the chosen strategy for every (T, D) of the fixed world size N:
// one stacked bar per mesh, by ledger category, the chosen T shaded. TP shrinks every rank's
// slice of the model (params, grads and optimizer state / T) before ZeRO shards it over D.
#include "calculator/result_chart.h"

namespace shardscope::widgets {

class MeshChart : public ResultChart {
    Q_OBJECT
public:
    explicit MeshChart(QWidget* parent = nullptr);

private:
    void rebuild() override;
    void addBars(double scale);
    void addTotals(double scale);
};

} // namespace shardscope::widgets
