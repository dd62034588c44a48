// The Ranks page's run settings are the worker's run configuration: the same presets (every
// entry of models.json), the same limits (one table), the worker's flags from toWorkerArgs.
#include <QComboBox>
#include <QSpinBox>
#include <QTest>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run/run_config_panel.h"
#include "run_request.h"
#include "runconfig/problems.h"

using namespace shardscope;
using namespace shardscope::widgets;

class RunRequestTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void offersEveryPresetOfModelsJson() {
        std::ifstream in(SHARDSCOPE_SOURCE_DIR "/resources/presets/models.json");
        QVERIFY(in.good());
        std::stringstream text;
        text << in.rdbuf();
        QStringList fromFile;
        const nlohmann::json presets = nlohmann::json::parse(text.str());
        for (const auto& [name, value] : presets.items())
            if (!name.starts_with("_")) fromFile << QString::fromStdString(name);
        RunConfigPanel panel;
        auto* model = qobject_cast<QComboBox*>(panel.fieldWidget(RunField::Model));
        QVERIFY(model);
        QStringList offered;
        for (int i = 0; i < model->count(); ++i) offered << model->itemData(i).toString();
        QVERIFY2(offered.contains(QStringLiteral("gpt100m")), qPrintable(offered.join(QLatin1Char(','))));
        fromFile.sort();
        offered.sort();
        QCOMPARE(offered, fromFile);
        for (const QString& id : offered) QVERIFY2(findRunPreset(id), qPrintable(id));
    }

    // One table: the panel's ranges and the GUI's validation are runconfig::kLimits, the same
    // the worker's flags are read against.
    void limitsAreTheRunConfigurationsTable() {
        RunConfigPanel panel;
        const std::pair<RunField, runconfig::Field> spins[] = {{RunField::Prefetch, runconfig::Field::Prefetch},
                                                               {RunField::MaxInflight, runconfig::Field::MaxInflight},
                                                               {RunField::Steps, runconfig::Field::Steps}};
        for (const auto& [field, limit] : spins) {
            auto* spin = qobject_cast<QSpinBox*>(panel.fieldWidget(field));
            QVERIFY(spin);
            QCOMPARE(spin->minimum(), static_cast<int>(runconfig::limitOf(limit).min));
            QCOMPARE(spin->maximum(), static_cast<int>(runconfig::limitOf(limit).max));
        }
        auto* microBatch = qobject_cast<QSpinBox*>(panel.fieldWidget(RunField::MicroBatch));
        QCOMPARE(microBatch->maximum(), static_cast<int>(runconfig::limitOf(runconfig::Field::MicroBatch).max));

        RunRequest r; // ZeRO-3: prefetch is read
        r.prefetch = 9; // above the old GUI-only limit of 8, inside the worker's
        QVERIFY(validate(r).empty());
        r.prefetch = static_cast<int>(runconfig::limitOf(runconfig::Field::Prefetch).max) + 1;
        const auto issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::Prefetch);
        QVERIFY2(!issues[0].message.contains(QStringLiteral("--")), qPrintable(issues[0].message)); // no CLI flag names
        r.prefetch = 1;
        r.microBatch = 300; // above the old GUI-only limit of 256
        QVERIFY(validate(r).empty());
    }

    // The worker's command line comes from runconfig::toWorkerArgs and parses back into the
    // configuration the panel describes.
    void workerArgumentsParseBackIntoTheSameConfiguration() {
        RunRequest r;
        r.model = QStringLiteral("tiny");
        r.strategy = theory::Strategy::FsdpHybridShard;
        r.hybridGroup = 2;
        r.prefetch = 3;
        r.threads = true;
        std::vector<std::string> argv;
        for (const QString& a : workerArguments(r, QStringLiteral("/tmp/s.sock"))) argv.push_back(a.toStdString());
        const runconfig::RunConfig back = runconfig::parseRunConfig(argv, 1);
        runconfig::RunConfig expected = toRunConfig(r);
        expected.streamPath = "/tmp/s.sock";
        QCOMPARE(runconfig::toJson(back).dump(), runconfig::toJson(expected).dump());
        QCOMPARE(back.knobs.prefetchDepth, 3);
    }
};

QTEST_MAIN(RunRequestTest)
#include "run_request_test.moc"
