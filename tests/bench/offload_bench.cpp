// ZeRO-Offload's costs as ratios measured in one run (no wall-clock thresholds anywhere):
//  - the CPU optimizer (offload/host_adamw.h): parameters/s on one thread and on all threads,
//    next to the plain scalar loop and to this machine's memory bandwidth (AdamW touches
//    26 bytes per parameter with bf16 gradients: p, m, v read and written, g read);
//  - step time of ZeRO-3 on one rank with the optimizer and params on the device, the optimizer
//    on the host, and both on the host.
// Run: build/bin/shardscope_bench_offload [elements] (default 16 Mi parameters).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "core/ledger.h"
#include "core/numeric.h"
#include "device/cpu_device.h"
#include "model/data.h"
#include "offload/host_adamw.h"
#include "runconfig/presets.h"
#include "strategy/sharding.h"
#include "train/trainer.h"

namespace {

using namespace shardscope;
using Clock = std::chrono::steady_clock;

template <class F> double bestSeconds(int repeats, F&& f) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

// Read + write bandwidth of a multi-threaded a[i] = a[i]·s + b[i] over the same bytes AdamW
// touches (what a bandwidth-bound update can hope for).
double bandwidthBytesPerSecond(std::vector<float>& a, const std::vector<float>& b, int threads) {
    const std::uint64_t n = a.size();
    const double seconds = bestSeconds(5, [&] {
        std::vector<std::thread> pool;
        const std::uint64_t chunk = (n + static_cast<std::uint64_t>(threads) - 1) / static_cast<std::uint64_t>(threads);
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const std::uint64_t lo = std::min(n, chunk * static_cast<std::uint64_t>(t));
                const std::uint64_t hi = std::min(n, lo + chunk);
                for (std::uint64_t i = lo; i < hi; ++i) a[i] = a[i] * 0.999f + b[i];
            });
        for (auto& th : pool) th.join();
    });
    return 3.0 * sizeof(float) * static_cast<double>(n) / seconds; // a read, a written, b read
}

void adamwBench(std::uint64_t n) {
    std::vector<float> p(n, 0.5f), m(n, 0.0f), v(n, 0.0f);
    std::vector<Bf16> g(n, toBf16(0.01f));
    const AdamWScalars s = adamwScalars(1e-3, 0.9, 0.95, 1e-8, 0.1, 1, true, 1.0f);
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const double scalar = bestSeconds(3, [&] { offload::hostAdamWScalar(s, p.data(), g.data(), true, m.data(), v.data(), n); });
    const double one = bestSeconds(3, [&] { offload::hostAdamW(s, p.data(), g.data(), true, m.data(), v.data(), n, 1); });
    const double many = bestSeconds(3, [&] { offload::hostAdamW(s, p.data(), g.data(), true, m.data(), v.data(), n, all); });
    std::vector<float> a(n * 2, 1.0f), b(n * 2, 2.0f); // 24 B per parameter, close to AdamW's 26
    const double bw1 = bandwidthBytesPerSecond(a, b, 1);
    const double bwAll = bandwidthBytesPerSecond(a, b, all);
    const double touched = 26.0; // bytes per parameter
    std::printf("CPU AdamW over %llu parameters (bf16 grads, %d hardware threads)\n",
                static_cast<unsigned long long>(n), all);
    std::printf("  scalar loop        %8.1f M params/s\n", static_cast<double>(n) / scalar / 1e6);
    std::printf("  host AdamW, 1 thr  %8.1f M params/s   %.2fx the scalar loop, %.2f of 1-thread bandwidth\n",
                static_cast<double>(n) / one / 1e6, scalar / one, static_cast<double>(n) * touched / one / bw1);
    std::printf("  host AdamW, %2d thr %8.1f M params/s   %.2fx one thread, %.2f of %d-thread bandwidth\n", all,
                static_cast<double>(n) / many / 1e6, one / many, static_cast<double>(n) * touched / many / bwAll, all);
    std::printf("  memory bandwidth   %8.2f GB/s (1 thread), %.2f GB/s (%d threads)\n", bw1 / 1e9, bwAll / 1e9, all);
}

double medianStepSeconds(const plan::Offload& offload, int steps) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("small");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    auto self = comm::makeSelfCommunicator(&cpu);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 1);
    strategy::StrategyConfig sc;
    sc.strategy = plan::Strategy::Zero3;
    sc.shape = preset.shape;
    sc.offload = offload;
    auto sharding = strategy::makeSharding(sc, cpu, {self.get(), self.get(), nullptr});
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    train::Trainer trainer(cfg, cpu, data, sharding.get());
    std::vector<double> times;
    for (int k = 0; k < steps; ++k) times.push_back(static_cast<double>(trainer.step().stepNs) / 1e9);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

void stepBench() {
    const int steps = 7;
    const double device = medianStepSeconds({}, steps);
    const double optimizer = medianStepSeconds({Tier::Host, Tier::Device}, steps);
    const double both = medianStepSeconds({Tier::Host, Tier::Host}, steps);
    std::printf("ZeRO-3 step time, model small, one rank (median of %d steps)\n", steps);
    std::printf("  device             %8.2f ms\n", device * 1e3);
    std::printf("  optimizer on host  %8.2f ms   %.3fx the device run\n", optimizer * 1e3, optimizer / device);
    std::printf("  + params on host   %8.2f ms   %.3fx the device run\n", both * 1e3, both / device);
}

} // namespace

int main(int argc, char** argv) {
    std::uint64_t n = 16ull << 20;
    if (argc > 1) {
        char* end = nullptr;
        n = std::strtoull(argv[1], &end, 10);
        if (!end || *end != '\0' || n < 1024 || n > (1ull << 31)) {
            std::fprintf(stderr, "shardscope_bench_offload: elements must be 1024 … 2^31, got '%s'\n", argv[1]);
            return 2;
        }
    }
    adamwBench(n);
    stepBench();
    return 0;
}
