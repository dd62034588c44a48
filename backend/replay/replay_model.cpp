#include "replay/replay_model.h"

#include "replay/stream_assembler.h"

#include <algorithm>

namespace shardscope::replay {

void ReplayModel::reset(std::shared_ptr<const RunInfo> info) {
    info_ = std::move(info);
    steps_.clear();
    ends_.clear();
    events_ = 0;
}

void ReplayModel::append(const StepList& steps) {
    for (const StepPtr& s : steps) {
        steps_.push_back(s);
        ends_.push_back(s->endEvent());
        events_ = s->endEvent();
    }
}

std::size_t ReplayModel::stepIndexOf(std::uint64_t k) const {
    const auto it = std::upper_bound(ends_.begin(), ends_.end(), k);
    if (it == ends_.end()) return steps_.size() - 1;
    return static_cast<std::size_t>(it - ends_.begin());
}

const Event& ReplayModel::event(std::uint64_t k) const {
    const StepData& s = *steps_[stepIndexOf(k)];
    return s.events[k - s.firstEvent];
}

LedgerState ReplayModel::emptyState() const {
    return LedgerState(static_cast<std::size_t>(worldSize()));
}

LedgerState ReplayModel::stateAt(std::uint64_t k) const {
    if (k == 0 || steps_.empty()) return emptyState();
    if (k >= events_) return steps_.back()->endState;
    const StepData& s = *steps_[stepIndexOf(k)];
    const std::size_t local = k - s.firstEvent;
    const std::size_t snap = local / s.snapshotEvery;
    LedgerState state = s.snapshots[snap];
    for (std::size_t i = snap * s.snapshotEvery; i < local; ++i)
        applyEvent(state[static_cast<std::size_t>(s.events[i].rank)], s.events[i]);
    return state;
}

std::uint64_t ReplayModel::totalReplayNs() const {
    if (steps_.empty()) return 0;
    const StepData& last = *steps_.back();
    return last.replayStartNs + last.durationNs;
}

std::uint64_t ReplayModel::replayNsAt(std::uint64_t k) const {
    k = std::min(k, events_); // before the test: a run without events has nothing to time
    if (k == 0 || steps_.empty()) return 0;
    const StepData& s = *steps_[stepIndexOf(k - 1)];
    return s.replayNs(k - 1 - s.firstEvent);
}

std::uint64_t ReplayModel::indexAtReplayNs(std::uint64_t t) const {
    if (steps_.empty()) return 0;
    // The last step that starts at or before t.
    const auto it =
        std::upper_bound(steps_.begin(), steps_.end(), t,
                         [](std::uint64_t v, const StepPtr& s) { return v < s->replayStartNs; });
    if (it == steps_.begin()) return 0;
    const StepData& s = **(it - 1);
    const std::uint64_t local = t - s.replayStartNs;
    const auto e = std::upper_bound(
        s.events.begin(), s.events.end(), local,
        [&s](std::uint64_t v, const Event& ev) { return v < ev.timeNs - s.startNs; });
    return s.firstEvent + static_cast<std::uint64_t>(e - s.events.begin());
}

void ReplayCursor::reset() {
    index_ = 0;
    state_ = model_->emptyState();
}

void ReplayCursor::moveTo(std::uint64_t k) {
    k = std::min(k, model_->eventCount());
    if (state_.size() != static_cast<std::size_t>(model_->worldSize())) reset();
    const std::size_t every = StreamAssembler::snapshotInterval(model_->worldSize());
    if (k >= index_ && k - index_ <= every) {
        for (; index_ < k; ++index_) {
            const Event& e = model_->event(index_);
            applyEvent(state_[static_cast<std::size_t>(e.rank)], e);
        }
        return;
    }
    state_ = model_->stateAt(k);
    index_ = k;
}

} // namespace shardscope::replay
