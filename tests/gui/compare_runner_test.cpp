// Compare page, "Run all strategies": the real shardscope-cli compare runs DDP, ZeRO-1/2/3 and
// FSDP through mpirun (skipped where the CLI or mpirun is missing), and its report lands in the
// view with bitwise parity badges; a missing CLI is an inline message, never a crash.
#include "compare/compare_page.h"
#include "compare/compare_runner.h"
#include "compare/compare_view.h"
#include "fake_cli.h"
#include "launch/mpirun.h"
#include "launch/process_tree.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {
const QString kCli = QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope-cli");
}

class CompareRunnerTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void argumentsAreTheCliContract() {
        CompareRunner runner;
        runner.setRanks(3);
        runner.setModel(QStringLiteral("small"));
        runner.setSteps(2);
        runner.setMpiUnavailable(QString()); // as where mpirun is found: processes by default
        QCOMPARE(
            runner.arguments(QStringLiteral("/tmp/x.json")),
            (QStringList{"compare", "--ranks", "3", "--model", "small", "--steps", "2",
                         "--strategies", "ddp,zero1,zero2,zero3,fsdp", "--json", "/tmp/x.json"}));
        runner.setThreads(true);
        QCOMPARE(runner.arguments(QStringLiteral("/tmp/x.json")).last(),
                 QStringLiteral("--shared-device"));
        runner.setThreads(false);
        runner.setMpiUnavailable(QStringLiteral("mpirun not found")); // no mpirun: threads, locked
        QVERIFY(runner.threads());
        QVERIFY(runner.arguments(QStringLiteral("/tmp/x.json"))
                    .contains(QStringLiteral("--shared-device")));
    }

    void missingCliIsAnInlineMessage() {
        ComparePage page;
        page.resize(1200, 800);
        page.runner()->setCliPath(QStringLiteral("/nonexistent/shardscope-cli"));
        page.runner()->start();
        QVERIFY(!page.runner()->isRunning());
        QVERIFY2(
            page.runner()->errorText().contains(QStringLiteral("shardscope-cli was not found")),
            qPrintable(page.runner()->errorText()));
        QVERIFY(page.view()->runs().empty());
    }

    void failingCliShowsItsLastStderrLine() {
        // /bin/sh stands in for a CLI that rejects its input: it cannot open a script named
        // "compare", says so in one stderr line and exits non-zero.
        if (!QFileInfo(QStringLiteral("/bin/sh")).isExecutable()) QSKIP("/bin/sh is missing");
        ComparePage page;
        page.runner()->setCliPath(QStringLiteral("/bin/sh"));
        page.runner()->start();
        QTRY_VERIFY_WITH_TIMEOUT(!page.runner()->isRunning(), 10000);
        QVERIFY2(page.runner()->errorText().contains(QStringLiteral("compare")),
                 qPrintable(page.runner()->errorText()));
        QVERIFY(page.view()->runs().empty());
    }

    // A job that ran and died: the banner phrases the CLI's typed ending (--ending), not its text.
    void failedJobShowsTheTypedEnding() {
        QTemporaryDir dir;
        const QString cli = testing::writeFakeCli(dir, testing::kRank2KilledInStep3);
        QVERIFY(!cli.isEmpty());
        ComparePage page;
        page.runner()->setCliPath(cli);
        page.runner()->start();
        QTRY_VERIFY_WITH_TIMEOUT(!page.runner()->isRunning(), 10000);
        QCOMPARE(page.runner()->errorText(), QStringLiteral("Rank 2 exited (signal 9) in step 3"));
        QVERIFY(page.view()->runs().empty());
    }

    // "Run all strategies" can be cancelled: the button reads Stop from the moment the CLI
    // starts, and Escape ends the CLI and every process of its current job within 5 s.
    void escapeCancelsRunAll() {
        if (!QFileInfo(kCli).isExecutable())
            QSKIP("build/bin/shardscope-cli is missing: build the shardscope-cli target to run "
                  "comparisons");
        ComparePage page;
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        page.runner()->setCliPath(kCli);
        page.runner()->setThreads(true);
        page.runner()->setRanks(2);
        page.runner()->setModel(QStringLiteral("tiny"));
        page.runner()->setSteps(1000);
        page.runner()->start();
        QVERIFY(page.runner()->isRunning());
        QCOMPARE(page.runner()->runButtonText(), QStringLiteral("Stop"));
        const auto cli = static_cast<pid_t>(page.runner()->processId());
        QVERIFY(cli > 0);
        // The first job's worker (slow on a busy machine) — not the CLI's short-lived probes.
        const auto workerRuns = [cli] {
            for (const launch::ProcessId& p : launch::descendantPids(cli)) {
                QFile comm(QStringLiteral("/proc/%1/comm").arg(p.pid));
                if (comm.open(QIODevice::ReadOnly) && comm.readAll().startsWith("shardscope-work"))
                    return true;
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(workerRuns(), 90000);
        QTest::qWait(300);
        std::vector<launch::ProcessId> tree = launch::descendantPids(cli);
        tree.push_back({cli, 0});
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(&page, Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!page.runner()->isRunning(), 5000);
        const auto gone = [&tree] {
            return std::none_of(tree.begin(), tree.end(),
                                [](const launch::ProcessId& p) { return ::kill(p.pid, 0) == 0; });
        };
        QTRY_VERIFY_WITH_TIMEOUT(gone(),
                                 std::max<int>(1, 5000 - static_cast<int>(clock.elapsed())));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(page.runner()->progressText(), QStringLiteral("Stopped."));
        QCOMPARE(page.runner()->runButtonText(), QStringLiteral("Run"));
        QVERIFY(page.runner()->errorText().isEmpty());
        QVERIFY(page.view()->runs().empty());
    }

    void runsEveryStrategyWithTheRealCli_data() {
        QTest::addColumn<bool>("threads");
        QTest::newRow("mpirun") << false;
        QTest::newRow("threads") << true;
    }

    void runsEveryStrategyWithTheRealCli() {
        QFETCH(bool, threads);
        if (!QFileInfo(kCli).isExecutable())
            QSKIP("build/bin/shardscope-cli is missing: build the shardscope-cli target to run "
                  "comparisons");
        if (!threads && !launch::findExecutable("mpirun"))
            QSKIP("mpirun is not on PATH: install OpenMPI to run comparisons");
        ComparePage page;
        page.resize(1200, 800);
        page.runner()->setCliPath(kCli);
        page.runner()->setThreads(threads);
        page.runner()->setRanks(2);
        page.runner()->setModel(QStringLiteral("tiny"));
        page.runner()->setSteps(1);
        page.runner()->start();
        QVERIFY(page.runner()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!page.runner()->isRunning(), 120000);
        QVERIFY2(page.runner()->errorText().isEmpty(), qPrintable(page.runner()->errorText()));
        QCOMPARE(page.view()->runs().size(), std::size_t{5});
        const QStringList badges = page.view()->badgeTexts();
        QCOMPARE(badges.size(), 5);
        QVERIFY2(badges[0].contains(QStringLiteral("reference")), qPrintable(badges[0]));
        for (int i = 1; i < 5; ++i)
            QVERIFY2(badges[i].contains(QStringLiteral("bitwise")), qPrintable(badges[i]));
        QVERIFY2(page.runner()->progressText().contains(QStringLiteral("Done")),
                 qPrintable(page.runner()->progressText()));
        QCOMPARE(page.view()->exposedTexts().size(),
                 5); // every run reports its exposed communication
    }
};

QTEST_MAIN(CompareRunnerTest)
#include "compare_runner_test.moc"
