// The worker's run configuration: every flag parses, round-trips through toWorkerArgs, and
// every invalid value is refused with a message naming the flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "train/run_config.h"

namespace shardscope {
namespace {

using Argv = std::vector<std::string>;

train::RunConfig parse(Argv extra, int ranks = 4) {
    Argv a = {"--model", "tiny", "--strategy", "zero3", "--steps", "3"};
    a.insert(a.end(), extra.begin(), extra.end());
    return train::parseRunConfig(a, ranks);
}

// The message of the Error parse throws (and its kind), or "" when it parses.
std::pair<std::string, ErrorKind> refusal(const Argv& argv, int ranks = 4) {
    try {
        train::parseRunConfig(argv, ranks);
    } catch (const Error& e) {
        return {e.what(), e.kind()};
    }
    return {"", ErrorKind::Internal};
}

std::pair<std::string, ErrorKind> refusalWith(Argv extra, int ranks = 4) {
    Argv a = {"--model", "tiny", "--strategy", "zero3", "--steps", "3"};
    a.insert(a.end(), extra.begin(), extra.end());
    return refusal(a, ranks);
}

TEST(runConfig, DefaultsComeFromThePreset) {
    const train::RunConfig c = parse({});
    EXPECT_EQ(c.preset.name, "tiny");
    EXPECT_EQ(c.strategy, theory::Strategy::Zero3);
    EXPECT_EQ(c.steps, 3);
    EXPECT_EQ(c.seed, 1u);
    EXPECT_EQ(c.precision, theory::PrecisionKind::MixedBf16);
    EXPECT_EQ(c.preset.microBatch, 4);
    EXPECT_DOUBLE_EQ(c.preset.learningRate, 0.01);
    EXPECT_EQ(c.worldSize, 4);
    EXPECT_EQ(c.timeoutMs, 30000);
    EXPECT_TRUE(c.events);
    EXPECT_FALSE(c.deterministic);
    EXPECT_EQ(c.knobs.reduceBucketBytes, theory::Knobs{}.reduceBucketBytes);
}

TEST(runConfig, EveryFlagParsesAndRoundTrips) {
    const train::RunConfig c = parse({"--seed", "7", "--precision", "fp32", "--checkpointing", "--micro-batch", "2",
                                      "--lr", "0.003", "--deterministic", "--prefetch", "2", "--bucket-bytes", "64KiB",
                                      "--max-inflight", "3", "--persistence-threshold", "5000", "--grad-accum", "2",
                                      "--capacity", "64MiB", "--timeout-ms", "5000", "--no-events",
                                      "--json", "report.json", "--trace", "run.sstrace", "--weights-out", "w.bin",
                                      "--stream", "/tmp/sock"});
    EXPECT_EQ(c.seed, 7u);
    EXPECT_EQ(c.precision, theory::PrecisionKind::Fp32);
    EXPECT_TRUE(c.checkpointing);
    EXPECT_EQ(c.preset.microBatch, 2);
    EXPECT_DOUBLE_EQ(c.preset.learningRate, 0.003);
    EXPECT_TRUE(c.deterministic);
    EXPECT_EQ(c.knobs.prefetchDepth, 2);
    EXPECT_EQ(c.knobs.reduceBucketBytes, 65536u);
    EXPECT_EQ(c.knobs.allGatherBucketBytes, 65536u);
    EXPECT_EQ(c.knobs.maxInflightAllGathers, 3);
    EXPECT_EQ(c.knobs.persistenceThresholdParams, 5000u);
    EXPECT_EQ(c.knobs.gradAccumSteps, 2);
    EXPECT_EQ(c.capacityBytes, 64u << 20);
    EXPECT_EQ(c.timeoutMs, 5000);
    EXPECT_FALSE(c.events);
    EXPECT_EQ(c.jsonPath, "report.json");
    EXPECT_EQ(c.tracePath, "run.sstrace");
    EXPECT_EQ(c.weightsPath, "w.bin");
    EXPECT_EQ(c.streamPath, "/tmp/sock");
    const train::RunConfig back = train::parseRunConfig(train::toWorkerArgs(c), 4);
    EXPECT_EQ(train::toJson(back), train::toJson(c));
    EXPECT_EQ(train::toWorkerArgs(back), train::toWorkerArgs(c));

}

TEST(runConfig, FsdpFlavoursAndTheirKnobs) {
    Argv base = {"--model", "tiny", "--steps", "1", "--strategy"};
    auto with = [&](Argv extra) {
        Argv a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return train::parseRunConfig(a, 4);
    };
    const train::RunConfig hybrid = with({"fsdp_hybrid", "--hybrid-group", "2", "--no-sync", "--grad-accum", "2"});
    EXPECT_EQ(hybrid.knobs.hybridGroupSize, 2);
    EXPECT_TRUE(hybrid.knobs.noSync);
    EXPECT_EQ(theory::shardCount(train::scenarioOf(hybrid)), 2);
    const train::RunConfig gradOp = with({"fsdp_grad_op"});
    EXPECT_FALSE(gradOp.knobs.reshardAfterForward) << "SHARD_GRAD_OP keeps params from forward to backward";
    EXPECT_FALSE(train::scenarioOf(gradOp).knobs.reshardAfterForward);
    EXPECT_FALSE(with({"fsdp", "--reshard-after-forward", "0"}).knobs.reshardAfterForward);
    EXPECT_TRUE(train::scenarioOf(with({"fsdp", "--deterministic"})).knobs.deterministicReductions);
    const train::RunConfig data = train::parseRunConfig(
        Argv{"--model", "small", "--strategy", "ddp", "--steps", "1", "--data", SHARDSCOPE_SOURCE_DIR "/README.md"}, 2);
    EXPECT_EQ(data.preset.shape.vocab, 256) << "byte-level data";
    EXPECT_EQ(train::toJson(data)["world_size"], 2);
}

TEST(runConfig, InvalidConfigurationsNameTheFlag) {
    struct Case {
        Argv argv;
        const char* needle;
        ErrorKind kind = ErrorKind::InvalidArgument;
        int ranks = 4;
    };
    const std::vector<Case> cases = {
        {{"--strategy", "zero3", "--steps", "3"}, "--model is required"},
        {{"--model", "tiny", "--steps", "3"}, "--strategy is required"},
        {{"--model", "tiny", "--strategy", "zero3"}, "--steps is required"},
        {{"--model", "huge", "--strategy", "zero3", "--steps", "3"}, "--model"},
        {{"--model", "tiny", "--strategy", "zero4", "--steps", "3"}, "--strategy: unknown strategy 'zero4'"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "0"}, "--steps"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "NaN"}, "--steps"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--frobnicate"}, "unknown flag '--frobnicate'"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--precision", "fp16"}, "--precision"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--micro-batch", "0"}, "--micro-batch"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--lr", "0"}, "--lr"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--lr", "nan"}, "--lr"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--bucket-bytes", "0"}, "--bucket-bytes"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--prefetch", "-1"}, "--prefetch"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--reshard-after-forward", "2"}, "--reshard-after-forward"},
        {{"--model", "tiny", "--strategy", "fsdp_grad_op", "--steps", "3", "--reshard-after-forward", "1"}, "--reshard-after-forward 1"},
        {{"--model", "tiny", "--strategy", "fsdp", "--steps", "3", "--max-inflight", "0"}, "--max-inflight"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--persistence-threshold", "-5"}, "--persistence-threshold"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3"}, "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3", "--hybrid-group", "3"}, "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3", "--hybrid-group", "0"}, "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--grad-accum", "0"}, "--grad-accum"},
        {{"--model", "tiny", "--strategy", "zero2", "--steps", "3", "--no-sync"}, "--no-sync"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--capacity", "0"}, "--capacity"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--capacity", "lots"}, "--capacity"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--timeout-ms", "5"}, "--timeout-ms"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--stream", ""}, "--stream"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--data", "/nonexistent/file"}, "--data", ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--json", "/nonexistent/dir/r.json"}, "--json", ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--weights-out", "/nonexistent/dir/w"}, "--weights-out", ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--trace", "/nonexistent/dir/t"}, "--trace", ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps"}, "--steps needs a value"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3"}, "mpirun -np", ErrorKind::InvalidArgument, 0},
    };
    for (const Case& c : cases) {
        const auto [message, kind] = refusal(c.argv, c.ranks);
        std::string line;
        for (const auto& a : c.argv) line += a + " ";
        EXPECT_NE(message.find(c.needle), std::string::npos) << line << "→ '" << message << "'";
        EXPECT_EQ(kind, c.kind) << line;
        EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    }
}

// --shared-device --ranks N: one process (the job size given is 1) runs N ranks; the flags
// round-trip, and each half without the other is refused.
TEST(runConfig, SharedDeviceTakesItsRanksFromTheFlag) {
    const train::RunConfig c = train::parseRunConfig(
        Argv{"--model", "tiny", "--strategy", "fsdp_hybrid", "--hybrid-group", "2", "--steps", "1", "--shared-device",
             "--ranks", "4", "--backend", "cuda"},
        1);
    EXPECT_TRUE(c.sharedDevice);
    EXPECT_EQ(c.worldSize, 4);
    EXPECT_EQ(c.backend, train::Backend::Cuda);
    EXPECT_EQ(train::toJson(c)["world_size"], 4);
    EXPECT_EQ(train::toJson(c)["shared_device"], true);
    EXPECT_EQ(train::toJson(c)["backend"], "cuda");
    EXPECT_EQ(theory::shardCount(train::scenarioOf(c)), 2);
    const train::RunConfig back = train::parseRunConfig(train::toWorkerArgs(c), 1);
    EXPECT_EQ(train::toJson(back), train::toJson(c));
    EXPECT_EQ(train::toWorkerArgs(back), train::toWorkerArgs(c));
    EXPECT_EQ(parse({}).backend, train::Backend::Cpu);
    EXPECT_FALSE(parse({}).sharedDevice);
    EXPECT_EQ(parse({"--backend", "cpu"}).backend, train::Backend::Cpu);

    const std::vector<std::pair<Argv, const char*>> refused = {
        {{"--shared-device"}, "--shared-device needs --ranks"},
        {{"--ranks", "2"}, "--ranks is for --shared-device"},
        {{"--shared-device", "--ranks", "0"}, "--ranks"},
        {{"--shared-device", "--ranks", "two"}, "--ranks"},
        {{"--shared-device", "--ranks", "100000"}, "--ranks"},
        {{"--backend", "tpu"}, "--backend must be cpu or cuda, got 'tpu'"},
    };
    for (const auto& [extra, needle] : refused) {
        const auto [message, kind] = refusalWith(extra, 1);
        EXPECT_NE(message.find(needle), std::string::npos) << needle << " → '" << message << "'";
        EXPECT_EQ(kind, ErrorKind::InvalidArgument);
    }
    // Started by mpirun with several processes: each would run every rank.
    EXPECT_NE(refusalWith({"--shared-device", "--ranks", "2"}, 2).first.find("start it without mpirun"), std::string::npos);
    // The hybrid group must divide --ranks, and the message names --ranks, not mpirun.
    const std::string hybrid =
        refusal(Argv{"--model", "tiny", "--strategy", "fsdp_hybrid", "--hybrid-group", "2", "--steps", "1",
                     "--shared-device", "--ranks", "3"},
                1)
            .first;
    EXPECT_NE(hybrid.find("(--ranks) 3"), std::string::npos) << hybrid;
}

TEST(runConfig, AnOutputPathThatIsAFolderIsRefusedUpFront) {
    for (const char* flag : {"--json", "--trace", "--weights-out"}) {
        const auto [message, kind] = refusalWith({flag, SHARDSCOPE_SOURCE_DIR "/docs"});
        EXPECT_NE(message.find("is a directory"), std::string::npos) << flag << ": " << message;
        EXPECT_EQ(kind, ErrorKind::Io) << flag;
    }
}

TEST(runConfig, RanksZeroIsRefusedByTheJobSize) {
    EXPECT_NE(refusalWith({}, 0).first.find("ranks"), std::string::npos);
}

} // namespace
} // namespace shardscope
