// The explorer pages in the real window: Timeline, Flows and the Ranks page follow one
// playhead; stepping unit by unit through a ZeRO-3 step keeps the timeline's playhead, the
// flow diagram and both explain panels on the same event. Save recording writes what the
// window holds (the report through the one writer) and reads back to the same replay; the
// recent-files list remembers it.
//
// With SHARDSCOPE_STORY_DIR set, each stop is also written as PNGs (timeline and flows) —
// of SHARDSCOPE_STORY_RECORDING when given (a real worker recording), else the test's own.
#include "app/main_window.h"
#include "app/pages.h"
#include "app/recording_files.h"
#include "common/language.h"
#include "flows/flow_page.h"
#include "flows/flow_view.h"
#include "playback/explain_panel.h"
#include "playback/explain_text.h"
#include "playback/playback_bar.h"
#include "ranks/ranks_page.h"
#include "report/report.h"
#include "run/replay_player.h"
#include "run/run_document.h"
#include "synthetic_stream.h"
#include "timeline/timeline_page.h"
#include "timeline/timeline_view.h"
#include "timeline_test_recording.h"

#include <QDir>
#include <QElapsedTimer>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

bool openAndWait(RanksPage& ranks, const QString& path) {
    if (!ranks.openRecording(path)) return false;
    // The file is decoded on the session's thread; wait for its end (QTRY_* cannot return a value).
    QElapsedTimer clock;
    clock.start();
    while (ranks.isBusy() && clock.elapsed() < 20000)
        QTest::qWait(20);
    return !ranks.isBusy() && ranks.model().stepCount() > 0;
}

QString writeRecording(const QTemporaryDir& dir, const std::string& bytes) {
    const QString path = dir.filePath(QStringLiteral("story.sstrace"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    return path;
}

} // namespace

class TimelineStoryTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // QSettings of this test only
        QCoreApplication::setOrganizationName(QStringLiteral("shardscope-tests"));
        QSettings().clear();
    }

    void pagesShareThePlayhead() {
        LanguageManager language;
        language.setLanguage(QStringLiteral("en"));
        MainWindow window(&language);
        addDefaultPages(window);
        window.resize(1400, 900);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        auto* timeline = qobject_cast<TimelinePage*>(window.page(QStringLiteral("timeline")));
        auto* flows = qobject_cast<FlowPage*>(window.page(QStringLiteral("flows")));
        QVERIFY(ranks && timeline && flows);
        QTemporaryDir dir;
        const QString storyDir = qEnvironmentVariable("SHARDSCOPE_STORY_DIR");
        QString path = qEnvironmentVariable("SHARDSCOPE_STORY_RECORDING");
        if (path.isEmpty()) path = writeRecording(dir, testrec::makeRecording({}));
        QVERIFY(openAndWait(*ranks, path));
        const ReplayModel& m = ranks->model();
        QCOMPARE(timeline->view()->index().laneCount(), m.worldSize());
        QVERIFY(timeline->view()->index().spanCount() > 0);

        // Unit by unit through step 0, from the bar of the Timeline page.
        window.showPage(QStringLiteral("timeline"));
        ranks->player().seek(0);
        const std::uint64_t stepEnd = m.step(0).endEvent();
        int stop = 0;
        while (ranks->player().cursor().index() < stepEnd && stop < 40) {
            timeline->playback()->go(NavTarget::Unit, true);
            const std::uint64_t k = ranks->player().cursor().index();
            QCOMPARE(*timeline->view()->playheadNs(), m.replayNsAt(k));
            QCOMPARE(flows->view()->position(), k);
            QCOMPARE(timeline->explain()->sentence(),
                     Explain::explainForRank(m, k, *m.info(), timeline->playback()->focusRank()));
            QCOMPARE(flows->explain()->sentence(), timeline->explain()->sentence());
            QCOMPARE(flows->playback()->position(), k);
            if (!storyDir.isEmpty()) {
                QDir().mkpath(storyDir);
                timeline->zoomToCurrentStep();
                for (const char* page : {"timeline", "flows"}) {
                    window.showPage(QString::fromLatin1(page));
                    window.grab().save(QStringLiteral("%1/%2_%3.png")
                                           .arg(storyDir)
                                           .arg(stop, 2, 10, QLatin1Char('0'))
                                           .arg(QLatin1String(page)));
                }
                window.showPage(QStringLiteral("timeline"));
            }
            ++stop;
        }
        QVERIFY(stop >= 8); // a 4-unit ZeRO-3 step: 4 forward + 4 backward cycles at least
        // The sentence follows the bar's focus rank.
        timeline->playback()->setFocusRank(3);
        QVERIFY2(timeline->explain()->sentence().startsWith(QStringLiteral("Rank 3 ")),
                 qPrintable(timeline->explain()->sentence()));
        timeline->playback()->setFocusRank(0);

        // A click on the timeline moves every page.
        timeline->view()->setWindow(0, static_cast<double>(m.totalReplayNs()));
        Q_EMIT timeline->view()->seekRequested(42);
        QCOMPARE(ranks->player().cursor().index(), std::uint64_t{42});
        QCOMPARE(flows->view()->position(), std::uint64_t{42});
    }

    void saveRecordingRoundTrips() {
        LanguageManager language;
        language.setLanguage(QStringLiteral("en"));
        MainWindow window(&language);
        addDefaultPages(window);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        auto* files = window.findChild<RecordingFiles*>();
        QVERIFY(files);
        QTemporaryDir dir;
        testrec::Spec spec;
        spec.steps = 2;
        const QString path = writeRecording(dir, testrec::makeRecording(spec));
        QString error;
        QVERIFY(!files->saveRecording(dir.filePath(QStringLiteral("empty.sstrace")),
                                      &error)); // nothing open yet
        QVERIFY(openAndWait(*ranks, path));
        QCOMPARE(files->recentFiles().value(0), QFileInfo(path).absoluteFilePath());
        const QString saved = dir.filePath(QStringLiteral("saved.sstrace"));
        QVERIFY2(files->saveRecording(saved, &error), qPrintable(error));
        const auto original = testrec::loadModel(testrec::makeRecording(spec));
        QFile f(saved);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto back = testrec::loadModel(f.readAll().toStdString());
        QCOMPARE(back->eventCount(), original->eventCount());
        QCOMPARE(back->stepCount(), original->stepCount());
        for (std::uint64_t k = 0; k < back->eventCount(); k += 7) {
            const Event& a = back->event(k);
            const Event& b = original->event(k);
            QVERIFY(a.timeNs == b.timeNs && a.rank == b.rank && a.kind == b.kind &&
                    a.bytes == b.bytes && a.unit == b.unit);
        }
        QCOMPARE(back->step(1).loss, original->step(1).loss);
        QCOMPARE(back->info()->configJson, original->info()->configJson);
        // Export of the current page (Timeline: its view) as SVG.
        window.showPage(QStringLiteral("timeline"));
        window.resize(1200, 800);
        QVERIFY2(files->exportCurrentView(dir.filePath(QStringLiteral("view.svg")), &error),
                 qPrintable(error));
        QVERIFY(qobject_cast<TimelineView*>(files->currentExportTarget()));

        // The replay keeps only the typed report; a saved recording carries it back, written by
        // the one writer, and reads to the same value.
        const QString withReport = dir.filePath(QStringLiteral("with_report.sstrace"));
        {
            QFile out(withReport);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QByteArray::fromStdString(testing::syntheticStream(testing::SyntheticRun{})));
        }
        QVERIFY(openAndWait(*ranks, withReport));
        QTRY_VERIFY(window.document().report());
        const report::RunReport& held = *window.document().report();
        QCOMPARE(held.paramDigest, std::string("abc"));
        const QString savedReport = dir.filePath(QStringLiteral("saved_report.sstrace"));
        QVERIFY2(files->saveRecording(savedReport, &error), qPrintable(error));
        const protocol::Recording again = protocol::readRecording(savedReport.toStdString());
        QVERIFY(again.reportJson.has_value());
        const report::Parsed<report::RunReport> read = report::parseRunReport(*again.reportJson);
        QVERIFY2(read, read.error.c_str());
        QVERIFY(*read.value == held);
    }
};

QTEST_MAIN(TimelineStoryTest)
#include "timeline_story_test.moc"
