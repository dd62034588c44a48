#pragma once
// The main window wires pages into a sidebar + stack; it does not contain them. A page is any
// QWidget registered with addPage(); its sidebar entry and View-menu action follow the language.
// The window owns the run the pages show (RunDocument); app/pages.h creates the pages over it.
#include "lessons/lesson_host.h"

#include <QMainWindow>
#include <functional>
#include <vector>

class QAction;
class QActionGroup;
class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;

namespace shardscope::widgets {

class LanguageManager;
class Presentation;
class RunDocument;

class MainWindow : public QMainWindow, public LessonHost {
    Q_OBJECT
public:
    using TitleFn = std::function<QString()>; // re-evaluated on every language change

    // `language` may be shared with main(); when null the window owns one.
    explicit MainWindow(LanguageManager* language = nullptr, QWidget* parent = nullptr);
    ~MainWindow() override;

    void addPage(const QString& id, TitleFn title, QWidget* page);
    // Puts a page's action into the File menu, above Quit (e.g. "Open recording…").
    void addFileAction(QAction* action);
    bool showPage(const QString& id) override; // false for an unknown id
    QStringList pageIds() const;
    QWidget* currentPage() const; // the page shown (nullptr before any)
    // The smallest window that shows the current page whole: pages scroll rather than grow the
    // window, and a picture of a scrolled page would be cut.
    QSize leastSizeForCurrentPage() const;
    QWidget* page(const QString& id) const override;
    LanguageManager* language() const override { return language_; }
    QMenu* helpMenu() const override { return helpMenu_; } // Help → Lessons adds itself here
    RunDocument& document() const override { return *document_; }
    QWidget* hostWidget() override { return this; }
    QWidget* pageArea() override; // the stack of pages (the central widget before any page)
    bool presenting() const override;
    QWidget* lessonBar() override { return lessonBar_; }
    Presentation& presentation() const { return *presentation_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Page {
        QString id;
        TitleFn title;
        QWidget* widget;
        QAction* action;
    };
    void buildMenus();
    void retranslateUi();
    void showAbout();

    LanguageManager* language_;
    RunDocument* document_ = nullptr;
    std::vector<Page> pages_;
    QListWidget* sidebar_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    QMenu* fileMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* languageMenu_ = nullptr;
    QMenu* helpMenu_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
    QActionGroup* pageGroup_ = nullptr;
    QActionGroup* languageGroup_ = nullptr;
    QLabel* versionLabel_ = nullptr;
    QWidget* lessonBar_ = nullptr;
    Presentation* presentation_ = nullptr;
};

} // namespace shardscope::widgets
