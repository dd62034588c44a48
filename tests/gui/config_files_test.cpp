// File → Import configuration… onto the Ranks page's run settings (with the applied/ignored
// listing), and File → Export for Perfetto / ledger as CSV of an opened recording, in both
// languages. Drives the window the user sees.
#include "app/config_files.h"
#include "app/main_window.h"
#include "app/pages.h"
#include "calculator/calculator_inputs.h"
#include "calculator/calculator_page.h"
#include "common/language.h"
#include "ranks/ranks_page.h"
#include "run/run_config_panel.h"
#include "run/run_session.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;

class ConfigFilesTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void importAppliesAndLists() {
        for (const char* lang : {"en", "zh_CN"}) {
            LanguageManager language;
            language.setLanguage(QString::fromLatin1(lang));
            MainWindow window(&language);
            addDefaultPages(window);
            auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
            auto* files = window.findChild<ConfigFiles*>();
            QVERIFY(files);
            QVERIFY(window.findChild<QAction*>(QStringLiteral("importConfigAction")));
            QVERIFY(!window.findChild<QAction*>(QStringLiteral("importConfigAction"))
                         ->text()
                         .isEmpty());
            RunRequest before = ranks->configPanel()->request();
            before.ranks = 2;
            ranks->configPanel()->setRequest(before);
            QStringList listing;
            QString error;
            const QString ds =
                QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/data/configs/ds_zero2_batch.json");
            QVERIFY2(files->importConfig(ds, &listing, &error), qPrintable(error));
            const RunRequest after = ranks->configPanel()->request();
            QCOMPARE(after.strategy, plan::Strategy::Zero2);
            QCOMPARE(after.microBatch, 2);
            QCOMPARE(after.bucketBytes, std::uint64_t{100'000'000}); // 5e7 elements × 2 bytes
            QVERIFY(listing.contains(
                QStringLiteral("applied: zero_optimization.stage → --strategy zero2")));
            QVERIFY(std::any_of(listing.begin(), listing.end(), [](const QString& l) {
                return l.startsWith(QStringLiteral("ignored: zero_optimization.overlap_comm — "));
            }));
            // The offload blocks reach the panel's tier fields (they were listed as "not in this
            // build").
            QTemporaryDir offloadDir;
            const QString offload = offloadDir.filePath(QStringLiteral("ds_offload.json"));
            {
                QFile f(offload);
                QVERIFY(f.open(QIODevice::WriteOnly));
                f.write(
                    R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}})");
            }
            QVERIFY2(files->importConfig(offload, &listing, &error), qPrintable(error));
            QCOMPARE(ranks->configPanel()->request().offloadOptimizer, Tier::Host);
            QVERIFY2(listing.contains(
                         QStringLiteral("applied: zero_optimization.offload_optimizer.device → "
                                        "--offload-optimizer host")),
                     qPrintable(listing.join(QLatin1Char('\n'))));
            // Accelerate: FSDP, HYBRID_SHARD over two machines, four processes.
            const QString acc = QStringLiteral(SHARDSCOPE_SOURCE_DIR
                                               "/tests/data/configs/accelerate_fsdp_hybrid.yaml");
            QVERIFY2(files->importConfig(acc, &listing, &error), qPrintable(error));
            QCOMPARE(ranks->configPanel()->request().strategy, plan::Strategy::FsdpHybridShard);
            QCOMPARE(ranks->configPanel()->request().ranks, 4);
            QCOMPARE(ranks->configPanel()->request().hybridGroup, 2);
            // A bad file: one line, the settings unchanged.
            QTemporaryDir dir;
            const QString bad = dir.filePath(QStringLiteral("bad.json"));
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"({"zero_optimization": {"stage": 7}})");
            f.close();
            const RunRequest kept = ranks->configPanel()->request();
            QVERIFY(!files->importConfig(bad, &listing, &error));
            QVERIFY2(error.contains(QStringLiteral("zero_optimization.stage = 7")),
                     qPrintable(error));
            QCOMPARE(ranks->configPanel()->request().strategy, kept.strategy);
        }
    }

    // A run started after the import carries the listing into its report and notes (through
    // shardscope-cli run --config-import), as the CLI's --ds-config does; a setting changed in the
    // panel since is listed as changed.
    void runAfterImportCarriesTheListing() {
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        auto* files = window.findChild<ConfigFiles*>();
        RunRequest before = ranks->configPanel()->request();
        before.model = QStringLiteral("tiny");
        before.ranks = 2;
        before.threads = true;
        before.steps = 1;
        ranks->configPanel()->setRequest(before);
        QStringList listing;
        QString error;
        const QString ds =
            QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/data/configs/ds_zero2_batch.json");
        QVERIFY2(files->importConfig(ds, &listing, &error), qPrintable(error));
        RunRequest run = ranks->configPanel()->request();
        run.maxInflight += 1; // a field the file does not set: the listing stands
        const auto asRun = ranks->session().importListingFor(run);
        QVERIFY(asRun);
        QCOMPARE(asRun->source, ds.toStdString());
        run.microBatch = 1; // the file set 2
        const report::ConfigImport changed = *ranks->session().importListingFor(run);
        QVERIFY(std::none_of(changed.applied.begin(), changed.applied.end(), [](const auto& a) {
            return a.second.rfind("--micro-batch", 0) == 0;
        }));
        QVERIFY(std::any_of(changed.ignored.begin(), changed.ignored.end(), [](const auto& i) {
            return i.second.find("changed in the run settings since") != std::string::npos;
        }));

        ranks->session().setCliPath(QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope-cli"));
        ranks->session().setWorkerPath(QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope-worker"));
        QSignalSpy reported(&ranks->session(), &RunSession::reportReady);
        QVERIFY(ranks->session().start(ranks->configPanel()->request()));
        QVERIFY(reported.wait(60000));
        const auto report = reported.takeFirst().at(0).value<RunReportPtr>();
        QVERIFY(report && report->configImport);
        QCOMPARE(report->configImport->source, ds.toStdString());
        QCOMPARE(report->configImport->applied, asRun->applied);
        QVERIFY(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
            return n.rfind("ignored: zero_optimization.overlap_comm — ", 0) == 0;
        }));
    }

    void exportsTheOpenedRecording() {
        LanguageManager language;
        language.setLanguage(QStringLiteral("en"));
        MainWindow window(&language);
        addDefaultPages(window);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        auto* files = window.findChild<ConfigFiles*>();
        QTemporaryDir dir;
        QString error;
        QVERIFY(
            !files->exportCsv(dir.filePath(QStringLiteral("empty.csv")), &error)); // nothing open
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("empty.csv"))));
        QVERIFY(ranks->openRecording(
            QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace")));
        QElapsedTimer clock;
        clock.start();
        while (ranks->isBusy() && clock.elapsed() < 20000)
            QTest::qWait(20);
        QVERIFY(ranks->model().stepCount() > 0);
        const QString json = dir.filePath(QStringLiteral("trace.json")),
                      csv = dir.filePath(QStringLiteral("ledger.csv"));
        QVERIFY2(files->exportPerfetto(json, &error), qPrintable(error));
        QVERIFY2(files->exportCsv(csv, &error), qPrintable(error));
        QFile j(json), c(csv);
        QVERIFY(j.open(QIODevice::ReadOnly));
        QVERIFY(j.readAll().contains("\"traceEvents\""));
        QVERIFY(c.open(QIODevice::ReadOnly));
        QCOMPARE(c.readLine(), QByteArray("time_ns,rank,category,tier,unit,live_bytes\n"));
    }

    void calculatorOpensAModelConfig() {
        CalculatorPage page;
        auto* inputs = page.findChild<CalculatorInputs*>();
        QVERIFY(inputs);
        QVERIFY(page.findChild<QPushButton*>(QStringLiteral("openModelConfigButton")));
        // The shipped configs are presets.
        auto* combo = page.findChild<QComboBox*>(QStringLiteral("presetCombo"));
        QVERIFY(combo->findData(QStringLiteral("hf-qwen2-0.5b")) >= 0);
        QString error;
        QVERIFY2(inputs->openModelConfig(
                     QStringLiteral(SHARDSCOPE_SOURCE_DIR "/resources/presets/hf/llama-2-7b.json"),
                     &error),
                 qPrintable(error));
        const CalculatorInput in = inputs->input();
        QCOMPARE(in.params, std::uint64_t{6'738'415'616});
        QCOMPARE(in.units.size(), std::size_t{34});
        QCOMPARE(in.largestLayerParams, std::uint64_t{131'072'000});
        page.recomputeNow();
        QVERIFY(page.result());
        // SHARDSCOPE_SHOT_DIR=DIR: the page with the opened config, to look at.
        if (const QString dir = qEnvironmentVariable("SHARDSCOPE_SHOT_DIR"); !dir.isEmpty()) {
            page.resize(1400, 900);
            page.grab().save(dir + QStringLiteral("/calculator_model_config.png"));
        }
        QCOMPARE(page.result()->states.paramCount, std::uint64_t{6'738'415'616});
        QVERIFY(!inputs->openModelConfig(
            QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/data/configs/ds_zero3_hf.json"), &error));
        QVERIFY2(error.contains(QStringLiteral("model_type is missing")), qPrintable(error));
    }
};

QTEST_MAIN(ConfigFilesTest)
#include "config_files_test.moc"
