#include "calculator/mesh_chart.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/theory_names.h"

#include <algorithm>

namespace shardscope::widgets {

namespace {

constexpr std::size_t kFullLabelsUpTo = 8; // meshes named in words; more: "2×4×8", fewer totals

double deviceTotal(const MeshPoint& m) {
    return static_cast<double>(m.perRank.tier(Tier::Device));
}

// Linear axis in the largest decimal unit that keeps the tallest bar above 1.
std::pair<double, QString> unitFor(double maxBytes) {
    if (maxBytes >= 1e12) return {1e12, QStringLiteral("TB = 10¹² B")};
    if (maxBytes >= 1e9) return {1e9, QStringLiteral("GB = 10⁹ B")};
    if (maxBytes >= 1e6) return {1e6, QStringLiteral("MB = 10⁶ B")};
    return {1e3, QStringLiteral("kB = 10³ B")};
}

} // namespace

MeshChart::MeshChart(QWidget* parent)
    : ResultChart(parent, QStringLiteral("meshPlot"), QSize(260, 200)) {}

void MeshChart::rebuild() {
    plot_->clearPlottables();
    plot_->clearItems();
    const bool ok = result_ && result_->error.isEmpty() && !result_->meshes.empty();
    setPlotTitle(plot_, ok ? tr("%1: model states per rank on the device for each P × T × D = %2 "
                                "(P > 1: the fullest stage)")
                                 .arg(strategyLabel(result_->input.strategy))
                                 .arg(result_->input.ranks)
                           : tr("Model states per rank on the device for each P × T × D"));
    cramped_ = isCramped(plot_);
    if (!ok) {
        // Why there is nothing to draw, as the title (it wraps; an in-plot label would not).
        if (result_ && !result_->meshNote.isEmpty()) setPlotTitle(plot_, result_->meshNote);
        plot_->replot();
        return;
    }
    double maxBytes = 0;
    for (const MeshPoint& m : result_->meshes)
        maxBytes = std::max(maxBytes, deviceTotal(m));
    const auto [scale, unitName] = unitFor(maxBytes);
    setAxisTitle(plot_->yAxis, tr("Per rank (%1)").arg(unitName),
                 unitName.section(QLatin1Char(' '), 0, 0));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    // Many meshes (N with many divisors): the numbers alone, the axis title names them.
    const bool brief = cramped_ || result_->meshes.size() > kFullLabelsUpTo;
    for (std::size_t i = 0; i < result_->meshes.size(); ++i) {
        const MeshPoint& m = result_->meshes[i];
        // P = 1 as before ("T × D"); a pipeline's point leads with its stages.
        const QString mesh =
            m.pp > 1 ? (brief ? QStringLiteral("%1×%2×%3").arg(m.pp).arg(m.tp).arg(m.dp)
                              : tr("P = %1 × T = %2 × D = %3").arg(m.pp).arg(m.tp).arg(m.dp))
                     : (brief ? QStringLiteral("%1×%2").arg(m.tp).arg(m.dp)
                              : tr("T = %1 × D = %2").arg(m.tp).arg(m.dp));
        ticker->addTick(static_cast<double>(i + 1), mesh);
    }
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setTickLabelRotation(result_->meshes.size() > kFullLabelsUpTo ? -45
                                       : result_->meshes.size() > 4             ? -30
                                                                                : 0);
    setAxisTitle(plot_->xAxis, tr("pipeline stages P × tensor parallel T × data parallel D"));
    plot_->xAxis->setRange(0.4, static_cast<double>(result_->meshes.size()) + 0.6);
    plot_->yAxis->setRange(0, maxBytes / scale * 1.18); // headroom for the total labels
    addBars(scale);
    addTotals(scale);
    fitLegendToWidth(plot_);
    plot_->replot();
}

void MeshChart::addBars(double scale) {
    QCPBars* below = nullptr;
    for (Category c : categoryStackOrder()) {
        QVector<double> keys, values;
        for (std::size_t i = 0; i < result_->meshes.size(); ++i) {
            keys.push_back(static_cast<double>(i + 1));
            values.push_back(static_cast<double>(result_->meshes[i].perRank.at(c, Tier::Device)) /
                             scale);
        }
        below = stackBars(c, keys, values, below);
    }
}

void MeshChart::addTotals(double scale) {
    for (std::size_t i = 0; i < result_->meshes.size(); ++i) {
        const MeshPoint& m = result_->meshes[i];
        const bool chosen = m.pp == 1 && m.tp == std::max(1, result_->input.tensorParallel);
        if (chosen) {
            auto* band = new QCPItemRect(plot_);
            band->setLayer(QStringLiteral("grid"));
            band->topLeft->setCoords(static_cast<double>(i + 1) - 0.45,
                                     plot_->yAxis->range().upper);
            band->bottomRight->setCoords(static_cast<double>(i + 1) + 0.45, 0);
            band->setPen(Qt::NoPen);
            band->setBrush(QColor(0, 0, 0, 18)); // a neutral shade: any hue would read as data
        }
        if (!chosen &&
            ((cramped_ && result_->meshes.size() > 3) || result_->meshes.size() > kFullLabelsUpTo))
            continue;
        auto* text = new QCPItemText(plot_);
        text->setObjectName(QStringLiteral("meshTotal"));
        text->position->setCoords(static_cast<double>(i + 1), deviceTotal(m) / scale);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() * 0.85);
        f.setBold(chosen);
        text->setFont(f);
        text->setText(formatDecimal(deviceTotal(m)));
    }
}

} // namespace shardscope::widgets
