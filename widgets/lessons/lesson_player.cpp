#include "lessons/lesson_player.h"

#include "common/language.h"
#include "common/side_column.h"
#include "compare/compare_page.h"
#include "lessons/lesson_facts.h"
#include "lessons/lesson_overlay.h"
#include "playback/playback_bar.h"
#include "ranks/ranks_page.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"
#include "timeline/timeline_page.h"

#include <QAction>
#include <QEvent>
#include <QEventLoop>
#include <QFile>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

RunRequest requestFor(const lessons::RunSettings& s, const RunRequest& current) {
    RunRequest r = current; // keeps this machine's launch choices (threads, backend)
    r.model = q(s.model);
    r.ranks = s.ranks;
    r.strategy = s.strategy;
    r.steps = s.steps;
    r.checkpointing = s.checkpointing;
    r.prefetch = s.prefetch;
    return r;
}

// Makes `w` the current page of every tab widget it sits in, gives it the splitters it sits in
// and scrolls it into view, so it can be seen.
void reveal(QWidget* w, bool presenting) {
    // A panel presentation mode put away comes back when a step outlines what is in it.
    for (QWidget* p = w; p && p != w->window(); p = p->parentWidget())
        if (p->isHidden() && isPutAwayWhilePresenting(p)) p->show();
    for (QWidget* child = w; child && child->parentWidget(); child = child->parentWidget()) {
        auto* stack = qobject_cast<QStackedWidget*>(child->parentWidget());
        if (!stack) continue;
        if (auto* tabs = qobject_cast<QTabWidget*>(stack->parentWidget()))
            tabs->setCurrentWidget(child);
    }
    // A splitter pane holding it gets most of the splitter (the Ranks page's charts under its
    // rank view): an outlined chart is big enough to read from the back of a room.
    for (QWidget* child = w; child && child->parentWidget(); child = child->parentWidget()) {
        auto* split = qobject_cast<QSplitter*>(child->parentWidget());
        if (!split || split->count() < 2) continue;
        const int pane = split->indexOf(child);
        QList<int> sizes = split->sizes();
        int total = 0;
        for (int s : sizes)
            total += s;
        // Presenting, the pane takes the whole splitter: a projector has no height to share.
        const int want = presenting ? total : total * 3 / 5;
        if (pane < 0 || total <= 0 || sizes[pane] >= want) continue;
        const int others = total - sizes[pane];
        for (int i = 0; i < sizes.size(); ++i)
            sizes[i] = i == pane ? want
                                 : (others > 0 ? sizes[i] * (total - want) / others
                                               : (total - want) / (sizes.size() - 1));
        split->setSizes(sizes);
    }
    // Scrolled into view; one taller than the view from its top (Qt would centre it, hiding its
    // title).
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        auto* scroll = qobject_cast<QScrollArea*>(p);
        if (!scroll || !scroll->widget()) continue;
        if (w->height() > scroll->viewport()->height())
            scroll->verticalScrollBar()->setValue(w->mapTo(scroll->widget(), QPoint(0, 0)).y());
        else
            scroll->ensureWidgetVisible(w);
    }
}

} // namespace

LessonPlayer::LessonPlayer(LessonHost& host, const LessonLibrary& library)
    : QObject(host.hostWidget()), host_(host), window_(*host.hostWidget()), library_(library) {
    setObjectName(QStringLiteral("lessonPlayer"));
    buildPanel();
    overlay_ = new LessonOverlay(&window_);
    menu_ = new QMenu(&window_);
    menu_->setObjectName(QStringLiteral("lessonsMenu"));
    if (QMenu* help = host_.helpMenu())
        help->insertMenu(help->actions().isEmpty() ? nullptr : help->actions().first(), menu_);
    RunSession& session = host_.document().session();
    // Another run or recording replaces the one the lesson opened: the next step opens it again.
    connect(&session, &RunSession::started, this, [this] {
        if (loading_) return;
        loaded_.clear();
        // The paragraph keeps the numbers of the run it explains; it says they are not on screen.
        if (lesson_ && settled_) {
            problem_ = tr("another run replaced the one this step explains: press Back and Next to "
                          "load it again");
            problemLabel_->setText(problem_);
            problemLabel_->show();
            placePanel();
        }
    });
    connect(&session, &RunSession::finished, this,
            [this](RunSession::Outcome, const QString& message) {
                if (!loading_) return;
                loading_ = false;
                if (host_.document().model().stepCount() == 0) {
                    problem_ = message.isEmpty() ? tr("the recording holds no steps") : message;
                    loaded_.clear();
                }
                finishStep();
            });
    connect(host_.language(), &LanguageManager::languageChanged, this, &LessonPlayer::retranslate);
    retranslate();
}

LessonPlayer::~LessonPlayer() = default;

void LessonPlayer::buildPanel() {
    // A card over the window, not a dock: it never changes the pages' layout (a 1024×700 window
    // has no height to spare), and it moves to the corner away from the outlined element.
    panel_ = new QFrame(&window_);
    panel_->setObjectName(QStringLiteral("lessonPanel"));
    panel_->setFrameShape(QFrame::StyledPanel);
    panel_->setAutoFillBackground(true);
    panel_->setStyleSheet(QStringLiteral("#lessonPanel { border: 1px solid palette(mid); "
                                         "border-radius: 6px; background: palette(window); }"));
    auto* layout = new QVBoxLayout(panel_);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->setSpacing(4);
    lessonTitle_ = new QLabel(panel_);
    lessonTitle_->setObjectName(QStringLiteral("lessonTitle"));
    lessonTitle_->setWordWrap(true);
    auto* head = new QHBoxLayout;
    title_ = new QLabel(panel_);
    title_->setObjectName(QStringLiteral("lessonStepTitle"));
    title_->setWordWrap(true);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    counter_ = new QLabel(panel_);
    counter_->setObjectName(QStringLiteral("lessonCounter"));
    head->addWidget(title_, 1);
    head->addWidget(counter_, 0, Qt::AlignTop);
    text_ = new QLabel;
    text_->setObjectName(QStringLiteral("lessonText"));
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    text_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long paragraph scrolls inside the card instead of covering the page.
    scroll_ = new QScrollArea(panel_);
    scroll_->setObjectName(QStringLiteral("lessonTextScroll"));
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll_->setWidget(text_);
    problemLabel_ = new QLabel(panel_);
    problemLabel_->setObjectName(QStringLiteral("lessonProblem"));
    problemLabel_->setWordWrap(true);
    problemLabel_->setStyleSheet(QStringLiteral("color: #b00020;"));
    problemLabel_->hide();
    auto* buttons = new QHBoxLayout;
    back_ = new QPushButton(panel_);
    back_->setObjectName(QStringLiteral("lessonBack"));
    next_ = new QPushButton(panel_);
    next_->setObjectName(QStringLiteral("lessonNext"));
    next_->setDefault(true);
    close_ = new QPushButton(panel_);
    close_->setObjectName(QStringLiteral("lessonClose"));
    buttons->addStretch(1);
    buttons->addWidget(back_);
    buttons->addWidget(next_);
    buttons->addWidget(close_);
    layout->addWidget(lessonTitle_);
    layout->addLayout(head);
    layout->addWidget(scroll_, 1);
    layout->addWidget(problemLabel_);
    layout->addLayout(buttons);
    panel_->hide();
    window_.installEventFilter(this);
    placeTimer_.setSingleShot(true);
    placeTimer_.setInterval(0);
    connect(&placeTimer_, &QTimer::timeout, this, &LessonPlayer::placePanel);
    connect(back_, &QPushButton::clicked, this, &LessonPlayer::back);
    connect(next_, &QPushButton::clicked, this, &LessonPlayer::next);
    connect(close_, &QPushButton::clicked, this, &LessonPlayer::close);
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), panel_);
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    connect(escape, &QShortcut::activated, this, &LessonPlayer::close);
}

bool LessonPlayer::eventFilter(QObject* watched, QEvent* event) {
    // The window's children are laid out after its resize: place the card once they are.
    // Fonts grow and shrink with presentation mode: the card docks or floats again.
    if (watched == &window_ &&
        (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest ||
         event->type() == QEvent::FontChange) &&
        lesson_)
        placeTimer_.start();
    return QObject::eventFilter(watched, event);
}

// The card goes into the corner of the page area that covers least of the outlined element.
// The card's height at width `w` that shows the whole paragraph.
int LessonPlayer::panelHeight(int w) const {
    const int chrome =
        panel_->layout()->contentsMargins().top() + panel_->layout()->contentsMargins().bottom() +
        lessonTitle_->heightForWidth(w - 20) + title_->heightForWidth(w - 120) +
        back_->sizeHint().height() +
        (problemLabel_->isVisible() ? problemLabel_->heightForWidth(w - 20) : 0) + 4 * 4;
    return chrome +
           text_->heightForWidth(w - 20 - scroll_->verticalScrollBar()->sizeHint().width()) + 4;
}

void LessonPlayer::placePanel() {
    // Presenting, the card is a bar under the pages: it takes its height from them instead of
    // covering any part, whatever it outlines.
    QWidget* bar = host_.lessonBar();
    if (host_.presenting() && bar && bar->layout()) {
        if (panel_->parentWidget() != bar) {
            const bool shown = lesson_ != nullptr;
            bar->layout()->addWidget(panel_);
            panel_->setVisible(shown);
        }
        const int h = std::min(panelHeight(bar->width() - 8), window_.height() / 3);
        panel_->setFixedHeight(h);
        return;
    }
    if (panel_->parentWidget() != &window_) {
        const bool shown = lesson_ != nullptr;
        panel_->setParent(&window_);
        panel_->setMinimumHeight(0);
        panel_->setMaximumHeight(QWIDGETSIZE_MAX);
        panel_->setVisible(shown);
    }
    // The pages' area (right of the sidebar), or the whole central widget without pages.
    QWidget* area = host_.pageArea();
    if (!area) return;
    const QRect a(area->mapTo(&window_, QPoint(0, 0)), area->size());
    const int margin = 12;
    const int w = std::clamp(a.width() * 2 / 5, std::min(320, a.width() - 2 * margin), 520);
    const int h =
        std::clamp(panelHeight(w), std::min(160, a.height()), std::max(160, a.height() * 9 / 20));
    const QRect target = overlay_->targetRect();
    const QPoint corners[] = {{a.right() - w - margin, a.bottom() - h - margin},
                              {a.right() - w - margin, a.top() + margin},
                              {a.left() + margin, a.bottom() - h - margin},
                              {a.left() + margin, a.top() + margin}};
    QRect best;
    qint64 bestCovered = -1;
    for (const QPoint& c : corners) {
        const QRect r(c, QSize(w, h));
        const QRect covered = r.intersected(target);
        const qint64 area2 = covered.isEmpty() ? 0 : qint64(covered.width()) * covered.height();
        if (bestCovered < 0 || area2 < bestCovered) {
            best = r;
            bestCovered = area2;
        }
    }
    panel_->setGeometry(best);
    panel_->raise();
}

void LessonPlayer::rebuildMenu() {
    menu_->clear();
    const QString language = host_.language()->current();
    for (const lessons::Lesson& l : library_.lessons) {
        QAction* a = menu_->addAction(q(l.title.in(language.toStdString())));
        a->setObjectName(QStringLiteral("lesson_") + q(l.id));
        a->setToolTip(q(l.summary.in(language.toStdString())));
        connect(a, &QAction::triggered, this, [this, id = q(l.id)] { start(id); });
    }
    menu_->setEnabled(!library_.lessons.empty());
}

void LessonPlayer::retranslate() {
    menu_->setTitle(tr("&Lessons"));
    back_->setText(tr("Back"));
    close_->setText(tr("Close lesson"));
    rebuildMenu();
    updateControls();
    if (lesson_ && settled_) render();
}

void LessonPlayer::updateControls() {
    const int count = lesson_ ? static_cast<int>(lesson_->steps.size()) : 0;
    next_->setText(step_ + 1 < count ? tr("Next") : tr("Finish"));
    if (!lesson_) return;
    lessonTitle_->setText(
        tr("Lesson: %1").arg(q(lesson_->title.in(host_.language()->current().toStdString()))));
    counter_->setText(tr("Step %1 of %2").arg(step_ + 1).arg(count));
    back_->setEnabled(step_ > 0);
}

bool LessonPlayer::start(const QString& id, int step) {
    const lessons::Lesson* l = library_.find(id);
    if (!settled_ || !l || step < 0 || static_cast<std::size_t>(step) >= l->steps.size())
        return false;
    lesson_ = l;
    step_ = step;
    retranslate();
    showStep();
    return true;
}

void LessonPlayer::next() {
    if (!lesson_ || !settled_) return;
    if (static_cast<std::size_t>(step_ + 1) >= lesson_->steps.size()) {
        close();
        return;
    }
    ++step_;
    showStep();
}

void LessonPlayer::back() {
    if (!lesson_ || !settled_ || step_ == 0) return;
    --step_;
    showStep();
}

void LessonPlayer::close() {
    lesson_ = nullptr;
    overlay_->setTarget(nullptr);
    panel_->hide();
}

RanksPage* LessonPlayer::ranks() const {
    return qobject_cast<RanksPage*>(host_.page(QStringLiteral("ranks")));
}

void LessonPlayer::showStep() {
    const lessons::Step& s = lesson_->steps[static_cast<std::size_t>(step_)];
    settled_ = false;
    problem_.clear();
    missing_.clear();
    overlay_->setTarget(nullptr);
    updateControls();
    panel_->show();
    placePanel();
    RanksPage* page = ranks();
    const bool needsRanks = s.configure || !s.recording.empty();
    if (needsRanks && !page) {
        problem_ = tr("this window has no Ranks page");
        finishStep();
        return;
    }
    const QString recording = q(s.recording);
    const bool open = !recording.isEmpty() && recording != loaded_;
    if ((s.run || open) && page->isBusy()) {
        problem_ =
            tr("a run is in progress: stop it, then press Back and Next to repeat this step");
        finishStep();
        return;
    }
    if (s.run) {
        loading_ = true;
        loaded_.clear();
        if (!page->runRequest(requestFor(*s.configure, page->configPanel()->request()))) {
            loading_ = false;
            problem_ = page->bannerText();
            finishStep();
        }
        return;
    }
    if (open) {
        const QString source = bundledRecording(recording);
        if (!extracted_) extracted_ = std::make_unique<QTemporaryDir>();
        const QString path = extracted_->filePath(recording);
        if (source.isEmpty() || !extracted_->isValid() ||
            (!QFile::exists(path) && !QFile::copy(source, path))) {
            problem_ = tr("the bundled recording %1 cannot be read").arg(recording);
            finishStep();
            return;
        }
        loading_ = true;
        loaded_ = recording;
        if (!page->openRecording(path)) {
            loading_ = false;
            loaded_.clear();
            problem_ = tr("the bundled recording %1 cannot be opened").arg(recording);
            finishStep();
        }
        return;
    }
    finishStep();
}

QWidget* LessonPlayer::findTarget(const QString& name) const {
    const lessons::Step& s = lesson_->steps[static_cast<std::size_t>(step_)];
    if (!s.page.empty())
        if (QWidget* page = host_.page(q(s.page))) {
            if (page->objectName() == name) return page;
            if (auto* w = page->findChild<QWidget*>(name)) return w;
        }
    if (window_.objectName() == name) return &window_;
    return window_.findChild<QWidget*>(name);
}

void LessonPlayer::finishStep() {
    if (!lesson_) return;
    const lessons::Step& s = lesson_->steps[static_cast<std::size_t>(step_)];
    // After the recording loaded: opening one may show its own configuration in the settings.
    if (s.configure && !s.run)
        if (RanksPage* page = ranks())
            page->configPanel()->setRequest(
                requestFor(*s.configure, page->configPanel()->request()));
    if (!s.compare.empty()) {
        if (auto* compare = qobject_cast<ComparePage*>(host_.page(QStringLiteral("compare")))) {
            compare->clear();
            for (const std::string& name : s.compare)
                if (const auto report = bundledReport(q(name)))
                    compare->addReport(*report);
                else
                    problem_ = tr("the bundled recording %1 has no report").arg(q(name));
        } else {
            problem_ = tr("this window has no page '%1'").arg(QStringLiteral("compare"));
        }
    }
    if (!s.page.empty() && !host_.showPage(q(s.page)))
        problem_ = tr("this window has no page '%1'").arg(q(s.page));
    if (s.seek && problem_.isEmpty()) {
        QString why;
        if (const auto k = seekIndex(host_.document().model(), *s.seek, &why)) {
            // Every page follows the step's rank: the explain panels describe its last event and
            // the Ranks page's charts show its memory, as the paragraph does.
            for (PlaybackBar* bar : window_.findChildren<PlaybackBar*>())
                bar->setFocusRank(s.seek->rank);
            if (auto* chartRank = window_.findChild<QSpinBox*>(QStringLiteral("chartRank")))
                chartRank->setValue(s.seek->rank);
            host_.document().player().pause();
            host_.document().player().seek(*k);
            if (RanksPage* page = ranks()) page->finishPendingDraws();
            // The timeline shows the step holding the playhead, so one unit's cycle is readable.
            if (auto* timeline =
                    qobject_cast<TimelinePage*>(host_.page(QStringLiteral("timeline"))))
                timeline->zoomToCurrentStep();
        } else {
            problem_ = why;
        }
    }
    if (!s.highlight.empty()) {
        QWidget* target = findTarget(q(s.highlight));
        if (target)
            reveal(target, host_.presenting());
        else
            problem_ = tr("this window has no element '%1' to point at").arg(q(s.highlight));
        overlay_->setTarget(target);
    }
    render();
    placePanel();
    placeTimer_.start(); // again once the page shown is laid out
    settled_ = true;
    Q_EMIT stepShown();
}

void LessonPlayer::render() {
    if (!lesson_) return;
    const lessons::Step& s = lesson_->steps[static_cast<std::size_t>(step_)];
    const std::string language = host_.language()->current().toStdString();
    title_->setText(q(s.title.in(language)));
    const int rank = s.seek ? s.seek->rank : 0;
    LessonFacts facts = lessonFacts(host_.document(), rank);
    if (!s.reference.empty())
        if (const auto reference = bundledReport(q(s.reference)))
            addReportFacts(facts, *reference, rank, QStringLiteral("ref."));
    for (auto it = facts.begin(); it != facts.end(); ++it)
        it.value() = it.value().toHtmlEscaped();
    missing_.clear();
    text_->setText(fillPlaceholders(q(s.text.in(language)), facts, &missing_));
    problemLabel_->setText(problem_);
    problemLabel_->setVisible(!problem_.isEmpty());
}

QWidget* LessonPlayer::highlighted() const {
    return overlay_->target();
}

QWidget* LessonPlayer::panel() const {
    return panel_;
}

QString LessonPlayer::paragraph() const {
    return text_->text();
}

bool LessonPlayer::waitUntilSettled(int timeoutMs) {
    if (settled_) return true;
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    connect(this, &LessonPlayer::stepShown, &loop, &QEventLoop::quit);
    timeout.start(timeoutMs);
    loop.exec();
    return settled_;
}

} // namespace shardscope::widgets
