#pragma once
// The Flows page: the collective at the playhead (FlowView) over the window's RunDocument, with
// the explain panel and the playback bar.
#include "playback/replay_page.h"

namespace shardscope::widgets {

class FlowView;

class FlowPage : public ReplayPageBase {
    Q_OBJECT
public:
    explicit FlowPage(RunDocument& document, QWidget* parent = nullptr);
    FlowView* view() const { return view_; }

protected:
    void resetView() override;
    void growView() override;
    void moveView(std::uint64_t index) override;

private:
    FlowView* view_;
};

} // namespace shardscope::widgets
