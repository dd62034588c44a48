#pragma once
// Memory over time of one rank, reduced for plotting: at most maxPoints samples per step, each
// the highest total within its slice of time (a peak narrower than a pixel still shows).
#include "replay/run_data.h"

#include <vector>

namespace shardscope::replay {

struct SeriesPoint {
    std::uint64_t replayNs = 0;
    CategoryBytes bytes{}; // live by category
    std::uint64_t total() const;
};

std::vector<SeriesPoint> rankSeries(const StepData& step, int rank, std::size_t maxPoints);
// Merges neighbours until at most maxPoints remain, keeping each group's highest total.
std::vector<SeriesPoint> capSeries(std::vector<SeriesPoint> points, std::size_t maxPoints);

} // namespace shardscope::replay
