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
// Sets the text of the title element a titled plot has in row 0; it wraps onto further lines
// when the plot is narrower than the title, never clipped at both ends.
void setPlotTitle(QCustomPlot* plot, const QString& title);
QString plotTitle(const QCustomPlot* plot); // the full title, unwrapped

} // namespace shardscope::widgets
