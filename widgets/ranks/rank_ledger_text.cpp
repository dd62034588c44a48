// The rank view's words: the legend's keys and their layout, the failure line, what a rank is
// doing and its tooltip (rank_ledger_view.cpp draws them).
#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/failure_text.h"
#include "common/run_labels.h"
#include "ranks/rank_ledger_view.h"

#include <QFontMetrics>

namespace shardscope::widgets {

// The categories, then (split by tier) one key per off-device tier and the theory's bracket.
QStringList RankLedgerView::legendLabels() const {
    QStringList labels;
    for (Category c : categoryStackOrder())
        labels << categoryLabel(c);
    if (tiers_.size() > 1) {
        for (Tier t : tiers_)
            if (t != Tier::Device) labels << tierLabel(t);
        labels << tr("theory per tier");
    }
    return labels;
}

// The keys packed in rows by their own widths (whole names at any font size, as many per row
// as fit: more per row leave the bars more height), relative to the legend's top-left; then the
// unit strip's lead and its keys (legendLabels().size() on), the lead kept with its first key.
std::vector<QRect> RankLedgerView::legendItems(int width) const {
    const QFontMetrics fm(font());
    std::vector<QRect> items;
    int x = 0, y = 0;
    const auto place = [&](int w, int together) {
        w = std::min(w, std::max(width, 1));
        if (x > 0 && x + together > width) {
            x = 0;
            y += fm.height() + 2;
        }
        items.emplace_back(x, y, w, fm.height());
        x += w + 14;
    };
    for (const QString& label : legendLabels()) {
        const int w = 20 + fm.horizontalAdvance(label);
        place(w, w);
    }
    const auto keys = unitKeys();
    const int lead = fm.horizontalAdvance(unitKeyLead()) + 4;
    place(lead, lead + 14 + 24 + fm.horizontalAdvance(keys.front().second));
    for (const auto& [colour, text] : keys) {
        const int w = 24 + fm.horizontalAdvance(text); // its box, a gap and the whole text
        place(w, w);
    }
    return items;
}

QString RankLedgerView::unitKeyLead() const {
    return tr("Units under each bar:");
}

std::vector<std::pair<QColor, QString>> RankLedgerView::unitKeys() const {
    std::vector<std::pair<QColor, QString>> keys{
        {categoryColor(Category::ParamShard), tr("its shard only")},
        {categoryColor(Category::ParamFull), tr("gathered: whole unit")},
        {QColor(), tr("computing")}};
    if (stageCount() > 1)
        keys.insert(keys.begin() + 2, {otherStageColor(), tr("held by another stage")});
    return keys;
}

QString RankLedgerView::failureText() const {
    if (!failure_) return {};
    const QString message = widgets::failureText(failure_->message);
    return failure_->rank >= 0
               ? tr("Rank %1 failed %2: %3")
                     .arg(failure_->rank)
                     .arg(failureWhen(failure_->step, info_ ? info_->stepsBefore : 0))
                     .arg(message)
               : tr("The run ended early: %1").arg(message);
}

QString RankLedgerView::activityText(const replay::RankState& s) const {
    auto unit = [this](std::int32_t u) {
        return info_ ? QString::fromStdString(info_->unitName(u)) : QString::number(u);
    };
    if (s.collective != CollectiveOp::None)
        return s.collectiveUnit >= 0
                   ? tr("%1 %2").arg(collectiveLabel(s.collective), unit(s.collectiveUnit))
                   : collectiveLabel(s.collective);
    if (s.phase != Phase::None)
        return s.computeUnit >= 0 ? tr("%1 %2").arg(phaseLabel(s.phase), unit(s.computeUnit))
                                  : phaseLabel(s.phase);
    return {};
}

QString RankLedgerView::tooltipFor(int rank) const {
    const replay::RankState& s = state_[static_cast<std::size_t>(rank)];
    QString html = tr("<b>Rank %1</b>: %2 live, peak %3")
                       .arg(rank)
                       .arg(formatBoth(static_cast<double>(s.liveTotal)),
                            formatBoth(static_cast<double>(s.peakTotal)));
    for (auto it = categoryStackOrder().rbegin(); it != categoryStackOrder().rend(); ++it) {
        const std::uint64_t b = s.live.category(*it); // over the tiers; the split follows below
        if (b == 0) continue;
        const auto wire = categoryName(*it);
        html += QStringLiteral("<br><span style='color:%1'>■</span> %2 <i>(%3)</i>: %4")
                    .arg(categoryColor(*it).name(), categoryLabel(*it).toHtmlEscaped(),
                         QString::fromLatin1(wire.data(), static_cast<qsizetype>(wire.size())),
                         formatDecimal(static_cast<double>(b)));
    }
    if (tiers_.size() > 1) {
        for (Tier t : tiers_) {
            std::uint64_t states = 0;
            for (Category c : kAllCategories)
                if (stateGroup(c) != StateGroup::Other) states += s.live.at(c, t);
            QString line =
                tr("%1: %2 live, peak %3, model states %4")
                    .arg(tierLabel(t), formatDecimal(static_cast<double>(s.live.tier(t))),
                         formatDecimal(static_cast<double>(s.peakByTier[index(t)])),
                         formatDecimal(static_cast<double>(states)));
            if (const TierTheory* theory = tierTheory(rank))
                line += QLatin1Char(' ') +
                        tr("(theory %1)")
                            .arg(formatDecimal(static_cast<double>(theory->modelStates.tier(t))));
            html += QStringLiteral("<br>") + line.toHtmlEscaped();
        }
    }
    if (stageCount() > 1) {
        const int st = info_->stageOf(rank);
        html +=
            QStringLiteral("<br>") +
            tr("Pipeline stage %1 of %2: units %3, theory peak %4")
                .arg(st)
                .arg(stageCount())
                .arg(stageUnitsText(st), formatDecimal(static_cast<double>(stagePredictedPeak(st))))
                .toHtmlEscaped();
    }
    const QString activity = activityText(s);
    if (!activity.isEmpty())
        html += QStringLiteral("<br>") + tr("Now: %1").arg(activity.toHtmlEscaped());
    return html;
}

QString RankLedgerView::stageUnitsText(int stage) const {
    QStringList chunks;
    for (const auto& [u0, u1] : info_->stageChunks(stage))
        chunks << (u1 - u0 <= 1
                       ? QString::fromStdString(info_->unitName(u0))
                       : tr("%1 … %2").arg(QString::fromStdString(info_->unitName(u0)),
                                           QString::fromStdString(info_->unitName(u1 - 1))));
    return chunks.join(QStringLiteral(" + "));
}

} // namespace shardscope::widgets
