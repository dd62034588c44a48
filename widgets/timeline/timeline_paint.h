#pragma once
// Paints the timeline into any QPainter (the widget, a QImage in the benchmark, SVG/PDF export):
// one lane per rank with a compute row, a communication row, a thin row of gathered-parameter
// lifetimes, a row of tier transfers (device ↔ host copies, NVMe reads and writes: only when the
// run has any) and the rank's memory curve; step boundaries, a time axis, a legend and the
// playhead. With several micro-batches a step's forward and backward spans are named by them
// (F3, B3); a pipeline's lanes hatch the stage's bubble and name its share beside the schedule's
// theory. The geometry is shared with hit-testing so a click lands on what was drawn.
#include "replay/timeline_index.h"

#include <QColor>
#include <QCoreApplication>
#include <QPalette>
#include <QRect>
#include <QString>
#include <optional>
#include <vector>

class QPainter;

namespace shardscope::widgets {

// What the text takes around the lanes at the painter's font: the axis's height, the legend's
// lines and the labels' gutter grow with large text (presentation mode), never below the desk's.
struct TimelineFrame {
    int axisH = 22;
    int legendH = 20;
    int gutter = 104;
};

struct TimelineGeometry {
    QRect plot;   // the lanes' area, right of the labels
    QRect axis;   // time axis above the lanes
    QRect legend; // below the lanes
    int lanes = 0;
    double laneH = 0;       // pixels per lane
    bool transfers = false; // the lanes have a transfer row

    static TimelineGeometry compute(const QRect& rect, int lanes, bool transfers = false,
                                    const TimelineFrame& frame = {});
    int laneAt(int y) const; // −1 outside
    std::optional<replay::TimelineRow> rowAt(int lane,
                                             int y) const; // nullopt: the memory curve or a gap
    QRectF rowRect(int lane, replay::TimelineRow row) const;
    QRectF memoryRect(int lane) const;
    static constexpr int kGutter = 104; // the least gutter (TimelineFrame's)
};

struct TimelineScene {
    const replay::TimelineIndex* index = nullptr;
    const replay::ReplayModel* model = nullptr; // step boundaries and unit names; may be null
    replay::TimeWindow window;                  // widthPx is overwritten with the plot's width
    std::optional<std::uint64_t> playheadNs;
    std::optional<std::pair<int, replay::DrawBox>> highlight; // rank and box under the mouse
    QPalette palette; // the widget's (text, base, highlight colours)
};

struct TimelinePaintStats {
    std::size_t boxes = 0; // rectangles drawn for spans (real or summary)
    std::size_t summaries = 0;
    std::size_t spansCovered = 0;
    std::vector<QString> stepLabels; // the step boundaries' labels drawn, left to right
    std::size_t waitMarks = 0;       // a rank waiting on a transfer (exposed transfer time)
};

class TimelinePainter {
    Q_DECLARE_TR_FUNCTIONS(TimelinePainter)
public:
    static TimelinePaintStats paint(QPainter& p, const QRect& rect, const TimelineScene& scene);
    // The frame `paint` uses for this font, run and width: hit-testing lays out the same.
    static TimelineFrame frame(const QFont& font, const replay::TimelineIndex* index, int width,
                               const replay::ReplayModel* model = nullptr);

    static QString formatDuration(double ns);
    static QString formatRate(double bytesPerSecond);
    // Tick spacing of 1, 2 or 5 × 10^k ns giving about `target` ticks across `spanNs`.
    static double tickStep(double spanNs, int target);
};

} // namespace shardscope::widgets
