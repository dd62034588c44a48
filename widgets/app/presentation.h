#pragma once
// Presentation mode (View → Presentation, F5, --present): the window made for a projector at
// 1024×768 in front of a class. Every text at least kTextFloorPixels tall (the body a little
// above), charts' texts too; the page list and the settings columns put away so the charts get
// the width; a lesson's card docked in a bar under the pages, never over the element it
// outlines. Leaving it gives every widget back its own font and every panel its place.
#include <QFont>
#include <QObject>
#include <QPointer>
#include <vector>

class QAction;
class QWidget;

namespace shardscope::widgets {

class Presentation : public QObject {
    Q_OBJECT
public:
    static constexpr int kTextFloorPixels = 18; // the smallest text a back row reads at 1024×768
    static constexpr int kBodyPixels = 20;      // the body text

    // `window`: the widgets it scales; `putAway`: the widgets hidden while presenting.
    explicit Presentation(QWidget& window);
    ~Presentation() override;

    bool presenting() const { return on_; }
    void setPresenting(bool on);
    QAction* action() const { return action_; } // checkable, F5
    void retranslate();

Q_SIGNALS:
    void presentingChanged(bool on);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void raise(QWidget* w);
    void replotCharts();

    QWidget& window_;
    QAction* action_ = nullptr;
    bool on_ = false;
    QFont appFont_; // the application's font before presenting
    std::vector<QPointer<QWidget>> hidden_;
};

} // namespace shardscope::widgets
