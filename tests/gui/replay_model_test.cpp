// Run settings (validation with reasons, the worker's arguments, threads vs mpirun, GPU
// placement) and the run report reader. The replay's data layer is tested without Qt in
// tests/unit/replay_model_test.cpp.
#include <QTest>

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

    void runReportReadsExposedCommunication() {
        const std::string json = R"json({"losses":[4.5,4.3],"exposed_comm_fraction":0.47,
            "ranks":[{"rank":0,"exposed_comm":{"fraction_median":0.47,"fraction_per_step":[0.5,0.47,0.4],
                      "comm_union_ns":2400,"exposed_ns":1300,"step_ns":2800}},
                     {"rank":1,"exposed_comm":{"fraction_median":0.0625,"fraction_per_step":[0.07,0.0625]},
                      "device":{"name":"cuda:0 (Test GPU)","pool_reserved_high_bytes":4096,"outside_ledger_bytes":512}},
                     {"rank":2}]})json";
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
        QVERIFY(!r.ranks[2].exposedComm.has_value()); // older workers: absent, not zero
        // No top-level figure: the rank that waits most.
        const RunReport older = parseRunReport(R"({"ranks":[{"rank":0,"exposed_comm":{"fraction_median":0.2}},
                                                            {"rank":1,"exposed_comm":{"fraction_median":0.3}}]})");
        QCOMPARE(older.exposedCommFraction.value_or(-1), 0.3);
        QVERIFY(!parseRunReport(R"({"ranks":[]})").exposedCommFraction.has_value());
        // The handshake says how the ranks ran.
        const RunInfo info = parseRunInfo(R"({"strategy":"zero3","backend":"cuda","shared_device":true})", 2);
        QCOMPARE(info.backend, std::string("cuda"));
        QVERIFY(info.sharedDevice);
        QVERIFY(!parseRunInfo("{}", 2).sharedDevice);
    }
};

QTEST_GUILESS_MAIN(ReplayModelTest)
#include "replay_model_test.moc"
