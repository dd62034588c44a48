// The Flows page on a real T = 2 × D = 2 recording, made here by shardscope-cli with rank
// threads: the TP all-reduce (over the TP groups {0,1}, {2,3}) beside ZeRO's all-gather (over the
// DP groups {0,2}, {1,3}) at the playhead or nearest to it, drawn with each group framed.
#include "cli_process.h"
#include "common/category_palette.h"
#include "flows/flow_page.h"
#include "flows/flow_view.h"
#include "playback/explain_text.h"
#include "run/replay_player.h"
#include "run/run_document.h"

#include <QCheckBox>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

using Groups = std::vector<std::vector<int>>;

bool openAndWait(RunDocument& document, const QString& path) {
    if (!document.session().openRecording(path)) return false;
    QElapsedTimer clock;
    clock.start();
    while (document.session().isActive() && clock.elapsed() < 20000)
        QTest::qWait(20);
    return !document.session().isActive() && document.model().stepCount() > 0;
}

bool hasColor(const QImage& img, const QColor& c) {
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if (img.pixel(x, y) == c.rgb()) return true;
    return false;
}

} // namespace

class FlowTpTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        path_ = dir_.filePath(QStringLiteral("tp2x2.sstrace"));
        const auto r = testing::runProgram(SHARDSCOPE_BIN_DIR "/shardscope-cli",
                                           {"run", "--model", "tiny_tp", "--ranks", "4", "--tp",
                                            "2", "--strategy", "zero3", "--steps", "1",
                                            "--precision", "bf16", "--deterministic",
                                            "--shared-device", "--trace", path_.toStdString()});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
    }

    void sideBySideShowsBothKindsWithTheirGroups() {
        RunDocument document;
        FlowPage page(document);
        page.resize(1400, 700);
        page.show();
        QVERIFY(openAndWait(document, path_));
        QCOMPARE(document.model().info()->tensorParallel, 2);
        QVERIFY(page.sideBySide());
        QVERIFY(page.tensorView()->isVisible());
        const std::uint64_t n = document.model().eventCount();
        for (std::uint64_t k : {std::uint64_t{1}, n / 4, n / 2, 3 * n / 4, n}) {
            document.player().seek(k);
            const FlowState& tp = page.tensorView()->state();
            const FlowState& dp = page.view()->state();
            QVERIFY2(tp.valid && dp.valid, qPrintable(QStringLiteral("at %1 of %2").arg(k).arg(n)));
            QCOMPARE(tp.kind, CollectiveOp::TpAllReduce);
            QCOMPARE(tp.scope, CollectiveScope::TensorParallel);
            QCOMPARE(tp.groupSize, 2);
            QCOMPARE(tp.members, (Groups{{0, 1}, {2, 3}}));
            QCOMPARE(dp.kind, CollectiveOp::AllGather);
            QCOMPARE(dp.groupSize, 2);
            QCOMPARE(dp.members, (Groups{{0, 2}, {1, 3}}));
            QCOMPARE(dp.chunkOwners, (std::vector<int>{0, 1}));
            // Every rank's state is told in the TP all-reduce's own phase, whatever it computes
            // now.
            const QString other = tp.phase == Phase::Backward ? QStringLiteral("activation")
                                                              : QStringLiteral("input gradient");
            for (int r = 0; r < 4; ++r)
                QVERIFY2(!page.tensorView()->rankLabel(r).contains(other),
                         qPrintable(page.tensorView()->rankLabel(r)));
        }
        // Inside a TP all-reduce: the TP pane is at the playhead, its ranks summing partials.
        std::uint64_t inTp = 0;
        for (std::uint64_t i = 0; i < n && !inTp; ++i) {
            const Event& e = document.model().event(i);
            if (e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::TpAllReduce) {
                QCOMPARE(e.peers, 2);
                inTp = i + 1;
            }
        }
        QVERIFY(inTp > 0);
        document.player().seek(inTp);
        const FlowState& tp = page.tensorView()->state();
        QVERIFY(tp.atPlayhead && tp.active);
        const int rank = document.model().event(inTp - 1).rank;
        QCOMPARE(tp.ranks[static_cast<std::size_t>(rank)].cycle, UnitCycle::TpReducing);
        QCOMPARE(tp.phase, Phase::Forward);
        // The explain panel names the partner of the TP group and the phase.
        const QString sentence = Explain::explain(document.model(), inTp, *document.model().info());
        QVERIFY2(
            sentence.contains(QStringLiteral("partial activations with rank(s) %1").arg(rank ^ 1)),
            qPrintable(sentence));
        // The frames: TP groups in the TP all-reduce's colour, DP groups in the all-gather's.
        const QImage tpShot = page.tensorView()->grab().toImage();
        const QImage dpShot = page.view()->grab().toImage();
        QVERIFY(hasColor(tpShot, spanKindColor(SpanKind::TpAllReduce).darker(115)));
        QVERIFY(hasColor(dpShot, spanKindColor(SpanKind::AllGather).darker(115)));
        QVERIFY(!hasColor(dpShot, spanKindColor(SpanKind::TpAllReduce).darker(115)));
    }

    // The explain panel on the mesh: a backward TP all-reduce sums partial input gradients with
    // the TP partner (rank ^ 1), a ZeRO all-gather runs with the DP partner (rank ^ 2), and a
    // parameter shard is 1/D of its unit, not 1/N.
    void explainNamesTheGroups() {
        RunDocument document;
        QVERIFY(openAndWait(document, path_));
        const ReplayModel& m = document.model();
        bool backwardTp = false, gather = false, shard = false;
        for (std::uint64_t i = 0; i < m.eventCount(); ++i) {
            const Event& e = m.event(i);
            const QString s = Explain::sentence(m, i, *m.info());
            if (e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::TpAllReduce &&
                computePhaseAt(m, i) == Phase::Backward) {
                QVERIFY2(
                    s.contains(
                        QStringLiteral(
                            "partial input gradients with rank(s) %1 of its tensor-parallel group")
                            .arg(e.rank ^ 1)),
                    qPrintable(s));
                backwardTp = true;
            }
            if (e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::AllGather &&
                e.unit >= 0) {
                QVERIFY2(s.contains(QStringLiteral("with rank(s) %1 of its data-parallel group")
                                        .arg(e.rank ^ 2)),
                         qPrintable(s));
                gather = true;
            }
            if (e.kind == EventKind::Alloc && e.category == Category::ParamShard) {
                QVERIFY2(s.endsWith(QStringLiteral("1/2 of the unit.")), qPrintable(s));
                shard = true;
            }
        }
        QVERIFY(backwardTp && gather && shard);
    }

    // Side by side off: one view at the playhead, whatever collective is there, drawn over its
    // own group (a DP all-gather's chunks are D, not N).
    void singleViewFollowsThePlayhead() {
        RunDocument document;
        FlowPage page(document);
        page.resize(1024, 700);
        page.show();
        QVERIFY(openAndWait(document, path_));
        page.setSideBySide(false);
        QVERIFY(!page.tensorView()->isVisible());
        const std::uint64_t n = document.model().eventCount();
        int kinds = 0;
        for (std::uint64_t k = 1; k <= n; k += 7) {
            document.player().seek(k);
            const FlowState& s = page.view()->state();
            if (!s.valid) continue;
            QCOMPARE(s.chunkOwners.size(), static_cast<std::size_t>(s.groupSize));
            for (const auto& g : s.members)
                QCOMPARE(static_cast<int>(g.size()), s.groupSize);
            kinds |= s.kind == CollectiveOp::TpAllReduce ? 1
                     : s.kind == CollectiveOp::AllGather ? 2
                                                         : 0;
            QVERIFY(!page.view()->grab().toImage().isNull());
        }
        QCOMPARE(kinds, 3);
    }

private:
    QTemporaryDir dir_;
    QString path_;
};

QTEST_MAIN(FlowTpTest)
#include "flow_tp_test.moc"
