#include "replay/rank_series.h"

namespace shardscope::replay {

std::uint64_t SeriesPoint::total() const {
    std::uint64_t t = 0;
    for (std::uint64_t b : bytes)
        t += b;
    return t;
}

namespace {

CategoryBytes byCategory(const ByteTable& t) {
    CategoryBytes out{};
    for (Category c : kAllCategories)
        out[index(c)] = t.category(c);
    return out;
}

} // namespace

std::vector<SeriesPoint> rankSeries(const StepData& step, int rank, std::size_t maxPoints) {
    std::vector<SeriesPoint> points;
    if (step.snapshots.empty() || rank < 0 ||
        static_cast<std::size_t>(rank) >= step.snapshots.front().size())
        return points;
    RankState state = step.snapshots.front()[static_cast<std::size_t>(rank)];
    points.push_back({step.replayStartNs, byCategory(state.live)});
    for (std::size_t i = 0; i < step.events.size(); ++i) {
        const Event& e = step.events[i];
        if (e.rank != rank || (e.kind != EventKind::Alloc && e.kind != EventKind::Free)) continue;
        applyEvent(state, e);
        points.push_back({step.replayNs(i), byCategory(state.live)});
    }
    return capSeries(std::move(points), maxPoints);
}

std::vector<SeriesPoint> capSeries(std::vector<SeriesPoint> points, std::size_t maxPoints) {
    if (points.size() <= maxPoints || maxPoints < 2) return points;
    const std::uint64_t t0 = points.front().replayNs;
    const std::uint64_t span = points.back().replayNs - t0 + 1;
    std::vector<SeriesPoint> out;
    out.reserve(maxPoints + 1);
    std::size_t i = 0;
    // Equal slices of time (about a pixel each once drawn); the last point stays so the line
    // ends where the run is.
    for (std::size_t slice = 0; slice < maxPoints && i < points.size(); ++slice) {
        const std::uint64_t end = t0 + span * (slice + 1) / maxPoints;
        if (points[i].replayNs >= end) continue; // nothing happened in this slice
        std::size_t best = i;
        for (; i < points.size() && points[i].replayNs < end; ++i)
            if (points[i].total() > points[best].total()) best = i;
        out.push_back(points[best]);
    }
    if (out.back().replayNs != points.back().replayNs) out.push_back(points.back());
    return out;
}

} // namespace shardscope::replay
