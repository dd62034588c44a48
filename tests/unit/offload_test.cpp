// ZeRO-Offload in one process: the CPU optimizer is bitwise the device update whatever its
// thread count, the host tier is outside the device budget (--capacity), an offloaded run equals
// the same run on the device bit for bit with every tier's bytes equal to the theory, the
// capacity where ZeRO-3 runs out of device memory fits with offload, and what cannot run is
// refused with one line. (Several ranks, MPI and rank threads: tests/mpi/offload_worker_test.cpp.)
#include "comm/communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "kernels/cpu/adamw.h"
#include "model/data.h"
#include "offload/host_adamw.h"
#include "offload/nvme_store.h"
#include "plan/policy.h"
#include "predict/predict.h"
#include "runconfig/presets.h"
#include "runconfig/problems.h"
#include "runconfig/run_config.h"
#include "strategy/sharding.h"
#include "theory/estimate.h"
#include "train/trainer.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace shardscope {
namespace {

using plan::Strategy;

// ---- the CPU optimizer ------------------------------------------------------------------------

struct AdamState {
    std::vector<float> p, m, v;
};

AdamState randomState(std::uint64_t n, std::mt19937& rng) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    AdamState s{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
    for (std::uint64_t i = 0; i < n; ++i) {
        s.p[i] = d(rng);
        s.m[i] = 0.1f * d(rng);
        s.v[i] = 0.01f * std::abs(d(rng));
    }
    return s;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(offloadHostAdamW, IsBitwiseTheDeviceUpdateForEveryThreadCountAndGradType) {
    std::mt19937 rng(7);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (std::uint64_t n : {1ull, 15ull, 17ull, 1000ull, 70001ull, 200003ull}) {
        std::vector<float> g32(n);
        std::vector<Bf16> g16(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            g32[i] = d(rng);
            g16[i] = toBf16(d(rng));
        }
        const AdamState start = randomState(n, rng);
        for (bool bf16 : {true, false}) {
            const void* g =
                bf16 ? static_cast<const void*>(g16.data()) : static_cast<const void*>(g32.data());
            AdamState device = start;
            for (std::int64_t step = 1; step <= 3; ++step) {
                const AdamWScalars s =
                    adamwScalars(1e-3, 0.9, 0.95, 1e-8, 0.1, step, step != 2, 0.37f);
                if (bf16)
                    kernels::adamwUpdate(s, device.p.data(), g16.data(), device.m.data(),
                                         device.v.data(), n);
                else
                    kernels::adamwUpdate(s, device.p.data(), g32.data(), device.m.data(),
                                         device.v.data(), n);
            }
            for (int threads : {0, 1, 2, 3, 8}) {
                AdamState host = start;
                for (std::int64_t step = 1; step <= 3; ++step) {
                    const AdamWScalars s =
                        adamwScalars(1e-3, 0.9, 0.95, 1e-8, 0.1, step, step != 2, 0.37f);
                    offload::hostAdamW(s, host.p.data(), g, bf16, host.m.data(), host.v.data(), n,
                                       threads);
                }
                EXPECT_TRUE(sameBits(host.p, device.p))
                    << "n " << n << " threads " << threads << " bf16 " << bf16;
                EXPECT_TRUE(sameBits(host.m, device.m)) << "n " << n << " threads " << threads;
                EXPECT_TRUE(sameBits(host.v, device.v)) << "n " << n << " threads " << threads;
            }
            AdamState scalar = start;
            for (std::int64_t step = 1; step <= 3; ++step) {
                const AdamWScalars s =
                    adamwScalars(1e-3, 0.9, 0.95, 1e-8, 0.1, step, step != 2, 0.37f);
                offload::hostAdamWScalar(s, scalar.p.data(), g, bf16, scalar.m.data(),
                                         scalar.v.data(), n);
            }
            EXPECT_TRUE(sameBits(scalar.p, device.p)) << "scalar loop, n " << n;
        }
    }
}

TEST(offloadHostAdamW, ThreadsFollowTheWork) {
    EXPECT_EQ(offload::hostThreads(10), 1);
    EXPECT_EQ(offload::hostThreads(offload::kMinElementsPerThread * 2 - 1, 64), 1);
    EXPECT_LE(offload::hostThreads(offload::kMinElementsPerThread * 3, 2), 2);
    EXPECT_GE(offload::hostThreads(offload::kMinElementsPerThread * 1000), 1);
}

// ---- the host tier ----------------------------------------------------------------------------

TEST(offloadDevice, HostTierBuffersAreOutsideTheDeviceCapacity) {
    Ledger ledger;
    ledger.setCapacity(Tier::Device, 4096);
    device::CpuDevice cpu(ledger);
    device::Buffer host = cpu.allocate(1 << 20, {Category::AdamM, Tier::Host, 0}, true);
    ASSERT_FALSE(host.empty());
    const auto* bytes = host.ptr<const unsigned char>();
    EXPECT_EQ(bytes[0], 0);
    EXPECT_EQ(bytes[(1 << 20) - 1], 0); // zeroed: it is memory
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(host.data()) % 4096,
              0u); // page-aligned (O_DIRECT, DMA)
    EXPECT_EQ(ledger.liveTierBytes(Tier::Host), 1u << 20);
    EXPECT_EQ(ledger.liveTierBytes(Tier::Device), 0u);
    device::Buffer fits = cpu.allocate(4096, {Category::ParamShard, Tier::Device, 0});
    EXPECT_THROW(cpu.allocate(1, {Category::Workspace, Tier::Device, 0}), Error);
    EXPECT_THROW(cpu.allocate(1, {Category::AdamV, Tier::Nvme, 0}), Error); // files, not buffers
    host.reset();
    EXPECT_EQ(ledger.liveTierBytes(Tier::Host), 0u);
    EXPECT_EQ(ledger.peakTierBytes(Tier::Host), 1u << 20);
}

// ---- one rank: parity, tiers, capacity ----------------------------------------------------------

struct OneRun {
    std::vector<double> losses;
    std::uint64_t digest = 0;
    ByteTable states;
    std::array<std::uint64_t, kTierCount> tierPeaks{};
};

theory::Scenario scenarioFor(Strategy s, plan::Offload offload) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    theory::Scenario scenario;
    scenario.shape = preset.shape;
    scenario.strategy = s;
    scenario.ranks = 1;
    scenario.offload = offload;
    scenario.activations = {preset.microBatch, false};
    if (s == Strategy::FsdpShardGradOp) scenario.knobs.reshardAfterForward = false;
    if (s == Strategy::FsdpHybridShard) scenario.knobs.hybridGroupSize = 1;
    return scenario;
}

OneRun runOneRank(Strategy s, plan::Offload offload,
                  std::optional<std::uint64_t> capacity = std::nullopt, int gradAccum = 1,
                  const offload::NvmeOptions& nvme = {}) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    ledger.setCapacity(Tier::Device, capacity);
    device::CpuDevice cpu(ledger);
    auto self = comm::makeSelfCommunicator(&cpu);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 2);
    strategy::StrategyConfig sc;
    sc.strategy = s;
    sc.knobs = scenarioFor(s, offload).knobs;
    sc.knobs.gradAccumSteps = gradAccum;
    sc.shape = preset.shape;
    sc.seed = 2;
    sc.offload = offload;
    sc.nvme = nvme;
    auto sharding = strategy::makeSharding(
        sc, cpu, {self.get(), self.get(), s == Strategy::FsdpHybridShard ? self.get() : nullptr});
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    cfg.optimizer.learningRate = preset.learningRate;
    cfg.seed = 2;
    cfg.gradAccumSteps = gradAccum;
    train::Trainer trainer(cfg, cpu, data, sharding.get());
    OneRun out;
    for (int k = 0; k < 2; ++k) {
        const auto r = trainer.step();
        if (k == 0) out.states = r.modelStates;
        out.losses.push_back(r.loss);
    }
    for (Tier t : kAllTiers)
        out.tierPeaks[index(t)] = ledger.peakTierBytes(t);
    out.digest = trainer.paramDigest();
    return out;
}

TEST(offloadOneRank, EveryOffloadEqualsTheDeviceRunBitwiseAndEveryTierTheTheory) {
    const plan::Offload optimizer{Tier::Host, Tier::Device};
    const plan::Offload params{Tier::Device, Tier::Host};
    const plan::Offload both{Tier::Host, Tier::Host};
    for (Strategy s : plan::allStrategies()) {
        if (s == Strategy::Ddp) continue;
        const bool shardsParams = plan::policyFor(s).shardParams;
        for (int accum : {2}) { // micro-step 0 assigns, micro-step 1 accumulates: both paths
            const OneRun device = runOneRank(s, {}, std::nullopt, accum);
            for (const plan::Offload& o : {optimizer, params, both}) {
                if (o.param != Tier::Device && !shardsParams) continue;
                const std::string what = std::string(plan::strategyName(s)) + " optimizer " +
                                         std::string(tierName(o.optimizer)) + " params " +
                                         std::string(tierName(o.param)) + " accum " +
                                         std::to_string(accum);
                const OneRun r = runOneRank(s, o, std::nullopt, accum);
                EXPECT_EQ(r.losses, device.losses) << what;
                EXPECT_EQ(r.digest, device.digest) << what;
                theory::Scenario scenario = scenarioFor(s, o);
                scenario.knobs.gradAccumSteps = accum;
                EXPECT_EQ(r.states, theory::modelStates(scenario).perRank) << what;
                EXPECT_GT(r.states.tier(Tier::Host), 0u) << what;
                const theory::PeakPrediction predicted = predict::predictPeak(scenario);
                for (Tier t : kAllTiers)
                    EXPECT_EQ(r.tierPeaks[index(t)], predicted.tierPeaks[index(t)])
                        << what << " " << tierName(t);
                EXPECT_LT(r.tierPeaks[index(Tier::Device)], device.tierPeaks[index(Tier::Device)])
                    << what;
            }
        }
    }
}

TEST(offloadOneRank, WhereZero3RunsOutOfDeviceMemoryOffloadFits) {
    const plan::Offload both{Tier::Host, Tier::Host};
    const std::uint64_t offloadedPeak =
        predict::predictPeak(scenarioFor(Strategy::Zero3, both)).peakBytes;
    const std::uint64_t devicePeak =
        predict::predictPeak(scenarioFor(Strategy::Zero3, {})).peakBytes;
    ASSERT_LT(offloadedPeak, devicePeak);
    try {
        runOneRank(Strategy::Zero3, {}, offloadedPeak);
        ADD_FAILURE() << "ZeRO-3 on the device fit in " << offloadedPeak << " bytes";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
    }
    const OneRun fits = runOneRank(Strategy::Zero3, both, offloadedPeak);
    EXPECT_EQ(fits.digest, runOneRank(Strategy::Zero3, {}).digest);
    EXPECT_EQ(fits.tierPeaks[index(Tier::Device)], offloadedPeak);
}

TEST(offloadStrategy, RefusesWhatItCannotRun) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    auto self = comm::makeSelfCommunicator(&cpu);
    auto make = [&](Strategy s, plan::Offload o,
                    plan::PrecisionKind p = plan::PrecisionKind::MixedBf16) {
        strategy::StrategyConfig sc;
        sc.strategy = s;
        sc.shape = preset.shape;
        sc.precision = p;
        sc.offload = o;
        return strategy::makeSharding(sc, cpu, {self.get(), self.get(), nullptr});
    };
    EXPECT_THROW(make(Strategy::Ddp, {Tier::Host, Tier::Device}), Error);
    EXPECT_THROW(make(Strategy::Zero2, {Tier::Device, Tier::Host}), Error);
    EXPECT_THROW(make(Strategy::Zero3, {Tier::Host, Tier::Device}, plan::PrecisionKind::Fp32),
                 Error);
    EXPECT_THROW(make(Strategy::Zero3, {Tier::Device, Tier::Nvme}), Error); // no --nvme-dir
    EXPECT_THROW(make(Strategy::Zero2, {Tier::Device, Tier::Nvme}),
                 Error); // ZeRO-2 has no param shards
    EXPECT_THROW(make(Strategy::Zero3, {Tier::Nvme, Tier::Device}), Error); // no --nvme-dir
    EXPECT_EQ(ledger.liveBytes(), 0u); // nothing half-allocated
}

// ---- the NVMe tier ---------------------------------------------------------------------------

namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("ss-nvme-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

struct Aligned {
    explicit Aligned(std::uint64_t bytes)
        : data(static_cast<unsigned char*>(std::aligned_alloc(offload::kAlign, bytes))),
          size(bytes) {}
    ~Aligned() { std::free(data); }
    unsigned char* data;
    std::uint64_t size;
};

TEST(offloadNvme, WritesAndReadsBackThroughSmallBlocksAndRemovesItsFile) {
    TempDir dir;
    std::string path;
    {
        offload::NvmeStore store({dir.path.string(), false, 8192, 3}, 5);
        path = store.path();
        EXPECT_TRUE(fs::exists(path));
        EXPECT_NE(path.find("rank5"), std::string::npos);
        const std::uint64_t a = store.reserve(5000), b = store.reserve(100000);
        EXPECT_EQ(a, 0u);
        EXPECT_EQ(b, offload::alignedBytes(5000));
        Aligned one(offload::alignedBytes(5000)), two(offload::alignedBytes(100000)),
            back(offload::alignedBytes(100000));
        for (std::uint64_t i = 0; i < one.size; ++i)
            one.data[i] = static_cast<unsigned char>(i * 7);
        for (std::uint64_t i = 0; i < two.size; ++i)
            two.data[i] = static_cast<unsigned char>(i * 13 + 1);
        store.write(a, one.data, 5000);
        store.write(b, two.data, 100000); // 13 blocks of 8 KiB, 3 in flight
        store.read(b, back.data, 100000);
        EXPECT_EQ(std::memcmp(back.data, two.data, two.size), 0);
        store.read(a, back.data, 5000);
        EXPECT_EQ(std::memcmp(back.data, one.data, 5000), 0);
        EXPECT_THROW(store.read(b + 1, back.data, 10), Error);          // unaligned offset
        EXPECT_THROW(store.read(store.size(), back.data, 4096), Error); // past the regions
    }
    EXPECT_FALSE(fs::exists(path)) << "removed without --keep-nvme";
    {
        offload::NvmeStore kept({dir.path.string(), true, 1 << 20, 8}, 0);
        path = kept.path();
    }
    EXPECT_TRUE(fs::exists(path)) << "kept with --keep-nvme";
}

TEST(offloadNvme, AProcessEndedBySigtermRemovesItsFile) {
    // The launcher's teardown ends ranks with SIGTERM: no destructor runs, the file must go anyway.
    TempDir dir;
    int pipeFds[2];
    ASSERT_EQ(::pipe(pipeFds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(pipeFds[0]);
        try {
            offload::NvmeStore store({dir.path.string(), false, 4096, 2}, 3);
            const std::string p = store.path() + "\n";
            if (::write(pipeFds[1], p.data(), p.size()) != static_cast<::ssize_t>(p.size()))
                ::_exit(3);
            for (;;)
                ::pause();
        } catch (...) {
            ::_exit(4);
        }
    }
    ::close(pipeFds[1]);
    std::string path;
    char c = 0;
    while (::read(pipeFds[0], &c, 1) == 1 && c != '\n')
        path.push_back(c);
    ::close(pipeFds[0]);
    ASSERT_FALSE(path.empty());
    EXPECT_TRUE(fs::exists(path));
    ::kill(child, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
        << "the signal still ends the process";
    EXPECT_FALSE(fs::exists(path)) << "removed although the process was ended by SIGTERM";
}

TEST(offloadNvme, TransfersInFlightTogetherShareTheQueueAndCompleteInAnyOrder) {
    TempDir dir;
    offload::NvmeStore store({dir.path.string(), false, 4096, 2}, 1);
    const std::uint64_t bytes = 10 * 4096;
    const std::uint64_t a = store.reserve(bytes), b = store.reserve(bytes),
                        c = store.reserve(bytes);
    Aligned x(bytes), y(bytes), z(bytes), backX(bytes), backY(bytes);
    std::memset(x.data, 0x11, bytes);
    std::memset(y.data, 0x22, bytes);
    std::memset(z.data, 0x33, bytes);
    store.write(c, z.data, bytes);
    const auto wx = store.startWrite(a, x.data, bytes);
    const auto wy = store.startWrite(b, y.data, bytes);
    const auto rz = store.startRead(c, backX.data, bytes); // 30 blocks, 2 in flight at a time
    store.wait(rz);                                        // the last started, waited first
    store.wait(wy);
    store.wait(wx);
    EXPECT_EQ(std::memcmp(backX.data, z.data, bytes), 0);
    const auto ry = store.startRead(b, backY.data, bytes);
    const auto rx = store.startRead(a, backX.data, bytes);
    store.wait(rx);
    store.wait(ry);
    EXPECT_EQ(std::memcmp(backX.data, x.data, bytes), 0);
    EXPECT_EQ(std::memcmp(backY.data, y.data, bytes), 0);
    EXPECT_THROW(store.wait(rx), Error); // a ticket is waited once
}

// poll() never blocks, yet keeps a transfer moving (it submits the blocks that waited for room
// in the queue) until it reports it complete; wait() then returns at once.
TEST(offloadNvme, PollDrivesATransferToCompletionWithoutWaiting) {
    TempDir dir;
    offload::NvmeStore store({dir.path.string(), false, 4096, 2}, 1);
    const std::uint64_t bytes = 16 * 4096;
    const std::uint64_t at = store.reserve(bytes);
    Aligned out(bytes), back(bytes);
    std::memset(out.data, 0x5a, bytes);
    const auto w = store.startWrite(at, out.data, bytes); // 16 blocks, 2 in flight at a time
    int polls = 0;
    while (!store.poll(w) && polls < 200000) {
        ++polls;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    ASSERT_TRUE(store.poll(w)) << "not complete after " << polls << " polls";
    store.wait(w);
    EXPECT_TRUE(store.poll(w)) << "a finished ticket reads as complete";
    store.read(at, back.data, bytes);
    EXPECT_EQ(std::memcmp(back.data, out.data, bytes), 0);
}

TEST(offloadNvme, AFileCutShortMidRunIsAnErrorNamingFileAndOffset) {
    TempDir dir;
    offload::NvmeStore store({dir.path.string(), false, 4096, 2}, 0);
    const std::uint64_t at = store.reserve(3 * 4096);
    Aligned buffer(3 * 4096);
    std::memset(buffer.data, 1, buffer.size);
    store.write(at, buffer.data, buffer.size);
    fs::resize_file(store.path(), 4096); // another process (or a full disk) cut it short
    try {
        store.read(at, buffer.data, buffer.size);
        ADD_FAILURE() << "a read past the end of a truncated file succeeded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        const std::string what = e.what();
        EXPECT_NE(what.find(store.path()), std::string::npos) << what;
        EXPECT_NE(what.find("at offset 4096"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

TEST(offloadNvme, OptimizerStatesOnNvmeEqualTheDeviceRunAndEveryTierTheTheory) {
    TempDir dir;
    const plan::Offload nvme{Tier::Nvme, Tier::Device};
    for (Strategy s :
         {Strategy::Zero1, Strategy::Zero2, Strategy::Zero3, Strategy::FsdpFullShard}) {
        const std::string what(plan::strategyName(s));
        const OneRun device = runOneRank(s, {}, std::nullopt, 2);
        const OneRun r = runOneRank(s, nvme, std::nullopt, 2, {dir.path.string(), false, 8192, 4});
        EXPECT_EQ(r.losses, device.losses) << what;
        EXPECT_EQ(r.digest, device.digest) << what;
        theory::Scenario scenario = scenarioFor(s, nvme);
        scenario.knobs.gradAccumSteps = 2;
        EXPECT_EQ(r.states, theory::modelStates(scenario).perRank) << what;
        EXPECT_GT(r.states.tier(Tier::Nvme), 0u) << what;
        const theory::PeakPrediction predicted = predict::predictPeak(scenario);
        for (Tier t : kAllTiers)
            EXPECT_EQ(r.tierPeaks[index(t)], predicted.tierPeaks[index(t)])
                << what << " " << tierName(t);
    }
    EXPECT_TRUE(fs::is_empty(dir.path)) << "every rank file removed";
}

TEST(offloadNvme, ParamsOnNvmeEqualTheDeviceRunAndEveryTierTheTheory) {
    TempDir dir;
    for (Strategy s : {Strategy::Zero3, Strategy::FsdpFullShard, Strategy::FsdpShardGradOp,
                       Strategy::FsdpHybridShard}) {
        const OneRun device = runOneRank(s, {}, std::nullopt, 2);
        for (Tier optimizer : {Tier::Device, Tier::Host, Tier::Nvme}) {
            const plan::Offload o{optimizer, Tier::Nvme};
            const std::string what = std::string(plan::strategyName(s)) + " optimizer " +
                                     std::string(tierName(optimizer));
            const OneRun r = runOneRank(s, o, std::nullopt, 2, {dir.path.string(), false, 8192, 4});
            EXPECT_EQ(r.losses, device.losses) << what;
            EXPECT_EQ(r.digest, device.digest) << what;
            theory::Scenario scenario = scenarioFor(s, o);
            scenario.knobs.gradAccumSteps = 2;
            EXPECT_EQ(r.states, theory::modelStates(scenario).perRank) << what;
            EXPECT_GT(r.states.at(Category::ParamShard, Tier::Nvme), 0u) << what;
            EXPECT_EQ(r.states.at(Category::ParamShard, Tier::Device), 0u) << what;
            const theory::PeakPrediction predicted = predict::predictPeak(scenario);
            for (Tier t : kAllTiers)
                EXPECT_EQ(r.tierPeaks[index(t)], predicted.tierPeaks[index(t)])
                    << what << " " << tierName(t);
            EXPECT_LT(r.tierPeaks[index(Tier::Device)], device.tierPeaks[index(Tier::Device)])
                << what;
        }
    }
    EXPECT_TRUE(fs::is_empty(dir.path)) << "every rank file removed";
}

// The read of a unit's param shard is ahead of its all-gather: whenever unit u starts computing,
// the host staging of the next unit the pass will gather (u ± the gather window) is live, its
// NVMe read in flight or complete. (Read at the all-gather instead, nothing would be live then.)
TEST(offloadNvme, ParamReadsRunAheadOfTheAllGather) {
    TempDir dir;
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    auto self = comm::makeSelfCommunicator(&cpu);
    model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 2);
    strategy::StrategyConfig sc;
    sc.strategy = Strategy::Zero3;
    sc.shape = preset.shape;
    sc.offload = {Tier::Device, Tier::Nvme};
    sc.nvme = {dir.path.string(), false, 8192, 4};
    auto sharding = strategy::makeSharding(sc, cpu, {self.get(), self.get(), nullptr});
    train::TrainConfig cfg;
    cfg.model = {preset.shape, preset.microBatch, false};
    train::Trainer trainer(cfg, cpu, data, sharding.get());
    const std::int32_t units = static_cast<std::int32_t>(sharding->units().size());
    const std::int32_t window = plan::policyFor(Strategy::Zero3, sc.knobs).gatherWindow;
    std::vector<int> liveStaging(static_cast<std::size_t>(units), 0);
    int checked = 0;
    ledger.setSink([&](const Event& e) {
        if (e.unit < 0 || e.unit >= units) return;
        if (e.category == Category::Workspace && e.tier == Tier::Host)
            liveStaging[static_cast<std::size_t>(e.unit)] += e.kind == EventKind::Alloc  ? 1
                                                             : e.kind == EventKind::Free ? -1
                                                                                         : 0;
        if (e.kind != EventKind::ComputeBegin) return;
        const std::int32_t next = e.phase == Phase::Forward ? e.unit + window : e.unit - window;
        if (next < 0 || next >= units) return;
        EXPECT_EQ(liveStaging[static_cast<std::size_t>(next)], 1)
            << phaseName(e.phase) << " unit " << e.unit;
        ++checked;
    });
    trainer.step();
    trainer.step();
    ledger.setSink({});
    EXPECT_EQ(checked, 2 * 2 * (units - window)) << "forward and backward of two steps";
}

// ---- flags ------------------------------------------------------------------------------------

using Argv = std::vector<std::string>;

TEST(offloadRunConfig, FlagsParseRoundTripAndReachTheScenario) {
    const Argv args = {"--model",          "tiny", "--strategy",          "zero3",
                       "--steps",          "1",    "--offload-optimizer", "host",
                       "--offload-params", "cpu"};
    const runconfig::RunConfig c = runconfig::parseRunConfig(args, 2);
    EXPECT_EQ(c.offload.optimizer, Tier::Host);
    EXPECT_EQ(c.offload.param, Tier::Host);
    EXPECT_EQ(runconfig::scenarioOf(c).offload.param, Tier::Host);
    const runconfig::RunConfig back = runconfig::parseRunConfig(runconfig::toWorkerArgs(c), 2);
    EXPECT_EQ(runconfig::toJson(back), runconfig::toJson(c));
    EXPECT_EQ(runconfig::toJson(c)["offload"]["optimizer"], "host");
    const Argv nvmeArgs = {"--model",
                           "tiny",
                           "--strategy",
                           "zero2",
                           "--steps",
                           "1",
                           "--offload-optimizer",
                           "nvme",
                           "--nvme-dir",
                           "/tmp",
                           "--keep-nvme",
                           "--aio-block-bytes",
                           "64KiB",
                           "--aio-queue-depth",
                           "4"};
    const runconfig::RunConfig n = runconfig::parseRunConfig(nvmeArgs, 1);
    EXPECT_EQ(n.nvmeDir, "/tmp");
    EXPECT_TRUE(n.keepNvme);
    EXPECT_EQ(n.aioBlockBytes, 65536u);
    EXPECT_EQ(n.aioQueueDepth, 4);
    EXPECT_EQ(runconfig::toJson(runconfig::parseRunConfig(runconfig::toWorkerArgs(n), 1)),
              runconfig::toJson(n));
    const Argv paramArgs = {"--model",          "tiny", "--strategy", "fsdp", "--steps", "1",
                            "--offload-params", "nvme", "--nvme-dir", "/tmp"};
    const runconfig::RunConfig p = runconfig::parseRunConfig(paramArgs, 2);
    EXPECT_EQ(p.offload.param, Tier::Nvme);
    EXPECT_EQ(p.offload.optimizer, Tier::Device);
    EXPECT_EQ(runconfig::scenarioOf(p).offload.param, Tier::Nvme);
    EXPECT_EQ(runconfig::toJson(runconfig::parseRunConfig(runconfig::toWorkerArgs(p), 2)),
              runconfig::toJson(p));
    EXPECT_EQ(runconfig::toJson(p)["offload"]["param"], "nvme");
    const Argv plain = {"--model", "tiny", "--strategy", "zero3", "--steps", "1"};
    for (const std::string& a : runconfig::toWorkerArgs(runconfig::parseRunConfig(plain, 2)))
        EXPECT_EQ(a.find("offload"), std::string::npos); // defaults are left out
}

std::string refusal(Argv extra, const char* strategy = "zero3") {
    Argv args = {"--model", "tiny", "--strategy", strategy, "--steps", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    try {
        runconfig::parseRunConfig(args, 2);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        return e.what();
    }
    return "accepted";
}

TEST(offloadRunConfig, WhatCannotRunIsOneLineNamingTheFlag) {
    EXPECT_NE(refusal({"--offload-optimizer", "host"}, "ddp")
                  .find("--offload-optimizer needs a strategy that shards the optimizer"),
              std::string::npos);
    EXPECT_NE(refusal({"--offload-params", "host"}, "zero2")
                  .find("--offload-params needs a strategy that shards params"),
              std::string::npos);
    EXPECT_NE(
        refusal({"--offload-params", "host", "--precision", "fp32"}).find("needs --precision bf16"),
        std::string::npos);
    EXPECT_EQ(refusal({"--offload-params", "nvme", "--nvme-dir", "/tmp"}), "accepted");
    EXPECT_NE(refusal({"--offload-params", "nvme", "--nvme-dir", "/tmp"}, "zero2")
                  .find("--offload-params needs a strategy that shards params"),
              std::string::npos);
    EXPECT_NE(refusal({"--offload-params", "nvme"}).find("--offload-params nvme needs --nvme-dir"),
              std::string::npos);
    EXPECT_NE(refusal({"--offload-optimizer", "nvme"}).find("needs --nvme-dir"), std::string::npos);
    EXPECT_NE(refusal({"--offload-optimizer", "nvme", "--nvme-dir", "/nonexistent-ss"})
                  .find("--nvme-dir /nonexistent-ss"),
              std::string::npos);
    EXPECT_NE(refusal({"--offload-optimizer", "nvme", "--nvme-dir", "/etc/hostname"})
                  .find("is not a directory"),
              std::string::npos);
    EXPECT_NE(
        refusal({"--offload-optimizer", "nvme", "--nvme-dir", "/tmp", "--aio-block-bytes", "1000"})
            .find("multiple of 4096"),
        std::string::npos);
    EXPECT_NE(refusal({"--nvme-dir", "/tmp"}).find("is for the NVMe tier"), std::string::npos);
    EXPECT_NE(refusal({"--offload-optimizer", "disk"}).find("must be device, host or nvme"),
              std::string::npos);
    for (const std::string& line : {refusal({"--offload-optimizer", "host"}, "ddp"),
                                    refusal({"--offload-optimizer", "nvme"})})
        EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

} // namespace
} // namespace shardscope
