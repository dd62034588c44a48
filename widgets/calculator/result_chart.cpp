#include "calculator/result_chart.h"

#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/theory_names.h"

#include <QEvent>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {

ResultChart::ResultChart(QWidget* parent, const QString& plotName, QSize minimumSize)
    : QWidget(parent), plot_(new QCustomPlot(this)) {
    plot_->setObjectName(plotName);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    plot_->setMinimumSize(minimumSize);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot_, QString(), QFont(font().family(), 10, QFont::Bold)));
    placeLegendBelow(plot_, QSize(14, 10), 0.9);
}

void ResultChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (isCramped(plot_) != cramped_) rebuild();
}

void ResultChart::setResult(std::shared_ptr<const CalculatorResult> result) {
    result_ = std::move(result);
    rebuild();
}

void ResultChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

QCPBars* ResultChart::stackBars(Category c, const QVector<double>& keys,
                                const QVector<double>& values, QCPBars* below) {
    if (std::all_of(values.begin(), values.end(), [](double v) { return v == 0; })) return below;
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(categoryLabel(c));
    bars->setWidth(0.62);
    bars->setPen(QPen(categoryColor(c).darker(130), 0.8));
    bars->setBrush(categoryColor(c));
    bars->setData(keys, values, true);
    if (below) bars->moveAbove(below);
    return bars;
}

} // namespace shardscope::widgets
