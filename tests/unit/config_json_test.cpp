// A run configuration read back from its JSON (what a recording's handshake and a report
// carry): the round trip through toJson, and input that must be refused naming its key.
#include "core/error.h"
#include "report/run_info.h"
#include "runconfig/config_json.h"
#include "runconfig/fields.h"
#include "runconfig/run_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace shardscope;
using namespace shardscope::runconfig;

namespace {

nlohmann::json sample() {
    const std::vector<std::string> args = {
        "--model",    "tiny",      "--strategy",      "fsdp_hybrid", "--steps",    "7",
        "--seed",     "9",         "--hybrid-group",  "2",           "--prefetch", "3",
        "--capacity", "123456789", "--shared-device", "--ranks",     "4"};
    return toJson(parseRunConfig(args, 1));
}

std::string refusal(nlohmann::json j) {
    try {
        (void)configFromJson(j);
    } catch (const Error& e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST(ConfigJson, RoundTripsThroughToJson) {
    const nlohmann::json j = sample();
    const RunConfig c = configFromJson(j);
    EXPECT_EQ(c.preset.name, "tiny");
    EXPECT_EQ(c.worldSize, 4);
    EXPECT_EQ(c.steps, 7);
    EXPECT_EQ(c.seed, 9u);
    EXPECT_EQ(c.knobs.hybridGroupSize, 2);
    EXPECT_EQ(c.knobs.prefetchDepth, 3);
    EXPECT_EQ(c.capacityBytes, std::optional<std::uint64_t>(123456789));
    EXPECT_TRUE(c.sharedDevice);
    EXPECT_EQ(toJson(c), j);
    // Keys it does not know (the handshake's own) are ignored.
    nlohmann::json more = j;
    more["param_count"] = 42;
    EXPECT_EQ(toJson(configFromJson(more)), j);
}

// Every key the writer emits is read back: a configuration with every setting away from its
// default survives toJson → configFromJson → toJson unchanged, key by key. (A tensor-parallel
// recording reopened in the GUI was taken as T = 1: "tp" was written and never read.)
TEST(ConfigJson, EveryWrittenKeyIsReadBack) {
    RunConfig c;
    c.preset = *findPreset("small_tp");
    c.preset.microBatch = 3;
    c.preset.learningRate = 0.05;
    c.preset.shape.vocab = 256;
    c.dataFile = "corpus.txt";
    c.strategy = plan::Strategy::FsdpHybridShard;
    c.steps = 0;
    c.seed = 77;
    c.precision = plan::PrecisionKind::Fp32;
    c.checkpointing = true;
    c.deterministic = true;
    c.knobs.reduceBucketBytes = 1000;
    c.knobs.allGatherBucketBytes = 2000;
    c.knobs.prefetchDepth = 4;
    c.knobs.reshardAfterForward = false;
    c.knobs.maxInflightAllGathers = 5;
    c.knobs.persistenceThresholdParams = 6;
    c.knobs.hybridGroupSize = 2;
    c.knobs.gradAccumSteps = 3;
    c.knobs.noSync = true;
    c.capacityBytes = 99999;
    c.offload.optimizer = Tier::Nvme;
    c.offload.param = Tier::Host;
    c.nvmeDir = "/scratch/nvme";
    c.keepNvme = true;
    c.aioBlockBytes = 8192;
    c.aioQueueDepth = 16;
    c.worldSize = 8;
    c.backend = Backend::Cuda;
    c.sharedDevice = true;
    c.tensorParallel = 2;
    c.timeoutMs = 5000;
    c.events = false;
    c.saveDir = "ck";
    c.saveEvery = 3;
    c.saveAsync = true;
    c.resumePath = "old/step-2";
    const nlohmann::json j = toJson(c);
    const RunConfig back = configFromJson(j);
    EXPECT_EQ(back.tensorParallel, 2);
    EXPECT_EQ(back.preset.learningRate, 0.05);
    EXPECT_EQ(back.preset.shape.vocab, 256);
    EXPECT_EQ(back.saveDir, std::optional<std::string>("ck"));
    EXPECT_EQ(back.resumePath, std::optional<std::string>("old/step-2"));
    const nlohmann::json again = toJson(back);
    for (const auto& [key, value] : j.items())
        EXPECT_EQ(again.value(key, nlohmann::json()), value) << key;
    EXPECT_EQ(again, j);
}

TEST(ConfigJson, RefusesBadSaveResumeAndLearningRate) {
    nlohmann::json j = sample();
    j["learning_rate"] = -1;
    EXPECT_NE(refusal(j).find("\"learning_rate\" is out of range"), std::string::npos);
    j = sample();
    j["save"] = {{"every", 2}};
    EXPECT_NE(refusal(j).find("\"save.dir\" is missing"), std::string::npos);
    j = sample();
    j["steps"] = 0; // only a conversion (with "resume") has no steps
    EXPECT_NE(refusal(j).find("\"steps\" is out of range"), std::string::npos);
    j["resume"] = "ck/step-1";
    EXPECT_EQ(refusal(j), "accepted");
}

TEST(ConfigJson, RefusesWhatItCannotRead) {
    EXPECT_NE(refusal(nlohmann::json::array()).find("not a JSON object"), std::string::npos);
    auto with = [](const char* key, nlohmann::json value) {
        nlohmann::json j = sample();
        j[key] = std::move(value);
        return refusal(j);
    };
    EXPECT_NE(with("model", "gpt-9").find("\"model\" names no choice of tiny"), std::string::npos);
    EXPECT_NE(with("strategy", 3).find("\"strategy\" is not a string"), std::string::npos);
    EXPECT_NE(with("world_size", "4").find("\"world_size\" is not an integer"), std::string::npos);
    EXPECT_NE(with("world_size", 100000).find("\"world_size\" is out of range"), std::string::npos);
    EXPECT_NE(with("steps", -1).find("\"steps\" is out of range"), std::string::npos);
    EXPECT_NE(with("steps", 18446744073709551615ull).find("\"steps\" is out of range"),
              std::string::npos);
    EXPECT_NE(with("capacity_bytes", 0).find("\"capacity_bytes\""), std::string::npos);
    EXPECT_NE(with("checkpointing", 1).find("\"checkpointing\" is not true or false"),
              std::string::npos);
    EXPECT_NE(with("knobs", "fast").find("\"knobs\" is not an object"), std::string::npos);
    nlohmann::json knobs = sample();
    knobs["knobs"]["prefetch"] = 65;
    EXPECT_NE(refusal(knobs).find("\"knobs.prefetch\" is out of range"), std::string::npos);
    nlohmann::json noModel = sample();
    noModel.erase("model");
    EXPECT_NE(refusal(noModel).find("\"model\" is missing"), std::string::npos);
}

// Offload and the NVMe tier's settings come back too: an opened recording of an offload run
// shows (and repeats) that run, and the GUI's theory per tier is the worker's.
TEST(ConfigJson, RoundTripsOffload) {
    const std::vector<std::string> args = {
        "--model",           "tiny", "--strategy",          "zero3",
        "--steps",           "2",    "--offload-optimizer", "nvme",
        "--offload-params",  "host", "--nvme-dir",          "/tmp",
        "--aio-block-bytes", "2MiB", "--aio-queue-depth",   "16",
        "--keep-nvme"};
    const nlohmann::json j = toJson(parseRunConfig(args, 2));
    const RunConfig c = configFromJson(j);
    EXPECT_EQ(c.offload.optimizer, Tier::Nvme);
    EXPECT_EQ(c.offload.param, Tier::Host);
    EXPECT_EQ(c.nvmeDir, "/tmp");
    EXPECT_TRUE(c.keepNvme);
    EXPECT_EQ(c.aioBlockBytes, 2u << 20);
    EXPECT_EQ(c.aioQueueDepth, 16);
    EXPECT_EQ(toJson(c), j);
    nlohmann::json bad = j;
    bad["offload"]["optimizer"] = "disk";
    EXPECT_NE(refusal(bad).find("\"offload.optimizer\" names no choice of device, host, nvme"),
              std::string::npos);
    bad = j;
    bad["offload"]["aio_queue_depth"] = 5000;
    EXPECT_NE(refusal(bad).find("\"offload.aio_queue_depth\" is out of range"), std::string::npos);
    bad = j;
    bad["offload"] = 3;
    EXPECT_NE(refusal(bad).find("\"offload\" is not an object"), std::string::npos);
}

namespace shardscope::runconfig {
namespace {

// "synthetic" named the synthetic tokens in older recordings; a data file of that name trained
// a byte-level model (vocabulary 256) and stays a file.
TEST(ConfigJson, ADataFileNamedSyntheticIsAFile) {
    RunConfig c;
    c.preset = *findPreset("tiny");
    c.strategy = plan::Strategy::Ddp;
    c.dataFile = "synthetic";
    c.preset.shape.vocab = 256;
    EXPECT_EQ(configFromJson(toJson(c)).dataFile, std::optional<std::string>("synthetic"));
    RunConfig synthetic;
    synthetic.preset = *findPreset("tiny");
    nlohmann::json old = toJson(synthetic);
    old["data"] = "synthetic";
    EXPECT_FALSE(configFromJson(old).dataFile.has_value());
}

// Counts and sizes reach 2^53 on every path (flags, JSON), as the size grammar does.
TEST(ConfigJson, PersistenceAndSizesReachTwoToThe53) {
    const RunConfig c =
        parseRunConfig(std::vector<std::string>{"--model", "tiny", "--strategy", "zero3", "--steps",
                                                "1", "--persistence-threshold", "3000000000"},
                       2);
    EXPECT_EQ(c.knobs.persistenceThresholdParams, 3'000'000'000u);
    EXPECT_EQ(configFromJson(toJson(c)).knobs.persistenceThresholdParams, 3'000'000'000u);
    nlohmann::json j = toJson(c);
    j["capacity_bytes"] = (std::uint64_t{1} << 53) + 1;
    EXPECT_THROW(configFromJson(j), Error);
}

// A real number as a flag's text is the shortest that reads back the same.
TEST(ConfigJson, RealsAreWrittenShortest) {
    EXPECT_EQ(fieldText(FieldValue(0.003)), "0.003");
    EXPECT_EQ(std::stod(fieldText(FieldValue(0.1 + 0.2))), 0.1 + 0.2);
}

} // namespace
} // namespace shardscope::runconfig

namespace shardscope::runconfig {
namespace {

// The recording's summary (report/run_info.h, below runconfig) reads nine of the field table's
// keys by name: whatever toJson writes for them, it reads back.
TEST(ConfigJson, TheRecordingsSummaryReadsWhatTheTableWrites) {
    RunConfig c = parseRunConfig(
        std::vector<std::string>{"--model", "tiny_tp", "--strategy", "fsdp", "--steps", "7",
                                 "--precision", "fp32", "--tp", "2", "--capacity", "64MiB",
                                 "--shared-device", "--ranks", "4", "--backend", "cuda"},
        1);
    const report::Parsed<report::RunInfo> info = report::parseRunInfo(toJson(c).dump(), 99);
    ASSERT_TRUE(info.value) << info.error;
    EXPECT_EQ(info.value->strategy, "fsdp");
    EXPECT_EQ(info.value->worldSize, 4);
    EXPECT_EQ(info.value->model, "tiny_tp");
    EXPECT_EQ(info.value->precision, "fp32");
    EXPECT_EQ(info.value->backend, "cuda");
    EXPECT_TRUE(info.value->sharedDevice);
    EXPECT_EQ(info.value->tensorParallel, 2);
    EXPECT_EQ(info.value->steps, 7);
    EXPECT_EQ(info.value->capacityBytes, std::optional<std::uint64_t>(64ull << 20));
}

} // namespace
} // namespace shardscope::runconfig
