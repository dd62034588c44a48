#include "ranks/run_timeline_charts.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "core/step_number.h"
#include "ranks/rank_ledger_view.h"

#include <QEvent>
#include <QVBoxLayout>

namespace shardscope::widgets {

MemoryTimelineChart::MemoryTimelineChart(QWidget* parent)
    : QWidget(parent), plot_(makeTitledPlot(this)) {
    plot_->setObjectName(QStringLiteral("memoryTimelinePlot"));
    plot_->yAxis->setTicker(QSharedPointer<ByteTicker>::create());
    // One graph per category, stacked in the rank view's order; each fills down to the one below.
    QCPGraph* below = nullptr;
    for (Category c : categoryStackOrder()) {
        QCPGraph* g = plot_->addGraph();
        g->setPen(QPen(categoryColor(c).darker(115), 1));
        g->setBrush(categoryColor(c));
        g->setLineStyle(QCPGraph::lsStepLeft);
        if (below) g->setChannelFillGraph(below);
        below = g;
    }
    cursor_ = new QCPItemStraightLine(plot_);
    cursor_->setPen(QPen(neutralColor(0x20), 1.5, Qt::DashLine));
    redraw_.setSingleShot(true);
    redraw_.setInterval(kRedrawMs);
    connect(&redraw_, &QTimer::timeout, this, &MemoryTimelineChart::rebuild);
    retranslateUi();
}

void MemoryTimelineChart::reset() {
    steps_.clear();
    perStep_.clear();
    cursorNs_ = 0;
    dataDirty_ = true;
    redraw_.start();
}

void MemoryTimelineChart::appendSteps(const replay::StepList& steps) {
    for (const replay::StepPtr& s : steps) {
        steps_.push_back(s);
        perStep_.push_back(replay::rankSeries(*s, rank_, kPointsPerStep));
    }
    dataDirty_ = true;
    if (!redraw_.isActive()) redraw_.start();
}

void MemoryTimelineChart::setRank(int rank) {
    if (rank == rank_) return;
    rank_ = rank;
    for (std::size_t i = 0; i < steps_.size(); ++i)
        perStep_[i] = replay::rankSeries(*steps_[i], rank_, kPointsPerStep);
    dataDirty_ = true;
    retranslateUi();
    redraw_.start();
}

void MemoryTimelineChart::setCursorNs(std::uint64_t replayNs) {
    cursorNs_ = replayNs;
    if (!redraw_.isActive()) redraw_.start();
}

void MemoryTimelineChart::redrawNow() {
    redraw_.stop();
    rebuild();
}

void MemoryTimelineChart::rebuild() {
    const double cursorMs = static_cast<double>(cursorNs_) / 1e6;
    cursor_->point1->setCoords(cursorMs, 0);
    cursor_->point2->setCoords(cursorMs, 1);
    if (dataDirty_) {
        std::vector<replay::SeriesPoint> all;
        for (const auto& v : perStep_)
            all.insert(all.end(), v.begin(), v.end());
        all = replay::capSeries(std::move(all), kMaxPoints);
        shownPoints_ = all.size();
        QVector<double> keys(static_cast<qsizetype>(all.size()));
        std::vector<double> sums(all.size(), 0.0);
        for (std::size_t i = 0; i < all.size(); ++i)
            keys[static_cast<qsizetype>(i)] = static_cast<double>(all[i].replayNs) / 1e6;
        int g = 0;
        for (Category c : categoryStackOrder()) {
            QVector<double> values(static_cast<qsizetype>(all.size()));
            for (std::size_t i = 0; i < all.size(); ++i) {
                sums[i] += static_cast<double>(all[i].bytes[index(c)]);
                values[static_cast<qsizetype>(i)] = sums[i];
            }
            plot_->graph(g++)->setData(keys, values, true);
        }
        plot_->rescaleAxes();
        plot_->yAxis->setRangeLower(0);
        plot_->yAxis->scaleRange(1.08, plot_->yAxis->range().lower);
        dataDirty_ = false;
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryTimelineChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void MemoryTimelineChart::retranslateUi() {
    setPlotTitle(plot_, tr("Memory of rank %1 over the run (stacked by category)").arg(rank_));
    setAxisTitle(plot_->xAxis, tr("time in the run (ms, steps back to back)"),
                 QStringLiteral("ms"));
    setAxisTitle(plot_->yAxis, tr("live bytes")); // cramped: the ticks say "2.00 MB"
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

LossChart::LossChart(QWidget* parent) : QWidget(parent), plot_(makeTitledPlot(this)) {
    plot_->setObjectName(QStringLiteral("lossPlot"));
    QCPGraph* g = plot_->addGraph();
    g->setPen(QPen(neutralColor(0x30), 2)); // neutral: red would read as backward
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerFixed>::create());
    qSharedPointerCast<QCPAxisTickerFixed>(plot_->xAxis->ticker())
        ->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    redraw_.setSingleShot(true);
    redraw_.setInterval(MemoryTimelineChart::kRedrawMs);
    connect(&redraw_, &QTimer::timeout, this, [this] {
        plot_->rescaleAxes();
        plot_->xAxis->scaleRange(1.1);
        plot_->yAxis->scaleRange(1.2);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    });
    retranslateUi();
}

void LossChart::reset() {
    plot_->graph(0)->data()->clear();
    redraw_.start();
}

void LossChart::appendSteps(const replay::StepList& steps) {
    for (const replay::StepPtr& s : steps)
        if (s->complete)
            plot_->graph(0)->addData(static_cast<double>(displayStep(s->step, stepsBefore_)),
                                     s->loss);
    if (!redraw_.isActive()) redraw_.start();
}

int LossChart::pointCount() const {
    return plot_->graph(0)->dataCount();
}

void LossChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void LossChart::retranslateUi() {
    setPlotTitle(plot_, tr("Training loss per step (rank 0)"));
    plot_->xAxis->setLabel(tr("step"));
    plot_->yAxis->setLabel(tr("loss"));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace shardscope::widgets
