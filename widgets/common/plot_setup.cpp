#include "common/plot_setup.h"

#include <QEvent>
#include <QVBoxLayout>

#include "common/byte_format.h"

namespace shardscope::widgets {

namespace {

const char* const kFullTitle = "shardscopeFullTitle";
const char* const kWrapper = "shardscopeTitleWraps";

// Greedy line filling at spaces; a run without spaces (Chinese) breaks between characters.
QString wrapToWidth(const QString& text, const QFont& font, int width) {
    const QFontMetrics fm(font);
    if (width <= 0 || fm.horizontalAdvance(text) <= width) return text;
    QStringList lines;
    QString line;
    const auto push = [&](const QString& piece, const QString& glue) {
        const QString candidate = line.isEmpty() ? piece : line + glue + piece;
        if (!line.isEmpty() && fm.horizontalAdvance(candidate) > width) {
            lines << line;
            line = piece;
        } else {
            line = candidate;
        }
    };
    for (const QString& word : text.split(QLatin1Char(' '))) {
        if (fm.horizontalAdvance(word) <= width) {
            push(word, QStringLiteral(" "));
            continue;
        }
        push(QString(), QStringLiteral(" ")); // the long word starts where the line is
        for (const QChar c : word) push(QString(c), QString());
    }
    if (!line.isEmpty()) lines << line;
    return lines.join(QLatin1Char('\n'));
}

void rewrapTitle(QCustomPlot* plot) {
    auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    if (!t) return;
    // A plot not laid out yet wraps again when its layout gives it a size (a Resize arrives).
    const QString text = wrapToWidth(plot->property(kFullTitle).toString(), t->font(), plot->width() - 12);
    if (text == t->text()) return;
    t->setText(text);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// Titles wrap to the plot's width instead of being clipped at both ends in narrow windows.
class TitleWrapper : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Resize)
            if (auto* plot = qobject_cast<QCustomPlot*>(watched)) rewrapTitle(plot);
        return false;
    }
};

} // namespace

QString ByteTicker::getTickLabel(double tick, const QLocale&, QChar, int) { return formatDecimal(tick); }

QCustomPlot* makeTitledPlot(QWidget* owner) {
    auto* plot = new QCustomPlot(owner);
    auto* layout = new QVBoxLayout(owner);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot);
    plot->setMinimumSize(240, 180);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot, QString(), QFont(owner->font().family(), 9, QFont::Bold)));
    // Replots while dragging stay cheap; the final frame is antialiased again.
    plot->setNoAntialiasingOnDrag(true);
    return plot;
}

void setPlotTitle(QCustomPlot* plot, const QString& title) {
    if (!plot->property(kWrapper).toBool()) {
        plot->installEventFilter(new TitleWrapper(plot));
        plot->setProperty(kWrapper, true);
    }
    plot->setProperty(kFullTitle, title);
    if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) t->setText(title);
    rewrapTitle(plot);
}

QString plotTitle(const QCustomPlot* plot) { return plot->property(kFullTitle).toString(); }

} // namespace shardscope::widgets
