#pragma once
// The straightforward recomputation the replay is checked against: every event of a recording
// ordered by (time, rank, position in its batch), and per rank a plain map of live bytes summed
// from scratch for each k. Shares nothing with the replay model but the codec.
#include "protocol/protocol.h"
#include "replay/run_data.h"

#include <algorithm>
#include <map>
#include <string>

namespace shardscope::testing {

using replay::LedgerState;

// Events in replay order: steps one after another (the protocol sends one batch per rank per
// step), inside a step by (time, rank, position in its batch).
struct Reference {
    std::vector<Event> order;
    explicit Reference(const std::string& bytes) {
        const auto rec = protocol::decodeRecording(bytes);
        const std::size_t world =
            rec.handshakes.empty() ? 1 : static_cast<std::size_t>(rec.handshakes.front().worldSize);
        struct Keyed {
            std::size_t step;
            Event e;
        };
        std::vector<Keyed> all;
        for (std::size_t b = 0; b < rec.batches.size(); ++b)
            for (const Event& e : rec.batches[b].events)
                all.push_back({b / world, e});
        std::stable_sort(all.begin(), all.end(), [](const Keyed& a, const Keyed& b) {
            if (a.step != b.step) return a.step < b.step;
            return a.e.timeNs != b.e.timeNs ? a.e.timeNs < b.e.timeNs : a.e.rank < b.e.rank;
        });
        for (const Keyed& k : all)
            order.push_back(k.e);
    }
    // live bytes per (category) of `rank`, its live total and peak total after k events
    void at(std::uint64_t k, int rank, std::map<int, std::int64_t>& live, std::int64_t& total,
            std::int64_t& peak) const {
        live.clear();
        total = peak = 0;
        for (std::uint64_t i = 0; i < k; ++i) {
            const Event& e = order[i];
            if (e.rank != rank) continue;
            if (e.kind == EventKind::Alloc) {
                live[static_cast<int>(e.category)] += static_cast<std::int64_t>(e.bytes);
                total += static_cast<std::int64_t>(e.bytes);
            }
            if (e.kind == EventKind::Free) {
                live[static_cast<int>(e.category)] -= static_cast<std::int64_t>(e.bytes);
                total -= static_cast<std::int64_t>(e.bytes);
            }
            peak = std::max(peak, total);
        }
    }
};

inline bool sameAsReference(const Reference& ref, const LedgerState& state, std::uint64_t k,
                            std::string* why) {
    for (std::size_t r = 0; r < state.size(); ++r) {
        std::map<int, std::int64_t> live;
        std::int64_t total = 0, peak = 0;
        ref.at(k, static_cast<int>(r), live, total, peak);
        for (Category c : kAllCategories) {
            const auto want = live.count(static_cast<int>(c)) ? live[static_cast<int>(c)] : 0;
            if (static_cast<std::int64_t>(state[r].live.category(c)) != want) {
                *why = "k=" + std::to_string(k) + " rank " + std::to_string(r) + " " +
                       std::string(categoryName(c)) + ": " +
                       std::to_string(state[r].live.category(c)) + " vs " + std::to_string(want);
                return false;
            }
        }
        if (static_cast<std::int64_t>(state[r].liveTotal) != total ||
            static_cast<std::int64_t>(state[r].peakTotal) != peak) {
            *why = "k=" + std::to_string(k) + " rank " + std::to_string(r) + " totals";
            return false;
        }
    }
    return true;
}

} // namespace shardscope::testing
