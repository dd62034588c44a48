#pragma once
// The ledger of one rank: live and peak bytes per (category, tier), updated by every
// allocation and free the Device makes, and the source of the alloc/free events.
//
// Note: the ledger counts the bytes a caller asked for, not the allocator's rounding, so
// it can agree byte for byte with the theory engine. One ledger belongs to one rank and
// is used from that rank's thread only (no locking); ranks sharing a process each own one.
#include "core/categories.h"
#include "core/event.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardscope {

class Ledger {
public:
    explicit Ledger(std::int32_t rank = 0) : rank_(rank) {}

    std::int32_t rank() const { return rank_; }
    void setSink(EventSink sink) { sink_ = std::move(sink); }
    // Names used in messages ("block3" instead of "unit 4"); index = unit id.
    void setUnitNames(std::vector<std::string> names) { unitNames_ = std::move(names); }
    std::string unitName(std::int32_t unit) const;

    // A budget on the live bytes of one tier. An allocation that would exceed it throws
    // Error(OutOfMemory) naming category, unit and bytes; nothing is counted in that case.
    void setCapacity(Tier tier, std::optional<std::uint64_t> capacityBytes);
    std::optional<std::uint64_t> capacity(Tier tier) const { return capacity_[index(tier)]; }

    // Stamped on every event from now on (-1 before the first step).
    void setStep(std::int64_t step) { step_ = step; }
    // The micro-batch every event from now on belongs to (−1: none), as the step.
    void setMicroBatch(int micro) { microBatch_ = static_cast<std::int16_t>(micro); }
    std::int64_t step() const { return step_; }

    void recordAlloc(Category c, Tier t, std::uint64_t bytes, std::int32_t unit);
    void recordFree(Category c, Tier t, std::uint64_t bytes, std::int32_t unit) noexcept;

    // Non-memory events (compute spans, collectives, step boundaries): time, rank and step
    // are filled in here so every event of a rank shares one clock.
    // A sink must not throw: events are also emitted from destructors (frees).
    void emit(Event e) const noexcept;

    const ByteTable& live() const { return live_; }
    const ByteTable& peak() const { return peak_; } // each cell's own maximum
    std::uint64_t liveBytes() const { return liveTotal_; }
    std::uint64_t peakBytes() const { return peakTotal_; } // maximum of the total, not Σ peaks
    std::uint64_t liveTierBytes(Tier t) const { return liveTier_[index(t)]; }
    std::uint64_t peakTierBytes(Tier t) const { return peakTier_[index(t)]; }
    std::uint64_t allocations() const { return allocations_; }

    // Starts a new peak window (e.g. per step): every peak becomes the current live value.
    void resetPeaks();

private:
    std::int32_t rank_;
    std::int64_t step_ = -1;
    std::int16_t microBatch_ = -1;
    EventSink sink_;
    std::vector<std::string> unitNames_;
    std::array<std::optional<std::uint64_t>, kTierCount> capacity_{};
    ByteTable live_;
    ByteTable peak_;
    std::array<std::uint64_t, kTierCount> liveTier_{};
    std::array<std::uint64_t, kTierCount> peakTier_{};
    std::uint64_t liveTotal_ = 0;
    std::uint64_t peakTotal_ = 0;
    std::uint64_t allocations_ = 0;
};

} // namespace shardscope
