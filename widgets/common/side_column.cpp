#include "common/side_column.h"

#include <QFrame>
#include <QScrollArea>
#include <QSplitter>
#include <QVariant>

namespace shardscope::widgets {

QScrollArea* sideColumn(QWidget* content, int minimumWidth) {
    auto* scroll = new QScrollArea;
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(minimumWidth);
    return scroll;
}

namespace {
const char* const kPutAway = "shardscopePutAwayWhilePresenting";
const char* const kSizesBefore = "shardscopeSizesBeforePresenting";
} // namespace

void presentPane(QSplitter* split, int shown, bool presenting) {
    const bool vertical = split->orientation() == Qt::Vertical;
    for (int i = 0; i < split->count(); ++i) {
        QWidget* pane = split->widget(i);
        // The shown pane keeps its own least size (a view that needs its height to draw
        // without overprinting); the others may shrink to nothing.
        const int least = presenting && i != shown ? 1 : 0;
        if (vertical)
            pane->setMinimumHeight(least);
        else
            pane->setMinimumWidth(least);
    }
    if (presenting) {
        split->setProperty(kSizesBefore, QVariant::fromValue(split->sizes()));
        QList<int> sizes(split->count(), 0);
        if (shown >= 0 && shown < sizes.size()) sizes[shown] = 1;
        split->setSizes(sizes);
    } else if (const QVariant before = split->property(kSizesBefore); before.isValid()) {
        split->setSizes(before.value<QList<int>>());
    }
}

void putAwayWhilePresenting(QWidget* w) {
    w->setProperty(kPutAway, true);
}

bool isPutAwayWhilePresenting(const QWidget* w) {
    return w->property(kPutAway).toBool();
}

bool isPresenting(const QWidget* w) {
    return w->window()->property(kPresentingProperty).toBool();
}

} // namespace shardscope::widgets
