// The Checkpoints page on real checkpoints written by shardscope-cli: the reads it draws are the
// loader's plan (checkpoint/reshard.h) for every new rank, padding at N and M, verification off
// the UI thread, damaged checkpoints named on the page, and "Resume a run from here" filling the
// run settings whose CLI arguments carry --resume.
#include "app/main_window.h"
#include "app/pages.h"
#include "checkpoint/reshard.h"
#include "checkpoint/store.h"
#include "checkpoints/checkpoints_page.h"
#include "checkpoints/reshard_view.h"
#include "common/byte_format.h"
#include "common/language.h"
#include "common/qcustomplot.h"
#include "gui_checkpoint.h"
#include "plan/policy.h"
#include "playback/explain_text.h"
#include "playback/glossary_terms.h"
#include "ranks/ranks_page.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"

#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

// The loader's reads for new rank `rank` of `world` under `strategy`, as train/checkpointing.cpp
// computes them: its owned span of every unit, planned against the metadata.
std::vector<checkpoint::Read> loaderReads(const checkpoint::Metadata& m, plan::Strategy strategy,
                                          int world, int rank) {
    const plan::Policy policy = plan::policyFor(strategy);
    const checkpoint::Placement p = checkpoint::placementOf(policy, world, rank);
    std::vector<checkpoint::Span> needs;
    for (std::size_t u = 0; u < m.units.size(); ++u)
        needs.push_back(checkpoint::ownedSpan(p, policy.shardOptimizer,
                                              static_cast<std::int32_t>(u), m.units[u].elements));
    return checkpoint::planReads(m, needs);
}

bool copyTree(const QString& from, const QString& to) {
    QDir().mkpath(to);
    for (const QFileInfo& f :
         QDir(from).entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString dst = QDir(to).filePath(f.fileName());
        if (f.isDir() ? !copyTree(f.filePath(), dst) : !QFile::copy(f.filePath(), dst))
            return false;
    }
    return true;
}

} // namespace

class CheckpointsPageTest : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;
    QString saved_; // zero3 on N = 3, one step

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        saved_ = tmp_.filePath(QStringLiteral("zero3-3"));
        const QString error = testing::saveTinyCheckpoint(saved_, 3, "zero3");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    // N = 3 → M = 2 (docs/checkpoints.md's worked example on the tiny model): every read the page
    // lists and draws is the loader's, byte offsets included.
    void drawsTheLoadersPlan() {
        CheckpointsPage page;
        page.resize(1200, 800);
        page.show();
        QVERIFY(page.openFolder(saved_));
        QVERIFY2(page.message().isEmpty(), qPrintable(page.message()));
        // Verification runs on its own thread: nothing has come back before the event loop runs.
        QVERIFY(page.verifying());
        QCOMPARE(page.verificationTexts(), QStringList(3, QStringLiteral("verifying…")));
        page.setTarget(2, plan::Strategy::Zero3);
        // The explanation uses this plan's numbers; its terms link to the glossary.
        auto* explain = page.findChild<QLabel*>(QStringLiteral("checkpointExplain"));
        QVERIFY(explain);
        QVERIFY2(
            explain->text().contains(QStringLiteral("1 padding element(s) at N = 3, 0 at M = 2")),
            qPrintable(explain->text()));
        QVERIFY(explain->text().contains(QStringLiteral("glossary:padding")));
        QVERIFY(explain->text().contains(QStringLiteral("glossary:reshard-at-load")));
        const auto glossary = Glossary::entries();
        QVERIFY(Glossary::find(glossary, QStringLiteral("padding")));
        QVERIFY(Glossary::find(glossary, QStringLiteral("reshard-at-load")));
        const LoadPlan* plan = page.loadPlan();
        QVERIFY(plan);
        const checkpoint::Metadata meta = checkpoint::openCheckpoint(saved_.toStdString()).meta;
        QCOMPARE(plan->savedWorld, 3);
        QCOMPARE(plan->newWorld, 2);
        std::size_t drawn = 0;
        for (int r = 0; r < 2; ++r) {
            const std::vector<checkpoint::Read> expected =
                loaderReads(meta, plan::Strategy::Zero3, 2, r);
            std::vector<checkpoint::Read> shown;
            for (const UnitLoadPlan& u : plan->units)
                for (const PlannedRead& pr : u.reads)
                    if (pr.newRank == r) shown.push_back(pr.read);
            std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) {
                return std::tie(a.file, a.range) < std::tie(b.file, b.range);
            });
            QCOMPARE(shown.size(), expected.size());
            std::uint64_t bytes = 0;
            for (std::size_t i = 0; i < expected.size(); ++i) {
                QCOMPARE(shown[i].file, expected[i].file);
                QCOMPARE(shown[i].range, expected[i].range);
                QCOMPARE(shown[i].unit, expected[i].unit);
                QCOMPARE(shown[i].begin, expected[i].begin);
                QCOMPARE(shown[i].end, expected[i].end);
                QVERIFY(shown[i].offsets == expected[i].offsets);
                bytes += expected[i].bytes();
            }
            QCOMPARE(plan->ranks[static_cast<std::size_t>(r)].bytesNeeded, bytes);
            // The table lists the same reads under the rank.
            auto* tree = page.findChild<QTreeWidget*>(QStringLiteral("readsTree"));
            QVERIFY(tree);
            QCOMPARE(tree->topLevelItem(r)->childCount(), static_cast<int>(expected.size()));
            drawn += expected.size();
        }
        // The whole model, once per new rank: 71 900 elements × 12 bytes in all.
        QCOMPARE(plan->ranks[0].bytesNeeded + plan->ranks[1].bytesNeeded,
                 std::uint64_t{71900} * checkpoint::kBytesPerElement);
        // The embedding (6 050 elements): padded to 6 051 at N = 3, not at M = 2; new rank 0 reads
        // [0, 2017) of file 0 and [2017, 3025) of file 1.
        const UnitLoadPlan& emb = plan->units.front();
        QCOMPARE(emb.elements, std::uint64_t{6050});
        QCOMPARE(emb.paddedSaved, std::uint64_t{6051});
        QCOMPARE(emb.paddedNew, std::uint64_t{6050});
        std::vector<ReshardView::Item> reads;
        for (const ReshardView::Item& it : page.view()->itemsOfUnit(0))
            if (it.kind == ReshardView::Kind::Read && it.newRank == 0) reads.push_back(it);
        QCOMPARE(reads.size(), std::size_t{2});
        QCOMPARE(reads[0].file, std::size_t{0});
        QCOMPARE(reads[0].begin, std::uint64_t{0});
        QCOMPARE(reads[0].end, std::uint64_t{2017});
        QCOMPARE(reads[1].file, std::size_t{1});
        QCOMPARE(reads[1].begin, std::uint64_t{2017});
        QCOMPARE(reads[1].end, std::uint64_t{3025});
        // Hovering names the bytes: rank-00001.bin holds [2017, 4034) of the embedding, so the
        // 1 008 elements read start at 0 (master), 8 068 (m) and 16 136 (v).
        const QString v =
            QStringLiteral("Adam v %1–%2").arg(formatBytesExact(16136), formatBytesExact(20168));
        QVERIFY2(reads[1].tooltip.contains(QStringLiteral("rank-00001.bin")) &&
                     reads[1].tooltip.endsWith(v),
                 qPrintable(reads[1].tooltip));
        // Drawn where they belong: under the saved range, above the new shard, on rank 0's lane.
        QVERIFY(reads[0].rect.right() <= reads[1].rect.left() + 0.5);
        std::size_t drawnReads = 0;
        for (std::size_t u = 0; u < plan->units.size(); ++u)
            for (const ReshardView::Item& it : page.view()->itemsOfUnit(u))
                drawnReads += it.kind == ReshardView::Kind::Read;
        QCOMPARE(drawnReads, drawn);
        bool savedPadding = false;
        for (const ReshardView::Item& it : page.view()->itemsOfUnit(0))
            savedPadding |= it.kind == ReshardView::Kind::SavedPadding;
        QVERIFY(savedPadding);
        // Verified off the UI thread.
        QTRY_VERIFY_WITH_TIMEOUT(!page.verifying(), 10000);
        QCOMPARE(page.verificationTexts(),
                 QStringList({QStringLiteral("OK"), QStringLiteral("OK"), QStringLiteral("OK")}));
    }

    // DDP on M = 3: every new rank owns (and reads) the whole model.
    void replicatedTargetReadsEverything() {
        CheckpointsPage page;
        QVERIFY(page.openFolder(saved_));
        page.setTarget(3, plan::Strategy::Ddp);
        QVERIFY(page.loadPlan());
        for (const RankLoad& r : page.loadPlan()->ranks)
            QCOMPARE(r.bytesNeeded, std::uint64_t{71900} * checkpoint::kBytesPerElement);
        // Padding is named at M = 3 ranks (DDP pads nothing: one shard), not at the shard count.
        auto* explain = page.findChild<QLabel*>(QStringLiteral("checkpointExplain"));
        QVERIFY2(explain && explain->text().contains(QStringLiteral("at N = 3, 0 at M = 3")),
                 qPrintable(explain->text()));
        // A hybrid group that does not divide M is named on the page, nothing drawn.
        page.setTarget(3, plan::Strategy::FsdpHybridShard, 2);
        QVERIFY(!page.loadPlan());
        QVERIFY2(page.message().contains(QStringLiteral("does not divide")),
                 qPrintable(page.message()));
        // A target that divides clears the message.
        page.setTarget(4, plan::Strategy::FsdpHybridShard, 2);
        QVERIFY(page.loadPlan());
        QVERIFY(page.message().isEmpty());
        // Two shard groups of 2: every rank needs half of every unit, each copy reads it again.
        for (const RankLoad& r : page.loadPlan()->ranks)
            QCOMPARE(r.bytesNeeded, std::uint64_t{71900} * checkpoint::kBytesPerElement / 2);
        // SHARDSCOPE_LAYOUT_SHOTS=DIR keeps a picture of the replicated layout, to look at.
        if (const QString shots = qEnvironmentVariable("SHARDSCOPE_LAYOUT_SHOTS");
            !shots.isEmpty()) {
            page.resize(1400, 900);
            page.show();
            QVERIFY(QTest::qWaitForWindowExposed(&page));
            page.grab().save(shots + QStringLiteral("/checkpoints-hybrid-4.png"));
            page.setTarget(3, plan::Strategy::Ddp);
            QCoreApplication::processEvents();
            page.grab().save(shots + QStringLiteral("/checkpoints-ddp-3.png"));
        }
        QTRY_VERIFY_WITH_TIMEOUT(!page.verifying(), 10000);
    }

    // Two steps saved: the latest opens by default, a step folder opens at that step.
    // A pipelined run's checkpoint: each stage sharded its units over its own ranks (6 ranks in
    // 2 stages: 3 shards, padding to 3), and the page says a pipeline saved it.
    void aPipelinesCheckpointIsShardedPerStage() {
        const QString dir = tmp_.filePath(QStringLiteral("zero3-6-pp2"));
        const QString error = testing::saveTinyCheckpoint(dir, 6, "zero3", 1, 0, 2);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const checkpoint::Metadata meta = checkpoint::openCheckpoint(dir.toStdString()).meta;
        QCOMPARE(meta.pipeParallel, 2);
        QCOMPARE(savedShardCount(meta), 3);
        for (const checkpoint::UnitEntry& u : meta.units)
            QCOMPARE(u.padded % 3, std::uint64_t{0}); // divisible into 3 equal shards
        CheckpointsPage page;
        page.resize(1200, 800);
        page.show();
        QVERIFY(page.openFolder(dir));
        page.setTarget(2, plan::Strategy::Zero3);
        const LoadPlan* plan = page.loadPlan();
        QVERIFY(plan);
        for (const UnitLoadPlan& u : plan->units)
            QCOMPARE(u.shardsSaved, 3);
        bool said = false;
        for (QLabel* l : page.findChildren<QLabel*>())
            said = said || l->text().contains(QStringLiteral("A pipeline of 2 stages saved it"));
        QVERIFY(said);
    }

    void latestStepByDefault() {
        const QString two = tmp_.filePath(QStringLiteral("two-steps"));
        const QString error = testing::saveTinyCheckpoint(two, 2, "fsdp", 2, 1);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        CheckpointsPage page;
        QVERIFY(page.openFolder(two));
        QCOMPARE(page.metadata()->step, 2);
        auto* steps = page.findChild<QComboBox*>(QStringLiteral("stepCombo"));
        QVERIFY(steps);
        QCOMPARE(steps->count(), 2);
        QCOMPARE(steps->currentText(), QStringLiteral("step-2 (latest)"));
        QVERIFY(page.selectStep(QStringLiteral("step-1")));
        QCOMPARE(page.metadata()->step, 1);
        QVERIFY(page.openFolder(two + QStringLiteral("/step-1")));
        QCOMPARE(page.metadata()->step, 1);
        QCOMPARE(steps->currentText(), QStringLiteral("step-1"));
        QTRY_VERIFY_WITH_TIMEOUT(!page.verifying(), 10000);
    }

    void damagedCheckpointsSayWhatIsWrong() {
        CheckpointsPage page;
        QVERIFY(!page.openFolder(tmp_.filePath(QStringLiteral("no-such-folder"))));
        QVERIFY2(page.message().contains(QStringLiteral("no-such-folder")),
                 qPrintable(page.message()));
        // Damaged metadata: named, nothing drawn.
        const QString bad = tmp_.filePath(QStringLiteral("bad-metadata"));
        QVERIFY(copyTree(saved_, bad));
        QFile meta(bad + QStringLiteral("/step-1/metadata.json"));
        QVERIFY(meta.open(QIODevice::ReadWrite));
        QByteArray text = meta.readAll();
        text.replace("\"world_size\"", "\"world_sizes\"");
        meta.resize(0);
        meta.write(text);
        meta.close();
        QVERIFY(!page.openFolder(bad));
        QVERIFY2(page.message().contains(QStringLiteral("world_size")), qPrintable(page.message()));
        QVERIFY(!page.loadPlan());
        // A flipped byte in a data file: the plan still shows, verification names the file's state.
        const QString flipped = tmp_.filePath(QStringLiteral("flipped"));
        QVERIFY(copyTree(saved_, flipped));
        QFile data(flipped + QStringLiteral("/step-1/rank-00001.bin"));
        QVERIFY(data.open(QIODevice::ReadWrite));
        data.seek(100);
        char c = 0;
        data.getChar(&c);
        data.seek(100);
        data.putChar(static_cast<char>(c ^ 0x40));
        data.close();
        QVERIFY(page.openFolder(flipped));
        QVERIFY(page.loadPlan());
        QTRY_VERIFY_WITH_TIMEOUT(!page.verifying(), 10000);
        const QStringList states = page.verificationTexts();
        QCOMPARE(states.size(), 3);
        QCOMPARE(states[0], QStringLiteral("OK"));
        QVERIFY2(states[1].startsWith(QStringLiteral("checksum mismatch")), qPrintable(states[1]));
        QCOMPARE(states[2], QStringLiteral("OK"));
    }

    void resumeFromHereFillsTheRunSettings() {
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        auto* page = qobject_cast<CheckpointsPage*>(window.page(QStringLiteral("checkpoints")));
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        QVERIFY(page && ranks);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.showPage(QStringLiteral("checkpoints")));
        QVERIFY(!ranks->isVisible());
        QVERIFY(page->openFolder(saved_));
        page->setTarget(2, plan::Strategy::FsdpFullShard);
        auto* resume = page->findChild<QPushButton*>(QStringLiteral("resumeHereButton"));
        QVERIFY(resume && resume->isEnabled());
        QTest::mouseClick(resume, Qt::LeftButton);
        const RunRequest r = ranks->configPanel()->request();
        QCOMPARE(r.resumePath, QDir(saved_).filePath(QStringLiteral("step-1")));
        QCOMPARE(r.model, QStringLiteral("tiny"));
        QCOMPARE(r.ranks, 2);
        QCOMPARE(r.strategy, plan::Strategy::FsdpFullShard);
        QVERIFY2(ranks->configPanel()->errorText(RunField::Resume).isEmpty(),
                 qPrintable(ranks->configPanel()->errorText(RunField::Resume)));
        QVERIFY(ranks->isVisible()); // the window turned to the settings it filled
        const QStringList args = workerArguments(r, QStringLiteral("/tmp/s.sock"));
        const qsizetype at = args.indexOf(QStringLiteral("--resume"));
        QVERIFY2(at >= 0 && at + 1 < args.size(), qPrintable(args.join(QLatin1Char(' '))));
        QCOMPARE(args[at + 1], r.resumePath);
        // The real CLI takes these arguments and resumes the N = 3 step on M = 2 ranks (as rank
        // threads, one step, no stream: what RunSession adds besides is the socket).
        {
            RunRequest one = r;
            one.threads = true;
            one.steps = 1;
            QStringList cli = workerArguments(one, QStringLiteral("unused.sock"));
            const qsizetype stream = cli.indexOf(QStringLiteral("--stream"));
            QVERIFY(stream >= 0);
            cli.remove(stream, 2);
            const QString json = tmp_.filePath(QStringLiteral("resumed.json"));
            std::vector<std::string> argv{"run"};
            for (const QString& a : cli)
                argv.push_back(a.toStdString());
            for (const char* a : {"--no-events", "--json"})
                argv.emplace_back(a);
            argv.push_back(json.toStdString());
            const testing::CliResult run =
                testing::runProgram(std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-cli", argv);
            QVERIFY2(run.exitCode == 0, run.err.c_str());
            QFile report(json);
            QVERIFY(report.open(QIODevice::ReadOnly));
            const QJsonObject from = QJsonDocument::fromJson(report.readAll())
                                         .object()
                                         .value(QStringLiteral("resumed_from"))
                                         .toObject();
            QCOMPARE(from.value(QStringLiteral("path")).toString(), r.resumePath);
            QCOMPARE(from.value(QStringLiteral("step")).toInt(), 1);
            QCOMPARE(from.value(QStringLiteral("world_size")).toInt(), 3);
        }
        // Tensor parallelism cannot save: runconfig's refusal, in the panel's words, under the
        // field.
        RunRequest tp = r;
        tp.model = QStringLiteral("tiny_tp");
        tp.tensorParallel = 2;
        tp.resumePath.clear();
        tp.saveDir = tmp_.filePath(QStringLiteral("new-save"));
        ranks->configPanel()->setRequest(tp);
        QVERIFY2(ranks->configPanel()->errorText(RunField::Save).contains(QStringLiteral("--tp 2")),
                 qPrintable(ranks->configPanel()->errorText(RunField::Save)));
        // Save every K needs a folder.
        RunRequest every = r;
        every.saveEvery = 2;
        ranks->configPanel()->setRequest(every);
        QVERIFY(!ranks->configPanel()->errorText(RunField::SaveEvery).isEmpty());
        every.saveDir = tmp_.filePath(QStringLiteral("every"));
        ranks->configPanel()->setRequest(every);
        QVERIFY(ranks->configPanel()->errorText(RunField::SaveEvery).isEmpty());
        const QStringList saveArgs =
            workerArguments(ranks->configPanel()->request(), QStringLiteral("/tmp/s.sock"));
        QVERIFY(saveArgs.join(QLatin1Char(' '))
                    .contains(QStringLiteral("--save ") + every.saveDir +
                              QStringLiteral(" --save-every 2")));
        QTRY_VERIFY_WITH_TIMEOUT(!page->verifying(), 10000);
    }

    // A resumed run's recording counts on from its checkpoint on every page: saved after step 3
    // and resumed for 2, the header says so, the playhead is in step 4 of 5, the loss axis
    // starts at 4, the progress names the resume (it read "2 of 2 steps", the axis from 1).
    void aResumedRecordingCountsOn() {
        const QString ck = tmp_.filePath(QStringLiteral("on"));
        const QString saved = testing::saveTinyCheckpoint(ck, 2, "zero3", 3);
        QVERIFY2(saved.isEmpty(), qPrintable(saved));
        const QString trace = tmp_.filePath(QStringLiteral("resumed.sstrace"));
        std::string cli = SHARDSCOPE_BIN_DIR;
        cli.append("/shardscope-cli"); // (appended: GCC 12 at -O1 misreads "literal" + string)
        const testing::CliResult run =
            testing::runProgram(cli, {"run", "--model", "tiny", "--shared-device", "--ranks", "2",
                                      "--strategy", "zero3", "--steps", "2", "--resume",
                                      ck.toStdString(), "--trace", trace.toStdString()});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        QVERIFY(ranks->openRecording(trace));
        QTRY_VERIFY_WITH_TIMEOUT(!ranks->isBusy() && ranks->model().stepCount() == 2, 20000);
        QVERIFY2(window.findChild<QLabel*>(QStringLiteral("runTitle"))
                     ->text()
                     .contains(QStringLiteral("resumed after step 3")),
                 qPrintable(window.findChild<QLabel*>(QStringLiteral("runTitle"))->text()));
        auto* progress = window.findChild<QProgressBar*>(QStringLiteral("runProgress"));
        QVERIFY2(progress->format().contains(QStringLiteral("resumed after step 3")),
                 qPrintable(progress->format()));
        auto* loss = window.findChild<QCustomPlot*>(QStringLiteral("lossPlot"));
        QVERIFY(loss && loss->graph(0)->dataCount() == 2);
        QCOMPARE(loss->graph(0)->data()->at(0)->key, 4.0);
        QCOMPARE(loss->graph(0)->data()->at(1)->key, 5.0);
        std::uint64_t begin = 0;
        while (begin < ranks->model().eventCount() &&
               ranks->model().event(begin).kind != EventKind::StepBegin)
            ++begin;
        QVERIFY(begin < ranks->model().eventCount());
        const QString sentence = Explain::sentence(ranks->model(), begin, *ranks->model().info());
        QVERIFY2(sentence.contains(QStringLiteral("begins step 4")), qPrintable(sentence));
    }
};

QTEST_MAIN(CheckpointsPageTest)
#include "checkpoints_page_test.moc"
