#pragma once
// The handshake's configuration (protocol::Handshake::configJson) as a type: the run
// configuration's JSON plus what the worker knows before the first step — the parameter count,
// the units and the theory's per-rank model states and peak. Written by every rank, read by the
// GUI's stream assembler.
//
// Note: the handshake travels inside the versioned protocol (protocol::kProtocolVersion), so it
// carries no schema of its own. Its reader is tolerant where reports are strict: a key that is
// missing or of another type leaves the default, so a recording still replays what it can; what
// it does read is bounded (unit count, world size).
#include "report/report.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope::report {

struct UnitInfo {
    std::string name;
    std::uint64_t params = 0;
    std::uint64_t padded = 0;
    bool operator==(const UnitInfo&) const = default;
};

// One pipeline stage's theory: its units' model states under the run's strategy and under DDP,
// and its dry run's peak (a stage's ranks hold only its units: plan::stageUnits).
struct StageTheory {
    CategoryBytes modelStates{};
    CategoryBytes ddpModelStates{};
    std::uint64_t predictedPeakBytes = 0;
    bool operator==(const StageTheory&) const = default;
};

struct RunInfo {
    std::string strategy; // CLI name: zero3, fsdp, …
    int worldSize = 1;
    std::string model; // preset name
    std::uint64_t paramCount = 0;
    std::string precision;       // bf16 | fp32
    std::string backend = "cpu"; // cpu | cuda
    bool sharedDevice = false;   // ranks were threads of one worker process (--shared-device)
    int tensorParallel = 1;      // --tp: T of the P × T × D mesh (TP groups: T consecutive ranks)
    int pipeParallel = 1;        // --pp: P, the pipeline's stages (plan/mesh.h)
    std::string pipeSchedule = "1f1b"; // --pp-schedule's flag (with P > 1)
    int virtualStages = 1;  // --virtual-stages: V model chunks per stage (interleaved), 1 … 16
    int gradAccum = 1;      // micro-batches per step (--grad-accum; a pipeline's M), 1 … 4096
    std::int64_t steps = 0; // steps the run will make (0: unknown)
    // A resumed run's steps before it (its checkpoint's step): labels count on from there
    // (core/step_number.h).
    std::int64_t stepsBefore = 0;
    std::vector<UnitInfo> units;
    std::optional<CategoryBytes> theoryModelStates;    // per rank, by category
    std::optional<CategoryBytes> ddpTheoryModelStates; // DDP at the same N, per rank
    std::uint64_t predictedPeakBytes = 0;
    // With a pipeline, one entry per stage (the fields above are stage 0's); empty otherwise
    // or when the handshake has none (every rank is then compared with the fields above).
    std::vector<StageTheory> stageTheory;
    std::optional<std::uint64_t> capacityBytes;
    std::string configJson; // as received, for the details tooltip

    std::string unitName(std::int32_t unit) const; // "block2", or "unit 7" when unnamed
    // The pipeline stage of `rank` (plan/mesh.h: stage = rank / (T·D); 0 without a pipeline).
    int stageOf(int rank) const;
    // The units stage `stage` runs: its chunks, each [first, end) of `units` (one chunk, every
    // unit, without a pipeline; V chunks with virtual stages), and their span.
    std::vector<std::pair<int, int>> stageChunks(int stage) const;
    std::pair<int, int> stageUnitRange(int stage) const;
    bool stageHolds(int stage, int unit) const;
    // The theory `rank` is compared with: its stage's where the handshake has stages.
    std::optional<CategoryBytes> theoryModelStatesOf(int rank) const;
    std::optional<CategoryBytes> ddpTheoryModelStatesOf(int rank) const;
    std::uint64_t predictedPeakOf(int rank) const;
};

// `config` is the run configuration's JSON (runconfig::toJson); the rest is added to it.
nlohmann::json handshakeJson(nlohmann::json config, std::uint64_t paramCount,
                             const std::vector<UnitInfo>& units,
                             const CategoryBytes& theoryModelStates,
                             const CategoryBytes& ddpTheoryModelStates,
                             std::uint64_t predictedPeakBytes, std::int64_t stepsBefore = 0,
                             const std::vector<StageTheory>& stages = {});
// `worldSize`: the handshake record's own (used when the JSON has none). Not a JSON object:
// an error line.
Parsed<RunInfo> parseRunInfo(std::string_view configJson, int worldSize);

} // namespace shardscope::report
