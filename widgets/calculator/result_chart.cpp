#include "calculator/result_chart.h"

#include <QEvent>
#include <QResizeEvent>
#include <QVBoxLayout>
#include "common/qcustomplot.h"

#include "common/plot_setup.h"

namespace shardscope::widgets {

ResultChart::ResultChart(QWidget* parent, const QString& plotName, QSize minimumSize)
    : QWidget(parent), plot_(new QCustomPlot(this)) {
    plot_->setObjectName(plotName);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    plot_->setMinimumSize(minimumSize);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, QString(), QFont(font().family(), 10, QFont::Bold)));
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

} // namespace shardscope::widgets
