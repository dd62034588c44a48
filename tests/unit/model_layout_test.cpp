// Presets and unit initialisation over plan's unit layouts (plan/units.h; the layouts' own
// tests are plan_shape_test.cpp).
#include "model/layout.h"
#include "plan/shape.h"
#include "runconfig/presets.h"

#include <cmath>
#include <gtest/gtest.h>
#include <set>

namespace shardscope {
namespace {

TEST(modelLayout, PresetUnitsMatchPlanElementCountsAndOrder) {
    for (const runconfig::ModelPreset& p : runconfig::modelPresets()) {
        const auto layouts = plan::unitLayouts(p.shape);
        const auto expected = plan::unitParams(p.shape);
        ASSERT_EQ(layouts.size(), expected.size()) << p.name;
        std::uint64_t total = 0;
        for (std::size_t u = 0; u < layouts.size(); ++u) {
            EXPECT_EQ(layouts[u].name(), expected[u].name) << p.name;
            EXPECT_EQ(layouts[u].elements(), expected[u].params)
                << p.name << " " << expected[u].name;
            total += layouts[u].elements();
        }
        EXPECT_EQ(total, plan::paramCount(p.shape)) << p.name;
    }
}

TEST(modelPresets, ExactParameterCountsAndSizes) {
    std::vector<runconfig::ModelPreset> presets;
    for (const char* name : {"tiny", "small", "medium", "gpt100m"})
        presets.push_back(runconfig::modelPreset(name));
    ASSERT_EQ(runconfig::modelPresets().size(), 6u) << "and tiny_tp, small_tp";
    EXPECT_EQ(plan::paramCount(presets[0].shape), 71'900u);
    EXPECT_EQ(plan::paramCount(presets[1].shape), 3'300'000u);
    EXPECT_EQ(plan::paramCount(presets[2].shape), 25'162'480u);
    // GPU check model (scripts/gpu-check.sh): 12 blocks of 7,124,810 + embedding 12,812,030 +
    // head 12,616,450; GPT-2-small shape with d = 770 and 11 heads of 70.
    EXPECT_EQ(plan::paramCount(presets[3].shape), 110'926'200u);
    EXPECT_EQ(presets[3].shape.layers, 12);
    EXPECT_EQ(presets[3].shape.dModel / presets[3].shape.heads, 70);
    EXPECT_EQ(presets[3].microBatch, 8);
    EXPECT_LT(plan::paramCount(runconfig::modelPreset("tiny").shape), 1'000'000u);
    EXPECT_THROW(runconfig::modelPreset("huge"), std::exception);
}

TEST(modelPresets, NoUnitDividesEvenlyIntoThreeOrFourShards) {
    // Sharding over small N must exercise padding, for every preset and every unit. The TP
    // presets have 4 heads, so d and their whole units divide by 4: there no unit divides by 3
    // and no T = 2 or T = 4 block slice (what ZeRO shards under --tp) by 3 or 4.
    for (const runconfig::ModelPreset& p : runconfig::modelPresets()) {
        const bool tp = p.shape.heads % 4 == 0;
        for (const auto& unit : plan::unitLayouts(p.shape))
            for (std::uint64_t n : {3u, 4u}) {
                if (!tp || n == 3) {
                    EXPECT_NE(unit.elements() % n, 0u)
                        << p.name << " " << unit.name() << " N=" << n;
                }
            }
        if (!tp) continue;
        for (std::int64_t t : {2, 4}) {
            plan::GptShape slice = p.shape;
            slice.tp = t;
            const auto units = plan::unitLayouts(slice);
            for (std::uint64_t n : {3u, 4u})
                EXPECT_NE(units[1].elements() % n, 0u) << p.name << " T=" << t << " N=" << n;
        }
    }
}

TEST(modelPresets, MalformedJsonIsAFormatError) {
    EXPECT_THROW(runconfig::parsePresets("{"), std::exception);
    EXPECT_THROW(
        runconfig::parsePresets(R"({"x": {"layers": 0, "d_model": 8, "heads": 2, "vocab": 5,
                                      "seq_len": 4, "micro_batch": 1}})"),
        std::exception);
    const auto ok = runconfig::parsePresets(R"({"x": {"layers": 1, "d_model": 8, "heads": 2,
                                         "vocab": 5, "seq_len": 4, "micro_batch": 3}})");
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_EQ(ok[0].microBatch, 3);
}

TEST(modelInit, Gpt2InitialisationIsDeterministicPerUnit) {
    const plan::GptShape shape{2, 16, 2, 13, 6};
    const auto units = plan::unitLayouts(shape);
    const auto& block = units[1];
    std::vector<float> a(block.elements() + 3, 9.0f), b(a.size()), c(a.size());
    model::initUnit(block, shape.layers, 42, 1, a.data(), a.size());
    model::initUnit(block, shape.layers, 42, 1, b.data(), b.size());
    model::initUnit(block, shape.layers, 42, 2, c.data(), c.size());
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c) << "units draw from independent streams";
    for (std::size_t i = block.elements(); i < a.size(); ++i)
        EXPECT_EQ(a[i], 0.0f) << "padding is zero";
    EXPECT_EQ(a[block.slot("ln1.weight").offset], 1.0f);
    EXPECT_EQ(a[block.slot("attn.qkv.bias").offset], 0.0f);
    const auto& fc = block.slot("mlp.fc.weight");
    double sq = 0;
    for (std::uint64_t i = 0; i < fc.elements(); ++i)
        sq += static_cast<double>(a[fc.offset + i]) * static_cast<double>(a[fc.offset + i]);
    EXPECT_NEAR(std::sqrt(sq / static_cast<double>(fc.elements())), 0.02, 0.002);
}

} // namespace
} // namespace shardscope
