#pragma once
// The replay of a run: every event of every rank in time order, and the ledger state of all
// ranks after any prefix of them. Append-only while a run streams in.
//
// "State at k" is the ledger after applying events [0, k). Seeking starts from the nearest
// snapshot the assembler stored and replays the rest, so scrubbing to k and playing to k give
// the same state by construction (both go through applyEvent in the same order).
#include "replay/run_data.h"

#include <cstdint>
#include <memory>

namespace shardscope::replay {

class ReplayModel {
public:
    void reset(std::shared_ptr<const RunInfo> info);
    void append(const StepList& steps);

    const std::shared_ptr<const RunInfo>& info() const { return info_; }
    int worldSize() const { return info_ ? info_->worldSize : 0; }
    std::uint64_t eventCount() const { return events_; }
    std::size_t stepCount() const { return steps_.size(); }
    const StepList& steps() const { return steps_; }
    const StepData& step(std::size_t i) const { return *steps_[i]; }

    // The step holding event k (the last step for k == eventCount()); requires stepCount() > 0.
    std::size_t stepIndexOf(std::uint64_t k) const;
    const Event& event(std::uint64_t k) const; // requires k < eventCount()
    LedgerState stateAt(std::uint64_t k) const;
    LedgerState emptyState() const;

    // Replay clock: each step's real timestamps, steps back to back.
    std::uint64_t totalReplayNs() const;
    std::uint64_t replayNsAt(std::uint64_t k) const;      // time of the last applied event
    std::uint64_t indexAtReplayNs(std::uint64_t t) const; // events whose replay time ≤ t

private:
    std::shared_ptr<const RunInfo> info_;
    StepList steps_;
    std::vector<std::uint64_t> ends_; // endEvent() per step, for binary search
    std::uint64_t events_ = 0;
};

// A position in the replay that moves forward cheaply (event by event) and seeks through the
// model's snapshots when it jumps.
class ReplayCursor {
public:
    explicit ReplayCursor(const ReplayModel& model) : model_(&model) {}
    void reset();
    void moveTo(std::uint64_t k); // clamped to eventCount()
    std::uint64_t index() const { return index_; }
    const LedgerState& state() const { return state_; }

private:
    const ReplayModel* model_;
    std::uint64_t index_ = 0;
    LedgerState state_;
};

} // namespace shardscope::replay
