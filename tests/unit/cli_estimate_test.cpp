// shardscope-cli estimate, run as the real binary: JSON shape and values, DeepSpeed tables,
// and bad input → exit code 2 with one line naming the flag and nothing on stdout.
#include "cli_process.h"
#include "plan/shape.h"
#include "predict/predict.h"
#include "theory/estimate.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using Result = shardscope::testing::CliResult;

Result runCli(std::initializer_list<std::string> args,
              const std::string& binary = SHARDSCOPE_BIN_DIR "/shardscope-cli",
              char** env = environ) {
    std::vector<std::string> argv{"estimate"};
    argv.insert(argv.end(), args);
    Result r = shardscope::testing::runProgram(binary, argv, env);
    EXPECT_NE(r.exitCode, -1) << "cannot start " << binary;
    return r;
}

void expectBadInput(std::initializer_list<std::string> args, const std::string& flag) {
    const Result r = runCli(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.out, "") << "stdout must stay empty on errors";
    EXPECT_NE(r.err.find(flag), std::string::npos)
        << "stderr should name " << flag << ": " << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(cliEstimate, JsonForThePapersExample) {
    const Result r = runCli({"--params", "7.5e9", "--ranks", "64", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["params"], 7'500'000'000ull);
    EXPECT_EQ(j["ranks"], 64);
    const std::vector<std::string> expected{"ddp", "zero1", "zero2", "zero3", "fsdp"};
    ASSERT_EQ(j["rows"].size(), expected.size());
    const std::uint64_t totals[] = {120'000'000'000, 31'406'250'000, 16'640'625'000, 1'875'000'000,
                                    1'875'000'000};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& row = j["rows"][i];
        EXPECT_EQ(row["strategy"], expected[i]);
        const auto& b = row["per_rank_bytes"];
        EXPECT_EQ(b["total"], totals[i]) << expected[i];
        EXPECT_EQ(b["param"].get<std::uint64_t>() + b["grad"].get<std::uint64_t>() +
                      b["optimizer"].get<std::uint64_t>(),
                  b["total"].get<std::uint64_t>());
    }
    const auto& zero3 = j["rows"][3]["per_rank_bytes"];
    EXPECT_EQ(zero3["param"], 234'375'000u);
    EXPECT_EQ(zero3["grad"], 234'375'000u);
    EXPECT_EQ(zero3["optimizer"], 1'406'250'000u);
    EXPECT_EQ(j["rows"][3]["by_category"]["param_shard"], 234'375'000u);
    EXPECT_EQ(j["rows"][0]["comm_bytes_per_step"]["all_reduce"], 2 * 15'000'000'000ull * 63 / 64);
}

TEST(cliEstimate, ModelShapeMatchesTheLibrary) {
    const Result r = runCli({"--model-shape", "2,64,4,1000,128", "--ranks", "3", "--strategy",
                             "zero3,fsdp_grad_op", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    shardscope::theory::Scenario s;
    s.shape = shardscope::plan::GptShape{2, 64, 4, 1000, 128};
    s.ranks = 3;
    EXPECT_EQ(j["params"], shardscope::plan::paramCount(*s.shape));
    ASSERT_EQ(j["rows"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        s.strategy = i == 0 ? shardscope::plan::Strategy::Zero3
                            : shardscope::plan::Strategy::FsdpShardGradOp;
        const auto ms = shardscope::theory::modelStates(s);
        EXPECT_EQ(j["rows"][i]["per_rank_bytes"]["total"], ms.perRank.total());
        EXPECT_EQ(j["rows"][i]["padding_bytes"], ms.paddingBytes);
        const shardscope::theory::PeakPrediction dry = shardscope::predict::predictPeak(s);
        EXPECT_EQ(j["rows"][i]["predicted_peak_bytes"], dry.peakBytes);
        EXPECT_EQ(j["rows"][i]["peak_notes"], dry.notes);
    }
}

// The shaped peak is the worker's dry run: without a worker beside the CLI or on PATH, one line
// and exit 2; a shape-free estimate needs no worker.
TEST(cliEstimate, ModelShapeWithoutAWorkerIsOneLine) {
    char dir[] = "/tmp/cli_estimate_alone_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string alone = std::string(dir) + "/shardscope-cli";
    {
        std::ifstream in(SHARDSCOPE_BIN_DIR "/shardscope-cli", std::ios::binary);
        std::ofstream out(alone, std::ios::binary);
        out << in.rdbuf();
    }
    ASSERT_EQ(chmod(alone.c_str(), 0755), 0);
    std::string path = "PATH=" + std::string(dir);
    char* env[] = {path.data(), nullptr};
    const Result r =
        runCli({"--model-shape", "2,64,4,1000,128", "--ranks", "3", "--json"}, alone, env);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("shardscope-worker not found"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_EQ(runCli({"--params", "1B", "--ranks", "4"}, alone, env).exitCode, 0);
    unlink(alone.c_str());
    rmdir(dir);
}

TEST(cliEstimate, TableLabelsBothUnits) {
    const Result r = runCli({"--params", "7.5B", "--ranks", "64", "--strategy", "zero3"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("1.88 GB (1.75 GiB)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("§5.3"), std::string::npos) << "derivation names its source";
}

TEST(cliEstimate, HelpListsTheFlags) {
    const Result r = runCli({"--help"});
    EXPECT_EQ(r.exitCode, 0);
    for (const char* flag : {"--params", "--ranks", "--strategy", "--deepspeed", "--hybrid-group",
                             "--offload-optimizer", "--json"})
        EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(cliEstimate, DeepSpeedZero3Json) {
    // Rows from stage3.py estimate_zero3_model_states_mem_needs (see theory_deepspeed_test.cpp).
    const Result r = runCli({"--deepspeed", "zero3", "--params", "1000000007", "--largest-layer",
                             "50000000", "--gpus-per-node", "3", "--nodes", "2", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["deepspeed"], "zero3");
    EXPECT_EQ(j["params"], 1'000'000'007u);
    ASSERT_EQ(j["rows"].size(), 6u);
    const auto& first = j["rows"][0];
    EXPECT_EQ(first["offload_param"], "cpu");
    EXPECT_EQ(first["offload_optimizer"], "cpu");
    EXPECT_EQ(first["zero_init"], 1);
    EXPECT_EQ(first["cpu_bytes"], 13'500'000'094u);
    EXPECT_EQ(first["gpu_bytes"], 200'000'000u);
    EXPECT_EQ(j["rows"][5]["zero_init"], 0);
    EXPECT_EQ(j["rows"][5]["gpu_bytes"], 3'200'000'021u);
}

TEST(cliEstimate, DeepSpeedZero2Table) {
    const Result r = runCli(
        {"--deepspeed", "zero2", "--params", "6738415616", "--gpus-per-node", "8", "--nodes", "1"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("HW: Setup with 1 node, 8 GPUs per node."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SW: Model with 6738M total params."), std::string::npos) << r.out;
    // 323,443,949,568 B = 301.23 GiB; 13,476,831,232 B = 12.55 GiB (DeepSpeed's %6.2f "GB").
    EXPECT_NE(r.out.find("  301.23GB |  12.55GB | offload_optimizer=cpu "), std::string::npos)
        << r.out;
}

TEST(cliEstimate, BadInputExitsTwoNamingTheFlag) {
    expectBadInput({"--params", "1e9", "--ranks", "0"}, "--ranks");
    expectBadInput({"--params", "nan", "--ranks", "4"}, "--params");
    expectBadInput({"--params", "inf", "--ranks", "4"}, "--params");
    expectBadInput({"--params", "abc", "--ranks", "4"}, "--params");
    expectBadInput({"--params", "1e30", "--ranks", "4"}, "--params");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--bogus"}, "--bogus");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--strategy", "nope"}, "--strategy");
    expectBadInput(
        {"--params", "1e9", "--ranks", "4", "--strategy", "fsdp_hybrid", "--hybrid-group", "3"},
        "--hybrid-group");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--hybrid-group", "3"}, "--hybrid-group");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--offload-param", "host"},
                   "--offload-param");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--offload-optimizer", "disk"},
                   "--offload-optimizer");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--precision", "fp8"}, "--precision");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--model-shape", "2,10,3,100,16"},
                   "--model-shape");
    expectBadInput({"--deepspeed", "zero4", "--params", "1e9"}, "--deepspeed");
    expectBadInput({"--deepspeed", "zero3", "--params", "1e9", "--nodes", "0"}, "--nodes");
    expectBadInput({"--deepspeed", "zero3", "--params", "1e9", "--ranks", "4"}, "--ranks");
}

TEST(cliEstimate, RepeatedFlagsHexCountsAndStrayOptionsAreRefused) {
    expectBadInput({"--params", "0x10", "--ranks", "4"}, "--params");
    expectBadInput({"--params", "1e9", "--ranks", "0x4"}, "--ranks");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--ranks", "8"}, "--ranks is given twice");
    expectBadInput({"--params", "1e9", "--params", "2e9", "--ranks", "4"},
                   "--params is given twice");
    expectBadInput({"--params", "1e9", "--ranks", "4", "--json", "--json"},
                   "--json is given twice");
    // --hybrid-group belongs to fsdp_hybrid only (with "all" it adds fsdp_hybrid to the list).
    expectBadInput(
        {"--params", "1e9", "--ranks", "4", "--strategy", "zero3", "--hybrid-group", "2"},
        "--hybrid-group");
    expectBadInput(
        {"--params", "1e9", "--ranks", "4", "--strategy", "ddp,fsdp", "--hybrid-group", "2"},
        "--hybrid-group");
    EXPECT_EQ(runCli({"--params", "1e9", "--ranks", "4", "--strategy", "zero3,fsdp_hybrid",
                      "--hybrid-group", "2"})
                  .exitCode,
              0);
    EXPECT_EQ(runCli({"--params", "1e9", "--ranks", "4", "--hybrid-group", "2"}).exitCode, 0);
}

} // namespace

// --pp: the stages' layers and parameters (all of the model's, once), each schedule's bubble
// from its formula and the activations each stage holds; the per-rank rows are the largest
// stage's units over D = --ranks / (P·T).
TEST(cliEstimate, PipelineStagesSchedulesAndTheLargestStagesRows) {
    const Result r = runCli({"--model-shape", "6,64,4,100,32", "--ranks", "8", "--tp", "2", "--pp",
                             "2", "--micro-batches", "4", "--strategy", "zero3", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& p = j["pipeline"];
    EXPECT_EQ(p["stages"], 2);
    EXPECT_EQ(p["tp"], 2);
    EXPECT_EQ(p["dp"], 2);
    EXPECT_EQ(j["ranks"], 2);
    shardscope::plan::GptShape slice{6, 64, 4, 100, 32, 2};
    const auto& stages = p["stage_list"];
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0]["params"].get<std::uint64_t>() + stages[1]["params"].get<std::uint64_t>(),
              shardscope::plan::paramCount(slice));
    EXPECT_EQ(stages[0]["layers"][0]["end"], 3);
    EXPECT_TRUE(stages[0]["embedding"].get<bool>() && stages[1]["head"].get<bool>());
    EXPECT_EQ(j["params"], stages[p["rows_stage"].get<int>()]["params"]);
    std::map<std::string, nlohmann::json> byName;
    for (const auto& s : p["schedules"])
        byName[s["schedule"].get<std::string>()] = s;
    ASSERT_EQ(byName.size(), 4u);
    EXPECT_DOUBLE_EQ(byName["1f1b"]["bubble"].get<double>(), 1.0 / 5.0); // (P−1)/(M+P−1)
    EXPECT_DOUBLE_EQ(byName["interleaved"]["bubble"].get<double>(), 1.0 / 9.0);
    EXPECT_EQ(byName["interleaved"]["virtual_stages"], 2);
    EXPECT_EQ(byName["gpipe"]["stages"][0]["held_micro_batch_chunks"], 4);
    EXPECT_EQ(byName["1f1b"]["stages"][0]["held_micro_batch_chunks"], 2);
    EXPECT_EQ(byName["1f1b"]["stages"][1]["held_micro_batch_chunks"], 1);
    // GPipe holds 4 micro-batches, 1F1B 2, plus (in either) the output a forward hands on, held
    // a moment: one micro-batch × 32 × 64 fp32.
    EXPECT_EQ(2 * byName["1f1b"]["stages"][0]["activation_bytes"].get<std::uint64_t>() -
                  byName["gpipe"]["stages"][0]["activation_bytes"].get<std::uint64_t>(),
              32u * 64u * 4u);
}

TEST(cliEstimate, BadPipelinesAreOneLineNamingTheFlag) {
    expectBadInput({"--params", "1e9", "--ranks", "4", "--pp", "2", "--micro-batches", "4"},
                   "--pp needs --model-shape");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2"},
                   "--micro-batches");
    expectBadInput(
        {"--model-shape", "4,64,4,100,32", "--ranks", "6", "--pp", "4", "--micro-batches", "4"},
        "--pp 4 does not divide");
    expectBadInput(
        {"--model-shape", "4,64,4,100,32", "--ranks", "8", "--pp", "8", "--micro-batches", "4"},
        "8 stages for a model of 4 layers");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--micro-batches", "4"},
                   "--micro-batches goes with --pp");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2",
                    "--micro-batches", "3", "--pp-schedule", "interleaved"},
                   "multiple of --pp");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2",
                    "--micro-batches", "4", "--pp-schedule", "1f1b", "--virtual-stages", "2"},
                   "--virtual-stages 2");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2",
                    "--micro-batches", "4", "--pp-schedule", "pipedream"},
                   "--pp-schedule");
    expectBadInput({"--deepspeed", "zero3", "--params", "1e9", "--pp", "2"}, "--pp");
    // Both comma lists read alike (estimate_common's forEachListed).
    expectBadInput({"--params", "1e9", "--ranks", "4", "--strategy", "ddp,,zero3"},
                   "--strategy: an empty name");
    // A stage's activations in flight that overflow 64 bits, where the model's alone do not.
    expectBadInput({"--model-shape", "2,64,4,1000,1048576", "--ranks", "2", "--micro-batch", "1024",
                    "--pp", "2", "--micro-batches", "4096", "--pp-schedule", "gpipe"},
                   "--micro-batches 4096 × --micro-batch 1024");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2",
                    "--micro-batches", "4", "--pp-schedule", "gpipe,1f1b", "--virtual-stages", "4"},
                   "--pp-schedule does not list it");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--pp", "2",
                    "--micro-batches", "4", "--pp-schedule", "1f1b,"},
                   "an empty name");
    expectBadInput({"--model-shape", "4,64,4,100,32", "--ranks", "16", "--pp", "4",
                    "--micro-batches", "4", "--strategy", "fsdp_hybrid", "--hybrid-group", "8"},
                   "does not divide the 4 data-parallel ranks (--ranks / (P·T))");
}

// One stage is the whole model: --pp 1 leaves the rows as they were (TP traffic included); a
// schedule named twice is listed once.
TEST(cliEstimate, OneStageChangesNoRowAndSchedulesAreListedOnce) {
    const Result plain = runCli({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--tp", "2",
                                 "--strategy", "zero3", "--json"});
    const Result one = runCli({"--model-shape", "4,64,4,100,32", "--ranks", "4", "--tp", "2",
                               "--strategy", "zero3", "--pp", "1", "--micro-batches", "2",
                               "--pp-schedule", "1f1b,1f1b,all", "--json"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    ASSERT_EQ(one.exitCode, 0) << one.err;
    const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(one.out);
    EXPECT_EQ(a["rows"], b["rows"]);
    EXPECT_EQ(a["model_shape"], b["model_shape"]);
    EXPECT_EQ(b["pipeline"]["schedules"].size(), 4u); // 1f1b first, then the rest of all, once
    EXPECT_EQ(b["pipeline"]["schedules"][0]["schedule"], "1f1b");
}
