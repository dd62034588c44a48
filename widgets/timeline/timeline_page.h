#pragma once
// The Timeline and Flows pages: a view over the window's RunDocument (its ReplayModel and
// ReplayPlayer, shared so every page shows the same playhead), the explain panel and the
// playback bar. A new run or recording resets them; new steps extend them.
#include <QWidget>

class QSplitter;

namespace shardscope::widgets {

class ExplainPanel;
class FlowView;
class PlaybackBar;
class RunDocument;
class TimelineView;

// Shared wiring of a replay page: the main view on top, explain + playback below.
class ReplayPageBase : public QWidget {
    Q_OBJECT
public:
    ReplayPageBase(RunDocument& document, QWidget* view, QWidget* parent);
    RunDocument& document() const { return document_; }
    ExplainPanel* explain() const { return explain_; }
    PlaybackBar* playback() const { return playback_; }
    QWidget* exportTarget() const { return view_; } // File → Export current view

protected:
    virtual void resetView() = 0;  // a new run or recording: re-read the model
    virtual void growView() = 0;   // steps appended
    virtual void moveView(std::uint64_t index) = 0;
    void connectAll();

private:
    RunDocument& document_;
    QWidget* view_;
    ExplainPanel* explain_;
    PlaybackBar* playback_;
};

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
