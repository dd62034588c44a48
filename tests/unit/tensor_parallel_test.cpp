// Tensor parallelism (a T × D mesh of rank threads on shared host communicators, the
// communicators of --shared-device): parity with DDP of the same global batch, the TP slice
// layout, and measured = theory for the model states, the TP traffic and the peak. The same
// mesh under a real mpirun is tests/mpi/strategy_worker_test.cpp.
//
// Tolerances. TP changes the order of the GEMM sums (a row-parallel output is the all-reduced
// sum of T partial products), so TP × DP is not bitwise equal to DDP, in fp32 or bf16, and no
// deterministic mode changes that (--deterministic fixes the order of the reductions, not of a
// GEMM's inner sums); it IS bitwise equal across strategies of the same mesh (the shared
// communicators sum in rank order). Measured on tiny_tp, 3 steps at lr 0.01 (Adam moves every
// weight by about lr per step, so a gradient that rounds differently moves a weight by a
// fraction of lr): fp32 losses within 7e-8 relative, weights within 8e-5 absolute; bf16 (bf16
// params and gradients, fp32 GEMMs on the CPU) losses within 4e-7, weights within 1.2e-4.
// Asserted: losses 1e-6 (fp32) / 1e-5 (bf16) relative, weights 5e-4 / 5e-3 absolute.
#include "comm/shared_device_communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "model/data.h"
#include "plan/collective.h"
#include "plan/units.h"
#include "predict/predict.h"
#include "runconfig/presets.h"
#include "strategy/sharding.h"
#include "theory/estimate.h"
#include "train/trainer.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace shardscope {
namespace {

using plan::PrecisionKind;
using plan::Strategy;

struct Mesh {
    int tp = 1;
    int dp = 1;
    Strategy strategy = Strategy::Ddp;
    PrecisionKind precision = PrecisionKind::Fp32;
    bool checkpointing = false;
    int steps = 3;
    int hybridGroup = 0; // fsdp_hybrid: DP ranks per shard group
};

struct MeshRun {
    std::vector<double> losses;
    std::vector<std::vector<float>> weights; // the whole model's, unit by unit
    std::uint64_t digest = 0;
    ByteTable states;       // rank 0, end of the first forward
    std::uint64_t peak = 0; // rank 0, device tier
    comm::CommStats comm;   // rank 0, summed over its groups, per step
};

theory::Scenario scenarioOf(const Mesh& m) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny_tp");
    theory::Scenario s;
    s.shape = preset.shape;
    s.shape->tp = m.tp;
    s.strategy = m.strategy;
    s.ranks = m.dp;
    s.precision.kind = m.precision;
    s.knobs.sharedDeviceCollectives = true;
    s.knobs.hybridGroupSize = m.hybridGroup;
    s.activations = {preset.microBatch, m.checkpointing};
    return s;
}

MeshRun runMesh(const Mesh& m) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny_tp");
    const int n = m.tp * m.dp;
    std::vector<std::unique_ptr<Ledger>> ledgers;
    std::vector<std::unique_ptr<device::CpuDevice>> devices;
    std::vector<device::Device*> raw;
    for (int r = 0; r < n; ++r) {
        ledgers.push_back(std::make_unique<Ledger>(r));
        devices.push_back(std::make_unique<device::CpuDevice>(*ledgers.back()));
        raw.push_back(devices.back().get());
    }
    // The worker's mesh (app/worker/backends.cpp): TP groups of consecutive ranks, DP groups
    // of the ranks with the same TP index.
    std::vector<std::unique_ptr<comm::Communicator>> owned = comm::makeSharedHostCommunicators(raw);
    std::vector<strategy::CommGroups> groups(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
        groups[static_cast<std::size_t>(r)].world = owned[static_cast<std::size_t>(r)].get();
    auto split = [&](auto color, int count, comm::Communicator* strategy::CommGroups::*slot) {
        for (int c = 0; c < count; ++c) {
            std::vector<int> members;
            std::vector<device::Device*> devs;
            for (int r = 0; r < n; ++r)
                if (color(r) == c) {
                    members.push_back(r);
                    devs.push_back(raw[static_cast<std::size_t>(r)]);
                }
            auto group = comm::makeSharedHostCommunicators(devs);
            for (std::size_t i = 0; i < members.size(); ++i) {
                groups[static_cast<std::size_t>(members[i])].*slot = group[i].get();
                owned.push_back(std::move(group[i]));
            }
        }
    };
    if (m.tp > 1) {
        split([&](int r) { return r / m.tp; }, m.dp, &strategy::CommGroups::tensor);
        split([&](int r) { return r % m.tp; }, m.tp, &strategy::CommGroups::data);
    }
    for (auto& g : groups)
        g.shard = g.data ? g.data : g.world;
    if (m.hybridGroup >
        0) { // shard groups: G consecutive DP ranks; replicas: the same index in each
        const int g = m.hybridGroup;
        split([&](int r) { return (r % m.tp) * (m.dp / g) + (r / m.tp) / g; }, m.tp * (m.dp / g),
              &strategy::CommGroups::shard);
        split([&](int r) { return (r % m.tp) * g + (r / m.tp) % g; }, m.tp * g,
              &strategy::CommGroups::replica);
    }

    MeshRun out;
    std::mutex failed;
    std::exception_ptr error;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                device::CpuDevice& cpu = *devices[static_cast<std::size_t>(r)];
                const model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen,
                                               preset.microBatch, 5);
                strategy::StrategyConfig sc;
                sc.strategy = m.strategy;
                sc.precision = m.precision;
                sc.shape = preset.shape;
                sc.shape.tp = m.tp;
                sc.seed = 5;
                sc.knobs.hybridGroupSize = m.hybridGroup;
                auto sharding =
                    strategy::makeSharding(sc, cpu, groups[static_cast<std::size_t>(r)]);
                train::TrainConfig tc;
                tc.model = {sc.shape, preset.microBatch, m.checkpointing};
                tc.precision = m.precision;
                tc.optimizer.learningRate = preset.learningRate;
                tc.seed = 5;
                train::Trainer trainer(tc, cpu, data, sharding.get());
                for (comm::Communicator* c : groups[static_cast<std::size_t>(r)].distinct())
                    c->resetStats();
                std::vector<double> losses;
                ByteTable states;
                for (int k = 0; k < m.steps; ++k) {
                    const train::StepResult s = trainer.step();
                    if (k == 0) states = s.modelStates;
                    losses.push_back(s.loss);
                }
                comm::CommStats stats;
                for (comm::Communicator* c : groups[static_cast<std::size_t>(r)].distinct())
                    stats.add(c->stats());
                const std::uint64_t peak = ledgers[static_cast<std::size_t>(r)]->peakBytes();
                auto weights = trainer.fullWeights();
                if (r == 0) {
                    out.losses = losses;
                    out.states = states;
                    out.peak = peak;
                    out.comm = stats;
                    out.digest = train::fnv1a(weights);
                    out.weights = std::move(weights);
                }
            } catch (...) {
                const std::lock_guard<std::mutex> lock(failed);
                if (!error) error = std::current_exception();
                owned[static_cast<std::size_t>(r)].reset(); // breaks the world: peers fail fast
            }
        });
    }
    for (std::thread& t : threads)
        t.join();
    if (error) std::rethrow_exception(error);
    for (auto& v : out.comm.calls)
        v /= static_cast<std::uint64_t>(m.steps);
    for (auto& v : out.comm.payloadBytes)
        v /= static_cast<std::uint64_t>(m.steps);
    for (auto& v : out.comm.sentBytes)
        v /= static_cast<std::uint64_t>(m.steps);
    return out;
}

struct Gap {
    double loss = 0;   // max relative
    double weight = 0; // max absolute
};

Gap gap(const MeshRun& a, const MeshRun& b) {
    Gap g;
    EXPECT_EQ(a.losses.size(), b.losses.size());
    for (std::size_t i = 0; i < std::min(a.losses.size(), b.losses.size()); ++i)
        g.loss = std::max(g.loss, std::abs(a.losses[i] - b.losses[i]) / std::abs(b.losses[i]));
    EXPECT_EQ(a.weights.size(), b.weights.size());
    for (std::size_t u = 0; u < std::min(a.weights.size(), b.weights.size()); ++u) {
        EXPECT_EQ(a.weights[u].size(), b.weights[u].size()) << "unit " << u;
        for (std::size_t i = 0; i < std::min(a.weights[u].size(), b.weights[u].size()); ++i)
            g.weight = std::max(g.weight,
                                static_cast<double>(std::abs(a.weights[u][i] - b.weights[u][i])));
    }
    return g;
}

void expectClose(const MeshRun& run, const MeshRun& ddp, PrecisionKind p, const std::string& what) {
    const Gap g = gap(run, ddp);
    const bool fp32 = p == PrecisionKind::Fp32;
    std::printf("%s: loss gap %.3g (relative), weight gap %.3g (absolute)\n", what.c_str(), g.loss,
                g.weight);
    EXPECT_LE(g.loss, fp32 ? 1e-6 : 1e-5) << what;
    EXPECT_LE(g.weight, fp32 ? 5e-4 : 5e-3) << what;
    EXPECT_GT(run.losses.front() - run.losses.back(), 0.0) << what << ": it trains";
}

// ---- the slice layout --------------------------------------------------------------------------

TEST(tensorParallelLayout, SlicesPartitionTheSplitTensorsAndReplicateTheRest) {
    plan::GptShape shape = runconfig::modelPreset("tiny_tp").shape;
    const auto whole = plan::unitLayouts(shape);
    for (std::int64_t t : {2, 4}) {
        shape.tp = t;
        const auto slices = plan::unitLayouts(shape);
        ASSERT_EQ(slices.size(), whole.size());
        for (std::size_t u = 0; u < whole.size(); ++u) {
            std::vector<float> values(whole[u].elements());
            for (std::size_t i = 0; i < values.size(); ++i)
                values[i] = static_cast<float>(i);
            std::vector<float> back(values.size(), -1.0f), seen(values.size(), 0.0f);
            for (std::int64_t r = 0; r < t; ++r) {
                std::vector<float> slice(slices[u].elements());
                plan::copyTpSlice(whole[u], slices[u], t, r, values.data(), slice.data(), true);
                plan::copyTpSlice(whole[u], slices[u], t, r, back.data(), slice.data(), false);
                for (float v : slice)
                    seen[static_cast<std::size_t>(v)] += 1.0f;
            }
            EXPECT_EQ(back, values) << "T=" << t << " unit " << u << ": the slices cover the whole";
            for (const plan::TensorSlot& s : whole[u].slots())
                for (std::uint64_t i = s.offset; i < s.offset + s.elements(); ++i) {
                    const float times =
                        s.name.find("qkv") != std::string::npos || s.name.find("mlp.fc") == 0 ||
                                s.name == "attn.proj.weight" || s.name == "mlp.proj.weight"
                            ? 1.0f
                            : static_cast<float>(t);
                    ASSERT_EQ(seen[i], times) << s.name << " T=" << t;
                }
        }
        // A slice of a block holds (12d² + 7d)/T + 6d parameters.
        const std::int64_t d = shape.dModel;
        EXPECT_EQ(slices[1].elements(),
                  static_cast<std::uint64_t>((12 * d * d + 7 * d) / t + 6 * d));
        EXPECT_EQ(plan::modelParamCount(shape), plan::paramCount(plan::untiled(shape)));
    }
}

TEST(tensorParallelLayout, QkvSliceHoldsTheQKAndVColumnsOfItsHeads) {
    // d = 4, 2 heads of 2, T = 2: rank 1 owns columns 2–3 of Q, K and V (6–7 of the whole:
    // Q 0–3, K 4–7, V 8–11 → 2,3, 6,7, 10,11).
    const plan::GptShape whole{1, 4, 2, 5, 3};
    plan::GptShape half = whole;
    half.tp = 2;
    const plan::UnitLayout w = plan::unitLayouts(whole)[1], s = plan::unitLayouts(half)[1];
    std::vector<float> values(w.elements());
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>(i);
    std::vector<float> slice(s.elements());
    plan::copyTpSlice(w, s, 2, 1, values.data(), slice.data(), true);
    const auto& bias = s.slot("attn.qkv.bias");
    const float base = static_cast<float>(w.slot("attn.qkv.bias").offset);
    const std::vector<float> got(slice.begin() + static_cast<std::ptrdiff_t>(bias.offset),
                                 slice.begin() +
                                     static_cast<std::ptrdiff_t>(bias.offset + bias.elements()));
    EXPECT_EQ(got,
              (std::vector<float>{base + 2, base + 3, base + 6, base + 7, base + 10, base + 11}));
    plan::GptShape bad = whole;
    bad.tp = 4;
    EXPECT_THROW(plan::validate(bad), Error) << "4 does not divide 2 heads";
}

// ---- parity with DDP ---------------------------------------------------------------------------

TEST(tensorParallel, MeshMatchesDdpOfTheSameGlobalBatchFp32AndBf16) {
    for (PrecisionKind p : {PrecisionKind::Fp32, PrecisionKind::MixedBf16}) {
        for (int d : {1, 2}) {
            const MeshRun ddp = runMesh({1, d, Strategy::Ddp, p});
            for (int t : {1, 2}) {
                const MeshRun run = runMesh({t, d, Strategy::Ddp, p});
                expectClose(run, ddp, p,
                            "T=" + std::to_string(t) + " D=" + std::to_string(d) + " " +
                                std::string(plan::precisionName(p)));
                if (t == 1) {
                    EXPECT_EQ(run.digest, ddp.digest) << "T = 1 is DDP itself";
                }
            }
        }
        const MeshRun ddp1 = runMesh({1, 1, Strategy::Ddp, p});
        expectClose(runMesh({4, 1, Strategy::Ddp, p}), ddp1, p,
                    "T=4 D=1 " + std::string(plan::precisionName(p)));
    }
}

TEST(tensorParallel, ZeroAndFsdpShardTheSliceOverTheDpGroup) {
    for (PrecisionKind p : {PrecisionKind::Fp32, PrecisionKind::MixedBf16}) {
        const MeshRun ddp = runMesh({1, 2, Strategy::Ddp, p});
        const MeshRun tpDdp = runMesh({2, 2, Strategy::Ddp, p});
        for (Strategy s :
             {Strategy::Zero1, Strategy::Zero2, Strategy::Zero3, Strategy::FsdpFullShard}) {
            const MeshRun run = runMesh({2, 2, s, p});
            const std::string what =
                std::string(plan::strategyName(s)) + " " + std::string(plan::precisionName(p));
            expectClose(run, ddp, p, what);
            // Same mesh, same sums in rank order: bitwise what DDP on the mesh computes.
            EXPECT_EQ(run.losses, tpDdp.losses) << what;
            EXPECT_EQ(run.digest, tpDdp.digest) << what;
        }
    }
}

// HYBRID_SHARD inside the DP group of each TP slice: G = 1 replicates the slice across the DP
// group (its gradients all-reduced over the replica group), G = 2 shards it over the whole DP
// group; T = 2 × D = 4 with G = 2 does both at once.
TEST(tensorParallel, HybridShardsTheSliceInsideTheDpGroup) {
    for (PrecisionKind p : {PrecisionKind::Fp32, PrecisionKind::MixedBf16}) {
        const MeshRun ddp = runMesh({1, 2, Strategy::Ddp, p});
        const MeshRun tpDdp = runMesh({2, 2, Strategy::Ddp, p});
        for (int g : {1, 2}) {
            const MeshRun run = runMesh({2, 2, Strategy::FsdpHybridShard, p, false, 3, g});
            const std::string what =
                "fsdp_hybrid G=" + std::to_string(g) + " " + std::string(plan::precisionName(p));
            expectClose(run, ddp, p, what);
            EXPECT_EQ(run.digest, tpDdp.digest) << what << ": DDP on the same mesh, bitwise";
            const auto ar = static_cast<std::size_t>(CollectiveOp::AllReduce);
            if (g == 1) {
                EXPECT_GT(run.comm.calls[ar], 0u)
                    << what << ": gradients all-reduced across replicas";
            }
        }
    }
    const MeshRun ddp4 = runMesh({1, 4, Strategy::Ddp, PrecisionKind::Fp32});
    const Mesh wide{2, 4, Strategy::FsdpHybridShard, PrecisionKind::Fp32, true, 3, 2};
    const MeshRun run = runMesh(wide);
    expectClose(run, ddp4, PrecisionKind::Fp32, "fsdp_hybrid T=2 D=4 G=2 checkpointing");
    const theory::Scenario s = scenarioOf(wide);
    EXPECT_EQ(run.states, theory::modelStates(s).perRank);
    EXPECT_EQ(run.peak, predict::predictPeak(s).peakBytes);
}

TEST(tensorParallel, ActivationCheckpointingRecomputesWithTheTpAllReduce) {
    const MeshRun ddp = runMesh({1, 2, Strategy::Ddp, PrecisionKind::Fp32});
    const MeshRun plain = runMesh({2, 2, Strategy::Zero3, PrecisionKind::Fp32});
    const MeshRun ckpt = runMesh({2, 2, Strategy::Zero3, PrecisionKind::Fp32, true});
    expectClose(ckpt, ddp, PrecisionKind::Fp32, "checkpointing");
    EXPECT_EQ(ckpt.digest, plain.digest) << "recompute repeats the forward exactly";
    const auto tp = static_cast<std::size_t>(CollectiveOp::TpAllReduce);
    const auto layers = static_cast<std::uint64_t>(runconfig::modelPreset("tiny_tp").shape.layers);
    EXPECT_EQ(plain.comm.calls[tp], 4 * layers);
    EXPECT_EQ(ckpt.comm.calls[tp], 5 * layers)
        << "the recompute all-reduces the attention output again";
}

// ---- measured = theory ------------------------------------------------------------------------

TEST(tensorParallel, StatesTpTrafficAndPeakEqualTheTheory) {
    for (const Mesh& m :
         {Mesh{2, 2, Strategy::Zero3, PrecisionKind::MixedBf16}, Mesh{2, 2, Strategy::Zero1},
          Mesh{4, 1, Strategy::Ddp, PrecisionKind::MixedBf16, true},
          Mesh{2, 2, Strategy::FsdpFullShard, PrecisionKind::MixedBf16, true}}) {
        const std::string what = "T=" + std::to_string(m.tp) + " D=" + std::to_string(m.dp) + " " +
                                 std::string(plan::strategyName(m.strategy));
        const MeshRun run = runMesh(m);
        const theory::Scenario s = scenarioOf(m);
        EXPECT_EQ(run.states, theory::modelStates(s).perRank) << what;
        EXPECT_EQ(run.peak, predict::predictPeak(s).peakBytes) << what;
        const theory::CommPerStep comm = theory::commPerStep(s);
        for (CollectiveOp op : plan::kCollectives) {
            const auto i = static_cast<std::size_t>(op);
            std::uint64_t payload = 0, sent = 0, calls = 0;
            for (const auto& v : comm.byKind) {
                if (v.kind != op) continue;
                payload = v.payloadBytes;
                sent = v.sentBytes;
                calls = static_cast<std::uint64_t>(v.calls);
            }
            EXPECT_EQ(run.comm.payloadBytes[i], payload) << what << " " << collectiveOpName(op);
            EXPECT_EQ(run.comm.sentBytes[i], sent) << what << " " << collectiveOpName(op);
            EXPECT_EQ(run.comm.calls[i], calls) << what << " " << collectiveOpName(op);
        }
        // B × S × d fp32 per row-parallel layer, ×2 for backward, 2(T−1)/T of it sent.
        const auto& shape = *s.shape;
        const std::uint64_t bsd =
            static_cast<std::uint64_t>(s.activations.microBatch * shape.seqLen * shape.dModel) * 4;
        const std::uint64_t calls =
            static_cast<std::uint64_t>(shape.layers) * (m.checkpointing ? 5 : 4);
        const auto tp = static_cast<std::size_t>(CollectiveOp::TpAllReduce);
        EXPECT_EQ(run.comm.payloadBytes[tp], calls * bsd) << what;
        EXPECT_EQ(run.comm.sentBytes[tp], calls * bsd * 2 * static_cast<std::uint64_t>(m.tp - 1) /
                                              static_cast<std::uint64_t>(m.tp))
            << what;
    }
}

} // namespace
} // namespace shardscope
