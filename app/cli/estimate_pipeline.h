#pragma once
// estimate --pp P: a GPT shape split into pipeline stages, each schedule's bubble and the
// activations each stage holds (theory/pipeline.h), beside the per-rank rows, which become the
// rows of the stage with the most parameters.
#include "args.h"
#include "plan/pipeline.h"
#include "theory/estimate.h"
#include "theory/pipeline.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::cli {

struct PipelineSchedule {
    plan::PipeSchedule kind;
    int virtualStages = 1;
    double bubble = 0; // theory (ZB-H1: at equal F, B and W)
    std::vector<theory::PipeStageActivations> stages;
};

struct PipelineEstimate {
    plan::GptShape gpt; // one TP slice
    int stages = 1, dataRanks = 1, microBatches = 1;
    std::int64_t microBatch = 1;
    std::vector<theory::PipeStage> split; // splitChunks chunks per rank
    int splitChunks = 1;                  // V where interleaved is the one schedule, else 1
    int rowsStage = 0;                    // the stage the per-rank rows describe (P > 1)
    std::string rowsNote;                 // what those rows hold and leave out (P > 1)
    std::vector<PipelineSchedule> schedules;
    std::vector<std::string> notes; // schedules left out, and why
};

// Reads --pp, --micro-batches, --pp-schedule and --virtual-stages (each refused without --pp,
// as one line naming the flag). With --pp: `s` (after --tp) becomes the rows' stage: its units
// over the data-parallel ranks (--ranks / (P·T)), no shape (its peak is the closed form).
std::optional<PipelineEstimate> pipelineFlags(const Args& args, theory::Scenario& s);

nlohmann::json pipelineJson(const PipelineEstimate& p);
void printPipeline(const PipelineEstimate& p);

} // namespace shardscope::cli
