// The run configuration (runconfig): every worker flag parses, round-trips through toWorkerArgs,
// and every invalid value is refused with a message naming the flag.
#include "checkpoint/store.h"
#include "core/error.h"
#include "plan/shape.h"
#include "runconfig/presets.h"
#include "runconfig/problems.h"
#include "runconfig/run_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace shardscope {
namespace {

using Argv = std::vector<std::string>;

runconfig::RunConfig parse(Argv extra, int ranks = 4) {
    Argv a = {"--model", "tiny", "--strategy", "zero3", "--steps", "3"};
    a.insert(a.end(), extra.begin(), extra.end());
    return runconfig::parseRunConfig(a, ranks);
}

// The message of the Error parse throws (and its kind), or "" when it parses.
std::pair<std::string, ErrorKind> refusal(const Argv& argv, int ranks = 4) {
    try {
        runconfig::parseRunConfig(argv, ranks);
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
    const runconfig::RunConfig c = parse({});
    EXPECT_EQ(c.preset.name, "tiny");
    EXPECT_EQ(c.strategy, plan::Strategy::Zero3);
    EXPECT_EQ(c.steps, 3);
    EXPECT_EQ(c.seed, 1u);
    EXPECT_EQ(c.precision, plan::PrecisionKind::MixedBf16);
    EXPECT_EQ(c.preset.microBatch, 4);
    EXPECT_DOUBLE_EQ(c.preset.learningRate, 0.01);
    EXPECT_EQ(c.worldSize, 4);
    EXPECT_EQ(c.timeoutMs, 30000);
    EXPECT_TRUE(c.events);
    EXPECT_FALSE(c.deterministic);
    EXPECT_EQ(c.knobs.reduceBucketBytes, plan::Knobs{}.reduceBucketBytes);
}

TEST(runConfig, EveryFlagParsesAndRoundTrips) {
    const runconfig::RunConfig c = parse({"--seed",
                                          "7",
                                          "--precision",
                                          "fp32",
                                          "--checkpointing",
                                          "--micro-batch",
                                          "2",
                                          "--lr",
                                          "0.003",
                                          "--deterministic",
                                          "--prefetch",
                                          "2",
                                          "--bucket-bytes",
                                          "64KiB",
                                          "--max-inflight",
                                          "3",
                                          "--persistence-threshold",
                                          "5000",
                                          "--grad-accum",
                                          "2",
                                          "--capacity",
                                          "64MiB",
                                          "--timeout-ms",
                                          "5000",
                                          "--no-events",
                                          "--json",
                                          "report.json",
                                          "--trace",
                                          "run.sstrace",
                                          "--weights-out",
                                          "w.bin",
                                          "--stream",
                                          "/tmp/sock"});
    EXPECT_EQ(c.seed, 7u);
    EXPECT_EQ(c.precision, plan::PrecisionKind::Fp32);
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
    const runconfig::RunConfig back = runconfig::parseRunConfig(runconfig::toWorkerArgs(c), 4);
    EXPECT_EQ(runconfig::toJson(back), runconfig::toJson(c));
    EXPECT_EQ(runconfig::toWorkerArgs(back), runconfig::toWorkerArgs(c));
}

TEST(runConfig, FsdpFlavoursAndTheirKnobs) {
    Argv base = {"--model", "tiny", "--steps", "1", "--strategy"};
    auto with = [&](Argv extra) {
        Argv a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return runconfig::parseRunConfig(a, 4);
    };
    const runconfig::RunConfig hybrid =
        with({"fsdp_hybrid", "--hybrid-group", "2", "--no-sync", "--grad-accum", "2"});
    EXPECT_EQ(hybrid.knobs.hybridGroupSize, 2);
    EXPECT_TRUE(hybrid.knobs.noSync);
    EXPECT_EQ(theory::shardCount(runconfig::scenarioOf(hybrid)), 2);
    const runconfig::RunConfig gradOp = with({"fsdp_grad_op"});
    EXPECT_FALSE(gradOp.knobs.reshardAfterForward)
        << "SHARD_GRAD_OP keeps params from forward to backward";
    EXPECT_FALSE(runconfig::scenarioOf(gradOp).knobs.reshardAfterForward);
    EXPECT_FALSE(with({"fsdp", "--reshard-after-forward", "0"}).knobs.reshardAfterForward);
    EXPECT_TRUE(
        runconfig::scenarioOf(with({"fsdp", "--deterministic"})).knobs.deterministicReductions);
    const runconfig::RunConfig data =
        runconfig::parseRunConfig(Argv{"--model", "small", "--strategy", "ddp", "--steps", "1",
                                       "--data", SHARDSCOPE_SOURCE_DIR "/README.md"},
                                  2);
    EXPECT_EQ(data.preset.shape.vocab, 256) << "byte-level data";
    EXPECT_EQ(runconfig::toJson(data)["world_size"], 2);
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
        {{"--model", "tiny", "--strategy", "zero4", "--steps", "3"},
         "--strategy: unknown strategy 'zero4'"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "0"}, "--steps"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "NaN"}, "--steps"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--frobnicate"},
         "unknown flag '--frobnicate'"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--precision", "fp16"},
         "--precision"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--micro-batch", "0"},
         "--micro-batch"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--lr", "0"}, "--lr"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--lr", "nan"}, "--lr"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--bucket-bytes", "0"},
         "--bucket-bytes"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--prefetch", "-1"},
         "--prefetch"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--reshard-after-forward", "2"},
         "--reshard-after-forward"},
        {{"--model", "tiny", "--strategy", "fsdp_grad_op", "--steps", "3",
          "--reshard-after-forward", "1"},
         "--reshard-after-forward 1"},
        {{"--model", "tiny", "--strategy", "fsdp", "--steps", "3", "--max-inflight", "0"},
         "--max-inflight"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--persistence-threshold",
          "-5"},
         "--persistence-threshold"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3"}, "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3", "--hybrid-group", "3"},
         "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "fsdp_hybrid", "--steps", "3", "--hybrid-group", "0"},
         "--hybrid-group"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--grad-accum", "0"},
         "--grad-accum"},
        {{"--model", "tiny", "--strategy", "zero2", "--steps", "3", "--no-sync"}, "--no-sync"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--capacity", "0"},
         "--capacity"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--capacity", "lots"},
         "--capacity"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--timeout-ms", "5"},
         "--timeout-ms"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--stream", ""}, "--stream"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--data", "/nonexistent/file"},
         "--data",
         ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--json",
          "/nonexistent/dir/r.json"},
         "--json",
         ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--weights-out",
          "/nonexistent/dir/w"},
         "--weights-out",
         ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3", "--trace",
          "/nonexistent/dir/t"},
         "--trace",
         ErrorKind::Io},
        {{"--model", "tiny", "--strategy", "zero3", "--steps"}, "--steps needs a value"},
        {{"--model", "tiny", "--strategy", "zero3", "--steps", "3"},
         "mpirun -np",
         ErrorKind::InvalidArgument,
         0},
    };
    for (const Case& c : cases) {
        const auto [message, kind] = refusal(c.argv, c.ranks);
        std::string line;
        for (const auto& a : c.argv)
            line += a + " ";
        EXPECT_NE(message.find(c.needle), std::string::npos) << line << "→ '" << message << "'";
        EXPECT_EQ(kind, c.kind) << line;
        EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    }
}

// --shared-device --ranks N: one process (the job size given is 1) runs N ranks; the flags
// round-trip, and each half without the other is refused.
TEST(runConfig, SharedDeviceTakesItsRanksFromTheFlag) {
    const runconfig::RunConfig c = runconfig::parseRunConfig(
        Argv{"--model", "tiny", "--strategy", "fsdp_hybrid", "--hybrid-group", "2", "--steps", "1",
             "--shared-device", "--ranks", "4", "--backend", "cuda"},
        1);
    EXPECT_TRUE(c.sharedDevice);
    EXPECT_EQ(c.worldSize, 4);
    EXPECT_EQ(c.backend, runconfig::Backend::Cuda);
    EXPECT_EQ(runconfig::toJson(c)["world_size"], 4);
    EXPECT_EQ(runconfig::toJson(c)["shared_device"], true);
    EXPECT_EQ(runconfig::toJson(c)["backend"], "cuda");
    EXPECT_EQ(theory::shardCount(runconfig::scenarioOf(c)), 2);
    const runconfig::RunConfig back = runconfig::parseRunConfig(runconfig::toWorkerArgs(c), 1);
    EXPECT_EQ(runconfig::toJson(back), runconfig::toJson(c));
    EXPECT_EQ(runconfig::toWorkerArgs(back), runconfig::toWorkerArgs(c));
    EXPECT_EQ(parse({}).backend, runconfig::Backend::Cpu);
    EXPECT_FALSE(parse({}).sharedDevice);
    EXPECT_EQ(parse({"--backend", "cpu"}).backend, runconfig::Backend::Cpu);

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
    EXPECT_NE(
        refusalWith({"--shared-device", "--ranks", "2"}, 2).first.find("start it without mpirun"),
        std::string::npos);
    // The hybrid group must divide --ranks, and the message names --ranks, not mpirun.
    const std::string hybrid =
        refusal(Argv{"--model", "tiny", "--strategy", "fsdp_hybrid", "--hybrid-group", "2",
                     "--steps", "1", "--shared-device", "--ranks", "3"},
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

TEST(runConfig, RepeatedFlagsHexNumbersAndStrayOptionsAreRefused) {
    const std::vector<std::pair<Argv, const char*>> cases = {
        {{"--steps", "5"}, "--steps is given twice"},
        {{"--deterministic", "--deterministic"}, "--deterministic is given twice"},
        {{"--seed", "0x10"}, "--seed"},
        {{"--capacity", "0x100000"}, "--capacity"},
        {{"--persistence-threshold", "0x10"}, "--persistence-threshold"},
        {{"--lr", "0x1p-3"}, "--lr"},
        {{"--hybrid-group", "2"}, "--hybrid-group is an fsdp_hybrid option; --strategy zero3"},
    };
    for (const auto& [extra, needle] : cases) {
        const auto [message, kind] = refusalWith(extra);
        EXPECT_NE(message.find(needle), std::string::npos) << needle << " → '" << message << "'";
        EXPECT_EQ(kind, ErrorKind::InvalidArgument) << needle;
    }
    // A hybrid group set on a non-hybrid configuration (the GUI keeps its spin box) is not sent.
    runconfig::RunConfig c = parse({});
    c.knobs.hybridGroupSize = 2;
    const Argv args = runconfig::toWorkerArgs(c);
    EXPECT_EQ(std::find(args.begin(), args.end(), "--hybrid-group"), args.end());
    EXPECT_NO_THROW(runconfig::parseRunConfig(args, 4));
}

TEST(runConfig, OutputsAndDataNamingOneFileOrSpecialFilesAreRefused) {
    const std::string dir = SHARDSCOPE_SOURCE_DIR "/docs";
    const std::vector<std::pair<Argv, const char*>> cases = {
        {{"--json", "/tmp/ss-same.json", "--trace", "/tmp/ss-same.json"},
         "--trace and --json name the same file"},
        {{"--json", "/tmp/ss-same", "--weights-out", "/tmp/./ss-same"},
         "--json and --weights-out name the same file"},
        {{"--data", dir + "/architecture.md", "--trace", dir + "/architecture.md"},
         "--data and --trace name the same file"},
        {{"--json", "/dev/null"}, "--json: '/dev/null' is not a regular file"},
        {{"--data", "/dev/zero"}, "--data: '/dev/zero' is not a regular file"},
        {{"--data", dir}, "is a directory"},
    };
    for (const auto& [extra, needle] : cases) {
        const auto [message, kind] = refusalWith(extra);
        EXPECT_NE(message.find(needle), std::string::npos) << needle << " → '" << message << "'";
        EXPECT_NE(kind, ErrorKind::Internal) << needle;
    }
}

TEST(runConfig, RanksZeroIsRefusedByTheJobSize) {
    EXPECT_NE(refusalWith({}, 0).first.find("ranks"), std::string::npos);
}

} // namespace
} // namespace shardscope

namespace shardscope {
namespace {

// Validation is data: a front end phrases each problem; the flag phrasing names the flag, and
// a configuration built elsewhere (the GUI's panel) is checked against the same table.
TEST(runConfig, ProblemsAreStructuredAndPhrasedPerFrontEnd) {
    runconfig::RunConfig c = runconfig::parseRunConfig(
        std::vector<std::string>{"--model", "tiny", "--strategy", "fsdp_hybrid", "--hybrid-group",
                                 "2", "--steps", "1"},
        4);
    EXPECT_TRUE(runconfig::validate(c).empty());
    c.worldSize = 6;
    c.knobs.hybridGroupSize = 4;
    c.knobs.prefetchDepth = 65;
    const auto problems = runconfig::validate(c);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0],
              (runconfig::Problem{
                  runconfig::Field::Prefetch, runconfig::Code::OutOfRange, 65, 0, 64, {}}));
    EXPECT_EQ(problems[1],
              (runconfig::Problem{
                  runconfig::Field::HybridGroup, runconfig::Code::NotADivisor, 4, 0, 6, {}}));
    EXPECT_EQ(runconfig::describeForFlags(problems[0], false),
              "--prefetch must be between 0 and 64, got 65");
    EXPECT_EQ(runconfig::describeForFlags(problems[1], false),
              "hybrid group size (--hybrid-group) 4 does not divide ranks (mpirun -np) 6");
    EXPECT_NE(runconfig::describeForFlags(problems[1], true).find("(--ranks) 6"),
              std::string::npos);
    // With --tp the group divides the data-parallel ranks: 10 ranks over T = 5 are 2, not 10 or
    // "--ranks 2".
    c.worldSize = 10;
    c.tensorParallel = 5;
    c.knobs.hybridGroupSize = 3;
    c.knobs.prefetchDepth = 1;
    const auto tp = runconfig::validate(c);
    const auto hybrid = std::find_if(tp.begin(), tp.end(), [](const auto& p) {
        return p.field == runconfig::Field::HybridGroup;
    });
    ASSERT_NE(hybrid, tp.end());
    EXPECT_EQ(runconfig::describeForFlags(*hybrid, true),
              "hybrid group size (--hybrid-group) 3 does not divide the data-parallel ranks D = "
              "ranks / (--pp × --tp) = 2");
    // With --pp too: 12 ranks over P = 2 × T = 2 are 3.
    c.worldSize = 12;
    c.tensorParallel = 2;
    c.pipeParallel = 2;
    c.knobs.hybridGroupSize = 2;
    const auto pp = runconfig::validate(c);
    const auto piped = std::find_if(pp.begin(), pp.end(), [](const auto& p) {
        return p.field == runconfig::Field::HybridGroup;
    });
    ASSERT_NE(piped, pp.end());
    EXPECT_NE(runconfig::describeForFlags(*piped, true).find("= 3"), std::string::npos);
    c.pipeParallel = 1;
    // The flags are accepted at the table's lower edges and refused just below them.
    for (const runconfig::FieldSpec& l : runconfig::kFields) {
        if (l.kind != runconfig::ValueKind::Integer && l.kind != runconfig::ValueKind::Bytes)
            continue;
        if (l.role == runconfig::Role::Launch || l.role == runconfig::Role::Offload ||
            l.role == runconfig::Role::Checkpoint)
            continue; // with their own preconditions (threads, an NVMe folder, a save folder)
        const std::string flag(runconfig::flagName(l.field));
        std::vector<std::string> argv = {"--model", "tiny", "--strategy", "zero3",
                                         "--steps", "1",    flag,         std::to_string(l.min)};
        if (l.field == runconfig::Field::Steps)
            argv = {"--model", "tiny", "--strategy", "zero3", "--steps", std::to_string(l.min)};
        if (l.field == runconfig::Field::HybridGroup) argv[3] = "fsdp_hybrid";
        if (l.field == runconfig::Field::MaxInflight) argv[3] = "fsdp";
        EXPECT_NO_THROW(runconfig::parseRunConfig(argv, 4)) << flag << " " << l.min;
        if (l.min > 0) {
            argv.back() = std::to_string(l.min - 1);
            EXPECT_THROW(runconfig::parseRunConfig(argv, 4), Error) << flag << " " << l.min - 1;
        }
    }
}

// The worker accepts every preset in models.json, parsed once; the GUI's list is built from it.
TEST(runConfig, PresetsAreEveryEntryOfModelsJson) {
    const auto& presets = runconfig::modelPresets();
    EXPECT_EQ(&presets, &runconfig::modelPresets()) << "parsed once";
    std::vector<std::string> names;
    for (const auto& p : presets)
        names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"tiny", "tiny_tp", "small", "small_tp", "medium",
                                               "gpt100m"}));
    EXPECT_EQ(runconfig::presetChoices(), "tiny, tiny_tp, small, small_tp, medium, gpt100m");
    for (const auto& p : presets)
        EXPECT_NO_THROW(runconfig::parseRunConfig(
            std::vector<std::string>{"--model", p.name, "--strategy", "zero3", "--steps", "1"}, 2))
            << p.name;
}

// The parameter counts models.json's comment promises (no unit divisible by 3 or 4 is checked
// by the layout tests); a changed shape must change the comment too.
TEST(runConfig, PresetParameterCountsAreTheDocumentedOnes) {
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("tiny").shape), 71'900u);
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("small").shape), 3'300'000u);
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("medium").shape), 25'162'480u);
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("gpt100m").shape), 110'926'200u);
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("tiny_tp").shape), 80'740u);
    EXPECT_EQ(plan::paramCount(runconfig::modelPreset("small_tp").shape), 3'556'800u);
}

// --tp: a T × D mesh; a T that does not divide the ranks, the heads or the MLP width is one
// line naming the numbers.
TEST(runConfig, TensorParallelDividesRanksHeadsAndMlpWidth) {
    auto parse = [](std::vector<std::string> extra, int ranks) {
        std::vector<std::string> a = {"--model", "tiny_tp", "--strategy", "zero3", "--steps", "1"};
        a.insert(a.end(), extra.begin(), extra.end());
        return runconfig::parseRunConfig(a, ranks);
    };
    const runconfig::RunConfig c = parse({"--tp", "2"}, 4);
    EXPECT_EQ(c.tensorParallel, 2);
    EXPECT_EQ(c.dataParallel(), 2);
    EXPECT_EQ(runconfig::scenarioOf(c).ranks, 2) << "the theory shards over the DP group";
    EXPECT_EQ(runconfig::scenarioOf(c).shape->tp, 2);
    EXPECT_EQ(runconfig::parseRunConfig(runconfig::toWorkerArgs(c), 4).tensorParallel, 2)
        << "round trip";
    auto message = [&](std::vector<std::string> extra, int ranks) {
        try {
            parse(std::move(extra), ranks);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message({"--tp", "4"}, 6),
              "tensor parallel (--tp) 4 does not divide the ranks (mpirun -np) 6");
    EXPECT_EQ(message({"--tp", "3"}, 3),
              "tensor parallel (--tp) 3 does not divide the attention heads 4 of this model");
    EXPECT_EQ(message({"--tp", "0"}, 2), "--tp must be between 1 and 1024, got 0");
    const std::vector<std::string> tiny = {"--model", "tiny", "--strategy", "ddp",
                                           "--steps", "1",    "--tp",       "5"};
    EXPECT_NO_THROW(runconfig::parseRunConfig(tiny, 5)) << "tiny's 5 heads split 5 ways";
}

// --save, --save-every, --resume: parsed, refused with one line naming the flag, round-tripped.
TEST(runConfig, CheckpointFlags) {
    char tmpl[] = "/tmp/shardscope-runconfig-ckpt-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    // A checkpoint of tiny (one rank, DDP, seed 9): what --resume opens before anything runs.
    checkpoint::Metadata m;
    checkpoint::describeModel(m, runconfig::modelPreset("tiny").shape, 1);
    m.strategy = "ddp";
    m.precision = "bf16";
    m.seed = 9;
    m.microBatch = 4;
    m.step = 2;
    const std::string temp = checkpoint::tempDirName(2, "t");
    checkpoint::createTemp(dir, temp);
    std::vector<std::vector<float>> state;
    std::vector<checkpoint::SliceData> slices;
    for (std::size_t u = 0; u < m.units.size(); ++u) {
        state.emplace_back(m.units[u].elements, 0.5f);
        slices.push_back({{static_cast<std::int32_t>(u), 0, m.units[u].elements},
                          state.back().data(),
                          state.back().data(),
                          state.back().data()});
    }
    m.files.push_back(checkpoint::writeRankFile(dir, temp, 0, slices));
    checkpoint::commit(dir, temp, m);

    const runconfig::RunConfig c =
        parse({"--save", dir + "/next", "--save-every", "2", "--resume", dir});
    EXPECT_EQ(c.saveDir, dir + "/next");
    EXPECT_EQ(c.saveEvery, 2);
    EXPECT_EQ(c.resumePath, dir);
    EXPECT_EQ(c.seed, 9u); // the checkpoint's: its data continues
    const runconfig::RunConfig back = runconfig::parseRunConfig(runconfig::toWorkerArgs(c), 4);
    EXPECT_EQ(runconfig::toJson(back), runconfig::toJson(c));

    Argv convert = {"--model", "tiny",     "--strategy", "fsdp",   "--steps",
                    "0",       "--resume", dir,          "--save", dir + "/conv"};
    EXPECT_EQ(refusal(convert).first, "");
    EXPECT_EQ(refusalWith({"--save-every", "2"}).first, "--save-every needs --save");
    const runconfig::RunConfig async = parse({"--save", dir + "/next", "--save-async"});
    EXPECT_TRUE(async.saveAsync);
    EXPECT_TRUE(runconfig::parseRunConfig(runconfig::toWorkerArgs(async), 4).saveAsync);
    EXPECT_EQ(refusalWith({"--save-async"}).first, "--save-async needs --save");
    EXPECT_NE(refusalWith({"--save", dir, "--save-every", "0"}).first.find("--save-every"),
              std::string::npos);
    EXPECT_NE(refusalWith({"--resume", dir, "--seed", "3"}).first.find("used --seed 9"),
              std::string::npos);
    const auto other =
        refusal({"--model", "small", "--strategy", "ddp", "--steps", "1", "--resume", dir});
    EXPECT_NE(other.first.find("holds another model"), std::string::npos) << other.first;
    EXPECT_EQ(other.second, ErrorKind::InvalidArgument);
    const auto notOne = refusalWith({"--resume", dir + "/step-2/rank-00000.bin"});
    EXPECT_NE(notOne.first.find("is not a checkpoint folder"), std::string::npos) << notOne.first;
    EXPECT_EQ(notOne.second, ErrorKind::Format);
    EXPECT_NE(refusal({"--model", "tiny", "--strategy", "ddp", "--steps", "0", "--resume", dir})
                  .first.find("--steps"),
              std::string::npos);
    // Layouts the format does not describe are refused before anything runs, not mid-save.
    EXPECT_EQ(refusal({"--model", "tiny_tp", "--strategy", "zero3", "--steps", "1", "--tp", "2",
                       "--save", dir + "/tp"},
                      2)
                  .first,
              "--save: checkpoints of a run with --tp 2 are not supported");
    EXPECT_EQ(refusalWith({"--offload-optimizer", "nvme", "--nvme-dir", dir, "--save", dir + "/nv"})
                  .first,
              "--save: checkpoints of a run with the NVMe tier are not supported");
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace shardscope
