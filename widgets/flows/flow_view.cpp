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
        // Another pipeline stage's rank: no part in this collective, nothing of it drawn here.
        if (const int stage = otherStage(r); stage >= 0) {
            p.setPen(QColor(150, 150, 150));
            p.drawText(card, Qt::AlignCenter,
                       fm.elidedText(tr("stage %1").arg(stage), Qt::ElideRight,
                                     static_cast<int>(card.width()) - 4));
            if (top) {
                p.drawText(
                    QRectF(card.left(), card.top() - fm.height() - 2, card.width(), fm.height()),
                    Qt::AlignCenter, tr("rank %1").arg(r));
            }
            continue;
        }
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
    // Elided to the view (a narrow side-by-side view at large text), never clipped at both ends.
    const QString caption =
        fm.elidedText(rowCaption(top), Qt::ElideRight, static_cast<int>(l.area.width()) - 8);
    const double y = top ? l.topY + l.rowH + 2 : l.bottomY - fm.height() - 2;
    // On a backdrop: the links pass under the caption.
    const double w = fm.horizontalAdvance(caption) + 8;
    p.fillRect(QRectF(l.area.center().x() - w / 2, y, w, fm.height()),
               palette().color(QPalette::Base));
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRectF(l.area.left(), y, l.area.width(), fm.height()), Qt::AlignHCenter, caption);
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

void FlowView::paintCycle(QPainter& p, const Layout& l, bool withChain) const {
    const replay::FlowState& s = state_;
    const QFontMetrics fm(p.font());
    const double pillH = fm.height() + 8;
    for (int r = 0; r < l.n && r < static_cast<int>(s.ranks.size()); ++r) {
        const replay::FlowRank& fr = s.ranks[static_cast<std::size_t>(r)];
        const QRectF pill(l.cardLeft(r), l.cycleY, l.cardW, pillH);
        // Another stage's rank: a pale pill saying so, not a state of this collective's cycle.
        const QColor fill = otherStage(r) >= 0 ? neutralColor(0xdd) : cycleColor(fr.cycle);
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawRoundedRect(pill, pillH / 2, pillH / 2);
        p.setPen(textOn(fill));
        p.drawText(pill, Qt::AlignCenter,
                   fm.elidedText(rankLabel(r), Qt::ElideRight, static_cast<int>(pill.width()) - 8));
    }
    if (!withChain) return;
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

QFont FlowView::titleFont(const QFont& body) {
    QFont big = body;
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    return big;
}

// The two rows with their captions and the least room for the links between them.
double FlowView::diagramHeight(const QFontMetrics& fm) {
    const double leastRow = std::max(18, fm.height());
    return 2 * leastRow + 2 * (fm.height() + 4) + 2 * fm.height() + 10;
}

// The pills, the gap under them and the chain's lines.
double FlowView::cycleBlockHeight(const QFontMetrics& fm, int chainLineCount) {
    const double pills = fm.height() + 8;
    return chainLineCount > 0 ? pills + 28 + chainLineCount * (fm.height() + 4) : pills + 4;
}

QSize FlowView::minimumSizeHint() const {
    // One title line, two of the subtitle (what moves, in bytes: lessons quote it), no chain
    // under the pills: the least that draws without overprinting at this font (a projector's
    // 20 px needs more than a desk's 13).
    const QFontMetrics fm(font());
    const QFontMetrics bfm(titleFont(font()));
    // (CJK lines measure a quarter taller than the Latin font's.)
    const double h = 20 + bfm.lineSpacing() * 1.25 + 2 + (2 * fm.lineSpacing() * 1.25 + 2) +
                     fm.height() + 8 + fm.height() + 6 + diagramHeight(fm) +
                     cycleBlockHeight(fm, 0);
    return {420, static_cast<int>(std::ceil(h))};
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
    const double leastRow = std::max(18, fm.height()); // as diagramHeight counts it
    l.rowH = std::clamp((l.area.bottom() - body - cycleBlock) * 0.16, leastRow,
                        std::max(48.0, leastRow));
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
    const QFont big = titleFont(p.font());
    p.save();
    p.setFont(big);
    p.setPen(palette().color(QPalette::WindowText));
    const QFontMetrics bfm(big);
    // The title wraps onto a second line in a narrow (side-by-side) view rather than clipping.
    const QRectF titleRect =
        bfm.boundingRect(area.toRect(), Qt::AlignLeft | Qt::TextWordWrap, title());
    // Lines × a spacing with room for taller fallback glyphs (CJK), at most three lines; one
    // where the whole title fits the width (a CJK line measures taller than one Latin line).
    const int titleLines =
        bfm.horizontalAdvance(title()) <= area.width()
            ? 1
            : std::clamp(static_cast<int>(std::ceil(titleRect.height() / bfm.lineSpacing() - 0.01)),
                         1, 3);
    // A CJK line is a quarter taller than the Latin font's spacing (as minimumSizeHint counts).
    const double titleH = titleLines * bfm.lineSpacing() * 1.25;
    p.drawText(QRectF(area.left(), area.top(), area.width(), titleH),
               Qt::AlignLeft | Qt::TextWordWrap, title());
    p.restore();
    const double groupsH = state_.members.size() > 1 ? fm.height() + 6 : 0; // the groups' captions
    // The subtitle (what moves, in bytes: lessons quote it) and the cycle's chain (wrapping in a
    // narrow view) where the rows, links and pills keep their least room; short of it (a
    // projector's large text) the chain gives way first, then the subtitle — never an overprint.
    const QRect subNeed = fm.boundingRect(QRectF(area.left(), 0, area.width(), 1e4).toRect(),
                                          Qt::AlignLeft | Qt::TextWordWrap, subtitle());
    const double subH = std::min<double>(subNeed.height(), fm.height() * 5) + 2;
    const double base = titleH + 2 + fm.height() + 8 + groupsH + diagramHeight(fm);
    const double chainBlock = cycleBlockHeight(fm, chainLines(p.font(), area.width()));
    const double pillsBlock = cycleBlockHeight(fm, 0);
    const bool withChain = base + subH + chainBlock <= area.height();
    const bool withSubtitle = base + subH + (withChain ? chainBlock : pillsBlock) <= area.height();
    const double cycleBlock = withChain ? chainBlock : pillsBlock;
    stats_ = {withSubtitle, withChain};
    const QRectF sub(area.left(), area.top() + titleH + 2, area.width(), withSubtitle ? subH : 0);
    p.setPen(QColor(70, 70, 70));
    if (withSubtitle) p.drawText(sub, Qt::AlignLeft | Qt::TextWordWrap, subtitle());
    const double body = sub.bottom() + fm.height() + 8 + groupsH;
    const Layout l = layoutFor(area, body, cycleBlock, fm);
    paintGroups(p, l);
    paintLinks(p, l);
    p.setRenderHint(QPainter::Antialiasing, false);
    paintRow(p, l, true);
    paintRow(p, l, false);
    p.setRenderHint(QPainter::Antialiasing);
    paintCycle(p, l, withChain);
}

void FlowView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) update();
    if (event->type() == QEvent::FontChange) updateGeometry(); // its least height follows the font
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
