#include "ranks/run_theory_charts.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/theory_names.h"
#include "run/run_request.h"
#include "theory/estimate.h"

#include <QEvent>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <cmath>

namespace shardscope::widgets {
namespace {

using plan::Strategy;

class TimesLogTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        return QString::number(tick, 'g', 3) + QStringLiteral("×");
    }
};

// The run's model at N ranks under strategy s, as the theory engine sees it: the preset's GPT
// shape when the handshake names a known preset (padding included), else the bare count.
std::optional<theory::Scenario> scenarioFor(const replay::RunInfo& info, Strategy s, int ranks) {
    theory::Scenario sc;
    if (const auto preset = findRunPreset(QString::fromStdString(info.model)))
        sc.shape = preset->shape;
    else if (info.paramCount > 0)
        sc.params = info.paramCount;
    else
        return std::nullopt;
    sc.strategy = s;
    sc.ranks = ranks;
    sc.precision.kind =
        info.precision == "fp32" ? plan::PrecisionKind::Fp32 : plan::PrecisionKind::MixedBf16;
    return sc;
}

std::optional<double> theoryDevice(const replay::RunInfo& info, Strategy s, int ranks) {
    const auto sc = scenarioFor(info, s, ranks);
    if (!sc) return std::nullopt;
    try {
        theory::validate(*sc);
        return static_cast<double>(theory::modelStates(*sc).perRank.tier(Tier::Device));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace

std::uint64_t modelStateTotal(const replay::CategoryBytes& bytes) {
    std::uint64_t t = 0;
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other) t += bytes[index(c)];
    return t;
}

std::optional<std::uint64_t> ddpModelStates(const replay::RunInfo& info, int rank) {
    if (const auto ddp = info.ddpTheoryModelStatesOf(rank)) return modelStateTotal(*ddp);
    if (const auto d = theoryDevice(info, Strategy::Ddp, info.worldSize))
        return static_cast<std::uint64_t>(*d);
    return std::nullopt;
}

// ---- measured vs theory, by category ----

MeasuredVsTheoryChart::MeasuredVsTheoryChart(QWidget* parent)
    : QWidget(parent), plot_(makeTitledPlot(this)) {
    plot_->setObjectName(QStringLiteral("measuredVsTheoryPlot"));
    // Horizontal bars: the category names read left to right, however narrow the chart is.
    auto bytes = QSharedPointer<ByteTicker>::create();
    bytes->setTickCount(2); // "1.25 MB" labels are wide; a narrow chart fits few
    plot_->xAxis->setTicker(bytes);
    plot_->yAxis->setRangeReversed(true); // the first category on top
    placeLegendBelow(plot_, QSize(20, 8), 0.85);
    rebuild();
}

void MeasuredVsTheoryChart::setComparison(const TheoryComparison& c) {
    data_ = c;
    rebuild();
}

void MeasuredVsTheoryChart::rebuild() {
    plot_->clearPlottables();
    setPlotTitle(plot_, tr("Rank %1: measured vs theory, by category").arg(data_.rank));
    setAxisTitle(plot_->xAxis, tr("bytes per rank")); // cramped: the ticks say "100 kB"
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    auto* group = new QCPBarsGroup(plot_);
    auto* measured = new QCPBars(plot_->yAxis, plot_->xAxis);
    auto* theory = new QCPBars(plot_->yAxis, plot_->xAxis);
    measured->setName(data_.fromReport ? tr("measured (final report)")
                                       : tr("measured (end of last step)"));
    theory->setName(tr("theory (handshake)"));
    measured->setBrush(neutralColor(0x50));
    measured->setPen(Qt::NoPen);
    theory->setBrush(neutralColor(0xd0));
    theory->setPen(QPen(neutralColor(0x60)));
    for (auto* b : {measured, theory}) {
        b->setWidth(0.38);
        b->setBarsGroup(group);
    }
    const replay::RunInfo* info = data_.info.get();
    double x = 1;
    for (Category c : kAllCategories) {
        if (stateGroup(c) == StateGroup::Other) continue;
        const auto m = static_cast<double>(data_.measuredStates[index(c)]);
        const auto rankTheory = info ? info->theoryModelStatesOf(data_.rank) : std::nullopt;
        const double t = rankTheory ? static_cast<double>((*rankTheory)[index(c)]) : 0.0;
        if (m == 0 && t == 0) continue;
        measured->addData(x, m);
        theory->addData(x, t);
        ticker->addTick(x, categoryLabel(c)); // readable, translated; the wire name is for tooltips
        x += 1;
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRange(0.4, std::max(2.0, x - 0.4));
    plot_->xAxis->rescale();
    plot_->xAxis->setRangeLower(0);
    plot_->xAxis->scaleRange(1.1, 0);
    fitLegendToWidth(plot_);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MeasuredVsTheoryChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

// ---- savings vs DDP ----

SavingsChart::SavingsChart(QWidget* parent) : QWidget(parent), plot_(makeTitledPlot(this)) {
    plot_->setObjectName(QStringLiteral("savingsPlot"));
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<TimesLogTicker>::create());
    placeLegendBelow(plot_, QSize(20, 8), 0.85);
    rebuild();
}

void SavingsChart::setComparison(const TheoryComparison& c) {
    data_ = c;
    rebuild();
}

void SavingsChart::rebuild() {
    plot_->clearPlottables();
    plot_->clearItems();
    setPlotTitle(plot_, tr("Savings vs DDP (model states)"));
    cramped_ = isCramped(plot_);
    setAxisTitle(plot_->xAxis,
                 tr("ranks N")); // cramped: its 1, 2, 4, … ticks, under a tab that names the chart
    setAxisTitle(plot_->yAxis, tr("DDP ÷ this strategy, per rank")); // cramped: the ticks say "4×"
    measured_.reset();
    theory_.reset();
    plot_->yAxis2->setVisible(false); // addLimits shows it when there are limits to name
    const replay::RunInfo* info = data_.info.get();
    const int n = info ? info->worldSize : 4;
    const double xMax = std::max(64.0, std::pow(2.0, std::ceil(std::log2(std::max(n, 1)))) * 2);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double v = 1; v <= xMax * 1.01; v *= 2)
        ticker->addTick(v, QString::number(v, 'f', 0));
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(0.9, xMax * 1.1);
    plot_->yAxis->setRange(0.8, xMax * 1.5);
    if (info) {
        const std::array<Strategy, 3> stages = {Strategy::Zero1, Strategy::Zero2, Strategy::Zero3};
        for (Strategy s : stages) {
            QCPGraph* g = plot_->addGraph();
            g->setName(tr("theory: %1").arg(strategyShortLabel(s)));
            g->setPen(QPen(strategyColor(static_cast<int>(s)), 2));
            for (double v = 1; v <= xMax * 1.01; v *= 2) {
                const auto ddp = theoryDevice(*info, Strategy::Ddp, static_cast<int>(v));
                const auto st = theoryDevice(*info, s, static_cast<int>(v));
                if (ddp && st && *st > 0) g->addData(v, *ddp / *st);
            }
        }
        addLimits(xMax);
        addMeasuredPoint();
    }
    fitLegendToWidth(plot_);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SavingsChart::addLimits(double xMax) {
    const replay::RunInfo& info = *data_.info;
    const auto ddp1 = scenarioFor(info, Strategy::Ddp, 1);
    if (!ddp1) return;
    // ZeRO-1 keeps params + grads whole, ZeRO-2 keeps params whole: their savings level off at
    // DDP ÷ (what stays whole); ZeRO-3 keeps nothing whole and grows as N.
    const ByteTable ddp = theory::modelStates(*ddp1).perRank;
    const double total = static_cast<double>(ddp.tier(Tier::Device));
    const double params = static_cast<double>(ddp.group(StateGroup::Param, Tier::Device));
    const double grads = static_cast<double>(ddp.group(StateGroup::Grad, Tier::Device));
    // The limits are named on the right axis, not inside the axes: every text placed next to a
    // dashed line collided with a curve (ZeRO-1/2 approach their limit from below, the ZeRO-3
    // diagonal crosses both lines) or with the measured point in the small chart.
    auto limits = QSharedPointer<QCPAxisTickerText>::create();
    bool first = true;
    auto line = [&](double y, Strategy s) {
        QCPGraph* g = plot_->addGraph();
        QColor c = strategyColor(static_cast<int>(s));
        c.setAlpha(150);
        g->setPen(QPen(c, 1, Qt::DashLine));
        g->addData(1, y);
        g->addData(xMax, y);
        // One legend entry explains both dashed lines; their colour says whose limit it is.
        // A cramped chart leaves that to the right axis: its rows would squeeze the legend.
        if (first && !cramped_)
            g->setName(tr("ZeRO-1/2 limits"));
        else
            g->removeFromLegend();
        first = false;
        limits->addTick(y, QString::number(y, 'g', 3) + QStringLiteral("×"));
    };
    if (params + grads > 0) line(total / (params + grads), Strategy::Zero1);
    if (params > 0) line(total / params, Strategy::Zero2);
    plot_->yAxis2->setVisible(true);
    plot_->yAxis2->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis2->setRange(plot_->yAxis->range());
    plot_->yAxis2->setTicker(limits);
    plot_->yAxis2->setTickLabelColor(neutralColor(0x50));
    plot_->yAxis2->setSubTicks(false);
    QCPGraph* diag = plot_->addGraph();
    diag->setName(tr("N× (ZeRO-3 limit)"));
    diag->setPen(QPen(neutralColor(0x99), 1, Qt::DotLine));
    if (cramped_) diag->removeFromLegend();
    diag->addData(1, 1);
    diag->addData(xMax, xMax);
}

void SavingsChart::addMeasuredPoint() {
    const replay::RunInfo& info = *data_.info;
    const std::uint64_t measured = modelStateTotal(data_.measuredStates);
    const auto ddp = ddpModelStates(info, data_.rank);
    const auto states = info.theoryModelStatesOf(data_.rank);
    if (states && ddp && modelStateTotal(*states) > 0)
        theory_ = static_cast<double>(*ddp) / static_cast<double>(modelStateTotal(*states));
    if (!ddp || measured == 0) return;
    measured_ = static_cast<double>(*ddp) / static_cast<double>(measured);
    QCPGraph* point = plot_->addGraph();
    // The value lives in the legend: the point sits on a theory curve by construction, so a
    // label beside it always crossed that curve or the limit lines.
    // (Short: the legend's two columns share the chart's width; N is the point's x.)
    point->setName(tr("measured: %1×").arg(*measured_, 0, 'f', 2));
    point->setLineStyle(QCPGraph::lsNone);
    point->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, neutralColor(0x20), Qt::white, 11));
    // With --tp or --pp the baseline is DDP on the same slice of the model (the rank's TP slice,
    // its stage's units), sharded over the data-parallel ranks: the point sits at D, where the
    // curves (the whole model over D ranks) give the same ratios.
    point->addData(std::max(1, info.worldSize / (info.tensorParallel * info.pipeParallel)),
                   *measured_);
}

void SavingsChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (isCramped(plot_) != cramped_) rebuild();
}

void SavingsChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
