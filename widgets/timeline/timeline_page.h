#pragma once
// The Timeline page: every rank's compute, collectives and gathered buffers over time
// (TimelineView) over the window's RunDocument, with zoom buttons, the explain panel and the
// playback bar. During a live run the view shows the step at the playhead (a whole run of
// millisecond steps side by side is unreadable) until the user zooms or pans themselves.
#include "playback/replay_page.h"

class QToolButton;

namespace shardscope::widgets {

class TimelineView;

class TimelinePage : public ReplayPageBase {
    Q_OBJECT
public:
    explicit TimelinePage(RunDocument& document, QWidget* parent = nullptr);
    TimelineView* view() const { return view_; }
    // Zooms onto the step holding the playhead (what a screenshot of the timeline shows).
    void zoomToCurrentStep();
    // True while the view follows the playhead's step by itself (a live run, untouched).
    bool followsStep() const { return followStep_; }

protected:
    void resetView() override;
    void growView() override;
    void moveView(std::uint64_t index) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    QWidget* buildZoomRow();
    void retranslateUi();
    std::size_t stepAt(std::uint64_t index) const;

    TimelineView* view_;
    QToolButton* zoomIn_ = nullptr;
    QToolButton* zoomOut_ = nullptr;
    QToolButton* fit_ = nullptr;
    QToolButton* step_ = nullptr;
    bool followStep_ = false;
    std::size_t shownStep_ = SIZE_MAX;
};

} // namespace shardscope::widgets
