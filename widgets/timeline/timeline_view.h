#pragma once
// The timeline of a run: one lane per rank (compute, collectives, gathered-parameter lifetimes,
// live bytes), zoomable and pannable like Perfetto or hotspot: wheel zooms around the cursor,
// drag pans, +/− zoom, ←/→ pan, Home/End jump to the run's start/end, 0 fits the whole run.
// A click asks for a seek (the owner moves the shared playhead and calls setPlayheadEvent).
#include "replay/timeline_index.h"
#include "timeline/timeline_paint.h"

#include <QWidget>
#include <optional>

namespace shardscope::widgets {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    // The model is not owned and must outlive the view (or be replaced with null first).
    void setModel(const replay::ReplayModel* model);
    // Indexes steps appended to the model since the last call (a live run growing).
    void refresh();

    void setPlayheadEvent(std::uint64_t index); // state after events [0, index)
    void setPlayheadNs(std::uint64_t replayNs);
    std::optional<std::uint64_t> playheadNs() const { return playheadNs_; }
    // While set, a playhead leaving the window scrolls the view to keep it in sight.
    void setFollowPlayhead(bool follow) { follow_ = follow; }

    // Visible replay-clock range in ns.
    void setWindow(double t0, double t1);
    double windowStart() const { return t0_; }
    double windowEnd() const { return t1_; }
    replay::TimeWindow window() const; // with the plot's pixel width
    void fitAll();
    void zoomBy(double factor, double anchorPlotX); // factor > 1 zooms in
    void panByPx(double dx);

    struct Hit {
        int rank = 0;
        replay::TimelineRow row = replay::TimelineRow::Compute;
        std::size_t index = 0; // into index().lane(rank).rows[row]
        replay::TimelineSpan span;
    };
    std::optional<Hit> spanAt(QPoint pos) const;
    QString describe(const Hit& hit) const; // the tooltip's text (rich text)

    const replay::TimelineIndex& index() const { return index_; }
    TimelineGeometry geometry() const;
    const TimelinePaintStats& lastPaintStats() const { return stats_; }

    QSize sizeHint() const override { return {900, 420}; }
    QSize minimumSizeHint() const override { return {360, 180}; }

Q_SIGNALS:
    void seekRequested(std::uint64_t eventIndex);
    void windowChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    void clampWindow();
    std::optional<std::pair<int, replay::DrawBox>> boxFor(const Hit& hit) const;

    const replay::ReplayModel* model_ = nullptr;
    replay::TimelineIndex index_;
    double t0_ = 0, t1_ = 1e6;
    bool fitted_ = false; // the window still shows the whole run: keep fitting as it grows
    std::optional<std::uint64_t> playheadNs_;
    bool follow_ = true;
    std::optional<Hit> hover_;
    QPoint pressPos_;
    double pressT0_ = 0;
    bool dragging_ = false;
    bool pressed_ = false;
    TimelinePaintStats stats_;
};

} // namespace shardscope::widgets
