// The GUI's one supervisor of shardscope-cli (run/cli_process.h): progress is the CLI's JSON
// events, never its human text; the typed ending is read from the folder it owns; Stop ends the
// whole process tree even when the CLI ignores SIGTERM.
#include "launch/process_tree.h"
#include "run/cli_process.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

QString writeScript(const QTemporaryDir& dir, const QByteArray& body) {
    const QString path = dir.filePath(QStringLiteral("fake-cli"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write("#!/bin/sh\n" + body);
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

} // namespace

class CliProcessTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void progressIsTheJsonEventsAndTheEndingIsTyped() {
        QTemporaryDir dir;
        // Human text and a JSON object that is no event are skipped; the ending goes where
        // --ending says; the arguments end in the supervisor's own.
        const QString cli = writeScript(
            dir, "echo 'compare: zero2 on 4 ranks …'\n"
                 "echo '{\"event\":\"job\",\"strategy\":\"zero2\",\"index\":1,\"jobs\":2}'\n"
                 "echo '{\"no\":\"event\"}'\n"
                 "while [ $# -gt 0 ]; do\n"
                 "  if [ \"$1\" = --ending ]; then shift; echo "
                 "'{\"kind\":\"completed\",\"cause\":\"\",\"completed_steps\":4}' > \"$1\"; fi\n"
                 "  if [ \"$1\" = --progress ]; then shift; echo \"progress $1\" >&2; fi\n"
                 "  shift\n"
                 "done\n"
                 "exit 0\n");
        CliProcess process;
        QString why;
        const QString folder = process.prepareFolder(&why);
        QVERIFY2(!folder.isEmpty(), qPrintable(why));
        QVERIFY((QFile::permissions(folder) & (QFile::ReadGroup | QFile::ReadOther)) == 0);
        QSignalSpy events(&process, &CliProcess::progress);
        QSignalSpy finished(&process, &CliProcess::finished);
        QVERIFY(process.start(cli, {QStringLiteral("compare")}));
        QVERIFY(finished.wait(10000));
        QCOMPARE(events.size(), 1);
        const QJsonObject event = events.at(0).at(0).value<QJsonObject>();
        QCOMPARE(event.value(QStringLiteral("strategy")).toString(), QStringLiteral("zero2"));
        QCOMPARE(process.lastErrorLine(), QStringLiteral("progress json"));
        QVERIFY(process.ending().has_value());
        QCOMPARE(process.ending()->kind, launch::EndingKind::Completed);
        QCOMPARE(process.exitCode(), 0);
        process.releaseFolder();
        QVERIFY(!QFile::exists(folder));
    }

    // A CLI that ignores SIGTERM (and its child, which inherits that) is killed with its whole
    // tree once the grace is over.
    void stopEndsTheTreeOfACliThatIgnoresSigterm() {
        QTemporaryDir dir;
        const QString cli = writeScript(dir, "trap '' TERM\nsleep 300 &\nwait\n");
        CliProcess process;
        QString why;
        QVERIFY(!process.prepareFolder(&why).isEmpty());
        QSignalSpy finished(&process, &CliProcess::finished);
        QVERIFY(process.start(cli, {}));
        QTRY_VERIFY_WITH_TIMEOUT(process.processId() > 0, 5000);
        const auto pid = static_cast<pid_t>(process.processId());
        QTRY_VERIFY_WITH_TIMEOUT(!launch::descendantPids(pid).empty(), 5000);
        std::vector<launch::ProcessId> tree = launch::descendantPids(pid);
        process.stop();
        QVERIFY(process.stopRequested());
        QVERIFY(finished.wait(CliProcess::kGraceMs + 5000));
        QTRY_VERIFY_WITH_TIMEOUT(
            std::none_of(tree.begin(), tree.end(),
                         [](const launch::ProcessId& p) { return ::kill(p.pid, 0) == 0; }),
            3000);
    }

    // A GUI killed with SIGKILL leaves its folder (the socket, the ending): the next supervisor
    // sweeps it, and only folders whose process is gone.
    void foldersOfAKilledGuiAreSwept() {
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        QVERIFY(child > 0);
        ::waitpid(child, nullptr, 0); // its pid is free now: a GUI that is gone
        const QString dead = QStringLiteral("/tmp/shardscope-gui-%1-Ab3dEf").arg(child);
        const QString alive = QStringLiteral("/tmp/shardscope-gui-%1-Xy9zQw").arg(::getppid());
        QVERIFY(QDir().mkpath(dead) && QDir().mkpath(alive));
        CliProcess process;
        QString why;
        const QString folder = process.prepareFolder(&why);
        QVERIFY2(!folder.isEmpty(), qPrintable(why));
        QVERIFY(folder.startsWith(QStringLiteral("/tmp/shardscope-gui-%1-").arg(::getpid())));
        QVERIFY(!QFileInfo::exists(dead));
        QVERIFY(QFileInfo::exists(alive));
        QDir(alive).removeRecursively();
        process.releaseFolder();
        QVERIFY(!QFileInfo::exists(folder));
    }

    void aProgramThatDoesNotStartIsSaid() {
        CliProcess process;
        QString why;
        QVERIFY(!process.prepareFolder(&why).isEmpty());
        QSignalSpy finished(&process, &CliProcess::finished);
        QVERIFY(process.start(QStringLiteral("/nonexistent/shardscope-cli"), {}));
        QVERIFY(finished.wait(5000));
        QVERIFY(process.failedToStart());
        QVERIFY(!process.lastErrorLine().isEmpty());
    }
};

QTEST_MAIN(CliProcessTest)
#include "cli_process_test.moc"
