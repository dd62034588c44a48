// Training throughput on CPU: tokens/s of forward + backward (and of a whole step) for the
// presets, and the fraction of that time spent inside GEMM (kernels::GemmTimer), which says how
// much a faster BLAS — or a GPU — could buy.
#include "core/event.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "kernels/cpu/gemm.h"
#include "model/data.h"
#include "runconfig/presets.h"
#include "train/trainer.h"

#include <benchmark/benchmark.h>
#include <memory>
#include <string>

namespace {

using namespace shardscope;

struct Rig {
    Rig(const std::string& preset, plan::PrecisionKind precision, bool checkpointing)
        : p(runconfig::modelPreset(preset)), cpu(ledger),
          data(p.shape.vocab, p.shape.seqLen, p.microBatch, 1) {
        train::TrainConfig cfg;
        cfg.model = {p.shape, p.microBatch, checkpointing};
        cfg.precision = precision;
        cfg.optimizer.learningRate = p.learningRate;
        trainer = std::make_unique<train::Trainer>(cfg, cpu, data);
    }
    runconfig::ModelPreset p;
    Ledger ledger;
    device::CpuDevice cpu;
    model::MarkovSource data;
    std::unique_ptr<train::Trainer> trainer;
};

// args: 0 = bf16, 1 = fp32; checkpointing 0/1; wholeStep 0 = forward+backward, 1 = + optimizer
void trainBench(benchmark::State& state, const std::string& preset) {
    const auto precision =
        state.range(0) == 0 ? plan::PrecisionKind::MixedBf16 : plan::PrecisionKind::Fp32;
    const bool checkpointing = state.range(1) != 0;
    const bool wholeStep = state.range(2) != 0;
    Rig rig(preset, precision, checkpointing);
    const model::Batch batch = rig.data.batchFor(0, 0, 1);
    rig.trainer->computeGradients(batch); // warm-up: first-touch page faults, BLAS thread start

    kernels::GemmTimer gemm;
    kernels::GemmTimer* previous = kernels::setGemmTimer(&gemm);
    std::uint64_t loopNs = 0;
    for (auto _ : state) {
        const std::uint64_t begin = monotonicNs();
        if (wholeStep)
            benchmark::DoNotOptimize(rig.trainer->step().loss);
        else
            benchmark::DoNotOptimize(rig.trainer->computeGradients(batch));
        loopNs += monotonicNs() - begin;
    }
    kernels::setGemmTimer(previous);

    const auto tokens = static_cast<double>(rig.trainer->model().tokensPerBatch());
    state.counters["tokens/s"] = benchmark::Counter(
        tokens * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["gemm_fraction"] = static_cast<double>(gemm.ns) / static_cast<double>(loopNs);
    state.counters["gemm_GFLOP/s"] = gemm.flops / static_cast<double>(gemm.ns);
    state.counters["params"] = static_cast<double>(rig.trainer->paramCount());
    state.counters["peak_MiB"] = static_cast<double>(rig.ledger.peakBytes()) / 1048576.0;
    state.SetLabel(std::string(precision == plan::PrecisionKind::MixedBf16 ? "bf16" : "fp32") +
                   (checkpointing ? " ckpt" : "") + (wholeStep ? " step" : " fwd+bwd"));
}

void smallBench(benchmark::State& s) {
    trainBench(s, "small");
}
void tinyBench(benchmark::State& s) {
    trainBench(s, "tiny");
}
void mediumBench(benchmark::State& s) {
    trainBench(s, "medium");
}

BENCHMARK(smallBench)
    ->ArgNames({"fp32", "ckpt", "step"})
    ->Args({0, 0, 0})
    ->Args({1, 0, 0})
    ->Args({0, 1, 0})
    ->Args({0, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(tinyBench)
    ->ArgNames({"fp32", "ckpt", "step"})
    ->Args({0, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(mediumBench)
    ->ArgNames({"fp32", "ckpt", "step"})
    ->Args({0, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

} // namespace

int main(int argc, char** argv) {
    shardscope::device::keepFreedHostMemory(); // as the worker
    // Which GEMM kernel OpenBLAS picked decides most of the figures: record it with them.
    benchmark::AddCustomContext("blas_core", shardscope::kernels::blasCoreName());
    benchmark::AddCustomContext("blas_threads", std::to_string(shardscope::kernels::blasThreads()));
    if (const std::string advice = shardscope::kernels::blasAdvice(); !advice.empty())
        benchmark::AddCustomContext("blas_advice", advice);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
