#include "common/plot_setup.h"

#include "common/byte_format.h"

#include <QEvent>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {

namespace {

const char* const kFullTitle = "shardscopeFullTitle";
const char* const kWrapper = "shardscopeTitleWraps";
const char* const kAsideTitle = "shardscopeAsideTitle";
const char* const kLegendFits = "shardscopeLegendFits";
const char* const kFullAxisTitle = "shardscopeFullAxisTitle";
const char* const kCrampedAxisTitle = "shardscopeCrampedAxisTitle";
const char* const kBuiltFont = "shardscopeBuiltFont";
const char* const kFloorHooked = "shardscopeTextFloor";
constexpr int kCrampedWidth = 420, kCrampedHeight = 200, kTitledHeight = 170;
int gTextFloor = 0;

// Large text (presentation mode) needs more room for the same parts: the thresholds below which a
// plot gives up its title and axis titles grow with it (12 px: the text the charts are built for).
int scaled(int pixels) {
    return gTextFloor > 12 ? pixels * gTextFloor / 12 : pixels;
}

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
        for (const QChar c : word)
            push(QString(c), QString());
    }
    if (!line.isEmpty()) lines << line;
    return lines.join(QLatin1Char('\n'));
}

// The title element: in row 0, or set aside while the plot is too short for it.
QCPTextElement* titleElement(QCustomPlot* plot) {
    if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) return t;
    return qobject_cast<QCPTextElement*>(plot->property(kAsideTitle).value<QObject*>());
}

void rewrapTitle(QCustomPlot* plot) {
    QCPTextElement* t = titleElement(plot);
    if (!t) return;
    // One too short for title, axes and legend together (a chart under a tab bar in a 700 px
    // window) gives the title's lines to the data: the tab and the page around it name it.
    const bool room = plot->height() >= scaled(kTitledHeight);
    const bool shown = plot->plotLayout()->element(0, 0) == t;
    if (room != shown) {
        if (room) {
            plot->plotLayout()->insertRow(0);
            plot->plotLayout()->addElement(0, 0, t);
        } else {
            plot->setProperty(kAsideTitle, QVariant::fromValue<QObject*>(t));
            plot->plotLayout()->take(t);    // stays a child of the plot, drawn until hidden
            plot->plotLayout()->simplify(); // an empty row would still take its share of height
        }
        t->setVisible(room);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    // A plot not laid out yet wraps again when its layout gives it a size (a Resize arrives).
    const QString text =
        wrapToWidth(plot->property(kFullTitle).toString(), t->font(), plot->width() - 12);
    if (text == t->text()) return;
    t->setText(text);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// Returns whether the axis' shown title changed.
bool applyAxisTitle(QCPAxis* axis, bool cramped) {
    const QVariant full = axis->property(kFullAxisTitle);
    if (!full.isValid()) return false;
    const QString text = cramped ? axis->property(kCrampedAxisTitle).toString() : full.toString();
    if (text == axis->label()) return false;
    axis->setLabel(text);
    return true;
}

// Everything that follows the plot's size: titles wrap instead of being clipped at both ends,
// the legend takes as many columns as fit, axis titles shorten when the plot is cramped.
class SizeFollower : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::Resize) return false;
        auto* plot = qobject_cast<QCustomPlot*>(watched);
        if (!plot) return false;
        rewrapTitle(plot);
        if (plot->property(kLegendFits).toBool()) fitLegendToWidth(plot);
        bool changed = false;
        for (QCPAxis* axis : plot->axisRect() ? plot->axisRect()->axes() : QList<QCPAxis*>())
            changed = applyAxisTitle(axis, isCramped(plot)) || changed;
        if (changed) plot->replot(QCustomPlot::rpQueuedReplot);
        return false;
    }
};

// One font of a chart: remembered as built the first time it is seen, then the floor applied to
// that (so leaving presentation gives every text back its own size).
template <typename Get, typename Set>
void floorFont(QObject* owner, const char* key, Get get, Set set) {
    const QVariant built = owner->property(key);
    const QFont base = built.isValid() ? built.value<QFont>() : get();
    if (!built.isValid()) owner->setProperty(key, base);
    const QFont want = gTextFloor > 0 ? atLeastPixels(base, gTextFloor) : base;
    if (get() != want) set(want);
}

void applyTextFloor(QCustomPlot* plot) {
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
            floorFont(
                axis, "shardscopeBuiltTickFont", [axis] { return axis->tickLabelFont(); },
                [axis](const QFont& f) { axis->setTickLabelFont(f); });
            floorFont(
                axis, "shardscopeBuiltLabelFont", [axis] { return axis->labelFont(); },
                [axis](const QFont& f) { axis->setLabelFont(f); });
        }
    if (QCPLegend* legend = plot->legend) {
        floorFont(
            legend, kBuiltFont, [legend] { return legend->font(); },
            [legend](const QFont& f) { legend->setFont(f); });
        for (int i = 0; i < legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = legend->item(i))
                floorFont(
                    item, kBuiltFont, [item] { return item->font(); },
                    [item](const QFont& f) { item->setFont(f); });
    }
    const auto text = [](QCPTextElement* t) {
        floorFont(
            t, kBuiltFont, [t] { return t->font(); }, [t](const QFont& f) { t->setFont(f); });
    };
    for (QCPLayoutElement* e : plot->plotLayout()->elements(true))
        if (auto* t = qobject_cast<QCPTextElement*>(e)) text(t);
    if (auto* aside = qobject_cast<QCPTextElement*>(plot->property(kAsideTitle).value<QObject*>()))
        text(aside);
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)))
            floorFont(
                t, kBuiltFont, [t] { return t->font(); }, [t](const QFont& f) { t->setFont(f); });
}

void followSize(QCustomPlot* plot) {
    followTextFloor(plot);
    if (plot->property(kWrapper).toBool()) return;
    plot->installEventFilter(new SizeFollower(plot));
    plot->setProperty(kWrapper, true);
}

} // namespace

QFont atLeastPixels(QFont font, int pixels) {
    const int now = QFontInfo(font).pixelSize();
    if (pixels <= 0 || now <= 0 || now >= pixels) return font;
    const double points = font.pointSizeF() > 0 ? font.pointSizeF() : 9.0;
    font.setPointSizeF(points * pixels / now);
    // Rounding in the font engine may leave it a pixel short: step up until it is not.
    for (int i = 0; i < 8 && QFontInfo(font).pixelSize() < pixels; ++i)
        font.setPointSizeF(font.pointSizeF() + 0.5);
    return font;
}

void setChartTextFloor(int pixels) {
    gTextFloor = std::max(0, pixels);
}

int chartTextFloor() {
    return gTextFloor;
}

void followTextFloor(QCustomPlot* plot) {
    if (plot->property(kFloorHooked).toBool()) return;
    plot->setProperty(kFloorHooked, true);
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { applyTextFloor(plot); });
}

QString ByteTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
    return formatDecimal(tick);
}

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
    followSize(plot);
    plot->setProperty(kFullTitle, title);
    if (QCPTextElement* t = titleElement(plot)) t->setText(title);
    rewrapTitle(plot);
}

QString plotTitle(const QCustomPlot* plot) {
    return plot->property(kFullTitle).toString();
}

bool isCramped(const QWidget* plot) {
    return plot->width() < scaled(kCrampedWidth) || plot->height() < scaled(kCrampedHeight);
}

void placeLegendBelow(QCustomPlot* plot, QSize iconSize, double fontScale) {
    QCPLegend* legend = plot->legend;
    legend->setVisible(true);
    QFont small = plot->font();
    small.setPointSizeF(small.pointSizeF() * fontScale);
    legend->setFont(small);
    legend->setIconSize(iconSize);
    legend->setBorderPen(Qt::NoPen);
    legend->setRowSpacing(0);
    legend->setIconTextPadding(4);
    legend->setMargins(QMargins(4, 2, 4, 2));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->plotLayout()->addElement(2, 0, legend);
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
    plot->setProperty(kLegendFits, true);
    followSize(plot);
    fitLegendToWidth(plot);
}

void fitLegendToWidth(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    QList<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i) { // cells of removed entries are empty
        QCPAbstractLegendItem* item = legend->item(i);
        if (!item) continue;
        item->setMargins(QMargins(3, 0, 3, 0)); // tight: two columns fit a 260 px chart
        widths << item->minimumOuterSizeHint().width();
    }
    const QMargins m = legend->margins();
    const int room = plot->width() - m.left() - m.right() - 4;
    // The most columns whose widest entries, side by side, fit the plot (entries fill row by row).
    int columns = std::max<int>(1, static_cast<int>(widths.size()));
    for (; columns > 1; --columns) {
        int total = (columns - 1) * legend->columnSpacing();
        for (int c = 0; c < columns; ++c) {
            int widest = 0;
            for (int i = c; i < widths.size(); i += columns)
                widest = std::max(widest, widths[i]);
            total += widest;
        }
        if (total <= room) break;
    }
    const bool changed = columns != legend->wrap();
    legend->setWrap(columns);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst,
                         true); // re-lays the entries out in the new grid
    if (changed) plot->replot(QCustomPlot::rpQueuedReplot);
}

void setAxisTitle(QCPAxis* axis, const QString& full, const QString& cramped) {
    axis->setProperty(kFullAxisTitle, full);
    axis->setProperty(kCrampedAxisTitle, cramped);
    if (auto* plot = axis->parentPlot()) {
        followSize(plot);
        applyAxisTitle(axis, isCramped(plot));
    }
}

} // namespace shardscope::widgets
