// Export of charts and views: PNG, SVG and PDF files that are complete (right magic bytes,
// non-trivial size), and a refusal that leaves no file behind.
#include "common/chart_export.h"
#include "common/qcustomplot.h"
#include "compare/compare_view.h"
#include "flows/flow_view.h"
#include "timeline/timeline_view.h"
#include "timeline_test_recording.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

QByteArray head(const QString& path, int n) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.read(n);
}

void checkFormats(QWidget& w, const QString& dir, const QString& stem) {
    QString error;
    const QString png = dir + QLatin1Char('/') + stem + QStringLiteral(".png");
    const QString svg = dir + QLatin1Char('/') + stem + QStringLiteral(".svg");
    const QString pdf =
        dir + QLatin1Char('/') + stem + QStringLiteral(".PDF"); // suffix case does not matter
    QVERIFY2(ChartExport::exportWidget(w, png, &error), qPrintable(error));
    QVERIFY2(ChartExport::exportWidget(w, svg, &error), qPrintable(error));
    QVERIFY2(ChartExport::exportWidget(w, pdf, &error), qPrintable(error));
    QCOMPARE(head(png, 8), QByteArray("\x89PNG\r\n\x1a\n", 8));
    const QImage image(png);
    QCOMPARE(image.size(), w.size() * 2); // exported at twice the screen resolution
    QVERIFY(QFileInfo(svg).size() > 1000);
    QVERIFY(head(svg, 400).contains("<svg"));
    QCOMPARE(head(pdf, 5), QByteArray("%PDF-"));
    QVERIFY(QFileInfo(pdf).size() > 1000);
}

} // namespace

class TimelineExportTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void viewsExportToEveryFormat() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        QTemporaryDir dir;
        TimelineView timeline;
        timeline.resize(900, 400);
        timeline.setModel(model.get());
        timeline.setPlayheadEvent(model->eventCount() / 2);
        checkFormats(timeline, dir.path(), QStringLiteral("timeline"));
        FlowView flows;
        flows.resize(800, 420);
        flows.setModel(model.get());
        flows.setPosition(model->eventCount() / 3);
        checkFormats(flows, dir.path(), QStringLiteral("flows"));
        // The timeline's SVG keeps text as text (a vector export, not a bitmap inside SVG).
        QFile svg(dir.filePath(QStringLiteral("timeline.svg")));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("rank 0"));
        QVERIFY(!text.contains("<image"));
    }

    void plotExportsThroughQCustomPlot() {
        QCustomPlot plot;
        plot.resize(500, 300);
        plot.addGraph()->setData({0, 1, 2}, {1, 3, 2});
        plot.rescaleAxes();
        QTemporaryDir dir;
        checkFormats(plot, dir.path(), QStringLiteral("plot"));
        QString error;
        QVERIFY2(ChartExport::exportPlot(plot, dir.filePath(QStringLiteral("big.png")), &error,
                                         QSize(1000, 600)),
                 qPrintable(error));
        QCOMPARE(QImage(dir.filePath(QStringLiteral("big.png"))).size(), QSize(2000, 1200));
    }

    void refusalsLeaveNoFile() {
        QCustomPlot plot;
        plot.resize(300, 200);
        QTemporaryDir dir;
        QString error;
        const QString bad = dir.filePath(QStringLiteral("chart.bmp"));
        QVERIFY(!ChartExport::exportWidget(plot, bad, &error));
        QVERIFY(error.contains(QStringLiteral(".png")));
        QVERIFY(!QFile::exists(bad));
        const QString missing = dir.filePath(QStringLiteral("no/such/dir/chart.png"));
        QVERIFY(!ChartExport::exportWidget(plot, missing, &error));
        QVERIFY(!QFile::exists(missing));
        QVERIFY(QDir(dir.path())
                    .entryList(QDir::Files | QDir::NoDotAndDotDot)
                    .isEmpty()); // no temp files left
        QCOMPARE(ChartExport::formatFor(QStringLiteral("a.SvG")),
                 std::optional<ExportFormat>(ExportFormat::Svg));
    }
};

QTEST_MAIN(TimelineExportTest)
#include "timeline_export_test.moc"
