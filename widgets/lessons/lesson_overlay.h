#pragma once
// The lesson's highlight: a frame drawn over the window around one widget, following it as the
// window lays out. It takes no input (clicks reach the widget under it).
#include <QPointer>
#include <QWidget>

namespace shardscope::widgets {

class LessonOverlay : public QWidget {
    Q_OBJECT
public:
    explicit LessonOverlay(QWidget* window);
    void setTarget(QWidget* target); // null: nothing outlined
    QWidget* target() const { return target_; }
    QRect targetRect() const; // in the window's coordinates; empty when none is shown

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    QPointer<QWidget> target_;
};

} // namespace shardscope::widgets
