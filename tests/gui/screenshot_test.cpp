// The real `shardscope --screenshot` binary: a 1400×900 PNG with real content, and exit code 2
// with one line on stderr for bad arguments.
#include "common/category_palette.h"
#include "gui_process.h"
#include "protocol/protocol.h"
#include "synthetic_stream.h"

#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>

namespace {

using Run = shardscope::testing::GuiRun;
using shardscope::testing::ourLines;
using shardscope::testing::runGui;

// Charts, palette and text: far more than a blank or single-colour window.
int colourCount(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    return static_cast<int>(colours.size());
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
        const Run r = runGui({QStringLiteral("--screenshot"), file, QStringLiteral("--view"),
                              QStringLiteral("calculator"), QStringLiteral("--lang"), lang});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(1400, 900));
        // Charts, palette and text: far more than a blank or single-colour window.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 3)
            for (int x = 0; x < image.width(); x += 3)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 200, qPrintable(QString::number(colours.size())));
        // Batch mode's stderr carries no libpng or platform chatter.
        QVERIFY2(!r.err.contains(QStringLiteral("propagateSizeHints")), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("libpng")), qPrintable(r.err));
    }

    // The suffix names the format written; other suffixes are refused before anything runs.
    void writesTheFormatTheSuffixNames_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("magic");
        QTest::newRow("png") << QStringLiteral("x.png") << QByteArray("\x89PNG");
        QTest::newRow("jpg") << QStringLiteral("x.jpg") << QByteArray("\xff\xd8\xff");
        QTest::newRow("JPEG") << QStringLiteral("x.JPEG") << QByteArray("\xff\xd8\xff");
        QTest::newRow("bmp") << QStringLiteral("x.bmp") << QByteArray("BM");
    }
    void writesTheFormatTheSuffixNames() {
        QFETCH(QString, name);
        QFETCH(QByteArray, magic);
        QTemporaryDir dir;
        const QString file = dir.filePath(name);
        const Run r = runGui({QStringLiteral("--screenshot"), file, QStringLiteral("--view"),
                              QStringLiteral("calculator")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.read(magic.size()) == magic, qPrintable(name));
    }
    void refusesOtherSuffixes() {
        QTemporaryDir dir;
        for (const QString& name :
             {QStringLiteral("x.gif"), QStringLiteral("x.txt"), QStringLiteral("x")}) {
            const QString file = dir.filePath(name);
            const Run r = runGui({QStringLiteral("--screenshot"), file, QStringLiteral("--view"),
                                  QStringLiteral("calculator")});
            QCOMPARE(r.exitCode, 2);
            const QStringList lines = ourLines(r.err);
            QCOMPARE(lines.size(), 1);
            QVERIFY2(lines.first().contains(QStringLiteral(".png")), qPrintable(lines.first()));
            QVERIFY(!QFile::exists(file));
        }
    }

    // The screenshot never replaces a special file (a FIFO, a link to a device) or the recording
    // it is made of: one line, exit 2, both left as they were.
    void screenshotRefusesSpecialFilesAndItsInput() {
        QTemporaryDir dir;
        const QString recording = dir.filePath(QStringLiteral("run.png"));
        shardscope::testing::SyntheticRun run;
        std::ofstream(recording.toStdString(), std::ios::binary)
            << shardscope::testing::syntheticStream(run);
        const QString fifo = dir.filePath(QStringLiteral("fifo.png"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        const QString device = dir.filePath(QStringLiteral("null.png"));
        QVERIFY(QFile::link(QStringLiteral("/dev/null"), device));
        const QString alias = dir.filePath(QStringLiteral("alias.png"));
        QVERIFY(QFile::link(recording, alias));
        for (const QString& file : {fifo, device, recording, alias}) {
            const Run r =
                runGui({QStringLiteral("--open"), recording, QStringLiteral("--view"),
                        QStringLiteral("timeline"), QStringLiteral("--screenshot"), file});
            QCOMPARE(r.exitCode, 2);
            QCOMPARE(ourLines(r.err).size(), 1);
        }
        struct stat st {};
        QCOMPARE(::stat(fifo.toLocal8Bit().constData(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode));
        QCOMPARE(::stat("/dev/null", &st), 0);
        QVERIFY(S_ISCHR(st.st_mode));
        QCOMPARE(QFileInfo(recording).size(),
                 static_cast<qint64>(shardscope::testing::syntheticStream(run).size()));
    }

    // --open takes regular files: a FIFO (no writer) or a folder is one line and exit 2, never a
    // hang.
    void openSpecialFileExitsTwo() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("pipe.sstrace"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        for (const QString& path : {fifo, dir.path(), dir.filePath(QStringLiteral("pipe.json"))}) {
            if (path.endsWith(QStringLiteral(".json")))
                QCOMPARE(::mkfifo(path.toLocal8Bit().constData(), 0600), 0);
            const QString file = dir.filePath(QStringLiteral("x.png"));
            const Run r =
                runGui({QStringLiteral("--open"), path, QStringLiteral("--screenshot"), file});
            QCOMPARE(r.exitCode, 2);
            const QStringList lines = ourLines(r.err);
            QCOMPARE(lines.size(), 1);
            // A folder opens as a checkpoint: this one is not one, and the line says so.
            QVERIFY2(lines.first().contains(QStringLiteral("regular file")) ||
                         lines.first().contains(QStringLiteral("directory")) ||
                         (path == dir.path() &&
                          lines.first().contains(QStringLiteral("is not a checkpoint folder"))),
                     qPrintable(lines.first()));
        }
    }

    // A recording whose numbers disagree (one flipped bit of a real file, a world size past the
    // limit) is one line and exit 2, not a crash.
    void hostileRecordingsExitTwo_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        std::ostringstream golden;
        golden << std::ifstream(SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace",
                                std::ios::binary)
                      .rdbuf();
        std::string flipped = golden.str();
        std::string relabelled;
        shardscope::protocol::writeHeader(relabelled);
        shardscope::protocol::StreamDecoder decoder;
        decoder.feed(flipped);
        while (auto r = decoder.next()) {
            if (auto* h = std::get_if<shardscope::protocol::Handshake>(&*r))
                h->configJson.replace(h->configJson.find("\"world_size\":2"), 14,
                                      "\"world_size\":3");
            shardscope::protocol::writeRecord(relabelled, *r);
        }
        QTest::newRow("config world size disagrees")
            << QByteArray::fromStdString(relabelled) << QStringLiteral("world size 3");
        if (const auto at = flipped.find("\"world_size\":2"); at != std::string::npos)
            flipped[at + 13] = '3';
        QTest::newRow("one flipped bit")
            << QByteArray::fromStdString(flipped) << QStringLiteral("damaged at byte 12");
        // Cut at a record boundary after the steps (no report, no End): not a complete run.
        std::string cut;
        shardscope::protocol::writeHeader(cut);
        shardscope::protocol::StreamDecoder steps;
        steps.feed(golden.str());
        while (auto r = steps.next()) {
            if (std::holds_alternative<shardscope::protocol::Report>(*r)) break;
            shardscope::protocol::writeRecord(cut, *r);
        }
        QTest::newRow("cut short")
            << QByteArray::fromStdString(cut) << QStringLiteral("ends before the run finished");
        std::string older = golden.str();
        older[8] = 1; // a recording from before checksums (protocol version 1)
        QTest::newRow("older version")
            << QByteArray::fromStdString(older)
            << QStringLiteral("protocol version 1, but this build reads versions 2 to %1")
                   .arg(shardscope::protocol::kProtocolVersion);
        std::string huge;
        shardscope::protocol::writeHeader(huge);
        shardscope::protocol::writeRecord(huge, shardscope::protocol::Handshake{0, 1 << 24, "{}"});
        for (int s = 0; s < 40; ++s)
            shardscope::protocol::writeRecord(huge, shardscope::protocol::StepSummary{s, 1, 1});
        QTest::newRow("huge world size")
            << QByteArray::fromStdString(huge) << QStringLiteral("world size 16777216");
        std::string negative;
        shardscope::protocol::writeHeader(negative);
        shardscope::protocol::writeRecord(
            negative, shardscope::protocol::Handshake{0, 2, "{\"world_size\":-2}"});
        shardscope::protocol::writeRecord(negative, shardscope::protocol::StepSummary{0, 1, 1});
        QTest::newRow("negative world size")
            << QByteArray::fromStdString(negative) << QStringLiteral("world");
    }
    void hostileRecordingsExitTwo() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString recording = dir.filePath(QStringLiteral("hostile.sstrace"));
        QFile out(recording);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes);
        out.close();
        const QString file = dir.filePath(QStringLiteral("x.png"));
        const Run r =
            runGui({QStringLiteral("--open"), recording, QStringLiteral("--screenshot"), file});
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(message), qPrintable(lines.first()));
        QVERIFY(!QFile::exists(file));
    }

    void rendersRanksFromARecording() {
        QTemporaryDir dir;
        const QString recording = dir.filePath(QStringLiteral("run.sstrace"));
        shardscope::testing::SyntheticRun run;
        run.ranks = 8;
        std::ofstream(recording.toStdString(), std::ios::binary)
            << shardscope::testing::syntheticStream(run);
        const QString file = dir.filePath(QStringLiteral("ranks.png"));
        const Run r = runGui({QStringLiteral("--open"), recording, QStringLiteral("--view"),
                              QStringLiteral("ranks"), QStringLiteral("--screenshot"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage image;
        QVERIFY(image.load(file));
        QCOMPARE(image.size(), QSize(1400, 900));
        QVERIFY2(colourCount(image) > 200, qPrintable(QString::number(colourCount(image))));
        // Every ledger colour of a ZeRO-3 step is on screen (the shards and a gathered unit).
        using shardscope::Category;
        using shardscope::widgets::categoryColor;
        for (QRgb c :
             {categoryColor(Category::ParamShard).rgb(), categoryColor(Category::ParamFull).rgb(),
              categoryColor(Category::MasterFp32).rgb(),
              categoryColor(Category::Activation).rgb()}) {
            bool found = false;
            for (int y = 0; y < image.height() && !found; y += 2)
                for (int x = 0; x < image.width() && !found; x += 2)
                    found = image.pixel(x, y) == c;
            QVERIFY2(found, qPrintable(QString::number(c, 16)));
        }
    }

    void rendersTheDefaultRun() {
        if (!QFileInfo(QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope-worker")).isExecutable())
            QSKIP("build/bin/shardscope-worker is missing: build the worker target to render a "
                  "live run");
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("live.png"));
        const Run r = runGui({QStringLiteral("--run-default"), QStringLiteral("--after-steps"),
                              QStringLiteral("2"), QStringLiteral("--screenshot"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImage image;
        QVERIFY(image.load(file));
        QVERIFY(colourCount(image) > 200);
    }

    void brokenRecordingExitsTwo() {
        QTemporaryDir dir;
        const QString recording = dir.filePath(QStringLiteral("bad.sstrace"));
        std::string bytes = shardscope::testing::syntheticStream({});
        bytes.resize(bytes.size() - 10);
        std::ofstream(recording.toStdString(), std::ios::binary) << bytes;
        const QString file = dir.filePath(QStringLiteral("bad.png"));
        const Run r =
            runGui({QStringLiteral("--open"), recording, QStringLiteral("--screenshot"), file});
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(QStringLiteral("truncated")), qPrintable(lines.first()));
        QVERIFY(!QFile::exists(file));
    }

    void badArgumentsExitTwo_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown view")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                           QStringLiteral("--view"), QStringLiteral("bogus")}
            << QStringLiteral("unknown view 'bogus'");
        QTest::newRow("unknown flag")
            << QStringList{QStringLiteral("--frobnicate")} << QStringLiteral("frobnicate");
        QTest::newRow("unknown language")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                           QStringLiteral("--lang"), QStringLiteral("xx")}
            << QStringLiteral("unknown language 'xx'");
        QTest::newRow("missing value")
            << QStringList{QStringLiteral("--screenshot")} << QStringLiteral("screenshot");
        QTest::newRow("bad step count")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                           QStringLiteral("--run-default"), QStringLiteral("--after-steps"),
                           QStringLiteral("zero")}
            << QStringLiteral("--after-steps");
        QTest::newRow("unwritable file")
            << QStringList{QStringLiteral("--screenshot"), QStringLiteral("/nonexistent-dir/x.png")}
            << QStringLiteral("cannot write");
    }
    void badArgumentsExitTwo() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const Run r = runGui(args);
        QCOMPARE(r.exitCode, 2);
        const QStringList lines = ourLines(r.err);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(message), qPrintable(lines.first()));
        QVERIFY(!QFile::exists(QStringLiteral("x.png")));
    }
};

QTEST_GUILESS_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
