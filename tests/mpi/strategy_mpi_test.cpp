// Every strategy under a real mpirun, one after another in the same job (tiny preset, whose
// units do not divide 3 or 4, so padding is exercised):
//  - parity: losses per step and final fp32 master weights equal DDP's — bit for bit with
//    --deterministic, within rounding otherwise (and for HYBRID_SHARD's two-level reduction);
//  - the ledger against the theory engine: model states per category equal
//    theory::modelStates, the peak equals predict::predictPeak (a dry run of this rank's step
//    on a CountingDevice), communication per step equals theory::commPerStep and the dry run's
//    collectives — on every rank;
//  - a --capacity of exactly the predicted peak fits, one byte less is OutOfMemory.
#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "kernels/cpu/gemm.h"
#include "predict/predict.h"
#include "strategy/sharding.h"
#include "theory/estimate.h"
#include "train/report.h"
#include "train/run_config.h"
#include "train/trainer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace shardscope;

namespace {

int gRank = 0;
int gSize = 1;

struct JobResult {
    std::vector<double> losses;
    std::vector<std::vector<float>> weights; // rank 0 only
    std::string label;
};

ByteTable deviceCells(const ByteTable& t) {
    ByteTable out;
    for (Category c : kAllCategories)
        out.at(c, Tier::Device) = t.at(c, Tier::Device);
    return out;
}

// Runs one configuration on every rank and checks its ledger and counters against theory.
JobResult runJob(std::vector<std::string> flags, std::int64_t steps = 3) {
    flags.insert(flags.end(), {"--model", "tiny", "--steps", std::to_string(steps)});
    std::string label;
    for (const auto& f : flags)
        label += f + " ";
    const train::RunConfig cfg = train::parseRunConfig(flags, gSize);
    Ledger ledger(gRank);
    ledger.setCapacity(Tier::Device, cfg.capacityBytes);
    device::CpuDevice cpu(ledger);
    std::unique_ptr<comm::Communicator> world = comm::makeMpiWorldCommunicator(&cpu), shard,
                                        replica;
    strategy::CommGroups groups{world.get(), world.get(), nullptr};
    if (cfg.strategy == plan::Strategy::FsdpHybridShard) {
        const int g = cfg.knobs.hybridGroupSize;
        shard = comm::makeMpiSplitCommunicator(&cpu, gRank / g, gRank);
        replica = comm::makeMpiSplitCommunicator(&cpu, gRank % g, gRank);
        groups.shard = shard.get();
        groups.replica = replica.get();
    }
    for (comm::Communicator* c : groups.distinct()) {
        c->setDeterministic(cfg.deterministic);
        c->setTimeout(std::chrono::milliseconds(20000));
    }
    const auto data = train::makeDataSource(cfg);
    auto sharding = strategy::makeSharding(train::strategyConfigOf(cfg), cpu, groups);
    train::Trainer trainer(train::trainConfigOf(cfg), cpu, *data, sharding.get());
    JobResult out;
    out.label = label;
    ByteTable states;
    for (std::int64_t k = 0; k < steps; ++k) {
        const train::StepResult r = trainer.step();
        if (k == 0) states = r.modelStates;
        out.losses.push_back(r.loss);
    }
    out.weights = trainer.fullWeights();

    const theory::Scenario scenario = train::scenarioOf(cfg);
    const theory::ModelStates theoryStates = theory::modelStates(scenario);
    const theory::PeakPrediction peak = predict::predictPeak(scenario);
    EXPECT_EQ(states, theoryStates.perRank)
        << label << "rank " << gRank << ": model states by category";
    for (Category c : kAllCategories)
        EXPECT_EQ(states.category(c), theoryStates.perRank.category(c))
            << label << "rank " << gRank << " " << categoryName(c);
    EXPECT_EQ(ledger.peakBytes(), peak.peakBytes)
        << label << "rank " << gRank << ": peak (predicted at the " << peak.peakPhase << ")";
    EXPECT_EQ(deviceCells(ledger.peak()), peak.categoryPeaks)
        << label << "rank " << gRank << ": per-category peaks";
    EXPECT_LE(
        std::fabs(static_cast<double>(ledger.peakBytes()) - static_cast<double>(peak.peakBytes)),
        0.02 * static_cast<double>(peak.peakBytes));
    // SHARD_GRAD_OP-like runs hold full params from forward to backward only (a state in theory).
    const bool heldForwardToBackward = scenario.strategy == plan::Strategy::FsdpShardGradOp ||
                                       ((scenario.strategy == plan::Strategy::FsdpFullShard ||
                                         scenario.strategy == plan::Strategy::FsdpHybridShard) &&
                                        !scenario.knobs.reshardAfterForward);
    const std::uint64_t persistent =
        theoryStates.perRank.tier(Tier::Device) -
        (heldForwardToBackward ? theoryStates.perRank.category(Category::ParamFull) : 0);
    EXPECT_EQ(ledger.liveBytes(), persistent)
        << label << "after the steps only the persistent states remain";

    comm::CommStats stats;
    for (comm::Communicator* c : groups.distinct())
        stats.add(c->stats());
    const theory::CommPerStep theoryComm = theory::commPerStep(scenario);
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> measured,
        predicted;                                          // payload, sent
    for (std::size_t op = 1; op < kCollectiveOpCount; ++op) // 0 is CollectiveOp::None
        if (stats.calls[op] > 0)
            measured[std::string(collectiveOpName(static_cast<CollectiveOp>(op)))] = {
                stats.payloadBytes[op] / static_cast<std::uint64_t>(steps),
                stats.sentBytes[op] / static_cast<std::uint64_t>(steps)};
    for (const auto& v : theoryComm.byKind)
        predicted[std::string(collectiveOpName(v.kind))] = {v.payloadBytes, v.sentBytes};
    EXPECT_EQ(measured.size(), predicted.size()) << label;
    for (const auto& [kind, pv] : predicted) {
        const auto& mv = measured[kind];
        EXPECT_EQ(mv.first, pv.first) << label << kind << " payload bytes per step";
        EXPECT_LE(std::fabs(static_cast<double>(mv.second) - static_cast<double>(pv.second)),
                  0.01 * static_cast<double>(pv.second))
            << label << kind << " sent bytes per step: " << mv.second << " vs " << pv.second;
    }
    // The dry run of this rank called the same collectives with the same payloads.
    const predict::StepPrediction dry = predict::predictStep(scenario, gRank);
    const auto k = static_cast<std::uint64_t>(steps);
    for (std::size_t op = 1; op < kCollectiveOpCount; ++op) {
        const std::string_view name = collectiveOpName(static_cast<CollectiveOp>(op));
        EXPECT_EQ(stats.calls[op], dry.comm.calls[op] * k) << label << name << " calls";
        EXPECT_EQ(stats.payloadBytes[op], dry.comm.payloadBytes[op] * k)
            << label << name << " payload";
        EXPECT_EQ(stats.sentBytes[op], dry.comm.sentBytes[op] * k) << label << name << " sent";
    }
    return out;
}

void expectBitwise(const JobResult& ref, const JobResult& other) {
    EXPECT_EQ(ref.losses, other.losses) << other.label << "vs " << ref.label;
    if (gRank != 0) return;
    ASSERT_EQ(ref.weights.size(), other.weights.size());
    for (std::size_t u = 0; u < ref.weights.size(); ++u) {
        ASSERT_EQ(ref.weights[u].size(), other.weights[u].size());
        for (std::size_t i = 0; i < ref.weights[u].size(); ++i)
            ASSERT_EQ(ref.weights[u][i], other.weights[u][i])
                << other.label << "unit " << u << " element " << i;
    }
}

double maxAbsDelta(const JobResult& a, const JobResult& b) {
    double worst = 0;
    for (std::size_t u = 0; u < a.weights.size(); ++u)
        for (std::size_t i = 0; i < a.weights[u].size(); ++i)
            worst = std::max(worst, std::fabs(static_cast<double>(a.weights[u][i]) -
                                              static_cast<double>(b.weights[u][i])));
    return worst;
}

double rmsDelta(const JobResult& a, const JobResult& b) {
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t u = 0; u < a.weights.size(); ++u)
        for (std::size_t i = 0; i < a.weights[u].size(); ++i, ++count) {
            const double d =
                static_cast<double>(a.weights[u][i]) - static_cast<double>(b.weights[u][i]);
            sum += d * d;
        }
    return count ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
}

// "Within rounding" for Adam: its first steps move every weight by about lr·sign(m/√v), so a
// gradient element near zero whose last bit differs can move the other way (≤ 2·lr per step);
// what rounding cannot do is move the weights as a whole. Losses agree closely, the RMS weight
// difference is far below lr, and no element differs by more than 2·lr per step.
void expectClose(const JobResult& ref, const JobResult& other, double rmsTolerance,
                 double lr = 0.01) {
    ASSERT_EQ(ref.losses.size(), other.losses.size());
    for (std::size_t k = 0; k < ref.losses.size(); ++k)
        EXPECT_NEAR(ref.losses[k], other.losses[k], 2e-3) << other.label << "step " << k;
    if (gRank != 0) return;
    ASSERT_EQ(ref.weights.size(), other.weights.size());
    const double rms = rmsDelta(ref, other), worst = maxAbsDelta(ref, other);
    EXPECT_LE(rms, rmsTolerance) << other.label << "vs " << ref.label;
    EXPECT_LE(worst, 2.0 * lr * static_cast<double>(ref.losses.size()) + 1e-6)
        << other.label << "vs " << ref.label;
    std::printf("[ close    ] %svs %s: rms %.3g, max %.3g\n", other.label.c_str(),
                ref.label.c_str(), rms, worst);
}

std::vector<std::string> det(std::vector<std::string> f) {
    f.push_back("--deterministic");
    return f;
}

} // namespace

TEST(strategyMpi, EveryStrategyMatchesDdpBitwiseWhenDeterministic) {
    const JobResult ddp = runJob(det({"--strategy", "ddp"}));
    for (std::vector<std::string> flags : std::vector<std::vector<std::string>>{
             {"--strategy", "zero1"},
             {"--strategy", "zero2"},
             {"--strategy", "zero3"},
             {"--strategy", "fsdp"},
             {"--strategy", "fsdp_grad_op"},
             {"--strategy", "fsdp_hybrid", "--hybrid-group", "1"},
             {"--strategy", "fsdp_hybrid", "--hybrid-group", std::to_string(gSize)},
             // knobs: small buckets split units, prefetch, persistence, in-flight limit, no reshard
             {"--strategy", "ddp", "--bucket-bytes", "20000"},
             {"--strategy", "zero1", "--bucket-bytes", "9000"},
             {"--strategy", "zero2", "--bucket-bytes", "5000"},
             {"--strategy", "zero3", "--prefetch", "2", "--persistence-threshold", "7000"},
             {"--strategy", "zero3", "--prefetch", "0", "--checkpointing"},
             {"--strategy", "fsdp", "--prefetch", "3", "--max-inflight", "2"},
             {"--strategy", "fsdp", "--reshard-after-forward", "0"},
         })
        expectBitwise(ddp, runJob(det(flags)));
}

TEST(strategyMpi, Fp32StrategiesMatchDdpBitwiseWhenDeterministic) {
    const JobResult ddp = runJob(det({"--strategy", "ddp", "--precision", "fp32"}));
    for (const char* s : {"zero1", "zero2", "zero3", "fsdp"})
        expectBitwise(ddp, runJob(det({"--strategy", s, "--precision", "fp32"})));
    expectBitwise(ddp, runJob(det({"--strategy", "zero3", "--precision", "fp32",
                                   "--persistence-threshold", "7000"})));
}

// HYBRID_SHARD reduces in two levels (reduce-scatter in the group, all-reduce across groups):
// its sums associate differently from a flat rank-order sum, so it equals DDP within rounding.
TEST(strategyMpi, HybridShardWithProperGroupsMatchesDdpWithinRounding) {
    bool ran = false;
    for (int g = 2; g < gSize; ++g) {
        if (gSize % g != 0) continue;
        static const JobResult ddp = runJob(det({"--strategy", "ddp"}));
        const JobResult hybrid =
            runJob(det({"--strategy", "fsdp_hybrid", "--hybrid-group", std::to_string(g)}));
        expectClose(ddp, hybrid, 1e-3);
        ran = true;
    }
    if (!ran) GTEST_SKIP() << "no hybrid group strictly between 1 and " << gSize;
}

// Without --deterministic MPI sums in its own order: equal within rounding.
TEST(strategyMpi, NonDeterministicReductionsMatchDdpWithinRounding) {
    const JobResult ddp = runJob({"--strategy", "ddp"});
    expectClose(ddp, runJob({"--strategy", "zero2"}), 1e-3);
    expectClose(ddp, runJob({"--strategy", "zero3"}), 1e-3);
    const JobResult ddp32 = runJob({"--strategy", "ddp", "--precision", "fp32"});
    expectClose(ddp32, runJob({"--strategy", "fsdp", "--precision", "fp32"}), 1e-4);
}

// Gradient accumulation: DDP, ZeRO-1 and FSDP no_sync accumulate locally and reduce once
// (Σ ranks Σ micro-steps); ZeRO-2/3 and FSDP reduce every micro-step (Σ micro-steps Σ ranks).
// Bitwise within each family, within rounding across; no_sync's full gradients are visible in
// the ledger (and in the theory, which the run is checked against).
TEST(strategyMpi, GradientAccumulationFamiliesAreBitwiseWithinAndCloseAcross) {
    const std::vector<std::string> acc = {"--grad-accum", "2", "--micro-batch", "2",
                                          "--deterministic"};
    auto with = [&](std::vector<std::string> f) {
        f.insert(f.end(), acc.begin(), acc.end());
        return f;
    };
    const JobResult ddp = runJob(with({"--strategy", "ddp"}), 2);
    expectBitwise(ddp, runJob(with({"--strategy", "zero1"}), 2));
    expectBitwise(ddp, runJob(with({"--strategy", "fsdp", "--no-sync"}), 2));
    const JobResult zero3 = runJob(with({"--strategy", "zero3"}), 2);
    expectBitwise(zero3, runJob(with({"--strategy", "zero2", "--bucket-bytes", "6000"}), 2));
    expectBitwise(zero3, runJob(with({"--strategy", "fsdp"}), 2));
    expectClose(ddp, zero3, 1e-3);
}

TEST(strategyMpi, CapacityOfExactlyThePredictedPeakFitsAndOneByteLessDoesNot) {
    for (const char* s : {"zero2", "zero3"}) {
        train::RunConfig cfg = train::parseRunConfig(
            std::vector<std::string>{"--model", "tiny", "--strategy", s, "--steps", "1"}, gSize);
        const std::uint64_t peak = predict::predictPeak(train::scenarioOf(cfg)).peakBytes;
        EXPECT_NO_THROW(runJob({"--strategy", s, "--capacity", std::to_string(peak)}, 1)) << s;
        try {
            runJob({"--strategy", s, "--capacity", std::to_string(peak - 1)}, 1);
            ADD_FAILURE() << s << ": expected OutOfMemory one byte below the predicted peak";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
        }
    }
}

int main(int argc, char** argv) {
    kernels::setBlasThreads(1);
    comm::MpiRuntime mpi(&argc, &argv);
    gRank = mpi.worldRank();
    gSize = mpi.worldSize();
    ::testing::InitGoogleTest(&argc, argv);
    if (gRank != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
    }
    const int rc = RUN_ALL_TESTS();
    // A failure on any rank fails the job.
    int worst = rc;
    {
        Ledger l;
        device::CpuDevice cpu(l);
        auto world = comm::makeMpiWorldCommunicator(&cpu);
        worst = static_cast<int>(world->maxScalar(rc));
    }
    return worst;
}
