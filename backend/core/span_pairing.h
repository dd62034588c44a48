#pragma once
// Which Begin an End closes: the one pairing rule for every reader of a rank's events — the
// exposed-communication tracker (train/overlap.h), the timeline and the flow diagram (replay/).
// It lives in core because train cannot link the replay library and both link core.
//
// Note: an End closes the most recent open Begin with the same key — compute: (unit, phase);
// collective: (unit, collective kind); buffer: (unit, category) of an Alloc / Free; transfer:
// (unit, direction). Spans of one
// rank need not nest: a prefetched all-gather starts before a unit's forward and ends after it
// while other collectives begin and end in between, and with several prefetches in flight their
// ends arrive in any order, so "close the innermost" would pair the wrong spans. An End without
// a matching open Begin (a stream cut at its start, a malformed one) closes nothing.
#include "core/event.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

namespace shardscope {

enum class SpanClass : std::uint8_t { Compute, Collective, Buffer, Transfer };

struct SpanKey {
    SpanClass cls = SpanClass::Compute;
    std::int32_t unit = kNoUnit;
    std::uint8_t what = 0; // Phase, CollectiveOp, Category or Transfer, by class
    bool operator==(const SpanKey&) const = default;
};

// The key of a span-opening or -closing event (Compute*, Collective*, Transfer*, Alloc, Free);
// nullopt for step boundaries and TransferWait.
std::optional<SpanKey> spanKeyOf(const Event& e);
// ComputeBegin, CollectiveBegin, TransferBegin, Alloc.
bool opensSpan(EventKind k);

// The open spans of one rank, each carrying what its reader needs when it closes (a begin
// time, a group index, a half-built timeline span).
template <class T> class SpanPairing {
public:
    struct Open {
        SpanKey key;
        T value;
    };

    void open(const SpanKey& key, T value) { open_.push_back({key, std::move(value)}); }

    // Removes and returns the most recent open span with `key`; nullopt when none is open.
    std::optional<T> close(const SpanKey& key) {
        for (auto it = open_.rbegin(); it != open_.rend(); ++it)
            if (it->key == key) {
                T value = std::move(it->value);
                open_.erase(std::next(it).base());
                return value;
            }
        return std::nullopt;
    }

    std::size_t openCount() const { return open_.size(); }
    const std::vector<Open>& openSpans() const { return open_; } // in begin order
    void clear() { open_.clear(); }

private:
    std::vector<Open> open_;
};

} // namespace shardscope
