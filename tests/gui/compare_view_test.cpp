// Compare mode: reports as the worker writes them (backend/train/report.cpp) parse into the
// numbers the charts show; parity badges say bitwise equal / |Δ| / digest against DDP.
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "compare/compare_page.h"

#include "compare/compare_view.h"
#include "core/error.h"

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

std::string report(const std::string& strategy, std::uint64_t shard, std::uint64_t peak, const std::string& digest,
                   const std::string& extra = "") {
    std::string ranks;
    for (int r = 0; r < 4; ++r) {
        if (r) ranks += ",";
        ranks += "{\"rank\":" + std::to_string(r) + ",\"peak_bytes\":{\"param_shard\":" + std::to_string(shard) +
                 ",\"activation\":1000,\"total\":" + std::to_string(peak + static_cast<std::uint64_t>(r)) +
                 "},\"model_state_bytes\":{\"param_shard\":" + std::to_string(shard) + ",\"adam_m\":" + std::to_string(2 * shard) +
                 "},\"comm_bytes_per_step\":{\"all_gather\":3000}}";
    }
    return "{\"strategy\":\"" + strategy + "\",\"model\":\"tiny\",\"world_size\":4,\"ranks\":[" + ranks +
           "],\"comm_bytes_per_step\":{\"all_gather\":3000,\"reduce_scatter\":1500.5}," +
           "\"theory\":{\"model_state_bytes\":{\"param_shard\":" + std::to_string(shard) + ",\"adam_m\":" + std::to_string(2 * shard) +
           "},\"predicted_peak_bytes\":" + std::to_string(peak) + ",\"comm_bytes_per_step\":{\"all_gather\":3000,\"reduce_scatter\":1500}}," +
           "\"param_digest\":\"" + digest + "\"" + extra + "}";
}

} // namespace

class CompareViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesWorkerReports() {
        const CompareRun r = parseCompareRun(report("zero3", 100, 5000, "abc"));
        QCOMPARE(r.strategy, std::string("zero3"));
        QCOMPARE(r.worldSize, 4);
        QCOMPARE(r.ranks.size(), std::size_t{4});
        QCOMPARE(r.ranks[2].peakTotal, std::uint64_t{5002});
        QCOMPARE(r.peakMax(), std::uint64_t{5003});
        QCOMPARE(r.ranks[1].modelStates[index(Category::AdamM)], std::uint64_t{200});
        QCOMPARE(r.commTotal(), 4500.5);
        QCOMPARE(r.theoryCommTotal(), 4500.0);
        QCOMPARE(r.theoryPeak, std::uint64_t{5000});
        QVERIFY(!r.maxAbsDeltaVsDdp);
        // compare --json: {"runs": [...]}; a bare array; errors name the problem.
        const auto runs = parseCompareRuns("{\"runs\":[" + report("ddp", 400, 9000, "d") + "," + report("zero3", 100, 5000, "d") + "]}");
        QCOMPARE(runs.size(), std::size_t{2});
        QCOMPARE(parseCompareRuns("[" + report("zero2", 1, 2, "x") + "]").size(), std::size_t{1});
        // shardscope-cli compare --json (app/cli/cmd_compare.cpp): reports under "strategies".
        const auto cli = parseCompareRuns("{\"ranks\":4,\"deterministic\":true,\"strategies\":[" + report("ddp", 400, 9000, "d") + "," +
                                          report("zero3", 100, 5000, "d", ",\"max_abs_delta_vs_ddp\":0") + "]}");
        QCOMPARE(cli.size(), std::size_t{2});
        QCOMPARE(cli[1].maxAbsDeltaVsDdp.value_or(-1), 0.0);
        QVERIFY_THROWS_EXCEPTION(Error, parseCompareRuns("{\"runs\":[{\"strategy\":\"ddp\"}]}"));
        QVERIFY_THROWS_EXCEPTION(Error, parseCompareRuns("not json"));
    }

    void parityAgainstDdp() {
        const std::vector<CompareRun> runs = {
            parseCompareRun(report("ddp", 400, 9000, "d1")),
            parseCompareRun(report("zero1", 200, 7000, "d1")),
            parseCompareRun(report("zero2", 150, 6000, "ff")),
            parseCompareRun(report("zero3", 100, 5000, "ff", ",\"max_abs_delta_vs_ddp\":0")),
            parseCompareRun(report("fsdp", 100, 5000, "ff", ",\"max_abs_delta_vs_ddp\":2.5e-7"))};
        QCOMPARE(parityOf(runs[0], runs).kind, Parity::Kind::Reference);
        QCOMPARE(parityOf(runs[1], runs).kind, Parity::Kind::DigestEqual);
        QCOMPARE(parityOf(runs[2], runs).kind, Parity::Kind::DigestDiffers);
        QCOMPARE(parityOf(runs[3], runs).kind, Parity::Kind::BitwiseEqual);
        const Parity fsdp = parityOf(runs[4], runs);
        QCOMPARE(fsdp.kind, Parity::Kind::Delta);
        QCOMPARE(fsdp.delta, 2.5e-7);
        QCOMPARE(parityOf(runs[1], {runs[1]}).kind, Parity::Kind::NoReference);

        CompareView view;
        view.resize(1200, 800);
        view.setRuns(runs);
        const QStringList badges = view.badgeTexts();
        QCOMPARE(badges.size(), 5);
        QVERIFY2(badges[3].contains(QStringLiteral("bitwise equal")), qPrintable(badges[3]));
        QVERIFY2(badges[4].contains(QStringLiteral("2.5e-07")), qPrintable(badges[4]));
        // Ledger: one stacked bar series per category present (param_shard, adam_m), a peak and
        // a theory series; peak chart: one bar series per strategy + one theory line each;
        // comm: all-gather and reduce-scatter stacks + theory markers.
        QCOMPARE(view.ledgerPlot()->plottableCount(), 4);
        QCOMPARE(view.peakPlot()->plottableCount(), 10);
        QCOMPARE(view.commPlot()->plottableCount(), 3);
        auto* bars = qobject_cast<QCPBars*>(view.commPlot()->plottable(0));
        QVERIFY(bars);
        QCOMPARE(bars->data()->size(), 5);
        QCOMPARE(bars->data()->at(0)->value, 3.0); // 3000 B in kB
    }

    // The exposed-communication figure of each strategy, from a report file as the worker
    // writes it: one chip per run, the worst rank's median, explained in the tooltip.
    void showsExposedCommunicationPerStrategy() {
        auto withExposed = [](const std::string& json, double r0, double r1, double top) {
            std::string out = json;
            for (auto [rank, f] : {std::pair{0, r0}, std::pair{1, r1}}) {
                const std::string key = "{\"rank\":" + std::to_string(rank) + ",";
                out.replace(out.find(key), key.size(), key + "\"exposed_comm\":{\"fraction_median\":" + std::to_string(f) +
                                                           ",\"fraction_per_step\":[" + std::to_string(f) + "]},");
            }
            return out.substr(0, out.size() - 1) + ",\"exposed_comm_fraction\":" + std::to_string(top) + "}";
        };
        const std::string file = "{\"ranks\":4,\"strategies\":[" + withExposed(report("ddp", 400, 9000, "d"), 0.05, 0.064, 0.064) +
                                 "," + withExposed(report("zero3", 100, 5000, "d"), 0.471, 0.2, 0.471) + "," +
                                 report("zero2", 150, 6000, "d") + "]}"; // an older report: no figures
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("compare.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(file));
        f.close();

        const auto runs = parseCompareRuns(file);
        QCOMPARE(runs[1].exposedComm.value_or(-1), 0.471);
        QCOMPARE(runs[1].exposedRank, 0);
        QCOMPARE(runs[1].ranks[1].exposedComm.value_or(-1), 0.2);
        QVERIFY(!runs[2].exposedComm.has_value());

        ComparePage page;
        page.resize(1200, 800);
        QString error;
        QVERIFY2(page.openFiles({path}, &error), qPrintable(error));
        const QStringList texts = page.view()->exposedTexts();
        QCOMPARE(texts.size(), 3); // DDP, ZeRO-2, ZeRO-3 (the theory's order)
        QVERIFY2(texts[0].startsWith(QStringLiteral("DDP")) && texts[0].contains(QStringLiteral("6.4%")), qPrintable(texts[0]));
        QVERIFY2(texts[1].contains(QStringLiteral("n/a")), qPrintable(texts[1]));
        QVERIFY2(texts[2].contains(QStringLiteral("47.1%")), qPrintable(texts[2]));
        const QString tip = page.view()->exposedToolTips()[2];
        QVERIFY2(tip.contains(QStringLiteral("no compute hid")) && tip.contains(QStringLiteral("union of the intervals")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("rank 0 waits most")) && tip.contains(QStringLiteral("r1 20.0%")), qPrintable(tip));
        QVERIFY(page.view()->findChild<QWidget*>(QStringLiteral("compareExposedRow"))->isVisibleTo(page.view()));
        // Reports without any figure: the row is hidden.
        page.clear();
        QVERIFY(page.addReport(report("zero1", 200, 7000, "d"), &error));
        QVERIFY(page.view()->exposedTexts().isEmpty());
        QVERIFY(!page.view()->findChild<QWidget*>(QStringLiteral("compareExposedRow"))->isVisibleTo(page.view()));
    }
};

QTEST_MAIN(CompareViewTest)
#include "compare_view_test.moc"
