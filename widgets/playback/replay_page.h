#pragma once
// What the Timeline and Flows pages share: a view over the window's RunDocument (its
// ReplayModel and ReplayPlayer, shared so every page shows the same playhead) on top, the
// explain panel and the playback bar below (with Stop while a live run animates here). A new
// run or recording resets the view; new steps extend it; the playhead moves it.
#include <QWidget>
#include <cstdint>

class QSplitter;
class QToolButton;

namespace shardscope::widgets {

class ExplainPanel;
class PlaybackBar;
class RunDocument;

class ReplayPageBase : public QWidget {
    Q_OBJECT
public:
    ReplayPageBase(RunDocument& document, QWidget* view, QWidget* parent);
    RunDocument& document() const { return document_; }
    ExplainPanel* explain() const { return explain_; }
    PlaybackBar* playback() const { return playback_; }
    QWidget* exportTarget() const { return view_; } // File → Export current view
    void setPresenting(bool on);                    // presentation mode: the view takes the room

protected:
    virtual void resetView() = 0; // a new run or recording: re-read the model
    virtual void growView() = 0;  // steps appended
    virtual void moveView(std::uint64_t index) = 0;
    void connectAll();
    void changeEvent(QEvent* event) override;

private:
    void retranslateStop();

    RunDocument& document_;
    QWidget* view_;
    ExplainPanel* explain_;
    PlaybackBar* playback_;
    QSplitter* split_ = nullptr;  // the view over the explain panel
    QToolButton* stop_ = nullptr; // a live run's Stop, shown while one runs
};

} // namespace shardscope::widgets
