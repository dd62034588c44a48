#pragma once
// The Timeline page: every rank's compute, collectives and gathered buffers over time
// (TimelineView) over the window's RunDocument, with the explain panel and the playback bar.
#include "playback/replay_page.h"

namespace shardscope::widgets {

class TimelineView;

class TimelinePage : public ReplayPageBase {
    Q_OBJECT
public:
    explicit TimelinePage(RunDocument& document, QWidget* parent = nullptr);
    TimelineView* view() const { return view_; }
    // Zooms onto the step holding the playhead (what a screenshot of the timeline shows).
    void zoomToCurrentStep();

protected:
    void resetView() override;
    void growView() override;
    void moveView(std::uint64_t index) override;

private:
    TimelineView* view_;
};

} // namespace shardscope::widgets
