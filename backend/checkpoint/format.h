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
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/shape.h"

namespace shardscope::checkpoint {

inline constexpr std::string_view kFormatName = "shardscope-checkpoint";
inline constexpr int kFormatVersion = 1;
inline constexpr int kStates = 3; // master, Adam m, Adam v: fp32 each
inline constexpr std::array<std::string_view, kStates> kStateNames = {"master", "exp_avg", "exp_avg_sq"};
inline constexpr std::uint64_t kBytesPerElement = kStates * sizeof(float);

// Bounds on what metadata.json may claim.
inline constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kMaxUnits = 4098;          // 4096 blocks + embedding + head
inline constexpr std::size_t kMaxFiles = 65536;         // = the largest world size
inline constexpr std::size_t kMaxRangesPerFile = 4098;  // at most one per unit
inline constexpr std::uint64_t kMaxParams = std::uint64_t{1} << 40;
inline constexpr int kMaxWorldSize = 65536;
inline constexpr std::int64_t kMaxStep = std::int64_t{1} << 40;

struct Range {
    std::int32_t unit = 0;
    std::uint64_t begin = 0; // elements of the unit, unpadded
    std::uint64_t end = 0;
    std::string sha256;      // of the range's three blocks as stored
    std::uint64_t elements() const { return end - begin; }
    std::uint64_t bytes() const { return elements() * kBytesPerElement; }
};

struct DataFile {
    std::string name;          // "rank-00003.bin"
    std::int32_t rank = 0;     // the saving rank
    std::uint64_t bytes = 0;
    std::string sha256;        // of the whole file
    std::vector<Range> ranges; // in file order
};

struct UnitEntry {
    std::string name;
    std::uint64_t elements = 0; // unpadded
    std::uint64_t padded = 0;   // as saved (padding to the saved shard count)
};

struct ParamEntry {
    std::string name;   // "<unit>.<slot>", e.g. "block0.attn.qkv.weight"
    std::int32_t unit = 0;
    std::uint64_t offset = 0; // elements from the start of the unit's flat buffer
    std::int64_t rows = 1;    // [rows × cols]; vectors have rows = 1
    std::int64_t cols = 0;
};

struct OptimizerState {
    double learningRate = 0, beta1 = 0, beta2 = 0, eps = 0, weightDecay = 0, clipNorm = 0;
    std::int64_t step = 0; // AdamW steps taken (bias correction continues from here)
};

struct Metadata {
    int version = kFormatVersion;
    plan::GptShape shape{};
    std::uint64_t paramCount = 0;
    std::vector<UnitEntry> units;
    std::vector<ParamEntry> params;
    std::string strategy;         // plan::strategyName
    int worldSize = 1;
    int hybridGroup = 0;          // fsdp_hybrid's shard group size, 0 otherwise
    std::string precision;        // bf16 | fp32 (compute); stored state is always fp32
    std::int64_t step = 0;        // optimizer steps done: the next step's index
    std::int64_t dataPosition = 0; // the data source's next step index
    std::uint64_t seed = 0;       // initialisation and data seed
    std::int64_t microBatch = 0;
    int gradAccum = 1;
    OptimizerState optimizer;
    std::vector<DataFile> files;  // ordered by rank
};

// The units and parameters of a model shape (plan::unitLayouts), as metadata lists them;
// padding to `shards`.
void describeModel(Metadata& m, const plan::GptShape& shape, std::uint64_t shards);

std::string toJson(const Metadata& m); // metadata.json text
// Throws Error(Format) "<where>: <what is wrong>" for anything malformed, out of bounds or
// inconsistent (version, shape, units/params that are not the shape's, files that do not
// partition every unit, sizes that do not match the ranges).
Metadata parseMetadata(std::string_view text, const std::string& where);

std::string dataFileName(int rank); // "rank-00003.bin"
std::string stepDirName(std::int64_t step); // "step-12"

} // namespace shardscope::checkpoint
