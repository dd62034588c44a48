#include "lessons/lesson_overlay.h"

#include <QEvent>
#include <QPainter>

namespace shardscope::widgets {

LessonOverlay::LessonOverlay(QWidget* window) : QWidget(window) {
    setObjectName(QStringLiteral("lessonHighlight"));
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    window->installEventFilter(this);
    setGeometry(window->rect());
    hide();
}

void LessonOverlay::setTarget(QWidget* target) {
    if (target_) target_->removeEventFilter(this);
    target_ = target;
    if (target_) target_->installEventFilter(this);
    setGeometry(parentWidget()->rect());
    setVisible(target_ != nullptr);
    raise();
    update();
}

QRect LessonOverlay::targetRect() const {
    if (!target_ || !target_->isVisible()) return {};
    // Only the part that can be seen (a scroll area or a splitter may hide the rest).
    const QRect seen = target_->visibleRegion().boundingRect();
    if (seen.isEmpty()) return {};
    return QRect(target_->mapTo(parentWidget(), seen.topLeft()), seen.size());
}

bool LessonOverlay::eventFilter(QObject* watched, QEvent* event) {
    const auto type = event->type();
    if (watched == parentWidget() && type == QEvent::Resize) setGeometry(parentWidget()->rect());
    if (type == QEvent::Resize || type == QEvent::Move || type == QEvent::Show ||
        type == QEvent::Hide) {
        raise();
        update();
    }
    return QWidget::eventFilter(watched, event);
}

void LessonOverlay::paintEvent(QPaintEvent*) {
    const QRect r = targetRect();
    if (r.isEmpty()) return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    // The system's highlight colour: a lesson points, it does not add a meaning to the palette.
    QPen pen(palette().color(QPalette::Highlight), 4);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    p.drawRoundedRect(QRectF(r).adjusted(2, 2, -2, -2), 6, 6);
}

} // namespace shardscope::widgets
