#pragma once
// The rank view's layout (RankLedgerView::Geometry), shared by the files that paint it.
#include "ranks/rank_ledger_view.h"

#include <QRect>
#include <algorithm>

namespace shardscope::widgets {

struct RankLedgerView::Geometry {
    QRect legend;
    QRect plot; // bars live here
    int columnWidth = 0;
    int barWidth = 0;
    int stripHeight = 0; // unit strip under each bar
    int textTop = 0;     // rank labels start here
    QRect failureBand;   // the failure's text, above the plot and its peak labels (empty: none)
    int ranks = 0;
    bool compact = false;
    int tiers = 1;     // bars per column (device, then host / NVMe when offloaded)
    int bracket = 0;   // room right of each tier bar for the theory's bracket
    int tierNames = 0; // height of the tier names' row under the bars (0: not drawn)
    QRect stageBand;   // a pipeline's stage names, above the peak labels (empty: no pipeline)
    QRect column(int rank) const {
        return {plot.left() + rank * columnWidth, plot.top(), columnWidth, plot.height()};
    }
    QRect bar(int rank) const { return tierBar(rank, 0); }
    // Device bars weigh 3, the others 2: the device is the tier the lesson is about.
    QRect tierBar(int rank, int slot) const {
        const QRect c = column(rank);
        if (tiers == 1) return {c.center().x() - barWidth / 2, c.top(), barWidth, c.height()};
        const int gap = 4 + bracket;
        const int weights = 3 + 2 * (tiers - 1);
        const int usable = barWidth - gap * (tiers - 1) - bracket;
        const int unit = std::max(1, usable / weights);
        int x = c.center().x() - barWidth / 2;
        for (int i = 0; i < slot; ++i)
            x += (i == 0 ? 3 : 2) * unit + gap;
        return {x, c.top(), (slot == 0 ? 3 : 2) * unit, c.height()};
    }
};

// A pipeline's stage groups: the colour of its messages (pp_send) in the timeline.
QColor rankLedgerStageColor();

} // namespace shardscope::widgets
