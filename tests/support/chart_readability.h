#pragma once
// What a reader of a page could not read, for the GUI layout tests: chart legends and in-plot
// labels clipped or drawn over each other (in every tab), and on failure which widgets ask for
// the room a page lacks.
#include "common/qcustomplot.h"

#include <QCoreApplication>
#include <QList>
#include <QPair>
#include <QRectF>
#include <QString>
#include <QTabWidget>
#include <QWidget>

namespace shardscope::testing {

inline QString sizeText(QSize s) {
    return QStringLiteral("%1×%2").arg(s.width()).arg(s.height());
}

// On failure: which descendants ask for much of the budget (the culprits' class and name).
inline QString greedyChildren(const QWidget* w, int depth = 0) {
    QString out;
    for (const QWidget* c : w->findChildren<QWidget*>(Qt::FindDirectChildrenOnly)) {
        if (c->isHidden()) continue;
        const QSize m = c->minimumSizeHint().expandedTo(c->minimumSize());
        if (m.width() < 250 && m.height() < 300) continue;
        out += QStringLiteral("\n") + QString(depth * 2, QLatin1Char(' ')) +
               QString::fromLatin1(c->metaObject()->className()) + QLatin1Char(' ') +
               c->objectName() + QLatin1Char(' ') + sizeText(m);
        if (depth < 12) out += greedyChildren(c, depth + 1);
    }
    return out;
}

inline QString rectText(QRectF r) {
    return QStringLiteral("(%1,%2 %3×%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

// What a reader of a chart on this page could not read: legend entries cut off by the plot's
// edge or drawn over each other, in-plot labels drawn over each other. Empty when all is well.
inline QString unreadableChartParts(QWidget* page) {
    QString out;
    for (QCustomPlot* plot : page->findChildren<QCustomPlot*>()) {
        if (!plot->isVisible()) continue;
        plot->replot(QCustomPlot::rpImmediateRefresh); // lays the plot out at its current size
        const QString where = QStringLiteral("\n") + plot->objectName() + QStringLiteral(": ");
        QList<QPair<QString, QRectF>> entries;
        if (plot->legend && plot->legend->visible())
            for (int i = 0; i < plot->legend->itemCount(); ++i)
                if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) {
                    const QRectF r(item->outerRect());
                    entries.append({item->plottable()->name(), r});
                    // A cell narrower or shorter than its entry cuts the text ("DDI" for "DDP").
                    const QSize needs =
                        static_cast<const QCPLayoutElement*>(item)->minimumOuterSizeHint();
                    if (!QRectF(plot->rect()).contains(r) || r.width() < needs.width() ||
                        r.height() < needs.height())
                        out +=
                            where + QStringLiteral("legend entry \"%1\" clipped at %2, needs %3×%4")
                                        .arg(item->plottable()->name(), rectText(r))
                                        .arg(needs.width())
                                        .arg(needs.height());
                }
        QList<QPair<QString, QRectF>> labels;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i));
                text && text->visible() && !text->text().isEmpty()) {
                const QRectF r =
                    QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition())
                        .normalized();
                labels.append({text->text(), r});
                if (text->clipToAxisRect() &&
                    !QRectF(text->clipAxisRect()->rect()).adjusted(-1, -1, 1, 1).contains(r))
                    out += where + QStringLiteral("label \"%1\" %2 cut by the axes %3")
                                       .arg(text->text(), rectText(r),
                                            rectText(text->clipAxisRect()->rect()));
            }
        for (const auto* group : {&entries, &labels})
            for (int i = 0; i < group->size(); ++i)
                for (int j = i + 1; j < group->size(); ++j)
                    if ((*group)[i]
                            .second.adjusted(1, 1, -1, -1)
                            .intersects((*group)[j].second.adjusted(1, 1, -1, -1)))
                        out += where + QStringLiteral("\"%1\" %2 overlaps \"%3\" %4")
                                           .arg((*group)[i].first, rectText((*group)[i].second),
                                                (*group)[j].first, rectText((*group)[j].second));
    }
    return out;
}

// The same for the charts behind every tab, each brought to the front in turn.
// With SHARDSCOPE_LAYOUT_SHOTS set, each such tab is kept as shotPrefix-tabN.png.
inline QString unreadableInAnyTab(QWidget* page, const QString& shotPrefix) {
    QString out = unreadableChartParts(page);
    int pane = 0;
    for (QTabWidget* tabs : page->findChildren<QTabWidget*>()) {
        if (!tabs->isVisible()) continue;
        ++pane;
        const int shown = tabs->currentIndex();
        for (int i = 0; i < tabs->count(); ++i) {
            if (i == shown) continue;
            tabs->setCurrentIndex(i);
            QCoreApplication::processEvents();
            out += unreadableChartParts(tabs->widget(i));
            if (!shotPrefix.isEmpty())
                tabs->grab().save(
                    QStringLiteral("%1-pane%2-tab%3.png").arg(shotPrefix).arg(pane).arg(i));
        }
        tabs->setCurrentIndex(shown);
    }
    return out;
}

} // namespace shardscope::testing
