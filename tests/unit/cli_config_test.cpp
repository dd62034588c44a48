// shardscope-cli with configuration files, run as the real binary: estimate --model-config
// (exact params, largest layer, the model's own units in the peak), --ds-config and
// --accelerate-config on run and estimate (listing in the output and the JSON report), and bad
// files → exit 2, one line, no output file.
#include "../support/cli_process.h"
#include "protocol/protocol.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

namespace {

using shardscope::testing::CliResult;
using shardscope::testing::runProgram;

const std::string kCli = SHARDSCOPE_BIN_DIR "/shardscope-cli";
const std::string kSource = SHARDSCOPE_SOURCE_DIR;
std::string hf(const std::string& name) {
    return kSource + "/resources/presets/hf/" + name;
}
std::string data(const std::string& name) {
    return kSource + "/tests/data/configs/" + name;
}

void expectOneLineExit2(const CliResult& r, const std::string& names) {
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(cliConfig, EstimateModelConfigJson) {
    const CliResult r = runProgram(kCli, {"estimate", "--model-config", hf("llama-2-7b.json"),
                                          "--ranks", "8", "--strategy", "zero3", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["params"], 6'738'415'616ull);
    EXPECT_EQ(j["largest_layer_params"], 131'072'000ull);
    EXPECT_EQ(j["model_config"]["units"].size(), 34u);
    // The gathered-unit term is the model's largest unit (the embedding, or the untied head with
    // its norm: 131,076,096), not the whole model as with a bare --params.
    const auto bare =
        nlohmann::json::parse(runProgram(kCli, {"estimate", "--params", "6738415616", "--ranks",
                                                "8", "--strategy", "zero3", "--json"})
                                  .out);
    EXPECT_LT(j["rows"][0]["predicted_peak_bytes"].get<std::uint64_t>(),
              bare["rows"][0]["predicted_peak_bytes"].get<std::uint64_t>());
    // DeepSpeed's estimator takes the count and the largest layer from the file.
    const CliResult ds =
        runProgram(kCli, {"estimate", "--deepspeed", "zero3", "--model-config", hf("gpt2.json"),
                          "--gpus-per-node", "8", "--nodes", "1", "--json"});
    ASSERT_EQ(ds.exitCode, 0) << ds.err;
    const auto dj = nlohmann::json::parse(ds.out);
    EXPECT_EQ(dj.dump().find("124439808") != std::string::npos, true) << ds.out.substr(0, 400);
}

TEST(cliConfig, EstimateRefusesOtherModelTypes) {
    const std::filesystem::path f =
        std::filesystem::temp_directory_path() / "cli_config_mixtral.json";
    { std::ofstream(f) << R"({"model_type": "mixtral", "num_local_experts": 8})"; }
    const CliResult r =
        runProgram(kCli, {"estimate", "--model-config", f.string(), "--ranks", "2"});
    expectOneLineExit2(r, "model_type 'mixtral'");
    EXPECT_EQ(r.out, "");
    std::filesystem::remove(f);
}

TEST(cliConfig, EstimateWithDsConfigListsEveryKey) {
    const CliResult r =
        runProgram(kCli, {"estimate", "--model-config", hf("qwen2-0.5b.json"), "--ds-config",
                          data("ds_zero3_hf.json"), "--ranks", "4", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u); // stage 3 picked one strategy
    EXPECT_EQ(j["rows"][0]["strategy"], "zero3");
    EXPECT_GT(j["rows"][0]["by_tier"]["host"].get<std::uint64_t>(),
              0u); // offload_optimizer/param: cpu
    EXPECT_GE(j["config_import"]["ignored"].size(), 10u);
    EXPECT_EQ(j["config_import"]["applied"][0]["key"],
              "zero_optimization.offload_optimizer.device");
    // "auto" resolves as a run would: tiny's learning rate, not a default no run uses (0.001).
    bool listed = false;
    for (const auto& i : j["config_import"]["ignored"])
        if (i["key"] == "optimizer.params.lr") {
            listed = true;
            EXPECT_NE(i["why"].get<std::string>().find("(0.01 unless --lr)"), std::string::npos)
                << i;
        }
    EXPECT_TRUE(listed) << j["config_import"].dump();
}

// A switch before a flag the file also sets: the flag is read as a flag, not as the switch's
// value (--save-async was taken to swallow "--micro-batch", which then came "given twice").
TEST(cliConfig, SwitchesTakeNoValueBeforeAConfigFile) {
    const std::string dir =
        ::testing::TempDir() + "shardscope-switch-" + std::to_string(::getpid());
    const CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--save", dir, "--save-async", "--micro-batch", "2", "--ds-config",
                          data("ds_zero2_batch.json")});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err.find("given twice"), std::string::npos) << r.err;
    std::filesystem::remove_all(dir);
}

TEST(cliConfig, RunWithDsConfigReportsConfigImport) {
    const std::filesystem::path json =
        std::filesystem::temp_directory_path() / "cli_config_run.json";
    std::filesystem::remove(json);
    const CliResult r = runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2",
                                          "--shared-device", "--steps", "1", "--ds-config",
                                          data("ds_zero2_batch.json"), "--json", json.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("applied: zero_optimization.stage → --strategy zero2"), std::string::npos)
        << r.out;
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(json.string()));
    EXPECT_EQ(j["strategy"], "zero2");
    EXPECT_EQ(j["micro_batch"], 2);
    EXPECT_EQ(j["config"]["knobs"]["grad_accum"], 4); // 16 = 2 × 4 × 2 ranks
    EXPECT_EQ(j["config_import"]["source"], data("ds_zero2_batch.json"));
    bool noted = false;
    for (const auto& n : j["notes"])
        noted = noted ||
                n.get<std::string>().rfind("ignored: zero_optimization.overlap_comm — ", 0) == 0;
    EXPECT_TRUE(noted);
    // A flag on the command line wins over the file.
    const CliResult flagged =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--strategy", "ddp", "--ds-config", data("ds_zero2_batch.json")});
    ASSERT_EQ(flagged.exitCode, 0) << flagged.err;
    EXPECT_NE(flagged.out.find("ignored: zero_optimization.stage — overridden by --strategy"),
              std::string::npos);
    std::filesystem::remove(json);
}

// The recording (and the stream the GUI reads, the same records) carries the report the --json
// file holds: config_import and its notes included.
TEST(cliConfig, TheRecordingsReportCarriesConfigImport) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "cli_config_recording";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string trace = (dir / "r.sstrace").string(), json = (dir / "r.json").string();
    const CliResult r = runProgram(
        kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps", "1",
               "--ds-config", data("ds_zero2_batch.json"), "--trace", trace, "--json", json});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto recording = shardscope::protocol::readRecording(trace);
    ASSERT_TRUE(recording.reportJson.has_value());
    const auto fromRecording = nlohmann::json::parse(*recording.reportJson);
    const auto fromFile = nlohmann::json::parse(shardscope::testing::slurpFile(json));
    EXPECT_EQ(fromRecording["config_import"]["source"], data("ds_zero2_batch.json"));
    EXPECT_EQ(fromRecording["config_import"], fromFile["config_import"]);
    EXPECT_EQ(fromRecording["notes"], fromFile["notes"]);
    std::filesystem::remove_all(dir);
}

// The GUI hands the listing of a configuration it imported (--config-import, the report's
// config_import object); the run carries it into its report and notes as --ds-config does.
TEST(cliConfig, RunCarriesTheGuisImportListing) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cli_config_listing";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const nlohmann::json listing = {
        {"source", "/home/u/ds.json"},
        {"applied", {{{"key", "zero_optimization.stage"}, {"setting", "--strategy zero2"}}}},
        {"ignored",
         {{{"key", "optimizer.params.lr"},
           {"why", "sets --lr, which the Ranks page does not use"}}}}};
    { std::ofstream(dir / "listing.json") << listing.dump(); }
    const std::string trace = (dir / "r.sstrace").string(), json = (dir / "r.json").string();
    const CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--strategy", "zero2", "--config-import",
                          (dir / "listing.json").string(), "--trace", trace, "--json", json});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("applied: zero_optimization.stage → --strategy zero2"), std::string::npos)
        << r.out;
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(json));
    EXPECT_EQ(j["config_import"], listing);
    bool noted = false;
    for (const auto& n : j["notes"])
        noted = noted ||
                n == "ignored: optimizer.params.lr — sets --lr, which the Ranks page does not use";
    EXPECT_TRUE(noted) << j["notes"];
    const auto recording = shardscope::protocol::readRecording(trace);
    ASSERT_TRUE(recording.reportJson.has_value());
    EXPECT_EQ(nlohmann::json::parse(*recording.reportJson)["config_import"], listing);
    // A listing that does not read, or beside a configuration file: one line, exit 2.
    { std::ofstream(dir / "bad.json") << R"({"source": "x", "applied": 3, "ignored": []})"; }
    CliResult bad =
        runProgram(kCli, {"run", "--model", "tiny", "--steps", "1", "--strategy", "ddp",
                          "--config-import", (dir / "bad.json").string(), "--json", json + ".2"});
    expectOneLineExit2(bad, "--config-import");
    EXPECT_FALSE(std::filesystem::exists(json + ".2"));
    bad = runProgram(kCli,
                     {"run", "--model", "tiny", "--steps", "1", "--config-import",
                      (dir / "listing.json").string(), "--ds-config", data("ds_zero2_batch.json")});
    expectOneLineExit2(bad, "not both");
    std::filesystem::remove_all(dir);
}

// ZeRO-Offload's block of a ds_config becomes the job's offload flags: the optimizer states of
// the run land in host memory, as the report's tiers show.
TEST(cliConfig, RunWithDsConfigOffloadsTheOptimizerToHost) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cli_config_offload";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "ds.json")
            << R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true}}})";
    }
    const std::string json = (dir / "r.json").string();
    const CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--ds-config", (dir / "ds.json").string(), "--json", json});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find(
                  "applied: zero_optimization.offload_optimizer.device → --offload-optimizer host"),
              std::string::npos)
        << r.out;
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(json));
    EXPECT_EQ(j["config"]["offload"]["optimizer"], "host");
    std::filesystem::remove_all(dir);
}

// ZeRO-Infinity's parameter block: offload_param.device "nvme" with its nvme_path becomes
// --offload-params nvme --nvme-dir, and the run keeps the param shards in files there.
TEST(cliConfig, RunWithDsConfigPutsTheParamsOnNvme) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "cli_config_offload_nvme";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "nvme");
    {
        std::ofstream(dir / "ds.json")
            << R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": ")"
            << (dir / "nvme").string() << R"("}}})";
    }
    const std::string json = (dir / "r.json").string();
    const CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--ds-config", (dir / "ds.json").string(), "--json", json});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("applied: zero_optimization.offload_param.device → --offload-params nvme"),
              std::string::npos)
        << r.out;
    const auto j = nlohmann::json::parse(shardscope::testing::slurpFile(json));
    EXPECT_EQ(j["config"]["offload"]["param"], "nvme");
    EXPECT_EQ(j["config"]["offload"]["nvme_dir"], (dir / "nvme").string());
    EXPECT_GT(
        j["ranks"][0]["model_state_bytes_by_tier"]["nvme"]["param_shard"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(std::filesystem::is_empty(dir / "nvme")) << "the rank files are removed at the end";
    std::filesystem::remove_all(dir);
}

TEST(cliConfig, BadConfigIsOneLineAndWritesNothing) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cli_config_bad";
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "ds.json")
            << R"({"train_batch_size": 7, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1})";
    }
    const std::string out = (dir / "r.json").string();
    CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--ds-config", (dir / "ds.json").string(), "--json", out});
    expectOneLineExit2(r, "train_batch_size = 7");
    EXPECT_FALSE(std::filesystem::exists(out));
    {
        std::ofstream(dir / "acc.yaml")
            << "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: [\n";
    }
    r = runProgram(kCli, {"run", "--model", "tiny", "--ranks", "2", "--shared-device", "--steps",
                          "1", "--accelerate-config", (dir / "acc.yaml").string(), "--json", out});
    expectOneLineExit2(r, "not valid YAML");
    EXPECT_FALSE(std::filesystem::exists(out));
    r = runProgram(kCli, {"run", "--model", "tiny", "--steps", "1", "--ds-config",
                          (dir / "missing.json").string()});
    expectOneLineExit2(r, "--ds-config");
    r = runProgram(kCli, {"compare", "--ranks", "2", "--steps", "1", "--ds-config",
                          (dir / "ds.json").string(), "--accelerate-config",
                          (dir / "acc.yaml").string()});
    expectOneLineExit2(r, "give one of --ds-config and --accelerate-config");
    std::filesystem::remove_all(dir);
}

// A path is the file system's bytes: one that is not UTF-8 goes into the JSON as U+FFFD instead
// of failing the report's writer (exit 1, "internal error", after a whole run).
TEST(cliConfig, AConfigPathThatIsNotUtf8StillMakesAReport) {
    const std::filesystem::path f = std::filesystem::temp_directory_path() / "cli_config_\xff.json";
    { std::ofstream(f) << R"({"zero_optimization": {"stage": 2}})"; }
    const CliResult r = runProgram(
        kCli, {"estimate", "--params", "1B", "--ranks", "2", "--ds-config", f.string(), "--json"});
    std::filesystem::remove(f);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j["config_import"]["source"].get<std::string>().find("cli_config_\xef\xbf\xbd.json"),
              std::string::npos);
}

// The file's HYBRID_SHARD group is for fsdp_hybrid rows: with none in --strategies it is listed
// as ignored, not refused as if the user had typed --hybrid-group. (Tiny runs of one step, as
// threads: the listing is printed for a comparison that starts.)
TEST(cliConfig, CompareWithoutFsdpHybridIgnoresTheFilesShardGroup) {
    const std::string out = ::testing::TempDir() + "/hybrid-compare.json";
    CliResult r = runProgram(kCli, {"compare", "--model", "tiny", "--shared-device", "--steps", "1",
                                    "--strategies", "ddp,zero3", "--accelerate-config",
                                    data("accelerate_fsdp_hybrid.yaml"), "--json", out});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(
        r.out.find("ignored: fsdp_config.fsdp_sharding_strategy — --strategies has no fsdp_hybrid"),
        std::string::npos)
        << r.out;
    r = runProgram(kCli, {"compare", "--model", "tiny", "--shared-device", "--steps", "1",
                          "--strategies", "ddp,fsdp_hybrid", "--accelerate-config",
                          data("accelerate_fsdp_hybrid.yaml"), "--json", out});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("applied: fsdp_config.fsdp_sharding_strategy → --hybrid-group 2"),
              std::string::npos)
        << r.out;
}

} // namespace

namespace {

// A last flag without its value is named, even where the launcher adds flags of its own
// (--shared-device --ranks N went after it, and became its value).
TEST(cliConfig, ALastFlagWithoutItsValueIsNamed) {
    const CliResult r = runProgram(kCli, {"run", "--model", "tiny", "--shared-device", "--ranks",
                                          "2", "--strategy", "ddp", "--steps", "1", "--lr"});
    expectOneLineExit2(r, "--lr needs a value");
}

// A knob the strategy does not read is not passed: the run says so instead of dropping it
// silently, and the report's configuration does not claim it.
TEST(cliConfig, AKnobTheStrategyDoesNotReadIsNoted) {
    const std::string json = ::testing::TempDir() + "/unread-knob.json";
    const CliResult r =
        runProgram(kCli, {"run", "--model", "tiny", "--shared-device", "--ranks", "2", "--strategy",
                          "ddp", "--steps", "1", "--prefetch", "3", "--json", json});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("note: --prefetch is not read by ddp"), std::string::npos) << r.err;
    std::ifstream in(json);
    const nlohmann::json report = nlohmann::json::parse(in);
    EXPECT_FALSE(report.at("config").at("knobs").contains("prefetch")) << report.at("config");
}

} // namespace

namespace {

// A configuration the run refuses is one line, naming the file's key that set the flag; the
// file's listing belongs to a run that starts.
TEST(cliConfig, ARefusedConfigurationIsOneLineNamingItsKey) {
    const std::string file = ::testing::TempDir() + "/huge-micro-batch.json";
    std::ofstream(file)
        << R"({"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 99999})";
    for (const char* command : {"run", "compare"}) {
        const CliResult r = runProgram(kCli, {command, "--model", "tiny", "--shared-device",
                                              "--ranks", "2", "--steps", "1", "--ds-config", file});
        expectOneLineExit2(r, "--micro-batch must be between 1 and 4096, got 99999 (set by " +
                                  file + ": train_micro_batch_size_per_gpu)");
        EXPECT_EQ(r.out, "") << command;
    }
}

} // namespace
