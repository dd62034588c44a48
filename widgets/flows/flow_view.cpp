#include "flows/flow_view.h"

#include "common/byte_format.h"
#include "common/run_labels.h"
#include "core/step_number.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {

namespace {

// A rank's place in the group it ran the collective in (chunk j of a group's buffer is owned by
// its j-th member); without known groups, every rank in one group.
int positionIn(const replay::FlowState& s, int rank) {
    for (const auto& g : s.members)
        for (std::size_t i = 0; i < g.size(); ++i)
            if (g[i] == rank) return static_cast<int>(i);
    return s.members.empty() ? rank : -1;
}

// The groups to draw: the state's, or one group of every rank when the recording names none.
std::vector<std::vector<int>> drawnGroups(const replay::FlowState& s) {
    if (!s.members.empty()) return s.members;
    std::vector<int> all(static_cast<std::size_t>(std::max(s.worldSize, 1)));
    for (std::size_t r = 0; r < all.size(); ++r)
        all[r] = static_cast<int>(r);
    return {all};
}

} // namespace

struct FlowView::Layout {
    QRectF area;
    int n = 1;                 // columns: every rank of the job
    int k = 1;                 // chunks of a full buffer: the collective's group size
    std::vector<int> column;   // world rank → column (groups side by side)
    std::vector<int> position; // world rank → its place in its group (−1: in none)
    double colW = 0, cardW = 0;
    double topY = 0, bottomY = 0, rowH = 0, cycleY = 0;
    double cardLeft(int rank) const {
        return area.left() + column[static_cast<std::size_t>(rank)] * colW + (colW - cardW) / 2;
    }
    double chunkW() const { return cardW / k; }
    QRectF chunk(int rank, int j, bool top) const {
        return {cardLeft(rank) + j * chunkW(), top ? topY : bottomY, chunkW(), rowH};
    }
    QRectF card(int rank, bool top) const {
        return {cardLeft(rank), top ? topY : bottomY, cardW, rowH};
    }
    int pos(int rank) const { return position[static_cast<std::size_t>(rank)]; }
};

FlowView::FlowView(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void FlowView::setModel(const replay::ReplayModel* model) {
    model_ = model;
    index_.reset(model ? model->worldSize() : 0);
    position_ = 0;
    state_ = replay::FlowState{};
    refresh();
}

void FlowView::refresh() {
    if (model_) index_.update(*model_);
    const auto& groups = index_.groups();
    hasAllGather_ = std::any_of(groups.begin(), groups.end(), [](const replay::CollectiveGroup& g) {
        return g.op == CollectiveOp::AllGather;
    });
    setPosition(position_);
}

void FlowView::setPick(Pick pick) {
    pick_ = pick;
    setPosition(position_);
}

std::ptrdiff_t FlowView::pickedGroup(std::uint64_t index) const {
    const std::int64_t step =
        index > 0
            ? model_->step(model_->stepIndexOf(std::min(index, model_->eventCount()) - 1)).step
            : 0;
    if (pick_ == Pick::TensorParallel)
        return index_.nearestGroup(index, step, [](const replay::CollectiveGroup& g) {
            return g.op == CollectiveOp::TpAllReduce;
        });
    // ZeRO's unshard when the run has one (ZeRO-1/2 all-gather updated slices instead); DDP's
    // all-reduce otherwise.
    const bool gathers = hasAllGather_;
    return index_.nearestGroup(index, step, [gathers](const replay::CollectiveGroup& g) {
        return gathers ? g.op == CollectiveOp::AllGather : g.op != CollectiveOp::TpAllReduce;
    });
}

void FlowView::setPosition(std::uint64_t index) {
    position_ = index;
    state_ = replay::FlowState{};
    if (model_ && pick_ == Pick::Playhead) {
        state_ = replay::computeFlowState(*model_, index_, index);
    } else if (model_ && model_->eventCount() > 0) {
        const std::ptrdiff_t g = pickedGroup(index);
        if (g >= 0)
            state_ =
                replay::computeFlowStateOf(*model_, index_, static_cast<std::size_t>(g), index);
    }
    update();
}

QString FlowView::cycleLabel(replay::UnitCycle c, Phase phase) {
    switch (c) {
    case replay::UnitCycle::ShardOnly:
        return tr("shard only");
    case replay::UnitCycle::Gathering:
        return tr("unsharding (all-gather)");
    case replay::UnitCycle::Gathered:
        return tr("full parameters");
    case replay::UnitCycle::Computing:
        return tr("computing %1").arg(phaseLabel(phase));
    case replay::UnitCycle::Freed:
        return tr("resharded (full freed)");
    case replay::UnitCycle::ReduceScattering:
        return tr("reduce-scattering");
    case replay::UnitCycle::Reduced:
        return tr("gradient shard summed");
    case replay::UnitCycle::AllReducing:
        return tr("all-reducing");
    case replay::UnitCycle::AllReduced:
        return tr("gradient summed");
    case replay::UnitCycle::GradientsReady:
        return tr("gradients computed");
    case replay::UnitCycle::SliceUpdated:
        return tr("own slice updated");
    case replay::UnitCycle::GatheringUpdates:
        return tr("all-gathering updates");
    case replay::UnitCycle::ParamsUpdated:
        return tr("all parameters updated");
    case replay::UnitCycle::NormPart:
        return tr("own part of the norm");
    case replay::UnitCycle::NormSummed:
        return tr("global norm known");
    case replay::UnitCycle::PartialSum:
        return phase == Phase::Backward ? tr("partial input gradient") : tr("partial activation");
    case replay::UnitCycle::TpReducing:
        return tr("all-reducing (TP group)");
    case replay::UnitCycle::FullSum:
        return phase == Phase::Backward ? tr("full input gradient") : tr("full activation");
    }
    return {};
}

QString FlowView::rankLabel(int rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= state_.ranks.size()) return {};
    const replay::FlowRank& fr = state_.ranks[static_cast<std::size_t>(rank)];
    // A TP all-reduce's states are its own phase's (a rank may already compute the next phase).
    return cycleLabel(fr.cycle, state_.scope == replay::CollectiveScope::TensorParallel
                                    ? state_.phase
                                    : fr.phase);
}

QColor FlowView::cycleColor(replay::UnitCycle c) {
    // A state is drawn in the colour of what it is: a collective in flight in its activity's
    // colour, what a rank holds in its memory category's; waiting is neutral.
    switch (c) {
    case replay::UnitCycle::ShardOnly:
    case replay::UnitCycle::GradientsReady:
    case replay::UnitCycle::SliceUpdated:
    case replay::UnitCycle::NormPart:
    case replay::UnitCycle::PartialSum:
        return neutralColor(0x8a);
    case replay::UnitCycle::TpReducing:
        return activityColor(Activity::TpAllReduce);
    case replay::UnitCycle::FullSum:
        return categoryColor(Category::Activation);
    case replay::UnitCycle::Gathering:
    case replay::UnitCycle::GatheringUpdates:
        return activityColor(Activity::AllGather);
    case replay::UnitCycle::Gathered:
    case replay::UnitCycle::ParamsUpdated:
        return categoryColor(Category::ParamFull);
    case replay::UnitCycle::Computing:
        return activityColor(Activity::Forward);
    case replay::UnitCycle::Freed:
        return categoryColor(Category::ParamShard);
    case replay::UnitCycle::ReduceScattering:
        return activityColor(Activity::ReduceScatter);
    case replay::UnitCycle::Reduced:
        return categoryColor(Category::GradShard);
    case replay::UnitCycle::AllReducing:
        return activityColor(Activity::AllReduce);
    case replay::UnitCycle::AllReduced:
        return categoryColor(Category::GradFull);
    case replay::UnitCycle::NormSummed:
        return neutralColor(0x50);
    }
    return neutralColor(0x8a);
}

QString FlowView::unitName(std::int32_t unit) const {
    return model_ && model_->info() ? QString::fromStdString(model_->info()->unitName(unit))
                                    : tr("unit %1").arg(unit);
}

QString FlowView::subject() const {
    const replay::FlowState& s = state_;
    switch (s.scope) {
    case replay::CollectiveScope::Unit:
        return unitName(s.unit);
    case replay::CollectiveScope::GradNorm:
        return tr("the gradient norm");
    case replay::CollectiveScope::TensorParallel:
        return s.phase == Phase::Backward ? tr("%1's input gradient").arg(unitName(s.unit))
                                          : tr("%1's output activation").arg(unitName(s.unit));
    case replay::CollectiveScope::Bucket:
        return s.kind == CollectiveOp::AllGather
                   ? tr("updated parameters of several units (one bucket)")
                   : tr("gradients of several units (one bucket)");
    }
    return {};
}

QString FlowView::title() const {
    const replay::FlowState& s = state_;
    QString text = collectiveLabel(s.kind) + QStringLiteral(" · ") + subject();
    if (s.scope == replay::CollectiveScope::Bucket)
        text += QStringLiteral(" · ") + (s.kind == CollectiveOp::AllGather
                                             ? tr("after the optimizer step")
                                             : tr("of the backward pass"));
    else if (s.scope == replay::CollectiveScope::TensorParallel)
        text +=
            QStringLiteral(" · ") + phaseLabel(s.phase == Phase::None ? Phase::Forward : s.phase);
    else if (s.phase == Phase::Forward || s.phase == Phase::Backward)
        text += QStringLiteral(" · ") + tr("for its %1").arg(phaseLabel(s.phase));
    text += QStringLiteral(" · ") + tr("step %1").arg(displayStep(s.step, stepsBefore()));
    if (!s.atPlayhead)
        text += QStringLiteral(" · ") + tr("nearest (done)");
    else if (!s.active)
        text += QStringLiteral(" · ") + tr("done");
    if (s.overlapUnit >= 0 && s.kind == CollectiveOp::AllGather &&
        s.scope == replay::CollectiveScope::Unit)
        text +=
            QStringLiteral(" · ") + tr("prefetched while %1 computes").arg(unitName(s.overlapUnit));
    return text;
}

std::int64_t FlowView::stepsBefore() const {
    return model_ && model_->info() ? model_->info()->stepsBefore : 0;
}

QString FlowView::emptyText() const {
    if (!model_ || model_->eventCount() == 0)
        return tr("No run yet: start a run or open a recording, then play it.");
    if (pick_ == Pick::TensorParallel)
        return tr("This recording has no tensor-parallel all-reduce (run with T > 1).");
    if (pick_ == Pick::DataParallel)
        return tr("This recording has no data-parallel collective (D = 1: nothing to shard over).");
    if (state_.earlierStep)
        return tr("No collective in step %1 so far: the last one, the %2 of step %3, has finished; "
                  "the flows appear with this step's first collective.")
            .arg(displayStep(state_.playheadStep, stepsBefore()))
            .arg(collectiveLabel(state_.kind))
            .arg(displayStep(state_.step, stepsBefore()));
    return tr("No collective yet at this point of the replay: the flows appear with the first "
              "all-gather, reduce-scatter or all-reduce.");
}

QString FlowView::subtitle() const {
    const replay::FlowState& s = state_;
    const QString full = formatDecimal(static_cast<double>(s.bytes));
    const QString chunk = formatDecimal(static_cast<double>(s.chunkBytes));
    const QString sent = formatDecimal(static_cast<double>(s.sentPerRank));
    const int n = std::max(s.groupSize, 1);
    const bool mesh = s.members.size() > 1;
    if (s.scope == replay::CollectiveScope::GradNorm)
        return tr("Every rank contributes its part of the squared gradient norm (%1) and ends with "
                  "the same global norm, so every rank clips its gradients alike.")
            .arg(full);
    if (s.scope == replay::CollectiveScope::Bucket && s.kind == CollectiveOp::AllGather)
        return tr("Each rank updated only its own slice (%1); %2 slices become %3 of updated "
                  "parameters on every rank; each rank sends %4.")
            .arg(chunk)
            .arg(n)
            .arg(full, sent);
    switch (s.kind) {
    case CollectiveOp::AllGather:
        if (mesh)
            return tr("In each data-parallel group, %1 shards of %2 become %3 of full parameters "
                      "(one TP slice of the unit); each rank sends %4. Each rank then computes the "
                      "whole slice on its own samples: the storage is split.")
                .arg(n)
                .arg(chunk, full, sent);
        return tr("%1 shards of %2 become %3 of full parameters on every rank; each rank sends %4.")
            .arg(n)
            .arg(chunk, full, sent);
    case CollectiveOp::ReduceScatter:
        return tr("Every rank's %1 gradient is cut into %2 chunks of %3; chunk j is summed over "
                  "all ranks into rank j's shard; each rank sends %4.")
            .arg(full)
            .arg(n)
            .arg(chunk, sent);
    case CollectiveOp::AllReduce:
        return tr("Every rank contributes %1 and ends with the same sum; each rank sends %2 "
                  "(2(N−1)/N of it).")
            .arg(full, sent);
    case CollectiveOp::Broadcast:
        return tr("One rank sends %1 to every other rank.").arg(full);
    case CollectiveOp::TpAllReduce:
        if (s.phase == Phase::Backward)
            return tr("Each of the %1 TP ranks computed the input gradient from its own heads / "
                      "MLP columns: %2 of partial sums, added into the full input gradient on "
                      "each; each rank sends %3 (2(T−1)/T). The computation is split, nothing is "
                      "sharded.")
                .arg(n)
                .arg(full, sent);
        return tr("Each of the %1 TP ranks computed the output from its own heads / MLP columns: "
                  "%2 of partial sums, added into the full activation on each; each rank sends %3 "
                  "(2(T−1)/T). The computation is split, nothing is sharded.")
            .arg(n)
            .arg(full, sent);
    case CollectiveOp::None:
        break;
    }
    return {};
}

double FlowView::chunkFill(int holder, int chunk, bool top) const {
    if (top) return 1;
    // Each rank fills at its own pace: ranks enter and leave a collective at different times.
    const double p = holder < static_cast<int>(state_.ranks.size())
                         ? state_.ranks[static_cast<std::size_t>(holder)].progress
                         : state_.progress;
    const int own = positionIn(state_, holder);
    switch (state_.kind) {
    case CollectiveOp::AllGather:
        return chunk == own ? 1 : p; // own shard is there already
    case CollectiveOp::ReduceScatter:
        return chunk == own ? p : 0;
    default:
        return p;
    }
}

void FlowView::paintRow(QPainter& p, const Layout& l, bool top) const {
    const replay::FlowState& s = state_;
    const QFontMetrics fm(p.font());
    const bool summed = s.kind == CollectiveOp::AllReduce || s.kind == CollectiveOp::TpAllReduce;
    for (int r = 0; r < l.n; ++r) {
        const QRectF card = l.card(r, top);
        p.setPen(QPen(QColor(150, 150, 150), 1, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(card);
        const int own = l.pos(r);
        const std::vector<int>* group = nullptr;
        for (const auto& g : s.members)
            if (std::find(g.begin(), g.end(), r) != g.end()) group = &g;
        // An all-reduce moves whole buffers: one block per card, not chunks.
        const int chunks = summed ? 1 : l.k;
        for (int j = 0; j < chunks; ++j) {
            // Which chunks this row holds: all-gather sources and reduce-scatter results are one
            // shard (the rank's own chunk); full buffers hold every chunk.
            const bool shardRow = (s.kind == CollectiveOp::AllGather && top) ||
                                  (s.kind == CollectiveOp::ReduceScatter && !top);
            if (shardRow && j != own) continue;
            const double fill = chunkFill(r, j, top);
            if (fill <= 0) continue;
            const auto ju = static_cast<std::size_t>(j);
            const int ownerPos = ju < s.chunkOwners.size() ? s.chunkOwners[ju] : -1;
            int owner = r;
            if (ownerPos >= 0)
                owner = group && static_cast<std::size_t>(ownerPos) < group->size()
                            ? (*group)[static_cast<std::size_t>(ownerPos)]
                            : ownerPos;
            QColor c = rankColor(owner, l.n);
            if (summed && !top) c = neutralColor(0x55);
            const QRectF ch = summed ? l.card(r, top) : l.chunk(r, j, top);
            p.fillRect(QRectF(ch.left(), ch.top(), ch.width() * fill, ch.height()), c);
            p.setPen(QPen(palette().color(QPalette::Base), 1));
            p.drawLine(ch.topRight(), ch.bottomRight());
            const bool sum = (s.kind == CollectiveOp::ReduceScatter && !top) || (summed && !top);
            if (ch.width() > fm.horizontalAdvance(QStringLiteral("Σ0")) + 4 && fill >= 1) {
                p.setPen(textOn(c));
                p.drawText(ch, Qt::AlignCenter, sum ? QStringLiteral("Σ") : QString::number(owner));
            }
        }
        if (top) { // the rank's name over its card
            QFont bold = p.font();
            bold.setBold(true);
            p.save();
            p.setFont(bold);
            p.setPen(rankColor(r, l.n).darker(140));
            p.drawText(QRectF(card.left(), card.top() - fm.height() - 2, card.width(), fm.height()),
                       Qt::AlignCenter, tr("rank %1").arg(r));
            p.restore();
        }
    }
    const QString caption = rowCaption(top);
    const double y = top ? l.topY + l.rowH + 2 : l.bottomY - fm.height() - 2;
    // On a backdrop: the links pass under the caption.
    const double w = fm.horizontalAdvance(caption) + 8;
    p.fillRect(QRectF(l.area.center().x() - w / 2, y, w, fm.height()),
               palette().color(QPalette::Base));
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRectF(l.area.left(), y, l.area.width(), fm.height()), Qt::AlignHCenter, caption);
}

QString FlowView::rowCaption(bool top) const {
    const replay::FlowState& s = state_;
    const bool bucket = s.scope == replay::CollectiveScope::Bucket;
    switch (s.kind) {
    case CollectiveOp::AllGather:
        if (bucket)
            return top ? tr("each rank's updated slice") : tr("updated parameters on every rank");
        return top ? tr("each rank's shard") : tr("full parameters");
    case CollectiveOp::ReduceScatter:
        return top ? tr("full gradients") : tr("summed gradient shard");
    case CollectiveOp::TpAllReduce:
        if (s.phase == Phase::Backward)
            return top ? tr("each rank's partial input gradient (its heads / columns)")
                       : tr("after: the full input gradient on every rank of the TP group");
        return top ? tr("each rank's partial activation (its heads / columns)")
                   : tr("after: the full activation on every rank of the TP group");
    default:
        if (s.scope == replay::CollectiveScope::GradNorm)
            return top ? tr("each rank's part of the norm")
                       : tr("after: the global norm on every rank");
        return top ? tr("each rank's buffer") : tr("after: the sum on every rank");
    }
}

QString FlowView::groupCaption(std::size_t g) const {
    const replay::FlowState& s = state_;
    QStringList ranks;
    for (int r : s.members[g])
        ranks << QString::number(r);
    const QString list = ranks.join(QStringLiteral(", "));
    if (s.kind == CollectiveOp::TpAllReduce) return tr("TP group %1: ranks %2").arg(g).arg(list);
    const int t = model_ && model_->info() ? model_->info()->tensorParallel : 1;
    if (s.groupSize * t == s.worldSize) return tr("DP group %1: ranks %2").arg(g).arg(list);
    return tr("group %1: ranks %2").arg(g).arg(list);
}

// Each communicator group framed and named, in the collective's colour: who talks to whom.
void FlowView::paintGroups(QPainter& p, const Layout& l) const {
    const replay::FlowState& s = state_;
    if (s.members.size() < 2) return;
    const QFontMetrics fm(p.font());
    const QColor c = spanKindColor(replay::spanKindOf(s.kind)).darker(115);
    for (std::size_t g = 0; g < s.members.size(); ++g) {
        const auto& m = s.members[g];
        if (m.empty()) continue;
        int first = l.n, last = -1;
        for (int r : m) {
            first = std::min(first, l.column[static_cast<std::size_t>(r)]);
            last = std::max(last, l.column[static_cast<std::size_t>(r)]);
        }
        const double left = l.area.left() + first * l.colW + 3,
                     right = l.area.left() + (last + 1) * l.colW - 3;
        const QRectF frame(left, l.topY - 2 * fm.height() - 6, right - left,
                           l.bottomY + l.rowH + 4 - (l.topY - 2 * fm.height() - 6));
        p.setPen(QPen(c, 1.5, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(frame, 5, 5);
        p.setPen(
            c.darker(220)); // the caption reads on white; the frame keeps the collective's colour
        p.drawText(
            QRectF(frame.left() + 4, frame.top() + 1, frame.width() - 8, fm.height()),
            Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(groupCaption(g), Qt::ElideRight, static_cast<int>(frame.width()) - 8));
    }
}

void FlowView::paintLinks(QPainter& p, const Layout& l) const {
    const replay::FlowState& s = state_;
    const int n = l.n;
    const double alpha = n <= 8 ? 110 : 50;
    const double dotR = n <= 8 ? 4 : 2.5;
    auto link = [&](QPointF a, QPointF b, const QColor& c, int dest) {
        QColor lc = c;
        lc.setAlpha(static_cast<int>(alpha));
        QPainterPath path(a);
        const double midY = (a.y() + b.y()) / 2;
        path.cubicTo(QPointF(a.x(), midY), QPointF(b.x(), midY), b);
        p.setPen(QPen(lc, n <= 8 ? 1.5 : 0.8));
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
        const double progress = dest < static_cast<int>(s.ranks.size())
                                    ? s.ranks[static_cast<std::size_t>(dest)].progress
                                    : s.progress;
        if (s.active && progress > 0 && progress < 1) {
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawEllipse(path.pointAtPercent(progress), dotR, dotR);
        }
    };
    const auto bottomOf = [&](const QRectF& r) { return QPointF(r.center().x(), r.bottom()); };
    const auto topOf = [&](const QRectF& r) { return QPointF(r.center().x(), r.top()); };
    for (const auto& g : drawnGroups(s)) {
        const int m = static_cast<int>(g.size());
        for (int a = 0; a < m; ++a) {
            for (int b = 0; b < m; ++b) {
                const int ra = g[static_cast<std::size_t>(a)], rb = g[static_cast<std::size_t>(b)];
                if (a >= l.k || b >= l.k)
                    continue; // more members than chunks: a malformed recording
                switch (s.kind) {
                case CollectiveOp::AllGather: // member a's shard → chunk a of member b
                    if (a != b)
                        link(bottomOf(l.chunk(ra, a, true)), topOf(l.chunk(rb, a, false)),
                             rankColor(ra, n), rb);
                    break;
                case CollectiveOp::ReduceScatter: // member a's chunk b → member b's shard
                    link(bottomOf(l.chunk(ra, b, true)), topOf(l.chunk(rb, b, false)),
                         rankColor(rb, n), rb);
                    break;
                default: // all-reduce / broadcast: whole buffers
                    if (a != b || m == 1)
                        link(bottomOf(l.card(ra, true)), topOf(l.card(rb, false)), rankColor(ra, n),
                             rb);
                    break;
                }
            }
        }
    }
}

// The cycle as a chain, so a still picture says where these states sit in the story.
FlowView::Chain FlowView::chain() const {
    const replay::FlowState& s = state_;
    const bool gradients =
        s.kind == CollectiveOp::ReduceScatter || s.kind == CollectiveOp::AllReduce;
    std::vector<replay::UnitCycle> cycles;
    QString lead = gradients ? tr("Gradient cycle:") : tr("Unit cycle:");
    if (s.scope == replay::CollectiveScope::GradNorm) {
        cycles = {replay::UnitCycle::NormPart, replay::UnitCycle::AllReducing,
                  replay::UnitCycle::NormSummed};
        lead = tr("Gradient norm:");
    } else if (s.scope == replay::CollectiveScope::TensorParallel) {
        cycles = {replay::UnitCycle::PartialSum, replay::UnitCycle::TpReducing,
                  replay::UnitCycle::FullSum};
        lead = tr("Tensor parallelism:");
    } else if (s.scope == replay::CollectiveScope::Bucket) {
        if (s.kind == CollectiveOp::AllGather) {
            cycles = {replay::UnitCycle::SliceUpdated, replay::UnitCycle::GatheringUpdates,
                      replay::UnitCycle::ParamsUpdated};
            lead = tr("Parameter update:");
        } else if (s.kind == CollectiveOp::ReduceScatter) {
            cycles = {replay::UnitCycle::GradientsReady, replay::UnitCycle::ReduceScattering,
                      replay::UnitCycle::Reduced};
        } else {
            cycles = {replay::UnitCycle::GradientsReady, replay::UnitCycle::AllReducing,
                      replay::UnitCycle::AllReduced};
        }
    } else if (s.kind == CollectiveOp::AllReduce)
        cycles = {replay::UnitCycle::Computing, replay::UnitCycle::AllReducing,
                  replay::UnitCycle::AllReduced};
    else if (gradients)
        cycles = {replay::UnitCycle::Computing, replay::UnitCycle::Freed,
                  replay::UnitCycle::ReduceScattering, replay::UnitCycle::Reduced};
    else
        cycles = {replay::UnitCycle::ShardOnly, replay::UnitCycle::Gathering,
                  replay::UnitCycle::Gathered, replay::UnitCycle::Computing,
                  replay::UnitCycle::Freed};
    Chain out{lead, {}};
    for (replay::UnitCycle c : cycles) {
        const int count = static_cast<int>(
            std::count_if(s.ranks.begin(), s.ranks.end(),
                          [c](const replay::FlowRank& f) { return f.cycle == c; }));
        out.items.push_back(
            {c,
             cycleLabel(c, gradients && s.scope != replay::CollectiveScope::TensorParallel
                               ? Phase::Backward
                               : s.phase) +
                 (count > 0 ? tr(" (ranks: %1)").arg(count) : QString()),
             count > 0});
    }
    return out;
}

// Lines the chain takes at this width: items wrap under the first one.
int FlowView::chainLines(const QFont& font, double width) const {
    const Chain ch = chain();
    const QFontMetrics fm(font);
    const double indent = fm.horizontalAdvance(ch.lead) + 10;
    double x = indent;
    int lines = 1;
    for (std::size_t i = 0; i < ch.items.size(); ++i) {
        QFont f = font;
        f.setBold(ch.items[i].bold);
        const double w = 14 + QFontMetrics(f).horizontalAdvance(ch.items[i].text);
        if (x > indent && x + w > width) {
            x = indent;
            ++lines;
        }
        x += w + (i + 1 < ch.items.size() ? 24 : 0);
    }
    return lines;
}

void FlowView::paintCycle(QPainter& p, const Layout& l) const {
    const replay::FlowState& s = state_;
    const QFontMetrics fm(p.font());
    const double pillH = fm.height() + 8;
    for (int r = 0; r < l.n && r < static_cast<int>(s.ranks.size()); ++r) {
        const replay::FlowRank& fr = s.ranks[static_cast<std::size_t>(r)];
        const QRectF pill(l.cardLeft(r), l.cycleY, l.cardW, pillH);
        p.setPen(Qt::NoPen);
        p.setBrush(cycleColor(fr.cycle));
        p.drawRoundedRect(pill, pillH / 2, pillH / 2);
        p.setPen(textOn(cycleColor(fr.cycle)));
        p.drawText(pill, Qt::AlignCenter,
                   fm.elidedText(rankLabel(r), Qt::ElideRight, static_cast<int>(pill.width()) - 8));
    }
    const Chain ch = chain();
    double y = l.cycleY + pillH + 14;
    double x = l.area.left();
    p.setPen(QColor(90, 90, 90));
    p.drawText(QPointF(x, y + fm.ascent()), ch.lead);
    x += fm.horizontalAdvance(ch.lead) + 10;
    const double indent = x;
    for (std::size_t i = 0; i < ch.items.size(); ++i) {
        const ChainItem& item = ch.items[i];
        QFont f = p.font();
        f.setBold(item.bold);
        const double w = 14 + QFontMetrics(f).horizontalAdvance(item.text);
        if (x > indent &&
            x + w > l.area.right()) { // wrap under the first item (same rule as chainLines)
            x = indent;
            y += fm.height() + 4;
        }
        p.setBrush(cycleColor(item.cycle));
        p.setPen(Qt::NoPen);
        p.drawEllipse(QPointF(x + 5, y + fm.height() / 2.0), 5, 5);
        p.save();
        p.setFont(f);
        p.setPen(item.bold ? palette().color(QPalette::WindowText) : QColor(140, 140, 140));
        p.drawText(QPointF(x + 14, y + fm.ascent()), item.text);
        p.restore();
        x += w;
        if (i + 1 < ch.items.size()) {
            p.setPen(QColor(120, 120, 120));
            p.drawText(QPointF(x + 6, y + fm.ascent()), QStringLiteral("→"));
            x += 24;
        }
    }
}

FlowView::Layout FlowView::layoutFor(const QRectF& area, double body, double cycleBlock,
                                     const QFontMetrics& fm) const {
    Layout l;
    l.area = area;
    l.n = std::max(state_.worldSize, 1);
    l.k = std::max(state_.groupSize > 0 ? state_.groupSize : l.n, 1);
    l.column.assign(static_cast<std::size_t>(l.n), 0);
    l.position.assign(static_cast<std::size_t>(l.n), -1);
    std::vector<bool> placed(static_cast<std::size_t>(l.n), false);
    int col = 0;
    for (const auto& g : drawnGroups(state_)) // the groups side by side, members in rank order
        for (int r : g)
            if (r >= 0 && r < l.n && !placed[static_cast<std::size_t>(r)]) {
                placed[static_cast<std::size_t>(r)] = true;
                l.column[static_cast<std::size_t>(r)] = col++;
                l.position[static_cast<std::size_t>(r)] = positionIn(state_, r);
            }
    for (int r = 0; r < l.n; ++r)
        if (!placed[static_cast<std::size_t>(r)]) l.column[static_cast<std::size_t>(r)] = col++;
    l.colW = l.area.width() / l.n;
    l.cardW = l.colW * (l.n <= 8 ? 0.82 : 0.9);
    l.rowH = std::clamp((l.area.bottom() - body - cycleBlock) * 0.16, 14.0, 48.0);
    l.topY = body;
    l.bottomY = l.area.bottom() - cycleBlock - l.rowH - fm.height();
    l.cycleY = l.bottomY + l.rowH + 10;
    return l;
}

void FlowView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const QFontMetrics fm(p.font());
    if (!state_.valid) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap,
                   emptyText());
        return;
    }
    const QRectF area = QRectF(rect()).adjusted(16, 10, -16, -10);
    QFont big = p.font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    p.save();
    p.setFont(big);
    p.setPen(palette().color(QPalette::WindowText));
    const QFontMetrics bfm(big);
    // The title wraps onto a second line in a narrow (side-by-side) view rather than clipping.
    const QRectF titleRect =
        bfm.boundingRect(area.toRect(), Qt::AlignLeft | Qt::TextWordWrap, title());
    // Lines × a spacing with room for taller fallback glyphs (CJK), at most three lines.
    const int titleLines = std::clamp(
        static_cast<int>(std::ceil(titleRect.height() / bfm.lineSpacing() - 0.01)), 1, 3);
    const double titleH = titleLines * bfm.lineSpacing() * 1.1;
    p.drawText(QRectF(area.left(), area.top(), area.width(), titleH),
               Qt::AlignLeft | Qt::TextWordWrap, title());
    p.restore();
    p.setPen(QColor(70, 70, 70));
    // As many lines as the subtitle needs at this width (a narrow view wraps more).
    const QRect subNeed = fm.boundingRect(QRectF(area.left(), 0, area.width(), 1e4).toRect(),
                                          Qt::AlignLeft | Qt::TextWordWrap, subtitle());
    const QRectF sub(area.left(), area.top() + titleH + 2, area.width(),
                     std::min<double>(subNeed.height(), fm.height() * 5) + 2);
    p.drawText(sub, Qt::AlignLeft | Qt::TextWordWrap, subtitle());
    const double groupsH = state_.members.size() > 1 ? fm.height() + 6 : 0; // the groups' captions
    const double body = sub.bottom() + fm.height() + 8 + groupsH;
    // The cycle's chain wraps in a narrow view (side by side, or a small window).
    const double cycleBlock =
        (fm.height() + 8) + 28 + chainLines(p.font(), area.width()) * (fm.height() + 4);
    const Layout l = layoutFor(area, body, cycleBlock, fm);
    paintGroups(p, l);
    paintLinks(p, l);
    p.setRenderHint(QPainter::Antialiasing, false);
    paintRow(p, l, true);
    paintRow(p, l, false);
    p.setRenderHint(QPainter::Antialiasing);
    paintCycle(p, l);
}

void FlowView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) update();
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
