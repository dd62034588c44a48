#pragma once
// The run report (docs/design.md "Events, recordings and reports") and the compare report as C++
// types, with the one JSON writer and the one reader. The worker fills a RunReport; the CLI and
// the GUI read files and streams back into it. Readers check what they read (types, counts,
// ranks below world_size, sizes) and answer one line, never an exception.
//
// Note: every report carries "schema". A file without it was written before reports were typed:
// readers refuse it with kNoSchemaMessage instead of guessing at its keys. A change to a key's
// meaning or type bumps the number after the slash.
//
// Report keys: schema, param_count, world_size, strategy, model, precision, checkpointing,
// micro_batch, grad_accum, steps, seed, deterministic, data, config (the run configuration's
// JSON, runconfig::toJson), losses (per step), step_ms,
// ranks [{rank, peak_bytes {category…, total}, model_state_bytes {state category…},
//         model_state_bytes_by_tier {device|host|nvme: {state category…}},
//         peak_bytes_by_tier {device|host|nvme: {category…, total}},
//         comm_bytes_per_step {kind: sent bytes},
//         exposed_comm {fraction_median, fraction_per_step [..], comm_union_ns, exposed_ns,
//         step_ns}, exposed_transfer {fraction_median, fraction_per_step [..], transfer_union_ns,
//         exposed_ns}, device {name, ordinal, ledger_peak_bytes, pool_used_bytes,
//         pool_used_high_bytes,
//                 pool_reserved_bytes, pool_reserved_high_bytes, device_total_bytes,
//                 device_used_bytes, outside_ledger_bytes, declared_workspace_bytes}
//                                                             (CUDA ranks only)}],
// exposed_comm_fraction (the largest per-rank median: the rank that waits most),
// exposed_transfer_fraction (the same for tier transfers; train/overlap.h defines both),
// comm_bytes_per_step {kind: sent bytes per rank per step} (rank 0),
// comm_payload_bytes_per_step {kind: bytes}, comm_calls_per_step {kind: calls},
// theory {model_state_bytes {category}, ddp_model_state_bytes {category}, padding_bytes,
//         model_state_bytes_by_tier {tier: {category}}, peak_bytes_by_tier {tier: bytes},
//         predicted_peak_bytes, peak_at {category}, peak_by_category {category}, peak_phase,
//         activation_peak_bytes, comm_bytes_per_step {kind}, comm_payload_bytes_per_step {kind},
//         comm_calls_per_step {kind}, psi_equivalents, notes [..]},
// comparison {model_states_equal, peak_delta_bytes, peak_delta_fraction, comm_delta_fraction},
// notes [why measured and predicted differ], param_digest (16 hex digits),
// max_abs_delta_vs_ddp (only in `compare`'s reports, which has both runs' weights),
// gemm {engine, bf16_units} (CPU ranks: what ran the GEMMs, kernels/cpu/gemm.h; absent before).
// Compare report: {schema, ranks, deterministic, strategies [run report…]}, DDP first.
#include "core/categories.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope::report {

inline constexpr std::string_view kRunSchema = "shardscope.run/1";
inline constexpr std::string_view kCompareSchema = "shardscope.compare/1";
inline constexpr std::string_view kNoSchemaMessage =
    "report has no schema field (written by an older ShardScope); re-run to regenerate";

using CategoryBytes = std::array<std::uint64_t, kCategoryCount>;
// Per tier (index = core/categories.h Tier): device, host, nvme.
using TierCategoryBytes = std::array<CategoryBytes, kTierCount>;
using TierBytes = std::array<std::uint64_t, kTierCount>;
// Per collective kind ("all_gather", …), in the writer's order; per-step values may be fractional.
using KindValues = std::vector<std::pair<std::string, double>>;
double total(const KindValues& values);
std::uint64_t stateTotal(const CategoryBytes& bytes); // the sum over the categories

// Exposed communication of one rank: the time a collective was outstanding while the rank was
// not computing, as a share of the step.
struct ExposedComm {
    double fractionMedian = 0; // median over the steps
    std::vector<double> fractionPerStep;
    std::uint64_t commUnionNs = 0; // summed over the steps
    std::uint64_t exposedNs = 0;
    std::uint64_t stepNs = 0;
    bool operator==(const ExposedComm&) const = default;
};

// Exposed transfers of one rank: the time a tier transfer (device ↔ host copy, NVMe read or
// write) was in flight while the rank computed nothing, as a share of the step (the same step
// time as ExposedComm). Reports written before transfers were recorded read as 0.
struct ExposedTransfer {
    double fractionMedian = 0;
    std::vector<double> fractionPerStep;
    std::uint64_t transferUnionNs = 0; // summed over the steps
    std::uint64_t exposedNs = 0;
    bool operator==(const ExposedTransfer&) const = default;
};

// A CUDA rank's memory as the GPU saw it at the end of the run: the ledger's device-tier peak
// next to the rank's pool (used / reserved, now and at the high-water mark) and the whole GPU.
struct DeviceMemory {
    std::string name; // "cuda:0 (NVIDIA H200)"
    std::int32_t ordinal = 0;
    std::uint64_t ledgerPeakBytes = 0;                      // bytes the model asked for, at peak
    std::uint64_t poolUsedBytes = 0, poolUsedHighBytes = 0; // ledger + the pool's rounding
    std::uint64_t poolReservedBytes = 0, poolReservedHighBytes = 0; // held from the driver
    std::uint64_t deviceTotalBytes = 0, deviceUsedBytes = 0; // cudaMemGetInfo (every process)
    std::uint64_t outsideLedgerBytes = 0; // used − every ShardScope pool's reserve
    std::uint64_t declaredWorkspaceBytes =
        0; // cuBLAS workspace, casts, scratch (device/cuda_ops.h)
    bool operator==(const DeviceMemory&) const = default;
};

struct RankReport {
    int rank = 0;
    CategoryBytes peakBytes{};       // each category's own maximum
    std::uint64_t peakTotal = 0;     // the maximum of the total
    CategoryBytes modelStateBytes{}; // the model-state categories (the others are 0)
    // The same split by the tier the bytes live in (ZeRO-Offload: host; ZeRO-Infinity: nvme).
    TierCategoryBytes modelStateBytesByTier{};
    TierCategoryBytes peakBytesByTier{}; // each cell's own maximum
    TierBytes peakTotalByTier{};         // the maximum of each tier's total
    KindValues commBytesPerStep;         // sent per step
    ExposedComm exposedComm;
    ExposedTransfer exposedTransfer;
    std::optional<DeviceMemory> device;    // CUDA ranks only
    std::uint64_t checkpointBytesRead = 0; // --resume: what the rank read of the checkpoint
    bool operator==(const RankReport&) const = default;
};

// One pipeline stage's theory (a stage's ranks hold only its units [firstUnit, endUnit)).
struct StageTheoryValues {
    std::int32_t firstUnit = 0; // the span of the stage's units
    std::int32_t endUnit = 0;
    // With virtual stages (interleaved): the stage's chunks [first, end), chunk c being virtual
    // stage c·P + stage; empty with one chunk.
    std::vector<std::pair<std::int32_t, std::int32_t>> chunks;
    CategoryBytes modelStateBytes{};
    CategoryBytes ddpModelStateBytes{};
    std::uint64_t predictedPeakBytes = 0;
    KindValues commBytesPerStep;
    bool operator==(const StageTheoryValues&) const = default;
};

struct TheoryValues {
    CategoryBytes modelStateBytes{};
    CategoryBytes ddpModelStateBytes{};
    TierCategoryBytes modelStateBytesByTier{};
    TierBytes peakBytesByTier{}; // device: the predicted peak; host/nvme: the dry run's peaks
    std::uint64_t paddingBytes = 0;
    std::uint64_t predictedPeakBytes = 0;
    CategoryBytes peakAt{};
    CategoryBytes peakByCategory{};
    std::string peakPhase;
    std::uint64_t activationPeakBytes = 0;
    KindValues commBytesPerStep, commPayloadBytesPerStep, commCallsPerStep;
    double psiEquivalents = 0;
    std::vector<std::string> notes;
    // With a pipeline: every stage's own (the fields above are stage 0's); empty otherwise.
    std::vector<StageTheoryValues> stages;
    bool operator==(const TheoryValues&) const = default;
};

struct Comparison {
    bool modelStatesEqual = false;
    std::int64_t peakDeltaBytes = 0;
    double peakDeltaFraction = 0;
    double commDeltaFraction = 0;
    bool operator==(const Comparison&) const = default;
};

// A run resumed from a checkpoint (docs/checkpoints.md): where, and how it had been saved.
struct ResumedFrom {
    std::string path;      // the step folder
    std::int64_t step = 0; // the run's steps done when it was saved
    int worldSize = 1;
    std::string strategy;
    bool operator==(const ResumedFrom&) const = default;
};

// One checkpoint the run saved.
struct SaveRecord {
    std::int64_t step = 0;
    std::string path;
    double seconds = 0;      // from the snapshot to the commit (rank 0)
    std::uint64_t bytes = 0; // every rank's data files together
    double secondsBlocked =
        0; // how long the save held the training loop (= seconds unless --save-async)
    bool operator==(const SaveRecord&) const = default;
};

// A configuration file the run was started from (--ds-config, --accelerate-config): every key
// either applied (as the setting it became) or ignored (with why). Filled by the CLI.
// Most notes (and config_import entries per list) a report may carry: readers refuse more.
inline constexpr std::size_t kMaxReportNotes = 256;

struct ConfigImport {
    std::string source;                                       // the file as given
    std::vector<std::pair<std::string, std::string>> applied; // key path, setting
    std::vector<std::pair<std::string, std::string>> ignored; // key path, why
    bool operator==(const ConfigImport&) const = default;
};

struct RunReport {
    std::uint64_t paramCount = 0;
    int worldSize = 1;
    std::string strategy;  // CLI name: zero3, fsdp, …
    std::string model;     // preset name
    std::string precision; // bf16 | fp32
    bool checkpointing = false;
    std::int64_t microBatch = 1;
    std::int64_t gradAccum = 1;
    std::int64_t steps = 0;
    std::uint64_t seed = 0;
    bool deterministic = false;
    std::string data;                                 // "synthetic" or the --data file
    nlohmann::json config = nlohmann::json::object(); // runconfig::toJson of the run
    std::vector<double> losses;
    std::vector<double> stepMs;
    std::vector<RankReport> ranks;                                          // index = rank
    KindValues commBytesPerStep, commPayloadBytesPerStep, commCallsPerStep; // rank 0
    double exposedCommFraction = 0;
    double exposedTransferFraction = 0;
    TheoryValues theory;
    Comparison comparison;
    std::vector<std::string> notes;
    std::string paramDigest;
    std::optional<double> maxAbsDeltaVsDdp; // compare only
    std::string gemmEngine; // CPU ranks: "oneDNN avx512_core_bf16 (fp32 and bf16)", …
    bool bf16Gemm = false;  // linear layers ran in bf16 on the CPU's bf16 units
    std::optional<ResumedFrom> resumedFrom; // "resumed_from", with --resume
    std::vector<SaveRecord> saves;          // "saves", with --save
    std::optional<ConfigImport>
        configImport; // "config_import" {source, applied [{key, setting}], ignored [{key, why}]}

    const RankReport& worstRank() const; // the largest peak: it decides whether a job fits
    std::uint64_t peakMax() const;       // over ranks
    // The theory `rank` is compared with: its pipeline stage's (theory.stages; stage = rank /
    // (world_size / stages)), the run's single figures without a pipeline.
    const CategoryBytes& theoryModelStatesOf(int rank) const;
    std::uint64_t predictedPeakOf(int rank) const;
    bool operator==(const RunReport&) const = default;
};

struct CompareReport {
    int ranks = 1;
    bool deterministic = true;
    std::vector<RunReport> strategies; // DDP first
    bool operator==(const CompareReport&) const = default;
};

nlohmann::json toJson(const RunReport& report);
nlohmann::json toJson(const CompareReport& report);

// A reader's answer: the value, or one line saying what is wrong (no path: callers prefix it).
template <class T> struct Parsed {
    std::optional<T> value;
    std::string error;
    explicit operator bool() const { return value.has_value(); }
};

Parsed<RunReport> fromJson(const nlohmann::json& j);
Parsed<RunReport> parseRunReport(std::string_view text);
// config_import on its own ({source, applied, ignored}, as a report carries it): the listing the
// GUI hands `shardscope-cli run --config-import FILE` for a configuration it imported.
nlohmann::json toJson(const ConfigImport& configImport);
Parsed<ConfigImport> parseConfigImport(std::string_view text);
Parsed<CompareReport> compareFromJson(const nlohmann::json& j);
// A file's text: a compare report, or one run report (then the only row).
Parsed<CompareReport> parseCompareReport(std::string_view text);

} // namespace shardscope::report
