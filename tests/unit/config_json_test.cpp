// A run configuration read back from its JSON (what a recording's handshake and a report
// carry): the round trip through toJson, and input that must be refused naming its key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runconfig/config_json.h"

using namespace shardscope;
using namespace shardscope::runconfig;

namespace {

nlohmann::json sample() {
    const std::vector<std::string> args = {"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "7", "--seed", "9",
                                           "--hybrid-group", "2", "--prefetch", "3", "--capacity", "123456789", "--shared-device",
                                           "--ranks", "4"};
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

TEST(ConfigJson, RefusesWhatItCannotRead) {
    EXPECT_NE(refusal(nlohmann::json::array()).find("not a JSON object"), std::string::npos);
    auto with = [](const char* key, nlohmann::json value) {
        nlohmann::json j = sample();
        j[key] = std::move(value);
        return refusal(j);
    };
    EXPECT_NE(with("model", "gpt-9").find("\"model\" names no preset"), std::string::npos);
    EXPECT_NE(with("strategy", 3).find("\"strategy\" is not a string"), std::string::npos);
    EXPECT_NE(with("world_size", "4").find("\"world_size\" is not an integer"), std::string::npos);
    EXPECT_NE(with("world_size", 100000).find("\"world_size\" is out of range"), std::string::npos);
    EXPECT_NE(with("steps", -1).find("\"steps\" is out of range"), std::string::npos);
    EXPECT_NE(with("steps", 18446744073709551615ull).find("\"steps\" is out of range"), std::string::npos);
    EXPECT_NE(with("capacity_bytes", 0).find("\"capacity_bytes\""), std::string::npos);
    EXPECT_NE(with("checkpointing", 1).find("\"checkpointing\" is not true or false"), std::string::npos);
    EXPECT_NE(with("knobs", "fast").find("\"knobs\" is not an object"), std::string::npos);
    nlohmann::json knobs = sample();
    knobs["knobs"]["prefetch"] = 65;
    EXPECT_NE(refusal(knobs).find("\"prefetch\" is out of range"), std::string::npos);
    nlohmann::json noModel = sample();
    noModel.erase("model");
    EXPECT_NE(refusal(noModel).find("\"model\" is missing"), std::string::npos);
}

// Offload and the NVMe tier's settings come back too: an opened recording of an offload run
// shows (and repeats) that run, and the GUI's theory per tier is the worker's.
TEST(ConfigJson, RoundTripsOffload) {
    const std::vector<std::string> args = {"--model", "tiny", "--strategy", "zero3", "--steps", "2", "--offload-optimizer", "nvme",
                                           "--offload-params", "host", "--nvme-dir", "/tmp", "--aio-block-bytes", "2MiB",
                                           "--aio-queue-depth", "16", "--keep-nvme"};
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
    EXPECT_NE(refusal(bad).find("\"offload.optimizer\" names no tier"), std::string::npos);
    bad = j;
    bad["offload"]["aio_queue_depth"] = 5000;
    EXPECT_NE(refusal(bad).find("\"aio_queue_depth\" is out of range"), std::string::npos);
    bad = j;
    bad["offload"] = 3;
    EXPECT_NE(refusal(bad).find("\"offload\" is not an object"), std::string::npos);
}
