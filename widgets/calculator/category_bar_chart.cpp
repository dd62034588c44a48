#include "calculator/category_bar_chart.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/theory_names.h"

#include <algorithm>

namespace shardscope::widgets {

namespace {

struct Unit {
    double scale;
    const char* name; // "GB = 10⁹ B": the decimal unit, labelled as such
};

// Linear axis in the largest decimal unit that keeps the tallest bar above 1.
Unit unitFor(double maxBytes) {
    if (maxBytes >= 1e12) return {1e12, "TB = 10¹² B"};
    if (maxBytes >= 1e9) return {1e9, "GB = 10⁹ B"};
    if (maxBytes >= 1e6) return {1e6, "MB = 10⁶ B"};
    return {1e3, "kB = 10³ B"};
}

double deviceTotal(const StrategyAtN& at) {
    return at.perRank ? static_cast<double>(at.perRank->tier(Tier::Device)) : 0;
}

} // namespace

// 260 × 220: two side by side beside the inputs fit a 1024 px window.
CategoryBarChart::CategoryBarChart(QWidget* parent)
    : ResultChart(parent, QStringLiteral("categoryPlot"), QSize(260, 220)) {}

void CategoryBarChart::rebuild() {
    plot_->clearPlottables();
    plot_->clearItems();
    setPlotTitle(plot_,
                 result_ && result_->error.isEmpty()
                     ? tr("Device bytes per rank by category at N = %1").arg(result_->input.ranks)
                     : tr("Device bytes per rank by category"));
    if (!result_ || !result_->error.isEmpty()) {
        plot_->replot();
        return;
    }
    double maxBytes = 0;
    for (const StrategyAtN& at : result_->atN)
        maxBytes = std::max(maxBytes, deviceTotal(at));
    const Unit unit = unitFor(maxBytes);
    cramped_ = isCramped(plot_);
    // Cramped: the unit alone ("GB"), steeper strategy names, a total only over the chosen bar.
    const QString unitName = QString::fromUtf8(unit.name);
    setAxisTitle(plot_->yAxis, tr("Per rank (%1)").arg(unitName),
                 unitName.section(QLatin1Char(' '), 0, 0));
    plot_->xAxis->setTickLabelRotation(cramped_ ? -50 : -25);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (std::size_t i = 0; i < result_->atN.size(); ++i)
        ticker->addTick(static_cast<double>(i + 1), strategyShortLabel(result_->atN[i].strategy));
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(0.4, static_cast<double>(result_->atN.size()) + 0.6);
    plot_->yAxis->setRange(0, maxBytes / unit.scale * 1.18); // headroom for the total labels
    addBars(unit.scale);
    addTotals(unit.scale);
    fitLegendToWidth(plot_);
    plot_->replot();
}

void CategoryBarChart::addBars(double scale) {
    QCPBars* below = nullptr;
    for (Category c : kAllCategories) {
        QVector<double> keys, values;
        for (std::size_t i = 0; i < result_->atN.size(); ++i) {
            const auto& t = result_->atN[i].perRank;
            keys.push_back(static_cast<double>(i + 1));
            values.push_back(t ? static_cast<double>(t->at(c, Tier::Device)) / scale : 0);
        }
        below = stackBars(c, keys, values, below);
    }
}

void CategoryBarChart::addTotals(double scale) {
    for (std::size_t i = 0; i < result_->atN.size(); ++i) {
        const StrategyAtN& at = result_->atN[i];
        const bool chosen = at.strategy == result_->input.strategy;
        if (chosen) {
            auto* band = new QCPItemRect(plot_);
            band->setLayer(QStringLiteral("grid"));
            band->topLeft->setCoords(static_cast<double>(i + 1) - 0.45,
                                     plot_->yAxis->range().upper);
            band->bottomRight->setCoords(static_cast<double>(i + 1) + 0.45, 0);
            band->setPen(Qt::NoPen);
            band->setBrush(QColor(0, 0, 0, 18)); // a neutral shade: any hue would read as data
        }
        if (cramped_ && !chosen) continue; // side by side, the totals would run into each other
        auto* text = new QCPItemText(plot_);
        text->setObjectName(QStringLiteral("barTotal"));
        text->position->setCoords(static_cast<double>(i + 1), deviceTotal(at) / scale);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() * 0.85);
        f.setBold(chosen);
        text->setFont(f);
        // An invalid strategy (e.g. a hybrid group that does not divide N) says so in place.
        text->setText(at.perRank ? formatDecimal(deviceTotal(at)) : tr("n/a"));
    }
}

} // namespace shardscope::widgets
