#include "checkpoints/reshard_view.h"

#include "common/byte_format.h"
#include "common/category_palette.h"

#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace shardscope::widgets {
namespace {

constexpr int kMargin = 8;
constexpr int kLabelWidth = 118; // "saved (N = 3)" / "new (M = 2)" beside the bars
constexpr int kTitle = 20;
constexpr int kBar = 20;
constexpr int kGap = 4;
constexpr int kBottom = 14;

QString num(std::uint64_t v) {
    return formatBytesExact(v);
}

int copiesOf(const LoadPlan& p) {
    return std::max(1, p.newWorld / std::max(1, p.units.empty() ? 1 : p.units[0].shardsNew));
}

} // namespace

ReshardView::ReshardView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("reshardView"));
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ReshardView::setPlan(std::shared_ptr<const LoadPlan> plan,
                          std::shared_ptr<const checkpoint::Metadata> meta) {
    plan_ = std::move(plan);
    meta_ = std::move(meta);
    if (!plan_ || !meta_) {
        plan_.reset();
        meta_.reset();
    }
    updateGeometry();
    setFixedHeight(sizeHint().height());
    update();
}

int ReshardView::laneHeight() const {
    if (!plan_) return 0;
    return std::clamp(64 / std::max(1, plan_->newWorld), 3, 16);
}

int ReshardView::unitBlockHeight() const {
    if (!plan_) return 0;
    const int copies = copiesOf(*plan_);
    const int newRow = copies > 1 ? copies * laneHeight() : kBar;
    return kTitle + kBar + kGap + plan_->newWorld * laneHeight() + kGap + newRow + kBottom;
}

QSize ReshardView::sizeHint() const {
    if (!plan_) return {400, 60};
    return {600, kMargin + static_cast<int>(plan_->units.size()) * unitBlockHeight()};
}

QSize ReshardView::minimumSizeHint() const {
    return {kLabelWidth + 120, sizeHint().height()};
}

QString ReshardView::unitTitle(const UnitLoadPlan& u) const {
    return tr("%1: %2 elements · padding %3 at N = %4, %5 at M = %6")
        .arg(QString::fromStdString(u.name), num(u.elements), num(u.paddedSaved - u.elements))
        .arg(plan_->savedWorld)
        .arg(num(u.paddedNew - u.elements))
        .arg(plan_->newWorld);
}

std::vector<ReshardView::Item> ReshardView::itemsOfUnit(std::size_t unit) const {
    std::vector<Item> out;
    if (!plan_ || !meta_ || unit >= plan_->units.size()) return out;
    const UnitLoadPlan& u = plan_->units[unit];
    const LoadPlan& p = *plan_;
    const double x0 = kLabelWidth, x1 = std::max<double>(x0 + 40, width() - kMargin);
    const double span =
        static_cast<double>(std::max<std::uint64_t>({u.paddedSaved, u.paddedNew, u.elements, 1}));
    const auto x = [&](std::uint64_t e) { return x0 + (x1 - x0) * static_cast<double>(e) / span; };
    // A few padding elements of thousands would be invisible: they get a few pixels past the
    // bar's end (the margin), enough to see that they are there.
    const auto padWidth = [&](std::uint64_t from, std::uint64_t to) {
        return std::max(x(to) - x(from), 5.0);
    };
    const double top = kMargin + static_cast<double>(unit) * unitBlockHeight() + kTitle;
    const int lane = laneHeight();
    const int n = p.savedWorld, m = p.newWorld;

    for (const SavedPiece& s : u.saved) {
        const checkpoint::DataFile& f = meta_->files[s.file];
        out.push_back(
            {Kind::Saved, unit, QRectF(x(s.begin), top, x(s.end) - x(s.begin), kBar),
             rankColor(s.rank, n), QString::number(s.rank),
             tr("%1 (saved by rank %2): elements [%3, %4) of %5, %6 bytes (master, Adam m, Adam v)")
                 .arg(QString::fromStdString(f.name))
                 .arg(s.rank)
                 .arg(num(s.begin), num(s.end), QString::fromStdString(u.name),
                      num((s.end - s.begin) * checkpoint::kBytesPerElement)),
             -1, s.file, s.begin, s.end});
    }
    if (u.paddedSaved > u.elements)
        out.push_back({Kind::SavedPadding, unit,
                       QRectF(x(u.elements), top, padWidth(u.elements, u.paddedSaved), kBar),
                       neutralColor(200), QString(),
                       tr("Padding at N = %1: %2 element(s) that make %3 divisible into %1 equal "
                          "shards. Never stored.")
                           .arg(u.shardsSaved)
                           .arg(num(u.paddedSaved - u.elements), QString::fromStdString(u.name)),
                       -1, 0, u.elements, u.paddedSaved});

    const double readsTop = top + kBar + kGap;
    for (const PlannedRead& pr : u.reads) {
        const checkpoint::Read& r = pr.read;
        const checkpoint::DataFile& f = meta_->files[r.file];
        const std::uint64_t len = (r.end - r.begin) * sizeof(float);
        out.push_back(
            {Kind::Read, unit,
             QRectF(x(r.begin), readsTop + pr.newRank * lane, x(r.end) - x(r.begin), lane),
             rankColor(f.rank, n), QString::number(f.rank),
             tr("New rank %1 reads elements [%2, %3) from %4: master bytes %5–%6, Adam m %7–%8, "
                "Adam v %9–%10")
                 .arg(pr.newRank)
                 .arg(num(r.begin), num(r.end), QString::fromStdString(f.name), num(r.offsets[0]),
                      num(r.offsets[0] + len), num(r.offsets[1]), num(r.offsets[1] + len))
                 .arg(num(r.offsets[2]), num(r.offsets[2] + len)),
             pr.newRank, r.file, r.begin, r.end});
    }

    const double newTop = readsTop + m * lane + kGap;
    const int copies = copiesOf(p);
    const int shards = std::max(1, u.shardsNew);
    const double rowH = copies > 1 ? lane : kBar;
    for (int r = 0; r < m && static_cast<std::size_t>(r) < u.owned.size(); ++r) {
        const checkpoint::Span& s = u.owned[static_cast<std::size_t>(r)];
        const double y = newTop + (copies > 1 ? (r / shards) * rowH : 0);
        // The owned span is clipped to the elements; the shard's padding is drawn after the unit.
        out.push_back({Kind::Owned, unit, QRectF(x(s.begin), y, x(s.end) - x(s.begin), rowH),
                       rankColor(r, m), QString::number(r),
                       tr("New rank %1 owns elements [%2, %3) of %4: %5 bytes to read")
                           .arg(r)
                           .arg(num(s.begin), num(s.end), QString::fromStdString(u.name),
                                num(s.elements() * checkpoint::kBytesPerElement)),
                       r, 0, s.begin, s.end});
    }
    if (u.paddedNew > u.elements)
        out.push_back(
            {Kind::NewPadding, unit,
             QRectF(x(u.elements), newTop, padWidth(u.elements, u.paddedNew), copies * rowH),
             neutralColor(200), QString(),
             tr("Padding at M = %1: %2 element(s) that make %3 divisible into %1 equal shards. "
                "Nothing is read for it.")
                 .arg(u.shardsNew)
                 .arg(num(u.paddedNew - u.elements), QString::fromStdString(u.name)),
             -1, 0, u.elements, u.paddedNew});
    return out;
}

void ReshardView::paintEvent(QPaintEvent* event) {
    QPainter p(this);
    p.fillRect(event->rect(), palette().base());
    if (!plan_ || !meta_) return;
    const int block = unitBlockHeight();
    const auto first =
        static_cast<std::size_t>(std::max(0, (event->rect().top() - kMargin) / block));
    const auto last = std::min(
        plan_->units.size(),
        static_cast<std::size_t>(std::max(0, (event->rect().bottom() - kMargin) / block + 1)));
    const QFontMetrics fm(font());
    const int lane = laneHeight();
    for (std::size_t u = first; u < last; ++u) {
        const UnitLoadPlan& up = plan_->units[u];
        const int top = kMargin + static_cast<int>(u) * block;
        p.setPen(palette().color(QPalette::Text));
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(
            QRect(kMargin, top, width() - 2 * kMargin, kTitle), Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetrics(bold).elidedText(unitTitle(up), Qt::ElideRight, width() - 2 * kMargin));
        p.setFont(font());
        const int savedTop = top + kTitle, readsTop = savedTop + kBar + kGap,
                  newTop = readsTop + plan_->newWorld * lane + kGap;
        const auto rowLabel = [&](int y, int h, const QString& text) {
            p.drawText(QRect(kMargin, y, kLabelWidth - kMargin - 4, h),
                       Qt::AlignRight | Qt::AlignVCenter,
                       fm.elidedText(text, Qt::ElideRight, kLabelWidth - kMargin - 4));
        };
        p.setPen(palette().color(QPalette::Text));
        rowLabel(savedTop, kBar, tr("saved (N = %1)").arg(plan_->savedWorld));
        if (lane >= fm.height())
            for (int r = 0; r < plan_->newWorld; ++r)
                rowLabel(readsTop + r * lane, lane, tr("rank %1 reads").arg(r));
        else
            rowLabel(readsTop, plan_->newWorld * lane, tr("reads"));
        rowLabel(newTop, kBar, tr("new (M = %1)").arg(plan_->newWorld));
        for (const Item& it : itemsOfUnit(u)) {
            const bool padding = it.kind == Kind::SavedPadding || it.kind == Kind::NewPadding;
            if (padding) {
                p.fillRect(it.rect, QBrush(neutralColor(150), Qt::BDiagPattern));
                p.setPen(neutralColor(150));
                p.drawRect(it.rect.adjusted(0, 0, -1, -1));
                continue;
            }
            p.fillRect(it.rect, it.fill);
            p.setPen(it.kind == Kind::Read ? rankColor(it.newRank, plan_->newWorld).darker(160)
                                           : palette().color(QPalette::Base));
            p.drawRect(it.rect.adjusted(0, 0, -1, -1));
            if (!it.label.isEmpty() && fm.horizontalAdvance(it.label) + 4 < it.rect.width() &&
                fm.height() <= it.rect.height() + 2) {
                p.setPen(textOn(it.fill));
                p.drawText(it.rect, Qt::AlignCenter, it.label);
            }
        }
    }
}

bool ReshardView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && plan_) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int block = unitBlockHeight();
        const int u = block > 0 ? (help->pos().y() - kMargin) / block : -1;
        if (u >= 0 && static_cast<std::size_t>(u) < plan_->units.size()) {
            const std::vector<Item> items = itemsOfUnit(static_cast<std::size_t>(u));
            // Reads and shards before the padding they may touch at an edge.
            for (const Item& it : items)
                if (it.rect.adjusted(-1, 0, 1, 0).contains(help->pos())) {
                    QToolTip::showText(help->globalPos(), it.tooltip, this);
                    return true;
                }
            if (help->pos().y() < kMargin + u * block + kTitle) {
                QToolTip::showText(help->globalPos(),
                                   unitTitle(plan_->units[static_cast<std::size_t>(u)]), this);
                return true;
            }
        }
        QToolTip::hideText();
        e->ignore();
        return true;
    }
    return QWidget::event(e);
}

} // namespace shardscope::widgets
