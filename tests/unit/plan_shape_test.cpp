// GPT shapes, units, their tensor slots and padding (plan/shape.h, plan/units.h).
#include "core/error.h"
#include "plan/shape.h"
#include "plan/units.h"

#include <gtest/gtest.h>

namespace {

using namespace shardscope;
using namespace shardscope::plan;

TEST(planShape, Gpt2SmallUnits) {
    const GptShape gpt2{12, 768, 12, 50257, 1024};
    const auto units = unitParams(gpt2);
    ASSERT_EQ(units.size(), 14u);
    EXPECT_EQ(units.front().name, "embedding");
    EXPECT_EQ(units.front().params, 50257u * 768 + 1024u * 768);
    EXPECT_EQ(units[1].name, "block0");
    EXPECT_EQ(units[1].params, 7'087'872u); // GPT-2's per-block count
    EXPECT_EQ(units.back().name, "head");
    EXPECT_EQ(units.back().params, 2u * 768 + 50257u * 768);
    // GPT-2 small is 124,439,808 with the head tied to the embedding; ours is untied.
    EXPECT_EQ(paramCount(gpt2), 124'439'808u + 50257u * 768);
}

TEST(planShape, PaddedElementsRoundUpToAMultiple) {
    EXPECT_EQ(paddedElements(10, 4), 12u);
    EXPECT_EQ(paddedElements(12, 4), 12u);
    EXPECT_EQ(paddedElements(0, 4), 0u);
    EXPECT_EQ(paddedElements(7, 1), 7u);
    EXPECT_EQ(paddedElements(1, 1000), 1000u);
}

TEST(planShape, ValidateNamesTheField) {
    auto message = [](GptShape s) -> std::string {
        try {
            validate(s);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message({0, 64, 4, 100, 16}).find("layers"), std::string::npos);
    EXPECT_NE(message({2, 64, 4, 0, 16}).find("vocab"), std::string::npos);
    EXPECT_NE(message({2, 10, 3, 100, 16}).find("heads"), std::string::npos);
    EXPECT_NE(message({2, std::int64_t{1} << 40, 1, 100, 16}).find("overflow"), std::string::npos);
    EXPECT_NE(message({1000, std::int64_t{1} << 20, 1, 100, 16}).find("too large"),
              std::string::npos);
    EXPECT_NE(message({1'000'000, 8, 1, 100, 16}).find("layers"), std::string::npos);
    EXPECT_EQ(message({2, 64, 4, 100, 16}), "");
}

TEST(planUnits, SlotsAreContiguousAndQueryable) {
    const GptShape shape{2, 8, 2, 11, 5};
    const auto units = unitLayouts(shape);
    for (const auto& unit : units) {
        std::uint64_t next = 0;
        for (const auto& s : unit.slots()) {
            EXPECT_EQ(s.offset, next) << unit.name() << " " << s.name;
            next += s.elements();
        }
        EXPECT_EQ(next, unit.elements());
    }
    const auto& block = units[1];
    EXPECT_EQ(block.slot("attn.qkv.weight").rows, 8);
    EXPECT_EQ(block.slot("attn.qkv.weight").cols, 24);
    EXPECT_EQ(block.slot("mlp.proj.weight").rows, 32);
    EXPECT_TRUE(block.slot("mlp.fc.weight").decay);
    EXPECT_FALSE(block.slot("ln2.bias").decay);
    EXPECT_EQ(units.back().slot("lm_head.weight").offset, 16u); // after ln_f weight and bias
    EXPECT_THROW(block.slot("no.such.tensor"), std::exception);
}

TEST(planUnits, PaddingToShardCount) {
    const GptShape shape{2, 8, 2, 11, 5};
    const auto units = unitLayouts(shape);
    const std::uint64_t head = units.back().elements(); // 2·8 + 11·8 = 104
    ASSERT_EQ(head, 104u);
    EXPECT_EQ(units.back().paddedElements(1), 104u);
    EXPECT_EQ(units.back().paddedElements(3), 105u);
    EXPECT_EQ(units.back().shardElements(3), 35u);
    EXPECT_EQ(units.back().paddedElements(8), 104u);
}

TEST(planUnits, UnitParamsCountTheLayoutsSlots) {
    for (const GptShape& shape : {GptShape{2, 8, 2, 11, 5}, GptShape{12, 768, 12, 50257, 1024}}) {
        const auto layouts = unitLayouts(shape);
        const auto params = unitParams(shape);
        ASSERT_EQ(layouts.size(), params.size());
        for (std::size_t u = 0; u < layouts.size(); ++u) {
            EXPECT_EQ(layouts[u].name(), params[u].name);
            EXPECT_EQ(layouts[u].elements(), params[u].params) << params[u].name;
        }
        EXPECT_EQ(layouts[1].kind(), UnitKind::Block);
    }
}

} // namespace
