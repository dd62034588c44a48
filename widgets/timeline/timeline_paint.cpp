#include "timeline/timeline_paint.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/run_labels.h"
#include "core/step_number.h"
#include "plan/pipeline.h"
#include "theory/pipeline.h"
#include "timeline/timeline_labels.h"

#include <QPainter>
#include <QPalette>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {
namespace {

// Share of a lane's height per row, top to bottom: compute, communication, buffers, transfers
// (when the run has any: taken from compute and the memory curve), memory.
constexpr double kComputeShare = 0.30, kCommShare = 0.22, kBufferShare = 0.14, kLanePad = 0.06;
constexpr double kTransferShare = 0.16, kTransferFromCompute = 0.06;

// What the lanes show of a run's micro-batches and pipeline: F/B spans labelled by micro-batch
// when a step has several, and a pipeline's bubble beside the schedule's theory.
struct PipelineFacts {
    int stages = 1;
    bool microLabels = false;
    QString schedule;             // "1F1B", as the literature names it
    std::optional<double> theory; // the schedule's bubble share, (P − 1)/(M + P − 1) for 1F1B
};

PipelineFacts pipelineFacts(const replay::ReplayModel* model) {
    PipelineFacts f;
    const auto info = model ? model->info() : nullptr;
    if (!info) return f;
    f.stages = std::max(info->pipeParallel, 1);
    f.microLabels = info->gradAccum > 1; // one micro-batch a step: nothing to tell apart
    if (f.stages == 1) return f;
    if (const auto s = plan::pipeScheduleFromFlag(info->pipeSchedule)) {
        const std::string_view name = plan::traits(*s).name;
        f.schedule = QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
        try {
            f.theory = theory::pipeBubble(*s, {f.stages, info->gradAccum, info->virtualStages}, {});
        } catch (const std::exception&) {
            f.theory.reset(); // a shape the schedule cannot run: no theory to print
        }
    }
    return f;
}

// "stage 1 · bubble 58 %": the lane's stage and its measured bubble (its idle share of its work).
QString stageLabel(int stage, const replay::TimelineLane& lane) {
    const auto idle = lane.idleFraction();
    return idle ? TimelinePainter::tr("stage %1 · bubble %2 %")
                      .arg(stage)
                      .arg(*idle * 100, 0, 'f', 0)
                : TimelinePainter::tr("stage %1").arg(stage);
}

// Hatched: time a pipeline stage waited inside its work (TimelineLane::idle).
QBrush bubbleBrush() {
    return QBrush(neutralColor(0x8c), Qt::BDiagPattern);
}

} // namespace

TimelineGeometry TimelineGeometry::compute(const QRect& rect, int lanes, bool transfers,
                                           const TimelineFrame& f) {
    TimelineGeometry g;
    g.lanes = std::max(lanes, 0);
    g.transfers = transfers;
    g.axis = QRect(rect.left() + f.gutter, rect.top(), std::max(rect.width() - f.gutter - 8, 1),
                   f.axisH);
    g.legend = QRect(rect.left() + 8, rect.bottom() - f.legendH + 1, std::max(rect.width() - 16, 1),
                     f.legendH);
    g.plot = QRect(g.axis.left(), g.axis.bottom() + 1, g.axis.width(),
                   std::max(rect.height() - f.axisH - f.legendH - 2, 1));
    g.laneH = g.lanes > 0 ? static_cast<double>(g.plot.height()) / g.lanes : 0;
    return g;
}

int TimelineGeometry::laneAt(int y) const {
    if (lanes == 0 || y < plot.top() || y > plot.bottom()) return -1;
    return std::clamp(static_cast<int>((y - plot.top()) / laneH), 0, lanes - 1);
}

QRectF TimelineGeometry::rowRect(int lane, replay::TimelineRow row) const {
    const double top = plot.top() + lane * laneH + laneH * kLanePad / 2;
    const double h = laneH * (1 - kLanePad);
    const double computeShare = transfers ? kComputeShare - kTransferFromCompute : kComputeShare;
    double y = top, rh = h * computeShare;
    if (row == replay::TimelineRow::Comm) {
        y += h * computeShare;
        rh = h * kCommShare;
    } else if (row == replay::TimelineRow::Buffers) {
        y += h * (computeShare + kCommShare);
        rh = h * kBufferShare;
    } else if (row == replay::TimelineRow::Transfers) {
        y += h * (computeShare + kCommShare + kBufferShare);
        rh = transfers ? h * kTransferShare : 0;
    }
    return {static_cast<double>(plot.left()), y, static_cast<double>(plot.width()), rh};
}

QRectF TimelineGeometry::memoryRect(int lane) const {
    const QRectF above =
        rowRect(lane, transfers ? replay::TimelineRow::Transfers : replay::TimelineRow::Buffers);
    const double bottom = plot.top() + (lane + 1) * laneH - laneH * kLanePad / 2;
    return {above.left(), above.bottom() + 1, above.width(),
            std::max(bottom - above.bottom() - 1, 1.0)};
}

std::optional<replay::TimelineRow> TimelineGeometry::rowAt(int lane, int y) const {
    for (replay::TimelineRow r : {replay::TimelineRow::Compute, replay::TimelineRow::Comm,
                                  replay::TimelineRow::Buffers, replay::TimelineRow::Transfers}) {
        const QRectF rr = rowRect(lane, r);
        if (y >= rr.top() && y < rr.bottom()) return r;
    }
    return std::nullopt;
}

QString TimelinePainter::formatDuration(double ns) {
    if (ns < 1e3) return tr("%1 ns").arg(ns, 0, 'f', 0);
    if (ns < 1e6) return tr("%1 µs").arg(ns / 1e3, 0, 'f', ns < 1e4 ? 2 : 1);
    if (ns < 1e9) return tr("%1 ms").arg(ns / 1e6, 0, 'f', ns < 1e7 ? 2 : 1);
    return tr("%1 s").arg(ns / 1e9, 0, 'f', 2);
}

QString TimelinePainter::formatRate(double bps) {
    if (bps >= 1e9) return tr("%1 GB/s").arg(bps / 1e9, 0, 'f', 2);
    if (bps >= 1e6) return tr("%1 MB/s").arg(bps / 1e6, 0, 'f', 1);
    return tr("%1 kB/s").arg(bps / 1e3, 0, 'f', 1);
}

double TimelinePainter::tickStep(double spanNs, int target) {
    const double raw = std::max(spanNs / std::max(target, 1), 1.0);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

namespace {

void paintAxis(QPainter& p, const TimelineGeometry& g, const replay::TimeWindow& w,
               const QPalette& pal) {
    p.setPen(pal.color(QPalette::WindowText));
    const double step = TimelinePainter::tickStep(w.t1 - w.t0, std::max(g.axis.width() / 110, 2));
    const QFontMetrics fm(p.font());
    for (double t = std::ceil(w.t0 / step) * step; t <= w.t1; t += step) {
        const double x = g.plot.left() + w.xOf(t);
        p.setPen(QColor(150, 150, 150));
        p.drawLine(QPointF(x, g.axis.bottom() - 4), QPointF(x, g.axis.bottom()));
        p.setPen(QColor(235, 235, 235));
        p.drawLine(QPointF(x, g.plot.top()), QPointF(x, g.plot.bottom()));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QPointF(x + 3, g.axis.top() + fm.ascent() + 2),
                   TimelinePainter::formatDuration(t));
    }
}

// Draws the step boundaries; returns their labels, painted over the lanes afterwards.
std::vector<std::pair<QPointF, QString>> paintSteps(QPainter& p, const TimelineGeometry& g,
                                                    const TimelineScene& s) {
    if (!s.model) return {};
    const replay::TimeWindow& w = s.window;
    const QFontMetrics fm(p.font());
    // Level of detail: boundaries closer than a few pixels are skipped, and a label only goes
    // where the previous one has ended (800 steps across 1600 px must not cost 800 texts).
    double lastLine = -1e9, lastLabelEnd = -1e9;
    bool clampedLabel = false;
    std::vector<QLineF> lines;
    std::vector<std::pair<QPointF, QString>> labels;
    for (std::size_t i = 0; i < s.model->stepCount(); ++i) {
        const replay::StepData& st = s.model->step(i);
        const double t = static_cast<double>(st.replayStartNs);
        if (t > w.t1) break;
        if (t + static_cast<double>(st.durationNs) < w.t0) continue;
        const double x = g.plot.left() + w.xOf(t);
        if (x >= g.plot.left() && x - lastLine >= 4) {
            lines.emplace_back(x, g.plot.top(), x, g.plot.bottom());
            lastLine = x;
        }
        const double labelX = std::max<double>(x, g.plot.left()) + 3;
        QString label = TimelinePainter::tr("step %1").arg(
            displayStep(st.step, s.model && s.model->info() ? s.model->info()->stepsBefore : 0));
        // A step that began left of the window is labelled at the edge, but gives way to the
        // next step's label when that one's boundary is in sight.
        if (labelX < lastLabelEnd && !(x >= g.plot.left() && clampedLabel)) continue;
        if (labelX < lastLabelEnd) labels.pop_back();
        clampedLabel = x < g.plot.left();
        lastLabelEnd = labelX + fm.horizontalAdvance(label) + 8;
        labels.emplace_back(QPointF(labelX, g.plot.top() + fm.ascent()), std::move(label));
    }
    // One batch of solid cosmetic lines: a dashed pen per boundary cost ~12 ms with 800 steps.
    QPen pen(QColor(170, 170, 170), 1);
    pen.setCosmetic(true);
    p.setPen(pen);
    if (!lines.empty()) p.drawLines(lines.data(), static_cast<int>(lines.size()));
    return labels;
}

void paintStepLabels(QPainter& p, const std::vector<std::pair<QPointF, QString>>& labels,
                     const QPalette& pal) {
    const QFontMetrics fm(p.font());
    for (const auto& [at, text] : labels) {
        QColor bg = pal.color(QPalette::Base);
        bg.setAlpha(210);
        p.fillRect(
            QRectF(at.x() - 2, at.y() - fm.ascent(), fm.horizontalAdvance(text) + 4, fm.height()),
            bg);
        p.setPen(QColor(70, 70, 70));
        p.drawText(at, text);
    }
}

void paintMemory(QPainter& p, const TimelineGeometry& g, const TimelineScene& s, int rank,
                 std::vector<replay::MemColumn>& cols) {
    const QRectF area = g.memoryRect(rank);
    const int width = g.plot.width();
    replay::memoryColumns(s.index->lane(rank), s.window, width, cols);
    const double scale = static_cast<double>(std::max<std::uint64_t>(s.index->peakBytes(), 1));
    p.fillRect(area, QColor(246, 246, 246));
    const auto yOf = [&](std::uint64_t v) {
        return area.bottom() - static_cast<double>(v) / scale * (area.height() - 2);
    };
    // Columns carry min and max. The area under the max is a run of rectangles (adjacent
    // columns of equal height merged), the outline a cosmetic polyline, and a column whose
    // value swings within its pixel (many allocations) gets a stroke from min to max. All
    // cosmetic and axis-aligned: a QPainterPath outline here cost ~25 ms at 10^6 events.
    std::vector<QRectF> areas;
    QPolygonF outline;
    std::vector<QLineF> swings;
    for (int c = 0; c < width; ++c) {
        const replay::MemColumn& col = cols[static_cast<std::size_t>(c)];
        if (!col.valid) {
            if (!outline.isEmpty()) break;
            continue;
        }
        const double x = area.left() + c, y = yOf(col.hi);
        if (!areas.empty() && areas.back().top() == y && areas.back().right() == x) {
            areas.back().setRight(x + 1);
        } else {
            areas.emplace_back(x, y, 1, area.bottom() - y);
        }
        if (outline.isEmpty() || outline.back().y() != y) {
            if (!outline.isEmpty()) outline << QPointF(x, outline.back().y());
            outline << QPointF(x, y);
        }
        if (col.hi != col.lo) swings.emplace_back(x + 0.5, yOf(col.lo), x + 0.5, y);
    }
    if (areas.empty()) return;
    outline << QPointF(areas.back().right(), outline.back().y());
    const QColor line = neutralColor(0x50); // neutral: memory totals are no one category
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(line.red(), line.green(), line.blue(), 70));
    p.drawRects(areas.data(), static_cast<int>(areas.size()));
    QPen pen(line, 1);
    pen.setCosmetic(true);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(outline);
    if (!swings.empty()) p.drawLines(swings.data(), static_cast<int>(swings.size()));
}

// A pipeline stage's bubble on the compute row: hatched where it waited inside its work.
void paintIdle(QPainter& p, const TimelineGeometry& g, const TimelineScene& s, int rank) {
    const auto& idle = s.index->lane(rank).idle;
    const QRectF row = g.rowRect(rank, replay::TimelineRow::Compute);
    // In time order, disjoint: the first that ends inside the window, until one starts past it.
    const auto from = std::lower_bound(
        idle.begin(), idle.end(), s.window.t0,
        [](const replay::IdleGap& gap, double t) { return static_cast<double>(gap.endNs) < t; });
    for (auto it = from; it != idle.end(); ++it) {
        const double x0 = s.window.xOf(static_cast<double>(it->beginNs));
        if (x0 > g.plot.width()) break;
        const double x1 = s.window.xOf(static_cast<double>(it->endNs));
        if (x1 - x0 < 1) continue;
        p.fillRect(QRectF(g.plot.left() + x0, row.top() + 1, x1 - x0, row.height() - 2),
                   bubbleBrush());
    }
}

void paintLane(QPainter& p, const TimelineGeometry& g, const TimelineScene& s, int rank,
               bool microLabels, std::vector<replay::DrawBox>& boxes, TimelinePaintStats& stats) {
    boxes.clear();
    replay::layoutLane(s.index->lane(rank), s.window, boxes);
    const QFontMetrics fm(p.font());
    for (const replay::DrawBox& b : boxes) {
        const QRectF row = g.rowRect(rank, b.row);
        const bool stacked =
            b.row == replay::TimelineRow::Buffers || b.row == replay::TimelineRow::Transfers;
        const int depths =
            b.row == replay::TimelineRow::Compute ? 2 : (stacked ? replay::kMaxDepth + 1 : 1);
        // Compute: a nested span (recompute inside backward) is drawn inset in the lower half.
        double y = row.top(), h = row.height();
        if (b.row == replay::TimelineRow::Compute && b.depth > 0) {
            y += h * 0.45;
            h *= 0.55;
        } else if (b.row == replay::TimelineRow::Transfers) {
            // An NVMe read in flight beside a write: two sub-rows, deeper overlaps share the last.
            h = row.height() / 2;
            y += std::min<int>(b.depth, 1) * h;
        } else if (stacked) {
            h = row.height() / depths;
            y += std::min<int>(b.depth, replay::kMaxDepth) * h;
        }
        const QRectF r(g.plot.left() + b.x0, y + 1, std::max(b.x1 - b.x0, 1.0),
                       std::max(h - 2, 1.0));
        QColor c = spanKindColor(b.kind);
        if (b.merged > 1) c.setAlpha(150); // a summary of several spans: lighter, no label
        p.fillRect(r, c);
        ++stats.boxes;
        stats.spansCovered += b.merged;
        if (b.merged > 1) {
            ++stats.summaries;
            continue;
        }
        const replay::TimelineSpan& span =
            s.index->lane(rank).rows[static_cast<std::size_t>(b.row)][b.span];
        if (b.row != replay::TimelineRow::Buffers && r.width() > 36 &&
            r.height() >= fm.height() - 2) {
            const QString text = fm.elidedText(timelineBoxLabel(s, span, microLabels, rank),
                                               Qt::ElideRight, static_cast<int>(r.width()) - 4);
            p.setPen(textOn(c)); // dark on the pale bars (all-reduce, TP), white on the rest
            p.drawText(r.adjusted(3, 0, -1, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
        }
    }
}

// A rank waiting on a transfer it needs: a down-pointing wedge in the alert colour on the
// transfers row, at the moment it began to wait (the transfer's own bar shows how long).
void paintWaits(QPainter& p, const TimelineGeometry& g, const TimelineScene& s, int rank,
                TimelinePaintStats& stats) {
    if (!g.transfers) return;
    const QRectF row = g.rowRect(rank, replay::TimelineRow::Transfers);
    const double h = std::max(6.0, row.height() * 0.8);
    p.setPen(Qt::NoPen);
    p.setBrush(alertColor());
    // In time order: only the window's are looked at (a long NVMe run has many).
    const auto& waits = s.index->lane(rank).waits;
    const double slack = h * s.window.nsPerPx();
    const auto from = std::lower_bound(
        waits.begin(), waits.end(), s.window.t0 - slack,
        [](const replay::TransferWaitMark& w, double t) { return static_cast<double>(w.ns) < t; });
    for (auto it = from; it != waits.end(); ++it) {
        const replay::TransferWaitMark& w = *it;
        const double x = g.plot.left() + s.window.xOf(static_cast<double>(w.ns));
        if (x > g.plot.right() + h) break;
        const QPointF wedge[] = {
            {x - h / 2, row.top()}, {x + h / 2, row.top()}, {x, row.top() + h}};
        p.drawPolygon(wedge, 3);
        ++stats.waitMarks;
    }
}

bool hasWaits(const replay::TimelineIndex* index) {
    if (!index) return false;
    for (int r = 0; r < index->laneCount(); ++r)
        if (!index->lane(r).waits.empty()) return true;
    return false;
}

using LegendEntries = std::vector<std::pair<QBrush, QString>>;

// The kinds this run has (an empty index: the common ones, for the empty view), and a pipeline's
// bubble with its schedule's theory.
LegendEntries legendEntries(const replay::TimelineIndex* index, const PipelineFacts& pipe) {
    const bool empty = !index || index->spanCount() == 0;
    LegendEntries entries;
    for (std::size_t k = 0; k < replay::kSpanKindCount; ++k) {
        const auto kind = static_cast<replay::SpanKind>(k);
        if (empty ? replay::rowOf(kind) == replay::TimelineRow::Transfers ||
                        kind == replay::SpanKind::Broadcast || kind == replay::SpanKind::Save ||
                        kind == replay::SpanKind::TpAllReduce
                  : !index->hasKind(kind))
            continue;
        entries.emplace_back(spanKindColor(kind), spanKindLabel(kind));
    }
    if (hasWaits(index))
        entries.emplace_back(alertColor(), TimelinePainter::tr("▼ waits on a transfer"));
    if (pipe.stages > 1 && !empty)
        entries.emplace_back(bubbleBrush(), pipe.theory
                                                ? TimelinePainter::tr("bubble (%1 theory: %2 %)")
                                                      .arg(pipe.schedule)
                                                      .arg(*pipe.theory * 100, 0, 'f', 0)
                                                : TimelinePainter::tr("bubble"));
    QColor curve = neutralColor(0x50);
    curve.setAlpha(120);
    entries.emplace_back(curve, TimelinePainter::tr("live bytes (memory curve)"));
    return entries;
}

// Where they do not fit on one line: tighter gaps and the memory curve's short name, then as
// many lines as they need (large text). Calls `put` for each entry at its place; returns lines.
template <typename Put>
int layLegend(LegendEntries& entries, const QFontMetrics& fm, int left, int width, Put put) {
    int gap = 14;
    int all = 0;
    for (const auto& e : entries)
        all += 16 + fm.horizontalAdvance(e.second) + gap;
    if (all > width) {
        gap = 8;
        entries.back().second = TimelinePainter::tr("live bytes");
    }
    int x = left, line = 0;
    for (const auto& [brush, text] : entries) {
        const int w = 16 + fm.horizontalAdvance(text);
        if (x > left && x + w > left + width) {
            x = left;
            ++line;
        }
        put(x, line, brush, text);
        x += w + gap;
    }
    return line + 1;
}

int legendLineH(const QFontMetrics& fm) {
    return fm.height() + 2;
}

void paintLegend(QPainter& p, const TimelineGeometry& g, const QPalette& pal,
                 const replay::TimelineIndex* index, const PipelineFacts& pipe) {
    const QFontMetrics fm(p.font());
    LegendEntries entries = legendEntries(index, pipe);
    p.setPen(pal.color(QPalette::WindowText));
    const int box = std::max(10, fm.ascent() * 2 / 3);
    layLegend(entries, fm, g.legend.left(), g.legend.width(),
              [&](int x, int line, const QBrush& brush, const QString& text) {
                  const int y = g.legend.top() + 3 + line * legendLineH(fm);
                  p.fillRect(QRect(x, y + (fm.ascent() - box) / 2 + 1, 12, box), brush);
                  p.drawText(QPoint(x + 16, y + fm.ascent()), text);
              });
}

} // namespace

TimelineFrame TimelinePainter::frame(const QFont& font, const replay::TimelineIndex* index,
                                     int width, const replay::ReplayModel* model) {
    const QFontMetrics fm(font);
    TimelineFrame f;
    f.axisH = std::max(f.axisH, fm.height() + 6);
    const PipelineFacts pipe = pipelineFacts(model);
    LegendEntries entries = legendEntries(index, pipe);
    const int lines = layLegend(entries, fm, 0, std::max(width - 16, 1),
                                [](int, int, const QBrush&, const QString&) {});
    f.legendH = std::max(f.legendH, lines * legendLineH(fm) + 4);
    // The lanes' labels: "rank N" in bold and its peak, never more than a quarter of the width.
    QFont bold = font;
    bold.setBold(true);
    int labels =
        QFontMetrics(bold).horizontalAdvance(tr("rank %1").arg(index ? index->laneCount() : 0));
    for (int r = 0; index && r < index->laneCount(); ++r)
        labels = std::max(labels, fm.horizontalAdvance(tr("peak %1").arg(formatDecimal(
                                      static_cast<double>(index->lane(r).peakBytes)))));
    const int perStage = index ? std::max(index->laneCount() / pipe.stages, 1) : 1;
    for (int r = 0; index && pipe.stages > 1 && r < index->laneCount(); ++r)
        labels = std::max(labels, fm.horizontalAdvance(stageLabel(r / perStage, index->lane(r))));
    f.gutter = std::clamp(labels + 16, TimelineGeometry::kGutter,
                          std::max(TimelineGeometry::kGutter, width / 4));
    return f;
}

TimelinePaintStats TimelinePainter::paint(QPainter& p, const QRect& rect, const TimelineScene& in) {
    TimelinePaintStats stats;
    const QPalette& pal = in.palette;
    p.save();
    p.fillRect(rect, pal.color(QPalette::Base));
    const int lanes = in.index ? in.index->laneCount() : 0;
    const TimelineFrame frame = TimelinePainter::frame(p.font(), in.index, rect.width(), in.model);
    const PipelineFacts pipe = pipelineFacts(in.model);
    const TimelineGeometry g =
        TimelineGeometry::compute(rect, lanes, in.index && in.index->hasTransfers(), frame);
    if (lanes == 0 || in.index->spanCount() == 0) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect, Qt::AlignCenter, tr("No events yet: run a job or open a recording."));
        p.restore();
        return stats;
    }
    TimelineScene s = in;
    s.window.widthPx = g.plot.width();
    paintAxis(p, g, s.window, pal);
    p.setClipRect(g.plot.adjusted(0, 0, 1, 1));
    const auto stepLabels = paintSteps(p, g, s);
    std::vector<replay::DrawBox> boxes;
    std::vector<replay::MemColumn> cols;
    const QFontMetrics fm(p.font());
    for (int r = 0; r < lanes; ++r) {
        if (r % 2 == 1)
            p.fillRect(QRectF(g.plot.left(), g.plot.top() + r * g.laneH, g.plot.width(), g.laneH),
                       QColor(0, 0, 0, 8));
        paintMemory(p, g, s, r, cols);
        if (pipe.stages > 1) paintIdle(p, g, s, r);
        paintLane(p, g, s, r, pipe.microLabels, boxes, stats);
        paintWaits(p, g, s, r, stats);
    }
    paintStepLabels(p, stepLabels, pal);
    for (const auto& [at, text] : stepLabels)
        stats.stepLabels.push_back(text);
    if (s.highlight) {
        const auto& [rank, b] = *s.highlight;
        const QRectF row = g.rowRect(rank, b.row);
        p.setPen(QPen(pal.color(QPalette::Highlight), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(
            QRectF(g.plot.left() + b.x0, row.top(), std::max(b.x1 - b.x0, 2.0), row.height()));
    }
    if (s.playheadNs) {
        const double x = g.plot.left() + s.window.xOf(static_cast<double>(*s.playheadNs));
        p.setPen(QPen(QColor(200, 30, 30), 2));
        p.drawLine(QPointF(x, g.plot.top()), QPointF(x, g.plot.bottom()));
    }
    p.setClipping(false);
    // Lane labels: rank and its peak, beside the lanes; with a pipeline, the rank's stage under
    // its name (stage = rank / (T·D), plan/mesh.h).
    const int stages = pipe.stages;
    const int perStage = std::max(lanes / stages, 1);
    for (int r = 0; r < lanes; ++r) {
        const QRectF compute = g.rowRect(r, replay::TimelineRow::Compute);
        const QRectF mem = g.memoryRect(r);
        p.setPen(pal.color(QPalette::WindowText));
        QFont bold = p.font();
        bold.setBold(true);
        p.save();
        p.setFont(bold);
        // With the stage's line under it, the name keeps to the compute row (centred lower, it
        // ran into that line on a short lane).
        const QRectF comm = g.rowRect(r, replay::TimelineRow::Comm);
        const bool stageLine = stages > 1 && comm.height() >= fm.height() * 0.8;
        p.drawText(QRectF(rect.left() + 6, compute.top(), frame.gutter - 10,
                          stageLine ? std::max(compute.height(), comm.top() - compute.top())
                                    : compute.height() + g.laneH * 0.2),
                   Qt::AlignLeft | (stageLine ? Qt::AlignBottom : Qt::AlignVCenter),
                   tr("rank %1").arg(r));
        p.restore();
        if (stageLine) {
            p.setPen(QColor(90, 90, 90));
            p.drawText(QRectF(rect.left() + 6, comm.top(), frame.gutter - 10, comm.height()),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(stageLabel(r / perStage, s.index->lane(r)), Qt::ElideRight,
                                     static_cast<int>(frame.gutter) - 10));
        }
        if (mem.height() >= fm.height()) {
            p.setPen(QColor(90, 90, 90));
            p.drawText(
                QRectF(rect.left() + 6, mem.top(), frame.gutter - 10, mem.height()),
                Qt::AlignLeft | Qt::AlignVCenter,
                tr("peak %1").arg(formatDecimal(static_cast<double>(s.index->lane(r).peakBytes))));
        }
    }
    paintLegend(p, g, pal, in.index, pipe);
    p.restore();
    return stats;
}

} // namespace shardscope::widgets
