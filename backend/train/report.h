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
// copied so that the report needs no CUDA): the report's own struct, sent as it is.
using DeviceMemory = report::DeviceMemory;

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
    // With --pp P > 1: each stage's (scenarioOf(config, s)); predicted is stage 0's.
    std::vector<theory::PeakPrediction> stagePredicted;
    std::optional<report::ResumedFrom> resumedFrom; // --resume
    std::vector<report::SaveRecord> saves;          // --save
    std::string gemmEngine; // CPU ranks: kernels::gemmEngine() (train links no kernels)
};

report::RunReport makeReport(const RunOutcome& outcome);
nlohmann::json buildReport(const RunOutcome& outcome); // report::toJson(makeReport(outcome))

// Each rank's Handshake configJson: toJson(config) + param_count, units [{name, params,
// padded}], theory {model_state_bytes, ddp_model_state_bytes, predicted_peak_bytes} (the last
// from the caller, as RunOutcome::predicted) and, with a pipeline and one prediction per stage
// (RunOutcome::stagePredicted), theory.stages: the same three per stage.
nlohmann::json handshakeJson(const RunConfig& config, const std::vector<plan::UnitLayout>& units,
                             std::uint64_t predictedPeakBytes,
                             const std::vector<theory::PeakPrediction>& stagePredicted = {});

// The run's files (report/files.h), for the worker.
using report::maxAbsDelta;
using report::readWeightsFile;
using report::writeTextFile;
using report::writeWeightsFile;

} // namespace shardscope::train
