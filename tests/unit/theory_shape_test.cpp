// GPT units and padding (shape.h).
#include <gtest/gtest.h>

#include "core/error.h"
#include "theory/shape.h"

namespace {

using namespace shardscope;
using namespace shardscope::theory;

TEST(theoryShape, Gpt2SmallUnits) {
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

TEST(theoryShape, PaddedElementsRoundUpToAMultiple) {
    EXPECT_EQ(paddedElements(10, 4), 12u);
    EXPECT_EQ(paddedElements(12, 4), 12u);
    EXPECT_EQ(paddedElements(0, 4), 0u);
    EXPECT_EQ(paddedElements(7, 1), 7u);
    EXPECT_EQ(paddedElements(1, 1000), 1000u);
}

TEST(theoryShape, ValidateNamesTheField) {
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
    EXPECT_NE(message({1000, std::int64_t{1} << 20, 1, 100, 16}).find("too large"), std::string::npos);
    EXPECT_NE(message({1'000'000, 8, 1, 100, 16}).find("layers"), std::string::npos);
    EXPECT_EQ(message({2, 64, 4, 100, 16}), "");
}

} // namespace
