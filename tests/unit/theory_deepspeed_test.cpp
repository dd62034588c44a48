// DeepSpeed's estimate_zero{2,3}_model_states_mem_needs_all_live, row by row.
// Expected values were computed from the Python in deepspeedai/DeepSpeed:
//   stage_1_and_2.py estimate_zero2_model_states_mem_needs: offload → gpu 2P,
//     cpu P·max(4·gpus,16)·1.5; else gpu 2P + int(18P/gpus), cpu P·4·gpus_per_node·1.5.
//   stage3.py estimate_zero3_model_states_mem_needs: gpus_factor = 1/nodes, largest 4L;
//     offload param+opt → gpu 4L, cpu P·18·gf·1.5 (zero_init) else P·max(4g, 18gf)·1.5;
//     offload opt → gpu 4L + int(2P/gpus), cpu P·16·gf·1.5 or P·max(4g, 16gf)·1.5;
//     none → gpu 4L + int(18P/gpus), cpu L·4·g·1.5 (zero_init) else P·4·g·1.5;
//   all values go through int() (truncation), rows in the *_all_cold loop order.
#include "core/error.h"
#include "theory/deepspeed.h"
#include "theory/input_error.h"

#include <gtest/gtest.h>
#include <optional>
#include <tuple>

namespace {

using namespace shardscope;
using namespace shardscope::theory;

using Expect =
    std::tuple<bool, bool, bool, std::uint64_t, std::uint64_t>; // param, opt, init, cpu, gpu

void expectRows(const std::vector<DeepSpeedRow>& rows, const std::vector<Expect>& expected) {
    ASSERT_EQ(rows.size(), expected.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& [param, opt, init, cpu, gpu] = expected[i];
        EXPECT_EQ(rows[i].offloadParam, param) << "row " << i;
        EXPECT_EQ(rows[i].offloadOptimizer, opt) << "row " << i;
        EXPECT_EQ(rows[i].zeroInit, init) << "row " << i;
        EXPECT_EQ(rows[i].cpuBytes, cpu) << "row " << i;
        EXPECT_EQ(rows[i].gpuBytes, gpu) << "row " << i;
    }
}

// 6,738,415,616 params (a 7B Llama), largest layer 131,072,000, one node of 8 GPUs.
TEST(theoryDeepSpeed, SevenBillionOnEightGpus) {
    const DeepSpeedInput in{6'738'415'616, 131'072'000, 8, 1, 1.5};
    // zero2 offload: cpu = P·max(32,16)·1.5 = 323,443,949,568; gpu = 2P.
    // zero2 none: gpu = 2P + int(18P/8) = 13,476,831,232 + 15,161,435,136.
    expectRows(deepspeedZero2AllLive(in), {{false, true, false, 323'443'949'568, 13'476'831'232},
                                           {false, false, false, 323'443'949'568, 28'638'266'368}});
    expectRows(
        deepspeedZero3AllLive(in),
        {
            {true, true, true, 181'937'221'632, 524'288'000},    // P·18·1·1.5
            {true, true, false, 323'443'949'568, 524'288'000},   // P·max(32, 18)·1.5
            {false, true, true, 161'721'974'784, 2'208'891'904}, // 4L + int(2P/8)
            {false, true, false, 323'443'949'568, 2'208'891'904},
            {false, false, true, 6'291'456'000, 15'685'723'136}, // L·4·8·1.5; 4L + int(18P/8)
            {false, false, false, 323'443'949'568, 15'685'723'136},
        });
}

// Odd sizes so int() truncates: 1,000,000,007 params, 2 nodes × 3 GPUs.
TEST(theoryDeepSpeed, TruncatesLikePython) {
    const DeepSpeedInput in{1'000'000'007, 50'000'000, 3, 2, 1.5};
    expectRows(deepspeedZero2AllLive(in), {{false, true, false, 36'000'000'252, 2'000'000'014},
                                           {false, false, false, 18'000'000'126, 5'000'000'035}});
    expectRows(
        deepspeedZero3AllLive(in),
        {
            {true, true, true, 13'500'000'094, 200'000'000}, // 18000000126·0.5·1.5 = …094.5 → 094
            {true, true, false, 18'000'000'126, 200'000'000}, // max(12, 9.0) = 12 (int branch)
            {false, true, true, 12'000'000'084,
             533'333'335}, // 2e8 + int(2000000014/6 = 333333335.67)
            {false, true, false, 18'000'000'126, 533'333'335},
            {false, false, true, 900'000'000, 3'200'000'021},
            {false, false, false, 18'000'000'126, 3'200'000'021},
        });
}

// 1 GPU per node on 4 nodes: max(4·1, 18·0.25 = 4.5) picks the float.
TEST(theoryDeepSpeed, FloatBranchOfMax) {
    const DeepSpeedInput in{123'456'789, 1'000'000, 1, 4, 1.5};
    expectRows(deepspeedZero2AllLive(in), {{false, true, false, 2'962'962'936, 246'913'578},
                                           {false, false, false, 740'740'734, 802'469'128}});
    expectRows(deepspeedZero3AllLive(in),
               {
                   {true, true, true, 833'333'325, 4'000'000},
                   {true, true, false, 833'333'325, 4'000'000}, // 123456789·4.5·1.5 = 833333325.75
                   {false, true, true, 740'740'734, 65'728'394},
                   {false, true, false, 740'740'734, 65'728'394},
                   {false, false, true, 6'000'000, 559'555'550},
                   {false, false, false, 740'740'734, 559'555'550},
               });
}

TEST(theoryDeepSpeed, OptionsColumnMatchesDeepSpeedsPrintout) {
    const auto rows = deepspeedZero3AllLive({1000, 10, 1, 1, 1.5});
    EXPECT_EQ(deepspeedOptions(rows[0], 3),
              "offload_param=cpu , offload_optimizer=cpu , zero_init=1");
    EXPECT_EQ(deepspeedOptions(rows[5], 3),
              "offload_param=none, offload_optimizer=none, zero_init=0");
    EXPECT_EQ(deepspeedOptions(deepspeedZero2AllLive({1000, 0, 1, 1, 1.5})[1], 2),
              "offload_optimizer=none");
}

TEST(theoryDeepSpeed, LargestLayerOfAGptIsItsBiggestModule) {
    EXPECT_EQ(deepspeedLargestLayerParams({12, 768, 12, 50257, 1024}), 50257u * 768); // wte / head
    EXPECT_EQ(deepspeedLargestLayerParams({2, 1024, 8, 100, 64}),
              4u * 1024 * 1024 + 4 * 1024); // fc
}

TEST(theoryDeepSpeed, ValidateNamesTheInput) {
    // The field at fault (nullopt when valid); messages never spell a CLI flag.
    auto field = [](DeepSpeedInput in) -> std::optional<InputField> {
        try {
            validate(in);
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
            return e.field();
        }
        return std::nullopt;
    };
    EXPECT_EQ(field({0, 0, 1, 1, 1.5}), InputField::Params);
    EXPECT_EQ(field({10, 0, 0, 1, 1.5}), InputField::GpusPerNode);
    EXPECT_EQ(field({10, 0, 1, 0, 1.5}), InputField::Nodes);
    EXPECT_EQ(field({10, 11, 1, 1, 1.5}), InputField::LargestLayer);
    EXPECT_EQ(field({10, 0, 1, 1, 0.0}), InputField::BufferFactor);
    EXPECT_EQ(field({std::uint64_t{1} << 53, 0, 1 << 20, 1 << 20, 1.5}), InputField::Params);
    EXPECT_EQ(field({10, 5, 8, 2, 1.5}), std::nullopt);
}

} // namespace
