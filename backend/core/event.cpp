#include "core/event.h"

#include <array>
#include <chrono>

namespace shardscope {

std::string_view eventKindName(EventKind k) {
    constexpr std::array<std::string_view, 8> names = {
        "alloc",           "free",           "compute_begin", "compute_end",
        "collective_begin", "collective_end", "step_begin",    "step_end"};
    return names[static_cast<std::size_t>(k)];
}

std::string_view phaseName(Phase p) {
    constexpr std::array<std::string_view, 5> names = {"none", "forward", "backward", "optimizer",
                                                       "recompute"};
    return names[static_cast<std::size_t>(p)];
}

std::string_view collectiveOpName(CollectiveOp c) {
    constexpr std::array<std::string_view, 5> names = {"none", "all_gather", "reduce_scatter",
                                                       "all_reduce", "broadcast"};
    return names[static_cast<std::size_t>(c)];
}

std::uint64_t monotonicNs() {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

} // namespace shardscope
