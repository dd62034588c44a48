#pragma once
// How communication buckets are cut (shared by the theory engine and backend/strategy, so the
// prediction and the run use the very same buckets).
//
// A bucket coalesces consecutive pieces of units' per-rank ranges into one collective of
// `count` elements per rank. Units are visited in the given order; a unit larger than what is
// left in the current bucket is split across buckets. For reduce-scatter and all-gather the
// staging buffer holds one slot of `count` elements per rank, so a bucket of B bytes carries
// ⌊B / (ranks × element bytes)⌋ elements per rank; for all-reduce ⌊B / element bytes⌋.
#include <cstdint>
#include <span>
#include <vector>

namespace shardscope::plan {

struct BucketPiece {
    std::int32_t unit = 0;
    std::uint64_t offset = 0; // within the unit's per-rank range
    std::uint64_t length = 0;
};

struct Bucket {
    std::uint64_t count = 0; // elements per rank
    std::vector<BucketPiece> pieces;
};

struct UnitRange {
    std::int32_t unit = 0;
    std::uint64_t length = 0; // elements per rank (a shard, or the whole unit for all-reduce)
};

// Elements per rank one bucket carries (at least 1).
std::uint64_t bucketCapacity(std::uint64_t bucketBytes, std::uint64_t elementBytes,
                             std::uint64_t slots);

std::vector<Bucket> planBuckets(std::span<const UnitRange> ranges, std::uint64_t capacity);

} // namespace shardscope::plan
