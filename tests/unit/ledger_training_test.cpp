// The ledger of a real training step against the theory engine: model states byte for byte
// (theory::modelStates) and the activation peak (theory::activationBreakdown), with and
// without checkpointing; activations freed in backward; the capacity budget.
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "model/data.h"
#include "runconfig/presets.h"
#include "theory/activations.h"
#include "theory/estimate.h"
#include "theory/pipeline.h"
#include "train/trainer.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

namespace shardscope {
namespace {

using plan::PrecisionKind;

struct Rig {
    explicit Rig(PrecisionKind precision, bool checkpointing = false, std::int64_t microBatch = 0,
                 std::optional<std::uint64_t> capacity = std::nullopt)
        : preset(runconfig::modelPreset("tiny")), cpu(ledger),
          data(preset.shape.vocab, preset.shape.seqLen, microBatch ? microBatch : preset.microBatch,
               1) {
        ledger.setCapacity(Tier::Device, capacity);
        cfg.model = {preset.shape, data.microBatch(), checkpointing};
        cfg.precision = precision;
        cfg.seed = 1;
    }
    train::Trainer& trainer() {
        if (!t) t = std::make_unique<train::Trainer>(cfg, cpu, data);
        return *t;
    }
    theory::Scenario scenario() const {
        theory::Scenario s;
        s.shape = preset.shape;
        s.precision.kind = cfg.precision;
        s.activations = {cfg.model.microBatch, cfg.model.checkpointing};
        return s;
    }
    runconfig::ModelPreset preset;
    Ledger ledger;
    device::CpuDevice cpu;
    model::MarkovSource data;
    train::TrainConfig cfg;
    std::unique_ptr<train::Trainer> t;
};

ByteTable modelStateCells(const ByteTable& live) {
    ByteTable t;
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other)
            for (Tier tier : kAllTiers)
                t.at(c, tier) = live.at(c, tier);
    return t;
}

TEST(ledgerTraining, MixedPrecisionModelStatesAreSixteenBytesPerParameterAndMatchTheory) {
    Rig rig(PrecisionKind::MixedBf16);
    const std::uint64_t psi = rig.trainer().paramCount();
    EXPECT_EQ(psi, 71'900u);
    EXPECT_EQ(rig.ledger.liveBytes(), 16 * psi);
    const ByteTable& live = rig.ledger.live();
    EXPECT_EQ(live.category(Category::ParamFull), 2 * psi);
    EXPECT_EQ(live.category(Category::GradFull), 2 * psi);
    EXPECT_EQ(live.category(Category::MasterFp32), 4 * psi);
    EXPECT_EQ(live.category(Category::AdamM), 4 * psi);
    EXPECT_EQ(live.category(Category::AdamV), 4 * psi);
    const theory::ModelStates theoryStates = theory::modelStates(rig.scenario());
    EXPECT_EQ(live, theoryStates.perRank) << "per (category, tier), byte for byte";
    rig.trainer().step();
    rig.trainer().step();
    EXPECT_EQ(modelStateCells(rig.ledger.live()), theoryStates.perRank);
    EXPECT_EQ(rig.ledger.liveBytes(), 16 * psi) << "a step leaves nothing but the model states";
}

TEST(ledgerTraining, Fp32ModelStatesMatchTheory) {
    Rig rig(PrecisionKind::Fp32);
    const std::uint64_t psi = rig.trainer().paramCount();
    EXPECT_EQ(rig.ledger.live().category(Category::ParamFull), 4 * psi);
    EXPECT_EQ(rig.ledger.live().category(Category::MasterFp32), 0u);
    EXPECT_EQ(rig.ledger.live(), theory::modelStates(rig.scenario()).perRank);
}

TEST(ledgerTraining, ActivationPeakEqualsTheoryWithAndWithoutCheckpointing) {
    for (PrecisionKind precision : {PrecisionKind::MixedBf16, PrecisionKind::Fp32}) {
        for (bool checkpointing : {false, true}) {
            for (std::int64_t microBatch : {1, 3}) {
                Rig rig(precision, checkpointing, microBatch);
                rig.trainer().step();
                rig.trainer().step();
                const auto predicted =
                    theory::activationBreakdown(rig.preset.shape, {microBatch, checkpointing});
                EXPECT_EQ(rig.ledger.peak().category(Category::Activation), predicted.peakBytes)
                    << "checkpointing " << checkpointing << " micro-batch " << microBatch;
                EXPECT_EQ(rig.ledger.live().category(Category::Activation), 0u);
                EXPECT_EQ(rig.ledger.live().category(Category::Workspace), 0u);
            }
        }
    }
    // Checkpointing must actually save memory on this shape.
    const plan::GptShape tiny = runconfig::modelPreset("tiny").shape;
    EXPECT_LT(theory::activationBreakdown(tiny, {4, true}).peakBytes,
              theory::activationBreakdown(tiny, {4, false}).peakBytes);
}

TEST(ledgerTraining, EachUnitAllocatesExactlyTheListedTensorsAndFreesThemInBackward) {
    for (bool checkpointing : {false, true}) {
        std::vector<Event> events; // declared first: the sink sees the frees of ~Rig too
        Rig rig(PrecisionKind::MixedBf16, checkpointing);
        rig.ledger.setSink([&](const Event& e) { events.push_back(e); });
        rig.trainer().step();
        const auto predicted =
            theory::activationBreakdown(rig.preset.shape, {rig.data.microBatch(), checkpointing});
        const std::int32_t headUnit = static_cast<std::int32_t>(rig.preset.shape.layers) + 1;

        std::map<std::int32_t, std::uint64_t>
            forwardBytes; // activation allocs per unit, forward only
        bool inBackward = false;
        int recomputes = 0;
        std::uint64_t allocated = 0, freed = 0;
        for (const Event& e : events) {
            if (e.kind == EventKind::ComputeBegin && e.phase == Phase::Backward) inBackward = true;
            if (e.kind == EventKind::ComputeBegin && e.phase == Phase::Recompute) ++recomputes;
            if (e.category != Category::Activation) continue;
            if (e.kind == EventKind::Alloc) {
                allocated += e.bytes;
                if (!inBackward) forwardBytes[e.unit] += e.bytes;
            }
            if (e.kind == EventKind::Free) {
                freed += e.bytes;
                if (!checkpointing) {
                    EXPECT_TRUE(inBackward) << "no activation is freed during forward";
                }
            }
        }
        EXPECT_EQ(allocated, freed);
        EXPECT_EQ(forwardBytes[0], theory::totalBytes(predicted.embedding));
        for (std::int32_t u = 1; u < headUnit; ++u)
            EXPECT_EQ(forwardBytes[u], theory::totalBytes(predicted.blockFull))
                << "block unit " << u;
        EXPECT_EQ(forwardBytes[headUnit], theory::totalBytes(predicted.head));
        EXPECT_EQ(recomputes, checkpointing ? rig.preset.shape.layers : 0);
        // Recompute allocates the block set without its output (nobody reads it in backward).
        const std::uint64_t outBytes = predicted.perBlock.back().bytes;
        if (checkpointing) {
            EXPECT_EQ(allocated, theory::totalBytes(predicted.embedding) +
                                     theory::totalBytes(predicted.head) +
                                     static_cast<std::uint64_t>(rig.preset.shape.layers) *
                                         (2 * theory::totalBytes(predicted.blockFull) - outBytes));
        }
    }
}

// A split backward (zb1): after every unit's B the ledger holds, in workspace, exactly what
// theory::splitBackwardKept says W needs (the linear layers' output gradients and the
// LayerNorms' gradients; the embedding's output gradient), and W then computes the fused
// backward's gradients bit for bit and frees all of it and the activations W read.
TEST(ledgerTraining, ASplitBackwardKeepsWhatTheoryCountsAndGivesTheFusedGradients) {
    const runconfig::ModelPreset preset = runconfig::modelPreset("tiny");
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    const model::ModelConfig mc{preset.shape, preset.microBatch, false};
    const model::MarkovSource data(preset.shape.vocab, preset.shape.seqLen, preset.microBatch, 1);
    const model::Batch batch = data.batchFor(0, 0, 1);
    model::GptModel fused(mc, cpu), split(mc, cpu);
    const std::int32_t units = fused.unitCount();
    std::vector<std::vector<float>> params(static_cast<std::size_t>(units)),
        fusedGrads(params.size()), splitGrads(params.size());
    for (std::int32_t u = 0; u < units; ++u) {
        const std::size_t n = fused.units()[static_cast<std::size_t>(u)].elements();
        auto& p = params[static_cast<std::size_t>(u)];
        for (std::size_t i = 0; i < n; ++i)
            p.push_back(0.02f * std::sin(static_cast<float>(i % 977) + static_cast<float>(u)));
        fusedGrads[static_cast<std::size_t>(u)].assign(n, 0.0f);
        splitGrads[static_cast<std::size_t>(u)].assign(n, 0.0f);
    }
    for (model::GptModel* m : {&fused, &split})
        for (std::int32_t u = 0; u < units; ++u)
            m->forward(u, params[static_cast<std::size_t>(u)].data(), batch);
    for (std::int32_t u = units - 1; u >= 0; --u)
        fused.backward(u, params[static_cast<std::size_t>(u)].data(),
                       fusedGrads[static_cast<std::size_t>(u)].data());
    const std::uint64_t workspaceBefore = ledger.live().category(Category::Workspace);
    for (std::int32_t u = units - 1; u >= 0; --u)
        split.backwardInput(u, params[static_cast<std::size_t>(u)].data());
    const theory::SplitKept kept =
        theory::splitBackwardKept(preset.shape, {preset.microBatch, false});
    EXPECT_EQ(ledger.live().category(Category::Workspace) - workspaceBefore,
              static_cast<std::uint64_t>(preset.shape.layers) * kept.perBlock + kept.head +
                  kept.embedding);
    for (std::int32_t u = units - 1; u >= 0; --u)
        split.backwardWeights(u, splitGrads[static_cast<std::size_t>(u)].data());
    EXPECT_EQ(splitGrads, fusedGrads);
    EXPECT_EQ(ledger.live().category(Category::Workspace), workspaceBefore);
    EXPECT_EQ(ledger.live().category(Category::Activation), 0u);
}

TEST(ledgerTraining, CapacityBudgetStopsTheStepAndNamesTheAllocation) {
    const std::uint64_t states = 16u * 71'900u;
    {
        Rig rig(PrecisionKind::Fp32, false, 0, states + 1000);
        train::Trainer& trainer = rig.trainer(); // states fit exactly
        try {
            trainer.step();
            FAIL() << "expected OutOfMemory";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
            const std::string m = e.what();
            // token ids (512 B) fit; the embedding output (4·128·50 = 25600 B) does not.
            EXPECT_NE(m.find("25600 bytes of activation for embedding"), std::string::npos) << m;
        }
        EXPECT_EQ(rig.ledger.liveBytes(), states) << "the failed step released everything it held";
    }
    {
        Rig rig(PrecisionKind::MixedBf16, false, 0, states + 1000);
        try {
            rig.trainer().step();
            FAIL() << "expected OutOfMemory";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("24200 bytes of workspace for embedding"), std::string::npos) << m;
        }
    }
    {
        Rig rig(PrecisionKind::MixedBf16, false, 0, 1000);
        try {
            rig.trainer();
            FAIL() << "model states cannot fit in 1000 bytes";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
            EXPECT_NE(std::string(e.what()).find("param_full for embedding"), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(rig.ledger.liveBytes(), 0u);
    }
}

} // namespace
} // namespace shardscope
