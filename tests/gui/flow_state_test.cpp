// FlowState for known collectives of a ZeRO-3 and a DDP recording: which collective is current,
// the chunks' owners and sizes, and every rank's place in the unshard → compute → reshard cycle.
#include <QTest>

#include "flow_view.h"
#include "timeline_test_recording.h"

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

auto collective(EventKind k, CollectiveOp op, int unit) {
    return [=](const Event& e) { return e.kind == k && e.collective == op && e.unit == unit; };
}
auto paramFull(EventKind k, int unit) {
    return [=](const Event& e) { return e.kind == k && e.category == Category::ParamFull && e.unit == unit; };
}

std::vector<UnitCycle> cycles(const FlowState& s) {
    std::vector<UnitCycle> out;
    for (const FlowRank& r : s.ranks) out.push_back(r.cycle);
    return out;
}

} // namespace

class FlowStateTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nothingBeforeTheFirstCollective() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        const std::uint64_t first = testrec::findEvent(*model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, 0));
        QVERIFY(!computeFlowState(*model, 0).valid);
        // The first all-gather begins on rank 0 first (the others start 37 ns apart).
        QVERIFY(!computeFlowState(*model, first).valid);
        QVERIFY(computeFlowState(*model, first + 1).valid);
    }

    void allGatherOfAForwardUnit() {
        testrec::Spec spec;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        const int unit = 2;
        // Just after rank 1 began the forward all-gather of unit 2: ranks 0 and 1 are in it,
        // ranks 2 and 3 (slightly behind) are still on the previous unit.
        const std::uint64_t b1 = testrec::findEvent(*model, 1, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, unit));
        const std::uint64_t b2 = testrec::findEvent(*model, 2, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, unit));
        QVERIFY(b1 < b2);
        FlowState s = computeFlowState(*model, b1 + 1);
        QVERIFY(s.valid);
        QVERIFY(s.active);
        QCOMPARE(s.kind, CollectiveOp::AllGather);
        QCOMPARE(s.unit, unit);
        QCOMPARE(s.phase, Phase::Forward);
        QCOMPARE(s.step, std::int64_t{0});
        QCOMPARE(s.bytes, testrec::fullBytes(spec));
        QCOMPARE(s.chunkBytes, testrec::shardBytes(spec));
        QCOMPARE(s.sentPerRank, testrec::shardBytes(spec) * 3);
        QCOMPARE(s.chunkOwners, (std::vector<int>{0, 1, 2, 3}));
        QCOMPARE(cycles(s), (std::vector<UnitCycle>{UnitCycle::Gathering, UnitCycle::Gathering, UnitCycle::ShardOnly, UnitCycle::ShardOnly}));
        QVERIFY(s.progress >= 0 && s.progress < 0.05);

        // After every rank's all-gather ended and rank 0 began computing: rank 0 computes,
        // the rest hold full parameters.
        const std::uint64_t c0 = testrec::findEvent(*model, 0, [&](const Event& e) {
            return e.kind == EventKind::ComputeBegin && e.unit == unit && e.phase == Phase::Forward;
        });
        const std::uint64_t e3 = testrec::findEvent(*model, 3, collective(EventKind::CollectiveEnd, CollectiveOp::AllGather, unit));
        s = computeFlowState(*model, std::max(c0, e3) + 1);
        QCOMPARE(s.kind, CollectiveOp::AllGather);
        QVERIFY(!s.active);
        QCOMPARE(s.progress, 1.0);
        QCOMPARE(s.ranks[0].cycle, UnitCycle::Computing);
        QCOMPARE(s.ranks[0].phase, Phase::Forward);
        for (int r = 1; r < 4; ++r) QVERIFY(s.ranks[static_cast<std::size_t>(r)].cycle == UnitCycle::Computing ||
                                            s.ranks[static_cast<std::size_t>(r)].cycle == UnitCycle::Gathered);

        // After rank 0 resharded (freed param_full) but before the next all-gather: freed.
        const std::uint64_t f0 = testrec::findEvent(*model, 0, paramFull(EventKind::Free, unit));
        s = computeFlowState(*model, f0 + 1);
        QCOMPARE(s.unit, unit);
        QCOMPARE(s.ranks[0].cycle, UnitCycle::Freed);
    }

    void reduceScatterInBackward() {
        testrec::Spec spec;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        const int unit = 1;
        const std::uint64_t b0 = testrec::findEvent(*model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::ReduceScatter, unit));
        FlowState s = computeFlowState(*model, b0 + 1);
        QCOMPARE(s.kind, CollectiveOp::ReduceScatter);
        QCOMPARE(s.unit, unit);
        QCOMPARE(s.phase, Phase::Backward);
        QCOMPARE(s.chunkOwners, (std::vector<int>{0, 1, 2, 3})); // chunk j lands on rank j
        QCOMPARE(s.chunkBytes, testrec::shardBytes(spec));
        QCOMPARE(s.ranks[0].cycle, UnitCycle::ReduceScattering);
        // Rank 1 freed its full parameters (resharded) before reaching its reduce-scatter.
        QCOMPARE(s.ranks[1].cycle, UnitCycle::Freed);
        // Once every rank finished: each holds its summed gradient shard.
        const std::uint64_t e3 = testrec::findEvent(*model, 3, collective(EventKind::CollectiveEnd, CollectiveOp::ReduceScatter, unit));
        s = computeFlowState(*model, e3 + 1);
        QCOMPARE(s.kind, CollectiveOp::ReduceScatter);
        QCOMPARE(cycles(s), std::vector<UnitCycle>(4, UnitCycle::Reduced));
        QVERIFY(!s.active);
        QCOMPARE(s.progress, 1.0);
    }

    void allReduceUnderDdp() {
        testrec::Spec spec;
        spec.ddp = true;
        spec.ranks = 2;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        const std::uint64_t b0 = testrec::findEvent(*model, 0, collective(EventKind::CollectiveBegin, CollectiveOp::AllReduce, 3));
        const FlowState s = computeFlowState(*model, b0 + 1);
        QCOMPARE(s.kind, CollectiveOp::AllReduce);
        QCOMPARE(s.unit, 3);
        QCOMPARE(s.chunkOwners, (std::vector<int>{-1, -1}));
        QCOMPARE(s.sentPerRank, testrec::fullBytes(spec)); // 2(N−1)/N = 1 at N = 2
        QCOMPARE(s.ranks[0].cycle, UnitCycle::AllReducing);
        // DDP keeps full parameters: rank 1, not yet in the all-reduce, holds them.
        QCOMPARE(s.ranks[1].cycle, UnitCycle::Gathered);
    }

    void viewShowsTheSameState() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        FlowView view;
        view.resize(900, 460);
        view.setModel(model.get());
        const std::uint64_t k = testrec::findEvent(*model, 2, collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, 1)) + 1;
        view.setPosition(k);
        const FlowState expected = computeFlowState(*model, k);
        QCOMPARE(view.state().kind, expected.kind);
        QCOMPARE(view.state().unit, expected.unit);
        QCOMPARE(cycles(view.state()), cycles(expected));
        const QImage shot = view.grab().toImage();
        QVERIFY(!shot.isNull());
        // The drawing uses the owners' colours: rank 1's hue appears (its shard and its links).
        const QRgb owner = rankColor(1, 4).rgb();
        bool found = false;
        for (int y = 0; y < shot.height() && !found; y += 2)
            for (int x = 0; x < shot.width() && !found; x += 2) found = shot.pixel(x, y) == owner;
        QVERIFY(found);
    }
};

QTEST_MAIN(FlowStateTest)
#include "flow_state_test.moc"
