#pragma once
// A pipelined run's lines in the report (train/report.cpp's makeReport calls them): one line per
// stage against its own theory, and the bubble each stage measured beside its schedule's.
#include "theory/estimate.h"
#include "train/report.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::train {

std::string mib(double bytes); // "12.709 MiB"

void pipelineNotes(const RunConfig& c, const std::vector<theory::ModelStates>& states,
                   const std::vector<theory::PeakPrediction>& predicted,
                   const std::vector<std::uint64_t>& measuredPeak, std::vector<std::string>& notes);
void bubbleNotes(const RunConfig& c, const std::vector<RankResult>& ranks,
                 std::vector<std::string>& notes);

} // namespace shardscope::train
