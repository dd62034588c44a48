// ZeRO-Offload's costs as ratios measured in one run (no wall-clock thresholds anywhere):
//  - the CPU optimizer (offload/host_adamw.h): parameters/s on one thread and on all threads,
//    next to the plain scalar loop and to this machine's memory bandwidth (AdamW touches
//    26 bytes per parameter with bf16 gradients: p, m, v read and written, g read);
//  - step time of ZeRO-3 on one rank with the optimizer and params on the device, the optimizer
//    on the host, and both on the host;
//  - with a directory: the NVMe engine (offload/nvme_store.h, io_uring, O_DIRECT, 1 MiB blocks,
//    queue depth 8) writing and reading 256 MiB, next to dd oflag=direct / iflag=direct with the
//    same block size on the same file system; and ZeRO-3's step time on `small` at 2 and 4 rank
//    threads (shardscope-worker --shared-device) on the device, with optimizer and params on the
//    host, and with both on NVMe in that directory (three runs each, alternated; medians after
//    warm-up).
// Run: build/bin/shardscope_bench_offload [elements] [nvme-dir] (default 16 Mi parameters).
#include "comm/communicator.h"
#include "core/ledger.h"
#include "core/numeric.h"
#include "device/cpu_device.h"
#include "model/data.h"
#include "offload/host_adamw.h"
#include "offload/nvme_store.h"
#include "runconfig/presets.h"
#include "strategy/sharding.h"
#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

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
        const std::uint64_t chunk =
            (n + static_cast<std::uint64_t>(threads) - 1) / static_cast<std::uint64_t>(threads);
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const std::uint64_t lo = std::min(n, chunk * static_cast<std::uint64_t>(t));
                const std::uint64_t hi = std::min(n, lo + chunk);
                for (std::uint64_t i = lo; i < hi; ++i)
                    a[i] = a[i] * 0.999f + b[i];
            });
        for (auto& th : pool)
            th.join();
    });
    return 3.0 * sizeof(float) * static_cast<double>(n) / seconds; // a read, a written, b read
}

void adamwBench(std::uint64_t n) {
    std::vector<float> p(n, 0.5f), m(n, 0.0f), v(n, 0.0f);
    std::vector<Bf16> g(n, toBf16(0.01f));
    const AdamWScalars s = adamwScalars(1e-3, 0.9, 0.95, 1e-8, 0.1, 1, true, 1.0f);
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const double scalar = bestSeconds(
        3, [&] { offload::hostAdamWScalar(s, p.data(), g.data(), true, m.data(), v.data(), n); });
    const double one = bestSeconds(
        3, [&] { offload::hostAdamW(s, p.data(), g.data(), true, m.data(), v.data(), n, 1); });
    const double many = bestSeconds(
        3, [&] { offload::hostAdamW(s, p.data(), g.data(), true, m.data(), v.data(), n, all); });
    std::vector<float> a(n * 2, 1.0f), b(n * 2, 2.0f); // 24 B per parameter, close to AdamW's 26
    const double bw1 = bandwidthBytesPerSecond(a, b, 1);
    const double bwAll = bandwidthBytesPerSecond(a, b, all);
    const double touched = 26.0; // bytes per parameter
    std::printf("CPU AdamW over %llu parameters (bf16 grads, %d hardware threads)\n",
                static_cast<unsigned long long>(n), all);
    std::printf("  scalar loop        %8.1f M params/s\n", static_cast<double>(n) / scalar / 1e6);
    std::printf("  host AdamW, 1 thr  %8.1f M params/s   %.2fx the scalar loop, %.2f of 1-thread "
                "bandwidth\n",
                static_cast<double>(n) / one / 1e6, scalar / one,
                static_cast<double>(n) * touched / one / bw1);
    std::printf(
        "  host AdamW, %2d thr %8.1f M params/s   %.2fx one thread, %.2f of %d-thread bandwidth\n",
        all, static_cast<double>(n) / many / 1e6, one / many,
        static_cast<double>(n) * touched / many / bwAll, all);
    std::printf("  memory bandwidth   %8.2f GB/s (1 thread), %.2f GB/s (%d threads)\n", bw1 / 1e9,
                bwAll / 1e9, all);
}

// One rank of ZeRO-3 on the `small` preset with the given offload.
struct StepRig {
    explicit StepRig(const plan::Offload& offload)
        : preset(runconfig::modelPreset("small")), cpu(ledger),
          self(comm::makeSelfCommunicator(&cpu)),
          data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 1) {
        strategy::StrategyConfig sc;
        sc.strategy = plan::Strategy::Zero3;
        sc.shape = preset.shape;
        sc.offload = offload;
        sharding = strategy::makeSharding(sc, cpu, {self.get(), self.get(), nullptr});
        train::TrainConfig cfg;
        cfg.model = {preset.shape, preset.microBatch, false};
        trainer = std::make_unique<train::Trainer>(cfg, cpu, data, sharding.get());
    }
    runconfig::ModelPreset preset;
    Ledger ledger;
    device::CpuDevice cpu;
    std::unique_ptr<comm::Communicator> self;
    model::MarkovSource data;
    std::unique_ptr<strategy::Sharding> sharding;
    std::unique_ptr<train::Trainer> trainer;
    std::vector<double> seconds;
};

void stepBench() {
    const int steps = 7;
    // Interleaved, step by step, so that load on the machine falls on all three alike.
    StepRig device({}), optimizer({Tier::Host, Tier::Device}), both({Tier::Host, Tier::Host});
    for (int k = 0; k < steps; ++k)
        for (StepRig* r : {&device, &optimizer, &both})
            r->seconds.push_back(static_cast<double>(r->trainer->step().stepNs) / 1e9);
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double d = median(device.seconds), o = median(optimizer.seconds),
                 b = median(both.seconds);
    std::printf("ZeRO-3 step time, model small, one rank (median of %d interleaved steps)\n",
                steps);
    std::printf("  device             %8.2f ms\n", d * 1e3);
    std::printf("  optimizer on host  %8.2f ms   %.3fx the device run\n", o * 1e3, o / d);
    std::printf("  + params on host   %8.2f ms   %.3fx the device run\n", b * 1e3, b / d);
}

// Seconds of a shell command (dd), or a negative number when it failed.
double commandSeconds(const std::string& cmd) {
    const auto t0 = Clock::now();
    if (std::system(cmd.c_str()) != 0) return -1.0;
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void nvmeBench(const std::string& dir) {
    const std::uint64_t bytes = 256ull << 20;
    offload::NvmeStore store({dir, false, 1 << 20, 8}, 0);
    const std::uint64_t at = store.reserve(bytes);
    std::unique_ptr<void, decltype(&std::free)> buffer(std::aligned_alloc(offload::kAlign, bytes),
                                                       &std::free);
    std::memset(buffer.get(), 0x5a, bytes);
    store.write(at, buffer.get(), bytes); // allocate the blocks once
    const double write = bestSeconds(3, [&] { store.write(at, buffer.get(), bytes); });
    const double read = bestSeconds(3, [&] { store.read(at, buffer.get(), bytes); });
    const std::string file = dir + "/shardscope-bench-dd.bin";
    const std::string count = std::to_string(bytes >> 20);
    const std::string ddWrite = "dd if=/dev/zero of=" + file + " bs=1M count=" + count +
                                " oflag=direct conv=notrunc status=none";
    const std::string ddRead =
        "dd if=" + file + " of=/dev/null bs=1M count=" + count + " iflag=direct status=none";
    commandSeconds(ddWrite);
    double dw = 1e30, dr = 1e30;
    for (int r = 0; r < 3; ++r) {
        dw = std::min(dw, commandSeconds(ddWrite));
        dr = std::min(dr, commandSeconds(ddRead));
    }
    std::remove(file.c_str());
    const double gb = static_cast<double>(bytes) / 1e9;
    std::printf("NVMe tier, 256 MiB in %s (%s), 1 MiB blocks\n", dir.c_str(),
                store.direct() ? "O_DIRECT" : "buffered");
    if (dw <= 0 || dr <= 0) {
        std::printf("  dd with O_DIRECT failed here: no baseline\n");
        dw = dr = 1e30;
    }
    std::printf("  write: engine QD 8 %.2f GB/s, dd oflag=direct QD 1 %.2f GB/s: %.2fx\n",
                gb / write, gb / dw, dw / write);
    std::printf("  read:  engine QD 8 %.2f GB/s, dd iflag=direct QD 1 %.2f GB/s: %.2fx\n",
                gb / read, gb / dr, dr / read);
}

// Step times (ms) after the first of one worker run, or none when it failed; `exposed` gets
// the run's exposed-transfer fraction (the report's, from the ranks' transfer spans).
std::vector<double> workerStepMs(int ranks, const std::string& offload, const std::string& dir,
                                 std::vector<double>& exposed) {
    const std::string report = dir + "/shardscope-bench-report.json";
    const std::string cmd = std::string(SHARDSCOPE_WORKER) + " --shared-device --ranks " +
                            std::to_string(ranks) +
                            " --model small --strategy zero3 --steps 4 --no-events --json " +
                            report + " " + offload + " >/dev/null 2>&1";
    std::vector<double> out;
    if (std::system(cmd.c_str()) != 0) return out;
    std::FILE* f = std::fopen(report.c_str(), "rb");
    if (!f) return out;
    const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    std::fclose(f);
    std::remove(report.c_str());
    if (!j.is_object() || !j.contains("step_ms") || !j["step_ms"].is_array()) return out;
    for (std::size_t k = 1; k < j["step_ms"].size(); ++k)
        out.push_back(j["step_ms"][k].get<double>());
    if (j.contains("exposed_transfer_fraction") && j["exposed_transfer_fraction"].is_number())
        exposed.push_back(j["exposed_transfer_fraction"].get<double>());
    return out;
}

void rankStepBench(const std::string& dir) {
    struct Case {
        const char* name;
        std::string flags;
        std::vector<double> ms;
        std::vector<double> exposed;
    };
    for (int ranks : {2, 4}) {
        std::vector<Case> cases = {
            {"device", "", {}, {}},
            {"optimizer + params on host",
             "--offload-optimizer host --offload-params host",
             {},
             {}},
            {"optimizer + params on NVMe",
             "--offload-optimizer nvme --offload-params nvme --nvme-dir " + dir,
             {},
             {}}};
        for (int round = 0; round < 3;
             ++round) // alternated, so that load on the machine falls on all alike
            for (Case& c : cases) {
                const std::vector<double> ms = workerStepMs(ranks, c.flags, dir, c.exposed);
                c.ms.insert(c.ms.end(), ms.begin(), ms.end());
            }
        std::printf("ZeRO-3 step time, model small, %d rank threads (median of steps 2-4 of three "
                    "runs each)\n",
                    ranks);
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v.empty() ? -1.0 : v[v.size() / 2];
        };
        const double d = median(cases[0].ms);
        for (const Case& c : cases) {
            const double m = median(c.ms);
            if (m < 0)
                std::printf("  %-28s failed (run the worker with these flags to see why)\n",
                            c.name);
            else
                std::printf(
                    "  %-28s %9.2f ms   %.3fx the device run   exposed transfers %.3f of a step\n",
                    c.name, m, d > 0 ? m / d : 0.0, median(c.exposed));
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    std::uint64_t n = 16ull << 20;
    if (argc > 1) {
        char* end = nullptr;
        n = std::strtoull(argv[1], &end, 10);
        if (!end || *end != '\0' || n < 1024 || n > (1ull << 31)) {
            std::fprintf(stderr,
                         "shardscope_bench_offload: elements must be 1024 … 2^31, got '%s'\n",
                         argv[1]);
            return 2;
        }
    }
    adamwBench(n);
    stepBench();
    if (argc > 2) {
        nvmeBench(argv[2]);
        rankStepBench(argv[2]);
    }
    return 0;
}
