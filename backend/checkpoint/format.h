#pragma once
// The checkpoint format (docs/checkpoints.md): DIR/step-K/metadata.json beside one data file
// per saving rank, and DIR/latest naming the newest complete step.
//
// A data file is a sequence of ranges; a range is elements [begin, end) of one unit's
// UNPADDED flat index space and is stored as three fp32 little-endian blocks back to back:
// master weights, Adam m, Adam v. Ranges never overlap and, over all files, cover every unit
// exactly once, so padding (which moves with the world size) is never stored and a checkpoint
// reads back at any world size. Every count read from metadata.json is bounded and
// cross-checked (against the model shape's own units, against the files' sizes) before it
// sizes anything.
#include "plan/shape.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::checkpoint {

inline constexpr std::string_view kFormatName = "shardscope-checkpoint";
// Version 2 checks data in chunks (below); version 1 (one sha256 per range) is still read.
inline constexpr int kFormatVersion = 2;
inline constexpr int kOldestFormatVersion = 1;
inline constexpr int kStates = 3; // master, Adam m, Adam v: fp32 each
inline constexpr std::array<std::string_view, kStates> kStateNames = {"master", "exp_avg",
                                                                      "exp_avg_sq"};
inline constexpr std::uint64_t kBytesPerElement = kStates * sizeof(float);

// Bounds on what metadata.json may claim.
inline constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kMaxUnits = 4098;         // 4096 blocks + embedding + head
inline constexpr std::size_t kMaxFiles = 65536;        // = the largest world size
inline constexpr std::size_t kMaxRangesPerFile = 4098; // at most one per unit
inline constexpr std::uint64_t kMaxParams = std::uint64_t{1} << 40;
inline constexpr int kMaxWorldSize = 65536;
inline constexpr std::int64_t kMaxStep = std::int64_t{1} << 40;
// Version 2's unit of verification: each state block of a range is hashed in chunks of this
// many elements (the last one shorter), so a loader that needs part of a range reads and
// checks only the chunks it overlaps. 64 Ki elements = 256 KiB: one large read, and
// 3 × 2^30 / 2^16 ≈ 49 000 hashes (≈ 3.5 MB of metadata) for a billion parameters.
inline constexpr std::uint64_t kDefaultChunkElements = std::uint64_t{1} << 16;
inline constexpr std::uint64_t kMinChunkElements = 16;
inline constexpr std::uint64_t kMaxChunkElements = std::uint64_t{1} << 26;

struct Range {
    std::int32_t unit = 0;
    std::uint64_t begin = 0; // elements of the unit, unpadded
    std::uint64_t end = 0;
    std::string sha256; // version 1: of the range's three blocks as stored
    // Version 2: sha256 of every chunk, block after block (master, m, v), each block's
    // chunks in order: 3 × ⌈elements / chunkElements⌉ of them.
    std::vector<std::string> chunks;
    std::uint64_t elements() const { return end - begin; }
    std::uint64_t bytes() const { return elements() * kBytesPerElement; }
};

// Chunks per state block of a range of `elements` elements.
inline std::uint64_t chunksPerBlock(std::uint64_t elements, std::uint64_t chunkElements) {
    return (elements + chunkElements - 1) / chunkElements;
}

struct DataFile {
    std::string name;      // "rank-00003.bin"
    std::int32_t rank = 0; // the saving rank
    std::uint64_t bytes = 0;
    std::string sha256;        // version 1: of the file's bytes; 2: chunkListSha256
    std::vector<Range> ranges; // in file order
};

struct UnitEntry {
    std::string name;
    std::uint64_t elements = 0; // unpadded
    std::uint64_t padded = 0;   // as saved (padding to the saved shard count)
};

struct ParamEntry {
    std::string name; // "<unit>.<slot>", e.g. "block0.attn.qkv.weight"
    std::int32_t unit = 0;
    std::uint64_t offset = 0; // elements from the start of the unit's flat buffer
    std::int64_t rows = 1;    // [rows × cols]; vectors have rows = 1
    std::int64_t cols = 0;
};

struct OptimizerState { // AdamW's settings as saved (defaults: the engine's, train/optimizer.h)
    double learningRate = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weightDecay = 0.1,
           clipNorm = 1.0; // ≤ 0: no clipping
    std::int64_t step = 0; // AdamW steps taken (bias correction continues from here)
};

struct Metadata {
    int version = kFormatVersion;
    std::uint64_t chunkElements = kDefaultChunkElements; // version 2
    plan::GptShape shape{};
    std::uint64_t paramCount = 0;
    std::vector<UnitEntry> units;
    std::vector<ParamEntry> params;
    std::string strategy; // plan::strategyName
    int worldSize = 1;
    int hybridGroup = 0; // fsdp_hybrid's shard group size, 0 otherwise
    // The pipeline stages of the run that saved it (1: none): each stage's world_size / P ranks
    // shared its units' shards. Informational (a load reads the files' ranges); absent in older
    // metadata.
    int pipeParallel = 1;
    std::string precision;         // bf16 | fp32 (compute); stored state is always fp32
    std::int64_t step = 0;         // optimizer steps done: the next step's index
    std::int64_t dataPosition = 0; // the data source's next step index
    std::uint64_t seed = 0;        // initialisation and data seed
    std::int64_t microBatch = 0;
    int gradAccum = 1;
    OptimizerState optimizer;
    std::vector<DataFile> files; // ordered by rank
};

// The units and parameters of a model shape (plan::unitLayouts), as metadata lists them;
// padding to `shards`.
void describeModel(Metadata& m, const plan::GptShape& shape, std::uint64_t shards);

std::string toJson(const Metadata& m); // metadata.json text
// Throws Error(Format) "<where>: <what is wrong>" for anything malformed, out of bounds or
// inconsistent (version, shape, units/params that are not the shape's, files that do not
// partition every unit, sizes that do not match the ranges).
Metadata parseMetadata(std::string_view text, const std::string& where);

// One data file's entry as JSON (metadata.json's "files" items; the save's gather to rank 0
// carries the same text) and back, bounded and checked like the rest of the metadata (its
// ranges against `chunkElements` for version 2).
std::string dataFileJson(const DataFile& f, int version);
DataFile parseDataFile(std::string_view text, int version, std::uint64_t chunkElements,
                       const std::string& where);

// Version 2's file checksum: the sha256 of the file's chunk hashes (lowercase hex, in file
// order, concatenated), i.e. a hash list. It costs one parallel hashing pass over the data
// instead of a second, serial one; verify re-hashes every chunk and then this list.
std::string chunkListSha256(const DataFile& f);

std::string dataFileName(int rank);         // "rank-00003.bin"
std::string stepDirName(std::int64_t step); // "step-12"

} // namespace shardscope::checkpoint
