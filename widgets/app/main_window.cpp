#include "app/main_window.h"

#include "app/presentation.h"
#include "common/language.h"
#include "common/side_column.h"
#include "run/run_document.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QStackedWidget>
#include <QStatusBar>
#include <QVBoxLayout>

namespace shardscope::widgets {
namespace {

// A page inside its scroll area: the page gets the frame's whole size, never less than its
// minimum. (Handed straight to the scroll area, a page with wrapping rows, which lay out height
// for width, would be sized by its preferred height rather than its minimum and scroll without
// need.)
class PageFrame : public QWidget {
public:
    explicit PageFrame(QWidget* page) : page_(page) {
        page->setParent(this);
        page->installEventFilter(this);
    }
    QSize minimumSizeHint() const override {
        return page_->minimumSizeHint().expandedTo(page_->minimumSize());
    }
    QSize sizeHint() const override { return page_->sizeHint(); }

protected:
    void resizeEvent(QResizeEvent*) override { page_->setGeometry(rect()); }
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == page_ && event->type() == QEvent::LayoutRequest) updateGeometry();
        return false;
    }

private:
    QWidget* page_;
};

} // namespace

MainWindow::MainWindow(LanguageManager* language, QWidget* parent)
    : QMainWindow(parent), language_(language ? language : new LanguageManager(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    auto* central = new QWidget(this);
    auto* column = new QVBoxLayout(central);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    auto* layout = new QHBoxLayout;
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    column->addLayout(layout, 1);
    lessonBar_ = new QWidget(central);
    lessonBar_->setObjectName(QStringLiteral("lessonBar"));
    auto* bar = new QVBoxLayout(lessonBar_);
    bar->setContentsMargins(4, 2, 4, 2);
    column->addWidget(lessonBar_);
    sidebar_ = new QListWidget(central);
    sidebar_->setObjectName(QStringLiteral("pageList"));
    sidebar_->setFixedWidth(120);
    sidebar_->setFrameShape(QFrame::NoFrame);
    // Every item state gets the same box (padding, border, margin): with the box set on
    // ::item alone, the style drew unselected items without it and the selected text stood
    // shifted right of the others. outline: none drops the focus frame that also nudged it.
    QFont sidebarFont = sidebar_->font();
    sidebarFont.setPointSizeF(11);
    sidebar_->setFont(sidebarFont);
    putAwayWhilePresenting(sidebar_); // presenting: pages from the View menu and the lessons
    sidebar_->setStyleSheet(
        QStringLiteral("QListWidget { background: #2b3440; color: #e8edf2; outline: none; }"
                       "QListWidget::item, QListWidget::item:selected, QListWidget::item:hover {"
                       " padding: 10px 8px; margin: 0px; border: 0px; }"
                       "QListWidget::item:selected { background: #4c78a8; color: white; }"
                       "QListWidget::item:hover:!selected { background: #35404e; }"));
    stack_ = new QStackedWidget(central);
    layout->addWidget(sidebar_);
    layout->addWidget(stack_, 1);
    setCentralWidget(central);
    connect(sidebar_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0 || row >= static_cast<int>(pages_.size())) return;
        stack_->setCurrentIndex(row);
        pages_[static_cast<std::size_t>(row)].action->setChecked(true);
    });
    presentation_ = new Presentation(*this);
    versionLabel_ = new QLabel(this);
    statusBar()->addPermanentWidget(versionLabel_);
    buildMenus();
    retranslateUi();
    // Created after the pages' container: children are deleted in creation order, so the pages
    // that refer to the document go first.
    document_ = new RunDocument(this);
}

MainWindow::~MainWindow() {
    presentation_->setPresenting(false); // the application's font back while the pages exist
}

void MainWindow::buildMenus() {
    fileMenu_ = menuBar()->addMenu(QString());
    quitAction_ = fileMenu_->addAction(QString(), qApp, &QApplication::quit);
    quitAction_->setShortcut(QKeySequence::Quit);
    viewMenu_ = menuBar()->addMenu(QString());
    viewMenu_->addAction(presentation_->action());
    viewMenu_->addSeparator();
    pageGroup_ = new QActionGroup(this);
    languageMenu_ = menuBar()->addMenu(QString());
    languageGroup_ = new QActionGroup(this);
    // Each language is named in itself, as users look for their own language's name.
    const std::pair<QString, QString> languages[] = {
        {QStringLiteral("en"), QStringLiteral("English")},
        {QStringLiteral("zh_CN"), QStringLiteral("简体中文")}};
    for (const auto& [code, name] : languages) {
        QAction* a = languageMenu_->addAction(name);
        a->setCheckable(true);
        a->setData(code);
        a->setObjectName(QStringLiteral("language_") + code);
        languageGroup_->addAction(a);
        connect(a, &QAction::triggered, this, [this, c = code] { language_->setLanguage(c); });
    }
    connect(language_, &LanguageManager::languageChanged, this, [this](const QString& code) {
        for (QAction* a : languageGroup_->actions())
            a->setChecked(a->data().toString() == code);
    });
    for (QAction* a : languageGroup_->actions())
        a->setChecked(a->data().toString() == language_->current());
    helpMenu_ = menuBar()->addMenu(QString());
    aboutAction_ = helpMenu_->addAction(QString(), this, &MainWindow::showAbout);
}

void MainWindow::addPage(const QString& id, TitleFn title, QWidget* page) {
    // Each page scrolls inside the window rather than growing it: a page that asks for more than
    // the screen (large text on a projector, a long status line) never pushes the window, and its
    // Run and Stop, past the screen's edge.
    auto* scroll = new QScrollArea(stack_);
    scroll->setObjectName(QStringLiteral("pageScroll_") + id);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setWidget(new PageFrame(page));
    stack_->addWidget(scroll);
    auto* item = new QListWidgetItem(title(), sidebar_);
    item->setData(Qt::UserRole, id);
    QAction* action = viewMenu_->addAction(title());
    action->setCheckable(true);
    pageGroup_->addAction(action);
    connect(action, &QAction::triggered, this, [this, id] { showPage(id); });
    // A page that reports progress declares statusMessage(QString); MainWindow needs no page types.
    if (page->metaObject()->indexOfSignal("statusMessage(QString)") >= 0)
        connect(page, SIGNAL(statusMessage(QString)), statusBar(), SLOT(showMessage(QString)));
    pages_.push_back({id, std::move(title), page, action});
    if (pages_.size() == 1) showPage(id);
}

void MainWindow::addFileAction(QAction* action) {
    fileMenu_->insertAction(quitAction_, action);
    if (fileMenu_->actions().size() == 2) fileMenu_->insertSeparator(quitAction_);
}

bool MainWindow::showPage(const QString& id) {
    for (std::size_t i = 0; i < pages_.size(); ++i) {
        if (pages_[i].id != id) continue;
        sidebar_->setCurrentRow(static_cast<int>(i));
        return true;
    }
    return false;
}

QWidget* MainWindow::pageArea() {
    return pages_.empty() ? centralWidget() : stack_;
}

QWidget* MainWindow::currentPage() const {
    const int i = stack_->currentIndex();
    return i >= 0 && i < static_cast<int>(pages_.size())
               ? pages_[static_cast<std::size_t>(i)].widget
               : nullptr;
}

QSize MainWindow::leastSizeForCurrentPage() const {
    const QSize window = minimumSizeHint().expandedTo(minimumSize());
    const QWidget* page = currentPage();
    if (!page) return window;
    const QWidget* scroll = stack_->currentWidget();
    const QSize chrome = (window - scroll->minimumSizeHint()).expandedTo(QSize(0, 0));
    return window.expandedTo(chrome + page->minimumSizeHint().expandedTo(page->minimumSize()));
}

bool MainWindow::presenting() const {
    return presentation_->presenting();
}

QStringList MainWindow::pageIds() const {
    QStringList ids;
    for (const Page& p : pages_)
        ids << p.id;
    return ids;
}

QWidget* MainWindow::page(const QString& id) const {
    for (const Page& p : pages_)
        if (p.id == id) return p.widget;
    return nullptr;
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QMainWindow::changeEvent(event);
}

void MainWindow::retranslateUi() {
    setWindowTitle(tr("ShardScope — ZeRO and FSDP, executed and explained"));
    fileMenu_->setTitle(tr("&File"));
    quitAction_->setText(tr("&Quit"));
    viewMenu_->setTitle(tr("&View"));
    languageMenu_->setTitle(tr("&Language"));
    helpMenu_->setTitle(tr("&Help"));
    aboutAction_->setText(tr("&About ShardScope"));
    presentation_->retranslate();
    versionLabel_->setText(tr("ShardScope %1").arg(QCoreApplication::applicationVersion()));
    for (std::size_t i = 0; i < pages_.size(); ++i) {
        const QString title = pages_[i].title();
        sidebar_->item(static_cast<int>(i))->setText(title);
        pages_[i].action->setText(title);
    }
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About ShardScope"),
        tr("<h3>ShardScope %1</h3><p>A desktop explorer for ZeRO and FSDP: what every rank holds "
           "(parameters, gradients, optimizer state, activations, communication buffers), "
           "measured from real sharded training steps and compared with the theory.</p>")
            .arg(QCoreApplication::applicationVersion()));
}

} // namespace shardscope::widgets
