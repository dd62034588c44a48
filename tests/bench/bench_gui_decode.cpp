// GUI side of the event stream: how fast the decoder thread turns stream bytes into replayable
// steps (decode + merge ranks in time order + ledger snapshots). Goal: ≥ 1M events/s.
#include "replay/replay_model.h"
#include "replay/stream_assembler.h"
#include "synthetic_stream.h"

#include <benchmark/benchmark.h>

namespace {

using namespace shardscope;

// 64 ranks, 100 units, 4 steps: ~600k events in ~25 MB, the size of a long live run's burst.
const std::string& stream64() {
    static const std::string bytes = [] {
        testing::SyntheticRun run;
        run.ranks = 64;
        run.units = 100;
        run.steps = 4;
        return testing::syntheticStream(run);
    }();
    return bytes;
}

void BM_DecodeAndAssemble(benchmark::State& state) {
    const std::string& bytes = stream64();
    const auto chunk = static_cast<std::size_t>(state.range(0));
    std::uint64_t events = 0;
    for (auto _ : state) {
        protocol::StreamDecoder decoder;
        replay::StreamAssembler assembler;
        for (std::size_t at = 0; at < bytes.size(); at += chunk) {
            decoder.feed(std::string_view(bytes).substr(at, chunk));
            while (auto r = decoder.next())
                assembler.consume(std::move(*r));
        }
        const auto out = assembler.take();
        benchmark::DoNotOptimize(out.steps.data());
        events += assembler.eventsSeen();
    }
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes.size()) * state.iterations());
}
BENCHMARK(BM_DecodeAndAssemble)->Arg(64 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_DecodeOnly(benchmark::State& state) {
    const std::string& bytes = stream64();
    std::uint64_t events = 0;
    for (auto _ : state) {
        protocol::StreamDecoder decoder;
        decoder.feed(bytes);
        while (auto r = decoder.next())
            if (auto* b = std::get_if<protocol::EventBatch>(&*r)) events += b->events.size();
    }
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeOnly)->Unit(benchmark::kMillisecond);

// Random seeks over the 64-rank run: the cost of scrubbing (snapshot + at most one interval).
void BM_Seek(benchmark::State& state) {
    protocol::StreamDecoder decoder;
    replay::StreamAssembler assembler;
    decoder.feed(stream64());
    while (auto r = decoder.next())
        assembler.consume(std::move(*r));
    auto out = assembler.take();
    replay::ReplayModel model;
    model.reset(out.runInfo);
    model.append(out.steps);
    std::uint64_t k = 0;
    for (auto _ : state) {
        k = (k * 6364136223846793005ull + 1442695040888963407ull);
        benchmark::DoNotOptimize(model.stateAt(k % model.eventCount()));
    }
}
BENCHMARK(BM_Seek)->Unit(benchmark::kMicrosecond);

} // namespace
