// The real `shardscope --screenshot` binary: a 1400×900 PNG with real content, and exit code 2
// with one line on stderr for bad arguments.
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode;
    QString stderrText;
};

Run runGui(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope"), args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        return {-1, QStringLiteral("timed out")};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardError())};
}

// Ignores Qt's own platform chatter (XDG_RUNTIME_DIR, propagateSizeHints) on stderr.
QStringList ourLines(const QString& stderrText) {
    QStringList lines;
    for (const QString& l : stderrText.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (l.startsWith(QLatin1String("shardscope:"))) lines << l;
    return lines;
}

} // namespace

class ScreenshotTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rendersCalculator_data() {
        QTest::addColumn<QString>("lang");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }
    void rendersCalculator() {
        QFETCH(QString, lang);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("calc.png"));
        const Run r = runGui({QStringLiteral("--screenshot"), file, QStringLiteral("--view"), QStringLiteral("calculator"),
                              QStringLiteral("--lang"), lang});
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(1400, 900));
        // Charts, palette and text: far more than a blank or single-colour window.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 3)
            for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 200, qPrintable(QString::number(colours.size())));
    }

    void badArgumentsExitTwo_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown view") << QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                                                     QStringLiteral("--view"), QStringLiteral("bogus")}
                                      << QStringLiteral("unknown view 'bogus'");
        QTest::newRow("unknown flag") << QStringList{QStringLiteral("--frobnicate")} << QStringLiteral("frobnicate");
        QTest::newRow("unknown language") << QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                                                         QStringLiteral("--lang"), QStringLiteral("xx")}
                                          << QStringLiteral("unknown language 'xx'");
        QTest::newRow("missing value") << QStringList{QStringLiteral("--screenshot")} << QStringLiteral("screenshot");
        QTest::newRow("unwritable file") << QStringList{QStringLiteral("--screenshot"), QStringLiteral("/nonexistent-dir/x.png")}
                                         << QStringLiteral("cannot write");
    }
    void badArgumentsExitTwo() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const Run r = runGui(args);
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.stderrText);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(message), qPrintable(lines.first()));
        QVERIFY(!QFile::exists(QStringLiteral("x.png")));
    }
};

QTEST_GUILESS_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
