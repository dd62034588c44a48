// The real `shardscope` binary's lesson flags: --list-lessons, --lesson ID --lesson-step K
// --screenshot F, and --size WxH for any screenshot; bad values are one line and exit 2 with
// no file written.
#include "gui_process.h"

#include <QImage>
#include <QProcess>
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
