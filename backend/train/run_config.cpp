#include "train/run_config.h"

namespace shardscope::train {

TrainConfig trainConfigOf(const RunConfig& c) {
    TrainConfig t;
    t.model = {c.preset.shape, c.preset.microBatch, c.checkpointing};
    t.model.shape.tp = c.tensorParallel;
    t.precision = c.precision;
    t.optimizer.learningRate = c.preset.learningRate;
    t.seed = c.seed;
    t.gradAccumSteps = c.knobs.gradAccumSteps;
    t.bf16Gemm = scenarioOf(c).knobs.bf16Gemm;
    t.pipeSchedule = c.pipeSchedule;
    t.virtualStages = c.pipeParallel > 1 ? c.virtualStages : 1;
    return t;
}

strategy::StrategyConfig strategyConfigOf(const RunConfig& c, int stage) {
    strategy::StrategyConfig s;
    s.strategy = c.strategy;
    s.knobs = scenarioOf(c).knobs;
    s.precision = c.precision;
    s.shape = c.preset.shape;
    s.shape.tp = c.tensorParallel;
    s.seed = c.seed;
    s.offload = c.offload;
    s.nvme = {c.nvmeDir, c.keepNvme, c.aioBlockBytes, static_cast<int>(c.aioQueueDepth)};
    if (c.pipeParallel > 1) {
        const plan::StageUnits units = scenarioOf(c, stage).stageUnits(); // the chunks' span
        s.firstUnit = units.first;
        s.endUnit = units.end;
        s.virtualStages = c.virtualStages;
    }
    return s;
}

std::unique_ptr<model::DataSource> makeDataSource(const RunConfig& c) {
    const auto& shape = c.preset.shape;
    if (c.dataFile)
        return std::make_unique<model::ByteFileSource>(*c.dataFile, shape.seqLen,
                                                       c.preset.microBatch, c.seed);
    return std::make_unique<model::MarkovSource>(shape.vocab, shape.seqLen, c.preset.microBatch,
                                                 c.seed);
}

} // namespace shardscope::train
