#pragma once
// Help → Lessons: plays a lesson step by step in a card over the window. Each step puts
// its run settings into the Ranks page (and runs them) or opens its bundled recording, switches
// page, seeks the shared playhead, outlines the widget it names (by objectName) and shows its
// paragraph with the numbers of the run actually loaded (lesson_facts.h). Back/Next replay the
// step's actions, so any step can be reached directly.
#include "lessons/lesson_host.h"
#include "lessons/lesson_library.h"

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>
#include <memory>

class QFrame;
class QScrollArea;
class QLabel;
class QMenu;
class QPushButton;
class QWidget;

namespace shardscope::widgets {

class LessonOverlay;
class RanksPage;

class LessonPlayer : public QObject {
    Q_OBJECT
public:
    explicit LessonPlayer(LessonHost& host,
                          const LessonLibrary& library = LessonLibrary::bundled());
    ~LessonPlayer() override;

    // Starts lesson `id` at step `step` (0-based); false (and nothing changes) for an unknown id,
    // a step out of range, or while a step is still loading.
    bool start(const QString& id, int step = 0);
    void next();
    void back();
    void close();

    const LessonLibrary& library() const { return library_; }
    const lessons::Lesson* lesson() const { return lesson_; }
    int stepIndex() const { return step_; }
    bool isSettled() const { return settled_; }
    // Runs the event loop until the step's recording or run is loaded and the step applied;
    // false when `timeoutMs` passed first.
    bool waitUntilSettled(int timeoutMs);

    QWidget*
    highlighted() const; // the outlined widget; null when the step names none or it was not found
    QString paragraph() const; // the step's text, filled
    QStringList missingFacts() const { return missing_; }
    QString problem() const {
        return problem_;
    }                       // why the step could not be applied fully; empty when it was
    QWidget* panel() const; // the card (Back, Next, the paragraph)
    QMenu* menu() const { return menu_; }

Q_SIGNALS:
    void stepShown();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void placePanel();
    int panelHeight(int width) const;
    void buildPanel();
    void rebuildMenu();
    void retranslate();
    void updateControls(); // title, "Step k of n", Back/Next for the current step
    void showStep();
    void finishStep();
    void render();
    QWidget* findTarget(const QString& name) const;
    RanksPage* ranks() const;

    LessonHost& host_;
    QWidget& window_; // host_.hostWidget()
    const LessonLibrary& library_;
    const lessons::Lesson* lesson_ = nullptr;
    int step_ = 0;
    bool settled_ = true;
    bool loading_ = false; // our own open/run is in progress
    QString loaded_;       // the bundled recording the document shows; empty after any other run
    QStringList missing_;
    QString problem_;
    std::unique_ptr<QTemporaryDir>
        extracted_; // bundled recordings copied out for the reader (made on first use)
    QFrame* panel_ = nullptr;
    QLabel* lessonTitle_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* counter_ = nullptr;
    QLabel* text_ = nullptr;
    QLabel* problemLabel_ = nullptr;
    QPushButton* back_ = nullptr;
    QPushButton* next_ = nullptr;
    QPushButton* close_ = nullptr;
    QMenu* menu_ = nullptr;
    LessonOverlay* overlay_ = nullptr;
    QTimer placeTimer_;
};

} // namespace shardscope::widgets
