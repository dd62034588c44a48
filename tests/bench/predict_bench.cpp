// The dry run at the Calculator's scale: one step of a GPT-7B shape (32 layers, d = 4096) on N
// ranks for each strategy, on a CountingDevice (no memory allocated). Time per prediction.
#include "predict/predict.h"
#include "theory/estimate.h"

#include <benchmark/benchmark.h>

namespace {

using namespace shardscope;

void dryRun7B(benchmark::State& state) {
    theory::Scenario s;
    s.shape = plan::GptShape{32, 4096, 32, 50257, 2048};
    s.strategy = static_cast<plan::Strategy>(state.range(0));
    s.ranks = static_cast<int>(state.range(1));
    if (s.strategy == plan::Strategy::FsdpHybridShard) s.knobs.hybridGroupSize = 8;
    if (s.strategy == plan::Strategy::FsdpShardGradOp) s.knobs.reshardAfterForward = false;
    for (auto _ : state)
        benchmark::DoNotOptimize(predict::predictStep(s).peakBytes);
    state.SetLabel(std::string(plan::strategyName(s.strategy)));
}

void strategiesAndRanks(benchmark::internal::Benchmark* b) {
    for (plan::Strategy s : plan::allStrategies())
        for (int n : {8, 64, 512})
            b->Args({static_cast<long>(s), n});
}

BENCHMARK(dryRun7B)->Apply(strategiesAndRanks)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
