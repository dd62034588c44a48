#pragma once
// The run report (report/report.h: the type, its keys and schema) filled at rank 0 from what
// every rank measured, and the handshake configuration (report/run_info.h) of each rank.
#include "comm/communicator.h"
#include "core/categories.h"
#include "plan/units.h"
#include "report/files.h"
#include "report/report.h"
#include "report/run_info.h"
#include "theory/estimate.h"
#include "train/overlap.h"
#include "train/run_config.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::train {

// A CUDA rank's memory as the GPU saw it (device::CudaDevice::measure() at the end of the run,
// copied here so that the report needs no CUDA): the ledger's device-tier peak next to the
// rank's pool (what it used / reserved, now and at the high-water mark) and the whole GPU.
struct DeviceMemory {
    std::string name; // "cuda:0 (NVIDIA H200)"
    std::int32_t ordinal = 0;
    std::uint64_t ledgerPeak = 0;                         // bytes the model asked for, at peak
    std::uint64_t poolUsed = 0, poolUsedHigh = 0;         // ledger + the pool's rounding
    std::uint64_t poolReserved = 0, poolReservedHigh = 0; // what the rank holds from the driver
    std::uint64_t deviceTotal = 0, deviceUsed = 0;        // cudaMemGetInfo (every process)
    std::uint64_t outsideLedger = 0; // used − every ShardScope pool's reserve
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
    std::array<std::uint64_t, kTierCount> tierPeaks{}; // each tier's maximum (ledger.peakTierBytes)
    ByteTable modelStates; // at the end of the first forward (StepResult::modelStates)
    comm::CommStats comm;  // the training steps' collectives, all of the rank's communicators
    std::vector<StepOverlap> overlap;      // per step: step, communication union and exposed time
    std::optional<DeviceMemory> device;    // CUDA ranks only
    std::uint64_t checkpointBytesRead = 0; // --resume: what this rank read of the checkpoint
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
    // predict::predictPeak(scenarioOf(config)), the dry run of one step: the caller computes it
    // once per run (predict links train, so train cannot call it).
    theory::PeakPrediction predicted;
    std::optional<report::ResumedFrom> resumedFrom; // --resume
    std::vector<report::SaveRecord> saves;          // --save
};

report::RunReport makeReport(const RunOutcome& outcome);
nlohmann::json buildReport(const RunOutcome& outcome); // report::toJson(makeReport(outcome))

// Each rank's Handshake configJson: toJson(config) + param_count, units [{name, params,
// padded}], theory {model_state_bytes, ddp_model_state_bytes, predicted_peak_bytes} (the last
// from the caller, as RunOutcome::predicted).
nlohmann::json handshakeJson(const RunConfig& config, const std::vector<plan::UnitLayout>& units,
                             std::uint64_t predictedPeakBytes);

// The run's files (report/files.h), for the worker.
using report::maxAbsDelta;
using report::readWeightsFile;
using report::writeTextFile;
using report::writeWeightsFile;

} // namespace shardscope::train
