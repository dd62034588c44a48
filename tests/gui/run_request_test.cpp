// The Ranks page's run settings are the worker's run configuration: the same presets (every
// entry of models.json), the same limits (one table), the worker's flags from toWorkerArgs;
// validation with reasons, threads vs mpirun, GPU placement.
#include "core/args.h"
#include "core/error.h"
#include "run/run_config_panel.h"
#include "run/run_request.h"
#include "runconfig/problems.h"

#include <QComboBox>
#include <QSpinBox>
#include <QTest>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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
        for (int i = 0; i < model->count(); ++i)
            offered << model->itemData(i).toString();
        QVERIFY2(offered.contains(QStringLiteral("gpt100m")),
                 qPrintable(offered.join(QLatin1Char(','))));
        fromFile.sort();
        offered.sort();
        QCOMPARE(offered, fromFile);
        for (const QString& id : offered)
            QVERIFY2(findRunPreset(id), qPrintable(id));
    }

    // One table: the panel's ranges and the GUI's validation are runconfig::kLimits, the same
    // the worker's flags are read against.
    void limitsAreTheRunConfigurationsTable() {
        RunConfigPanel panel;
        const std::pair<RunField, runconfig::Field> spins[] = {
            {RunField::Prefetch, runconfig::Field::Prefetch},
            {RunField::MaxInflight, runconfig::Field::MaxInflight},
            {RunField::Steps, runconfig::Field::Steps}};
        for (const auto& [field, limit] : spins) {
            auto* spin = qobject_cast<QSpinBox*>(panel.fieldWidget(field));
            QVERIFY(spin);
            QCOMPARE(spin->minimum(), static_cast<int>(runconfig::limitOf(limit).min));
            QCOMPARE(spin->maximum(), static_cast<int>(runconfig::limitOf(limit).max));
        }
        auto* microBatch = qobject_cast<QSpinBox*>(panel.fieldWidget(RunField::MicroBatch));
        QCOMPARE(microBatch->maximum(),
                 static_cast<int>(runconfig::limitOf(runconfig::Field::MicroBatch).max));

        RunRequest r;   // ZeRO-3: prefetch is read
        r.prefetch = 9; // above the old GUI-only limit of 8, inside the worker's
        QVERIFY(validate(r).empty());
        r.prefetch = static_cast<int>(runconfig::limitOf(runconfig::Field::Prefetch).max) + 1;
        const auto issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::Prefetch);
        QVERIFY2(!issues[0].message.contains(QStringLiteral("--")),
                 qPrintable(issues[0].message)); // no CLI flag names
        r.prefetch = 1;
        r.microBatch = 300; // above the old GUI-only limit of 256
        QVERIFY(validate(r).empty());
    }

    // The worker's command line comes from runconfig::toWorkerArgs and parses back into the
    // configuration the panel describes.
    void workerArgumentsParseBackIntoTheSameConfiguration() {
        RunRequest r;
        r.model = QStringLiteral("tiny");
        r.strategy = plan::Strategy::FsdpHybridShard;
        r.hybridGroup = 2;
        r.prefetch = 3;
        r.threads = true;
        std::vector<std::string> argv;
        for (const QString& a : workerArguments(r, QStringLiteral("/tmp/s.sock")))
            argv.push_back(a.toStdString());
        const runconfig::RunConfig back = runconfig::parseRunConfig(argv, 1);
        runconfig::RunConfig expected = toRunConfig(r);
        expected.streamPath = "/tmp/s.sock";
        QCOMPARE(runconfig::toJson(back).dump(), runconfig::toJson(expected).dump());
        QCOMPARE(back.knobs.prefetchDepth, 3);
    }

    void settingsAreValidatedWithReasons() {
        RunRequest r;
        QVERIFY(validate(r).empty());
        r.strategy = plan::Strategy::FsdpHybridShard;
        r.ranks = 6;
        r.hybridGroup = 4;
        const auto issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::HybridGroup);
        QVERIFY2(issues[0].message.contains(QStringLiteral("1, 2, 3, 6")),
                 qPrintable(issues[0].message));
        r.gpu = true;
        GpuSupport none; // no device: the probe's reason under the backend
        none.cuda.reason = "no CUDA device (test)";
        const auto withGpu = validate(r, none);
        QVERIFY(std::any_of(withGpu.begin(), withGpu.end(), [](const FieldIssue& i) {
            return i.field == RunField::Backend &&
                   i.message.contains(QStringLiteral("no CUDA device (test)"));
        }));
        QString error;
        QCOMPARE(parseByteText(QStringLiteral("64MiB"), &error).value(), std::uint64_t{64} << 20);
        QCOMPARE(parseByteText(QStringLiteral("1.5 GB"), &error).value(),
                 std::uint64_t{1500000000});
        QVERIFY(!parseByteText(QString(), &error) && error.isEmpty());
        QVERIFY(!parseByteText(QStringLiteral("lots"), &error) &&
                error.contains(QStringLiteral("lots")));
        // One grammar: the panel takes exactly the sizes the flags take (core/args.h).
        for (const char* text :
             {"64MiB", "1.5 GB", "4096", "2KB", "12 mb", "0x10", "1.5B", "3 Ki"}) {
            std::optional<std::uint64_t> flag;
            try {
                flag = parseBytes(text, "--bucket-bytes");
            } catch (const Error&) {
            }
            QString why;
            QCOMPARE(parseByteText(QString::fromLatin1(text), &why), flag);
        }
    }

    // Tensor parallel (T): a spin box of the panel, --tp on the worker's command line, and a
    // T that does not divide the ranks or the heads is a reason under that field.
    void tensorParallelIsAFieldWithReasons() {
        RunConfigPanel panel;
        auto* spin = qobject_cast<QSpinBox*>(panel.fieldWidget(RunField::TensorParallel));
        QVERIFY(spin);
        QCOMPARE(spin->minimum(), 1);
        RunRequest r;
        r.model = QStringLiteral("tiny_tp");
        r.ranks = 4;
        r.tensorParallel = 2;
        r.threads = true;
        QVERIFY(validate(r).empty());
        std::vector<std::string> argv;
        for (const QString& a : workerArguments(r, QStringLiteral("/tmp/s.sock")))
            argv.push_back(a.toStdString());
        QCOMPARE(runconfig::parseRunConfig(argv, 1).tensorParallel, 2);
        panel.setRequest(r);
        QCOMPARE(panel.request().tensorParallel, 2);
        r.ranks = 6;
        r.tensorParallel = 4;
        auto issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::TensorParallel);
        QVERIFY2(issues[0].message.contains(QStringLiteral("1, 2, 3, 6")),
                 qPrintable(issues[0].message));
        r.model = QStringLiteral("tiny"); // 5 heads
        r.ranks = 4;
        r.tensorParallel = 2;
        issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QVERIFY2(issues[0].message.contains(QStringLiteral("1, 5")), qPrintable(issues[0].message));
        // HYBRID on a T × D mesh: the shard groups split the D data-parallel ranks, and the
        // message says so (D = 8 / 2 = 4, whose divisors are offered), not "the ranks".
        r.model = QStringLiteral("tiny_tp");
        r.ranks = 8;
        r.tensorParallel = 2;
        r.strategy = plan::Strategy::FsdpHybridShard;
        r.hybridGroup = 3;
        issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::HybridGroup);
        QVERIFY2(issues[0].message.contains(QStringLiteral("data-parallel ranks")),
                 qPrintable(issues[0].message));
        QVERIFY2(issues[0].message.contains(QStringLiteral("D = 4: 1, 2, 4")),
                 qPrintable(issues[0].message));
    }

    void workerArgumentsNameOnlyWhatTheStrategyReads() {
        RunRequest r;
        r.prefetch = 2;
        r.maxInflight = 5; // FSDP-only: not sent for ZeRO-3
        r.capacityBytes = 1000000;
        const QStringList a = workerArguments(r, QStringLiteral("/tmp/x/stream.sock"));
        QVERIFY(a.join(QLatin1Char(' '))
                    .contains(QStringLiteral("--model small --strategy zero3 --steps 10")));
        QVERIFY(a.contains(QStringLiteral("--prefetch")));
        QVERIFY(!a.contains(QStringLiteral("--max-inflight")));
        QCOMPARE(a.at(a.indexOf(QStringLiteral("--capacity")) + 1), QStringLiteral("1000000"));
        QCOMPARE(a.last(), QStringLiteral("/tmp/x/stream.sock"));
    }

    // Offload choices: offered where the strategy shards the state, disabled with the reason
    // as tooltip elsewhere; a chosen offload reaches the worker's flags.
    void offloadChoicesFollowTheStrategyAndReachTheWorker() {
        RunConfigPanel panel;
        auto* optimizer = qobject_cast<QComboBox*>(panel.fieldWidget(RunField::OffloadOptimizer));
        auto* params = qobject_cast<QComboBox*>(panel.fieldWidget(RunField::OffloadParams));
        QVERIFY(optimizer && params);
        RunRequest r;
        r.strategy = plan::Strategy::Zero3;
        r.offloadOptimizer = Tier::Host;
        r.offloadParams = Tier::Host;
        panel.setRequest(r);
        QVERIFY(optimizer->isEnabled() && params->isEnabled());
        QCOMPARE(panel.request().offloadParams, Tier::Host);
        const QStringList a = workerArguments(panel.request(), QStringLiteral("/tmp/s.sock"));
        QCOMPARE(a.at(a.indexOf(QStringLiteral("--offload-optimizer")) + 1),
                 QStringLiteral("host"));
        QCOMPARE(a.at(a.indexOf(QStringLiteral("--offload-params")) + 1), QStringLiteral("host"));
        r.strategy = plan::Strategy::Zero2; // shards the optimizer, not the params
        panel.setRequest(r);
        QVERIFY(optimizer->isEnabled());
        QVERIFY(!params->isEnabled());
        QVERIFY2(params->toolTip().contains(QStringLiteral("ZeRO-3 and FSDP")),
                 qPrintable(params->toolTip()));
        QCOMPARE(panel.request().offloadParams, Tier::Device); // a disabled choice is not sent
        QVERIFY(!workerArguments(panel.request(), QStringLiteral("/tmp/s.sock"))
                     .contains(QStringLiteral("--offload-params")));
        r.strategy = plan::Strategy::Ddp;
        panel.setRequest(r);
        QVERIFY(!optimizer->isEnabled());
        QVERIFY2(optimizer->toolTip().contains(QStringLiteral("does not shard the optimizer")),
                 qPrintable(optimizer->toolTip()));
        r.strategy = plan::Strategy::Zero2;
        r.offloadParams = Tier::Host; // set directly: validation names the field and the reason
        const auto issues = validate(r);
        QVERIFY(std::any_of(issues.begin(), issues.end(), [](const FieldIssue& i) {
            return i.field == RunField::OffloadParams &&
                   i.message.contains(QStringLiteral("zero2"));
        }));
    }

    // Ranks as threads: the worker runs them itself, told how many (no mpirun, no -np); under
    // mpirun the same worker arguments without them.
    void threadsAskTheWorkerForSharedDeviceRanks() {
        RunRequest r;
        r.model = QStringLiteral("tiny");
        r.ranks = 3;
        const QStringList mpi = workerArguments(r, QStringLiteral("/tmp/s.sock"));
        QVERIFY(!mpi.contains(QStringLiteral("--shared-device")));
        QVERIFY(!mpi.contains(QStringLiteral("--ranks")));

        r.threads = true;
        const QStringList threads = workerArguments(r, QStringLiteral("/tmp/s.sock"));
        QVERIFY(!threads.join(QLatin1Char(' ')).contains(QStringLiteral("mpirun")));
        QVERIFY(!threads.contains(QStringLiteral("-np")));
        QVERIFY(
            threads.join(QLatin1Char(' ')).endsWith(QStringLiteral("--shared-device --ranks 3")));
        QCOMPARE(threads.at(threads.indexOf(QStringLiteral("--stream")) + 1),
                 QStringLiteral("/tmp/s.sock"));

        r.gpu = true;
        const QStringList gpu = workerArguments(r, QStringLiteral("/tmp/s.sock"));
        QCOMPARE(gpu.at(gpu.indexOf(QStringLiteral("--backend")) + 1), QStringLiteral("cuda"));
    }

    // With a device, GPU ranks under mpirun need a GPU each (NCCL refuses two ranks on one);
    // more ranks than GPUs ask for the threads mode, which shares GPU 0.
    void gpuWithMoreRanksThanGpusNeedsThreads() {
        GpuSupport one;
        one.cuda.available = true;
        one.cuda.deviceCount = 1;
        one.workerCuda = one.workerNccl = true;
        RunRequest r;
        r.model = QStringLiteral("tiny");
        r.ranks = 2;
        r.gpu = true;
        const auto issues = validate(r, one);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::SharedDevice);
        QVERIFY2(issues[0].message.contains(QStringLiteral("Ranks as threads in one process")),
                 qPrintable(issues[0].message));
        r.threads = true;
        QVERIFY(validate(r, one).empty());
        r.threads = false;
        r.ranks = 1;
        QVERIFY(validate(r, one).empty());
        // Enough GPUs but no NCCL in this build: threads again.
        GpuSupport noNccl = one;
        noNccl.cuda.deviceCount = 4;
        noNccl.workerNccl = false;
        r.ranks = 2;
        QCOMPARE(validate(r, noNccl).size(), std::size_t{1});
        noNccl.workerNccl = true;
        QVERIFY(validate(r, noNccl).empty());
        // A device, but a worker without CUDA: the backend says so.
        GpuSupport noCuda = one;
        noCuda.workerCuda = false;
        QVERIFY(!gpuUnavailableReason(noCuda).isEmpty());
        QVERIFY(gpuUnavailableReason(one).isEmpty());
    }
};

QTEST_MAIN(RunRequestTest)
#include "run_request_test.moc"
