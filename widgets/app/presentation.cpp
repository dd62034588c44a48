#include "app/presentation.h"

#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/side_column.h"

#include <QAction>
#include <QApplication>
#include <QEvent>
#include <QFontInfo>
#include <QStyle>
#include <QWidget>
#include <algorithm>

namespace shardscope::widgets {
namespace {

// Note: a widget's own font (set by setFont: a bold title, a smaller note) is remembered under
// kOwnFont before the application's font grows, scaled by the same factor and raised to the floor,
// and given back on leaving. A widget made while presenting is only raised to the floor: its own
// font was derived from the grown one already.
const char* const kOwnFont = "shardscopeOwnFont";

QFont scaled(QFont font, double factor) {
    if (font.pointSizeF() > 0) font.setPointSizeF(font.pointSizeF() * factor);
    return font;
}

// A widget's own font for the projector: scaled with the body, at least the floor, a heading at
// most a tenth above the body (a 13 pt title scaled alike would take two lines of 1024 px, and
// the height they took was the charts').
QFont presented(const QFont& own, double factor) {
    QFont f = atLeastPixels(scaled(own, factor), Presentation::kTextFloorPixels);
    const int most = Presentation::kBodyPixels * 11 / 10;
    const int px = QFontInfo(f).pixelSize();
    if (px > most && f.pointSizeF() > 0) f.setPointSizeF(f.pointSizeF() * most / px);
    return f;
}

// A widget styled by a style sheet keeps the font it was polished with when the application's
// changes: polished again, it takes the new one.
void repolish(QWidget* w) {
    if (w->styleSheet().isEmpty()) return;
    w->style()->unpolish(w);
    w->style()->polish(w);
    w->update();
}

} // namespace

Presentation::Presentation(QWidget& window) : QObject(&window), window_(window) {
    setObjectName(QStringLiteral("presentation"));
    action_ = new QAction(this);
    action_->setObjectName(QStringLiteral("presentationAction"));
    action_->setCheckable(true);
    action_->setShortcut(QKeySequence(Qt::Key_F5));
    action_->setShortcutContext(Qt::ApplicationShortcut);
    connect(action_, &QAction::toggled, this, &Presentation::setPresenting);
    retranslate();
}

Presentation::~Presentation() {
    // The window's widgets may be gone already (MainWindow leaves presentation first): only the
    // application-wide state goes back.
    if (!on_) return;
    qApp->removeEventFilter(this);
    setChartTextFloor(0);
    QApplication::setFont(appFont_);
}

void Presentation::retranslate() {
    action_->setText(tr("&Presentation (large text for a projector)"));
}

void Presentation::setPresenting(bool on) {
    if (on == on_) return;
    on_ = on;
    action_->setChecked(on);
    const QList<QWidget*> all = window_.findChildren<QWidget*>();
    window_.setProperty(kPresentingProperty, on);
    if (on) {
        appFont_ = QApplication::font();
        const int px = std::max(1, QFontInfo(appFont_).pixelSize());
        const double factor = std::max(1.0, double(kBodyPixels) / px);
        for (QWidget* w : all)
            if (w->testAttribute(Qt::WA_SetFont)) w->setProperty(kOwnFont, w->font());
        QApplication::setFont(atLeastPixels(scaled(appFont_, factor), kBodyPixels));
        for (QWidget* w : all) {
            const QVariant own = w->property(kOwnFont);
            if (own.isValid()) w->setFont(presented(own.value<QFont>(), factor));
            repolish(w);
            if (isPutAwayWhilePresenting(w) && !w->isHidden()) {
                hidden_.emplace_back(w);
                w->hide();
            }
        }
        setChartTextFloor(kTextFloorPixels);
        qApp->installEventFilter(this);
    } else {
        qApp->removeEventFilter(this);
        setChartTextFloor(0);
        QApplication::setFont(appFont_);
        for (QWidget* w : all) {
            const QVariant own = w->property(kOwnFont);
            if (own.isValid()) {
                w->setFont(own.value<QFont>());
                w->setProperty(kOwnFont, QVariant());
            }
            repolish(w);
        }
        for (const QPointer<QWidget>& w : hidden_)
            if (w) w->show();
        hidden_.clear();
    }
    replotCharts();
    Q_EMIT presentingChanged(on);
}

void Presentation::raise(QWidget* w) {
    if (!w->testAttribute(Qt::WA_SetFont) || w->property(kOwnFont).isValid()) return;
    const QFont raised = atLeastPixels(w->font(), kTextFloorPixels);
    if (raised == w->font()) return;
    w->setProperty(kOwnFont, w->font());
    w->setFont(raised);
}

bool Presentation::eventFilter(QObject* watched, QEvent* event) {
    // Widgets made while presenting (a lesson's card, a comparison's charts): raised on polish.
    if (event->type() == QEvent::Polish && watched->isWidgetType()) {
        auto* w = static_cast<QWidget*>(watched);
        if (w->window() == &window_) raise(w);
        if (auto* plot = qobject_cast<QCustomPlot*>(w)) followTextFloor(plot);
    }
    return QObject::eventFilter(watched, event);
}

void Presentation::replotCharts() {
    for (QCustomPlot* plot : window_.findChildren<QCustomPlot*>()) {
        followTextFloor(plot);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

} // namespace shardscope::widgets
