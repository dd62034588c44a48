#include "common/plot_setup.h"

#include <QVBoxLayout>

#include "common/byte_format.h"

namespace shardscope::widgets {

QString ByteTicker::getTickLabel(double tick, const QLocale&, QChar, int) { return formatDecimal(tick); }

QCustomPlot* makeTitledPlot(QWidget* owner) {
    auto* plot = new QCustomPlot(owner);
    auto* layout = new QVBoxLayout(owner);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot);
    plot->setMinimumSize(240, 180);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot, QString(), QFont(owner->font().family(), 9, QFont::Bold)));
    // Replots while dragging stay cheap; the final frame is antialiased again.
    plot->setNoAntialiasingOnDrag(true);
    return plot;
}

void setPlotTitle(QCustomPlot* plot, const QString& title) {
    if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) t->setText(title);
}

} // namespace shardscope::widgets
