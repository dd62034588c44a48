#pragma once
// The plot frame every chart shares: a QCustomPlot filling its owner, a bold title row on top,
// tick labels in the app's byte units, a legend row below that wraps to the width, and what a
// plot gives up when a 1024×700 window leaves it cramped.
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

// A plot this small (a 1024×700 window, two charts side by side, or a chart under a tab bar)
// has no room for in-plot annotations, every total above a bar or long axis titles.
bool isCramped(const QWidget* plot);

// The legend in its own row under the axes, wrapped into as many columns as the plot's width
// holds, so entries are neither clipped nor drawn over the data. It re-wraps on every resize;
// call fitLegendToWidth after adding or renaming entries.
void placeLegendBelow(QCustomPlot* plot, QSize iconSize, double fontScale);
void fitLegendToWidth(QCustomPlot* plot);

// An axis title that gives way to `cramped` (empty: none) while the plot isCramped.
void setAxisTitle(QCPAxis* axis, const QString& full, const QString& cramped = QString());

// Presentation mode (View → Presentation): every text of every chart at least `pixels` tall
// (0: the sizes the charts were built with). Applied before each replot, so texts a chart makes
// afresh on a refresh are raised too; followTextFloor hooks a plot not made by makeTitledPlot.
void setChartTextFloor(int pixels);
int chartTextFloor();
void followTextFloor(QCustomPlot* plot);

// `font` raised to at least `pixels` tall (in points, as the widgets scale fonts by points).
QFont atLeastPixels(QFont font, int pixels);

} // namespace shardscope::widgets
