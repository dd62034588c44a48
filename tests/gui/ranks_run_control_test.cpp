// The Ranks page's run controls as a user drives them: Stop is live from the moment a job
// starts and Escape ends the whole job within 5 s, a capacity failure names what did not fit
// and a budget below the predicted peak is warned before the run, and the settings show what
// is loaded.
#include "common/byte_format.h"
#include "common/failure_text.h"
#include "fake_cli.h"
#include "ranks_page_fixture.h"
#include "run/run_config_panel.h"
#include "timeline/timeline_page.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QToolButton>

class RanksRunControlTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<RunSession::Outcome>(); }

    // Stop is enabled from the moment a job starts (not only once its first step arrived), the
    // status bar follows the steps, and Escape ends the whole job — the CLI, mpirun and every
    // rank — within 5 s, with no process of it left.
    void stopIsLiveFromTheStartAndEscapeEndsTheJob() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        QStringList status;
        QObject::connect(&page, &RanksPage::statusMessage, &page,
                         [&status](const QString& m) { status << m; });
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        auto* stopButton = page.findChild<QPushButton*>(QStringLiteral("stopButton"));
        QVERIFY(!stopButton->isEnabled());
        const bool mpirun = missingForMpirun().isEmpty();
        QVERIFY(page.runRequest(mpirun ? tinyRequest(100000) : tinyThreadsRequest(100000)));
        QVERIFY(stopButton->isEnabled());
        QVERIFY2(!status.isEmpty() && status.last().startsWith(QStringLiteral("Starting")),
                 qPrintable(status.join(QLatin1Char('|'))));
        QTRY_VERIFY_WITH_TIMEOUT(page.model().stepCount() >= 2, 60000);
        QVERIFY(stopButton->isEnabled());
        QTRY_VERIFY2(status.last().contains(QStringLiteral("of 100000")),
                     qPrintable(status.last()));
        QVERIFY2(!status.last().startsWith(QStringLiteral("Starting")), qPrintable(status.last()));
        const auto cli = static_cast<pid_t>(page.session().processId());
        std::vector<ProcessId> tree = descendantPids(cli);
        QVERIFY(!tree.empty());
        tree.push_back({cli, 0});
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(&page, Qt::Key_Escape);
        QVERIFY(!stopButton->isEnabled());
        QCOMPARE(page.waitForEnd(5000), RunSession::Outcome::Stopped);
        QTRY_VERIFY_WITH_TIMEOUT(allGone(tree),
                                 std::max<int>(1, 5000 - static_cast<int>(clock.elapsed())));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY2(status.last().startsWith(QStringLiteral("Stopped after")),
                 qPrintable(status.last()));
        QVERIFY(!stopButton->isEnabled());
        QVERIFY(page.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
    }

    // A live run animating on the Timeline stops there too: its Stop shows while the job runs,
    // ends the whole job, and greys the Ranks page's Stop at once.
    void theTimelineStopsALiveRun() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        TimelinePage timeline(page.document);
        auto* stop = timeline.findChild<QToolButton*>(QStringLiteral("replayStop"));
        QVERIFY(stop && stop->isHidden());
        QVERIFY(page.runRequest(tinyThreadsRequest(100000)));
        QVERIFY(!stop->isHidden() && stop->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(page.model().stepCount() >= 1, 60000);
        QTest::mouseClick(stop, Qt::LeftButton);
        QVERIFY(!stop->isEnabled());
        QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("stopButton"))->isEnabled());
        QCOMPARE(page.waitForEnd(5000), RunSession::Outcome::Stopped);
        QVERIFY(stop->isHidden());
    }

    // A capacity failure keeps its reason: a rank's exit status alone is not the cause, the
    // allocation that did not fit is.
    void capacityFailureShowsTheNamedCause() {
        QTemporaryDir dir;
        const QString cli = testing::writeFakeCli(dir, testing::kRank3OutOfMemoryInStep1);
        QVERIFY(!cli.isEmpty());
        TestPage page;
        page.session().setCliPath(cli);
        page.session().setWorkerPath(QStringLiteral("/bin/sh")); // never started by the fake
        QVERIFY(page.runRequest(tinyThreadsRequest(2)));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Failed);
        // The worker's words, in the UI's (common/failure_text.h): what did not fit, in kB.
        QCOMPARE(
            page.bannerText(),
            QStringLiteral("Rank 3 exited (exit code 1) in step 1: ") +
                failureText(QStringLiteral(
                    "out of memory on rank 3: allocating 25600 bytes of workspace for head "
                    "would exceed the device capacity of 1500000 bytes (1479880 bytes live)")));
        QVERIFY2(page.bannerText().contains(QStringLiteral("25.6 kB")),
                 qPrintable(page.bannerText()));
        // An exit status with nothing more to say stays as it was.
        launch::JobEnding plain{.kind = launch::EndingKind::Failed,
                                .rank = 1,
                                .step = 2,
                                .cause = "exited (exit code 1)",
                                .exitCode = 1};
        QCOMPARE(RunSession::endingText(plain),
                 QStringLiteral("Rank 1 exited (exit code 1) in step 2"));
    }

    // The settings warn before the run when the predicted peak per rank exceeds the budget
    // (the run may still start: a class may want to see the failure).
    void budgetBelowThePredictedPeakIsWarnedBeforeTheRun() {
        TestPage page;
        RunConfigPanel* panel = page.configPanel();
        RunRequest r = tinyThreadsRequest(2);
        r.ranks = 4;
        panel->setRequest(r);
        QVERIFY(panel->capacityWarning().isEmpty());
        QVERIFY(panel->predictedPeakBytes().value_or(0) > 1700000);
        r.capacityBytes = 1700000;
        panel->setRequest(r);
        QVERIFY2(panel->capacityWarning().contains(QStringLiteral("exceeds")) &&
                     panel->capacityWarning().contains(QStringLiteral("out of memory")),
                 qPrintable(panel->capacityWarning()));
        QVERIFY(panel->isValid()); // a warning, not an error
        r.capacityBytes = *panel->predictedPeakBytes() * 2;
        panel->setRequest(r);
        QVERIFY(panel->capacityWarning().isEmpty());
    }

    // A run over its memory budget under mpirun: the banner names the rank, the step as the
    // progress counts it, and the allocation that did not fit — what the CLI names.
    void capacityFailureUnderMpirunNamesTheAllocation() {
        SKIP_IF_MISSING(missingForMpirun());
        LivePage page;
        QStringList status;
        QObject::connect(&page, &RanksPage::statusMessage, &page,
                         [&status](const QString& m) { status << m; });
        RunRequest r = tinyRequest(2);
        r.ranks = 4;
        r.capacityBytes =
            1500000; // fits the states, not the first step's workspaces (either GEMM path)
        QVERIFY(page.runRequest(r));
        // Warned as it starts, not only after the failure.
        QVERIFY2(!status.isEmpty() && status.first().contains(QStringLiteral("exceeds the budget")),
                 qPrintable(status.join(QLatin1Char('|'))));
        QCOMPARE(page.waitForEnd(60000), RunSession::Outcome::Failed);
        const QString banner = page.bannerText();
        QVERIFY2(banner.contains(QStringLiteral("out of device memory")) &&
                     banner.contains(QStringLiteral("do not fit")) &&
                     banner.contains(QStringLiteral("in step 1")),
                 qPrintable(banner));
        QVERIFY2(!banner.contains(QStringLiteral("step 0")), qPrintable(banner));
    }

    // The settings follow what is loaded: an opened recording replaces the previous run's
    // configuration (and its theory preview) with its own; one the panel cannot show says so.
    void openedRecordingShowsItsSettings() {
        const QString golden =
            QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/golden_zero3_tiny_2r.sstrace");
        if (!QFileInfo::exists(golden)) QSKIP("tests/data/golden_zero3_tiny_2r.sstrace is missing");
        TestPage page;
        RunRequest before;
        before.model = QStringLiteral("small");
        before.ranks = 8;
        before.strategy = plan::Strategy::Ddp;
        before.steps = 5;
        page.configPanel()->setRequest(before);
        const QString previewBefore =
            page.configPanel()->findChild<QLabel*>(QStringLiteral("theoryPreview"))->text();
        QVERIFY(page.openRecording(golden));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        const RunRequest shown = page.configPanel()->request();
        QVERIFY2(shown.model == QStringLiteral("tiny"), qPrintable(page.settingsTitle()));
        QCOMPARE(shown.ranks, 2);
        QCOMPARE(shown.strategy, plan::Strategy::Zero3);
        QCOMPARE(static_cast<std::int64_t>(shown.steps), page.model().info()->steps);
        const QString preview =
            page.configPanel()->findChild<QLabel*>(QStringLiteral("theoryPreview"))->text();
        QVERIFY2(preview != previewBefore && preview.contains(formatCount(static_cast<double>(
                                                 page.model().info()->paramCount))),
                 qPrintable(preview));
        QVERIFY2(page.settingsTitle().contains(QStringLiteral("opened recording")),
                 qPrintable(page.settingsTitle()));

        // A model that is no preset cannot be shown: the title says why and whose settings these
        // are.
        QVERIFY(page.openRecording(page.saveRecording()));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QVERIFY2(
            page.settingsTitle().contains(QStringLiteral("\"model\" names no choice of tiny")) &&
                page.settingsTitle().contains(QStringLiteral("('synthetic')")),
            qPrintable(page.settingsTitle()));
    }
};

QTEST_MAIN(RanksRunControlTest)
#include "ranks_run_control_test.moc"
