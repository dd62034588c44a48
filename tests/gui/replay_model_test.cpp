// The replay's data layer without widgets: the assembler merges ranks' batches into steps, the
// ledger at event k equals a straightforward recomputation from the raw records, and seeking
// (snapshots) equals playing (event by event). Also: tolerant handshake parsing, run settings.
#include <QFile>
#include <QTest>
#include <algorithm>
#include <map>
#include <random>

#include "core/error.h"
#include "report/report.h"
#include "rank_series.h"
#include "replay_model.h"
#include "run_request.h"
#include "stream_assembler.h"
#include "ledger_reference.h"
#include "synthetic_stream.h"

using namespace shardscope;
using namespace shardscope::widgets;
using shardscope::testing::SyntheticRun;

namespace {

// Decodes `bytes` fed in pieces of the given sizes (cycled) into a model.
void load(ReplayModel& model, const std::string& bytes, std::vector<std::size_t> pieces = {1 << 20}) {
    protocol::StreamDecoder decoder;
    StreamAssembler assembler;
    std::size_t at = 0;
    for (std::size_t i = 0; at < bytes.size(); ++i) {
        const std::size_t n = std::min(pieces[i % pieces.size()], bytes.size() - at);
        decoder.feed(std::string_view(bytes).substr(at, n));
        at += n;
        while (auto r = decoder.next()) assembler.consume(std::move(*r));
        auto out = assembler.take();
        if (out.runInfo) model.reset(out.runInfo);
        model.append(out.steps);
    }
    assembler.flushPartialStep();
    model.append(assembler.take().steps);
}

} // namespace

class ReplayModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void ledgerAtEveryEventEqualsRecomputation() {
        SyntheticRun run;
        run.ranks = 4;
        run.units = 40; // several thousand events per step: seeks cross snapshots
        run.steps = 3;
        const std::string bytes = testing::syntheticStream(run);
        ReplayModel model;
        load(model, bytes);
        const testing::Reference ref(bytes);
        QCOMPARE(model.stepCount(), std::size_t{3});
        QCOMPARE(model.eventCount(), ref.order.size());
        QVERIFY(model.step(0).snapshots.size() > 1);
        QString why;
        for (std::uint64_t k = 0; k <= model.eventCount(); k += 37)
            QVERIFY2(sameAsReference(ref, model.stateAt(k), k, &why), qPrintable(why));
        QVERIFY2(sameAsReference(ref, model.stateAt(model.eventCount()), model.eventCount(), &why), qPrintable(why));
        // Transient buffers are gone at the end of a step; the model states stay.
        const RankState& end = model.step(0).endState[1];
        QCOMPARE(end.live.category(Category::ParamFull), std::uint64_t{0});
        QVERIFY(end.live.category(Category::AdamV) > 0);
    }

    // The real worker's recording (tiny, ZeRO-3, 2 ranks, 2 steps): every k, byte for byte.
    void goldenRecordingLedgerEqualsRecomputation() {
        QFile file(QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/golden_zero3_tiny_2r.sstrace"));
        if (!file.open(QIODevice::ReadOnly)) QSKIP("tests/data/golden_zero3_tiny_2r.sstrace is missing");
        const std::string bytes = file.readAll().toStdString();
        ReplayModel model;
        load(model, bytes, {4096});
        const testing::Reference ref(bytes);
        QCOMPARE(model.worldSize(), 2);
        QCOMPARE(model.stepCount(), std::size_t{2});
        QCOMPARE(model.eventCount(), ref.order.size());
        QString why;
        for (std::uint64_t k = 0; k <= model.eventCount(); ++k)
            QVERIFY2(sameAsReference(ref, model.stateAt(k), k, &why), qPrintable(why));
        // What the worker measured at the end equals what its theory said (model states).
        const RunInfo& info = *model.info();
        QVERIFY(info.theoryModelStates.has_value());
        for (Category c : kAllCategories)
            if (stateGroup(c) != StateGroup::Other)
                QCOMPARE(model.steps().back()->endState[0].live.category(c), (*info.theoryModelStates)[index(c)]);
    }

    void splitFeedingGivesTheSameSteps() {
        const std::string bytes = testing::syntheticStream(SyntheticRun{});
        ReplayModel whole, bytewise;
        load(whole, bytes);
        load(bytewise, bytes, {1, 7, 41, 3});
        QCOMPARE(bytewise.eventCount(), whole.eventCount());
        QVERIFY(bytewise.stateAt(whole.eventCount() / 2) == whole.stateAt(whole.eventCount() / 2));
    }

    void scrubbingEqualsPlaying() {
        SyntheticRun run;
        run.ranks = 3;
        run.units = 60;
        const std::string bytes = testing::syntheticStream(run);
        ReplayModel model;
        load(model, bytes);
        ReplayCursor cursor(model);
        cursor.reset();
        std::mt19937 rng(42);
        for (int i = 0; i < 300; ++i) {
            const bool jump = rng() % 4 == 0;
            const std::uint64_t k = jump ? rng() % (model.eventCount() + 1) : std::min(model.eventCount(), cursor.index() + rng() % 50);
            cursor.moveTo(k);
            QCOMPARE(cursor.index(), k);
            QVERIFY2(cursor.state() == model.stateAt(k), qPrintable(QStringLiteral("k=%1").arg(k)));
        }
        // Play every event from the start: identical to seeking at each k.
        cursor.reset();
        for (std::uint64_t k = 0; k <= model.eventCount(); ++k) {
            cursor.moveTo(k);
            if (k % 101 == 0) QVERIFY(cursor.state() == model.stateAt(k));
        }
    }

    void replayClockSkipsIdleTimeAndIsMonotonic() {
        ReplayModel model;
        load(model, testing::syntheticStream(SyntheticRun{}));
        const auto& s0 = model.step(0);
        const auto& s1 = model.step(1);
        QCOMPARE(s1.replayStartNs, s0.replayStartNs + s0.durationNs + 1); // the 5 ms between steps is gone
        std::uint64_t previous = 0;
        for (std::uint64_t k = 1; k <= model.eventCount(); ++k) {
            const std::uint64_t t = model.replayNsAt(k);
            QVERIFY(t >= previous);
            previous = t;
            QVERIFY(model.indexAtReplayNs(t) >= k);
        }
        QCOMPARE(model.indexAtReplayNs(model.totalReplayNs()), model.eventCount());
        QCOMPARE(model.indexAtReplayNs(0), std::uint64_t{1}); // the first event happens at t = 0
    }

    void peakEventIsTheBusiestMoment() {
        ReplayModel model;
        load(model, testing::syntheticStream(SyntheticRun{}));
        const StepData& s = model.step(1);
        const LedgerState at = model.stateAt(s.peakEvent);
        std::uint64_t highest = 0;
        for (std::uint64_t k = s.firstEvent; k <= s.endEvent(); ++k)
            for (const RankState& r : model.stateAt(k)) highest = std::max(highest, r.liveTotal);
        std::uint64_t atPeak = 0;
        for (const RankState& r : at) atPeak = std::max(atPeak, r.liveTotal);
        QCOMPARE(atPeak, highest);
        QVERIFY(std::any_of(at.begin(), at.end(), [](const RankState& r) { return r.live.category(Category::ParamFull) > 0 || r.live.category(Category::GradFull) > 0; }));
    }

    void failureClosesAPartialStep() {
        SyntheticRun run;
        run.failRank = 1;
        ReplayModel model;
        StreamAssembler assembler;
        protocol::StreamDecoder decoder;
        decoder.feed(testing::syntheticStream(run));
        std::vector<FailureInfo> failures;
        while (auto r = decoder.next()) assembler.consume(std::move(*r));
        auto out = assembler.take();
        QCOMPARE(out.steps.size(), std::size_t{2});
        QVERIFY(out.steps[0]->complete);
        QVERIFY(!out.steps[1]->complete);
        QCOMPARE(out.failures.size(), std::size_t{1});
        QCOMPARE(out.failures[0].rank, 1);
        QVERIFY(QString::fromStdString(out.failures[0].message).contains(QStringLiteral("activation")));
    }

    void inconsistentStreamsAreFormatErrors() {
        StreamAssembler a;
        protocol::EventBatch early{0, {Event{}}};
        QVERIFY_THROWS_EXCEPTION(Error, a.consume(early));
        StreamAssembler b;
        b.consume(protocol::Handshake{0, 2, "{}"});
        try {
            b.consume(protocol::EventBatch{5, {Event{}}});
            QFAIL("rank 5 of 2 accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Format);
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("rank 5")));
        }
        StreamAssembler c;
        QVERIFY_THROWS_EXCEPTION(Error, c.consume(protocol::Handshake{0, 1, "not json"}));
    }

    void runInfoToleratesMissingAndUnknownKeys() {
        const RunInfo full = parseRunInfo(testing::syntheticConfig(SyntheticRun{}), 2);
        QCOMPARE(full.strategy, std::string("zero3"));
        QCOMPARE(full.units.size(), std::size_t{4});
        QCOMPARE(full.unitName(2), std::string("block2"));
        QVERIFY(full.theoryModelStates.has_value());
        QVERIFY(!full.capacityBytes.has_value()); // null
        const RunInfo bare = parseRunInfo("{\"strategy\": 3, \"units\": \"x\"}", 8);
        QCOMPARE(bare.worldSize, 8);
        QVERIFY(bare.strategy.empty());
        QVERIFY(bare.units.empty());
        QCOMPARE(bare.unitName(3), std::string("unit 3"));
    }

    void seriesCapKeepsThePeak() {
        ReplayModel model;
        SyntheticRun run;
        run.units = 50;
        load(model, testing::syntheticStream(run));
        const auto full = rankSeries(model.step(0), 0, 1'000'000);
        const auto capped = capSeries(full, 40);
        QVERIFY(capped.size() <= 41);
        std::uint64_t maxFull = 0, maxCapped = 0;
        for (const auto& p : full) maxFull = std::max(maxFull, p.total());
        for (const auto& p : capped) maxCapped = std::max(maxCapped, p.total());
        QCOMPARE(maxCapped, maxFull);
        QCOMPARE(capped.back().replayNs, full.back().replayNs);
    }

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
        StreamAssembler assembler;
        assembler.consume(protocol::Report{old.dump()});
        const StreamAssembler::Output out = assembler.take();
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
