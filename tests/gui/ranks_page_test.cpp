// The Ranks page as a user drives it: recordings replay deterministically into the rank view,
// every error path ends in an inline message with the page still usable, settings are
// validated inline, and — where the worker and mpirun exist — real jobs run, stop and die.
#include "common/run_labels.h"
#include "fake_cli.h"
#include "launch/mpirun.h"
#include "launch/process_tree.h"
#include "ledger_reference.h"
#include "plan/collective.h"
#include "ranks/rank_ledger_view.h"
#include "ranks/ranks_page.h"
#include "ranks/run_theory_charts.h"
#include "ranks/run_timeline_charts.h"
#include "ranks_page_fixture.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "synthetic_stream.h"
#include "theory/link.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <fstream>

class RanksPageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<RunSession::Outcome>(); }

    void recordingReplaysIntoTheRankView() {
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording({.ranks = 3})));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QCOMPARE(page.model().stepCount(), std::size_t{2});
        QCOMPARE(page.model().worldSize(), 3);
        QVERIFY(page.bannerText().isEmpty());
        // Seek anywhere: the view shows exactly the model's ledger at that event.
        for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{17}, page.model().eventCount() / 2,
                                page.model().eventCount()}) {
            page.player().seek(k);
            QVERIFY(page.rankView()->state() == page.model().stateAt(k));
        }
        page.showPeakOfStep(1);
        const replay::LedgerState& shown = page.rankView()->state();
        QVERIFY(std::any_of(shown.begin(), shown.end(), [](const replay::RankState& s) {
            return s.live.category(Category::ParamFull) > 0;
        }));
        page.finishPendingDraws();
        QVERIFY(page.savingsChart()->measuredSavings().has_value());
        // ZeRO-3 on 3 ranks: model states are about a third of DDP's (padding makes it a bit less).
        QVERIFY2(std::abs(*page.savingsChart()->measuredSavings() - 3.0) < 0.05,
                 qPrintable(QString::number(*page.savingsChart()->measuredSavings())));
        QVERIFY(page.memoryChart()->pointCount() > 10);
        QCOMPARE(page.lossChart()->pointCount(), 2);
    }

    // A recording the launcher closed after a stop or a signal (its Failure record has no
    // rank) says the run ended early and why, not that "rank -1" failed.
    void aRecordingEndedByTheLauncherNamesNoRank() {
        std::string bytes = testing::syntheticStream({.withReport = false, .withEnd = false});
        protocol::writeRecord(
            bytes,
            protocol::Failure{-1, 1, "interrupted by SIGTERM in step 3: the job was torn down"});
        protocol::writeRecord(bytes, protocol::End{});
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording(bytes)));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Failed);
        const QString banner = page.bannerText();
        QVERIFY2(!banner.contains(QStringLiteral("rank -1")), qPrintable(banner));
        QVERIFY2(banner.contains(QStringLiteral("ends early")) &&
                     banner.contains(QStringLiteral("interrupted by SIGTERM in step 3")),
                 qPrintable(banner));
    }

    // A recording whose report does not read (here: from before reports had a schema) still
    // replays, and the page says why it has no report.
    void unreadableReportIsExplained() {
        std::string bytes = testing::syntheticStream({.withReport = false, .withEnd = false});
        nlohmann::json old = report::toJson(report::RunReport{});
        old.erase("schema");
        protocol::writeRecord(bytes, protocol::Report{old.dump()});
        protocol::writeRecord(bytes, protocol::End{});
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording(bytes)));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QCOMPARE(page.model().stepCount(), std::size_t{2});
        QVERIFY(!page.document.report());
        QVERIFY2(
            page.document.reportProblem().contains(QStringLiteral("report has no schema field")),
            qPrintable(page.document.reportProblem()));
        page.finishPendingDraws();
        QVERIFY2(page.exposedText().contains(QStringLiteral("Report unreadable")) &&
                     page.exposedText().contains(QStringLiteral("report has no schema field")),
                 qPrintable(page.exposedText()));

        // The next recording reads its report: the reason goes away.
        QVERIFY(page.openRecording(page.saveRecording()));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QVERIFY(page.document.reportProblem().isEmpty());
        page.finishPendingDraws();
        QVERIFY2(!page.exposedText().contains(QStringLiteral("Report unreadable")),
                 qPrintable(page.exposedText()));
    }

    // An offloaded run's report: exposed transfers per rank beside exposed communication; a run
    // that moved nothing between tiers (the golden one) has no such line.
    void offloadedRunShowsExposedTransfers() {
        TestPage page;
        QVERIFY(page.openRecording(
            QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/offload_nvme_tiny_2r.sstrace")));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        page.finishPendingDraws();
        QVERIFY2(page.exposedText().contains(QStringLiteral("Exposed communication")) &&
                     page.exposedText().contains(QStringLiteral("<b>Exposed transfers</b>")) &&
                     page.exposedText().contains(QStringLiteral("rank 1 ")),
                 qPrintable(page.exposedText()));
        QVERIFY(page.openRecording(
            QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/golden_zero3_tiny_2r.sstrace")));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        page.finishPendingDraws();
        QVERIFY2(!page.exposedText().contains(QStringLiteral("Exposed transfers")),
                 qPrintable(page.exposedText()));
    }

    // CPU ranks over MPI wait most of a step: the page says, as an estimate, what the same
    // collectives would take on GPUs linked by NVLink, priced from this rank's own bytes and calls.
    void theExposedLineEstimatesTheCollectivesOnAGpuLink() {
        TestPage page;
        QVERIFY(page.openRecording(
            QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/golden_zero3_tiny_2r.sstrace")));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        page.finishPendingDraws();
        const report::RunReport& r = *page.document.report();
        QCOMPARE(r.worldSize, 2);
        theory::LinkEstimate expect;
        for (const auto& [kind, sent] : r.ranks.at(0).commBytesPerStep)
            for (CollectiveOp op : plan::kCollectives)
                if (collectiveOpName(op) == kind)
                    for (const auto& [k, calls] : r.commCallsPerStep)
                        if (k == kind)
                            expect += theory::estimateCollectives(theory::kNvlinkH100, op, sent,
                                                                  calls, 2);
        QVERIFY(expect.seconds() > 0);
        const double ms = expect.seconds() * 1e3;
        const QString figure =
            QStringLiteral("≈ %1 ms").arg(ms, 0, 'f', ms < 0.1 ? 3 : (ms < 10 ? 2 : 1));
        QVERIFY2(page.exposedText().contains(QStringLiteral("<b>On H100 NVLink</b>: ")) &&
                     page.exposedText().contains(QStringLiteral("(estimate; here ")) &&
                     page.exposedText().contains(figure),
                 qPrintable(page.exposedText() + QStringLiteral(" / ") + figure));
    }

    // Each collective is priced over the group it ran in: HYBRID_SHARD gathers and
    // reduce-scatters within its shard group and all-reduces across the replicas; a job larger
    // than one node's NVLink domain gets no NVLink figure.
    void theGpuEstimatePricesEachCollectiveOverItsGroup() {
        report::RunReport r;
        r.worldSize = 8;
        r.strategy = "fsdp_hybrid";
        r.config = {{"knobs", {{"hybrid_group", 2}}}};
        r.ranks.resize(1);
        r.ranks[0].commBytesPerStep = {
            {"all_gather", 3e6}, {"reduce_scatter", 2e6}, {"all_reduce", 1e6}};
        r.commCallsPerStep = {{"all_gather", 10}, {"reduce_scatter", 5}, {"all_reduce", 5}};
        theory::LinkEstimate expect =
            theory::estimateCollectives(theory::kNvlinkH100, CollectiveOp::AllGather, 3e6, 10, 2);
        expect += theory::estimateCollectives(theory::kNvlinkH100, CollectiveOp::ReduceScatter, 2e6,
                                              5, 2);
        expect +=
            theory::estimateCollectives(theory::kNvlinkH100, CollectiveOp::AllReduce, 1e6, 5, 4);
        const double ms = expect.seconds() * 1e3;
        const QString text = gpuLinkEstimateText(r, 0, 1);
        QVERIFY2(text.contains(
                     QStringLiteral("≈ %1 ms").arg(ms, 0, 'f', ms < 0.1 ? 3 : (ms < 10 ? 2 : 1))),
                 qPrintable(text));
        r.worldSize = 16;
        QVERIFY(gpuLinkEstimateText(r, 0, 1).isEmpty());
    }

    void goldenRecordingDrivesTheRankView() {
        const QString golden =
            QStringLiteral(QT_TESTCASE_SOURCEDIR "/../data/golden_zero3_tiny_2r.sstrace");
        QFile file(golden);
        if (!file.open(QIODevice::ReadOnly))
            QSKIP("tests/data/golden_zero3_tiny_2r.sstrace is missing");
        const testing::Reference ref(file.readAll().toStdString());
        TestPage page;
        QVERIFY(page.openRecording(golden));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QCOMPARE(page.model().eventCount(), ref.order.size());
        std::string why;
        // Scrub backwards and forwards, then play forward one event at a time through a step.
        for (std::uint64_t k = page.model().eventCount(); k > 0;
             k -= std::min<std::uint64_t>(k, 29)) {
            page.player().seek(k);
            QVERIFY2(testing::sameAsReference(ref, page.rankView()->state(), k, &why), why.c_str());
        }
        for (std::uint64_t k = 0; k <= page.model().eventCount(); ++k) {
            page.player().seek(k);
            QVERIFY2(testing::sameAsReference(ref, page.rankView()->state(), k, &why), why.c_str());
        }
        QVERIFY(page.bannerText().isEmpty());
    }

    void playbackAdvancesInSlowMotion() {
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording()));
        page.waitForEnd(10000);
        page.player().seek(0);
        page.player().setSlowMotion(ReplayPlayer::kMinSlowMotion *
                                    20000); // the synthetic step lasts ~0.1 ms
        page.player().play();
        QTRY_VERIFY_WITH_TIMEOUT(page.player().cursor().index() > 20, 5000);
        QVERIFY(page.player().cursor().index() < page.model().eventCount());
        page.player().pause();
    }

    void corruptRecordingsShowAMessageAndThePageStaysUsable_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        const std::string good = testing::syntheticStream(testing::SyntheticRun{});
        QTest::newRow("truncated") << QByteArray::fromStdString(good.substr(0, good.size() - 30))
                                   << QStringLiteral("truncated");
        QTest::newRow("not a recording") << QByteArray("hello, world, this is text")
                                         << QStringLiteral("not a ShardScope stream");
        std::string future = good;
        future[8] = 99; // protocol version 99
        QTest::newRow("other version")
            << QByteArray::fromStdString(future) << QStringLiteral("protocol version 99");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("too short");
    }
    void corruptRecordingsShowAMessageAndThePageStaysUsable() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording(bytes.toStdString())));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(message), qPrintable(page.bannerText()));
        QVERIFY(!page.isBusy());
        QVERIFY(page.openRecording(page.saveRecording()));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
        QVERIFY(page.bannerText().isEmpty());
        QCOMPARE(page.model().stepCount(), std::size_t{2});
    }

    void missingFileIsAnInlineError() {
        TestPage page;
        QVERIFY(page.openRecording(QStringLiteral("/nonexistent/run.sstrace")));
        QCOMPARE(page.waitForEnd(5000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(QStringLiteral("cannot open")),
                 qPrintable(page.bannerText()));
    }

    void outOfMemoryRecordingNamesTheAllocation() {
        TestPage page;
        QVERIFY(page.openRecording(page.saveRecording({.failRank = 1})));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(QStringLiteral("rank 1")) &&
                     page.bannerText().contains(QStringLiteral("activation of block1")),
                 qPrintable(page.bannerText()));
        QCOMPARE(page.model().stepCount(), std::size_t{2}); // the cut-short step still replays
    }

    void missingWorkerAndMpirunAreInlineErrors() {
        TestPage page;
        page.session().setWorkerPath(QStringLiteral("/nonexistent/shardscope-worker"));
        QVERIFY(!page.runDefault());
        QCOMPARE(page.ended.size(), 1);
        QVERIFY2(page.bannerText().contains(QStringLiteral("shardscope-worker was not found")),
                 qPrintable(page.bannerText()));
        page.session().setMpirun(QStringLiteral("mpirun-that-does-not-exist"));
        QVERIFY(!page.runDefault());
        QVERIFY2(page.bannerText().contains(QStringLiteral("mpirun was not found")),
                 qPrintable(page.bannerText()));
        QVERIFY(page.findChild<QPushButton*>(QStringLiteral("runButton"))
                    ->isEnabled()); // usable: try again
    }

    // The banner phrases the CLI's typed ending (--ending) in the GUI's words; the CLI's own
    // English line is not what the user reads.
    void failedRunShowsTheTypedEnding() {
        QTemporaryDir dir;
        const QString cli = testing::writeFakeCli(dir, testing::kRank2KilledInStep3);
        QVERIFY(!cli.isEmpty());
        TestPage page;
        page.session().setCliPath(cli);
        page.session().setWorkerPath(QStringLiteral("/bin/sh")); // never started by the fake
        QVERIFY(page.runRequest(tinyThreadsRequest(5)));         // no mpirun needed
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Failed);
        QCOMPARE(page.bannerText(), QStringLiteral("Rank 2 exited (signal 9) in step 3"));
        QVERIFY(page.session().lastEnding());
        QCOMPARE(page.session().lastEnding()->step, std::optional<std::int64_t>(3));
    }

    // The GUI words every ending the CLI can hand back from its typed fields: the rank the
    // progress records named as stuck, mpirun killed, the rank threads' process killed.
    void typedEndingsNameWhatTheCliNamed() {
        using launch::EndingKind;
        launch::JobEnding stuck{.kind = EndingKind::Stalled,
                                .rank = 2,
                                .step = 3,
                                .cause = "it did not arrive at the all-gather of block1"};
        QCOMPARE(RunSession::endingText(stuck),
                 QStringLiteral("Rank 2 is stuck in step 3: it did not arrive at the all-gather of "
                                "block1; the job was torn down"));
        stuck.rank.reset();
        QCOMPARE(RunSession::endingText(stuck),
                 QStringLiteral("No progress in step 3 for the stall timeout: a rank is stuck; the "
                                "job was torn down"));
        launch::JobEnding mpirun;
        mpirun.kind = EndingKind::LaunchError;
        mpirun.signal = 9;
        mpirun.step = 2;
        mpirun.cause = "mpirun was killed (signal 9)";
        QCOMPARE(RunSession::endingText(mpirun),
                 QStringLiteral("mpirun was killed (signal 9) in step 2; the job was torn down"));
        launch::JobEnding threads;
        threads.kind = EndingKind::Failed;
        threads.signal = 9;
        threads.step = 1;
        threads.cause = "the worker process with every rank thread exited (signal 9)";
        QCOMPARE(RunSession::endingText(threads),
                 QStringLiteral("The job ended in step 1: the worker process with every rank "
                                "thread exited (signal 9)"));
    }

    void invalidSettingsAreShownInlineAndBlockRun() {
        TestPage page;
        RunConfigPanel* panel = page.configPanel();
        RunRequest r;
        r.strategy = plan::Strategy::FsdpHybridShard;
        r.ranks = 4;
        r.hybridGroup = 3;
        panel->setRequest(r);
        QVERIFY2(panel->errorText(RunField::HybridGroup).contains(QStringLiteral("must divide")),
                 qPrintable(panel->errorText(RunField::HybridGroup)));
        QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
        QVERIFY(!page.runConfigured());
        QVERIFY(page.bannerText().contains(QStringLiteral("Invalid settings")));
        qobject_cast<QSpinBox*>(panel->fieldWidget(RunField::HybridGroup))->setValue(2);
        QVERIFY(panel->errorText(RunField::HybridGroup).isEmpty());
        QVERIFY(page.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
        // GPU is listed but cannot be picked without a device, and says why.
        GpuSupport none;
        none.cuda.reason = "no CUDA device (cudaGetDeviceCount: test)";
        panel->setGpuSupport(none);
        auto* backend = qobject_cast<QComboBox*>(panel->fieldWidget(RunField::Backend));
        QVERIFY(!qobject_cast<QStandardItemModel*>(backend->model())->item(1)->isEnabled());
        QVERIFY(backend->itemData(1, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("no CUDA device")));
    }

    // Without mpirun the checkbox is ticked, locked and explained; with it the user chooses.
    void threadsCheckboxFollowsMpirun() {
        TestPage page;
        RunConfigPanel* panel = page.configPanel();
        auto* threads = panel->findChild<QCheckBox*>(QStringLiteral("threadsCheck"));
        QVERIFY(threads);
        QVERIFY(!threads->text().isEmpty());
        panel->setMpiUnavailable(QString());
        QVERIFY(!threads->isChecked()); // mpirun found: off by default
        QVERIFY(threads->isEnabled());
        QVERIFY(!panel->request().threads);
        QVERIFY(panel->launchNote().isEmpty());
        panel->setMpiUnavailable(QStringLiteral("mpirun not found"));
        QVERIFY(threads->isChecked());
        QVERIFY(!threads->isEnabled());
        QVERIFY(panel->request().threads);
        QVERIFY2(panel->launchNote().contains(QStringLiteral("mpirun not found")),
                 qPrintable(panel->launchNote()));
        QVERIFY(panel->isValid());
        panel->setRequest(tinyRequest(2)); // a request without threads cannot untick it
        QVERIFY(panel->request().threads);
        panel->setMpiUnavailable(QString());
        QVERIFY(!threads->isChecked());
        threads->setChecked(true);
        QVERIFY(panel->request().threads);
        QVERIFY(!panel->launchNote().isEmpty()); // says what the mode does
    }

    // With a device the GPU entry can be chosen; more ranks than GPUs need the threads mode,
    // said under the checkbox, and Run waits until it is ticked.
    void gpuRanksBeyondTheGpusAskForThreads() {
        TestPage page;
        RunConfigPanel* panel = page.configPanel();
        panel->setMpiUnavailable(QString());
        GpuSupport gpu;
        gpu.cuda.available = true;
        gpu.cuda.deviceCount = 1;
        gpu.workerCuda = gpu.workerNccl = true;
        panel->setGpuSupport(gpu);
        auto* backend = qobject_cast<QComboBox*>(panel->fieldWidget(RunField::Backend));
        auto* model = qobject_cast<QStandardItemModel*>(backend->model());
        QVERIFY(model->item(1)->isEnabled());
        backend->setCurrentIndex(1);
        qobject_cast<QSpinBox*>(panel->fieldWidget(RunField::Ranks))->setValue(2);
        QVERIFY2(panel->errorText(RunField::SharedDevice).contains(QStringLiteral("GPU")),
                 qPrintable(panel->errorText(RunField::SharedDevice)));
        QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
        panel->findChild<QCheckBox*>(QStringLiteral("threadsCheck"))->setChecked(true);
        QVERIFY(panel->errorText(RunField::SharedDevice).isEmpty());
        QVERIFY(panel->isValid());
        QVERIFY2(panel->launchNote().contains(QStringLiteral("GPU 0")),
                 qPrintable(panel->launchNote()));
        QVERIFY(panel->request().gpu && panel->request().threads);
        // No device: the entry is disabled again and its tooltip carries the probe's reason.
        GpuSupport none;
        none.cuda.reason = "no CUDA device (test)";
        panel->setGpuSupport(none);
        QVERIFY(!model->item(1)->isEnabled());
        QVERIFY(backend->itemData(1, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("no CUDA device (test)")));
    }

    // A real 2-rank run as threads of one worker process: no mpirun in the tree, the stream and
    // report arrive as from mpirun, and the summary shows each rank's exposed communication.
    void liveRunAsThreads() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        page.session().setMpirun(QStringLiteral("mpirun-that-does-not-exist")); // never asked for
        QVERIFY(page.runRequest(tinyThreadsRequest(2)));
        QVERIFY(page.session().isDirect());
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Completed);
        QVERIFY2(page.bannerText().isEmpty(), qPrintable(page.bannerText()));
        QCOMPARE(page.model().worldSize(), 2);
        QCOMPARE(page.model().stepCount(), std::size_t{2});
        page.finishPendingDraws();
        QVERIFY2(page.exposedText().contains(QStringLiteral("rank 1")) &&
                     page.exposedText().contains(QStringLiteral("%")),
                 qPrintable(page.exposedText()));
    }

    // A rank thread that fails ends the one process; the banner names the rank and the cause.
    void failingThreadsRunNamesTheRank() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        RunRequest r = tinyThreadsRequest(3);
        r.ranks = 3;
        r.capacityBytes = 1500000; // below the tiny model's ZeRO-3 peak on 3 ranks
        QVERIFY(page.runRequest(r));
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(QStringLiteral("out of device memory")) &&
                     page.bannerText().contains(QStringLiteral("Rank ")),
                 qPrintable(page.bannerText()));
    }

    // Stop: the one worker process goes (the CLI's SIGTERM, then SIGKILL after the grace period).
    void stopEndsTheThreadsWorker() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        QVERIFY(page.runRequest(tinyThreadsRequest(100000)));
        QTRY_VERIFY_WITH_TIMEOUT(page.model().stepCount() >= 1, 30000);
        // Under the supervising CLI: the worker itself, no mpirun.
        const std::vector<ProcessId> tree =
            descendantPids(static_cast<pid_t>(page.session().processId()));
        QCOMPARE(tree.size(), std::size_t{1});
        const pid_t pid = tree.front().pid;
        const std::string name = processName(pid);
        QVERIFY2(name.rfind("shardscope-wor", 0) == 0, name.c_str());
        page.stop();
        QCOMPARE(page.waitForEnd(20000), RunSession::Outcome::Stopped);
        QTRY_VERIFY_WITH_TIMEOUT(processName(pid).empty(), 10000);
        QVERIFY(page.bannerText().isEmpty());
    }

    void liveRunOfTwoRanks() {
        SKIP_IF_MISSING(missingForMpirun());
        LivePage page;
        QVERIFY(page.runRequest(tinyRequest(2)));
        const auto outcome = page.waitForEnd(120000);
        QVERIFY2(outcome == RunSession::Outcome::Completed, qPrintable(page.bannerText()));
        QCOMPARE(page.model().worldSize(), 2);
        QCOMPARE(page.model().stepCount(), std::size_t{2});
        QVERIFY(page.model().eventCount() > 0);
        page.finishPendingDraws();
        QVERIFY(page.savingsChart()->measuredSavings().value_or(0) >
                1.5); // ZeRO-3 on 2 ranks: ≈ 2×
    }

    void killedRankIsReportedAndNothingIsLeft() {
        SKIP_IF_MISSING(missingForMpirun());
        LivePage page;
        QVERIFY(page.runRequest(tinyRequest(2000)));
        QTRY_VERIFY_WITH_TIMEOUT(page.model().stepCount() >= 1, 60000);
        const auto cli = static_cast<pid_t>(page.session().processId());
        std::vector<ProcessId> tree = descendantPids(cli); // mpirun and its ranks
        pid_t victim = -1;
        for (const ProcessId& p : tree) {
            if (processName(p.pid).rfind("shardscope-wor", 0) == 0)
                victim = p.pid; // the last rank found
        }
        QVERIFY2(victim > 0, "no worker process under mpirun");
        ::kill(victim, SIGKILL);
        QCOMPARE(page.waitForEnd(60000), RunSession::Outcome::Failed);
        QVERIFY2(page.bannerText().contains(QStringLiteral("exited")) ||
                     page.bannerText().contains(QStringLiteral("failed")),
                 qPrintable(page.bannerText()));
        // The same step as the CLI prints (cli_jobs_test): counted from 1, the step after the
        // last complete one, and the banner shows that number.
        const auto& ending = page.session().lastEnding();
        QVERIFY(ending && ending->rank && ending->step);
        QCOMPARE(*ending->step, ending->completedSteps + 1);
        QVERIFY(ending->completedSteps >= 1);
        QVERIFY2(page.bannerText().contains(QStringLiteral("in step %1").arg(*ending->step)),
                 qPrintable(page.bannerText()));
        QTRY_VERIFY_WITH_TIMEOUT(allGone(tree), 10000);
        // Still usable: a recording opens.
        QVERIFY(page.openRecording(page.saveRecording()));
        QCOMPARE(page.waitForEnd(10000), RunSession::Outcome::Completed);
    }

    void stopTearsTheJobDown() {
        SKIP_IF_MISSING(missingForMpirun());
        LivePage page;
        QVERIFY(page.runRequest(tinyRequest(2000)));
        QTRY_VERIFY_WITH_TIMEOUT(page.model().stepCount() >= 1, 60000);
        const std::vector<ProcessId> tree =
            descendantPids(static_cast<pid_t>(page.session().processId()));
        QVERIFY(!tree.empty());
        page.stop();
        QCOMPARE(page.waitForEnd(20000), RunSession::Outcome::Stopped);
        QTRY_VERIFY_WITH_TIMEOUT(allGone(tree), 10000);
        QVERIFY(page.bannerText().isEmpty());
    }
};

QTEST_MAIN(RanksPageTest)
#include "ranks_page_test.moc"
