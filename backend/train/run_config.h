#pragma once
// The engine's view of a run configuration (runconfig/run_config.h): the trainer's, the
// strategy's and the data source's settings for a RunConfig. The configuration itself — flags,
// limits, validation, presets — lives in the light runconfig library the CLI and GUI share;
// its names are brought into train:: for the worker and the engine's tests.
#include "model/data.h"
#include "runconfig/run_config.h"
#include "strategy/sharding.h"
#include "train/trainer.h"

#include <memory>

namespace shardscope::train {

using runconfig::Backend;
using runconfig::backendName;
using runconfig::parseRunConfig;
using runconfig::RunConfig;
using runconfig::scenarioOf;
using runconfig::toJson;
using runconfig::toWorkerArgs;

TrainConfig trainConfigOf(const RunConfig& config);
// `stage`: the rank's pipeline stage (0 without --pp), whose units the strategy holds.
strategy::StrategyConfig strategyConfigOf(const RunConfig& config, int stage = 0);
std::unique_ptr<model::DataSource> makeDataSource(const RunConfig& config);

} // namespace shardscope::train
