#pragma once
// The data path of format version 2: a rank file written with one gathered write per batch of
// blocks while its hashes (the whole file's and every chunk's) are computed on other threads,
// and the loader's reads of exactly the chunks a rank's new shard overlaps, straight into the
// targets (preadv), verified chunk by chunk on a pool of threads as the reads land. Private to
// backend/checkpoint.
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shardscope::checkpoint {
struct SliceData;
struct SliceTarget;
struct LoadStats;
} // namespace shardscope::checkpoint

namespace shardscope::checkpoint::detail {

// Threads that hash in parallel: the hardware's, at most 8.
unsigned hashThreads();

// Writes `slices` (three blocks each, empty spans skipped) to the open file `fd` at its start,
// fsyncs it, and fills `f.ranges` (with chunk hashes), `f.bytes` and `f.sha256` (chunkListSha256).
void writeChunked(int fd, const std::string& path, std::span<const SliceData> slices,
                  std::uint64_t chunkElements, DataFile& f);

// Version 2's load: reads the chunks of the files that `reads` (planReads over `targets`)
// overlap, copies nothing it does not need, checks every chunk it read. Error(Format) naming
// the file and bytes of the first bad chunk.
void loadChunked(const std::string& dir, const Metadata& m, const std::vector<Read>& reads,
                 std::span<const SliceTarget> targets, LoadStats& stats);

} // namespace shardscope::checkpoint::detail
