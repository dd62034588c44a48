#include "core/ledger.h"

#include "core/error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace shardscope {

std::string Ledger::unitName(std::int32_t unit) const {
    if (unit == kNoUnit) return "no unit";
    if (unit >= 0 && static_cast<std::size_t>(unit) < unitNames_.size())
        return unitNames_[static_cast<std::size_t>(unit)];
    return "unit " + std::to_string(unit);
}

void Ledger::setCapacity(Tier tier, std::optional<std::uint64_t> capacityBytes) {
    capacity_[index(tier)] = capacityBytes;
}

void Ledger::recordAlloc(Category c, Tier t, std::uint64_t bytes, std::int32_t unit) {
    const auto& cap = capacity_[index(t)];
    if (cap && bytes > *cap - std::min(*cap, liveTier_[index(t)])) {
        throw Error(ErrorKind::OutOfMemory,
                    "out of memory on rank " + std::to_string(rank_) + ": allocating " +
                        std::to_string(bytes) + " bytes of " + std::string(categoryName(c)) +
                        " for " + unitName(unit) + " would exceed the " + std::string(tierName(t)) +
                        " capacity of " + std::to_string(*cap) + " bytes (" +
                        std::to_string(liveTier_[index(t)]) + " bytes live)");
    }
    live_.at(c, t) += bytes;
    liveTier_[index(t)] += bytes;
    liveTotal_ += bytes;
    peak_.at(c, t) = std::max(peak_.at(c, t), live_.at(c, t));
    peakTier_[index(t)] = std::max(peakTier_[index(t)], liveTier_[index(t)]);
    peakTotal_ = std::max(peakTotal_, liveTotal_);
    ++allocations_;
    if (sink_)
        emit(Event{
            .kind = EventKind::Alloc, .category = c, .tier = t, .bytes = bytes, .unit = unit});
}

void Ledger::recordFree(Category c, Tier t, std::uint64_t bytes, std::int32_t unit) noexcept {
    // Frees run in destructors, so they cannot throw. A free larger than what is live is a
    // bookkeeping bug; stop loudly rather than wrap around and report nonsense.
    if (live_.at(c, t) < bytes) {
        std::fprintf(stderr, "ledger: freeing %llu bytes of %s but only %llu are live\n",
                     static_cast<unsigned long long>(bytes), categoryName(c).data(),
                     static_cast<unsigned long long>(live_.at(c, t)));
        std::abort();
    }
    live_.at(c, t) -= bytes;
    liveTier_[index(t)] -= bytes;
    liveTotal_ -= bytes;
    if (sink_)
        emit(
            Event{.kind = EventKind::Free, .category = c, .tier = t, .bytes = bytes, .unit = unit});
}

void Ledger::emit(Event e) const noexcept {
    if (!sink_) return;
    e.timeNs = monotonicNs();
    e.rank = rank_;
    e.step = step_;
    e.microBatch = microBatch_;
    sink_(e);
}

void Ledger::resetPeaks() {
    peak_ = live_;
    peakTier_ = liveTier_;
    peakTotal_ = liveTotal_;
}

} // namespace shardscope
