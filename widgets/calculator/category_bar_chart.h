#pragma once
// One stacked bar per strategy at the chosen N: the device bytes of each ledger category, in
// the shared category palette.
#include "calculator/result_chart.h"

namespace shardscope::widgets {

class CategoryBarChart : public ResultChart {
    Q_OBJECT
public:
    explicit CategoryBarChart(QWidget* parent = nullptr);

private:
    void rebuild() override;
    void addBars(double scale);
    void addTotals(double scale);
};

} // namespace shardscope::widgets
