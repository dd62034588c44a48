// The real `shardscope` binary's lesson flags: --list-lessons, --lesson ID --lesson-step K
// --screenshot F, and --size WxH for any screenshot; bad values are one line and exit 2 with
// no file written.
#include "gui_process.h"

#include <QDir>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = shardscope::testing::GuiRun;
using shardscope::testing::ourLines;
using shardscope::testing::runGui;

} // namespace

class LessonFlagsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void listsLessons() {
        const Run r = runGui(
            {QStringLiteral("--list-lessons"), QStringLiteral("--lang"), QStringLiteral("en")});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(lines.size() >= 5, qPrintable(r.out));
        QVERIFY(lines.first().startsWith(QStringLiteral("ledger16\t1. The 16-byte ledger")));
        for (const char* id : {"zero-stages\t", "unit-cycle\t", "peak\t", "fsdp-vs-zero3\t"})
            QVERIFY2(r.out.contains(QLatin1String(id)), id);
        const Run zh = runGui(
            {QStringLiteral("--list-lessons"), QStringLiteral("--lang"), QStringLiteral("zh_CN")});
        QCOMPARE(zh.exitCode, 0);
        QVERIFY2(zh.out.contains(QStringLiteral("账本")), qPrintable(zh.out));
    }

    void rendersALessonStepAtTheGivenSize_data() {
        QTest::addColumn<QString>("lang");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }
    void rendersALessonStepAtTheGivenSize() {
        QFETCH(QString, lang);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("lesson.png"));
        const Run r =
            runGui({QStringLiteral("--lesson"), QStringLiteral("zero-stages"),
                    QStringLiteral("--lesson-step"), QStringLiteral("4"), QStringLiteral("--size"),
                    QStringLiteral("1024x700"), QStringLiteral("--lang"), lang,
                    QStringLiteral("--screenshot"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(1024, 700));
    }

    // --size applies to every screenshot, not only lessons.
    void sizeAppliesToAnyScreenshot() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("calc.png"));
        const Run r = runGui({QStringLiteral("--view"), QStringLiteral("calculator"),
                              QStringLiteral("--size"), QStringLiteral("1920x1080"),
                              QStringLiteral("--screenshot"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(1920, 1080));
    }

    // Options that only print work without any display (a server, CI, ssh without X).
    void printingOptionsNeedNoDisplay() {
        const Run help = runGui({QStringLiteral("--help")}, /*headless=*/true);
        QVERIFY2(help.exitCode == 0, qPrintable(help.err));
        QVERIFY2(help.out.contains(QStringLiteral("--screenshot")), qPrintable(help.out));
        const Run version = runGui({QStringLiteral("--version")}, true);
        QVERIFY2(version.exitCode == 0, qPrintable(version.err));
        const Run lessons = runGui(
            {QStringLiteral("--list-lessons"), QStringLiteral("--lang"), QStringLiteral("en")},
            true);
        QVERIFY2(lessons.exitCode == 0, qPrintable(lessons.err));
        QVERIFY2(lessons.out.startsWith(QStringLiteral("ledger16\t")), qPrintable(lessons.out));
    }

    // A size the window cannot be laid out at is refused before anything renders, naming the
    // smallest that can be; that smallest size then renders.
    void sizeBelowTheLayoutIsRefusedUpFront() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("small.png"));
        const Run r = runGui({QStringLiteral("--view"), QStringLiteral("calculator"),
                              QStringLiteral("--size"), QStringLiteral("800x600"),
                              QStringLiteral("--screenshot"), file});
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(QStringLiteral("--size 800x600 is smaller")),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(file));
        static const QRegularExpression least(QStringLiteral("at least ([0-9]+)x([0-9]+)"));
        const QRegularExpressionMatch m = least.match(lines.first());
        QVERIFY2(m.hasMatch(), qPrintable(lines.first()));
        const Run fits =
            runGui({QStringLiteral("--view"), QStringLiteral("calculator"),
                    QStringLiteral("--size"), m.captured(1) + QLatin1Char('x') + m.captured(2),
                    QStringLiteral("--screenshot"), file});
        QVERIFY2(fits.exitCode == 0, qPrintable(fits.err));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(m.captured(1).toInt(), m.captured(2).toInt()));
    }

    // A screenshot onto a full disk (a 64 KiB tmpfs in a private mount namespace: root only)
    // names the cause, not libpng's "Unknown error".
    void aFullDiskIsNamed() {
        QTemporaryDir dir;
        const QString disk = dir.filePath(QStringLiteral("disk"));
        QVERIFY(QDir().mkpath(disk));
        const QString file = disk + QStringLiteral("/shot.png");
        const Run probe =
            runGui({QStringLiteral("--version")}, false, QStringLiteral("unshare"),
                   {QStringLiteral("-m"), QStringLiteral("sh"), QStringLiteral("-c"),
                    QStringLiteral("mount -t tmpfs -o size=64k none '%1' && exec \"$0\" \"$@\"")
                        .arg(disk)});
        if (probe.exitCode != 0) QSKIP("no tmpfs mount here (needs root and mount namespaces)");
        const Run r = runGui(
            {QStringLiteral("--view"), QStringLiteral("calculator"), QStringLiteral("--size"),
             QStringLiteral("1920x1080"), QStringLiteral("--screenshot"), file},
            false, QStringLiteral("unshare"),
            {QStringLiteral("-m"), QStringLiteral("sh"), QStringLiteral("-c"),
             QStringLiteral("mount -t tmpfs -o size=64k none '%1' && exec \"$0\" \"$@\"")
                 .arg(disk)});
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(
            lines.first().contains(QStringLiteral("no space left on device"), Qt::CaseInsensitive),
            qPrintable(r.err));
    }

    void badValuesExitTwo_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("size word") << QStringList{QStringLiteral("--size"), QStringLiteral("big")}
                                   << QStringLiteral("--size");
        QTest::newRow("size half") << QStringList{QStringLiteral("--size"), QStringLiteral("1024x")}
                                   << QStringLiteral("--size");
        QTest::newRow("size small")
            << QStringList{QStringLiteral("--size"), QStringLiteral("100x100")}
            << QStringLiteral("--size");
        QTest::newRow("size huge")
            << QStringList{QStringLiteral("--size"), QStringLiteral("99999x700")}
            << QStringLiteral("--size");
        QTest::newRow("size negative")
            << QStringList{QStringLiteral("--size"), QStringLiteral("-1024x700")}
            << QStringLiteral("--size");
        QTest::newRow("unknown lesson")
            << QStringList{QStringLiteral("--lesson"), QStringLiteral("nope")}
            << QStringLiteral("unknown lesson 'nope'");
        QTest::newRow("step 0") << QStringList{QStringLiteral("--lesson"), QStringLiteral("peak"),
                                               QStringLiteral("--lesson-step"), QStringLiteral("0")}
                                << QStringLiteral("--lesson-step");
        QTest::newRow("step past end")
            << QStringList{QStringLiteral("--lesson"), QStringLiteral("peak"),
                           QStringLiteral("--lesson-step"), QStringLiteral("99")}
            << QStringLiteral("between 1 and");
        QTest::newRow("step word")
            << QStringList{QStringLiteral("--lesson"), QStringLiteral("peak"),
                           QStringLiteral("--lesson-step"), QStringLiteral("two")}
            << QStringLiteral("--lesson-step");
        QTest::newRow("step alone")
            << QStringList{QStringLiteral("--lesson-step"), QStringLiteral("2")}
            << QStringLiteral("needs --lesson");
        QTest::newRow("lesson and open")
            << QStringList{QStringLiteral("--lesson"), QStringLiteral("peak"),
                           QStringLiteral("--open"), QStringLiteral("x.sstrace")}
            << QStringLiteral("cannot be combined");
    }
    void badValuesExitTwo() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("x.png"));
        const Run r = runGui(args + QStringList{QStringLiteral("--screenshot"), file});
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(says), qPrintable(lines.first()));
        QVERIFY(!QFile::exists(file));
    }
};

QTEST_MAIN(LessonFlagsTest)
#include "lesson_flags_test.moc"
