// FlowView shows the FlowState of its position, drawn in the owners' colours. FlowState itself
// is tested in tests/unit/flow_state_test.cpp.
#include "flows/flow_view.h"
#include "timeline_test_recording.h"

#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

auto collective(EventKind k, CollectiveOp op, int unit) {
    return [=](const Event& e) { return e.kind == k && e.collective == op && e.unit == unit; };
}

std::vector<UnitCycle> cycles(const FlowState& s) {
    std::vector<UnitCycle> out;
    for (const FlowRank& r : s.ranks)
        out.push_back(r.cycle);
    return out;
}

} // namespace

class FlowViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void viewShowsTheSameState() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        FlowView view;
        view.resize(900, 460);
        view.setModel(model.get());
        const std::uint64_t k =
            testrec::findEvent(*model, 2,
                               collective(EventKind::CollectiveBegin, CollectiveOp::AllGather, 1)) +
            1;
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
            for (int x = 0; x < shot.width() && !found; x += 2)
                found = shot.pixel(x, y) == owner;
        QVERIFY(found);
    }

    // Large text in a short view (a projector): the cycle's chain gives way first, then the
    // subtitle, and the least height the view asks for draws the subtitle lessons quote.
    void aShortViewDropsTheChainBeforeTheBytesAndAsksForTheirRoom() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        FlowView view;
        QFont big = view.font();
        big.setPixelSize(20);
        view.setFont(big);
        view.setModel(model.get());
        view.setPosition(
            testrec::findEvent(
                *model, 2, collective(EventKind::CollectiveBegin, CollectiveOp::ReduceScatter, 1)) +
            1);
        const auto drawnAt = [&](int h) {
            view.resize(1000, h);
            view.grab();
            return view.lastPaintStats();
        };
        const FlowView::PaintStats tall = drawnAt(700);
        QVERIFY(tall.subtitle && tall.chain);
        const FlowView::PaintStats least = drawnAt(view.minimumSizeHint().height());
        QVERIFY2(least.subtitle && !least.chain,
                 qPrintable(QStringLiteral("at its least height %1: subtitle %2, chain %3")
                                .arg(view.minimumSizeHint().height())
                                .arg(least.subtitle)
                                .arg(least.chain)));
        const FlowView::PaintStats shorter =
            drawnAt(view.minimumSizeHint().height() - 4 * QFontMetrics(big).height());
        QVERIFY(!shorter.subtitle && !shorter.chain);
        // The least height grows with the font: 13 px text needs less than 20 px.
        FlowView desk;
        QFont small = desk.font();
        small.setPixelSize(13);
        desk.setFont(small);
        QVERIFY(desk.minimumSizeHint().height() < view.minimumSizeHint().height());
    }

    // ZeRO-1's reduce-scatter and all-gather move buckets spanning every unit: titled as such,
    // never "the gradient norm"; the norm's own all-reduce keeps that title.
    void zero1CollectivesTitledByWhatTheyMove() {
        testrec::Spec spec;
        spec.zero1 = true;
        spec.steps = 2;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        FlowView view;
        view.resize(900, 460);
        view.setModel(model.get());
        const auto titleAt = [&](CollectiveOp op) {
            view.setPosition(
                testrec::findEvent(*model, 0, collective(EventKind::CollectiveBegin, op, kNoUnit)) +
                1);
            return view.title();
        };
        const QString rs = titleAt(CollectiveOp::ReduceScatter);
        QVERIFY2(!rs.contains(QStringLiteral("gradient norm")), qPrintable(rs));
        QVERIFY2(rs.contains(QStringLiteral("gradients of several units")), qPrintable(rs));
        if (const QString shots = qEnvironmentVariable("SHARDSCOPE_LAYOUT_SHOTS"); !shots.isEmpty())
            view.grab().save(shots + QStringLiteral("/flows-zero1-reduce-scatter.png"));
        const QString ag = titleAt(CollectiveOp::AllGather);
        if (const QString shots = qEnvironmentVariable("SHARDSCOPE_LAYOUT_SHOTS"); !shots.isEmpty())
            view.grab().save(shots + QStringLiteral("/flows-zero1-all-gather.png"));
        QVERIFY2(!ag.contains(QStringLiteral("gradient norm")), qPrintable(ag));
        QVERIFY2(ag.contains(QStringLiteral("updated parameters")), qPrintable(ag));
        QVERIFY2(!ag.contains(QStringLiteral("prefetched")), qPrintable(ag));
        for (const FlowRank& r : view.state().ranks)
            QVERIFY(FlowView::cycleLabel(r.cycle, r.phase) != QStringLiteral("shard only"));
        QVERIFY(titleAt(CollectiveOp::AllReduce).contains(QStringLiteral("the gradient norm")));
    }

    // Steps count from 1 for people: the stream's step 0 is titled "step 1", as on every page.
    void titleCountsStepsFromOne() {
        testrec::Spec spec;
        spec.steps = 2;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        FlowView view;
        view.resize(900, 460);
        view.setModel(model.get());
        view.setPosition(testrec::findEvent(*model, 0,
                                            [](const Event& e) {
                                                return e.kind == EventKind::CollectiveBegin &&
                                                       e.step == 0;
                                            }) +
                         1);
        QCOMPARE(view.state().step, std::int64_t{0});
        QVERIFY2(view.title().contains(QStringLiteral("step 1")), qPrintable(view.title()));
        QVERIFY2(!view.title().contains(QStringLiteral("step 0")), qPrintable(view.title()));
    }
};

QTEST_MAIN(FlowViewTest)
#include "flow_view_test.moc"
