// Frame time of the rank view with 64 ranks, rendered offscreen: each frame moves the replay
// cursor as playback does (a few hundred events), hands the state to the view and paints it.
// Reports p50 / p95 over the frames; goal p95 ≤ 16 ms (60 fps).
#include "ranks/rank_ledger_view.h"
#include "replay/replay_model.h"
#include "replay/stream_assembler.h"
#include "synthetic_stream.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <algorithm>
#include <benchmark/benchmark.h>

namespace {

using namespace shardscope;

void BM_RankViewFrame64(benchmark::State& state) {
    testing::SyntheticRun run;
    run.ranks = 64;
    run.units = 24;
    run.steps = 3;
    protocol::StreamDecoder decoder;
    replay::StreamAssembler assembler;
    decoder.feed(testing::syntheticStream(run));
    while (auto r = decoder.next())
        assembler.consume(std::move(*r));
    auto out = assembler.take();
    replay::ReplayModel model;
    model.reset(out.runInfo);
    model.append(out.steps);
    replay::ReplayCursor cursor(model);
    cursor.reset();
    widgets::RankLedgerView view;
    view.resize(1000, 450);
    view.setRunInfo(out.runInfo);
    view.setScaleBytes(model.steps().back()->endState[0].peakTotal * 11 / 10);
    QImage frame(view.size(), QImage::Format_ARGB32_Premultiplied);
    const std::uint64_t stride = std::max<std::uint64_t>(1, model.eventCount() / 600);
    std::vector<double> ms;
    std::uint64_t k = 0;
    for (auto _ : state) {
        QElapsedTimer t;
        t.start();
        k = (k + stride) % (model.eventCount() + 1);
        cursor.moveTo(k);
        view.setState(cursor.state());
        view.settle();
        view.render(&frame);
        ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    state.counters["p50_ms"] = ms[ms.size() / 2];
    state.counters["p95_ms"] = ms[std::min(ms.size() - 1, ms.size() * 95 / 100)];
    state.counters["events"] = static_cast<double>(model.eventCount());
}
BENCHMARK(BM_RankViewFrame64)->Unit(benchmark::kMillisecond)->Iterations(600);

} // namespace

int main(int argc, char** argv) {
    // Offscreen: the benchmark measures painting, not a display server.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
