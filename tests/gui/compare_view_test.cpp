// Compare mode: reports as the worker writes them (report::toJson) become the charts and the
// parity badges (bitwise equal / |Δ| / digest against DDP). The numbers themselves are tested in
// tests/unit/compare_data_test.cpp.
#include "common/qcustomplot.h"
#include "compare/compare_page.h"
#include "compare/compare_view.h"
#include "core/error.h"
#include "report/report.h"
#include "sample_reports.h"

#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;

using shardscope::testing::reportJson;
using shardscope::testing::typedReport;

class CompareViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The badges say what parityOf says (tests/unit/compare_data_test.cpp); the charts show
    // every run.
    void parityAgainstDdp() {
        const std::vector<report::RunReport> runs = {
            typedReport("ddp", 400, 9000, "d1"), typedReport("zero1", 200, 7000, "d1"),
            typedReport("zero2", 150, 6000, "ff"), typedReport("zero3", 100, 5000, "ff", 0.0),
            typedReport("fsdp", 100, 5000, "ff", 2.5e-7)};
        CompareView view;
        view.resize(1200, 800);
        view.setRuns(runs);
        const QStringList badges = view.badgeTexts();
        QCOMPARE(badges.size(), 5);
        QVERIFY2(badges[3].contains(QStringLiteral("bitwise equal")), qPrintable(badges[3]));
        QVERIFY2(badges[4].contains(QStringLiteral("2.5e-07")), qPrintable(badges[4]));
        // Ledger: one stacked bar series per category present (param_shard, adam_m), a peak and
        // a theory series; peak chart: one bar series per strategy + one theory line each, and
        // one legend entry for all the theory lines (five runs' entries would crowd the legend);
        // comm: all-gather and reduce-scatter stacks + theory markers.
        QCOMPARE(view.ledgerPlot()->plottableCount(), 4);
        QCOMPARE(view.peakPlot()->plottableCount(), 11);
        QCOMPARE(view.peakPlot()->legend->itemCount(), 6);
        QCOMPARE(view.commPlot()->plottableCount(), 3);
        auto* bars = qobject_cast<QCPBars*>(view.commPlot()->plottable(0));
        QVERIFY(bars);
        QCOMPARE(bars->data()->size(), 5);
        QCOMPARE(bars->data()->at(0)->value, 3.0); // 3000 B in kB
    }

    // Runs from the Ranks page land on Compare whatever their configuration: a badge compares a
    // run only with a DDP run of the same model, steps, N, seed, precision, data and batch; a DDP
    // of another model joins as its own group instead of replacing the reference, and the header
    // names every configuration instead of claiming one model.
    void verdictsStayWithinOneConfiguration() {
        ComparePage page;
        page.resize(1200, 800);
        report::RunReport ddp3 = typedReport("ddp", 400, 9000, "d1");
        ddp3.steps = 3;
        report::RunReport zero1 = typedReport("zero1", 200, 7000, "x10");
        zero1.steps = 10;
        page.addReport(ddp3);
        page.addReport(zero1);
        QCOMPARE(page.view()->runs().size(), std::size_t{2});
        QStringList badges = page.view()->badgeTexts();
        QVERIFY2(badges[1].contains(QStringLiteral("no DDP run of the same configuration")),
                 qPrintable(badges.join(QLatin1Char('|'))));
        QVERIFY2(!badges.join(QLatin1Char('|')).contains(QStringLiteral("differ")),
                 qPrintable(badges.join(QLatin1Char('|'))));
        QVERIFY2(page.view()->headerText().contains(QStringLiteral("2 configurations")),
                 qPrintable(page.view()->headerText()));

        // A DDP of another model: its own group, the 3-step tiny DDP stays the reference of its
        // own.
        report::RunReport ddpSmall = typedReport("ddp", 800, 19000, "s");
        ddpSmall.model = "small";
        ddpSmall.steps = 10;
        page.addReport(ddpSmall);
        QCOMPARE(page.view()->runs().size(), std::size_t{3});
        const QString header = page.view()->headerText();
        QVERIFY2(header.contains(QStringLiteral("3 configurations")) &&
                     header.contains(QStringLiteral("model tiny")) &&
                     header.contains(QStringLiteral("model small")),
                 qPrintable(header));
        badges = page.view()->badgeTexts();
        QVERIFY2(badges.filter(QStringLiteral("reference (DDP)")).size() == 2,
                 qPrintable(badges.join(QLatin1Char('|'))));
        QVERIFY2(badges.filter(QStringLiteral("no DDP run of the same configuration")).size() == 1,
                 qPrintable(badges.join(QLatin1Char('|'))));
        // Labels tell the groups apart on the charts too.
        QVERIFY2(page.view()->runLabel(0) != page.view()->runLabel(2),
                 qPrintable(page.view()->runLabel(0)));

        // The comparable DDP arrives: ZeRO-1 is judged against it, and only against it.
        report::RunReport ddp10 = typedReport("ddp", 400, 9000, "x10");
        ddp10.steps = 10;
        page.addReport(ddp10);
        QCOMPARE(page.view()->runs().size(), std::size_t{4});
        badges = page.view()->badgeTexts();
        QVERIFY2(badges.filter(QStringLiteral("bitwise equal to DDP")).size() == 1,
                 qPrintable(badges.join(QLatin1Char('|'))));
        // One configuration only: the header names it once.
        page.clear();
        page.addReport(ddp10);
        page.addReport(zero1);
        QVERIFY2(
            page.view()->headerText().contains(QStringLiteral("model tiny on 4 ranks, 10 steps")) &&
                !page.view()->headerText().contains(QStringLiteral("configurations")),
            qPrintable(page.view()->headerText()));
        QCOMPARE(page.view()->runLabel(1), QStringLiteral("ZeRO-1"));
    }

    // The exposed-communication figure of each strategy, from a report file as the worker
    // writes it: one chip per run, the worst rank's median, explained in the tooltip.
    void showsExposedCommunicationPerStrategy() {
        auto withExposed = [](report::RunReport r, double r0, double r1, double top) {
            r.ranks[0].exposedComm = {r0, {r0}, 0, 0, 0};
            r.ranks[1].exposedComm = {r1, {r1}, 0, 0, 0};
            r.exposedCommFraction = top;
            return r;
        };
        report::CompareReport compare;
        compare.ranks = 4;
        compare.strategies = {withExposed(typedReport("ddp", 400, 9000, "d"), 0.05, 0.064, 0.064),
                              withExposed(typedReport("zero3", 100, 5000, "d"), 0.471, 0.2, 0.471),
                              typedReport("zero2", 150, 6000, "d")}; // no communication exposed
        const std::string file = report::toJson(compare).dump();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("compare.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(file));
        f.close();

        const auto runs = replay::parseCompareRuns(file);
        QCOMPARE(runs[1].exposedCommFraction, 0.471);
        QCOMPARE(replay::exposedRank(runs[1]), 0);
        QCOMPARE(runs[1].ranks[1].exposedComm.fractionMedian, 0.2);
        QCOMPARE(runs[2].exposedCommFraction, 0.0);

        ComparePage page;
        page.resize(1200, 800);
        QString error;
        QVERIFY2(page.openFiles({path}, &error), qPrintable(error));
        const QStringList texts = page.view()->exposedTexts();
        QCOMPARE(texts.size(), 3); // DDP, ZeRO-2, ZeRO-3 (the theory's order)
        QVERIFY2(texts[0].startsWith(QStringLiteral("DDP")) &&
                     texts[0].contains(QStringLiteral("6.4%")),
                 qPrintable(texts[0]));
        QVERIFY2(texts[1].contains(QStringLiteral("0.0%")), qPrintable(texts[1]));
        QVERIFY2(texts[2].contains(QStringLiteral("47.1%")), qPrintable(texts[2]));
        const QString tip = page.view()->exposedToolTips()[2];
        QVERIFY2(tip.contains(QStringLiteral("no compute hid")) &&
                     tip.contains(QStringLiteral("union of the intervals")),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("rank 0 waits most")) &&
                     tip.contains(QStringLiteral("r1 20.0%")),
                 qPrintable(tip));
        QVERIFY(page.view()
                    ->findChild<QWidget*>(QStringLiteral("compareExposedRow"))
                    ->isVisibleTo(page.view()));
        // A report from before reports carried a schema: refused with the file's name and one line.
        nlohmann::json old = nlohmann::json::parse(reportJson("zero1", 200, 7000, "d"));
        old.erase("schema");
        QFile oldFile(dir.filePath(QStringLiteral("old.json")));
        QVERIFY(oldFile.open(QIODevice::WriteOnly));
        oldFile.write(QByteArray::fromStdString(old.dump()));
        oldFile.close();
        QVERIFY(!page.openFiles({oldFile.fileName()}, &error));
        QCOMPARE(error,
                 oldFile.fileName() + QStringLiteral(": report has no schema field (written by an "
                                                     "older ShardScope); re-run to regenerate"));
        // A run of this session joins as its typed report, as the replay read it.
        page.addReport(typedReport("zero1", 200, 7000, "d"));
        QCOMPARE(page.view()->exposedTexts().size(), 4);
    }
};

QTEST_MAIN(CompareViewTest)
#include "compare_view_test.moc"
