#pragma once
// The JSON report of a run (DESIGN.md "Events, recordings and reports") and the handshake
// configuration, built at rank 0 from what every rank measured.
//
// Report keys: param_count, world_size, strategy, model, precision, checkpointing, micro_batch,
// grad_accum, steps, seed, deterministic, data, config (toJson), losses (per step), step_ms,
// ranks [{rank, peak_bytes {category…, total}, model_state_bytes {category…},
//         comm_bytes_per_step {kind: sent bytes},
//         exposed_comm {fraction_median, fraction_per_step [..], comm_union_ns, exposed_ns,
//                       step_ns},
//         device {name, ordinal, ledger_peak_bytes, pool_used_bytes, pool_used_high_bytes,
//                 pool_reserved_bytes, pool_reserved_high_bytes, device_total_bytes,
//                 device_used_bytes, outside_ledger_bytes, declared_workspace_bytes}
//                                                             (CUDA ranks only)}],
// exposed_comm_fraction (the largest per-rank median: the rank that waits most),
// comm_bytes_per_step {kind: sent bytes per rank per step} (rank 0),
// comm_payload_bytes_per_step {kind: bytes}, comm_calls_per_step {kind: calls},
// theory {model_state_bytes {category}, ddp_model_state_bytes {category}, predicted_peak_bytes,
//         peak_at {category}, peak_by_category {category}, peak_phase, activation_peak_bytes,
//         comm_bytes_per_step {kind}, comm_payload_bytes_per_step {kind}, comm_calls_per_step
//         {kind}, psi_equivalents, notes [..]},
// comparison {model_states_equal, peak_delta_bytes, peak_delta_fraction, comm_delta_fraction},
// notes [why measured and predicted differ], param_digest (16 hex digits).
// `max_abs_delta_vs_ddp` is left to `compare`, which has both runs' weights (--weights-out).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "core/categories.h"
#include "model/layout.h"
#include "train/overlap.h"
#include "train/run_config.h"

namespace shardscope::train {

// A CUDA rank's memory as the GPU saw it (device::CudaDevice::measure() at the end of the run,
// copied here so that the report needs no CUDA): the ledger's device-tier peak next to the
// rank's pool (what it used / reserved, now and at the high-water mark) and the whole GPU.
struct DeviceMemory {
    std::string name;                                      // "cuda:0 (NVIDIA H200)"
    std::int32_t ordinal = 0;
    std::uint64_t ledgerPeak = 0;                          // bytes the model asked for, at peak
    std::uint64_t poolUsed = 0, poolUsedHigh = 0;          // ledger + the pool's rounding
    std::uint64_t poolReserved = 0, poolReservedHigh = 0;  // what the rank holds from the driver
    std::uint64_t deviceTotal = 0, deviceUsed = 0;         // cudaMemGetInfo (every process)
    std::uint64_t outsideLedger = 0;                       // used − every ShardScope pool's reserve
    // Outside the pool on purpose and counted in outsideLedger: cuBLAS workspace, the bf16 cast
    // buffer of mixed-precision GEMMs, reduction scratch (device/cuda_ops.h).
    std::uint64_t declaredWorkspace = 0;
    bool operator==(const DeviceMemory&) const = default;
};

// What one rank measured over the whole run (sent to rank 0 with Communicator::gatherBytes).
struct RankResult {
    std::int32_t rank = 0;
    ByteTable peak;              // each cell's own maximum (ledger.peak())
    std::uint64_t peakTotal = 0; // the maximum of the total (ledger.peakBytes())
    ByteTable modelStates;       // at the end of the first forward (StepResult::modelStates)
    comm::CommStats comm;        // the training steps' collectives, all of the rank's communicators
    std::vector<StepOverlap> overlap;   // per step: step, communication union and exposed time
    std::optional<DeviceMemory> device; // CUDA ranks only
};
std::string encodeRankResult(const RankResult& r);
RankResult decodeRankResult(const std::string& bytes); // throws Error(Format)

struct RunOutcome {
    RunConfig config;
    std::uint64_t paramCount = 0;
    std::vector<double> losses;
    std::vector<double> stepMs;
    std::uint64_t digest = 0;
    std::vector<RankResult> ranks; // index = rank
};

nlohmann::json buildReport(const RunOutcome& outcome);

// Each rank's Handshake configJson: toJson(config) + param_count, units [{name, params,
// padded}], theory {model_state_bytes, ddp_model_state_bytes, predicted_peak_bytes},
// capacity_bytes.
nlohmann::json handshakeJson(const RunConfig& config, const std::vector<model::UnitLayout>& units);

// {"param_shard": …, …} over the seven model-state categories / every category (+ "total").
nlohmann::json stateBytesJson(const ByteTable& table);
nlohmann::json categoryBytesJson(const ByteTable& table);

// FNV-1a 64 of raw fp32 weights, and their file form for --weights-out: every unit's unpadded
// fp32 weights, little-endian, unit order, written atomically (tmp + rename).
void writeWeightsFile(const std::string& path, const std::vector<std::vector<float>>& weights);
// For `compare`: a --weights-out file back (all units concatenated; throws Error(Io) /
// Error(Format) when unreadable or not a whole number of floats) and the largest |a − b|
// (Error(Format) when the lengths differ).
std::vector<float> readWeightsFile(const std::string& path);
double maxAbsDelta(const std::vector<float>& a, const std::vector<float>& b);
void writeTextFile(const std::string& path, const std::string& text, const std::string& flag);

} // namespace shardscope::train
