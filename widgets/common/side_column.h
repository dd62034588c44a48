#pragma once
// The settings column at a page's left: it scrolls vertically when the window is short (1024×700)
// and never grows a horizontal scroll bar. Also where a widget learns about presentation mode.
class QScrollArea;
class QSplitter;
class QWidget;

namespace shardscope::widgets {

QScrollArea* sideColumn(QWidget* content, int minimumWidth = 300);

// Presentation mode (app/presentation.h) puts `w` away (a settings column, the page list, a
// page's explanatory lines) so the charts get the room, and shows it again on leaving.
void putAwayWhilePresenting(QWidget* w);
bool isPutAwayWhilePresenting(const QWidget* w);
// Whether `w`'s window is in presentation mode: a widget that shows and hides itself keeps one
// that presentation put away hidden.
bool isPresenting(const QWidget* w);
inline constexpr const char* kPresentingProperty = "shardscopePresenting"; // on the window

// Presentation mode for a splitter of panes: `shown` takes the whole splitter and every pane may
// shrink to nothing (a collapsed pane still counts its minimum in the splitter's, and so the
// page's); leaving gives back the sizes it had. A lesson step that outlines another pane gives
// that one the room instead.
void presentPane(QSplitter* split, int shown, bool presenting);

} // namespace shardscope::widgets
