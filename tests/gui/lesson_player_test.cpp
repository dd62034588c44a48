// Help → Lessons: every step of every bundled lesson, walked offscreen at 1024×700 in English and
// Chinese. Each step must load (its bundled recording, its page, its seek), outline an element
// that exists and is visible, and fill every number of its paragraph from the run loaded.
#include "app/main_window.h"
#include "app/pages.h"
#include "common/byte_format.h"
#include "common/language.h"
#include "flows/flow_view.h"
#include "lessons/lesson_facts.h"
#include "lessons/lesson_library.h"
#include "lessons/lesson_overlay.h"
#include "lessons/lesson_player.h"
#include "playback/explain_panel.h"
#include "playback/explain_text.h"
#include "protocol/protocol.h"
#include "ranks/ranks_page.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"

#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

struct Fixture {
    LanguageManager language;
    MainWindow window{&language};
    LessonPlayer* player = nullptr;
    explicit Fixture(const QString& lang) {
        language.setLanguage(lang);
        addDefaultPages(window);
        player = window.findChild<LessonPlayer*>();
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(1024, 700);
        window.show();
    }
};

// A bundled recording of a run that failed (a lesson about why it did): it ends in a Failure
// record, and has no report.
bool endsInFailure(const QString& name) {
    QFile f(bundledRecording(name));
    if (!f.open(QIODevice::ReadOnly)) return false;
    const QByteArray bytes = f.readAll();
    protocol::StreamDecoder decoder;
    decoder.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    bool failed = false;
    while (auto record = decoder.next())
        failed = failed || std::holds_alternative<protocol::Failure>(*record);
    return failed;
}

// The page the window shows now.
QWidget* currentPage(MainWindow& window) {
    for (const QString& id : window.pageIds())
        if (window.page(id)->isVisible()) return window.page(id);
    return nullptr;
}

// The moment a step with a seek is about: the playhead stands just after the event it declares
// (its kind, unit, rank, step and what tells that event apart), the page's explain panel describes
// that same event for that rank, the Ranks page's charts follow that rank, the paragraph's {ev.…}
// are that event's, and an outlined flow view draws that collective.
void checkTheMoment(Fixture& f, const lessons::Step& step, const QString& where) {
    const lessons::Seek& seek = *step.seek;
    const replay::ReplayModel& model = f.window.document().model();
    const std::uint64_t k = f.window.document().player().cursor().index();
    const auto at = Explain::eventForRank(model, k, seek.rank);
    QVERIFY2(at, qPrintable(where + QStringLiteral(": rank %1 has no event").arg(seek.rank)));
    const Event& e = model.event(*at);
    const QString unit =
        e.unit == kNoUnit ? QString() : QString::fromStdString(model.info()->unitName(e.unit));
    QCOMPARE(e.rank, seek.rank);
    if (seek.at == lessons::Seek::At::Event) {
        QVERIFY2(*at + 1 == k, qPrintable(where));
        QCOMPARE(static_cast<std::int64_t>(model.stepIndexOf(*at)) + 1, seek.step);
        QCOMPARE(e.kind, *seek.kind);
        if (!seek.unit.empty()) QCOMPARE(unit, QString::fromStdString(seek.unit));
        if (seek.category) QCOMPARE(e.category, *seek.category);
        if (seek.collective) QCOMPARE(e.collective, *seek.collective);
        if (seek.phase) QCOMPARE(e.phase, *seek.phase);
        if (seek.transfer) QCOMPARE(e.transfer, *seek.transfer);
    }
    if (QWidget* page = currentPage(f.window))
        if (auto* explain = page->findChild<ExplainPanel*>()) {
            QCOMPARE(explain->focusRank(), seek.rank);
            QVERIFY2(explain->describedEvent() == at,
                     qPrintable(where + QStringLiteral(": the explain panel describes ") +
                                explain->sentence()));
        }
    if (auto* chartRank = f.window.findChild<QSpinBox*>(QStringLiteral("chartRank")))
        QCOMPARE(chartRank->value(), seek.rank);
    const LessonFacts facts = lessonFacts(f.window.document(), seek.rank);
    QCOMPARE(facts.value(QStringLiteral("ev.bytes")), formatDecimal(static_cast<double>(e.bytes)));
    QCOMPARE(facts.value(QStringLiteral("ev.rank")), QString::number(e.rank));
    if (!unit.isEmpty()) {
        QCOMPARE(facts.value(QStringLiteral("ev.unit")), unit);
        // The rank's gathered units are those after this event: a freed unit is no longer
        // gathered, a gathered one is.
        const QStringList gathered =
            facts.value(QStringLiteral("gathered")).split(QStringLiteral(", "));
        if (e.kind == EventKind::Free && e.category == Category::ParamFull)
            QVERIFY2(!gathered.contains(unit), qPrintable(where));
        if (e.kind == EventKind::CollectiveEnd && e.collective == CollectiveOp::AllGather)
            QVERIFY2(gathered.contains(unit), qPrintable(where));
    }
    if (step.highlight == "flowView") {
        auto* flow = f.window.findChild<FlowView*>(QStringLiteral("flowView"));
        QVERIFY(flow);
        const replay::FlowState& drawn = flow->state();
        QVERIFY2(drawn.valid && drawn.atPlayhead,
                 qPrintable(where + QStringLiteral(": ") + flow->title()));
        QCOMPARE(drawn.kind, e.collective);
        QCOMPARE(drawn.unit, e.unit);
        QCOMPARE(drawn.step, e.step);
    }
}

} // namespace

class LessonPlayerTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bundledLessonsAllRead() {
        const LessonLibrary& library = LessonLibrary::bundled();
        QVERIFY2(library.problems.isEmpty(), qPrintable(library.problems.join(QLatin1Char('\n'))));
        QStringList ids;
        for (const auto& l : library.lessons)
            ids << QString::fromStdString(l.id);
        for (const char* id :
             {"ledger16", "zero-stages", "unit-cycle", "peak", "fsdp-vs-zero3", "offload"})
            QVERIFY2(ids.contains(QLatin1String(id)), id);
        // Every recording a lesson names is bundled and carries its report (or, a run that failed
        // on purpose, its Failure; a reference always has a report).
        for (const auto& l : library.lessons)
            for (const auto& s : l.steps)
                for (const std::string& name : {s.recording, s.reference})
                    if (!name.empty()) {
                        QVERIFY2(!bundledRecording(QString::fromStdString(name)).isEmpty(),
                                 name.c_str());
                        QVERIFY2(bundledReport(QString::fromStdString(name)) ||
                                     (name == s.recording &&
                                      endsInFailure(QString::fromStdString(name))),
                                 name.c_str());
                    }
        for (const auto& l : library.lessons)
            for (const auto& s : l.steps)
                for (const std::string& name : s.compare)
                    QVERIFY2(bundledReport(QString::fromStdString(name)), name.c_str());
    }

    void walksEveryStep_data() {
        QTest::addColumn<QString>("lang");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }
    void walksEveryStep() {
        QFETCH(QString, lang);
        Fixture f(lang);
        QVERIFY(f.player);
        for (const auto& lesson : f.player->library().lessons) {
            const QString id = QString::fromStdString(lesson.id);
            QVERIFY(f.player->start(id));
            for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
                const auto& step = lesson.steps[k];
                const QString where = id + QStringLiteral(" step ") + QString::number(k + 1);
                if (k > 0) {
                    QPushButton* next =
                        f.player->panel()->findChild<QPushButton*>(QStringLiteral("lessonNext"));
                    QVERIFY(next->isEnabled());
                    QTest::mouseClick(next, Qt::LeftButton);
                }
                QVERIFY2(f.player->waitUntilSettled(30000), qPrintable(where));
                QCOMPARE(f.player->stepIndex(), static_cast<int>(k));
                QVERIFY2(f.player->problem().isEmpty(),
                         qPrintable(where + QStringLiteral(": ") + f.player->problem()));
                QVERIFY2(f.player->missingFacts().isEmpty(),
                         qPrintable(where + QStringLiteral(": ") +
                                    f.player->missingFacts().join(QLatin1Char(','))));
                const QString text = f.player->paragraph();
                QVERIFY2(!text.contains(QLatin1Char('{')) && !text.contains(QLatin1Char('}')),
                         qPrintable(where + QStringLiteral(": ") + text));
                QVERIFY(f.player->panel()->isVisible());
                const bool last = k + 1 == lesson.steps.size();
                QCOMPARE(f.player->panel()
                             ->findChild<QPushButton*>(QStringLiteral("lessonNext"))
                             ->text(),
                         last ? LessonPlayer::tr("Finish") : LessonPlayer::tr("Next"));
                QCOMPARE(
                    f.player->panel()->findChild<QLabel*>(QStringLiteral("lessonCounter"))->text(),
                    LessonPlayer::tr("Step %1 of %2").arg(k + 1).arg(lesson.steps.size()));
                if (!step.page.empty())
                    QCOMPARE(currentPage(f.window),
                             f.window.page(QString::fromStdString(step.page)));
                if (!step.highlight.empty()) {
                    QWidget* target = f.player->highlighted();
                    QVERIFY2(target, qPrintable(where));
                    QCOMPARE(target->objectName(), QString::fromStdString(step.highlight));
                    QVERIFY2(target->isVisible(),
                             qPrintable(where + QStringLiteral(": ") + target->objectName()));
                    // The outline is drawn where the element is, inside the window, big enough to
                    // see.
                    auto* overlay = f.window.findChild<LessonOverlay*>();
                    QVERIFY(overlay && overlay->isVisible());
                    const QRect r = overlay->targetRect();
                    QVERIFY2(r.width() >= 20 && r.height() >= 16,
                             qPrintable(where +
                                        QStringLiteral(": %1×%2").arg(r.width()).arg(r.height())));
                    QVERIFY2(f.window.rect().intersects(r), qPrintable(where));
                }
                if (!step.recording.empty()) QVERIFY(f.window.document().model().stepCount() > 0);
                if (step.seek) {
                    checkTheMoment(f, step, where);
                    if (QTest::currentTestFailed()) return;
                }
                if (step.configure) {
                    const RunRequest r =
                        qobject_cast<RanksPage*>(f.window.page(QStringLiteral("ranks")))
                            ->configPanel()
                            ->request();
                    QCOMPARE(r.ranks, step.configure->ranks);
                    QCOMPARE(r.strategy, step.configure->strategy);
                    QCOMPARE(r.model, QString::fromStdString(step.configure->model));
                }
            }
            f.player->close();
            QVERIFY(!f.player->panel()->isVisible());
        }
    }

    // The paragraph's numbers are the loaded run's: the measured model states of rank 0 in the DDP
    // recording, the event the playhead stands on, and a reference run's report.
    void numbersComeFromTheLoadedRun() {
        Fixture f(QStringLiteral("en"));
        QVERIFY(f.player->start(QStringLiteral("ledger16"), 0));
        QVERIFY(f.player->waitUntilSettled(30000));
        const auto& report = f.window.document().report();
        QVERIFY(report);
        const QString states = formatDecimal(
            static_cast<double>(report::stateTotal(report->ranks[0].modelStateBytes)));
        QVERIFY2(f.player->paragraph().contains(states), qPrintable(f.player->paragraph()));
        QVERIFY(f.player->paragraph().contains(
            QLocale().toString(static_cast<qulonglong>(report->paramCount))));
        const LessonFacts facts = lessonFacts(f.window.document(), 0);
        QCOMPARE(facts.value(QStringLiteral("bpp_total")),
                 QLocale().toString(
                     static_cast<double>(report::stateTotal(report->ranks[0].modelStateBytes)) /
                         static_cast<double>(report->paramCount),
                     'f', 2));

        // Lesson 3, step 1: the playhead stands just after block0's first all-gather of step 2.
        QVERIFY(f.player->start(QStringLiteral("unit-cycle"), 0));
        QVERIFY(f.player->waitUntilSettled(30000));
        const auto& model = f.window.document().model();
        const std::uint64_t k = f.window.document().player().cursor().index();
        QVERIFY(k > 0);
        const Event& e = model.event(k - 1);
        QCOMPARE(e.kind, EventKind::CollectiveBegin);
        QCOMPARE(e.collective, CollectiveOp::AllGather);
        QCOMPARE(QString::fromStdString(model.info()->unitName(e.unit)), QStringLiteral("block0"));
        QCOMPARE(model.stepIndexOf(k - 1), std::size_t{1});
        QVERIFY(f.player->paragraph().contains(formatDecimal(static_cast<double>(e.bytes))));

        // Lesson 4 stands at rank 0's own peak of step 2 (not the busiest rank's moment): the
        // ledger it quotes at the playhead is rank 0's measured peak.
        QVERIFY(f.player->start(QStringLiteral("peak"), 0));
        QVERIFY(f.player->waitUntilSettled(30000));
        const LessonFacts atPeak = lessonFacts(f.window.document(), 0);
        QCOMPARE(atPeak.value(QStringLiteral("live.total")), atPeak.value(QStringLiteral("peak")));
        QCOMPARE(f.window.document().player().cursor().state()[0].liveTotal,
                 f.window.document().report()->ranks[0].peakTotal);

        // A fact the run does not have stays visible as its name, and is reported.
        QStringList missing;
        QCOMPARE(fillPlaceholders(QStringLiteral("a {nope} b {n}"), facts, &missing),
                 QStringLiteral("a {nope} b 4"));
        QCOMPARE(missing, QStringList{QStringLiteral("nope")});
    }

    // Back replays the earlier step; the Help menu lists every lesson and starts it.
    void backAndMenu() {
        Fixture f(QStringLiteral("en"));
        QMenu* menu = f.player->menu();
        QVERIFY(f.window.findChild<QMenu*>(QStringLiteral("lessonsMenu")) == menu);
        QCOMPARE(menu->actions().size(), static_cast<int>(f.player->library().lessons.size()));
        menu->actions().at(1)->trigger(); // zero-stages
        QVERIFY(f.player->waitUntilSettled(30000));
        QCOMPARE(QString::fromStdString(f.player->lesson()->id), QStringLiteral("zero-stages"));
        auto* back = f.player->panel()->findChild<QPushButton*>(QStringLiteral("lessonBack"));
        auto* next = f.player->panel()->findChild<QPushButton*>(QStringLiteral("lessonNext"));
        QVERIFY(!back->isEnabled());
        f.player->next();
        QVERIFY(f.player->waitUntilSettled(30000));
        QVERIFY(back->isEnabled());
        const QString zero1 = f.player->paragraph();
        f.player->back();
        QVERIFY(f.player->waitUntilSettled(30000));
        QCOMPARE(f.player->stepIndex(), 0);
        QVERIFY(f.player->paragraph() != zero1);
        QCOMPARE(QString::fromStdString(f.window.document().report()->strategy),
                 QStringLiteral("ddp"));
        // Switching the language rewrites the paragraph and the menu with the same numbers.
        const QString english = f.player->paragraph();
        QVERIFY(f.language.setLanguage(QStringLiteral("zh_CN")));
        QVERIFY2(f.player->paragraph().contains(QStringLiteral("每个 rank")),
                 qPrintable(f.player->paragraph()));
        QVERIFY(f.player->paragraph().contains(formatDecimal(static_cast<double>(
            report::stateTotal(f.window.document().report()->ranks[0].modelStateBytes)))));
        QVERIFY(menu->actions().at(0)->text().contains(QStringLiteral("账本")));
        QVERIFY(f.language.setLanguage(QStringLiteral("en")));
        QCOMPARE(f.player->paragraph(), english);
        QCOMPARE(f.player->panel()->findChild<QLabel*>(QStringLiteral("lessonCounter"))->text(),
                 QStringLiteral("Step 1 of 5"));
        QCOMPARE(next->text(), QStringLiteral("Next"));
        // Another recording replaces the lesson's: the card says so and keeps its numbers.
        const QString before = f.player->paragraph();
        QVERIFY(qobject_cast<RanksPage*>(f.window.page(QStringLiteral("ranks")))
                    ->openRecording(QStringLiteral(SHARDSCOPE_SOURCE_DIR
                                                   "/tests/data/golden_zero3_tiny_2r.sstrace")));
        QTRY_VERIFY(!f.player->problem().isEmpty());
        QCOMPARE(f.player->paragraph(), before);
        QTRY_VERIFY(!qobject_cast<RanksPage*>(f.window.page(QStringLiteral("ranks")))->isBusy());
        f.player->next(); // reloads the lesson's recording
        QVERIFY(f.player->waitUntilSettled(30000));
        QVERIFY2(f.player->problem().isEmpty(), qPrintable(f.player->problem()));
        QCOMPARE(QString::fromStdString(f.window.document().report()->strategy),
                 QStringLiteral("zero1"));
        QVERIFY(!f.player->start(QStringLiteral("no-such-lesson")));
        QVERIFY(!f.player->start(QStringLiteral("zero-stages"), 99));
    }

    // A step that configures and runs: a real job through shardscope-cli, then the step's seek,
    // outline and numbers on what it produced.
    void runsAConfiguredStep() {
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("run.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            R"({"schema":"shardscope.lesson/1","id":"live","order":1,"title":{"en":"Live"},"steps":[
            {"title":{"en":"Run"},"text":{"en":"{strategy} on {n} ranks keeps {state_total}; step {ev.step}"},
             "configure":{"model":"tiny","ranks":2,"strategy":"zero2","steps":1},"run":true,
             "page":"ranks","seek":{"at":"end","step":1},"highlight":"rankLedgerView"}]})");
        file.close();
        const LessonLibrary library = LessonLibrary::load(dir.path());
        QVERIFY2(library.problems.isEmpty(), qPrintable(library.problems.join(QLatin1Char('\n'))));
        Fixture f(QStringLiteral("en"));
        LessonPlayer player(f.window, library);
        QVERIFY(player.start(QStringLiteral("live")));
        QVERIFY(player.waitUntilSettled(120000));
        QVERIFY2(player.problem().isEmpty(), qPrintable(player.problem()));
        const auto& report = f.window.document().report();
        QVERIFY(report);
        QCOMPARE(QString::fromStdString(report->strategy), QStringLiteral("zero2"));
        QCOMPARE(report->worldSize, 2);
        const QString states = formatDecimal(
            static_cast<double>(report::stateTotal(report->ranks[0].modelStateBytes)));
        QVERIFY2(player.paragraph().contains(states), qPrintable(player.paragraph()));
        QVERIFY2(player.paragraph().endsWith(QStringLiteral("step 1")),
                 qPrintable(player.paragraph()));
        QCOMPARE(player.highlighted()->objectName(), QStringLiteral("rankLedgerView"));
    }
};

QTEST_MAIN(LessonPlayerTest)
#include "lesson_player_test.moc"
