#pragma once
// The resharding plan: which element ranges a rank of a (new) world owns, which part of them
// it writes when its state is replicated, and which byte ranges of which saved files overlap
// them. The loader reads exactly these ranges, and the Checkpoints page draws this same plan.
#include "checkpoint/format.h"
#include "plan/policy.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace shardscope::checkpoint {

// Elements [begin, end) of one unit's unpadded flat index space (may be empty).
struct Span {
    std::int32_t unit = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t elements() const { return end - begin; }
    friend bool operator==(const Span&, const Span&) = default;
};

// Where a rank sits in a world for one strategy: the shard it owns of every unit, and among
// how many ranks that shard is replicated (DDP: everyone; HYBRID_SHARD: the replica group).
struct Placement {
    int world = 1;
    int rank = 0;
    int shards = 1; // ranks a unit's buffer is split over
    int shardRank = 0;
    int copies = 1; // ranks holding the same shard
    int copyIndex = 0;
};
// Throws Error(InvalidArgument) for a rank outside the world or a hybrid group that does not
// divide it. Shard groups are consecutive ranks (the worker's layout).
Placement placementOf(const plan::Policy& policy, int world, int rank);

// What the optimizer updates on this rank: the unit's elements for an unsharded optimizer
// (DDP), else the rank's shard of the padded buffer clipped to the unpadded elements —
// exactly strategy::Sharding::owned()'s [begin, end).
Span ownedSpan(const Placement& p, bool shardOptimizer, std::int32_t unit, std::uint64_t elements);
// The part of a replicated span copy `index` of `copies` writes (equal parts, the last ones
// possibly empty): no byte is written twice and every rank writes.
Span replicaPart(const Span& owned, int copies, int index);

// One read: elements [begin, end) of `unit`, found in range `range` of file `file`; the
// three fp32 blocks (master, m, v) start at byte `offsets[s]` of the file.
struct Read {
    std::size_t file = 0;
    std::size_t range = 0;
    std::int32_t unit = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::array<std::uint64_t, kStates> offsets{};
    std::uint64_t bytes() const { return (end - begin) * kBytesPerElement; }
};
// The reads that fill `needs` (units and element ranges within the checkpoint's units; throws
// Error(InvalidArgument) otherwise), in file order. Their union covers every need exactly.
std::vector<Read> planReads(const Metadata& m, std::span<const Span> needs);

// Bytes [begin, end) of file `file` (an index into the metadata's files).
struct FileBytes {
    std::size_t file = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    friend bool operator==(const FileBytes&, const FileBytes&) = default;
};
// What checkpoint::load reads for `needs`, in file order, adjacent pieces merged: version 2,
// the chunks the plan's reads overlap (checksums are per chunk); version 1, every touched
// range whole (one checksum per range). Their sum is LoadStats::bytesRead.
std::vector<FileBytes> bytesToRead(const Metadata& m, std::span<const Span> needs);

// The byte offset of each range inside its file.
std::vector<std::uint64_t> rangeOffsets(const DataFile& f);

} // namespace shardscope::checkpoint
