#pragma once
// What the Checkpoints page draws: for a checkpoint's metadata and a target world (M ranks, a
// strategy), each new rank's shard of every unit and the reads that fill it — computed by the
// loader's own functions (checkpoint/reshard.h: placementOf, ownedSpan, planReads), so the page
// shows exactly what `run --resume` will read. Qt-free and pure: tests compare it field by field.
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"
#include "plan/strategy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::widgets {

// A range of one saved file inside one unit (element indices of the unpadded unit).
struct SavedPiece {
    std::size_t file = 0;  // index into Metadata::files
    std::int32_t rank = 0; // the rank that saved it
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

// One read of the plan and the new rank it is for.
struct PlannedRead {
    int newRank = 0;
    checkpoint::Read read;
};

struct UnitLoadPlan {
    std::int32_t unit = 0;
    std::string name;
    std::uint64_t elements = 0;
    std::uint64_t paddedSaved = 0; // as saved: padded to a multiple of the saved shard count
    std::uint64_t paddedNew = 0;   // padded to a multiple of the new shard count
    int shardsSaved = 1;
    int shardsNew = 1;
    std::vector<SavedPiece> saved;       // in file order
    std::vector<checkpoint::Span> owned; // per new rank (replicated strategies: the whole unit)
    std::vector<PlannedRead> reads;      // by new rank, then file order
};

struct RankLoad {
    std::uint64_t bytesNeeded = 0; // master + m + v of the rank's shard: the plan's bytes
    std::uint64_t bytesRead =
        0;                 // what the loader reads: whole checksum chunks (checkpoint::bytesToRead)
    std::size_t files = 0; // files touched
    std::size_t reads = 0;
};

struct LoadPlan {
    int savedWorld = 1;
    std::string savedStrategy;
    int newWorld = 1;
    plan::Strategy newStrategy = plan::Strategy::Zero3;
    int hybridGroup = 0; // the new run's, for HYBRID_SHARD
    std::vector<UnitLoadPlan> units;
    std::vector<RankLoad> ranks; // per new rank
};

// Throws shardscope::Error (InvalidArgument) for a world or hybrid group the strategy cannot
// place (the message names it), exactly where the loader would.
LoadPlan planLoad(const checkpoint::Metadata& meta, plan::Strategy strategy, int world,
                  int hybridGroup);

// The shard count the saved metadata implies for a unit (padding = padded − elements).
int savedShardCount(const checkpoint::Metadata& meta);

} // namespace shardscope::widgets
