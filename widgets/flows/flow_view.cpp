#include "flows/flow_view.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "common/byte_format.h"
#include "common/run_labels.h"
#include "core/step_number.h"

namespace shardscope::widgets {

struct FlowView::Layout {
    QRectF area;
    int n = 1;
    double colW = 0, cardW = 0;
    double topY = 0, bottomY = 0, rowH = 0, cycleY = 0;
    double cardLeft(int rank) const { return area.left() + rank * colW + (colW - cardW) / 2; }
    double chunkW() const { return cardW / n; }
    QRectF chunk(int rank, int j, bool top) const {
        return {cardLeft(rank) + j * chunkW(), top ? topY : bottomY, chunkW(), rowH};
    }
    QRectF card(int rank, bool top) const { return {cardLeft(rank), top ? topY : bottomY, cardW, rowH}; }
};

FlowView::FlowView(QWidget* parent) : QWidget(parent) { setAttribute(Qt::WA_OpaquePaintEvent); }

void FlowView::setModel(const replay::ReplayModel* model) {
    model_ = model;
    index_.reset(model ? model->worldSize() : 0);
    position_ = 0;
    state_ = replay::FlowState{};
    refresh();
}

void FlowView::refresh() {
    if (model_) index_.update(*model_);
    setPosition(position_);
}

void FlowView::setPosition(std::uint64_t index) {
    position_ = index;
    state_ = model_ ? replay::computeFlowState(*model_, index_, index) : replay::FlowState{};
    update();
}

QString FlowView::cycleLabel(replay::UnitCycle c, Phase phase) {
    switch (c) {
    case replay::UnitCycle::ShardOnly: return tr("shard only");
    case replay::UnitCycle::Gathering: return tr("unsharding (all-gather)");
    case replay::UnitCycle::Gathered: return tr("full parameters");
    case replay::UnitCycle::Computing: return tr("computing %1").arg(phaseLabel(phase));
    case replay::UnitCycle::Freed: return tr("resharded (full freed)");
    case replay::UnitCycle::ReduceScattering: return tr("reduce-scattering");
    case replay::UnitCycle::Reduced: return tr("gradient shard summed");
    case replay::UnitCycle::AllReducing: return tr("all-reducing");
    case replay::UnitCycle::AllReduced: return tr("gradient summed");
    case replay::UnitCycle::GradientsReady: return tr("gradients computed");
    case replay::UnitCycle::SliceUpdated: return tr("own slice updated");
    case replay::UnitCycle::GatheringUpdates: return tr("all-gathering updates");
    case replay::UnitCycle::ParamsUpdated: return tr("all parameters updated");
    case replay::UnitCycle::NormPart: return tr("own part of the norm");
    case replay::UnitCycle::NormSummed: return tr("global norm known");
    }
    return {};
}

QColor FlowView::cycleColor(replay::UnitCycle c) {
    // A state is drawn in the colour of what it is: a collective in flight in its activity's
    // colour, what a rank holds in its memory category's; waiting is neutral.
    switch (c) {
    case replay::UnitCycle::ShardOnly:
    case replay::UnitCycle::GradientsReady:
    case replay::UnitCycle::SliceUpdated:
    case replay::UnitCycle::NormPart: return neutralColor(0x8a);
    case replay::UnitCycle::Gathering:
    case replay::UnitCycle::GatheringUpdates: return activityColor(Activity::AllGather);
    case replay::UnitCycle::Gathered:
    case replay::UnitCycle::ParamsUpdated: return categoryColor(Category::ParamFull);
    case replay::UnitCycle::Computing: return activityColor(Activity::Forward);
    case replay::UnitCycle::Freed: return categoryColor(Category::ParamShard);
    case replay::UnitCycle::ReduceScattering: return activityColor(Activity::ReduceScatter);
    case replay::UnitCycle::Reduced: return categoryColor(Category::GradShard);
    case replay::UnitCycle::AllReducing: return activityColor(Activity::AllReduce);
    case replay::UnitCycle::AllReduced: return categoryColor(Category::GradFull);
    case replay::UnitCycle::NormSummed: return neutralColor(0x50);
    }
    return neutralColor(0x8a);
}

QString FlowView::unitName(std::int32_t unit) const {
    return model_ && model_->info() ? QString::fromStdString(model_->info()->unitName(unit)) : tr("unit %1").arg(unit);
}

QString FlowView::subject() const {
    const replay::FlowState& s = state_;
    switch (s.scope) {
    case replay::CollectiveScope::Unit: return unitName(s.unit);
    case replay::CollectiveScope::GradNorm: return tr("the gradient norm");
    case replay::CollectiveScope::Bucket:
        return s.kind == CollectiveOp::AllGather ? tr("updated parameters of several units (one bucket)")
                                                 : tr("gradients of several units (one bucket)");
    }
    return {};
}

QString FlowView::title() const {
    const replay::FlowState& s = state_;
    QString text = collectiveLabel(s.kind) + QStringLiteral(" · ") + subject();
    if (s.scope == replay::CollectiveScope::Bucket)
        text += QStringLiteral(" · ") + (s.kind == CollectiveOp::AllGather ? tr("after the optimizer step") : tr("of the backward pass"));
    else if (s.phase == Phase::Forward || s.phase == Phase::Backward)
        text += QStringLiteral(" · ") + tr("for its %1").arg(phaseLabel(s.phase));
    text += QStringLiteral(" · ") + tr("step %1").arg(displayStep(s.step));
    if (!s.active) text += QStringLiteral(" · ") + tr("done");
    if (s.overlapUnit >= 0 && s.kind == CollectiveOp::AllGather && s.scope == replay::CollectiveScope::Unit)
        text += QStringLiteral(" · ") + tr("prefetched while %1 computes").arg(unitName(s.overlapUnit));
    return text;
}

QString FlowView::emptyText() const {
    if (!model_ || model_->eventCount() == 0) return tr("No run yet: start a run or open a recording, then play it.");
    if (state_.earlierStep)
        return tr("No collective in step %1 so far: the last one, the %2 of step %3, has finished; the flows appear with this step's first collective.")
            .arg(displayStep(state_.playheadStep))
            .arg(collectiveLabel(state_.kind))
            .arg(displayStep(state_.step));
    return tr("No collective yet at this point of the replay: the flows appear with the first all-gather, reduce-scatter or all-reduce.");
}

QString FlowView::subtitle() const {
    const replay::FlowState& s = state_;
    const QString full = formatDecimal(static_cast<double>(s.bytes));
    const QString chunk = formatDecimal(static_cast<double>(s.chunkBytes));
    const QString sent = formatDecimal(static_cast<double>(s.sentPerRank));
    const int n = std::max(s.worldSize, 1);
    if (s.scope == replay::CollectiveScope::GradNorm)
        return tr("Every rank contributes its part of the squared gradient norm (%1) and ends with the same global norm, so every rank clips its gradients alike.")
            .arg(full);
    if (s.scope == replay::CollectiveScope::Bucket && s.kind == CollectiveOp::AllGather)
        return tr("Each rank updated only its own slice (%1); %2 slices become %3 of updated parameters on every rank; each rank sends %4.")
            .arg(chunk).arg(n).arg(full, sent);
    switch (s.kind) {
    case CollectiveOp::AllGather:
        return tr("%1 shards of %2 become %3 of full parameters on every rank; each rank sends %4.")
            .arg(n).arg(chunk, full, sent);
    case CollectiveOp::ReduceScatter:
        return tr("Every rank's %1 gradient is cut into %2 chunks of %3; chunk j is summed over all ranks into rank j's shard; each rank sends %4.")
            .arg(full).arg(n).arg(chunk, sent);
    case CollectiveOp::AllReduce:
        return tr("Every rank contributes %1 and ends with the same sum; each rank sends %2 (2(N−1)/N of it).").arg(full, sent);
    case CollectiveOp::Broadcast:
        return tr("One rank sends %1 to every other rank.").arg(full);
    case CollectiveOp::TpAllReduce:
        return tr("Every rank of the tensor-parallel group holds a partial sum of %1; the all-reduce turns them into the full activation on each; each rank sends %2 (2(T−1)/T of it).").arg(full, sent);
    case CollectiveOp::None: break;
    }
    return {};
}

double FlowView::chunkFill(int holder, int chunk, bool top) const {
    if (top) return 1;
    // Each rank fills at its own pace: ranks enter and leave a collective at different times.
    const double p = holder < static_cast<int>(state_.ranks.size()) ? state_.ranks[static_cast<std::size_t>(holder)].progress : state_.progress;
    switch (state_.kind) {
    case CollectiveOp::AllGather: return chunk == holder ? 1 : p; // own shard is there already
    case CollectiveOp::ReduceScatter: return chunk == holder ? p : 0;
    default: return p;
    }
}

void FlowView::paintRow(QPainter& p, const Layout& l, bool top) const {
    const replay::FlowState& s = state_;
    const QFontMetrics fm(p.font());
    for (int r = 0; r < l.n; ++r) {
        const QRectF card = l.card(r, top);
        p.setPen(QPen(QColor(150, 150, 150), 1, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(card);
        for (int j = 0; j < l.n; ++j) {
            // Which chunks this row holds: all-gather sources and reduce-scatter results are one
            // shard (chunk r); full buffers hold every chunk.
            const bool shardRow = (s.kind == CollectiveOp::AllGather && top) || (s.kind == CollectiveOp::ReduceScatter && !top);
            if (shardRow && j != r) continue;
            const double fill = chunkFill(r, j, top);
            if (fill <= 0) continue;
            const int owner = s.chunkOwners.empty() || s.chunkOwners[static_cast<std::size_t>(j)] < 0 ? r : s.chunkOwners[static_cast<std::size_t>(j)];
            QColor c = rankColor(owner, l.n);
            if (s.kind == CollectiveOp::AllReduce && !top) c = neutralColor(0x55);
            const QRectF ch = l.chunk(r, j, top);
            p.fillRect(QRectF(ch.left(), ch.top(), ch.width() * fill, ch.height()), c);
            p.setPen(QPen(palette().color(QPalette::Base), 1));
            p.drawLine(ch.topRight(), ch.bottomRight());
            const bool sum = (s.kind == CollectiveOp::ReduceScatter && !top) || (s.kind == CollectiveOp::AllReduce && !top);
            if (ch.width() > fm.horizontalAdvance(QStringLiteral("Σ0")) + 4 && fill >= 1) {
                p.setPen(textOn(c));
                p.drawText(ch, Qt::AlignCenter, sum ? QStringLiteral("Σ") : QString::number(owner));
            }
        }
        // Caption under the top row's cards / over the bottom row's.
        p.setPen(palette().color(QPalette::WindowText));
        if (top) {
            QFont bold = p.font();
            bold.setBold(true);
            p.save();
            p.setFont(bold);
            p.setPen(rankColor(r, l.n).darker(140));
            p.drawText(QRectF(card.left(), card.top() - fm.height() - 2, card.width(), fm.height()), Qt::AlignCenter,
                       tr("rank %1").arg(r));
            p.restore();
        }
    }
    // Row caption at the left margin.
    QString caption;
    const bool bucket = s.scope == replay::CollectiveScope::Bucket;
    switch (s.kind) {
    case CollectiveOp::AllGather:
        caption = bucket ? (top ? tr("each rank's updated slice") : tr("updated parameters on every rank"))
                         : (top ? tr("each rank's shard") : tr("full parameters"));
        break;
    case CollectiveOp::ReduceScatter: caption = top ? tr("full gradients") : tr("summed gradient shard"); break;
    default:
        if (s.scope == replay::CollectiveScope::GradNorm)
            caption = top ? tr("each rank's part of the norm") : tr("after: the global norm on every rank");
        else
            caption = top ? tr("each rank's buffer") : tr("after: the sum on every rank");
        break;
    }
    const double y = top ? l.topY + l.rowH + 2 : l.bottomY - fm.height() - 2;
    // On a backdrop: the links pass under the caption.
    const double w = fm.horizontalAdvance(caption) + 8;
    p.fillRect(QRectF(l.area.center().x() - w / 2, y, w, fm.height()), palette().color(QPalette::Base));
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRectF(l.area.left(), y, l.area.width(), fm.height()), Qt::AlignHCenter, caption);
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
        const double progress = dest < static_cast<int>(s.ranks.size()) ? s.ranks[static_cast<std::size_t>(dest)].progress : s.progress;
        if (s.active && progress > 0 && progress < 1) {
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawEllipse(path.pointAtPercent(progress), dotR, dotR);
        }
    };
    const auto bottomOf = [&](const QRectF& r) { return QPointF(r.center().x(), r.bottom()); };
    const auto topOf = [&](const QRectF& r) { return QPointF(r.center().x(), r.top()); };
    for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
            switch (s.kind) {
            case CollectiveOp::AllGather: // owner a's shard → chunk a of rank b
                if (a != b) link(bottomOf(l.chunk(a, a, true)), topOf(l.chunk(b, a, false)), rankColor(a, n), b);
                break;
            case CollectiveOp::ReduceScatter: // rank a's chunk b → owner b's shard
                link(bottomOf(l.chunk(a, b, true)), topOf(l.chunk(b, b, false)), rankColor(b, n), b);
                break;
            default: // all-reduce / broadcast: whole buffers
                if (a != b || n == 1) link(bottomOf(l.card(a, true)), topOf(l.card(b, false)), rankColor(a, n), b);
                break;
            }
        }
    }
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
        p.drawText(pill, Qt::AlignCenter, fm.elidedText(cycleLabel(fr.cycle, fr.phase), Qt::ElideRight, static_cast<int>(pill.width()) - 8));
    }
    // The cycle as a chain, so a still picture says where these states sit in the story.
    const bool gradients = s.kind == CollectiveOp::ReduceScatter || s.kind == CollectiveOp::AllReduce;
    std::vector<replay::UnitCycle> chain;
    QString lead = gradients ? tr("Gradient cycle:") : tr("Unit cycle:");
    if (s.scope == replay::CollectiveScope::GradNorm) {
        chain = {replay::UnitCycle::NormPart, replay::UnitCycle::AllReducing, replay::UnitCycle::NormSummed};
        lead = tr("Gradient norm:");
    } else if (s.scope == replay::CollectiveScope::Bucket) {
        if (s.kind == CollectiveOp::AllGather) {
            chain = {replay::UnitCycle::SliceUpdated, replay::UnitCycle::GatheringUpdates, replay::UnitCycle::ParamsUpdated};
            lead = tr("Parameter update:");
        } else if (s.kind == CollectiveOp::ReduceScatter) {
            chain = {replay::UnitCycle::GradientsReady, replay::UnitCycle::ReduceScattering, replay::UnitCycle::Reduced};
        } else {
            chain = {replay::UnitCycle::GradientsReady, replay::UnitCycle::AllReducing, replay::UnitCycle::AllReduced};
        }
    } else if (s.kind == CollectiveOp::AllReduce)
        chain = {replay::UnitCycle::Computing, replay::UnitCycle::AllReducing, replay::UnitCycle::AllReduced};
    else if (gradients)
        chain = {replay::UnitCycle::Computing, replay::UnitCycle::Freed, replay::UnitCycle::ReduceScattering, replay::UnitCycle::Reduced};
    else
        chain = {replay::UnitCycle::ShardOnly, replay::UnitCycle::Gathering, replay::UnitCycle::Gathered, replay::UnitCycle::Computing, replay::UnitCycle::Freed};
    const double y = l.cycleY + pillH + 14;
    double x = l.area.left();
    p.setPen(QColor(90, 90, 90));
    p.drawText(QPointF(x, y + fm.ascent()), lead);
    x += fm.horizontalAdvance(lead) + 10;
    for (std::size_t i = 0; i < chain.size(); ++i) {
        const replay::UnitCycle c = chain[i];
        const int count = static_cast<int>(std::count_if(s.ranks.begin(), s.ranks.end(), [c](const replay::FlowRank& f) { return f.cycle == c; }));
        const QString text = cycleLabel(c, gradients ? Phase::Backward : s.phase) +
                             (count > 0 ? tr(" (ranks: %1)").arg(count) : QString());
        p.setBrush(cycleColor(c));
        p.setPen(Qt::NoPen);
        p.drawEllipse(QPointF(x + 5, y + fm.height() / 2.0), 5, 5);
        QFont f = p.font();
        f.setBold(count > 0);
        p.save();
        p.setFont(f);
        p.setPen(count > 0 ? palette().color(QPalette::WindowText) : QColor(140, 140, 140));
        p.drawText(QPointF(x + 14, y + fm.ascent()), text);
        x += 14 + QFontMetrics(f).horizontalAdvance(text);
        p.restore();
        if (i + 1 < chain.size()) {
            p.setPen(QColor(120, 120, 120));
            p.drawText(QPointF(x + 6, y + fm.ascent()), QStringLiteral("→"));
            x += 24;
        }
    }
}

void FlowView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const QFontMetrics fm(p.font());
    if (!state_.valid) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, emptyText());
        return;
    }
    Layout l;
    l.area = QRectF(rect()).adjusted(16, 10, -16, -10);
    l.n = std::max(state_.worldSize, 1);
    l.colW = l.area.width() / l.n;
    l.cardW = l.colW * (l.n <= 8 ? 0.82 : 0.9);
    QFont big = p.font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    p.save();
    p.setFont(big);
    p.setPen(palette().color(QPalette::WindowText));
    const double titleH = QFontMetrics(big).height();
    p.drawText(QRectF(l.area.left(), l.area.top(), l.area.width(), titleH), Qt::AlignLeft, title());
    p.restore();
    p.setPen(QColor(70, 70, 70));
    const QRectF sub(l.area.left(), l.area.top() + titleH + 2, l.area.width(), fm.height() * 2 + 2);
    p.drawText(sub, Qt::AlignLeft | Qt::TextWordWrap, subtitle());
    const double body = sub.bottom() + fm.height() + 8;
    const double cycleBlock = (fm.height() + 8) + fm.height() + 28;
    l.rowH = std::clamp((l.area.bottom() - body - cycleBlock) * 0.16, 14.0, 48.0);
    l.topY = body;
    l.bottomY = l.area.bottom() - cycleBlock - l.rowH - fm.height();
    l.cycleY = l.bottomY + l.rowH + 10;
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
