#include "ranks/rank_ledger_view.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/failure_text.h"
#include "common/run_labels.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

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

namespace {

// The axis' labels ("1.95 MB") in the font shown: it grows on a projector.
int axisWidth(const QFontMetrics& fm) {
    return std::max(64, fm.horizontalAdvance(QStringLiteral("0.00 MB")) + 10);
}
constexpr int kGuideWidth = 104;   // right of the columns: labels of the theory and capacity lines
constexpr double kSmoothing = 0.3; // fraction of the remaining distance covered per frame

// A unit another pipeline stage holds: no shard of it on this rank.
QColor otherStageColor() {
    return neutralColor(0xe4);
}
// A pipeline's stage groups: the colour of its messages (pp_send) in the timeline.
QColor stageColor() {
    return activityColor(Activity::PipeSend);
}

} // namespace

RankLedgerView::RankLedgerView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("rankLedgerView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    frame_.setInterval(16);
    connect(&frame_, &QTimer::timeout, this, &RankLedgerView::animate);
}

void RankLedgerView::setRunInfo(std::shared_ptr<const replay::RunInfo> info) {
    info_ = std::move(info);
    theories_ = info_ ? tierTheoriesOf(*info_) : std::vector<TierTheory>{};
    updateTiers();
    update();
}

// A tier gets its bar when the theory puts bytes there or the run did: staging buffers on the
// host count too, so nothing measured is left out of the picture.
void RankLedgerView::updateTiers() {
    std::vector<Tier> tiers{Tier::Device};
    for (Tier t : {Tier::Host, Tier::Nvme}) {
        bool used = false;
        for (const TierTheory& th : theories_)
            used = used || th.modelStates.tier(t) > 0 || th.peak[index(t)] > 0;
        for (const replay::RankState& s : state_)
            used = used || s.peakByTier[index(t)] > 0;
        if (used) tiers.push_back(t);
    }
    tiers_ = std::move(tiers);
}

QRect RankLedgerView::tierBarRect(int rank, Tier tier) const {
    const auto it = std::find(tiers_.begin(), tiers_.end(), tier);
    if (it == tiers_.end() || rank < 0 || rank >= static_cast<int>(state_.size())) return {};
    return geometry().tierBar(rank, static_cast<int>(it - tiers_.begin()));
}

double RankLedgerView::shownBytes(int rank, Category c, Tier tier) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= shown_.size()) return 0;
    return shown_[static_cast<std::size_t>(rank)][index(c)][index(tier)];
}

std::optional<int> RankLedgerView::capacityY() const {
    if (!info_ || !info_->capacityBytes) return std::nullopt;
    return yFor(geometry(), static_cast<double>(*info_->capacityBytes));
}

std::uint64_t RankLedgerView::theoryTallest() const {
    std::uint64_t tallest = info_ ? info_->predictedPeakBytes : 0;
    for (int st = 0; st < stageCount(); ++st)
        tallest = std::max(tallest, stagePredictedPeak(st));
    for (const TierTheory& th : theories_)
        for (std::uint64_t b : th.peak)
            tallest = std::max(tallest, b);
    return tallest;
}

const TierTheory* RankLedgerView::tierTheory(int rank) const {
    if (theories_.empty()) return nullptr;
    const int stage = info_ ? info_->stageOf(rank) : 0;
    return &theories_[static_cast<std::size_t>(
        std::clamp(stage, 0, static_cast<int>(theories_.size()) - 1))];
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

void RankLedgerView::clear() {
    info_.reset();
    state_.clear();
    shown_.clear();
    failure_.reset();
    theories_.clear();
    tiers_ = {Tier::Device};
    scale_ = 1;
    frame_.stop();
    update();
}

void RankLedgerView::setState(const replay::LedgerState& state) {
    state_ = state;
    if (tiers_.size() < kTierCount) updateTiers();
    if (shown_.size() != state_.size()) {
        shown_.assign(state_.size(), {});
        settle();
        return;
    }
    if (!frame_.isActive()) frame_.start();
}

void RankLedgerView::setScaleBytes(std::uint64_t bytes) {
    scale_ = std::max<std::uint64_t>(bytes, 1);
    update();
}

void RankLedgerView::setFailure(std::optional<replay::FailureInfo> failure) {
    failure_ = std::move(failure);
    update();
}

void RankLedgerView::settle() {
    for (std::size_t r = 0; r < state_.size() && r < shown_.size(); ++r)
        for (Category c : kAllCategories)
            for (Tier t : kAllTiers)
                shown_[r][index(c)][index(t)] = static_cast<double>(state_[r].live.at(c, t));
    frame_.stop();
    update();
}

void RankLedgerView::animate() {
    bool moving = false;
    const double epsilon = static_cast<double>(scale_) * 1e-3;
    for (std::size_t r = 0; r < state_.size(); ++r) {
        for (Category c : kAllCategories) {
            for (Tier t : kAllTiers) {
                double& v = shown_[r][index(c)][index(t)];
                const auto target = static_cast<double>(state_[r].live.at(c, t));
                v += (target - v) * kSmoothing;
                if (std::abs(target - v) > epsilon)
                    moving = true;
                else
                    v = target;
            }
        }
    }
    if (!moving) frame_.stop();
    update();
}

bool RankLedgerView::isCompact() const {
    return static_cast<int>(state_.size()) > kCompactAbove;
}

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

QRect RankLedgerView::plotArea() const {
    return geometry().plot;
}

RankLedgerView::Geometry RankLedgerView::geometry() const {
    Geometry g;
    g.ranks = std::max<int>(1, static_cast<int>(state_.size()));
    g.compact = isCompact();
    const QFontMetrics fm(font());
    const std::vector<QRect> keys = legendItems(width() - 16);
    const int legendRows = keys.empty() ? 0 : keys.back().top() / (fm.height() + 2) + 1;
    g.legend = QRect(8, 4, width() - 16, legendRows * (fm.height() + 2) + 2);
    g.stripHeight = g.compact ? 6 : 14;
    g.tiers = static_cast<int>(tiers_.size());
    g.bracket = g.tiers > 1 && !g.compact ? 5 : 0;
    // + a third of a line: a CJK fallback glyph sits lower than the Latin font's metrics say.
    const int textHeight = (g.compact ? fm.height() + 2 : 2 * fm.height() + 4) + fm.height() / 3;
    // Tier names get a row under the bars where the bars can spare it; otherwise they sit at
    // the top of each off-device slot.
    if (g.tiers > 1 && !g.compact &&
        height() - textHeight - g.stripHeight - g.legend.bottom() - 3 * fm.height() > 200)
        g.tierNames = fm.height();
    g.stripHeight += g.tierNames;
    const int bottom = height() - 4 - textHeight - g.stripHeight - 4;
    int top = g.legend.bottom() + 8;
    if (const QString failure = failureText(); !failure.isEmpty()) {
        // A band of its own, one line: drawn over the plot, the text hid peak labels and guide
        // lines; wrapped, it took the bars' height (the page's banner and the tooltip hold it
        // whole).
        QFont bold = font();
        bold.setBold(true);
        const int h = QFontMetrics(bold).height() + QFontMetrics(bold).height() / 3;
        g.failureBand = QRect(axisWidth(fm), top, std::max(40, width() - axisWidth(fm) - 8), h);
        top += h + 4;
    }
    // A T × D mesh's group frames name themselves in a row of their own, above the peak labels.
    if (tensorGroups() > 0) top += fm.height() + 2;
    top += fm.height(); // room for the peak labels
    // A pipeline's stage names take a row where the bars keep five lines' height beside it (a
    // projector's large text may not spare it: the stages' tinted groups and the tooltips
    // remain).
    if (const int band = fm.height() + fm.height() / 3 + 4;
        stageCount() > 1 && bottom - top - band - 2 >= 5 * fm.height()) {
        const int tpRow = tensorGroups() > 0 ? fm.height() + 2 : 0;
        g.stageBand = QRect(axisWidth(fm), top - fm.height() - tpRow,
                            std::max(40, width() - axisWidth(fm) - kGuideWidth), band);
        top += band + 2;
    }
    g.plot = QRect(axisWidth(fm), top, width() - axisWidth(fm) - kGuideWidth,
                   std::max(20, bottom - top));
    g.columnWidth = std::max(1, g.plot.width() / g.ranks);
    g.barWidth = g.tiers == 1 ? std::max(2, std::min(110, g.columnWidth * 3 / 5))
                              : std::max(3 * g.tiers,
                                         std::min(110 + 70 * (g.tiers - 1), g.columnWidth * 4 / 5));
    g.textTop = g.plot.bottom() + g.stripHeight + 6;
    return g;
}

int RankLedgerView::yFor(const Geometry& g, double bytes) const {
    const double f = std::clamp(bytes / static_cast<double>(scale_), 0.0, 1.05);
    return g.plot.bottom() - static_cast<int>(std::lround(f * g.plot.height()));
}

void RankLedgerView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const Geometry g = geometry();
    paintLegend(p, g.legend);
    if (state_.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(g.plot, Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No run yet. Press Run to train real sharded steps, or open a recording "
                      "(.sstrace)."));
        return;
    }
    paintAxis(p, g);
    paintStageTints(p, g);
    for (int r = 0; r < g.ranks; ++r)
        paintColumn(p, g, r);
    paintGuides(p, g);
    paintTensorGroups(p, g);
    paintStages(p, g);
}

// A pipeline's stages as groups: every other stage's columns on a faint tint of the stage
// colour, from the peak labels to the rank labels.
void RankLedgerView::paintStageTints(QPainter& p, const Geometry& g) const {
    const int stages = stageCount();
    if (stages <= 1) return;
    const QFontMetrics fm(font());
    const int per = g.ranks / stages;
    QColor tint = stageColor();
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
        p.setPen(QPen(stageColor(), 2));
        p.drawLine(left, y, right, y);
        p.drawLine(left, y, left, y + 5);
        p.drawLine(right, y, right, y + 5);
        const auto [u0, u1] = info_->stageUnitRange(st);
        // The longest that fits whole: units and the stage's predicted peak, the units, the name.
        const QString name = tr("stage %1").arg(st);
        const QString units =
            u1 - u0 <= 1 ? QString::fromStdString(info_->unitName(u0))
                         : tr("%1 … %2").arg(QString::fromStdString(info_->unitName(u0)),
                                             QString::fromStdString(info_->unitName(u1 - 1)));
        QString label = name;
        for (const QString& candidate :
             {tr("%1 · %2 · theory peak %3")
                  .arg(name, units, formatDecimal(static_cast<double>(stagePredictedPeak(st)))),
              tr("%1 · %2").arg(name, units)})
            if (u1 > u0 && !g.compact && fm.horizontalAdvance(candidate) <= right - left) {
                label = candidate;
                break;
            }
        p.setPen(stageColor());
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

void RankLedgerView::paintLegend(QPainter& p, const QRect& area) const {
    const QFontMetrics fm(font());
    const std::vector<QRect> items = legendItems(area.width());
    const QStringList labels = legendLabels();
    const auto& order = categoryStackOrder();
    const auto itemAt = [&](std::size_t i) { return items[i].translated(area.topLeft()); };
    const auto label = [&](const QRect& item, std::size_t i) {
        p.setPen(palette().color(QPalette::Text));
        p.drawText(
            item.adjusted(16, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
            fm.elidedText(labels[static_cast<qsizetype>(i)], Qt::ElideRight, item.width() - 16));
    };
    for (std::size_t i = 0; i < order.size() && i < items.size(); ++i) {
        const QRect item = itemAt(i);
        p.fillRect(QRect(item.left(), item.top() + 2, 12, fm.height() - 4),
                   categoryColor(order[i]));
        label(item, i);
    }
    // Split by tier, the keys of the off-device slots and of the theory's bracket follow in the
    // same rows (a row of their own would take the bars' height at 1024×700).
    if (tiers_.size() > 1) {
        std::size_t i = order.size();
        for (Tier t : tiers_) {
            if (t == Tier::Device || i >= items.size()) continue;
            const QRect item = itemAt(i);
            QColor tint = tierColor(t);
            tint.setAlpha(32);
            p.fillRect(QRect(item.left(), item.top() + 1, 12, fm.height() - 3), tint);
            p.fillRect(QRect(item.left(), item.top() + fm.height() - 4, 12, 3), tierColor(t));
            label(item, i++);
        }
        if (i < items.size()) {
            const QRect item = itemAt(i);
            p.setPen(QPen(neutralColor(0x40), 1.5));
            p.drawLine(item.left() + 6, item.top() + fm.height() - 2, item.left() + 6,
                       item.top() + 2);
            p.drawLine(item.left() + 2, item.top() + 2, item.left() + 7, item.top() + 2);
            label(item, i);
        }
    }
    // The unit strip's key: what "sharded" and "gathered" look like.
    const auto lead = static_cast<std::size_t>(labels.size());
    if (lead >= items.size()) return;
    p.setPen(palette().color(QPalette::Text));
    p.drawText(itemAt(lead), Qt::AlignVCenter | Qt::AlignLeft, unitKeyLead());
    const auto keys = unitKeys();
    for (std::size_t i = 0; i < keys.size() && lead + 1 + i < items.size(); ++i) {
        const auto& [colour, text] = keys[i];
        const QRect item = itemAt(lead + 1 + i);
        const QRect box(item.left(), item.top() + 2, 16, fm.height() - 4);
        if (colour.isValid())
            p.fillRect(box, colour);
        else {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(box.adjusted(1, 1, -1, -1));
        }
        p.setPen(palette().color(QPalette::Text));
        p.drawText(item.adjusted(20, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(text, Qt::ElideRight, item.width() - 20));
    }
}

void RankLedgerView::paintAxis(QPainter& p, const Geometry& g) const {
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(g.plot.bottomLeft(), g.plot.bottomRight());
    const QFontMetrics fm(font());
    // Quarters where the labels have room, else halves or the top alone: never overprinted.
    const int intervals = g.plot.height() >= 6 * fm.height()   ? 4
                          : g.plot.height() >= 3 * fm.height() ? 2
                                                               : 1;
    for (int i = 0; i <= intervals; ++i) {
        const double bytes = static_cast<double>(scale_) * i / intervals;
        const int y = yFor(g, bytes);
        p.setPen(QPen(palette().color(QPalette::Midlight), 1, Qt::DotLine));
        if (i > 0) p.drawLine(g.plot.left(), y, g.plot.right(), y);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, y - fm.height() / 2, axisWidth(fm) - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, formatDecimal(bytes));
    }
}

void RankLedgerView::paintColumn(QPainter& p, const Geometry& g, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    const replay::RankState& s = state_[r];
    const QRect column = g.column(rank);
    const QRect bar = g.bar(rank);
    const bool failed = failure_ && failure_->rank == rank;
    if (failed) p.fillRect(column.adjusted(1, 0, -1, 0), QColor(255, 226, 226));
    for (std::size_t slot = 0; slot < tiers_.size(); ++slot)
        paintTierBar(p, g, rank, slot);
    // The rank's device peak so far: a dark tick across the bar (without offload: its peak).
    const std::uint64_t devicePeak = s.peakByTier[index(Tier::Device)];
    const int peakY = yFor(g, static_cast<double>(devicePeak));
    p.setPen(QPen(neutralColor(0x20), 2));
    p.drawLine(bar.left() - 3, peakY, bar.right() + 3, peakY);
    const QFontMetrics fm(font());
    if (!g.compact) {
        // A narrow column keeps the number (the tick says what it is), never a clipped word;
        // neighbours' numbers must not run together: none where even the number has no margin
        // (the tooltip gives it).
        const QString value = formatDecimal(static_cast<double>(devicePeak));
        const QString named = tr("peak %1").arg(value);
        const int room = column.width() - 8;
        if (fm.horizontalAdvance(value) <= room)
            p.drawText(QRect(column.left(), peakY - fm.height() - 1, column.width(), fm.height()),
                       Qt::AlignHCenter | Qt::AlignBottom,
                       fm.horizontalAdvance(named) <= room ? named : value);
    }
    if (failed) {
        p.setPen(QPen(alertColor(), 2));
        p.drawRect(column.adjusted(1, 0, -2, 0));
    }
    paintUnits(p, QRect(bar.left(), g.plot.bottom() + 3, bar.width(), g.stripHeight - g.tierNames),
               rank, s);
    p.setPen(failed ? alertColor() : palette().color(QPalette::Text));
    const int every = g.compact ? std::max(1, (fm.horizontalAdvance(QStringLiteral("63")) + 6) /
                                                      std::max(1, g.columnWidth) +
                                                  1)
                                : 1;
    if (rank % every != 0) return;
    const QString label =
        g.compact
            ? QString::number(rank)
            : tr("rank %1 · %2").arg(rank).arg(formatDecimal(static_cast<double>(s.liveTotal)));
    // TextDontClip: a CJK fallback glyph is taller than the Latin font's height.
    p.drawText(QRect(column.left() - (g.compact ? 10 : 0), g.textTop,
                     column.width() + (g.compact ? 20 : 0), fm.height()),
               Qt::AlignHCenter | Qt::TextDontClip,
               fm.elidedText(label, Qt::ElideRight, column.width() + (g.compact ? 20 : 0)));
    if (!g.compact) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(column.left(), g.textTop + fm.height() + 2, column.width(), fm.height()),
                   Qt::AlignHCenter | Qt::TextDontClip,
                   fm.elidedText(activityText(s), Qt::ElideRight, column.width()));
    }
}

// One tier's bar of a column: its categories stacked; split by tier, also the tier's slot (a
// tint), its name, its own peak tick, the theory's model states (a bracket beside it) and, off
// the device, the theory's peak of that tier (a dotted tick).
void RankLedgerView::paintTierBar(QPainter& p, const Geometry& g, int rank,
                                  std::size_t slot) const {
    const auto r = static_cast<std::size_t>(rank);
    const Tier t = tiers_[slot];
    const QRect bar = g.tierBar(rank, static_cast<int>(slot));
    if (g.tiers > 1 && t != Tier::Device) {
        QColor tint = tierColor(t);
        tint.setAlpha(32);
        p.fillRect(bar, tint);
    }
    double below = 0;
    for (Category c : categoryStackOrder()) {
        const double bytes = r < shown_.size() ? shown_[r][index(c)][index(t)] : 0.0;
        if (bytes <= 0) continue;
        const int y0 = yFor(g, below);
        const int y1 = yFor(g, below + bytes);
        if (y0 > y1) p.fillRect(QRect(bar.left(), y1, bar.width(), y0 - y1), categoryColor(c));
        below += bytes;
    }
    if (g.tiers == 1) return;
    p.fillRect(QRect(bar.left(), g.plot.bottom() - 1, bar.width(), 3), tierColor(t));
    if (t != Tier::Device) {
        const int y = yFor(g, static_cast<double>(state_[r].peakByTier[index(t)]));
        p.setPen(QPen(neutralColor(0x20), 2));
        p.drawLine(bar.left() - 2, y, bar.right() + 2, y);
    }
    const TierTheory* theory = tierTheory(rank);
    if (theory && g.bracket > 0) {
        if (const std::uint64_t states = theory->modelStates.tier(t); states > 0) {
            const int y = yFor(g, static_cast<double>(states));
            const int x = bar.right() + 3;
            p.setPen(QPen(neutralColor(0x40), 1.5));
            p.drawLine(x, g.plot.bottom(), x, y);
            p.drawLine(x - 3, y, x + 1, y);
        }
        if (const std::uint64_t peak = theory->peak[index(t)]; peak > 0 && t != Tier::Device) {
            const int y = yFor(g, static_cast<double>(peak));
            p.setPen(QPen(neutralColor(0x55), 1.5, Qt::DotLine));
            p.drawLine(bar.left() - 2, y, bar.right() + 2, y);
        }
    }
    // Too narrow for its name, a slot goes without (the legend's tint says which it is).
    if (g.tierNames == 0 && t != Tier::Device && !g.compact &&
        QFontMetrics(font()).horizontalAdvance(tierLabel(t)) <= bar.width()) {
        const QFontMetrics fm(font());
        p.setPen(tierColor(Tier::Device));
        p.drawText(QRect(bar.left(), bar.top() + 2, bar.width(), fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(tierLabel(t), Qt::ElideRight, bar.width()));
    }
    if (g.tierNames > 0) {
        const QFontMetrics fm(font());
        p.setPen(tierColor(Tier::Device));
        const QRect name(bar.left() - 4, g.plot.bottom() + 3 + g.stripHeight - g.tierNames,
                         bar.width() + 8 + g.bracket, g.tierNames);
        p.drawText(name, Qt::AlignHCenter | Qt::AlignVCenter | Qt::TextDontClip,
                   fm.elidedText(tierLabel(t), Qt::ElideRight, name.width()));
    }
}

// One cell per unit: dark = only this rank's shard is here, light = the full unit is gathered
// (param_full live), outlined = computing now.
void RankLedgerView::paintUnits(QPainter& p, const QRect& strip, int rank,
                                const replay::RankState& s) const {
    const int units =
        info_ ? static_cast<int>(std::min(info_->units.size(), replay::kTrackedUnits)) : 0;
    if (units == 0 || strip.width() < units) return;
    const double w = static_cast<double>(strip.width()) / units;
    const auto [held0, held1] =
        stageCount() > 1 ? info_->stageUnitRange(info_->stageOf(rank)) : std::pair{0, units};
    for (int u = 0; u < units; ++u) {
        const QRectF cell(strip.left() + u * w, strip.top(), w - (w > 4 ? 1 : 0), strip.height());
        p.fillRect(cell, u < held0 || u >= held1 ? otherStageColor()
                         : s.isGathered(u)       ? categoryColor(Category::ParamFull)
                                                 : categoryColor(Category::ParamShard));
        if (s.computeUnit == u) {
            p.setPen(QPen(neutralColor(0x20), 2));
            p.drawRect(cell.adjusted(1, 1, -1, -1));
        }
    }
}

void RankLedgerView::paintGuides(QPainter& p, const Geometry& g) const {
    const QFontMetrics fm(font());
    // Lines across every column; their labels sit right of the columns, clear of the peaks.
    // Split by tier, the lines are the device's: they cross the device bars only, so host and
    // NVMe bytes beside them never read as over the budget.
    struct Label {
        QRect rect;
        QColor colour;
        QString text;
    };
    std::vector<Label> labels;
    // Over columns [from, to) (a pipeline stage's; all by default), labelled when `name` is set.
    auto guide = [&](std::uint64_t bytes, const QColor& colour, Qt::PenStyle style,
                     const QString& name, int from = 0, int to = -1) {
        if (to < 0) to = g.ranks;
        const int y = yFor(g, static_cast<double>(bytes));
        p.setPen(QPen(colour, 1.5, style));
        if (g.tiers == 1) {
            p.drawLine(from == 0 ? g.plot.left() : g.column(from).left() + 2, y,
                       to == g.ranks ? g.plot.right() + 6 : g.column(to - 1).right() - 2, y);
        } else {
            for (int r = from; r < to; ++r) {
                const QRect bar = g.tierBar(r, 0);
                p.drawLine(bar.left() - 5, y, bar.right() + 5, y);
            }
            if (to == g.ranks) p.drawLine(g.plot.right() - 4, y, g.plot.right() + 6, y);
        }
        if (name.isEmpty()) return;
        const QString text = name + QLatin1Char('\n') + formatDecimal(static_cast<double>(bytes));
        const int w = kGuideWidth - 10;
        const int h =
            fm.boundingRect(QRect(0, 0, w, 1000), Qt::AlignLeft | Qt::TextWordWrap, text).height();
        labels.push_back({QRect(g.plot.right() + 8, y - h / 2, w, h), colour, text});
    };
    if (const int stages = stageCount(); stages > 1) {
        // Each stage's own prediction over its columns; the highest is named at the right (the
        // stage band and a rank's tooltip give each stage's).
        int highest = 0;
        for (int st = 1; st < stages; ++st)
            if (stagePredictedPeak(st) > stagePredictedPeak(highest)) highest = st;
        const int per = g.ranks / stages;
        for (int st = 0; st < stages; ++st) {
            const std::uint64_t peak = stagePredictedPeak(st);
            if (peak == 0) continue;
            QString name;
            if (st == highest)
                name = g.tiers == 1 ? tr("theory: stage %1 peak").arg(st)
                                    : tr("theory: stage %1 device peak").arg(st);
            guide(peak, neutralColor(0x55), Qt::DotLine, name, st * per, st * per + per);
        }
    } else if (info_ && info_->predictedPeakBytes > 0) {
        guide(info_->predictedPeakBytes, neutralColor(0x55), Qt::DotLine,
              g.tiers == 1 ? tr("theory: peak") : tr("theory: device peak"));
    }
    if (info_ && info_->capacityBytes)
        guide(*info_->capacityBytes, alertColor(), Qt::DashLine,
              g.tiers == 1 ? tr("capacity") : tr("device capacity"));
    // Close lines (a budget just above the predicted peak) must not print their labels over
    // each other: the lower label moves down below the upper one.
    std::sort(labels.begin(), labels.end(),
              [](const Label& a, const Label& b) { return a.rect.top() < b.rect.top(); });
    for (std::size_t i = 1; i < labels.size(); ++i)
        if (labels[i].rect.top() <= labels[i - 1].rect.bottom() + 2)
            labels[i].rect.moveTop(labels[i - 1].rect.bottom() + 3);
    for (const Label& l : labels) {
        p.setPen(l.colour);
        p.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, l.text);
    }
    if (!g.failureBand.isEmpty()) {
        p.setPen(alertColor());
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(
            g.failureBand, Qt::AlignTop | Qt::AlignHCenter,
            QFontMetrics(bold).elidedText(failureText(), Qt::ElideRight, g.failureBand.width()));
        p.setFont(font());
    }
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

int RankLedgerView::rankAt(QPoint pos) const {
    const Geometry g = geometry();
    if (state_.empty() || pos.x() < g.plot.left()) return -1;
    const int r = (pos.x() - g.plot.left()) / g.columnWidth;
    return r < g.ranks ? r : -1;
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
        const auto [u0, u1] = info_->stageUnitRange(st);
        html += QStringLiteral("<br>") +
                tr("Pipeline stage %1 of %2: units %3 … %4, theory peak %5")
                    .arg(st)
                    .arg(stageCount())
                    .arg(QString::fromStdString(info_->unitName(u0)),
                         QString::fromStdString(info_->unitName(std::max(u0, u1 - 1))),
                         formatDecimal(static_cast<double>(stagePredictedPeak(st))))
                    .toHtmlEscaped();
    }
    const QString activity = activityText(s);
    if (!activity.isEmpty())
        html += QStringLiteral("<br>") + tr("Now: %1").arg(activity.toHtmlEscaped());
    return html;
}

void RankLedgerView::mousePressEvent(QMouseEvent* event) {
    if (const int r = rankAt(event->pos()); r >= 0) Q_EMIT rankClicked(r);
    QWidget::mousePressEvent(event);
}

bool RankLedgerView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int r = rankAt(help->pos());
        if (r >= 0)
            QToolTip::showText(help->globalPos(), tooltipFor(r), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace shardscope::widgets
