// Navigation targets (next/previous event, unit, phase, step) on a ZeRO-3 recording, and the
// PlaybackBar driving the shared ReplayPlayer: keys, speed range, loop.
#include <QSignalSpy>
#include <QTest>

#include "playback_bar.h"
#include "replay_player.h"
#include "timeline_test_recording.h"

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

std::vector<std::uint64_t> walk(const ReplayModel& m, NavTarget t, int rank = 0) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t k = 0;;) {
        const std::uint64_t next = nextTarget(m, k, t, rank);
        if (next <= k) break; // must always move forward
        out.push_back(next);
        if (next == m.eventCount()) break;
        k = next;
    }
    return out;
}

std::uint64_t agAt(const ReplayModel& m, int rank, int unit, int nth) {
    return testrec::findEvent(m, rank, [unit](const Event& e) {
        return e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::AllGather && e.unit == unit;
    }, nth);
}

} // namespace

class PlaybackNavTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void events() {
        const auto m = testrec::loadModel(testrec::makeRecording({}));
        QCOMPARE(nextTarget(*m, 0, NavTarget::Event), std::uint64_t{1});
        QCOMPARE(previousTarget(*m, 10, NavTarget::Event), std::uint64_t{9});
        QCOMPARE(previousTarget(*m, 0, NavTarget::Event), std::uint64_t{0});
        QCOMPARE(nextTarget(*m, m->eventCount(), NavTarget::Event), m->eventCount());
    }

    void unitsFollowTheGatherCycles() {
        testrec::Spec spec; // 4 units: forward 0..3 then backward 3..0, 1 step
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const auto units = walk(*m, NavTarget::Unit, 0);
        // Forward: the all-gather opening each unit (forward pass = the first AG of each unit).
        std::vector<std::uint64_t> expected;
        for (int u = 0; u < 4; ++u) expected.push_back(agAt(*m, 0, u, 0) + 1);
        // Backward: each unit's second all-gather (head first): the head's backward is a new item.
        for (int u = 3; u >= 0; --u) expected.push_back(agAt(*m, 0, u, 1) + 1);
        // Then the optimizer (a compute without a unit), then the end.
        const std::uint64_t opt = testrec::findEvent(*m, 0, [](const Event& e) {
            return e.kind == EventKind::ComputeBegin && e.phase == Phase::Optimizer;
        });
        expected.push_back(opt + 1);
        expected.push_back(m->eventCount());
        QCOMPARE(units, expected);
        // Previous walks the same boundaries back.
        for (std::size_t i = units.size() - 1; i > 0; --i) QCOMPARE(previousTarget(*m, units[i], NavTarget::Unit, 0), units[i - 1]);
        QCOMPARE(previousTarget(*m, units[0], NavTarget::Unit, 0), std::uint64_t{0});
        // From inside a unit's cycle, previous goes to that unit's start.
        QCOMPARE(previousTarget(*m, units[2] + 3, NavTarget::Unit, 0), units[2]);
        // Another focus rank: its own boundaries.
        QCOMPARE(walk(*m, NavTarget::Unit, 3).front(), agAt(*m, 3, 0, 0) + 1);
    }

    void phases() {
        testrec::Spec spec;
        spec.steps = 2;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const auto phases = walk(*m, NavTarget::Phase, 0);
        const auto optimizer = [](int nth) {
            return [nth, seen = 0](const Event& e) mutable { return e.kind == EventKind::ComputeBegin && e.phase == Phase::Optimizer && seen++ == nth; };
        };
        const std::vector<std::uint64_t> expected = {
            agAt(*m, 0, 0, 0) + 1,                         // step 0 forward: unit 0's all-gather
            agAt(*m, 0, 3, 1) + 1,                         // backward: the head's unshard
            testrec::findEvent(*m, 0, optimizer(0)) + 1,   // optimizer
            agAt(*m, 0, 0, 2) + 1,                         // step 1 forward
            agAt(*m, 0, 3, 3) + 1,
            testrec::findEvent(*m, 0, optimizer(1)) + 1,
            m->eventCount()};
        QCOMPARE(phases, expected);
        for (std::size_t i = phases.size() - 1; i > 0; --i) QCOMPARE(previousTarget(*m, phases[i], NavTarget::Phase, 0), phases[i - 1]);
    }

    void steps() {
        testrec::Spec spec;
        spec.steps = 3;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const std::uint64_t s1 = m->step(1).firstEvent, s2 = m->step(2).firstEvent;
        QCOMPARE(nextTarget(*m, 0, NavTarget::Step), s1);
        QCOMPARE(nextTarget(*m, s1, NavTarget::Step), s2);
        QCOMPARE(nextTarget(*m, s1 + 5, NavTarget::Step), s2);
        QCOMPARE(nextTarget(*m, s2, NavTarget::Step), m->eventCount());
        QCOMPARE(previousTarget(*m, s2 + 5, NavTarget::Step), s2);
        QCOMPARE(previousTarget(*m, s2, NavTarget::Step), s1);
        QCOMPARE(previousTarget(*m, s1, NavTarget::Step), std::uint64_t{0});
        QCOMPARE(previousTarget(*m, m->eventCount(), NavTarget::Step), s2);
    }

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

QTEST_MAIN(PlaybackNavTest)
#include "playback_nav_test.moc"
