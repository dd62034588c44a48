#pragma once
// The settings column at a page's left: it scrolls vertically when the window is short (1024×700)
// and never grows a horizontal scroll bar.
class QScrollArea;
class QWidget;

namespace shardscope::widgets {

QScrollArea* sideColumn(QWidget* content, int minimumWidth = 300);

} // namespace shardscope::widgets
