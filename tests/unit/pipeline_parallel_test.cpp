// Pipeline parallelism run for real on rank threads (the shared host communicators of
// --shared-device, grouped by plan/mesh.h's colours as the worker groups them): a P × T × D mesh
// whose stages hold consecutive layers and hand activations and their gradients on by
// point-to-point messages, in GPipe's, 1F1B's or ZB-H1's order (its backward split for real:
// input gradients in B, weight gradients later in W).
//
// Parity. A pipelined step computes each micro-batch's forward and backward exactly as one rank
// does (the same kernels on the same values: a stage boundary moves bytes, it sums nothing), and
// every stage accumulates its units' gradients over the micro-batches in micro-batch order
// 0 … M − 1 (every schedule runs backwards — ZB-H1 its Ws — in that order), as gradient
// accumulation does on one stage. ZB-H1's W computes a unit's weight gradients with the very GEMM
// calls of the fused backward (the dx and dW GEMMs were always two), on the same kept inputs. The
// global norm is an exact fixed-point sum (train/grad_norm.h), whoever adds which part. So P stages
// × D ranks are bitwise equal to one stage × D ranks with --grad-accum M, in fp32 and bf16, for
// every strategy; with T > 1 the TP mesh's own tolerance applies
// (tests/unit/tensor_parallel_test.cpp), and the pipeline adds nothing to it (asserted: a
// P = 2 × T = 2 mesh is bitwise the T = 2 mesh).
#include "comm/shared_device_communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "model/data.h"
#include "plan/mesh.h"
#include "plan/pipeline.h"
#include "strategy/sharding.h"
#include "theory/pipeline.h"
#include "train/trainer.h"

#include <exception>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace shardscope {
namespace {

using plan::PipeSchedule;
using plan::PrecisionKind;
using plan::Strategy;

// Five layers: P = 2, 3 and 4 split them unevenly (3+2, 2+2+1, 2+1+1+1).
plan::GptShape shape(std::int64_t layers = 5) {
    plan::GptShape s;
    s.layers = layers;
    s.dModel = 24;
    s.heads = 4;
    s.vocab = 37;
    s.seqLen = 16;
    return s;
}
constexpr std::int64_t kMicroBatch = 2;

struct Mesh {
    int pp = 1, tp = 1, dp = 1;
    int virtualStages = 1; // V: model chunks per pipeline rank (interleaved)
    std::int64_t layers = 5;
    int micro = 1; // M: micro-batches per step (gradient accumulation without a pipeline)
    PipeSchedule schedule = PipeSchedule::OneFOneB;
    Strategy strategy = Strategy::Ddp;
    PrecisionKind precision = PrecisionKind::Fp32;
    bool bf16Gemm = false; // mixed precision's linear layers on the CPU's bf16 units
    int steps = 2;
};

struct RankRun {
    std::string ops;        // the stage's forwards, backwards and Ws as run: "FFBFB…"
    comm::CommStats comm;   // summed over the rank's groups, whole run
    std::uint64_t peak = 0; // device tier
    std::uint64_t activationPeak = 0;
    std::vector<double> losses;
};

struct MeshRun {
    std::vector<double> losses; // rank 0's
    std::uint64_t digest = 0;
    std::vector<RankRun> ranks;
};

MeshRun runMesh(const Mesh& m) {
    const int n = m.pp * m.tp * m.dp;
    std::vector<std::unique_ptr<Ledger>> ledgers;
    std::vector<std::unique_ptr<device::CpuDevice>> devices;
    std::vector<device::Device*> raw;
    for (int r = 0; r < n; ++r) {
        ledgers.push_back(std::make_unique<Ledger>(r));
        devices.push_back(std::make_unique<device::CpuDevice>(*ledgers.back()));
        raw.push_back(devices.back().get());
    }
    std::vector<std::unique_ptr<comm::Communicator>> owned = comm::makeSharedHostCommunicators(raw);
    std::vector<strategy::CommGroups> groups(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
        groups[static_cast<std::size_t>(r)].world = owned[static_cast<std::size_t>(r)].get();
    auto split = [&](auto color, comm::Communicator* strategy::CommGroups::*slot) {
        for (const std::vector<int>& members : plan::groupsBy(n, color)) {
            std::vector<device::Device*> devs;
            for (int r : members)
                devs.push_back(raw[static_cast<std::size_t>(r)]);
            auto group = comm::makeSharedHostCommunicators(devs);
            for (std::size_t i = 0; i < members.size(); ++i) {
                groups[static_cast<std::size_t>(members[i])].*slot = group[i].get();
                owned.push_back(std::move(group[i]));
            }
        }
    };
    const int t = m.tp, d = m.dp;
    if (t > 1) split([&](int r) { return plan::tensorColor(r, t); }, &strategy::CommGroups::tensor);
    split([&](int r) { return plan::dataColor(r, t, d); }, &strategy::CommGroups::data);
    if (m.pp > 1)
        split([&](int r) { return plan::pipeColor(r, t, d); }, &strategy::CommGroups::pipe);
    for (auto& g : groups)
        g.shard = g.data;

    plan::GptShape s = shape(m.layers);
    MeshRun out;
    out.ranks.resize(static_cast<std::size_t>(n));
    std::mutex failed;
    std::exception_ptr error;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                const auto at = static_cast<std::size_t>(r);
                const int stage = r / (t * d);
                const std::vector<plan::StageUnits> chunks =
                    m.pp > 1 ? plan::stageChunks(static_cast<int>(s.layers), m.pp, m.virtualStages,
                                                 stage)
                             : std::vector<plan::StageUnits>{{0, static_cast<int>(s.layers) + 2}};
                const plan::StageUnits units{chunks.front().first, chunks.back().end};
                RankRun& mine = out.ranks[at];
                ledgers[at]->setSink([&, chunks](const Event& e) {
                    if (e.kind != EventKind::ComputeBegin) return;
                    for (const plan::StageUnits& c : chunks) { // one letter per chunk op
                        if (e.phase == Phase::Forward && e.unit == c.first) mine.ops += 'F';
                        if (e.phase == Phase::Backward && e.unit == c.end - 1) mine.ops += 'B';
                        if (e.phase == Phase::WeightGrad && e.unit == c.end - 1) mine.ops += 'W';
                    }
                });
                device::CpuDevice& cpu = *devices[at];
                const model::MarkovSource data(s.vocab, s.seqLen, kMicroBatch, 5);
                strategy::StrategyConfig sc;
                sc.strategy = m.strategy;
                sc.precision = m.precision;
                sc.shape = s;
                sc.shape.tp = t;
                sc.seed = 5;
                sc.knobs.gradAccumSteps = m.micro;
                if (m.pp > 1) {
                    sc.firstUnit = units.first;
                    sc.endUnit = units.end;
                    sc.virtualStages = m.virtualStages;
                }
                auto sharding = strategy::makeSharding(sc, cpu, groups[at]);
                train::TrainConfig tc;
                tc.model = {sc.shape, kMicroBatch, false};
                tc.precision = m.precision;
                tc.optimizer.learningRate = 0.01;
                tc.seed = 5;
                tc.gradAccumSteps = m.micro;
                tc.pipeSchedule = m.schedule;
                tc.bf16Gemm = m.bf16Gemm;
                tc.virtualStages = m.virtualStages;
                train::Trainer trainer(tc, cpu, data, sharding.get());
                for (int k = 0; k < m.steps; ++k)
                    mine.losses.push_back(trainer.step().loss);
                for (comm::Communicator* c : groups[at].distinct())
                    mine.comm.add(c->stats());
                mine.peak = ledgers[at]->peakBytes();
                mine.activationPeak = ledgers[at]->peak().category(Category::Activation);
                const auto weights = trainer.fullWeights();
                if (r == 0) {
                    out.losses = mine.losses;
                    out.digest = train::fnv1a(weights);
                }
            } catch (...) {
                const std::lock_guard<std::mutex> lock(failed);
                if (!error) error = std::current_exception();
                owned[static_cast<std::size_t>(r)].reset(); // breaks the world: peers fail fast
            }
        });
    }
    for (std::thread& th : threads)
        th.join();
    if (error) std::rethrow_exception(error);
    return out;
}

std::string kindsOf(const std::vector<plan::PipeOp>& ops) {
    std::string out;
    for (const plan::PipeOp& op : ops)
        out += op.kind == plan::PipeOpKind::Forward    ? 'F'
               : op.kind == plan::PipeOpKind::Backward ? 'B'
                                                       : 'W';
    return out;
}

std::string meshName(const Mesh& m) {
    return "P=" + std::to_string(m.pp) +
           (m.virtualStages > 1 ? "×V=" + std::to_string(m.virtualStages) : std::string()) +
           " T=" + std::to_string(m.tp) + " D=" + std::to_string(m.dp) +
           " M=" + std::to_string(m.micro) + " " + std::string(plan::traits(m.schedule).flag) +
           " " + std::string(plan::strategyName(m.strategy)) +
           (m.precision == PrecisionKind::Fp32 ? " fp32" : " bf16");
}

TEST(pipelineParallel, EverySplitAndScheduleIsBitwiseGradientAccumulationOnOneStage) {
    for (const int micro : {1, 2, 4, 8}) {
        Mesh one;
        one.micro = micro;
        const MeshRun reference = runMesh(one);
        for (const int pp : {2, 3, 4})
            for (const PipeSchedule schedule :
                 {PipeSchedule::GPipe, PipeSchedule::OneFOneB, PipeSchedule::ZeroBubbleH1}) {
                Mesh m = one;
                m.pp = pp;
                m.schedule = schedule;
                const MeshRun run = runMesh(m);
                EXPECT_EQ(run.losses, reference.losses) << meshName(m);
                EXPECT_EQ(run.digest, reference.digest) << meshName(m);
                // Each stage ran its schedule's order, op by op, every step, and held the
                // activations theory/pipeline.h says, byte for byte.
                const auto order = plan::pipeOrder(schedule, {pp, micro, 1});
                const auto held = theory::pipeActivations(schedule, {pp, micro, 1}, shape(),
                                                          {kMicroBatch, false});
                for (int stage = 0; stage < pp; ++stage) {
                    const std::string kinds = kindsOf(order[static_cast<std::size_t>(stage)]);
                    std::string expected;
                    for (int k = 0; k < m.steps; ++k)
                        expected += kinds;
                    EXPECT_EQ(run.ranks[static_cast<std::size_t>(stage)].ops, expected)
                        << meshName(m) << " stage " << stage;
                    EXPECT_EQ(run.ranks[static_cast<std::size_t>(stage)].activationPeak,
                              held[static_cast<std::size_t>(stage)].peakBytes)
                        << meshName(m) << " stage " << stage;
                }
            }
    }
}

// Interleaved 1F1B: each rank holds V chunks (virtual stage c·P + s), a micro-batch passes every
// rank V times, the last rank hands chunk c's output to rank 0's chunk c + 1. Each unit still
// accumulates its micro-batches in order 0 … M − 1 (a chunk's backwards run in that order):
// bitwise gradient accumulation on one stage, every split, with the schedule's op order and the
// activations theory::pipeActivations says, byte for byte.
TEST(pipelineParallel, InterleavedChunksAreBitwiseGradientAccumulationOnOneStage) {
    struct Case {
        int pp, v;
        std::int64_t layers;
    };
    for (const Case k : {Case{2, 2, 5}, Case{2, 3, 7}, Case{3, 2, 7}, Case{4, 2, 8}})
        for (const int micro : {k.pp, 2 * k.pp}) {
            Mesh one;
            one.layers = k.layers;
            one.micro = micro;
            const MeshRun reference = runMesh(one);
            Mesh m = one;
            m.pp = k.pp;
            m.virtualStages = k.v;
            m.schedule = PipeSchedule::Interleaved;
            const MeshRun run = runMesh(m);
            EXPECT_EQ(run.losses, reference.losses) << meshName(m);
            EXPECT_EQ(run.digest, reference.digest) << meshName(m);
            const plan::PipeShape shape3{k.pp, micro, k.v};
            const auto order = plan::pipeOrder(m.schedule, shape3);
            const auto held =
                theory::pipeActivations(m.schedule, shape3, shape(k.layers), {kMicroBatch, false});
            for (int stage = 0; stage < k.pp; ++stage) {
                const std::string kinds = kindsOf(order[static_cast<std::size_t>(stage)]);
                EXPECT_EQ(run.ranks[static_cast<std::size_t>(stage)].ops, kinds + kinds)
                    << meshName(m) << " stage " << stage;
                EXPECT_EQ(run.ranks[static_cast<std::size_t>(stage)].activationPeak,
                          held[static_cast<std::size_t>(stage)].peakBytes)
                    << meshName(m) << " stage " << stage;
            }
        }
}

TEST(pipelineParallel, InterleavedStagesUnderEveryStrategyAreBitwiseTheUnpipelinedMesh) {
    for (const PrecisionKind precision : {PrecisionKind::Fp32, PrecisionKind::MixedBf16})
        for (const Strategy strategy : {Strategy::Ddp, Strategy::Zero1, Strategy::Zero2,
                                        Strategy::Zero3, Strategy::FsdpFullShard}) {
            Mesh flat;
            flat.dp = 2;
            flat.micro = 4;
            flat.strategy = strategy;
            flat.precision = precision;
            Mesh piped = flat;
            piped.pp = 2;
            piped.virtualStages = 2;
            piped.schedule = PipeSchedule::Interleaved;
            const MeshRun a = runMesh(flat), b = runMesh(piped);
            EXPECT_EQ(b.losses, a.losses) << meshName(piped);
            EXPECT_EQ(b.digest, a.digest) << meshName(piped);
        }
}

TEST(pipelineParallel, StagesExchangeOneActivationAndOneGradientPerMicroBatch) {
    Mesh m;
    m.pp = 3;
    m.micro = 4;
    m.steps = 1;
    const MeshRun run = runMesh(m);
    const plan::GptShape s = shape();
    const std::uint64_t boundary =
        static_cast<std::uint64_t>(kMicroBatch * s.seqLen * s.dModel) * sizeof(float);
    const auto send = static_cast<std::size_t>(CollectiveOp::PipeSend);
    const auto recv = static_cast<std::size_t>(CollectiveOp::PipeRecv);
    for (int stage = 0; stage < 3; ++stage) {
        const comm::CommStats& c = run.ranks[static_cast<std::size_t>(stage)].comm;
        // Forward: an activation to the next stage; backward: its gradient to the previous.
        const std::uint64_t sends = (stage < 2 ? 4u : 0u) + (stage > 0 ? 4u : 0u);
        EXPECT_EQ(c.calls[send], sends) << "stage " << stage;
        EXPECT_EQ(c.calls[recv], sends) << "stage " << stage;
        EXPECT_EQ(c.payloadBytes[send], sends * boundary) << "stage " << stage;
        EXPECT_EQ(c.sentBytes[send], sends * boundary) << "stage " << stage;
        EXPECT_EQ(c.sentBytes[recv], 0u) << "stage " << stage; // the sender counts the bytes
    }
}

TEST(pipelineParallel, EveryStrategyInsideTheStagesIsBitwiseTheUnpipelinedMesh) {
    for (const PrecisionKind precision : {PrecisionKind::Fp32, PrecisionKind::MixedBf16})
        for (const Strategy strategy : {Strategy::Ddp, Strategy::Zero1, Strategy::Zero2,
                                        Strategy::Zero3, Strategy::FsdpFullShard}) {
            Mesh flat;
            flat.dp = 2;
            flat.micro = 3;
            flat.strategy = strategy;
            flat.precision = precision;
            const MeshRun a = runMesh(flat);
            for (const PipeSchedule schedule :
                 {PipeSchedule::OneFOneB, PipeSchedule::ZeroBubbleH1}) {
                Mesh piped = flat;
                piped.pp = 2;
                piped.schedule = schedule;
                const MeshRun b = runMesh(piped);
                EXPECT_EQ(b.losses, a.losses) << meshName(piped);
                EXPECT_EQ(b.digest, a.digest) << meshName(piped);
            }
        }
}

// ZB-H1's W on the bf16 GEMM path: the bf16 copy of each kept output gradient is made again,
// the same rounding, so the weight gradients are the fused backward's bit for bit.
TEST(pipelineParallel, ASplitBackwardOnBf16GemmsIsBitwiseTheFusedOne) {
    Mesh flat;
    flat.dp = 2;
    flat.micro = 4;
    flat.strategy = Strategy::Zero3;
    flat.precision = PrecisionKind::MixedBf16;
    flat.bf16Gemm = true;
    Mesh piped = flat;
    piped.pp = 3;
    piped.schedule = PipeSchedule::ZeroBubbleH1;
    const MeshRun a = runMesh(flat), b = runMesh(piped);
    EXPECT_EQ(b.losses, a.losses) << meshName(piped);
    EXPECT_EQ(b.digest, a.digest) << meshName(piped);
}

TEST(pipelineParallel, APipelineOfTensorParallelStagesIsBitwiseTheTensorParallelMesh) {
    Mesh tp;
    tp.tp = 2;
    tp.dp = 2;
    tp.micro = 2;
    tp.strategy = Strategy::Zero3;
    Mesh mesh = tp;
    mesh.pp = 2; // 8 rank threads: P = 2 × T = 2 × D = 2
    const MeshRun a = runMesh(tp);
    for (const PipeSchedule schedule : {PipeSchedule::OneFOneB, PipeSchedule::ZeroBubbleH1}) {
        mesh.schedule = schedule;
        const MeshRun b = runMesh(mesh);
        EXPECT_EQ(b.losses, a.losses) << meshName(mesh);
        EXPECT_EQ(b.digest, a.digest) << meshName(mesh);
    }
}

TEST(pipelineParallel, GPipeHoldsMoreActivationsThan1F1BOnTheFirstStage) {
    Mesh m;
    m.pp = 4;
    m.micro = 8;
    m.steps = 1;
    m.schedule = PipeSchedule::GPipe;
    const MeshRun gpipe = runMesh(m);
    m.schedule = PipeSchedule::OneFOneB;
    const MeshRun oneF = runMesh(m);
    // GPipe keeps all 8 micro-batches' activations before its first backward; 1F1B at most
    // P − s = 4 on stage 0 (theory/pipeline.h).
    EXPECT_GT(gpipe.ranks[0].peak, oneF.ranks[0].peak);
    // 1F1B's last stage has nobody to wait for: one forward and one backward in turn.
    EXPECT_EQ(oneF.ranks[3].ops, "FBFBFBFBFBFBFBFB");
}

} // namespace
} // namespace shardscope
