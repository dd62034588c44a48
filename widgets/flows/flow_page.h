#pragma once
// The Flows page: the collective at the playhead (FlowView) over the window's RunDocument, with
// the explain panel and the playback bar. A recording with tensor parallelism can show, side by
// side, the TP all-reduce (partial sums → full activation, over a TP group) and ZeRO's
// all-gather (shards → full parameters, over a DP group) nearest the playhead.
#include "playback/replay_page.h"

class QCheckBox;

namespace shardscope::widgets {

class FlowView;

class FlowPage : public ReplayPageBase {
    Q_OBJECT
public:
    explicit FlowPage(RunDocument& document, QWidget* parent = nullptr);
    FlowView* view() const { return view_; } // the playhead's collective, or ZeRO's beside TP
    FlowView* tensorView() const { return tpView_; } // the TP all-reduce (shown side by side only)
    bool sideBySide() const;
    void setSideBySide(bool on);

protected:
    void resetView() override;
    void growView() override;
    void moveView(std::uint64_t index) override;
    void changeEvent(QEvent* event) override;

private:
    void applyMode();
    void retranslateUi();

    FlowView* view_;
    FlowView* tpView_;
    QCheckBox* sideBySide_;
};

} // namespace shardscope::widgets
