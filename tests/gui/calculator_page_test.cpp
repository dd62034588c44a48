// Calculator page: edits reach the chart and the derivation table with the theory engine's
// numbers, recomputes are coalesced, and invalid input is an inline message, not a crash.
#include "calculator/calculator_page.h"
#include "calculator/derivation_model.h"
#include "calculator/mesh_chart.h"
#include "calculator/peak_breakdown.h"
#include "calculator/pipeline_chart.h"
#include "calculator/scaling_chart.h"
#include "cli_process.h"
#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "plan/pipeline.h"
#include "theory/estimate.h"
#include "theory/pipeline.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace shardscope;
using namespace shardscope::widgets;

class CalculatorPageTest : public QObject {
    Q_OBJECT

    template <class T> T* child(CalculatorPage& page, const char* name) {
        T* w = page.findChild<T*>(QLatin1String(name));
        if (!w) qFatal("missing child %s", name);
        return w;
    }

    void selectPreset(CalculatorPage& page, const QString& id) {
        auto* combo = child<QComboBox>(page, "presetCombo");
        const int i = combo->findData(id);
        QVERIFY2(i >= 0, qPrintable(id));
        combo->setCurrentIndex(i);
    }

    void selectStrategy(CalculatorPage& page, plan::Strategy s) {
        auto* combo = child<QComboBox>(page, "strategyCombo");
        combo->setCurrentIndex(combo->findData(static_cast<int>(s)));
    }

    // What the engine says for the page's model, ZeRO-3, bf16, no offload, at N ranks.
    static theory::ModelStates expected(const CalculatorPage& page, int ranks) {
        theory::Scenario s = scenarioFor(page.result()->input, plan::Strategy::Zero3, ranks);
        return theory::modelStates(s);
    }

private Q_SLOTS:
    // The DeepSpeed panel describes the scenario's N (8 ranks: 8 GPUs on 1 node, not 64).
    void deepSpeedPanelFollowsTheRanks() {
        CalculatorPage page;
        auto* ranks = child<QSpinBox>(page, "ranksSpin");
        for (const int n : {8, 12, 3, 64}) {
            ranks->setValue(n);
            QTRY_COMPARE(page.result()->input.ranks, n);
            const int gpus = child<QSpinBox>(page, "gpusPerNodeSpin")->value();
            const int nodes = child<QSpinBox>(page, "nodesSpin")->value();
            QCOMPARE(gpus * nodes, n);
            QVERIFY(gpus <= 8);
            QCOMPARE(page.result()->deepspeed.totalGpus, n);
        }
    }

    void changingNUpdatesChartMarkerAndTable() {
        CalculatorPage page;
        selectPreset(page, QStringLiteral("llama2-7b-like")); // a shape: per-unit padding matters
        selectStrategy(page, plan::Strategy::Zero3);
        auto* ranks = child<QSpinBox>(page, "ranksSpin");
        ranks->setValue(4);
        QTRY_COMPARE(page.result()->input.ranks, 4);
        const double at4 = page.findChild<ScalingChart*>()->markerPosition().y();

        ranks->setValue(64);
        QTRY_COMPARE(page.result()->input.ranks, 64);
        QVERIFY(page.result()->input.shape.has_value());
        const theory::ModelStates want = expected(page, 64);
        const auto device = static_cast<double>(want.perRank.tier(Tier::Device));

        // The ZeRO-3 curve has a point at N = 64 with the engine's bytes, and the marker sits on
        // it.
        auto* chart = page.findChild<ScalingChart*>();
        QCPGraph* zero3 = chart->graphFor(plan::Strategy::Zero3);
        QVERIFY(zero3);
        auto it = zero3->data()->findBegin(64, false);
        QVERIFY(it != zero3->data()->constEnd());
        QCOMPARE(it->key, 64.0);
        QCOMPARE(it->value, device);
        QCOMPARE(chart->markerPosition(), QPointF(64.0, device));
        QVERIFY(at4 > device * 10); // ZeRO-3 divides by N: 16× fewer bytes at 64 than at 4
        QVERIFY(zero3->data()->size() <= 13); // capped: powers of two to 1024 plus N

        // The derivation table lists the engine's lines and its total.
        auto* table = child<QTableView>(page, "derivationTable");
        QAbstractItemModel* model = table->model();
        QCOMPARE(model->rowCount(), static_cast<int>(want.lines.size()) + 1);
        for (int r = 0; r < static_cast<int>(want.lines.size()); ++r)
            QCOMPARE(model->index(r, DerivationModel::BytesCol)
                         .data(DerivationModel::BytesRole)
                         .toULongLong(),
                     want.lines[static_cast<std::size_t>(r)].bytes);
        const int total = model->rowCount() - 1;
        QCOMPARE(model->index(total, DerivationModel::BytesCol)
                     .data(DerivationModel::BytesRole)
                     .toULongLong(),
                 want.perRank.total());
        QCOMPARE(model->index(total, DerivationModel::GbCol).data().toString(),
                 QString::number(static_cast<double>(want.perRank.total()) / 1e9, 'f', 3));
    }

    // The page opens on a real model's units (a shipped Hugging Face config: Llama-2-7B), not a
    // bare count: a bare 7.5B made the whole model one gathered unit, a 31.9 GB peak beside
    // 1.88 GB of states.
    void opensOnARealModelsUnits() {
        CalculatorPage page;
        page.recomputeNow();
        QCOMPARE(child<QComboBox>(page, "presetCombo")->currentData().toString(),
                 QStringLiteral("hf-llama-2-7b"));
        QVERIFY2(page.result()->input.units.size() > 30, // embedding, 32 blocks, head
                 qPrintable(QString::number(page.result()->input.units.size())));
        QVERIFY(page.result()->peak);
        const auto states = page.result()->atN[3].perRank->tier(Tier::Device); // ZeRO-3
        QVERIFY2(
            page.result()->peak->peakBytes < 10 * states,
            qPrintable(QStringLiteral("%1 vs %2").arg(page.result()->peak->peakBytes).arg(states)));
    }

    void zeroPaperTableOneAtN64() {
        CalculatorPage page; // the ZeRO paper's Ψ = 7.5B, N = 64
        auto* preset = child<QComboBox>(page, "presetCombo");
        preset->setCurrentIndex(preset->findData(QStringLiteral("zero-paper-7.5b")));
        page.recomputeNow();
        const auto& atN = page.result()->atN;
        const double want[] = {120e9, 31.40625e9, 16.6406e9, 1.875e9}; // Table 1, N = 64
        for (int stage = 0; stage < 4; ++stage) {
            QVERIFY(atN[static_cast<std::size_t>(stage)].perRank.has_value());
            const auto got = static_cast<double>(
                atN[static_cast<std::size_t>(stage)].perRank->tier(Tier::Device));
            QVERIFY2(std::abs(got - want[stage]) < 1e7, qPrintable(QString::number(got)));
        }
    }

    void spinDragIsCoalescedIntoOneRecompute() {
        CalculatorPage page;
        page.recomputeNow();
        QSignalSpy recomputed(&page, &CalculatorPage::statusMessage);
        auto* ranks = child<QSpinBox>(page, "ranksSpin");
        for (int n = 2; n <= 40; ++n)
            ranks->setValue(n); // one drag, many ticks
        QTRY_COMPARE(page.result()->input.ranks, 40);
        QCOMPARE(recomputed.count(), 1);
    }

    // T beside N: N = T × D, per-rank states of one TP slice over D, TP traffic as its own kind;
    // a T that does not divide N is an inline message.
    void tensorParallelSplitsTheMesh() {
        CalculatorPage page;
        page.show();
        selectPreset(page, QStringLiteral("llama2-7b-like"));
        selectStrategy(page, plan::Strategy::Zero3);
        child<QSpinBox>(page, "ranksSpin")->setValue(64);
        child<QSpinBox>(page, "tensorParallelSpin")->setValue(8);
        QTRY_VERIFY(page.result() && page.result()->input.tensorParallel == 8 &&
                    page.errorText().isEmpty());
        theory::Scenario s = scenarioFor(page.result()->input, plan::Strategy::Zero3, 64);
        QCOMPARE(s.ranks, 8);
        QCOMPARE(s.shape->tp, std::int64_t{8});
        QCOMPARE(page.result()->states.perRank, theory::modelStates(s).perRank);
        const auto& kinds = page.result()->comm.byKind;
        QVERIFY(std::any_of(kinds.begin(), kinds.end(), [](const theory::CommVolume& v) {
            return v.kind == CollectiveOp::TpAllReduce && v.sentBytes > 0;
        }));
        child<QSpinBox>(page, "tensorParallelSpin")->setValue(3);
        QTRY_VERIFY(!page.errorText().isEmpty());
        QVERIFY2(page.errorText().contains(QLatin1String("3")) &&
                     page.errorText().contains(QLatin1String("64")),
                 qPrintable(page.errorText()));
    }

    void invalidHybridGroupIsAnInlineError() {
        CalculatorPage page;
        page.show();
        selectStrategy(page, plan::Strategy::FsdpHybridShard);
        child<QSpinBox>(page, "ranksSpin")->setValue(64);
        child<QSpinBox>(page, "hybridGroupSpin")->setValue(3);
        QTRY_VERIFY(!page.errorText().isEmpty());
        QVERIFY2(page.errorText().contains(QLatin1String("3")) &&
                     page.errorText().contains(QLatin1String("64")),
                 qPrintable(page.errorText()));
        QVERIFY(child<QLabel>(page, "calculatorError")->isVisible());
        // The last valid result stays on screen.
        QVERIFY(page.result() && page.result()->error.isEmpty());

        child<QSpinBox>(page, "hybridGroupSpin")->setValue(8);
        QTRY_VERIFY(page.errorText().isEmpty());
        QCOMPARE(page.result()->input.strategy, plan::Strategy::FsdpHybridShard);
        QVERIFY(!child<QLabel>(page, "calculatorError")->isVisible());
    }

    void invalidParameterCountsAreInlineErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << QStringLiteral("0");
        QTest::newRow("nan") << QStringLiteral("nan");
        QTest::newRow("garbage") << QStringLiteral("seven");
        QTest::newRow("too large") << QStringLiteral("1e20");
        QTest::newRow("negative") << QStringLiteral("-5B");
    }
    void invalidParameterCountsAreInlineErrors() {
        QFETCH(QString, text);
        CalculatorPage page;
        page.show();
        selectPreset(page, QStringLiteral("custom"));
        auto* edit = child<QLineEdit>(page, "paramsEdit");
        edit->clear();
        QTest::keyClicks(edit, text);
        QTRY_VERIFY2(!page.errorText().isEmpty(), qPrintable(text));
        edit->clear();
        QTest::keyClicks(edit, QStringLiteral("1.3B"));
        QTRY_VERIFY(page.errorText().isEmpty());
        QCOMPARE(page.result()->states.paramCount, std::uint64_t{1'300'000'000});
    }

    // "model states 13.4 GB" beside "predicted device peak 119 GB" must come with its terms:
    // a bar and rows (shard + activations + gathered unit(s) + buffers + workspace) that sum
    // to the engine's peak, each with a formula.
    void peakIsExplainedTermByTerm() {
        CalculatorPage page;
        selectPreset(page, QStringLiteral("llama2-7b-like"));
        selectStrategy(page, plan::Strategy::Zero3);
        child<QSpinBox>(page, "ranksSpin")->setValue(8);
        QTRY_COMPARE(page.result()->input.ranks, 8);
        QVERIFY(page.result()->peak.has_value());
        const std::uint64_t peak = page.result()->peak->peakBytes;
        QVERIFY(peak > page.result()->states.perRank.tier(Tier::Device));
        auto* table = child<QTableWidget>(page, "peakTable");
        QCOMPARE(table->rowCount(), 7); // six terms and the total
        std::uint64_t sum = 0;
        QStringList names;
        for (int r = 0; r + 1 < table->rowCount(); ++r) {
            sum += table->item(r, 2)->data(Qt::UserRole).toULongLong();
            names << table->item(r, 0)->text();
            QVERIFY(!table->item(r, 1)->text().isEmpty()); // every term has its formula
        }
        QCOMPARE(sum, peak);
        QCOMPARE(table->item(table->rowCount() - 1, 2)->data(Qt::UserRole).toULongLong(), peak);
        for (const char* term : {"Model states (shard)", "Activations", "Gathered unit(s)",
                                 "Communication buffers", "Workspace"})
            QVERIFY2(names.contains(QLatin1String(term)), term);
        const std::vector<PeakTerm> terms = peakTerms(*page.result());
        const auto bytesOf = [&](PeakTermKind k) {
            for (const PeakTerm& t : terms)
                if (t.kind == k) return t.bytes;
            return std::uint64_t{0};
        };
        QVERIFY(bytesOf(PeakTermKind::Activations) > 0);
        QVERIFY(bytesOf(PeakTermKind::Gathered) > 0); // ZeRO-3 gathers units
        QVERIFY(bytesOf(PeakTermKind::Gathered) <= page.result()->peak->gatheredBytes);
    }

    void bareParameterCountSaysWhatItAssumed() {
        CalculatorPage page;
        selectPreset(page, QStringLiteral("custom"));
        auto* edit = child<QLineEdit>(page, "paramsEdit");
        edit->clear();
        QTest::keyClicks(edit, QStringLiteral("1.3B"));
        QTRY_COMPARE(page.result()->states.paramCount, std::uint64_t{1'300'000'000});
        QVERIFY(!page.result()->input.shape);
        const QString note = child<QLabel>(page, "peakAssumption")->text();
        QVERIFY2(note.contains(QStringLiteral("no activations")), qPrintable(note));
        QVERIFY(child<QLabel>(page, "calculatorSummary")
                    ->text()
                    .contains(QStringLiteral("bare parameter count")));
    }

    // Parameters on NVMe and the optimizer on the host leave ZeRO-3 nothing on the device: a
    // "0 B" mark on the axis floor, not a point at 1 B.
    void nothingOnTheDeviceIsDrawnAsZero() {
        CalculatorPage page;
        selectPreset(page, QStringLiteral("llama2-7b-like"));
        selectStrategy(page, plan::Strategy::Zero3);
        child<QSpinBox>(page, "ranksSpin")->setValue(8);
        auto* optimizer = child<QComboBox>(page, "optimizerOffloadCombo");
        optimizer->setCurrentIndex(optimizer->findData(static_cast<int>(Tier::Host)));
        auto* params = child<QComboBox>(page, "paramOffloadCombo");
        params->setCurrentIndex(params->findData(static_cast<int>(Tier::Nvme)));
        QTRY_COMPARE(page.result()->input.offload.param, Tier::Nvme);
        QCOMPARE(page.result()->states.perRank.tier(Tier::Device), std::uint64_t{0});
        auto* chart = page.findChild<ScalingChart*>();
        QCPGraph* zero3 = chart->graphFor(plan::Strategy::Zero3);
        QVERIFY(zero3);
        for (auto it = zero3->data()->constBegin(); it != zero3->data()->constEnd(); ++it)
            QVERIFY2(std::isnan(it->value) || it->value > 1.0,
                     qPrintable(QString::number(it->value)));
        QVERIFY(chart->zeroOnDeviceAt(plan::Strategy::Zero3, 8));
        QVERIFY(!chart->zeroOnDeviceAt(plan::Strategy::Ddp, 8));
    }
    // The (T, D) chart for a fixed N = 4: one bar per T dividing N, the heads and the MLP width
    // (T = 1, 2, 4), each stacked by category with exactly theory's per-rank bytes for one TP
    // slice over D = N / T ranks.
    void meshChartIsTheoryForEveryTOfN() {
        CalculatorPage page;
        page.resize(1280, 800);
        page.show();
        selectPreset(page, QStringLiteral("llama2-7b-like"));
        selectStrategy(page, plan::Strategy::Zero3);
        child<QSpinBox>(page, "ranksSpin")->setValue(4);
        child<QSpinBox>(page, "tensorParallelSpin")->setValue(2);
        QTRY_VERIFY(page.result() && page.result()->input.ranks == 4 &&
                    page.result()->input.tensorParallel == 2);
        const auto& r = *page.result();
        // P = 1 first (T = 1, 2, 4), then the pipelines: P = 2 × T = 1, 2 and P = 4 × T = 1.
        QCOMPARE(r.meshes.size(), std::size_t{6});
        const int ps[] = {1, 1, 1, 2, 2, 4}, pts[] = {1, 2, 4, 1, 2, 1};
        for (std::size_t i = 0; i < 6; ++i) {
            const MeshPoint& m = r.meshes[i];
            QCOMPARE(m.pp, ps[i]);
            QCOMPARE(m.tp, pts[i]);
            QCOMPARE(m.pp * m.tp * m.dp, 4);
            if (m.pp == 1) continue;
            // The fullest stage's states: no stage of the mesh holds more on the device.
            CalculatorInput in = r.input;
            in.tensorParallel = m.tp;
            theory::Scenario sc = scenarioFor(in, plan::Strategy::Zero3, 4 / m.pp);
            sc.pipeStages = m.pp;
            std::uint64_t fullest = 0;
            for (int st = 0; st < m.pp; ++st) {
                sc.pipeStage = st;
                fullest = std::max(fullest, theory::modelStates(sc).perRank.tier(Tier::Device));
            }
            QCOMPARE(m.perRank.tier(Tier::Device), fullest);
            sc.pipeStage = m.stage;
            QCOMPARE(m.perRank, theory::modelStates(sc).perRank);
            QVERIFY(m.traffic.ppSentBytes > 0); // the stage's messages, not data-parallel traffic
        }
        const int ts[] = {1, 2, 4};
        for (std::size_t i = 0; i < 3; ++i) {
            const MeshPoint& m = r.meshes[i];
            QCOMPARE(m.tp, ts[i]);
            QCOMPARE(m.dp, 4 / ts[i]);
            CalculatorInput in = r.input;
            in.tensorParallel = ts[i];
            const theory::Scenario sc = scenarioFor(in, plan::Strategy::Zero3, 4);
            QCOMPARE(sc.ranks, 4 / ts[i]);
            QCOMPARE(m.perRank, theory::modelStates(sc).perRank);
            QCOMPARE(m.traffic.tpSentBytes, splitTraffic(theory::commPerStep(sc)).tpSentBytes);
        }
        QCOMPARE(r.meshes[0].traffic.tpSentBytes, std::uint64_t{0}); // T = 1: no TP traffic
        // The chart draws those numbers: each category's bar at x = i + 1 has theory's bytes.
        QCustomPlot* plot = child<MeshChart>(page, "meshChart")->plot();
        double unit = 0;
        int categories = 0;
        for (int b = 0; b < plot->plottableCount(); ++b) {
            auto* bars = qobject_cast<QCPBars*>(plot->plottable(b));
            QVERIFY(bars);
            const auto cat =
                std::find_if(kAllCategories.begin(), kAllCategories.end(),
                             [&](Category c) { return categoryLabel(c) == bars->name(); });
            QVERIFY(cat != kAllCategories.end());
            ++categories;
            for (std::size_t i = 0; i < 3; ++i) {
                const double bytes =
                    static_cast<double>(r.meshes[i].perRank.at(*cat, Tier::Device));
                const double drawn = bars->data()->at(static_cast<int>(i))->value;
                if (bytes > 0 && unit == 0) unit = bytes / drawn;
                if (unit > 0)
                    QVERIFY2(std::abs(drawn * unit - bytes) <= 1e-6 * bytes + 1,
                             qPrintable(bars->name()));
            }
        }
        QVERIFY(categories >= 3);
        QVERIFY(std::abs(unit - 1e9) < 1 || std::abs(unit - 1e6) < 1e-3);
    }

    // The TP and DP traffic rows are estimate --tp's: the CLI's JSON comm_bytes_per_step has the TP
    // all-reduce's sent bytes and the total; the rest is data-parallel.
    void trafficRowsEqualEstimateTp() {
        CalculatorPage page;
        page.show();
        selectPreset(page, QStringLiteral("llama2-7b-like"));
        selectStrategy(page, plan::Strategy::Zero3);
        child<QSpinBox>(page, "ranksSpin")->setValue(16);
        child<QSpinBox>(page, "tensorParallelSpin")->setValue(4);
        QTRY_VERIFY(page.result() && page.result()->input.ranks == 16 &&
                    page.result()->input.tensorParallel == 4 && page.errorText().isEmpty());
        const auto& r = *page.result();
        const plan::GptShape& sh = *r.input.shape;
        const std::string shape = std::to_string(sh.layers) + "," + std::to_string(sh.dModel) +
                                  "," + std::to_string(sh.heads) + "," + std::to_string(sh.vocab) +
                                  "," + std::to_string(sh.seqLen);
        const theory::Scenario sc = scenarioFor(r.input, plan::Strategy::Zero3, 16);
        const auto cli = testing::runProgram(
            SHARDSCOPE_BIN_DIR "/shardscope-cli",
            {"estimate", "--model-shape", shape, "--ranks", "16", "--tp", "4", "--strategy",
             "zero3", "--precision", std::string(plan::precisionName(r.input.precision.kind)),
             "--micro-batch", std::to_string(sc.activations.microBatch), "--json"});
        QVERIFY2(cli.exitCode == 0, cli.err.c_str());
        const auto json = nlohmann::json::parse(cli.out, nullptr, false);
        QVERIFY(json.is_object() && json.contains("rows") && json.at("rows").size() == 1);
        QCOMPARE(json.at("tp").get<int>(), 4);
        const auto& comm = json.at("rows").at(0).at("comm_bytes_per_step");
        const auto tp = comm.at("tp_all_reduce").get<std::uint64_t>();
        const auto total = comm.at("total").get<std::uint64_t>();
        QVERIFY(tp > 0 && total > tp);
        QCOMPARE(r.traffic.tpSentBytes, tp);
        QCOMPARE(r.traffic.dpSentBytes, total - tp);
        // Both rows are on the page, with those numbers.
        const QString summary = child<QLabel>(page, "calculatorSummary")->text();
        QVERIFY2(summary.contains(QStringLiteral("tensor-parallel traffic")) &&
                     summary.contains(QStringLiteral("data-parallel traffic")),
                 qPrintable(summary));
        QVERIFY(summary.contains(formatDecimal(static_cast<double>(tp))));
        QVERIFY(summary.contains(formatDecimal(static_cast<double>(total - tp))));
        // The Ψ figure is the data-parallel part's (TP's all-reduces are not a multiple of Ψ):
        // beside the total that holds both, it says so.
        const QString psi = QString::number(r.comm.psiEquivalents, 'f', 2);
        QVERIFY2(summary.contains(QStringLiteral("data-parallel part alone ≈ %1 Ψ").arg(psi)),
                 qPrintable(summary));
        const double dpPsi =
            static_cast<double>(total - tp) / (static_cast<double>(r.states.paramCount) *
                                               static_cast<double>(r.input.precision.paramBytes()));
        QVERIFY2(std::abs(dpPsi - r.comm.psiEquivalents) < 0.01 * dpPsi,
                 qPrintable(QStringLiteral("%1 vs %2").arg(dpPsi).arg(r.comm.psiEquivalents)));
    }

    // The pipeline tab draws each schedule's bubble from theory for M = 1 … 32 at the chosen P
    // (and V): interleaved only where M is a multiple of P; ZB-H1 below 1F1B from M = 2 on.
    void pipelineBubbleIsTheoryForEveryMicroBatchCount() {
        CalculatorPage page;
        page.resize(1024, 700);
        page.show();
        auto* chart = child<PipelineChart>(page, "pipelineChart");
        child<QSpinBox>(page, "pipelineStages")->setValue(4);
        child<QSpinBox>(page, "pipelineVirtualStages")->setValue(3);
        QCustomPlot* plot = chart->plot();
        QCOMPARE(plot->graphCount(), 3);
        for (int g = 0; g < plot->graphCount(); ++g) {
            QCPGraph* graph = plot->graph(g);
            const auto kind = static_cast<plan::PipeSchedule>(graph->property("schedule").toInt());
            const int v = plan::traits(kind).virtualStages ? 3 : 1;
            const int points = graph->data()->size();
            QCOMPARE(points, kind == plan::PipeSchedule::Interleaved ? 8 : 32);
            for (int i = 0; i < points; ++i) {
                const int m = static_cast<int>(graph->data()->at(i)->key);
                if (kind == plan::PipeSchedule::Interleaved) QCOMPARE(m % 4, 0);
                const double expect = 100.0 * theory::pipeBubble(kind, {4, m, v}, {1, 1, 1});
                QVERIFY(std::abs(graph->data()->at(i)->value - expect) < 1e-9);
            }
        }
        QVERIFY(plotTitle(plot).contains(QStringLiteral("P = 4")));
        QVERIFY(plot->graph(2)->data()->at(1)->value < plot->graph(0)->data()->at(1)->value);
        if (qEnvironmentVariableIsSet("SHARDSCOPE_LAYOUT_SHOTS")) {
            auto* tabs = child<QTabWidget>(page, "calculatorNumberTabs");
            tabs->setCurrentWidget(chart);
            QTest::qWait(50);
            page.grab().save(qEnvironmentVariable("SHARDSCOPE_LAYOUT_SHOTS") +
                             QStringLiteral("/calculator-pipeline-1024x700.png"));
        }
    }
};

QTEST_MAIN(CalculatorPageTest)
#include "calculator_page_test.moc"
