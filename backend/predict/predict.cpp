#include "predict/predict.h"

#include "comm/virtual_communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/counting_device.h"
#include "model/data.h"
#include "plan/policy.h"
#include "strategy/sharding.h"
#include "theory/activations.h"
#include "theory/pipeline.h"
#include "train/trainer.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace shardscope::predict {

namespace {

// Names the part of the step the strategy is in when an allocation happens: the phase of the
// peak. Delegates everything to the real strategy.
class PhaseMarks final : public strategy::Sharding {
public:
    PhaseMarks(strategy::Sharding& inner, std::string& phase) : inner_(inner), phase_(phase) {}
    std::string name() const override { return inner_.name(); }
    const std::vector<plan::UnitLayout>& units() const override { return inner_.units(); }
    comm::Communicator& world() override { return inner_.world(); }
    int dataRank() const override { return inner_.dataRank(); }
    int dataRanks() const override { return inner_.dataRanks(); }
    comm::Communicator& dataGroup() override { return inner_.dataGroup(); }
    comm::Communicator* tensorGroup() override { return inner_.tensorGroup(); }
    comm::Communicator* pipeGroup() override { return inner_.pipeGroup(); }
    std::int32_t firstUnit() const override { return inner_.firstUnit(); }
    std::int32_t endUnit() const override { return inner_.endUnit(); }
    void beforeForward(std::int32_t u) override {
        phase_ = "forward of " + unitName(u);
        inner_.beforeForward(u);
    }
    void afterForward(std::int32_t u) override { inner_.afterForward(u); }
    void beforeBackward(std::int32_t u) override {
        phase_ = "backward of " + unitName(u);
        inner_.beforeBackward(u);
    }
    strategy::ParamView params(std::int32_t u) const override { return inner_.params(u); }
    void storeGradients(std::int32_t u, std::span<const float> g,
                        const strategy::MicroStep& m) override {
        inner_.storeGradients(u, g, m);
    }
    void afterInputGradients(std::int32_t u) override { inner_.afterInputGradients(u); }
    void afterWeightGradients(std::int32_t u, const strategy::MicroStep& m) override {
        phase_ = "gradient reduction of " + unitName(u);
        inner_.afterWeightGradients(u, m);
    }
    void endBackward(const strategy::MicroStep& m) override {
        phase_ = "gradient reduce-scatter";
        inner_.endBackward(m);
    }
    strategy::OwnedSlice owned(std::int32_t u) override { return inner_.owned(u); }
    strategy::OwnedSlice beginUpdate(std::int32_t u, strategy::OwnedSlice o) override {
        return inner_.beginUpdate(u, o);
    }
    void endUpdate(std::int32_t u) override { inner_.endUpdate(u); }
    void afterOptimizer() override {
        phase_ = "parameter all-gather";
        inner_.afterOptimizer();
    }
    std::vector<std::vector<float>> gatherWeights() override { return inner_.gatherWeights(); }
    void discardTransients() override { inner_.discardTransients(); }

private:
    std::string unitName(std::int32_t u) const {
        return inner_.units()[static_cast<std::size_t>(u)].name();
    }
    strategy::Sharding& inner_;
    std::string& phase_;
};

// The ledger's events during the step: the snapshot at the device-tier peak and the collectives.
struct StepWatch {
    const Ledger* ledger = nullptr;
    const std::string* phase = nullptr;
    StepPrediction* out = nullptr;
    void operator()(const Event& e) const {
        if (e.kind == EventKind::Alloc && e.tier == Tier::Device) {
            const std::uint64_t live = ledger->liveTierBytes(Tier::Device);
            if (live > out->peakBytes) {
                out->peakBytes = live;
                out->atPeak = ledger->live();
                out->peakPhase = *phase;
            }
        } else if (e.kind == EventKind::CollectiveBegin) {
            out->collectives.push_back({e.collective, e.unit, e.bytes, e.peers});
        }
    }
};

// The trainer keeps fp32 master, m and v on the device. A custom optimizer (K bytes per
// parameter) and offloaded states (ZeRO-Offload) change only those persistent cells — and the
// tier of the param and gradient shards — which are the same at every moment of the step: rescale
// and move them, and the device peak moves by the same constant (the phase of the peak does not
// change).
void restateOptimizer(StepPrediction& p, const theory::Scenario& s) {
    struct Move {
        Category category;
        std::optional<std::uint32_t> bytesPerElement; // none: keep the bytes
        Tier tier;
    };
    const std::uint32_t fp32 = sizeof(float);
    const Move moves[] = {
        {Category::MasterFp32, s.precision.masterBytes(), s.offload.optimizer},
        {Category::AdamM, s.precision.adamMBytes(), s.offload.optimizer},
        {Category::AdamV, s.precision.adamVBytes(), s.offload.optimizer},
        {Category::ParamShard, std::nullopt, s.offload.param},
        // ZeRO-Offload: the CPU optimizer reads the gradient shards from the host.
        {Category::GradShard, std::nullopt,
         s.offload.optimizer == Tier::Device ? Tier::Device : Tier::Host},
    };
    for (const Move& m : moves) {
        const std::uint64_t before = p.stepStart.at(m.category, Tier::Device);
        const std::uint64_t after = m.bytesPerElement ? before / fp32 * *m.bytesPerElement : before;
        if (before == after && m.tier == Tier::Device) continue;
        for (ByteTable* t : {&p.stepStart, &p.atPeak, &p.categoryPeaks, &p.modelStates}) {
            t->at(m.category, Tier::Device) = 0;
            t->at(m.category, m.tier) = after;
        }
        p.peakBytes = p.peakBytes - before + (m.tier == Tier::Device ? after : 0);
    }
}

// Whether the engine runs this offload itself (strategy/sharded.cpp: the optimizer and params
// to host or NVMe, bf16, a strategy that shards what is offloaded).
bool runtimeOffload(const theory::Scenario& s) {
    const plan::Offload& o = s.offload;
    if (o.optimizer == Tier::Device && o.param == Tier::Device) return false;
    if (s.precision.kind != plan::PrecisionKind::MixedBf16) return false;
    const plan::Policy policy = plan::policyFor(s.strategy, s.knobs);
    return (o.optimizer == Tier::Device || policy.shardOptimizer) &&
           (o.param == Tier::Device || policy.shardParams);
}

} // namespace

StepPrediction predictStep(const theory::Scenario& s, int rank) {
    if (!s.shape) throwInvalid("a dry run needs a model shape");
    theory::validate(s);
    if (rank < 0 || rank >= s.ranks)
        throwInvalid("rank " + std::to_string(rank) + " is not one of " + std::to_string(s.ranks));

    Ledger ledger(rank);
    device::CountingDevice device(ledger);

    // The communicators the worker would give this rank (app/worker/backends.cpp).
    const auto kind =
        s.knobs.sharedDeviceCollectives ? comm::VirtualKind::SharedGroup : comm::VirtualKind::Mpi;
    // With tensor parallelism s.ranks is the DP group and `rank` this rank's place in it; the
    // rank is TP rank 0 of a T-rank TP group (every TP rank holds the same slice sizes).
    // With a pipeline, the rank is in stage s.pipeStage: its world rank is that stage's block.
    const int tp = static_cast<int>(s.shape->tp), stages = s.pipeStages;
    std::unique_ptr<comm::Communicator> world = comm::makeVirtualCommunicator(
        &device, s.ranks * tp * stages, (s.pipeStage * s.ranks + rank) * tp, kind);
    std::unique_ptr<comm::Communicator> shardGroup, replicaGroup, dataGroup, tensorGroup, pipeGroup;
    strategy::CommGroups groups{world.get(), world.get(), nullptr};
    if (tp > 1 || stages > 1) {
        dataGroup = comm::makeVirtualCommunicator(&device, s.ranks, rank, kind);
        groups.data = groups.shard = dataGroup.get();
    }
    if (tp > 1) {
        tensorGroup = comm::makeVirtualCommunicator(&device, tp, 0, kind);
        groups.tensor = tensorGroup.get();
    }
    if (stages > 1) {
        pipeGroup = comm::makeVirtualCommunicator(&device, stages, s.pipeStage, kind);
        groups.pipe = pipeGroup.get();
    }
    if (s.strategy == plan::Strategy::FsdpHybridShard) {
        const int g = s.knobs.hybridGroupSize;
        shardGroup = comm::makeVirtualCommunicator(&device, g, rank % g, kind);
        replicaGroup = comm::makeVirtualCommunicator(&device, s.ranks / g, rank / g, kind);
        groups.shard = shardGroup.get();
        groups.replica = replicaGroup.get();
    }
    for (comm::Communicator* c : groups.distinct())
        c->setDeterministic(s.knobs.deterministicReductions);

    strategy::StrategyConfig sc;
    sc.strategy = s.strategy;
    sc.knobs = s.knobs;
    if (s.strategy == plan::Strategy::FsdpShardGradOp) sc.knobs.reshardAfterForward = false;
    // fp16 and a custom optimizer have bf16's working copy (2 + 2 bytes), and the trainer runs
    // bf16.
    const plan::PrecisionKind precision = s.precision.kind == plan::PrecisionKind::Fp32
                                              ? plan::PrecisionKind::Fp32
                                              : plan::PrecisionKind::MixedBf16;
    sc.precision = precision;
    sc.shape = *s.shape;
    if (stages > 1) {
        const plan::StageUnits units = s.stageUnits();
        sc.firstUnit = units.first;
        sc.endUnit = units.end;
        sc.virtualStages = s.virtualStages;
    }
    // Offload the strategy runs (host tier, bf16) is dry-run as such: its staging buffers and
    // the device-side reduce buffers are then in the prediction. Anything else (NVMe, fp16, a
    // custom optimizer, DDP) is restated afterwards (restateOptimizer).
    const bool runsOffload = runtimeOffload(s);
    if (runsOffload) sc.offload = s.offload;
    std::unique_ptr<strategy::Sharding> sharding = strategy::makeSharding(sc, device, groups);
    std::string phase = "start of step";
    PhaseMarks marked(*sharding, phase);

    train::TrainConfig tc;
    tc.model = {*s.shape, s.activations.microBatch, s.activations.checkpointing};
    tc.precision = precision;
    tc.gradAccumSteps = s.knobs.gradAccumSteps;
    tc.bf16Gemm = s.knobs.bf16Gemm; // the trainer takes it in bf16 only
    tc.pipeSchedule = s.pipeSchedule;
    tc.virtualStages = stages > 1 ? s.virtualStages : 1;
    const model::MarkovSource data(s.shape->vocab, s.shape->seqLen, s.activations.microBatch, 0);
    train::Trainer trainer(tc, device, data, &marked);

    StepPrediction out;
    out.stepStart = ledger.live();
    out.atPeak = ledger.live();
    out.peakBytes = ledger.liveTierBytes(Tier::Device);
    out.peakPhase = phase;
    for (comm::Communicator* c : groups.distinct())
        c->resetStats();
    ledger.resetPeaks();
    ledger.setSink(StepWatch{&ledger, &phase, &out});
    const train::StepResult r = trainer.step();
    ledger.setSink({});
    out.categoryPeaks = ledger.peak();
    out.modelStates = r.modelStates;
    for (comm::Communicator* c : groups.distinct())
        out.comm.add(c->stats());
    for (Tier t : kAllTiers)
        out.tierPeaks[index(t)] = ledger.peakTierBytes(t);
    if (runsOffload) {
        theory::Scenario onDevice = s; // the tiers are already real: rescale bytes only
        onDevice.offload = {};
        restateOptimizer(out, onDevice);
    } else {
        restateOptimizer(out, s);
        // Restated tiers: the host and NVMe peaks are their persistent states.
        for (Tier t : {Tier::Host, Tier::Nvme})
            out.tierPeaks[index(t)] = out.stepStart.tier(t);
    }
    out.tierPeaks[index(Tier::Device)] = out.peakBytes;
    return out;
}

theory::PeakPrediction predictPeak(const theory::Scenario& s) {
    if (!s.shape) return theory::closedFormPeak(s);
    const StepPrediction step = predictStep(s);
    const theory::ModelStates states = theory::modelStates(s);
    theory::PeakPrediction out;
    out.modelStates = step.modelStates;
    out.paddingBytes = states.paddingBytes;
    out.peakBytes = step.peakBytes;
    for (Category c : kAllCategories) {
        out.atPeak.at(c, Tier::Device) = step.atPeak.at(c, Tier::Device);
        out.categoryPeaks.at(c, Tier::Device) = step.categoryPeaks.at(c, Tier::Device);
    }
    out.peakPhase = step.peakPhase;
    out.tierPeaks = step.tierPeaks;
    out.activationBytes =
        s.pipeStages > 1
            ? theory::pipeActivations(
                  s.pipeSchedule, {s.pipeStages, s.knobs.gradAccumSteps, s.virtualStages}, *s.shape,
                  s.activations,
                  s.knobs.bf16Gemm &&
                      s.precision.kind ==
                          plan::PrecisionKind::MixedBf16)[static_cast<std::size_t>(s.pipeStage)]
                  .peakBytes
            : theory::activationBreakdown(*s.shape, s.activations,
                                          s.knobs.bf16Gemm &&
                                              s.precision.kind == plan::PrecisionKind::MixedBf16)
                  .peakBytes;
    const auto grown = [&](Category c) {
        return out.categoryPeaks.category(c) - step.stepStart.at(c, Tier::Device);
    };
    out.gatheredBytes = grown(Category::ParamFull);
    out.gradFullBytes = grown(Category::GradFull);
    out.bucketBytes = out.categoryPeaks.category(Category::CommBuffer);
    out.workspaceBytes = out.categoryPeaks.category(Category::Workspace);
    if (plan::policyFor(s.strategy, s.knobs).reshardAfterForward)
        out.notes.push_back("gathered params at most " + std::to_string(out.gatheredBytes) +
                            " B ≤ largest unit × (1 + prefetch) = " +
                            std::to_string(theory::gatheredBytesBound(s)) + " B");
    out.notes.push_back("dry run of this implementation's step: the peak is at the " +
                        out.peakPhase);
    if (s.pipeStages > 1)
        out.notes.push_back(
            "pipeline stage " + std::to_string(s.pipeStage) + " of " +
            std::to_string(s.pipeStages) +
            ": a message's buffer is held until its neighbour has copied it, which the dry run "
            "(messages arrive at once) does not wait for: comm_buffer may peak higher");
    if (!s.knobs.deterministicReductions && !s.knobs.sharedDeviceCollectives && s.ranks > 1)
        out.notes.emplace_back(
            "MPI's internal reduction buffers are outside the ledger and not predicted");
    out.notes.emplace_back(
        "allocator rounding and fragmentation are not counted (the ledger counts requested bytes)");
    return out;
}

} // namespace shardscope::predict
