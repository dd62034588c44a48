// The whole GPT's gradient (fp32 compute) against central differences of the independent
// double-precision reference model, every parameter of every unit; with and without
// activation checkpointing.
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "model/data.h"
#include "model/gpt.h"
#include "model/rng.h"
#include "model_reference.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace shardscope {
namespace {

const plan::GptShape kShape{2, 8, 2, 11, 5};
constexpr std::int64_t kMicroBatch = 2;

// Random parameters, larger than GPT-2's init so every gradient is well above FD noise;
// values are fp32-representable so the reference sees exactly what the model sees.
std::vector<std::vector<float>> randomParams() {
    std::vector<std::vector<float>> params;
    model::Rng rng(77);
    for (const auto& unit : plan::unitLayouts(kShape)) {
        std::vector<float> p(unit.elements());
        for (const auto& s : unit.slots()) {
            const bool lnWeight = s.name.starts_with("ln") && s.name.ends_with(".weight");
            for (std::uint64_t i = 0; i < s.elements(); ++i)
                p[s.offset + i] = static_cast<float>((lnWeight ? 1.0 : 0.0) + 0.3 * rng.normal());
        }
        params.push_back(std::move(p));
    }
    return params;
}

struct Gradients {
    double loss = 0;
    std::vector<std::vector<float>> grads;
};

Gradients runModel(const std::vector<std::vector<float>>& params, const model::Batch& batch,
                   bool checkpointing, Ledger& ledger) {
    device::CpuDevice cpu(ledger);
    model::GptModel gpt({kShape, kMicroBatch, checkpointing}, cpu);
    Gradients g;
    for (std::int32_t u = 0; u < gpt.unitCount(); ++u)
        gpt.forward(u, params[static_cast<std::size_t>(u)].data(), batch);
    g.loss = gpt.loss();
    for (const auto& p : params)
        g.grads.emplace_back(p.size(), 0.0f);
    for (std::int32_t u = gpt.unitCount() - 1; u >= 0; --u)
        gpt.backward(u, params[static_cast<std::size_t>(u)].data(),
                     g.grads[static_cast<std::size_t>(u)].data());
    return g;
}

TEST(modelGradcheck, WholeModelMatchesDoublePrecisionFiniteDifferences) {
    const auto params = randomParams();
    model::MarkovSource data(kShape.vocab, kShape.seqLen, kMicroBatch, 5);
    const model::Batch batch = data.batchFor(0, 0, 1);
    Ledger ledger;
    const Gradients g = runModel(params, batch, false, ledger);

    std::vector<testref::Vec> ref;
    for (const auto& p : params)
        ref.emplace_back(p.begin(), p.end());
    const double refLoss = testref::gptLoss(kShape, ref, batch);
    EXPECT_NEAR(g.loss, refLoss, 1e-5 * refLoss) << "forward disagrees with the reference";

    std::size_t checked = 0;
    for (std::size_t u = 0; u < ref.size(); ++u) {
        double maxGrad = 0;
        for (std::size_t i = 0; i < ref[u].size(); ++i) {
            auto f = [&](const testref::Vec& v) {
                auto all = ref;
                all[u] = v;
                return testref::gptLoss(kShape, all, batch);
            };
            const double numeric = testref::centralDifference(f, ref[u], i);
            const auto analytic = static_cast<double>(g.grads[u][i]);
            EXPECT_NEAR(analytic, numeric, 2e-4 + 2e-3 * std::abs(numeric))
                << "unit " << u << " element " << i;
            maxGrad = std::max(maxGrad, std::abs(numeric));
            ++checked;
        }
        EXPECT_GT(maxGrad, 1e-2) << "unit " << u << " has a vacuous gradient";
    }
    EXPECT_EQ(checked, plan::paramCount(kShape));
}

TEST(modelGradcheck, CheckpointingGivesBitIdenticalGradients) {
    const auto params = randomParams();
    model::MarkovSource data(kShape.vocab, kShape.seqLen, kMicroBatch, 6);
    const model::Batch batch = data.batchFor(3, 0, 1);
    Ledger plainLedger, ckptLedger;
    const Gradients plain = runModel(params, batch, false, plainLedger);
    const Gradients ckpt = runModel(params, batch, true, ckptLedger);
    EXPECT_EQ(plain.loss, ckpt.loss);
    EXPECT_EQ(plain.grads, ckpt.grads);
    EXPECT_LT(ckptLedger.peak().category(Category::Activation),
              plainLedger.peak().category(Category::Activation));
    for (const Ledger* l : {&plainLedger, &ckptLedger}) {
        EXPECT_EQ(l->liveBytes(), 0u) << "every activation and workspace is freed by backward";
    }
}

} // namespace
} // namespace shardscope
