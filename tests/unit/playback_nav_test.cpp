// Navigation targets (next/previous event, unit, phase, step) on a ZeRO-3 recording.
#include "replay/playback_nav.h"
#include "timeline_test_recording.h"

#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::replay;

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
    return testrec::findEvent(
        m, rank,
        [unit](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::AllGather && e.unit == unit;
        },
        nth);
}

} // namespace

TEST(PlaybackNav, events) {
    const auto m = testrec::loadModel(testrec::makeRecording({}));
    EXPECT_EQ(nextTarget(*m, 0, NavTarget::Event), std::uint64_t{1});
    EXPECT_EQ(previousTarget(*m, 10, NavTarget::Event), std::uint64_t{9});
    EXPECT_EQ(previousTarget(*m, 0, NavTarget::Event), std::uint64_t{0});
    EXPECT_EQ(nextTarget(*m, m->eventCount(), NavTarget::Event), m->eventCount());
}

TEST(PlaybackNav, unitsFollowTheGatherCycles) {
    testrec::Spec spec; // 4 units: forward 0..3 then backward 3..0, 1 step
    const auto m = testrec::loadModel(testrec::makeRecording(spec));
    const auto units = walk(*m, NavTarget::Unit, 0);
    // Forward: the all-gather opening each unit (forward pass = the first AG of each unit).
    std::vector<std::uint64_t> expected;
    for (int u = 0; u < 4; ++u)
        expected.push_back(agAt(*m, 0, u, 0) + 1);
    // Backward: each unit's second all-gather (head first): the head's backward is a new item.
    for (int u = 3; u >= 0; --u)
        expected.push_back(agAt(*m, 0, u, 1) + 1);
    // Then the optimizer (a compute without a unit), then the end.
    const std::uint64_t opt = testrec::findEvent(*m, 0, [](const Event& e) {
        return e.kind == EventKind::ComputeBegin && e.phase == Phase::Optimizer;
    });
    expected.push_back(opt + 1);
    expected.push_back(m->eventCount());
    EXPECT_EQ(units, expected);
    // Previous walks the same boundaries back.
    for (std::size_t i = units.size() - 1; i > 0; --i)
        EXPECT_EQ(previousTarget(*m, units[i], NavTarget::Unit, 0), units[i - 1]);
    EXPECT_EQ(previousTarget(*m, units[0], NavTarget::Unit, 0), std::uint64_t{0});
    // From inside a unit's cycle, previous goes to that unit's start.
    EXPECT_EQ(previousTarget(*m, units[2] + 3, NavTarget::Unit, 0), units[2]);
    // Another focus rank: its own boundaries.
    EXPECT_EQ(walk(*m, NavTarget::Unit, 3).front(), agAt(*m, 3, 0, 0) + 1);
}

TEST(PlaybackNav, phases) {
    testrec::Spec spec;
    spec.steps = 2;
    const auto m = testrec::loadModel(testrec::makeRecording(spec));
    const auto phases = walk(*m, NavTarget::Phase, 0);
    const auto optimizer = [](int nth) {
        return [nth, seen = 0](const Event& e) mutable {
            return e.kind == EventKind::ComputeBegin && e.phase == Phase::Optimizer &&
                   seen++ == nth;
        };
    };
    const std::vector<std::uint64_t> expected = {
        agAt(*m, 0, 0, 0) + 1,                       // step 0 forward: unit 0's all-gather
        agAt(*m, 0, 3, 1) + 1,                       // backward: the head's unshard
        testrec::findEvent(*m, 0, optimizer(0)) + 1, // optimizer
        agAt(*m, 0, 0, 2) + 1,                       // step 1 forward
        agAt(*m, 0, 3, 3) + 1,
        testrec::findEvent(*m, 0, optimizer(1)) + 1,
        m->eventCount()};
    EXPECT_EQ(phases, expected);
    for (std::size_t i = phases.size() - 1; i > 0; --i)
        EXPECT_EQ(previousTarget(*m, phases[i], NavTarget::Phase, 0), phases[i - 1]);
}

TEST(PlaybackNav, steps) {
    testrec::Spec spec;
    spec.steps = 3;
    const auto m = testrec::loadModel(testrec::makeRecording(spec));
    const std::uint64_t s1 = m->step(1).firstEvent, s2 = m->step(2).firstEvent;
    EXPECT_EQ(nextTarget(*m, 0, NavTarget::Step), s1);
    EXPECT_EQ(nextTarget(*m, s1, NavTarget::Step), s2);
    EXPECT_EQ(nextTarget(*m, s1 + 5, NavTarget::Step), s2);
    EXPECT_EQ(nextTarget(*m, s2, NavTarget::Step), m->eventCount());
    EXPECT_EQ(previousTarget(*m, s2 + 5, NavTarget::Step), s2);
    EXPECT_EQ(previousTarget(*m, s2, NavTarget::Step), s1);
    EXPECT_EQ(previousTarget(*m, s1, NavTarget::Step), std::uint64_t{0});
    EXPECT_EQ(previousTarget(*m, m->eventCount(), NavTarget::Step), s2);
}
