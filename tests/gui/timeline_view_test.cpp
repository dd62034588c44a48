// TimelineView: hit-testing returns the event under the mouse, a click asks for a seek there,
// narrow spans merge into a bounded number of boxes at a wide zoom, and zoom / pan / keys
// behave. The index it draws is tested in tests/unit/timeline_index_test.cpp.
#include "timeline/timeline_view.h"
#include "timeline_test_recording.h"

#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <fstream>
#include <sstream>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

bool isAllGatherBegin(const Event& e, int unit) {
    return e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::AllGather &&
           e.unit == unit;
}

// Centre pixel of a span in the view, for its rank and row.
QPoint centreOf(const TimelineView& v, int rank, TimelineRow row, const TimelineSpan& s) {
    const TimelineGeometry g = v.geometry();
    const TimeWindow w = v.window();
    const double x =
        g.plot.left() + w.xOf((static_cast<double>(s.beginNs) + static_cast<double>(s.endNs)) / 2);
    const QRectF r = g.rowRect(rank, row);
    return {static_cast<int>(x), static_cast<int>(r.center().y())};
}

} // namespace

class TimelineViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void hitTestReturnsTheEventUnderTheMouse() {
        testrec::Spec spec;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        TimelineView view;
        view.resize(1200, 600);
        view.setModel(model.get());
        // Zoom onto rank 2's all-gather of unit 1 (forward).
        const std::uint64_t agEvent =
            testrec::findEvent(*model, 2, [](const Event& e) { return isAllGatherBegin(e, 1); });
        QVERIFY(agEvent < model->eventCount());
        const TimelineLane& lane = view.index().lane(2);
        const auto it =
            std::find_if(lane.rows[1].begin(), lane.rows[1].end(),
                         [&](const TimelineSpan& s) { return s.beginEvent == agEvent; });
        QVERIFY(it != lane.rows[1].end());
        const TimelineSpan ag = *it;
        view.setWindow(static_cast<double>(ag.beginNs) - 50000,
                       static_cast<double>(ag.endNs) + 80000);
        const auto hit = view.spanAt(centreOf(view, 2, TimelineRow::Comm, ag));
        QVERIFY(hit.has_value());
        QCOMPARE(hit->rank, 2);
        QCOMPARE(hit->row, TimelineRow::Comm);
        QCOMPARE(hit->span.beginEvent, agEvent);
        QCOMPARE(hit->span.kind, SpanKind::AllGather);
        QCOMPARE(hit->span.unit, 1);
        QCOMPARE(hit->span.bytes, testrec::fullBytes(spec));
        // The tooltip names the unit and gives bus bandwidth.
        const QString tip = view.describe(*hit);
        QVERIFY2(tip.contains(QStringLiteral("block0")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("busbw")), qPrintable(tip));

        // The forward compute right after it, on the compute row; and on rank 3 it is rank 3's.
        const std::uint64_t fwd = testrec::findEvent(*model, 2, [](const Event& e) {
            return e.kind == EventKind::ComputeBegin && e.phase == Phase::Forward && e.unit == 1;
        });
        const TimelineSpan& fwdSpan =
            *std::find_if(lane.rows[0].begin(), lane.rows[0].end(),
                          [&](const TimelineSpan& s) { return s.beginEvent == fwd; });
        const auto fwdHit = view.spanAt(centreOf(view, 2, TimelineRow::Compute, fwdSpan));
        QVERIFY(fwdHit.has_value());
        QCOMPARE(fwdHit->span.beginEvent, fwd);
        const auto other = view.spanAt(centreOf(view, 3, TimelineRow::Compute, fwdSpan));
        QVERIFY(other.has_value());
        QCOMPARE(other->rank, 3);
        QCOMPARE(model->event(other->span.beginEvent).rank, 3);

        // A click on the span asks to seek just after its begin; a drag does not seek.
        QSignalSpy seek(&view, &TimelineView::seekRequested);
        QTest::mouseClick(&view, Qt::LeftButton, {}, centreOf(view, 2, TimelineRow::Comm, ag));
        QCOMPARE(seek.count(), 1);
        QCOMPARE(seek.takeFirst().at(0).value<std::uint64_t>(), agEvent + 1);
        // Outside the plot (the lane labels): nothing.
        QVERIFY(
            !view.spanAt(QPoint(5, view.geometry().rowRect(2, TimelineRow::Comm).center().y())));
        // The memory curve area is not a span.
        QVERIFY(!view.spanAt(QPoint(centreOf(view, 2, TimelineRow::Comm, ag).x(),
                                    static_cast<int>(view.geometry().memoryRect(2).center().y()))));
    }

    void clickOnEmptyTimeSeeksToThatTime() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        TimelineView view;
        view.resize(1000, 500);
        view.setModel(model.get());
        QSignalSpy seek(&view, &TimelineView::seekRequested);
        const TimelineGeometry g = view.geometry();
        // The memory-curve strip of rank 0 is never a span: the seek goes by time.
        const int x = g.plot.left() + g.plot.width() / 2;
        QTest::mouseClick(&view, Qt::LeftButton, {},
                          QPoint(x, static_cast<int>(g.memoryRect(0).center().y())));
        QCOMPARE(seek.count(), 1);
        const double t = view.window().tOf(x - g.plot.left());
        QCOMPARE(seek.takeFirst().at(0).value<std::uint64_t>(),
                 model->indexAtReplayNs(static_cast<std::uint64_t>(t)));
    }

    // A rank waiting on a transfer it needs (a real NVMe-offloaded run's TransferWait records) is
    // marked on the timeline, where the transfer that kept it waiting is drawn; it was recorded
    // and never shown.
    void transferWaitsAreMarked() {
        std::ifstream in(QT_TESTCASE_SOURCEDIR "/../data/offload_nvme_tiny_2r.sstrace",
                         std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        const auto model = testrec::loadModel(bytes.str());
        std::size_t recorded = 0;
        for (std::uint64_t i = 0; i < model->eventCount(); ++i)
            recorded += model->event(i).kind == EventKind::TransferWait;
        TimelineIndex index;
        index.update(*model);
        std::size_t indexed = 0;
        for (int r = 0; r < index.laneCount(); ++r)
            indexed += index.lane(r).waits.size();
        QCOMPARE(indexed, recorded);
        QVERIFY2(recorded > 0, "the NVMe run waited on its reads");
        QImage image(1200, 600, QImage::Format_ARGB32_Premultiplied);
        TimelineScene scene;
        scene.index = &index;
        scene.model = model.get();
        scene.window = TimeWindow{0, static_cast<double>(index.endNs()), 1};
        QPainter p(&image);
        const TimelinePaintStats stats = TimelinePainter::paint(p, image.rect(), scene);
        QCOMPARE(stats.waitMarks, recorded);
    }

    void narrowSpansMergeAtWideZoom() {
        testrec::Spec spec;
        spec.steps = 300; // ~ 290k events: every span is far below a pixel when the whole run shows
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        TimelineIndex index;
        index.update(*model);
        const int width = 800;
        QImage image(width + TimelineGeometry::kGutter + 8, 500,
                     QImage::Format_ARGB32_Premultiplied);
        TimelineScene scene;
        scene.index = &index;
        scene.model = model.get();
        scene.window = TimeWindow{0, static_cast<double>(index.endNs()), 1};
        QPainter p(&image);
        const TimelinePaintStats wide = TimelinePainter::paint(p, image.rect(), scene);
        const double plotW = TimelineGeometry::compute(image.rect(), 4).plot.width();
        // Per lane, row and depth at most one box per kMinBoxPx of width (+1): merged boxes start
        // at least that far apart.
        const auto bound =
            static_cast<std::size_t>(4 * (1 + 2 + (kMaxDepth + 1)) * (plotW / kMinBoxPx + 1));
        QVERIFY2(wide.boxes <= bound,
                 qPrintable(QStringLiteral("%1 boxes > %2").arg(wide.boxes).arg(bound)));
        QVERIFY(wide.boxes < index.spanCount() / 20);
        QVERIFY(wide.summaries > 0);
        QCOMPARE(wide.spansCovered, index.spanCount()); // nothing dropped, only merged

        // Zoomed onto one all-gather: every visible span is drawn on its own.
        const TimelineSpan& ag = index.lane(0).rows[1][5];
        scene.window = TimeWindow{static_cast<double>(ag.beginNs) - 1000,
                                  static_cast<double>(ag.endNs) + 1000, 1};
        const TimelinePaintStats close = TimelinePainter::paint(p, image.rect(), scene);
        QCOMPARE(close.summaries, std::size_t{0});
        QVERIFY(close.boxes > 0 && close.boxes < 40);
    }

    void zoomPanAndKeys() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        TimelineView view;
        view.resize(1000, 500);
        view.setModel(model.get());
        const double end = static_cast<double>(view.index().endNs());
        QCOMPARE(view.windowStart(), 0.0);
        QVERIFY(view.windowEnd() >= end);
        // Wheel zoom keeps the time under the cursor in place.
        const TimelineGeometry g = view.geometry();
        const int x = g.plot.left() + g.plot.width() / 3;
        const double before = view.window().tOf(x - g.plot.left());
        view.zoomBy(4, x - g.plot.left());
        QVERIFY(qAbs(view.window().tOf(x - g.plot.left()) - before) < 1);
        const double span = view.windowEnd() - view.windowStart();
        QVERIFY(qAbs(span - end * 1.01 / 4) < 1);
        // Keys: + zooms in 1.5×, − back out, → pans a tenth, Home to 0, End to the end, 0 fits.
        view.setFocus();
        QTest::keyClick(&view, Qt::Key_Plus);
        QVERIFY(qAbs((view.windowEnd() - view.windowStart()) - span / 1.5) < 1);
        QTest::keyClick(&view, Qt::Key_Minus);
        QVERIFY(qAbs((view.windowEnd() - view.windowStart()) - span) < 1);
        const double t0 = view.windowStart();
        QTest::keyClick(&view, Qt::Key_Right);
        QVERIFY(qAbs(view.windowStart() - (t0 + span * 0.1)) < 1);
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.windowStart(), 0.0);
        QTest::keyClick(&view, Qt::Key_End);
        QVERIFY(qAbs(view.windowEnd() - end * 1.01) < 1);
        QTest::keyClick(&view, Qt::Key_0);
        QCOMPARE(view.windowStart(), 0.0);
        // A drag pans by the dragged distance.
        view.setWindow(end * 0.25, end * 0.5);
        const double w0 = view.windowStart(), nsPerPx = view.window().nsPerPx();
        const QPoint from(g.plot.left() + 400, static_cast<int>(g.memoryRect(0).center().y()));
        QTest::mousePress(&view, Qt::LeftButton, {}, from);
        QMouseEvent move(QEvent::MouseMove, QPointF(from + QPoint(-100, 0)),
                         view.mapToGlobal(QPointF(from + QPoint(-100, 0))), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&view, &move);
        QTest::mouseRelease(&view, Qt::LeftButton, {}, from + QPoint(-100, 0));
        QVERIFY(qAbs(view.windowStart() - (w0 + 100 * nsPerPx)) < nsPerPx);
    }

    void playheadFollowsEventsAndScrolls() {
        const auto model = testrec::loadModel(testrec::makeRecording({}));
        TimelineView view;
        view.resize(1000, 500);
        view.setModel(model.get());
        view.setPlayheadEvent(100);
        QCOMPARE(*view.playheadNs(), model->replayNsAt(100));
        view.setWindow(0, 10000);
        view.setPlayheadEvent(model->eventCount() / 2);
        const double t = static_cast<double>(*view.playheadNs());
        QVERIFY(view.windowStart() <= t && t <= view.windowEnd()); // scrolled to keep it in sight
    }
};

QTEST_MAIN(TimelineViewTest)
#include "timeline_view_test.moc"
