// Run settings (validation with reasons, the worker's arguments, threads vs mpirun, GPU
// placement) and the run report reader. The replay's data layer is tested without Qt in
// tests/unit/replay_model_test.cpp.
#include <QTest>

#include "core/error.h"
#include "report/report.h"
#include "replay/stream_assembler.h"
#include "run_data.h"
#include "run_request.h"

using namespace shardscope;
using namespace shardscope::widgets;

class ReplayModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void settingsAreValidatedWithReasons() {
        RunRequest r;
        QVERIFY(validate(r).empty());
        r.strategy = theory::Strategy::FsdpHybridShard;
        r.ranks = 6;
        r.hybridGroup = 4;
        const auto issues = validate(r);
        QCOMPARE(issues.size(), std::size_t{1});
        QCOMPARE(issues[0].field, RunField::HybridGroup);
        QVERIFY2(issues[0].message.contains(QStringLiteral("1, 2, 3, 6")), qPrintable(issues[0].message));
        r.gpu = true;
        GpuSupport none; // no device: the probe's reason under the backend
        none.cuda.reason = "no CUDA device (test)";
        const auto withGpu = validate(r, none);
        QVERIFY(std::any_of(withGpu.begin(), withGpu.end(), [](const FieldIssue& i) {
            return i.field == RunField::Backend && i.message.contains(QStringLiteral("no CUDA device (test)"));
        }));
        QString error;
        QCOMPARE(parseByteText(QStringLiteral("64MiB"), &error).value(), std::uint64_t{64} << 20);
        QCOMPARE(parseByteText(QStringLiteral("1.5 GB"), &error).value(), std::uint64_t{1500000000});
        QVERIFY(!parseByteText(QString(), &error) && error.isEmpty());
        QVERIFY(!parseByteText(QStringLiteral("lots"), &error) && error.contains(QStringLiteral("lots")));
    }

    void workerArgumentsNameOnlyWhatTheStrategyReads() {
        RunRequest r;
        r.prefetch = 2;
        r.maxInflight = 5; // FSDP-only: not sent for ZeRO-3
        r.capacityBytes = 1000000;
        const QStringList a = workerArguments(r, QStringLiteral("/tmp/x/stream.sock"));
        QVERIFY(a.join(QLatin1Char(' ')).contains(QStringLiteral("--model small --strategy zero3 --steps 10")));
        QVERIFY(a.contains(QStringLiteral("--prefetch")));
        QVERIFY(!a.contains(QStringLiteral("--max-inflight")));
        QCOMPARE(a.at(a.indexOf(QStringLiteral("--capacity")) + 1), QStringLiteral("1000000"));
        QCOMPARE(a.last(), QStringLiteral("/tmp/x/stream.sock"));
    }

    // Ranks as threads: the worker itself is the program (no mpirun, no -np), told how many
    // ranks to run; otherwise mpirun starts N workers with the same worker arguments.
    void threadsLaunchTheWorkerWithoutMpirun() {
        RunRequest r;
        r.model = QStringLiteral("tiny");
        r.ranks = 3;
        LaunchSettings s;
        s.workerPath = QStringLiteral("/opt/ss/shardscope-worker");
        s.mpirunPath = QStringLiteral("/usr/bin/mpirun");
        s.localCores = 8;
        const LaunchCommand mpi = launchCommand(r, s, QStringLiteral("/tmp/s.sock"));
        QVERIFY(!mpi.direct);
        QCOMPARE(mpi.program, QStringLiteral("/usr/bin/mpirun"));
        QCOMPARE(mpi.arguments.at(mpi.arguments.indexOf(QStringLiteral("-np")) + 1), QStringLiteral("3"));
        QVERIFY(mpi.arguments.contains(s.workerPath));
        QVERIFY(!mpi.arguments.contains(QStringLiteral("--shared-device")));
        QVERIFY(!mpi.arguments.contains(QStringLiteral("--ranks")));

        r.threads = true;
        const LaunchCommand threads = launchCommand(r, s, QStringLiteral("/tmp/s.sock"));
        QVERIFY(threads.direct);
        QCOMPARE(threads.program, s.workerPath);
        QCOMPARE(threads.arguments, workerArguments(r, QStringLiteral("/tmp/s.sock")));
        QVERIFY(!threads.arguments.join(QLatin1Char(' ')).contains(QStringLiteral("mpirun")));
        QVERIFY(!threads.arguments.contains(QStringLiteral("-np")));
        QVERIFY(threads.arguments.join(QLatin1Char(' ')).endsWith(QStringLiteral("--shared-device --ranks 3")));
        QCOMPARE(threads.arguments.at(threads.arguments.indexOf(QStringLiteral("--stream")) + 1), QStringLiteral("/tmp/s.sock"));

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
        QCOMPARE(issues[0].field, RunField::Threads);
        QVERIFY2(issues[0].message.contains(QStringLiteral("Ranks as threads in one process")), qPrintable(issues[0].message));
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

    // The Ranks page's view of the final report, read by the one report reader.
    void runReportReadsExposedCommunication() {
        report::RunReport typed;
        typed.worldSize = 3;
        typed.steps = 3;
        typed.losses = {4.5, 4.3};
        typed.exposedCommFraction = 0.47;
        typed.ranks.resize(3);
        for (int i = 0; i < 3; ++i) typed.ranks[static_cast<std::size_t>(i)].rank = i;
        typed.ranks[0].exposedComm = {0.47, {0.5, 0.47, 0.4}, 2400, 1300, 2800};
        typed.ranks[1].exposedComm = {0.0625, {0.07, 0.0625}, 0, 0, 0};
        typed.ranks[1].device = report::DeviceMemory{};
        typed.ranks[1].device->name = "cuda:0 (Test GPU)";
        typed.ranks[1].device->poolReservedHighBytes = 4096;
        typed.ranks[1].device->outsideLedgerBytes = 512;
        const std::string json = report::toJson(typed).dump();
        const RunReport r = parseRunReport(json);
        QCOMPARE(r.ranks.size(), std::size_t{3});
        QCOMPARE(r.exposedCommFraction.value_or(-1), 0.47);
        QVERIFY(r.ranks[0].exposedComm.has_value());
        QCOMPARE(r.ranks[0].exposedComm->fractionMedian, 0.47);
        QCOMPARE(r.ranks[0].exposedComm->fractionPerStep, (std::vector<double>{0.5, 0.47, 0.4}));
        QCOMPARE(r.ranks[0].exposedComm->commUnionNs, std::uint64_t{2400});
        QCOMPARE(r.ranks[0].exposedComm->exposedNs, std::uint64_t{1300});
        QCOMPARE(r.ranks[0].exposedComm->stepNs, std::uint64_t{2800});
        QCOMPARE(r.ranks[1].exposedComm->fractionMedian, 0.0625);
        QVERIFY(!r.ranks[0].device.has_value());
        QCOMPARE(r.ranks[1].device->name, std::string("cuda:0 (Test GPU)"));
        QCOMPARE(r.ranks[1].device->poolReservedHighBytes, std::uint64_t{4096});
        QCOMPARE(r.json, json);
        // A report from before reports carried a schema: one line that says so, not a guess.
        nlohmann::json old = nlohmann::json::parse(json);
        old.erase("schema");
        try {
            parseRunReport(old.dump());
            QFAIL("a report without a schema was read");
        } catch (const Error& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("report has no schema field")), e.what());
        }
        // In a recording the report is a summary beside the events: the run still replays and
        // the assembler says why it has no report.
        replay::StreamAssembler assembler;
        assembler.consume(protocol::Report{old.dump()});
        const replay::StreamAssembler::Output out = assembler.take();
        QVERIFY(!out.report);
        QVERIFY2(QString::fromStdString(out.reportProblem).contains(QStringLiteral("re-run to regenerate")),
                 out.reportProblem.c_str());
        // The handshake says how the ranks ran.
        const RunInfo info = parseRunInfo(R"({"strategy":"zero3","backend":"cuda","shared_device":true})", 2);
        QCOMPARE(info.backend, std::string("cuda"));
        QVERIFY(info.sharedDevice);
        QVERIFY(!parseRunInfo("{}", 2).sharedDevice);
    }
};

QTEST_GUILESS_MAIN(ReplayModelTest)
#include "replay_model_test.moc"
