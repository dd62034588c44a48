#pragma once
// What a lesson needs of the window it plays over, and nothing else: the lessons folder knows
// this interface, not the application window (app/main_window.h implements it), so lessons and
// app depend one way (app → lessons).
#include <QString>
#include <QStringList>

class QMenu;
class QWidget;

namespace shardscope::widgets {

class LanguageManager;
class RunDocument;

class LessonHost {
public:
    virtual QWidget* hostWidget() = 0;   // the window the lesson's card and outline overlay
    virtual QWidget* pageArea() = 0;     // where pages show (the card stays clear of the sidebar)
    virtual QMenu* helpMenu() const = 0; // Help → Lessons adds itself here
    virtual RunDocument& document() const = 0;
    virtual LanguageManager* language() const = 0;
    virtual QWidget* page(const QString& id) const = 0; // nullptr for an unknown id
    virtual bool showPage(const QString& id) = 0;       // false for an unknown id
    // Presentation mode: the card docks into this strip under the pages (a widget with a layout),
    // so it never covers what it outlines; otherwise it floats over the pages' corner.
    virtual bool presenting() const = 0;
    virtual QWidget* lessonBar() = 0;

protected:
    ~LessonHost() = default;
};

} // namespace shardscope::widgets
