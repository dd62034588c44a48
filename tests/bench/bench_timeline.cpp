// Timeline repaint with 10^6 events (4 ranks, ZeRO-3 steps built with the real protocol encoder
// and assembled as the GUI does) into a 1600×600 QImage at several zoom levels. Reports the
// frame time's p50 and p95 (goal: p95 ≤ 16 ms, one frame at 60 Hz) and the boxes drawn.
//   build-*/bin/shardscope_bench_timeline [--benchmark_filter=Paint]
#include "timeline/timeline_paint.h"
#include "timeline_test_recording.h"

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <memory>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

constexpr std::uint64_t kTargetEvents = 1000000;

struct Fixture {
    std::unique_ptr<ReplayModel> model;
    TimelineIndex index;
};

testrec::Spec spec(int steps) {
    testrec::Spec s;
    s.ranks = 4;
    s.units = 8;
    s.activationsPerUnit = 6;
    s.steps = steps;
    return s;
}

Fixture& fixture() {
    static Fixture f = [] {
        Fixture x;
        // Step 0 also allocates the model states: size a step from the second one.
        const auto one = testrec::loadModel(testrec::makeRecording(spec(1)))->eventCount();
        const auto perStep =
            testrec::loadModel(testrec::makeRecording(spec(2)))->eventCount() - one;
        const auto steps = static_cast<int>(1 + (kTargetEvents - one + perStep - 1) / perStep);
        x.model = testrec::loadModel(testrec::makeRecording(spec(steps)));
        x.index.update(*x.model);
        return x;
    }();
    return f;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

// Zoom level = the share of the run the window shows, centred on the middle of the run.
void BM_TimelinePaint(benchmark::State& state) {
    Fixture& f = fixture();
    const double share = 1.0 / static_cast<double>(state.range(0));
    const double end = static_cast<double>(f.index.endNs());
    const double centre = end / 2, half = end * share / 2;
    QImage image(1600, 600, QImage::Format_ARGB32_Premultiplied);
    TimelineScene scene;
    scene.index = &f.index;
    scene.model = f.model.get();
    scene.window = TimeWindow{centre - half, centre + half, 1};
    scene.playheadNs = static_cast<std::uint64_t>(centre);
    std::vector<double> ms;
    TimelinePaintStats stats;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        QPainter p(&image);
        stats = TimelinePainter::paint(p, image.rect(), scene);
        p.end();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        benchmark::DoNotOptimize(image.constBits());
    }
    state.counters["events"] = static_cast<double>(f.model->eventCount());
    state.counters["spans"] = static_cast<double>(f.index.spanCount());
    state.counters["boxes"] = static_cast<double>(stats.boxes);
    state.counters["p50_ms"] = percentile(ms, 0.50);
    state.counters["p95_ms"] = percentile(ms, 0.95);
    state.SetLabel("window = 1/" + std::to_string(state.range(0)) + " of the run");
}
// 1: the whole run (~800 steps); 80: ~10 steps; 800: ~one step; 80000: ~one unit's cycle.
BENCHMARK(BM_TimelinePaint)
    ->Arg(1)
    ->Arg(80)
    ->Arg(800)
    ->Arg(8000)
    ->Arg(80000)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

// The one-off cost of opening a recording: the span index over 10^6 events.
void BM_TimelineIndexBuild(benchmark::State& state) {
    Fixture& f = fixture();
    for (auto _ : state) {
        TimelineIndex index;
        index.update(*f.model);
        benchmark::DoNotOptimize(index.spanCount());
    }
    state.counters["events"] = static_cast<double>(f.model->eventCount());
}
BENCHMARK(BM_TimelineIndexBuild)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv); // fonts and palette for the painter
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
