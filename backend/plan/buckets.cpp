#include "plan/buckets.h"

#include <algorithm>

namespace shardscope::plan {

std::uint64_t bucketCapacity(std::uint64_t bucketBytes, std::uint64_t elementBytes,
                             std::uint64_t slots) {
    const std::uint64_t perElement =
        std::max<std::uint64_t>(1, elementBytes * std::max<std::uint64_t>(1, slots));
    return std::max<std::uint64_t>(1, bucketBytes / perElement);
}

std::vector<Bucket> planBuckets(std::span<const UnitRange> ranges, std::uint64_t capacity) {
    std::vector<Bucket> out;
    capacity = std::max<std::uint64_t>(1, capacity);
    Bucket current;
    for (const UnitRange& r : ranges) {
        std::uint64_t offset = 0;
        while (offset < r.length) {
            const std::uint64_t take = std::min(capacity - current.count, r.length - offset);
            current.pieces.push_back({r.unit, offset, take});
            current.count += take;
            offset += take;
            if (current.count == capacity) {
                out.push_back(std::move(current));
                current = {};
            }
        }
    }
    if (current.count > 0) out.push_back(std::move(current));
    return out;
}

} // namespace shardscope::plan
