#pragma once
// Where "next / previous event, unit, phase, step" lead: pure functions over the replay's
// events (all ranks merged in time order) and a position k (events [0, k) applied).
//
// - Event: k ± 1.
// - Unit: the next begin (compute or collective) on the focus rank that starts a new work
//   item (unit, phase): e.g. the all-gather that opens block 3's forward. The position lands
//   just after that begin event, so the view shows it happening.
// - Phase: the next work item whose phase (forward, backward incl. recompute, optimizer)
//   differs from the previous one on the focus rank; an all-gather takes the phase of the
//   compute it gathers for, so "next phase" from the forward lands on backward's first unshard.
// - Step: the first event of the next step (previous: of this step, or the one before when
//   already at its start).
// Results are clamped to [0, eventCount()]; no boundary ahead → eventCount(), none behind → 0.
#include "replay/replay_model.h"

#include <cstdint>

namespace shardscope::replay {

enum class NavTarget { Event, Unit, Phase, Step };

std::uint64_t nextTarget(const ReplayModel& model, std::uint64_t k, NavTarget target, int rank = 0);
std::uint64_t previousTarget(const ReplayModel& model, std::uint64_t k, NavTarget target,
                             int rank = 0);

// The work item a begin event opens: its unit and the phase it serves. Exposed for the explain
// panel and tests.
struct WorkItem {
    std::int32_t unit = kNoUnit;
    Phase phase = Phase::None;
    bool operator==(const WorkItem&) const = default;
};
Phase phaseGroup(Phase p); // recompute counts as backward

} // namespace shardscope::replay
