// The rank view's groups of a mesh: a pipeline's stages (their tints, their band naming each
// stage's units, each stage's predicted peak) and the frames of tensor-parallel groups.
#include "common/byte_format.h"
#include "common/category_palette.h"
#include "ranks/rank_ledger_geometry.h"

#include <QFontMetrics>
#include <QPainter>

namespace shardscope::widgets {

QColor rankLedgerStageColor() {
    return activityColor(Activity::PipeSend);
}

// TP groups are framed when T cuts the columns into whole groups (0: no frames).
int RankLedgerView::tensorGroups() const {
    const int t = info_ ? info_->tensorParallel : 1;
    const int ranks = static_cast<int>(state_.size());
    return t > 1 && ranks >= t && ranks % t == 0 ? ranks / t : 0;
}

// Stages are drawn as groups when they split the columns shown into whole groups.
int RankLedgerView::stageCount() const {
    const int p = info_ ? info_->pipeParallel : 1;
    const int ranks = static_cast<int>(state_.size());
    return p > 1 && ranks >= p && ranks % p == 0 ? p : 1;
}

// The worker's dry run of the stage (the handshake's), else this build's.
std::uint64_t RankLedgerView::stagePredictedPeak(int stage) const {
    if (!info_) return 0;
    const auto st = static_cast<std::size_t>(stage);
    if (st < info_->stageTheory.size()) return info_->stageTheory[st].predictedPeakBytes;
    if (stageCount() > 1 && st < theories_.size()) return theories_[st].peak[index(Tier::Device)];
    return info_->predictedPeakBytes;
}

// A pipeline's stages as groups: every other stage's columns on a faint tint of the stage
// colour, from the peak labels to the rank labels.
void RankLedgerView::paintStageTints(QPainter& p, const Geometry& g) const {
    const int stages = stageCount();
    if (stages <= 1) return;
    const QFontMetrics fm(font());
    const int per = g.ranks / stages;
    QColor tint = rankLedgerStageColor();
    tint.setAlpha(22);
    for (int st = 0; st < stages; st += 2) {
        const QRect first = g.column(st * per), last = g.column(st * per + per - 1);
        p.fillRect(QRect(first.left() + 1, g.plot.top() - fm.height(),
                         last.right() - first.left() - 1,
                         g.textTop - g.plot.top() + fm.height() + 2 * fm.height()),
                   tint);
    }
}

// A pipeline's stages: a bracket over each stage's columns naming its units, in the colour of
// the messages between stages.
void RankLedgerView::paintStages(QPainter& p, const Geometry& g) const {
    const int stages = stageCount();
    if (stages <= 1 || g.stageBand.isEmpty()) return;
    const QFontMetrics fm(font());
    const int per = g.ranks / stages;
    for (int st = 0; st < stages; ++st) {
        const QRect first = g.column(st * per), last = g.column(st * per + per - 1);
        const int left = first.left() + 3, right = last.right() - 3;
        const int y = g.stageBand.bottom() - 2;
        p.setPen(QPen(rankLedgerStageColor(), 2));
        p.drawLine(left, y, right, y);
        p.drawLine(left, y, left, y + 5);
        p.drawLine(right, y, right, y + 5);
        const auto [u0, u1] = info_->stageUnitRange(st);
        // The longest that fits whole: units and the stage's predicted peak, the units, the name.
        const QString name = tr("stage %1").arg(st);
        const QString units = stageUnitsText(st);
        QString label = name;
        for (const QString& candidate :
             {tr("%1 · %2 · theory peak %3")
                  .arg(name, units, formatDecimal(static_cast<double>(stagePredictedPeak(st)))),
              tr("%1 · %2").arg(name, units)})
            if (u1 > u0 && !g.compact && fm.horizontalAdvance(candidate) <= right - left) {
                label = candidate;
                break;
            }
        p.setPen(rankLedgerStageColor());
        p.drawText(QRect(left, g.stageBand.top(), right - left, y - g.stageBand.top() - 1),
                   Qt::AlignHCenter | Qt::AlignBottom | Qt::TextDontClip,
                   fm.elidedText(label, Qt::ElideRight, right - left));
    }
}

// A T × D mesh: each TP group (T consecutive ranks, one DP rank) in a violet frame — the
// colour of its TP all-reduces in the timeline.
void RankLedgerView::paintTensorGroups(QPainter& p, const Geometry& g) const {
    if (tensorGroups() == 0) return;
    const int t = info_->tensorParallel;
    const QFontMetrics fm(font());
    const QColor violet(0x7b, 0x3f, 0xb5);
    const int above = 2 * fm.height() + 2; // its name's row and the peak labels'
    // Ranks are (stage, DP rank, TP rank), TP innermost (plan/mesh.h): group k is DP rank k % D.
    const int dataRanks = std::max(1, g.ranks / (t * stageCount()));
    for (int k = 0; k < g.ranks / t; ++k) {
        const QRect first = g.column(k * t), last = g.column(k * t + t - 1);
        const QRect frame(first.left() + 2, g.plot.top() - above, last.right() - first.left() - 3,
                          g.textTop - g.plot.top() + above + 2);
        p.setPen(QPen(violet, 1.5, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(frame, 4, 4);
        p.setPen(violet);
        p.drawText(QRect(frame.left() + 4, frame.top(), frame.width() - 8, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(tr("TP group %1 (DP rank %2)").arg(k).arg(k % dataRanks),
                                 Qt::ElideRight, frame.width() - 8));
    }
}

} // namespace shardscope::widgets
