// The Ranks page on a real pipelined recording (P = 2 stages × D = 2, ZeRO-3, rank threads, made
// here by shardscope-cli): each rank is drawn against its own stage's theory — the stages hold
// different units, so one theory for every rank put stage 1's bars under stage 0's numbers.
#include "cli_process.h"
#include "common/byte_format.h"
#include "flows/flow_page.h"
#include "flows/flow_view.h"
#include "ranks/rank_ledger_view.h"
#include "ranks_page_fixture.h"
#include "report/report.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"
#include "run/run_request.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QSpinBox>
#include <algorithm>
#include <set>

namespace {

std::uint64_t deviceStates(const ByteTable& t) {
    std::uint64_t n = 0;
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other) n += t.at(c, Tier::Device);
    return n;
}

} // namespace

class RanksPipelineTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qRegisterMetaType<RunSession::Outcome>();
        QVERIFY(dir_.isValid());
        path_ = dir_.filePath(QStringLiteral("pp2.sstrace"));
        const auto r = shardscope::testing::runProgram(
            SHARDSCOPE_BIN_DIR "/shardscope-cli",
            {"run", "--model", "tiny", "--ranks", "4", "--pp", "2", "--micro-batches", "2",
             "--strategy", "zero3", "--steps", "1", "--deterministic", "--shared-device", "--trace",
             path_.toStdString()});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
    }

    void eachRankHasItsStagesTheory() {
        TestPage page;
        page.resize(1280, 860);
        page.show();
        QVERIFY(page.openRecording(path_));
        QCOMPARE(page.waitForEnd(20000), RunSession::Outcome::Completed);
        const auto info = page.model().info();
        QVERIFY(info);
        QCOMPARE(info->pipeParallel, 2);
        QCOMPARE(info->stageTheory.size(), std::size_t{2});
        const auto report = page.document.report();
        QVERIFY(report);
        page.player().pause();
        page.player().seek(page.model().eventCount());
        RankLedgerView* view = page.rankView();
        view->settle();
        page.finishPendingDraws();

        // Measured model states equal the theory byte for byte, rank by rank: the view's theory
        // and the handshake's are the rank's stage's.
        for (const report::RankReport& rr : report->ranks) {
            const TierTheory* theory = view->tierTheory(rr.rank);
            QVERIFY(theory);
            for (Category c : kAllCategories)
                if (stateGroup(c) != StateGroup::Other)
                    QCOMPARE(theory->modelStates.at(c, Tier::Device),
                             rr.modelStateBytesByTier[index(Tier::Device)][index(c)]);
            QCOMPARE(*info->theoryModelStatesOf(rr.rank), rr.modelStateBytes);
        }
        // The stages differ (stage 0 holds the embedding, stage 1 the head), and so do their
        // predicted peaks.
        const std::uint64_t first = deviceStates(view->tierTheory(0)->modelStates);
        const std::uint64_t second = deviceStates(view->tierTheory(2)->modelStates);
        QVERIFY(first != second);
        QVERIFY(info->predictedPeakOf(0) != info->predictedPeakOf(2));
        QCOMPARE(view->tierTheory(3), view->tierTheory(2));

        // The summary of a stage-1 rank quotes stage 1's theory.
        auto* rank = page.findChild<QSpinBox*>(QStringLiteral("chartRank"));
        QVERIFY(rank);
        rank->setValue(2);
        page.finishPendingDraws();
        auto* line = page.findChild<QLabel*>(QStringLiteral("runSavings"));
        QVERIFY(line);
        const QString expected =
            QStringLiteral("(theory %1)").arg(formatDecimal(static_cast<double>(second)));
        QVERIFY2(line->text().contains(expected), qPrintable(line->text() + " / " + expected));
        // The title says the run was pipelined.
        bool named = false;
        for (QLabel* l : page.findChildren<QLabel*>())
            named = named || l->text().contains(QStringLiteral("2 pipeline stages"));
        QVERIFY(named);
    }

    // Flows: a stage's collective draws the other stage's ranks as what they are, ranks of
    // another stage running other units, not idle members with a shard.
    void flowsSayWhichRanksAreAnotherStage() {
        RunDocument document;
        FlowPage page(document);
        page.resize(1200, 700);
        page.show();
        QVERIFY(document.session().openRecording(path_));
        QElapsedTimer clock;
        clock.start();
        while (document.session().isActive() && clock.elapsed() < 20000)
            QTest::qWait(20);
        const replay::ReplayModel& model = document.model();
        std::uint64_t at = 0;
        for (std::uint64_t i = 0; i < model.eventCount() && !at; ++i) {
            const Event& e = model.event(i);
            if (e.rank == 0 && e.kind == EventKind::CollectiveBegin &&
                e.collective == CollectiveOp::ReduceScatter)
                at = i + 1;
        }
        QVERIFY(at > 0);
        document.player().seek(at);
        // The view draws the collective nearest the playhead: with rank threads another rank's
        // may have begun just before. Whichever it is, its groups lie inside one stage (or join
        // the two ranks of a message): every rank outside them is named as another stage's.
        FlowView* view = page.view();
        const replay::FlowState& state = view->state();
        QVERIFY(state.valid);
        const bool message =
            state.kind == CollectiveOp::PipeSend || state.kind == CollectiveOp::PipeRecv;
        std::set<int> stages; // the stages with a rank in the collective
        for (const auto& g : state.members)
            for (const int m : g)
                stages.insert(m / 2);
        QCOMPARE(stages.size(), message ? std::size_t{2} : std::size_t{1});
        for (int r = 0; r < 4; ++r) {
            if (stages.count(r / 2)) {
                QCOMPARE(view->otherStage(r), -1);
                QVERIFY(!view->rankLabel(r).contains(QStringLiteral("stage")));
            } else {
                QCOMPARE(view->otherStage(r), r / 2);
                QCOMPARE(view->rankLabel(r), QStringLiteral("stage %1: other units").arg(r / 2));
            }
        }
    }

    // The run settings take the pipeline's flags: P stages, the schedule (only with P > 1) and
    // the micro-batches, checked as the CLI checks them, and a run from the page is pipelined.
    void theSettingsRunAPipeline() {
        SKIP_IF_MISSING(missingForThreads());
        LivePage page;
        RunConfigPanel* panel = page.configPanel();
        RunRequest r = tinyThreadsRequest(1);
        r.ranks = 4;
        r.pipeParallel = 3; // tiny has 2 layers
        panel->setRequest(r);
        QVERIFY2(panel->errorText(RunField::PipeParallel).contains(QStringLiteral("layers")),
                 qPrintable(panel->errorText(RunField::PipeParallel)));
        r.pipeParallel = 1;
        panel->setRequest(r);
        QVERIFY(!panel->fieldWidget(RunField::PipeSchedule)->isEnabled());
        r.pipeParallel = 2;
        r.pipeSchedule = plan::PipeSchedule::GPipe;
        r.gradAccum = 3;
        panel->setRequest(r);
        QVERIFY(panel->fieldWidget(RunField::PipeSchedule)->isEnabled());
        QVERIFY(panel->errorText(RunField::PipeParallel).isEmpty());
        const RunRequest shown = panel->request();
        QCOMPARE(shown.pipeParallel, 2);
        QCOMPARE(shown.pipeSchedule, plan::PipeSchedule::GPipe);
        QCOMPARE(shown.gradAccum, 3);
        const QStringList args = workerArguments(shown, QStringLiteral("/tmp/x.sock"));
        const QString line = args.join(QLatin1Char(' '));
        QVERIFY2(line.contains(QStringLiteral("--pp 2")) &&
                     line.contains(QStringLiteral("--pp-schedule gpipe")) &&
                     line.contains(QStringLiteral("--grad-accum 3")),
                 qPrintable(line));
        QVERIFY(page.runConfigured());
        QCOMPARE(page.waitForEnd(30000), RunSession::Outcome::Completed);
        QCOMPARE(page.model().info()->pipeParallel, 2);
        QCOMPARE(page.model().info()->stageTheory.size(), std::size_t{2});
        const auto report = page.document.report();
        QVERIFY(report);
        QCOMPARE(report->gradAccum, 3);
    }

private:
    QTemporaryDir dir_;
    QString path_;
};

QTEST_MAIN(RanksPipelineTest)
#include "ranks_pipeline_test.moc"
