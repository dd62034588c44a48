// Host and NVMe tiers in the GUI: the Ranks page splits every rank's column by tier with the
// capacity line on the device bars only (the teaching moment: ZeRO-3 runs out of device memory
// at a budget where the same run with optimizer offload fits), the run settings turn the NVMe
// choices into the worker's flags or say why not, and the Calculator's tier rows equal a real
// run's report, theory and measured.
#include "calculator/calculator_page.h"
#include "calculator/derivation_model.h"
#include "cli_process.h"
#include "common/category_palette.h"
#include "playback/explain_text.h"
#include "predict/predict.h"
#include "ranks/rank_ledger_view.h"
#include "ranks_page_fixture.h"
#include "report/report.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>

namespace {

// ZeRO-3 of the tiny model on 2 ranks peaks at about 2.1 MB per rank: over this budget without
// offload, within it once master weights and Adam m, v live in host memory.
constexpr std::uint64_t kCapacity = 1'600'000;

RunRequest capacityScenario(bool offload) {
    RunRequest r = tinyThreadsRequest(2);
    r.capacityBytes = kCapacity;
    if (offload) r.offloadOptimizer = Tier::Host;
    return r;
}

// Pixels of exactly `colour` in the rows y−1..y+1 between x0 and x1 (the capacity line is drawn
// without antialiasing).
int pixelsOf(const QImage& image, const QColor& colour, int x0, int x1, int y) {
    int n = 0;
    for (int yy = y - 1; yy <= y + 1; ++yy)
        for (int x = std::max(0, x0); x <= std::min(image.width() - 1, x1); ++x)
            if (yy >= 0 && yy < image.height() && QColor(image.pixel(x, yy)) == colour) ++n;
    return n;
}

template <class T> T* child(QWidget& parent, const char* name) {
    T* w = parent.findChild<T*>(QLatin1String(name));
    if (!w) qFatal("missing child %s", name);
    return w;
}

bool contains(const QStringList& args, const QStringList& run) {
    for (qsizetype i = 0; i + run.size() <= args.size(); ++i)
        if (args.mid(i, run.size()) == run) return true;
    return false;
}

} // namespace

class TiersTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<RunSession::Outcome>(); }

    // Without offload the budget is too small: the run fails naming the allocation.
    void zero3RunsOutOfDeviceMemory() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        QVERIFY(page.runRequest(capacityScenario(false)));
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(QStringLiteral("out of device memory")) &&
                     page.bannerText().contains(QStringLiteral("capacity of 1.60 MB")),
                 qPrintable(page.bannerText()));
        QCOMPARE(page.rankView()->shownTiers(), std::vector<Tier>{Tier::Device});
    }

    // With the optimizer states on the host the same budget holds: each column has a device
    // and a host bar, the bars show the report's bytes per tier, the theory per tier is the
    // report's, and the capacity line crosses the device bars only, at the budget's height,
    // although the rank's bytes over both tiers exceed it.
    void offloadRunSplitsColumnsByTier() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        page.resize(1280, 860);
        page.show();
        QVERIFY(page.runRequest(capacityScenario(true)));
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Completed);
        const RunReportPtr report = page.document.report();
        QVERIFY(report);
        page.player().pause();
        page.player().seek(page.model().eventCount());
        RankLedgerView* view = page.rankView();
        view->settle();
        page.finishPendingDraws();
        QCOMPARE(view->shownTiers(), (std::vector<Tier>{Tier::Device, Tier::Host}));

        // The theory beside the bars is the report's, byte for byte, per tier and category.
        QVERIFY(view->tierTheory(0) != nullptr);
        const TierTheory& theory = *view->tierTheory(0);
        for (Tier t : kAllTiers) {
            for (Category c : kAllCategories)
                QCOMPARE(theory.modelStates.at(c, t),
                         report->theory.modelStateBytesByTier[index(t)][index(c)]);
            QCOMPARE(theory.peak[index(t)], report->theory.peakBytesByTier[index(t)]);
        }
        QVERIFY(theory.modelStates.tier(Tier::Host) > 0);

        // Each tier's bar shows the rank's model states there, as measured (= theory).
        for (int r = 0; r < 2; ++r) {
            const report::RankReport& rank = report->ranks[static_cast<std::size_t>(r)];
            for (Tier t : kAllTiers)
                for (Category c : kAllCategories)
                    if (stateGroup(c) != StateGroup::Other && c != Category::ParamFull &&
                        c != Category::GradFull)
                        QCOMPARE(static_cast<std::uint64_t>(view->shownBytes(r, c, t)),
                                 rank.modelStateBytesByTier[index(t)][index(c)]);
            QVERIFY(view->shownBytes(r, Category::AdamM, Tier::Host) > 0);
            QCOMPARE(view->shownBytes(r, Category::AdamM, Tier::Device), 0.0);
            // The device peak is within the budget; the rank's bytes over both tiers are not.
            const replay::RankState& s = view->state()[static_cast<std::size_t>(r)];
            QCOMPARE(s.peakByTier[index(Tier::Device)], rank.peakTotalByTier[index(Tier::Device)]);
            QCOMPARE(s.peakByTier[index(Tier::Host)], rank.peakTotalByTier[index(Tier::Host)]);
            QVERIFY(s.peakByTier[index(Tier::Device)] <= kCapacity);
            QVERIFY(s.peakTotal > kCapacity);
        }

        // The capacity line: at the budget's height, over the device bars, never over the host's.
        const QRect plot = view->plotArea();
        QVERIFY(view->capacityY().has_value());
        const int y = *view->capacityY();
        const double f = static_cast<double>(kCapacity) / static_cast<double>(view->scaleBytes());
        QCOMPARE(y, plot.bottom() - static_cast<int>(std::lround(f * plot.height())));
        const QImage image = view->grab().toImage();
        for (int r = 0; r < 2; ++r) {
            const QRect device = view->tierBarRect(r, Tier::Device),
                        host = view->tierBarRect(r, Tier::Host);
            QVERIFY(!device.isEmpty() && !host.isEmpty());
            QVERIFY(host.left() > device.right()); // beside, not stacked on it
            QVERIFY2(
                pixelsOf(image, alertColor(), device.left(), device.right(), y) >
                    device.width() / 2,
                qPrintable(QStringLiteral("rank %1: no capacity line over the device bar").arg(r)));
            QCOMPARE(pixelsOf(image, alertColor(), host.left(), host.right(), y), 0);
        }
    }

    // ZeRO-Infinity from the GUI: the optimizer states in NVMe files get a third bar per rank
    // with the report's bytes, and the host bar holds the staging buffers.
    void nvmeRunHasAnNvmeBar() {
        SKIP_IF_MISSING(missingForThreads());
        QTemporaryDir folder;
        LivePage page;
        RunRequest r = tinyThreadsRequest(1);
        r.offloadOptimizer = Tier::Nvme;
        r.nvmeDir = folder.path();
        QVERIFY(page.runRequest(r));
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Completed);
        const RunReportPtr report = page.document.report();
        QVERIFY(report);
        page.player().pause();
        page.player().seek(page.model().eventCount());
        RankLedgerView* view = page.rankView();
        view->settle();
        QCOMPARE(view->shownTiers(), (std::vector<Tier>{Tier::Device, Tier::Host, Tier::Nvme}));
        for (int rank = 0; rank < 2; ++rank) {
            const report::RankReport& rr = report->ranks[static_cast<std::size_t>(rank)];
            for (Category c : {Category::MasterFp32, Category::AdamM, Category::AdamV})
                QCOMPARE(static_cast<std::uint64_t>(view->shownBytes(rank, c, Tier::Nvme)),
                         rr.modelStateBytesByTier[index(Tier::Nvme)][index(c)]);
            QVERIFY(view->shownBytes(rank, Category::AdamM, Tier::Nvme) > 0);
            QCOMPARE(view->state()[static_cast<std::size_t>(rank)].peakByTier[index(Tier::Host)],
                     rr.peakTotalByTier[index(Tier::Host)]);
            const QRect host = view->tierBarRect(rank, Tier::Host),
                        nvme = view->tierBarRect(rank, Tier::Nvme);
            QVERIFY(nvme.left() > host.right());
        }
    }

    // NVMe in the run settings: the folder (required, checked as the worker checks it), the
    // advanced I/O settings, and the worker flags they become.
    void nvmeFieldsBecomeWorkerFlags() {
        RunConfigPanel panel;
        RunRequest r = tinyRequest(2);
        r.strategy = plan::Strategy::Zero3;
        panel.setRequest(r);
        auto* optimizer = child<QComboBox>(panel, "offloadOptimizerCombo");
        auto* dirRow = panel.fieldWidget(RunField::NvmeDir);
        QVERIFY(dirRow && dirRow->isHidden());
        optimizer->setCurrentIndex(optimizer->findData(static_cast<int>(Tier::Nvme)));
        QCOMPARE(panel.request().offloadOptimizer, Tier::Nvme);
        QVERIFY(!dirRow->isHidden());
        QVERIFY(!panel.errorText(RunField::NvmeDir).isEmpty()); // no folder yet
        QVERIFY(!panel.isValid());

        auto* dir = child<QLineEdit>(panel, "nvmeDirEdit");
        dir->setText(QStringLiteral("/nonexistent/shardscope-nvme"));
        QVERIFY2(panel.errorText(RunField::NvmeDir).contains(QStringLiteral("--nvme-dir")),
                 qPrintable(panel.errorText(RunField::NvmeDir)));

        QTemporaryDir folder;
        dir->setText(folder.path());
        QVERIFY2(panel.isValid(), qPrintable(panel.errorText(RunField::NvmeDir)));
        QStringList args = workerArguments(panel.request(), QStringLiteral("/tmp/s"));
        QVERIFY2(contains(args, {QStringLiteral("--offload-optimizer"), QStringLiteral("nvme")}),
                 qPrintable(args.join(u' ')));
        QVERIFY(contains(args, {QStringLiteral("--nvme-dir"), folder.path()}));
        QVERIFY(!args.contains(QStringLiteral("--aio-block-bytes"))); // defaults are not repeated

        auto* advanced = child<QToolButton>(panel, "nvmeAdvancedButton");
        auto* block = child<QLineEdit>(panel, "aioBlockEdit");
        auto* depth = child<QSpinBox>(panel, "aioQueueDepthSpin");
        QVERIFY(block->isHidden());
        advanced->setChecked(true);
        QVERIFY(!block->isHidden() && !depth->isHidden());
        block->setText(QStringLiteral("2MiB"));
        depth->setValue(16);
        args = workerArguments(panel.request(), QStringLiteral("/tmp/s"));
        QVERIFY2(contains(args, {QStringLiteral("--aio-block-bytes"), QString::number(2u << 20)}),
                 qPrintable(args.join(u' ')));
        QVERIFY(contains(args, {QStringLiteral("--aio-queue-depth"), QStringLiteral("16")}));
        block->setText(QStringLiteral("5000")); // not a multiple of 4 KiB: the worker's own reason
        QVERIFY2(panel.errorText(RunField::AioBlockBytes).contains(QStringLiteral("4096")),
                 qPrintable(panel.errorText(RunField::AioBlockBytes)));
        block->setText(QStringLiteral("a lot"));
        QVERIFY(!panel.errorText(RunField::AioBlockBytes).isEmpty());

        // Back on the host: no NVMe rows, no NVMe flags.
        optimizer->setCurrentIndex(optimizer->findData(static_cast<int>(Tier::Host)));
        QVERIFY(dirRow->isHidden() && block->isHidden());
        QVERIFY(panel.isValid());
        args = workerArguments(panel.request(), QStringLiteral("/tmp/s"));
        QVERIFY(!args.contains(QStringLiteral("--nvme-dir")));
    }

    // Offload choices a strategy cannot take are disabled with runconfig's reason; NVMe for the
    // parameters is offered exactly where runconfig accepts it.
    void disabledChoicesSayWhy() {
        RunConfigPanel panel;
        RunRequest r = tinyRequest(2);
        r.strategy = plan::Strategy::Ddp;
        panel.setRequest(r);
        auto* optimizer = child<QComboBox>(panel, "offloadOptimizerCombo");
        auto* params = child<QComboBox>(panel, "offloadParamsCombo");
        QVERIFY(!optimizer->isEnabled() && !params->isEnabled());
        QVERIFY(optimizer->toolTip().contains(QStringLiteral("does not shard the optimizer")));
        QVERIFY(params->toolTip().contains(QStringLiteral("only ZeRO-3 and FSDP")));

        r.strategy = plan::Strategy::Zero3;
        panel.setRequest(r);
        QVERIFY(optimizer->isEnabled() && params->isEnabled());
        runconfig::RunConfig probe = toRunConfig(r);
        probe.offload.param = Tier::Nvme;
        QString why;
        for (const runconfig::Problem& p : runconfig::validate(probe))
            if (p.field == runconfig::Field::OffloadParams) why = describe(p);
        auto* model = qobject_cast<QStandardItemModel*>(params->model());
        const int nvme = params->findData(static_cast<int>(Tier::Nvme));
        QCOMPARE(model->item(nvme)->isEnabled(), why.isEmpty());
        if (!why.isEmpty()) QCOMPARE(params->itemData(nvme, Qt::ToolTipRole).toString(), why);
        QVERIFY(qobject_cast<QStandardItemModel*>(optimizer->model())
                    ->item(optimizer->findData(static_cast<int>(Tier::Nvme)))
                    ->isEnabled());
    }

    // The settings' preview and capacity warning are the device's: with the optimizer states on
    // the host the capacity scenario is not expected to run out of memory.
    void previewCountsTheDeviceTier() {
        RunConfigPanel panel;
        panel.setRequest(capacityScenario(false));
        QVERIFY(!panel.capacityWarning().isEmpty());
        panel.setRequest(capacityScenario(true));
        QCOMPARE(panel.request().offloadOptimizer, Tier::Host);
        const theory::Scenario sc = runconfig::scenarioOf(toRunConfig(capacityScenario(true)));
        QCOMPARE(panel.predictedPeakBytes().value_or(0), predict::predictPeak(sc).peakBytes);
        QVERIFY(panel.predictedPeakBytes().value_or(0) <= kCapacity);
        QVERIFY2(panel.capacityWarning().isEmpty(), qPrintable(panel.capacityWarning()));
        // The saving is the sharding's over all tiers, not the device part against DDP (which
        // with everything offloaded read "0 B … 287600× less").
        RunRequest nvme = capacityScenario(true);
        nvme.offloadOptimizer = Tier::Nvme;
        nvme.offloadParams = Tier::Nvme;
        nvme.nvmeDir = QDir::tempPath();
        panel.setRequest(nvme);
        QLabel* preview = nullptr;
        for (QLabel* l : panel.findChildren<QLabel*>())
            if (l->text().contains(QStringLiteral("Theory per rank"))) preview = l;
        QVERIFY(preview);
        QVERIFY2(preview->text().contains(QStringLiteral("in all tiers")) &&
                     preview->text().contains(QStringLiteral("2.00× less")),
                 qPrintable(preview->text()));
    }

    // An opened offload recording shows its settings, and the preview sizes that run (the panel
    // is locked while the recording loads: its offload choices still count).
    void openedRecordingShowsItsOffload() {
        TestPage page;
        QVERIFY(page.openRecording(QStringLiteral(
            QT_TESTCASE_SOURCEDIR "/../../resources/recordings/zero3_offload_tiny_2r.sstrace")));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy() && page.model().stepCount() > 0, 20000);
        RunConfigPanel* panel = page.configPanel();
        QCOMPARE(panel->request().offloadOptimizer, Tier::Host);
        QCOMPARE(panel->request().capacityBytes, std::optional<std::uint64_t>(kCapacity));
        QVERIFY2(panel->capacityWarning().isEmpty(), qPrintable(panel->capacityWarning()));
    }

    // The explain panel says where offloaded bytes live and why the budget does not count them.
    void explainNamesTheHostTier() {
        TestPage page;
        QVERIFY(page.openRecording(QStringLiteral(
            QT_TESTCASE_SOURCEDIR "/../../resources/recordings/zero3_offload_tiny_2r.sstrace")));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy() && page.model().stepCount() > 0, 20000);
        const replay::ReplayModel& model = page.model();
        int seen = 0;
        for (std::uint64_t k = 0; k < model.eventCount(); ++k) {
            const Event& e = model.event(k);
            if (e.kind != EventKind::Alloc || e.tier != Tier::Host) continue;
            const QString text = Explain::sentence(model, k, *model.info());
            if (e.category == Category::AdamM) {
                QVERIFY2(text.contains(QStringLiteral("host memory")) &&
                             text.contains(QStringLiteral("capacity")),
                         qPrintable(text));
                ++seen;
            }
            if (e.category == Category::GradShard) {
                QVERIFY2(text.contains(QStringLiteral("host memory")) &&
                             text.contains(QStringLiteral("reduce-scatter")),
                         qPrintable(text));
                ++seen;
            }
        }
        QVERIFY(seen >= 2);
    }

    // A recording's offload settings come back into the panel.
    void offloadSettingsRoundTrip() {
        RunRequest r = tinyRequest(2);
        r.offloadOptimizer = Tier::Host;
        r.offloadParams = Tier::Host;
        QString why;
        const auto back = requestFromConfigJson(runconfig::toJson(toRunConfig(r)).dump(), &why);
        QVERIFY2(back.has_value(), qPrintable(why));
        QCOMPARE(back->offloadOptimizer, Tier::Host);
        QCOMPARE(back->offloadParams, Tier::Host);
        // A T × D recording comes back as T × D (it came back as T = 1).
        RunRequest mesh = tinyRequest(1);
        mesh.model = QStringLiteral("tiny_tp");
        mesh.ranks = 4;
        mesh.tensorParallel = 2;
        const auto meshBack =
            requestFromConfigJson(runconfig::toJson(toRunConfig(mesh)).dump(), &why);
        QVERIFY2(meshBack.has_value(), qPrintable(why));
        QCOMPARE(meshBack->tensorParallel, 2);
        QCOMPARE(meshBack->ranks, 4);
    }

    // The Calculator's tier rows for tiny, 2 ranks, ZeRO-3, optimizer on the host equal the
    // real run's report: its theory and what every rank measured, per category and tier.
    void calculatorTierRowsEqualTheRun() {
        SKIP_IF_MISSING(missingForThreads());
        QTemporaryDir dir;
        const std::string json = dir.filePath(QStringLiteral("run.json")).toStdString();
        const testing::CliResult run = testing::runProgram(
            kCli.toStdString(),
            {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--strategy", "zero3",
             "--steps", "1", "--offload-optimizer", "host", "--json", json});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        const auto parsed = report::parseRunReport(testing::slurpFile(json));
        QVERIFY2(parsed.value.has_value(), parsed.error.c_str());
        const report::RunReport& rep = *parsed.value;

        // The run's Ψ as a custom model: at N = 2 the tiny model's units need no padding, so the
        // bare count and the run's shape give the same bytes.
        CalculatorPage page;
        auto* preset = child<QComboBox>(page, "presetCombo");
        preset->setCurrentIndex(preset->findData(QStringLiteral("custom")));
        child<QLineEdit>(page, "paramsEdit")->setText(QString::number(rep.paramCount));
        child<QSpinBox>(page, "ranksSpin")->setValue(2);
        auto* strategy = child<QComboBox>(page, "strategyCombo");
        strategy->setCurrentIndex(strategy->findData(static_cast<int>(plan::Strategy::Zero3)));
        auto* optimizer = child<QComboBox>(page, "optimizerOffloadCombo");
        optimizer->setCurrentIndex(optimizer->findData(static_cast<int>(Tier::Host)));
        page.recomputeNow();
        QCOMPARE(page.result()->input.params, rep.paramCount);
        QCOMPARE(page.result()->input.ranks, 2);

        // Sum the derivation table's rows by (category, tier), as the page shows them.
        auto* table = child<QTableView>(page, "derivationTable");
        const QAbstractItemModel* model = table->model();
        const auto& lines = page.result()->states.lines;
        QCOMPARE(model->rowCount(), static_cast<int>(lines.size()) + 1);
        ByteTable shown;
        for (int row = 0; row < static_cast<int>(lines.size()); ++row) {
            const theory::DerivationLine& line = lines[static_cast<std::size_t>(row)];
            QCOMPARE(model->index(row, DerivationModel::TierCol).data().toString(),
                     tierLabel(line.tier));
            shown.at(line.category, line.tier) += model->index(row, DerivationModel::BytesCol)
                                                      .data(DerivationModel::BytesRole)
                                                      .toULongLong();
        }
        QVERIFY(shown.tier(Tier::Host) > 0);
        for (Tier t : kAllTiers)
            for (Category c : kAllCategories) {
                QCOMPARE(shown.at(c, t), rep.theory.modelStateBytesByTier[index(t)][index(c)]);
                for (const report::RankReport& rank : rep.ranks)
                    QCOMPARE(shown.at(c, t), rank.modelStateBytesByTier[index(t)][index(c)]);
            }
    }
};

QTEST_MAIN(TiersTest)
#include "tiers_test.moc"
