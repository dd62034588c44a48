// The PlaybackBar driving the shared ReplayPlayer on a ZeRO-3 recording: keys, speed range, loop.
// The navigation targets themselves are tested in tests/unit/playback_nav_test.cpp.
#include "playback/playback_bar.h"
#include "run/replay_player.h"
#include "timeline_test_recording.h"

#include <QSignalSpy>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

std::uint64_t agAt(const ReplayModel& m, int rank, int unit, int nth) {
    return testrec::findEvent(
        m, rank,
        [unit](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::AllGather && e.unit == unit;
        },
        nth);
}

} // namespace

class PlaybackBarTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void barKeysMoveThePlayer() {
        testrec::Spec spec;
        spec.steps = 2;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        ReplayPlayer player(*m);
        PlaybackBar bar(*m, player);
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        bar.setFocus();
        QCOMPARE(bar.position(), std::uint64_t{0});
        QTest::keyClick(&bar, Qt::Key_Right);
        QCOMPARE(bar.position(), std::uint64_t{1});
        QTest::keyClick(&bar, Qt::Key_Right);
        QTest::keyClick(&bar, Qt::Key_Left);
        QCOMPARE(bar.position(), std::uint64_t{1});
        QTest::keyClick(&bar, Qt::Key_Right, Qt::ShiftModifier);
        QCOMPARE(bar.position(), nextTarget(*m, 1, NavTarget::Unit, 0));
        QTest::keyClick(&bar, Qt::Key_Right, Qt::ControlModifier);
        QCOMPARE(bar.position(), agAt(*m, 0, 3, 1) + 1); // backward begins
        QTest::keyClick(&bar, Qt::Key_PageDown);
        QCOMPARE(bar.position(), m->step(1).firstEvent);
        QTest::keyClick(&bar, Qt::Key_PageUp);
        QCOMPARE(bar.position(), std::uint64_t{0});
        QTest::keyClick(&bar, Qt::Key_End);
        QCOMPARE(bar.position(), m->eventCount());
        QTest::keyClick(&bar, Qt::Key_Home);
        QCOMPARE(bar.position(), std::uint64_t{0});
        // The focus rank steers unit steps.
        bar.setFocusRank(3);
        QTest::keyClick(&bar, Qt::Key_Right, Qt::ShiftModifier);
        QCOMPARE(bar.position(), agAt(*m, 3, 0, 0) + 1);
        // Space toggles play.
        QSignalSpy playing(&player, &ReplayPlayer::playingChanged);
        QTest::keyClick(&bar, Qt::Key_Space);
        QVERIFY(player.isPlaying());
        QTest::keyClick(&bar, Qt::Key_Space);
        QVERIFY(!player.isPlaying());
        QCOMPARE(playing.count(), 2);
    }

    void speedAndLoop() {
        const auto m = testrec::loadModel(testrec::makeRecording({}));
        ReplayPlayer player(*m);
        PlaybackBar bar(*m, player);
        const double base = bar.baseSlowMotion();
        QCOMPARE(base, ReplayPlayer::slowMotionFor(m->step(0).durationNs));
        QCOMPARE(player.slowMotion(), base);
        bar.setSpeed(10);
        QCOMPARE(player.slowMotion(), base / 10);
        bar.setSpeed(1000); // clamped to 100×
        QCOMPARE(bar.speed(), PlaybackBar::kMaxSpeed);
        bar.setSpeed(0.001);
        QCOMPARE(bar.speed(), PlaybackBar::kMinSpeed);
        QCOMPARE(player.slowMotion(), base / PlaybackBar::kMinSpeed);
        // Loop: reaching the end while playing starts over.
        bar.setLoop(true);
        player.play();
        player.seek(m->eventCount());
        QCOMPARE(bar.position(), std::uint64_t{0});
        QVERIFY(player.isPlaying());
        bar.setLoop(false);
        player.seek(m->eventCount());
        QCOMPARE(bar.position(), m->eventCount());
        player.pause();
    }
};

QTEST_MAIN(PlaybackBarTest)
#include "playback_bar_test.moc"
