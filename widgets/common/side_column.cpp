#include "common/side_column.h"

#include <QFrame>
#include <QScrollArea>

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

} // namespace shardscope::widgets
