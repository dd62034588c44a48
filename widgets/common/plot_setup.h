#pragma once
// The plot frame every run chart shares: a QCustomPlot filling its owner, a bold title row on
// top, and tick labels in the app's byte units.
#include "common/qcustomplot.h"

class QWidget;

namespace shardscope::widgets {

// Ticks printed with formatDecimal (kB, MB, GB: powers of 1000, as the charts' axes say).
class ByteTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override;
};

// A plot that fills `owner` (a fresh QVBoxLayout), with an empty title element in row 0.
QCustomPlot* makeTitledPlot(QWidget* owner);
// Sets the text of the title element a titled plot has in row 0.
void setPlotTitle(QCustomPlot* plot, const QString& title);

} // namespace shardscope::widgets
