// Checkpoints through the real programs (shardscope-cli run with --shared-device rank threads):
// (a) save and resume at the same world size is bitwise an uninterrupted run, for every
// strategy; (b) the consolidated fp32 state (master, m, v) after loading at another world size
// and strategy is the saved one bit for bit; (c) what a run resumed at M ≠ N continues as; bad
// input and a failing save (exit 2, nothing overwritten, `latest` intact).
#include "checkpoint_cli.h"
#include "core/event.h"
#include "protocol/protocol.h"
#include "replay/stream_assembler.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/file.h>
#include <tuple>
#include <unistd.h>

namespace {

using namespace shardscope_test;
namespace fs = std::filesystem;

// (a) for every strategy: 2 steps, save, resume for 2 more = 4 uninterrupted steps, bitwise
// (losses and the final weights' digest).
class checkpointSameWorld : public checkpointRun,
                            public ::testing::WithParamInterface<const char*> {};

TEST_P(checkpointSameWorld, ResumeIsBitwiseTheUninterruptedRun) {
    const std::string s = GetParam();
    // Every strategy equals DDP bitwise in deterministic mode; HYBRID_SHARD reduces in two
    // levels (shard group, then replicas), so it is its own reference (on 4 ranks).
    const int ranks = s == "fsdp_hybrid" ? 4 : 2;
    const nlohmann::json ref = run(ranks == 2 ? "ddp" : s, ranks, 4, "");
    const std::string ck = path("a");
    const nlohmann::json first = run(s, ranks, 2, "--save " + ck);
    const nlohmann::json second = run(s, ranks, 2, "--resume " + ck);
    ASSERT_EQ(second["losses"].size(), 2u);
    EXPECT_EQ(first["losses"][0], ref["losses"][0]);
    EXPECT_EQ(first["losses"][1], ref["losses"][1]);
    EXPECT_EQ(second["losses"][0], ref["losses"][2]);
    EXPECT_EQ(second["losses"][1], ref["losses"][3]);
    EXPECT_EQ(second["param_digest"], ref["param_digest"]);
    EXPECT_EQ(second["resumed_from"]["step"], 2);
    EXPECT_EQ(second["resumed_from"]["world_size"], ranks);
    EXPECT_EQ(second["resumed_from"]["strategy"], s);
    ASSERT_EQ(first["saves"].size(), 1u);
    EXPECT_GT(first["saves"][0]["seconds"].get<double>(), 0.0);
    EXPECT_EQ(first["saves"][0]["bytes"], 71900u * 12); // no byte twice, no padding
}

// A resumed run counts on from its checkpoint wherever a person reads a step: saved after step 3
// and resumed for 2, the CLI says so and prints steps 4/5 and 5/5 (it printed 1/2 and 2/2, as if
// fresh), its JSON progress events the same, its recording's handshake carries the 3, and a
// failure in its first step is named as step 4.
TEST_F(checkpointRun, AResumedRunCountsOnFromItsCheckpoint) {
    const std::string ck = path("on");
    run("zero3", 2, 3, "--save " + ck);
    const std::string trace = path("resumed.sstrace");
    Result r = cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 2 "
                   "--resume " +
                   ck + " --trace " + trace);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("after step 3: this run makes steps 4 to 5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("step     4/5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("step     5/5"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("step     1/"), std::string::npos) << r.out;
    const auto rec = shardscope::protocol::readRecording(trace);
    ASSERT_FALSE(rec.handshakes.empty());
    EXPECT_EQ(nlohmann::json::parse(rec.handshakes.front().configJson)["steps_before"], 3);
    r = cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 2 --progress "
            "json --resume " +
            ck);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(R"("step":4,"steps":5,"steps_before":3)"), std::string::npos) << r.out;
    // Out of memory in the first resumed step: step 4, in the worker's line and the ending.
    r = cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 2 --capacity "
            "700000 --resume " +
            ck);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("step 4"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("step 1"), std::string::npos) << r.err;
    // Converting (--steps 0) makes no step: nothing says it does.
    r = cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 0 --no-events "
            "--resume " +
            ck + " --save " + path("converted"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("makes steps"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, checkpointSameWorld,
                         ::testing::Values("ddp", "zero1", "zero2", "zero3", "fsdp", "fsdp_grad_op",
                                           "fsdp_hybrid"));

// --save-async writes the same checkpoints as a synchronous save (bit for bit), commits each
// one before the next and the last before the run ends, and reports what each held the loop.
TEST_F(checkpointRun, AnAsynchronousSaveIsTheSynchronousOne) {
    const std::string sync = path("sync"), async = path("async");
    const nlohmann::json a = run("zero3", 2, 3, "--save-every 1 --save " + sync);
    const nlohmann::json b = run("zero3", 2, 3, "--save-every 1 --save-async --save " + async);
    ASSERT_EQ(b["saves"].size(), 3u);
    EXPECT_EQ(b["losses"], a["losses"]);
    for (int k = 0; k < 3; ++k) {
        const nlohmann::json& s = b["saves"][static_cast<std::size_t>(k)];
        EXPECT_EQ(s["step"], k + 1);
        EXPECT_LE(s["seconds_blocked"].get<double>(), s["seconds"].get<double>());
        EXPECT_EQ(a["saves"][static_cast<std::size_t>(k)]["seconds_blocked"],
                  a["saves"][static_cast<std::size_t>(k)]["seconds"]);
        const std::string step = "/step-" + std::to_string(k + 1);
        EXPECT_EQ(cli("checkpoint verify " + async + step).code, 0);
        EXPECT_EQ(consolidated(async + step), consolidated(sync + step)) << step;
    }
    EXPECT_EQ(slurp(async + "/latest"), "step-3\n");
    for (const auto& e : fs::directory_iterator(async))
        EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
    const nlohmann::json ra = run("zero3", 2, 1, "--resume " + sync);
    const nlohmann::json rb = run("zero3", 2, 1, "--resume " + async);
    EXPECT_EQ(rb["param_digest"], ra["param_digest"]);
    const Result r = cli("run --model tiny --ranks 1 --strategy ddp --steps 1 --save-async");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--save-async needs --save"), std::string::npos) << r.err;
}

// (b) through the engine, a few pairs (checkpoint_sweep_test: every pair, label long).
class checkpointReshardPairs : public checkpointReshard,
                               public ::testing::WithParamInterface<Pair> {};

TEST_P(checkpointReshardPairs, ConsolidatedStateSurvivesTheChange) {
    check(GetParam());
}

INSTANTIATE_TEST_SUITE_P(WorldSizesAndStrategies, checkpointReshardPairs,
                         ::testing::Values(Pair{"zero3", 3, "fsdp", 2}, Pair{"ddp", 2, "zero1", 5},
                                           Pair{"zero2", 5, "ddp", 8}, Pair{"fsdp", 1, "zero3", 3},
                                           Pair{"zero3", 8, "fsdp_grad_op", 1},
                                           Pair{"fsdp_hybrid", 4, "zero2", 3}));

// (c) A run resumed at M ≠ N continues as an M-rank run from the saved state: bitwise equal
// for every strategy at M (they all compute DDP's math), and — with the same global batch
// (micro-batch × ranks) — the uninterrupted N-rank run within fp32 rounding (the gradient
// sums group the same sequences differently, so not bitwise); within bf16 rounding where the
// linear layers round their operands to bf16 (a CPU with bf16 units: the report's gemm).
TEST_F(checkpointRun, ResumedAtAnotherWorldSizeContinuesAsThatWorld) {
    const nlohmann::json full = run("zero3", 2, 4, "--micro-batch 2");
    const std::string ck = path("c");
    run("zero3", 2, 2, "--micro-batch 2 --save " + ck);
    const nlohmann::json asDdp = run("ddp", 4, 2, "--micro-batch 1 --resume " + ck);
    const nlohmann::json asFsdp = run("fsdp", 4, 2, "--micro-batch 1 --resume " + ck);
    const nlohmann::json asZero1 = run("zero1", 4, 2, "--micro-batch 1 --resume " + ck);
    EXPECT_EQ(asFsdp["losses"], asDdp["losses"]);
    EXPECT_EQ(asZero1["losses"], asDdp["losses"]);
    EXPECT_EQ(asFsdp["param_digest"], asDdp["param_digest"]);
    EXPECT_EQ(asZero1["param_digest"], asDdp["param_digest"]);
    const bool bf16Units = full.contains("gemm") && full["gemm"]["bf16_units"].get<bool>();
    const double tolerance = bf16Units ? 1e-3 : 1e-5; // bf16 keeps 8 bits of mantissa
    for (int i = 0; i < 2; ++i) {
        const double a = asDdp["losses"][static_cast<std::size_t>(i)].get<double>();
        const double b = full["losses"][static_cast<std::size_t>(i + 2)].get<double>();
        EXPECT_NEAR(a, b, tolerance * std::abs(b)) << i;
    }
}

// A pipelined run's checkpoint is one logical model: each stage's ranks write their units'
// shards (no byte twice), and it resumes at P = 2 bitwise as the uninterrupted run, at P = 1 as
// the same run with gradient accumulation (a pipeline is bitwise that), and converts into and
// out of a pipeline with the same consolidated state.
TEST_F(checkpointRun, APipelinesCheckpointIsOneModelAtAnyStageCount) {
    const std::string piped = "--pp 2 --grad-accum 2";
    const nlohmann::json ref = run("zero3", 4, 4, piped);
    const std::string ck = path("pp");
    const nlohmann::json first = run("zero3", 4, 2, piped + " --save " + ck);
    ASSERT_EQ(first["saves"].size(), 1u);
    EXPECT_EQ(first["saves"][0]["bytes"], 71900u * 12);
    const Result verified = cli("checkpoint verify " + ck);
    EXPECT_EQ(verified.code, 0) << verified.err;
    EXPECT_NE(verified.out.find("zero3 on 4 ranks (2 pipeline stages)"), std::string::npos)
        << verified.out;
    const nlohmann::json again = run("zero3", 4, 2, piped + " --resume " + ck);
    const nlohmann::json flat = run("fsdp", 2, 2, "--grad-accum 2 --resume " + ck);
    for (const nlohmann::json* r : {&again, &flat}) {
        ASSERT_EQ((*r)["losses"].size(), 2u);
        EXPECT_EQ((*r)["losses"][0], ref["losses"][2]);
        EXPECT_EQ((*r)["losses"][1], ref["losses"][3]);
        EXPECT_EQ((*r)["param_digest"], ref["param_digest"]);
    }
    // Into and out of a pipeline: converted (--steps 0), the state is the saved one, bit for bit.
    const std::string flatCk = path("flat"), intoPipe = path("into");
    run("zero2", 2, 1, "--save " + flatCk);
    run("ddp", 2, 0, "--pp 2 --resume " + flatCk + " --save " + intoPipe);
    EXPECT_EQ(consolidated(intoPipe), consolidated(flatCk));
    const std::string outOfPipe = path("out");
    run("zero1", 3, 0, "--resume " + ck + " --save " + outOfPipe);
    EXPECT_EQ(consolidated(outOfPipe), consolidated(ck));
}

TEST_F(checkpointRun, BadCheckpointsAreOneLineAndExitTwo) {
    const std::string ck = path("bad");
    run("zero3", 3, 1, "--save " + ck);
    const std::string rank1 = ck + "/step-1/rank-00001.bin";
    auto resume = [&](const std::string& what) {
        return cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 1 "
                   "--no-events --resume " +
                   what);
    };
    { // a flipped byte
        std::fstream f(rank1, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(1000);
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 1);
        f.seekp(1000);
        f.write(&c, 1);
    }
    Result r = resume(ck);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("rank-00001.bin': checksum mismatch"), std::string::npos) << r.err;
    // The worker run directly meets the damage while loading: one line, exit 2, as rank
    // threads and as an MPI singleton.
    for (const std::string how : {"--shared-device --ranks 2", ""}) {
        r = worker("--model tiny --strategy zero3 --steps 1 --no-events " + how + " --resume " +
                   ck);
        EXPECT_EQ(r.code, 2) << how << ": " << r.err;
        EXPECT_NE(r.err.find("rank-00001.bin' fails its checksum"), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    r = cli("checkpoint verify " + ck);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("rank-00001.bin': checksum mismatch"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // inspect says the state once ("checksum mismatch: checksum mismatch" before).
    r = cli("checkpoint inspect " + ck);
    EXPECT_NE(r.out.find("checksum mismatch (in unit"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("checksum mismatch: checksum mismatch"), std::string::npos) << r.out;
    fs::resize_file(rank1, 100);
    r = cli("checkpoint verify " + ck);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("100 bytes, the metadata says"), std::string::npos) << r.err;
    fs::remove(rank1);
    r = resume(ck);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("rank-00001.bin': missing"), std::string::npos) << r.err;
    // Another model: refused before anything starts.
    run("zero3", 2, 1, "--save " + path("other"));
    r = cli("run --model small --ranks 1 --strategy ddp --steps 1 --resume " + path("other"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("holds another model"), std::string::npos) << r.err;
    // One step's folder, as verify and --resume take it: inspect lists that step.
    r = cli("checkpoint inspect " + path("other") + "/step-1");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("step-1"), std::string::npos) << r.out;
    // Not a checkpoint.
    fs::create_directories(path("empty"));
    r = resume(path("empty"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("is not a checkpoint"), std::string::npos) << r.err;
    r = cli("checkpoint inspect " + path("empty"));
    EXPECT_EQ(r.code, 2);
    // Flags.
    r = cli("run --model tiny --ranks 1 --strategy ddp --steps 1 --save-every 2");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--save-every needs --save"), std::string::npos) << r.err;
    r = cli("run --model tiny --ranks 1 --strategy ddp --steps 0 --resume " + path("other"));
    EXPECT_EQ(r.code, 2);
    // An output inside the checkpoint folder could replace any step's files: refused, the
    // checkpoint intact (another step's rank file, a new file, the resumed step's own).
    for (const std::string& out : {"--json " + path("other") + "/step-1/metadata.json",
                                   "--trace " + path("other") + "/latest",
                                   "--ending " + path("other") + "/step-1/rank-00001.bin",
                                   "--trace " + path("other") + "/step-1/x.sstrace",
                                   "--json " + path("other") + "/latest.tmp-1"}) {
        r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --resume " +
                path("other") + "/step-1 " + out);
        EXPECT_EQ(r.code, 2) << out << ": " << r.err;
        EXPECT_NE(r.err.find("could replace a part of the checkpoint"), std::string::npos) << r.err;
    }
    r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " +
            path("other") + " --json " + path("other") + "/latest");
    EXPECT_EQ(r.code, 2) << r.err;
    r = cli("checkpoint verify " + path("other"));
    EXPECT_EQ(r.code, 0) << r.err;
    // --save folders that could only fail after training are refused before it starts.
    fs::create_directories(path("latestdir") + "/latest");
    fs::create_symlink("loop", path("loop"));
    const std::pair<std::string, std::string> saves[] = {
        {path("other") + "/step-1", "is a step folder of a checkpoint"},
        {path("latestdir"), "latest' is not a file"},
        {path("loop"), "cannot use"},
    };
    for (const auto& [dir, says] : saves) {
        r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " + dir);
        EXPECT_EQ(r.code, 2) << dir << ": " << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    // Two jobs saving into one folder would overwrite each other's steps: the second is refused
    // before it trains, and a folder whose parent is missing is not created behind the user's back.
    fs::create_directories(path("busy"));
    const int held = ::open((path("busy") + "/.shardscope-save.lock").c_str(),
                            O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
    for (const auto& [dir, says] :
         {std::pair<std::string, std::string>{path("busy"), "another job is saving into"},
          {path("no/such/parent"), "cannot create the folder"}}) {
        r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " + dir);
        EXPECT_EQ(r.code, 2) << dir << ": " << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        // The worker run directly keeps the same promise (it saved into the busy folder).
        for (const std::string how : {"--shared-device --ranks 2", ""}) {
            r = worker("--model tiny --strategy zero3 --steps 1 --no-events " + how + " --save " +
                       dir);
            EXPECT_EQ(r.code, 2) << dir << " " << how << ": " << r.err;
            EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
            EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        }
    }
    EXPECT_FALSE(fs::exists(path("busy") + "/latest"));
    ::close(held);
    EXPECT_FALSE(fs::exists(path("no")));
    r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " +
            path("busy"));
    EXPECT_EQ(r.code, 0) << r.err;
    // A step folder the run would replace must be a checkpoint step: a folder of the user's
    // named step-1 (it was deleted, exit 0), or a step holding a file of the user's, is refused
    // before training, by the CLI and by the worker run directly; nothing is touched.
    fs::create_directories(path("mine") + "/step-1");
    std::ofstream(path("mine") + "/step-1/notes.txt") << "mine";
    fs::create_directories(path("stray"));
    run("zero3", 2, 1, "--save " + path("stray"));
    std::ofstream(path("stray") + "/step-1/notes.txt") << "mine";
    for (const auto& [dir, says] :
         {std::pair<std::string, std::string>{path("mine"), "is not a checkpoint step"},
          {path("stray"), "holds files that are not the checkpoint's (notes.txt)"}}) {
        for (const bool direct : {false, true}) {
            const std::string flags =
                "--model tiny --strategy zero3 --steps 1 --no-events --save " + dir;
            r = direct ? worker("--shared-device --ranks 2 " + flags)
                       : cli("run --ranks 1 " + flags);
            EXPECT_EQ(r.code, 2) << dir << ": " << r.err;
            EXPECT_NE(r.err.find("step-1' would be replaced by this run's step 1"),
                      std::string::npos)
                << r.err;
            EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
            EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
            EXPECT_TRUE(fs::exists(dir + "/step-1/notes.txt")) << dir;
        }
    }
    EXPECT_FALSE(fs::exists(path("mine") + "/latest"));
    // A checkpoint's own step is still replaced by a run that saves that step again.
    r = cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " +
            path("other"));
    EXPECT_EQ(r.code, 0) << r.err;
    // A metadata.json that is a folder: one line, the file named once (no "checkpoint:
    // checkpoint:").
    fs::create_directories(path("mdir") + "/step-1/metadata.json");
    r = cli("checkpoint verify " + path("mdir") + "/step-1");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("metadata.json' is a directory, not a file"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("checkpoint: checkpoint:"), std::string::npos) << r.err;
}

// A resume continues the optimizer as it was saved: the saved learning rate unless --lr says
// otherwise, and then the report says so (it went back to the preset's 0.01 without a word).
// Optimizer values AdamW cannot continue from are damage that verify names.
TEST_F(checkpointRun, AResumeKeepsTheSavedLearningRate) {
    const std::string ck = path("lr");
    run("zero3", 2, 1, "--lr 0.05 --save " + ck);
    nlohmann::json r = run("zero3", 2, 1, "--resume " + ck);
    EXPECT_EQ(r["config"]["learning_rate"], 0.05) << r["config"].dump();
    EXPECT_EQ(r["notes"].dump().find("overrides the learning rate"), std::string::npos);
    r = run("zero3", 2, 1, "--lr 0.02 --resume " + ck);
    EXPECT_EQ(r["config"]["learning_rate"], 0.02);
    EXPECT_NE(r["notes"].dump().find(
                  "--lr 0.02 overrides the learning rate the checkpoint was saved with (0.05)"),
              std::string::npos)
        << r["notes"].dump();
    const std::string meta = ck + "/step-1/metadata.json";
    const std::string good = slurp(meta);
    for (const auto& [from, to, says] :
         {std::tuple<std::string, std::string, std::string>{"\"lr\": 0.05", "\"lr\": -1",
                                                            "optimizer.lr is not in (0, 10]"},
          {"\"eps\": 1e-08", "\"eps\": 0", "optimizer.eps is not more than 0"},
          {"\"name\": \"adamw\"", "\"name\": \"sgd\"",
           "names an optimizer this build does not run"}}) {
        std::string bad = good;
        const std::size_t at = bad.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        bad.replace(at, from.size(), to);
        std::ofstream(meta, std::ios::trunc) << bad;
        const Result v = cli("checkpoint verify " + ck);
        EXPECT_EQ(v.code, 2) << to;
        EXPECT_NE(v.err.find(says), std::string::npos) << v.err;
        EXPECT_EQ(std::count(v.err.begin(), v.err.end(), '\n'), 1) << v.err;
    }
    std::ofstream(meta, std::ios::trunc) << good;
}

// A conversion (--steps 0) says what it read and wrote, per rank; it is no training run to set
// against the theory (it printed "model states equal theory: NO … (a bug …)" and 0 B).
TEST_F(checkpointRun, AConversionReportsWhatItReadAndWrote) {
    const std::string from = path("conv-from"), to = path("conv-to"), json = path("conv.json");
    run("zero3", 3, 1, "--save " + from);
    const Result r = cli("run --model tiny --shared-device --ranks 2 --strategy fsdp --steps 0 "
                         "--no-events --resume " +
                         from + " --save " + to + " --json " + json);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(
        r.out.find("converted " + from + "/step-1 (a 3-rank zero3 run, step 1) to 2 ranks, fsdp"),
        std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("model states equal theory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wrote " + to + "/step-1"), std::string::npos) << r.out;
    const nlohmann::json rep = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(rep["ranks"].size(), 2u);
    for (const nlohmann::json& rank : rep["ranks"])
        EXPECT_GT(rank.value("checkpoint_bytes_read", std::uint64_t{0}), 0u) << rank.dump();
    EXPECT_EQ(rep["notes"].dump().find("a bug"), std::string::npos) << rep["notes"].dump();
    EXPECT_NE(rep["notes"].dump().find("a conversion"), std::string::npos);
}

// What a save killed mid-way left (a step's temporary folder, latest's temporary) goes at the
// next save into the folder, which holds the folder's lock: no other save can be running there.
TEST_F(checkpointRun, TheNextSaveSweepsWhatAKilledSaveLeft) {
    const std::string ck = path("swept");
    fs::create_directories(ck + "/step-3.tmp-4242424242");
    std::ofstream(ck + "/step-3.tmp-4242424242/rank-00000.bin") << "half";
    std::ofstream(ck + "/latest.step-3.tmp-4242424242") << "step-3\n";
    std::ofstream(ck + "/step-3.tmp-notes.txt") << "a file of the user's"; // not a save's: kept
    fs::create_directories(ck + "/step-3.tmp-old");                        // nor this folder
    const Result r =
        cli("run --model tiny --ranks 1 --strategy zero3 --steps 1 --no-events --save " + ck);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(fs::exists(ck + "/step-3.tmp-4242424242"));
    EXPECT_FALSE(fs::exists(ck + "/latest.step-3.tmp-4242424242"));
    EXPECT_TRUE(fs::exists(ck + "/step-3.tmp-notes.txt"));
    EXPECT_TRUE(fs::exists(ck + "/step-3.tmp-old"));
    EXPECT_NE(r.out.find("note: removed " + ck +
                         "/step-3.tmp-4242424242, left by a save that did not finish"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(cli("checkpoint verify " + ck).code, 0);
}

// The recording shows every rank's save as a span (phase save, the file's bytes on its end)
// inside the step it follows, and the run's steps stay whole (none cut short by a save).
TEST_F(checkpointRun, SavesAreSpansInTheRecording) {
    const std::string trace = path("run.sstrace");
    const Result r =
        cli("run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 3 --save " +
            path("rec") + " --save-every 2 --trace " + trace);
    ASSERT_EQ(r.code, 0) << r.err;
    shardscope::protocol::StreamDecoder decoder;
    decoder.feed(slurp(trace));
    shardscope::replay::StreamAssembler assembler;
    while (auto record = decoder.next())
        assembler.consume(std::move(*record));
    const auto out = assembler.take();
    ASSERT_TRUE(out.ended);
    ASSERT_EQ(out.steps.size(), 3u);
    std::vector<std::vector<std::uint64_t>> saved(3); // per step: bytes of each rank's save span
    for (const auto& step : out.steps) {
        EXPECT_TRUE(step->complete);
        for (const shardscope::Event& e : step->events)
            if (e.phase == shardscope::Phase::Save && e.kind == shardscope::EventKind::ComputeEnd)
                saved[static_cast<std::size_t>(step->step)].push_back(e.bytes);
    }
    // Saves after step 2 (--save-every 2) and after the last step (3): two ranks each.
    EXPECT_TRUE(saved[0].empty());
    ASSERT_EQ(saved[1].size(), 2u);
    ASSERT_EQ(saved[2].size(), 2u);
    EXPECT_EQ(saved[1][0] + saved[1][1], 71900u * 12);
    EXPECT_EQ(saved[2][0] + saved[2][1], 71900u * 12);
}

// The export loads with Python's `safetensors` where it is installed (SHARDSCOPE_TEST_PYTHON
// names the interpreter; python3 by default): every tensor, its shape and its bytes.
TEST_F(checkpointRun, ExportLoadsWithPythonSafetensors) {
    const char* env = std::getenv("SHARDSCOPE_TEST_PYTHON");
    const std::string python = env ? env : "python3";
    if (std::system((python + " -c 'import safetensors.numpy, numpy' 2>/dev/null").c_str()) != 0)
        GTEST_SKIP() << python << " has no safetensors/numpy";
    run("zero3", 3, 1, "--save " + path("py"));
    const std::string out = path("py.safetensors");
    ASSERT_EQ(cli("checkpoint export " + path("py") + " --out " + out + " --optimizer").code, 0);
    const std::string script = path("check.py");
    std::ofstream(script)
        << "import sys\nfrom safetensors.numpy import load_file\n"
           "t = load_file(sys.argv[1])\n"
           "w = {k: v for k, v in t.items() if not k.endswith(('.exp_avg', '.exp_avg_sq'))}\n"
           "print(len(t), sum(v.size for v in w.values()), t['block0.attn.qkv.weight'].shape,"
           " str(t['head.ln_f.bias'].dtype))\n";
    const std::string said = path("py.out");
    ASSERT_EQ(std::system((python + " " + script + " " + out + " >" + said).c_str()), 0);
    EXPECT_EQ(slurp(said), "87 71900 (50, 150) float32\n");
}

// A save that fails on a full disk (a 1200 KiB tmpfs in a private mount namespace: room for
// one checkpoint of tiny, 863 KiB, not two) says so in one line; the previous checkpoint and
// `latest` stay intact and loadable. Skipped where mounting is not allowed.
TEST_F(checkpointRun, ASaveOnAFullDiskKeepsThePreviousCheckpoint) {
    if (std::system("unshare -m sh -c 'mkdir -p /tmp/.ss-probe && mount -t tmpfs -o size=64k none "
                    "/tmp/.ss-probe' 2>/dev/null") != 0)
        GTEST_SKIP() << "no tmpfs mount here (needs root and mount namespaces)";
    // Synchronous, and with --save-async (the writer thread's failure surfaces at the commit).
    for (const std::string flag : {"", "--save-async"}) {
        const std::string how = flag.empty() ? "" : "-async";
        const std::string disk = path("disk" + how), copy = path("copy" + how);
        fs::create_directories(disk);
        const std::string bin = std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-cli";
        const std::string ck = disk + "/ck";
        const std::string common =
            " --model tiny --shared-device --ranks 2 --strategy zero3 --steps 1 --no-events " +
            flag + " ";
        const std::string script = "mount -t tmpfs -o size=1200k none " + disk + " && " + bin +
                                   " run" + common + "--save " + ck + " >/dev/null && (" + bin +
                                   " run" + common + "--resume " + ck + " --save " + ck + " 2>" +
                                   path("second.err" + how) + " >/dev/null; echo $? >" +
                                   path("second.rc" + how) + "); cp -a " + ck + " " + copy;
        ASSERT_EQ(std::system(("unshare -m sh -c '" + script + "'").c_str()), 0);
        const std::string err = slurp(path("second.err" + how));
        EXPECT_EQ(slurp(path("second.rc" + how)), "1\n") << err;
        // Named once: "rank R, after step 2: --save: cannot write …", not "rank 0, …: --save: rank
        // 0: …".
        EXPECT_NE(err.find("--save: cannot"), std::string::npos) << err;
        EXPECT_EQ(err.find("rank ", err.find("rank ") + 1), std::string::npos) << err;
        EXPECT_NE(err.find("no space left on device"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_EQ(slurp(copy + "/latest"), "step-1\n");
        EXPECT_FALSE(fs::exists(copy + "/step-2"));
        for (const auto& e : fs::directory_iterator(copy))
            EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
                << e.path(); // the failed save cleaned up
        const Result v = cli("checkpoint verify " + copy);
        EXPECT_EQ(v.code, 0) << v.err;
    }
}

} // namespace
