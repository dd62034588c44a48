#include "replay/playback_nav.h"

#include <algorithm>

namespace shardscope::replay {
namespace {

// Bounds the look-ahead from an all-gather to the compute it serves; in a real step that
// compute is a few events away.
constexpr std::uint64_t kLookahead = 200000;
constexpr std::int32_t kStepSentinel = -2; // a StepBegin: the next item always starts anew

enum class Role { None, Item, StepStart };

struct Classified {
    Role role = Role::None;
    WorkItem item;
};

Phase lookaheadPhase(const ReplayModel& m, std::uint64_t i, const Event& begin) {
    const std::uint64_t n = m.eventCount();
    for (std::uint64_t j = i + 1; j < n && j <= i + kLookahead; ++j) {
        const Event& e = m.event(j);
        if (e.rank != begin.rank) continue;
        if (e.kind == EventKind::StepEnd) break;
        if (e.kind == EventKind::ComputeBegin && e.unit == begin.unit) return phaseGroup(e.phase);
    }
    return Phase::None;
}

Classified classify(const ReplayModel& m, std::uint64_t i, int rank) {
    const Event& e = m.event(i);
    if (e.rank != rank) return {};
    if (e.kind == EventKind::StepBegin) return {Role::StepStart, {kStepSentinel, Phase::None}};
    if (e.kind == EventKind::ComputeBegin) return {Role::Item, {e.unit, phaseGroup(e.phase)}};
    if (e.kind != EventKind::CollectiveBegin || e.unit < 0) return {}; // e.g. the norm's all-reduce
    if (e.collective == CollectiveOp::AllGather)
        return {Role::Item, {e.unit, lookaheadPhase(m, i, e)}};
    return {Role::Item, {e.unit, Phase::Backward}}; // reductions reduce a backward's gradients
}

bool differs(const WorkItem& a, const WorkItem& b, NavTarget t) {
    if (t == NavTarget::Phase) return a.phase != Phase::None && a.phase != b.phase;
    return !(a == b);
}

std::uint64_t nextStep(const ReplayModel& m, std::uint64_t k) {
    if (m.stepCount() == 0) return m.eventCount();
    const std::size_t s = m.stepIndexOf(std::min(k, m.eventCount() - 1));
    if (k < m.step(s).firstEvent) return m.step(s).firstEvent;
    return s + 1 < m.stepCount() ? m.step(s + 1).firstEvent : m.eventCount();
}

std::uint64_t previousStep(const ReplayModel& m, std::uint64_t k) {
    if (m.stepCount() == 0 || k == 0) return 0;
    const std::size_t s = m.stepIndexOf(k - 1);
    const std::uint64_t first = m.step(s).firstEvent;
    if (k > first + 1 || s == 0) return k > first ? first : 0;
    return m.step(s - 1).firstEvent; // at (or just after) this step's start: the one before
}

} // namespace

Phase phaseGroup(Phase p) {
    return p == Phase::Recompute ? Phase::Backward : p;
}

std::uint64_t nextTarget(const ReplayModel& m, std::uint64_t k, NavTarget t, int rank) {
    const std::uint64_t n = m.eventCount();
    k = std::min(k, n);
    if (t == NavTarget::Event) return std::min(k + 1, n);
    if (t == NavTarget::Step) return nextStep(m, k);
    // The item in force at k: the newest classified event before k on this rank.
    WorkItem prev{kStepSentinel, Phase::None};
    for (std::uint64_t i = k; i-- > 0;) {
        const Classified c = classify(m, i, rank);
        if (c.role == Role::None) continue;
        if (t == NavTarget::Phase && c.role == Role::Item && c.item.phase == Phase::None) continue;
        prev = c.item;
        break;
    }
    for (std::uint64_t i = k; i < n; ++i) {
        const Classified c = classify(m, i, rank);
        if (c.role == Role::None) continue;
        if (c.role == Role::StepStart) {
            prev = c.item;
            continue;
        }
        if (differs(c.item, prev, t)) return i + 1;
        if (t != NavTarget::Phase || c.item.phase != Phase::None) prev = c.item;
    }
    return n;
}

std::uint64_t previousTarget(const ReplayModel& m, std::uint64_t k, NavTarget t, int rank) {
    const std::uint64_t n = m.eventCount();
    k = std::min(k, n);
    if (t == NavTarget::Event) return k > 0 ? k - 1 : 0;
    if (t == NavTarget::Step) return previousStep(m, k);
    if (k < 2) return 0;
    // Walk back from the newest item that would land before k (its position i + 1 < k);
    // it is a boundary when the classified event before it carries a different item.
    bool have =
        false; // plain fields, not std::optional: GCC's -Wmaybe-uninitialized misfires on it
    std::uint64_t candidate = 0;
    WorkItem candidateItem;
    for (std::uint64_t i = k - 1; i-- > 0;) {
        const Classified c = classify(m, i, rank);
        if (c.role == Role::None) continue;
        if (t == NavTarget::Phase && c.role == Role::Item && c.item.phase == Phase::None) continue;
        if (have && differs(candidateItem, c.item, t)) return candidate + 1;
        have = c.role == Role::Item;
        candidate = i;
        candidateItem = c.item;
    }
    return have ? candidate + 1 : 0; // the run's first item
}

} // namespace shardscope::replay
