#include "calculator/scaling_chart.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/theory_names.h"
#include "plan/policy.h"

#include <QEvent>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {

using plan::Strategy;

namespace {

// Log-scale byte axis: ticks at powers of ten, labelled "1 GB", "10 GB", ...
class ByteLogTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        return formatDecimal(tick);
    }
};

// Every power of two, or every other one where the chart is too narrow for eleven labels.
QSharedPointer<QCPAxisTickerText> powerOfTwoTicker(double xMax, bool narrow) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double n = 1; n <= xMax * 1.01; n *= narrow ? 4 : 2)
        ticker->addTick(n, QString::number(n, 'f', 0));
    ticker->setSubTickCount(0);
    return ticker;
}

bool dashed(Strategy s) {
    return plan::policyFor(s).fsdp;
}

// "4×", "8×", "2.7×": the reduction against DDP, shown only where it is a reduction.
QString ratioText(double ddp, double limit) {
    const double r = ddp / limit;
    return std::abs(r - std::round(r)) < 0.05 ? QString::number(std::lround(r))
                                              : QString::number(r, 'f', 1);
}

} // namespace

ScalingChart::ScalingChart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    plot_->setObjectName(QStringLiteral("scalingPlot"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    plot_->setMinimumSize(260, 220); // two side by side beside the inputs fit a 1024 px window
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<ByteLogTicker>::create());
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot_, QString(), QFont(font().family(), 10, QFont::Bold)));
    placeLegendBelow(plot_, QSize(20, 10), 0.9); // below the axes: it never hides a curve
}

QCPGraph* ScalingChart::graphFor(Strategy s) const {
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->property("strategy").toInt() == static_cast<int>(s) + 1)
            return plot_->graph(i);
    return nullptr;
}

QPointF ScalingChart::markerPosition() const {
    if (!marker_) return {};
    marker_->updatePosition();
    return {marker_->position->key(), marker_->position->value()};
}

void ScalingChart::setResult(std::shared_ptr<const CalculatorResult> result) {
    result_ = std::move(result);
    rebuild();
}

void ScalingChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if ((width() < kNarrowWidth) != narrow_ || isCramped(plot_) != cramped_) rebuild();
}

void ScalingChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

void ScalingChart::rebuild() {
    plot_->clearGraphs();
    plot_->clearItems();
    marker_ = nullptr;
    setPlotTitle(plot_, tr("Model states per rank on the device vs. N"));
    // Cramped: the tick labels carry the unit ("100 GB") and N is the x axis' only quantity.
    setAxisTitle(plot_->xAxis, tr("Ranks N (log scale)"), QStringLiteral("N"));
    setAxisTitle(plot_->yAxis, tr("Bytes per rank (GB = 10⁹)"));
    cramped_ = isCramped(plot_);
    if (!result_ || !result_->error.isEmpty()) {
        plot_->replot();
        return;
    }
    double yMin = 1e300, yMax = 0;
    // A log axis has no 0: points with nothing on the device (everything offloaded) leave a gap
    // in their curve and sit as "0 B" marks on the axis floor instead of posing as 1 B.
    std::vector<std::pair<const StrategySeries*, QVector<double>>> zeros;
    for (const StrategySeries& s : result_->series) {
        QVector<double> keys, values, zeroKeys;
        for (const ScalingPoint& p : s.points) {
            keys.push_back(p.ranks);
            if (p.deviceBytes <= 0) {
                values.push_back(qQNaN());
                zeroKeys.push_back(p.ranks);
                continue;
            }
            values.push_back(p.deviceBytes);
            yMin = std::min(yMin, values.back());
            yMax = std::max(yMax, values.back());
        }
        if (!zeroKeys.isEmpty()) zeros.emplace_back(&s, zeroKeys);
        QCPGraph* g = plot_->addGraph();
        g->setProperty("strategy", static_cast<int>(s.strategy) + 1);
        g->setName(strategyShortLabel(s.strategy));
        const bool chosen = s.strategy == result_->input.strategy;
        QPen pen(strategyColor(static_cast<int>(s.strategy)), chosen ? 3.0 : 1.6);
        if (dashed(s.strategy)) pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, chosen ? 6 : 4));
        g->setData(keys, values, true);
    }
    const double xMax = std::max(1024.0, static_cast<double>(result_->sweepRanks.back()));
    narrow_ = width() < kNarrowWidth;
    plot_->xAxis->setTicker(powerOfTwoTicker(xMax, narrow_));
    plot_->xAxis->setRange(0.8, xMax * 1.25);
    if (yMax <= 0) yMin = 1e6, yMax = 1e9;      // nothing on the device at any N
    plot_->yAxis->setRange(yMin / 4, yMax * 4); // room for the limit labels
    zeroFloor_ = yMin / 4 * 1.6;
    addZeroMarks(zeros);
    addLimitLines(1, xMax);
    addMarker();
    fitLegendToWidth(plot_);
    plot_->replot();
}

void ScalingChart::addLimitLines(double xMin, double xMax) {
    const ScalingLimits& l = result_->limits;
    if (!(l.ddpBytes > 0) || !(l.paramCount > 0)) return;
    QStringList ratios; // a cramped plot names the limits once, in the legend
    addLimitLine(l.ddpBytes, xMin, xMax,
                 tr("DDP: %1 B/param").arg(QString::number(l.ddpBytes / l.paramCount, 'g', 3)));
    if (l.zero1Limit > 0 && l.zero1Limit < l.ddpBytes * 0.95) {
        addLimitLine(l.zero1Limit, xMin, xMax,
                     tr("ZeRO-1 → %1× limit").arg(ratioText(l.ddpBytes, l.zero1Limit)));
        ratios << ratioText(l.ddpBytes, l.zero1Limit) + QStringLiteral("×");
    }
    if (l.zero2Limit > 0 && l.zero2Limit < l.zero1Limit * 0.95) {
        addLimitLine(l.zero2Limit, xMin, xMax,
                     tr("ZeRO-2 → %1× limit").arg(ratioText(l.ddpBytes, l.zero2Limit)));
        ratios << ratioText(l.ddpBytes, l.zero2Limit) + QStringLiteral("×");
    }
    ratios << QStringLiteral("N×");
    // ZeRO-3 has no floor: it divides everything by N.
    QCPGraph* g = plot_->addGraph();
    g->setPen(QPen(Qt::gray, 1.2, Qt::DotLine));
    g->setData({xMin, xMax}, {l.ddpBytes / xMin, l.ddpBytes / xMax}, true);
    if (cramped_) {
        // The labels would pile onto each other and onto the curves at the right end.
        g->setName(tr("limits %1").arg(ratios.join(QStringLiteral("·"))));
        return;
    }
    g->removeFromLegend();
    auto* text = new QCPItemText(plot_);
    text->setObjectName(QStringLiteral("limitLabel"));
    text->position->setCoords(xMax, l.ddpBytes / xMax);
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->setText(tr("ZeRO-3 → N× (DDP / N)"));
    text->setColor(Qt::darkGray);
}

void ScalingChart::addLimitLine(double y, double xMin, double xMax, const QString& label) {
    QCPGraph* g = plot_->addGraph();
    g->setPen(QPen(Qt::gray, 1.2, Qt::DashLine));
    g->setData({xMin, xMax}, {y, y}, true);
    g->removeFromLegend();
    if (cramped_) return;
    // Below the line at the right end: the curves approach their limit from above.
    auto* text = new QCPItemText(plot_);
    text->setObjectName(QStringLiteral("limitLabel"));
    text->position->setCoords(xMax, y);
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->setText(label);
    text->setColor(Qt::darkGray);
    // The next curve down can still reach this band at large N (ZeRO-2 under ZeRO-1's label):
    // a translucent backing keeps the text readable where a curve passes behind it.
    text->setBrush(QBrush(QColor(255, 255, 255, 210)));
    text->setPadding(QMargins(2, 0, 2, 0));
}

void ScalingChart::addZeroMarks(
    const std::vector<std::pair<const StrategySeries*, QVector<double>>>& zeros) {
    for (const auto& [series, keys] : zeros) {
        QCPGraph* g = plot_->addGraph();
        g->setProperty("zeroOf", static_cast<int>(series->strategy) + 1);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted,
                                           strategyColor(static_cast<int>(series->strategy)),
                                           strategyColor(static_cast<int>(series->strategy)), 8));
        g->setData(keys, QVector<double>(keys.size(), zeroFloor_), true);
        g->removeFromLegend();
    }
    if (zeros.empty()) return;
    auto* text = new QCPItemText(plot_);
    text->setObjectName(QStringLiteral("zeroOnDevice"));
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.02, 0.97);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    text->setText(tr("▼ 0 B on the device (all offloaded)"));
    text->setColor(Qt::darkGray);
    text->setBrush(QBrush(QColor(255, 255, 255, 210)));
}

QCPGraph* ScalingChart::zeroGraphFor(Strategy s) const {
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->property("zeroOf").toInt() == static_cast<int>(s) + 1)
            return plot_->graph(i);
    return nullptr;
}

bool ScalingChart::zeroOnDeviceAt(Strategy s, int ranks) const {
    const QCPGraph* g = zeroGraphFor(s);
    if (!g) return false;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        if (it->key == ranks) return true;
    return false;
}

void ScalingChart::addMarker() {
    const bool zero = zeroOnDeviceAt(result_->input.strategy, result_->input.ranks);
    QCPGraph* g = zero ? zeroGraphFor(result_->input.strategy) : graphFor(result_->input.strategy);
    if (!g || g->data()->isEmpty()) return;
    const double n = result_->input.ranks;
    marker_ = new QCPItemTracer(plot_);
    marker_->setGraph(g);
    marker_->setInterpolating(false);
    marker_->setGraphKey(n);
    marker_->setStyle(QCPItemTracer::tsCircle);
    marker_->setSize(13);
    marker_->setPen(QPen(Qt::black, 2));
    marker_->updatePosition();
    auto* line = new QCPItemStraightLine(plot_);
    line->point1->setCoords(n, 1);
    line->point2->setCoords(n, 10);
    line->setPen(QPen(QColor(0, 0, 0, 90), 1, Qt::DotLine));
    auto* label = new QCPItemText(plot_);
    label->position->setParentAnchor(marker_->position);
    // Label on the side with more room, so it stays inside the axis rect for N near 1024.
    const QCPRange x = plot_->xAxis->range();
    const bool rightHalf = std::log(n / x.lower) > 0.5 * std::log(x.upper / x.lower);
    label->position->setCoords(rightHalf ? -10 : 10, -8);
    label->setPositionAlignment((rightHalf ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
    const QString value = zero ? formatDecimal(0) : formatDecimal(marker_->position->value());
    // Cramped: the value alone; the dotted line down to the N axis says where it is.
    label->setText(cramped_ ? value : tr("N = %1: %2").arg(result_->input.ranks).arg(value));
    label->setBrush(QBrush(QColor(255, 255, 255, 220)));
    label->setPadding(QMargins(3, 1, 3, 1));
}

} // namespace shardscope::widgets
