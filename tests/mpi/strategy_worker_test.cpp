// shardscope-worker under a real mpirun: the report, the recording and the weights file of a
// good run; one line and exit 2 for a bad flag; one line, a Failure record and a finished
// recording for an out-of-memory rank.
#include "protocol/protocol.h"
#include "train/report.h"
#include "train/trainer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct WorkerRun {
    int exitCode = -1;
    std::string out, err;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class WorkerTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("ss-worker-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    WorkerRun worker(int ranks, const std::string& args) {
        const std::string cmd = std::string(SHARDSCOPE_MPIRUN) + " -np " + std::to_string(ranks) +
                                " " + SHARDSCOPE_WORKER + " " + args + " >" +
                                (dir / "out").string() + " 2>" + (dir / "err").string();
        const int status = std::system(cmd.c_str());
        WorkerRun r;
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.out = slurp(dir / "out");
        r.err = slurp(dir / "err");
        return r;
    }
    std::string path(const char* name) const { return (dir / name).string(); }
    fs::path dir;
};

std::vector<std::vector<float>> readWeights(const std::string& path) {
    const std::string bytes = slurp(path);
    std::vector<float> flat(bytes.size() / sizeof(float));
    std::memcpy(flat.data(), bytes.data(), flat.size() * sizeof(float));
    return {flat};
}

int countLines(const std::string& text, const std::string& needle) {
    int n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1))
        ++n;
    return n;
}

TEST_F(WorkerTest, ReportRecordingAndWeightsOfAGoodRun) {
    const std::string common = "--model tiny --steps 2 --deterministic --seed 5";
    const WorkerRun z3 =
        worker(3, "--strategy zero3 " + common + " --json " + path("z3.json") + " --trace " +
                      path("z3.sstrace") + " --weights-out " + path("z3.w"));
    ASSERT_EQ(z3.exitCode, 0) << z3.err;
    const WorkerRun ddp = worker(3, "--strategy ddp " + common + " --json " + path("ddp.json") +
                                        " --weights-out " + path("ddp.w"));
    ASSERT_EQ(ddp.exitCode, 0) << ddp.err;

    const auto report = nlohmann::json::parse(slurp(path("z3.json")));
    for (const char* key :
         {"param_count", "world_size", "strategy", "losses", "ranks", "comm_bytes_per_step",
          "theory", "param_digest", "step_ms", "comparison", "notes"})
        EXPECT_TRUE(report.contains(key)) << key;
    EXPECT_EQ(report["param_count"], 71900);
    EXPECT_EQ(report["world_size"], 3);
    EXPECT_EQ(report["strategy"], "zero3");
    EXPECT_EQ(report["losses"].size(), 2u);
    ASSERT_EQ(report["ranks"].size(), 3u);
    EXPECT_EQ(report["ranks"][2]["model_state_bytes"], report["theory"]["model_state_bytes"]);
    EXPECT_EQ(report["ranks"][1]["peak_bytes"]["total"], report["theory"]["predicted_peak_bytes"]);
    EXPECT_EQ(report["comm_bytes_per_step"], report["theory"]["comm_bytes_per_step"]);
    EXPECT_TRUE(report["comparison"]["model_states_equal"].get<bool>());
    EXPECT_GT(report["theory"]["psi_equivalents"].get<double>(),
              1.9); // ZeRO-3 ≈ 3Ψ·(N−1)/N in bf16 units

    // The weights file is every unit's fp32 weights; its digest is the report's, and DDP's.
    const auto w = readWeights(path("z3.w"));
    EXPECT_EQ(w[0].size(), 71900u);
    EXPECT_EQ(shardscope::train::digestHex(shardscope::train::fnv1a(w)), report["param_digest"]);
    EXPECT_EQ(slurp(path("z3.w")), slurp(path("ddp.w"))) << "ZeRO-3 and DDP end bit-identical";
    EXPECT_EQ(shardscope::train::maxAbsDelta(shardscope::train::readWeightsFile(path("z3.w")),
                                             shardscope::train::readWeightsFile(path("ddp.w"))),
              0.0);
    const auto ddpReport = nlohmann::json::parse(slurp(path("ddp.json")));
    EXPECT_EQ(ddpReport["param_digest"], report["param_digest"]);
    EXPECT_EQ(ddpReport["losses"], report["losses"]);

    // The recording: a handshake per rank, the states' allocations, per step a batch per rank
    // and a summary, then the report and End.
    const auto rec = shardscope::protocol::readRecording(path("z3.sstrace"));
    ASSERT_EQ(rec.handshakes.size(), 3u);
    const auto config = nlohmann::json::parse(rec.handshakes[0].configJson);
    EXPECT_EQ(config["strategy"], "zero3");
    EXPECT_EQ(config["units"].size(), 4u);
    EXPECT_EQ(config["units"][0]["padded"], 6051); // 6050 padded to a multiple of 3
    EXPECT_TRUE(config["theory"].contains("ddp_model_state_bytes"));
    EXPECT_EQ(rec.batches.size(), 3u * 3u);
    EXPECT_EQ(rec.steps.size(), 2u);
    ASSERT_TRUE(rec.reportJson.has_value());
    EXPECT_TRUE(rec.ended);
    EXPECT_TRUE(rec.failures.empty());
    std::size_t gathers = 0;
    for (const auto& b : rec.batches)
        for (const auto& e : b.events)
            if (e.kind == shardscope::EventKind::CollectiveBegin &&
                e.collective == shardscope::CollectiveOp::AllGather)
                ++gathers;
    EXPECT_EQ(gathers, 3u * 2u * 2u * 4u) << "ranks × steps × passes × units";
}

// A T × D mesh under mpirun (TP and DP groups from MPI_Comm_split): ZeRO-3 with activation
// checkpointing on T = 2 × D = 2 is bitwise DDP on the same mesh (--deterministic), within the
// tolerance of tests/unit/tensor_parallel_test.cpp of DDP on D = 2 without TP, and its ledger
// and traffic — the TP all-reduces included — are the theory's.
TEST_F(WorkerTest, TensorParallelMeshUnderMpirun) {
    const std::string common =
        "--model tiny_tp --steps 2 --deterministic --seed 5 --precision fp32 ";
    const WorkerRun z3 = worker(4, common + "--strategy zero3 --tp 2 --checkpointing --json " +
                                       path("z3.json") + " --weights-out " + path("z3.w"));
    ASSERT_EQ(z3.exitCode, 0) << z3.err;
    const WorkerRun mesh =
        worker(4, common + "--strategy ddp --tp 2 --weights-out " + path("mesh.w"));
    ASSERT_EQ(mesh.exitCode, 0) << mesh.err;
    const WorkerRun ddp = worker(2, common + "--strategy ddp --json " + path("ddp.json") +
                                        " --weights-out " + path("ddp.w"));
    ASSERT_EQ(ddp.exitCode, 0) << ddp.err;

    const auto report = nlohmann::json::parse(slurp(path("z3.json")));
    EXPECT_EQ(report["param_count"], 80740) << "the whole model";
    EXPECT_EQ(report["world_size"], 4);
    for (int r = 0; r < 4; ++r) {
        EXPECT_EQ(report["ranks"][r]["model_state_bytes"], report["theory"]["model_state_bytes"])
            << r;
        EXPECT_EQ(report["ranks"][r]["peak_bytes"]["total"],
                  report["theory"]["predicted_peak_bytes"])
            << r;
    }
    EXPECT_EQ(report["comm_bytes_per_step"], report["theory"]["comm_bytes_per_step"]);
    // 3 blocks × (4 + 1 recompute) all-reduces of 4 × 32 × 44 fp32, sent 2(T−1)/T = 1× over T = 2.
    EXPECT_EQ(report["comm_bytes_per_step"]["tp_all_reduce"], 15 * 4 * 32 * 44 * 4);
    EXPECT_EQ(slurp(path("z3.w")), slurp(path("mesh.w")))
        << "ZeRO-3 and DDP on the mesh end bit-identical";
    const double delta =
        shardscope::train::maxAbsDelta(shardscope::train::readWeightsFile(path("z3.w")),
                                       shardscope::train::readWeightsFile(path("ddp.w")));
    EXPECT_GT(delta, 0.0) << "TP sums GEMMs in another order";
    EXPECT_LE(delta, 5e-4);
    const auto ddpReport = nlohmann::json::parse(slurp(path("ddp.json")));
    for (std::size_t k = 0; k < 2; ++k)
        EXPECT_NEAR(report["losses"][k].get<double>(), ddpReport["losses"][k].get<double>(), 1e-5);
}

TEST_F(WorkerTest, NoEventsKeepsTheStreamButDropsTheEvents) {
    const WorkerRun r = worker(2, "--model tiny --strategy zero2 --steps 1 --no-events --trace " +
                                      path("t.sstrace"));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto rec = shardscope::protocol::readRecording(path("t.sstrace"));
    for (const auto& b : rec.batches)
        EXPECT_TRUE(b.events.empty());
    EXPECT_TRUE(rec.ended);
}

TEST_F(WorkerTest, BadFlagIsOneLineAndExitTwo) {
    const WorkerRun r = worker(2, "--model tiny --strategy zero9 --steps 1");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(countLines(r.err, "shardscope-worker: --strategy: unknown strategy 'zero9'"), 1)
        << r.err;
    const WorkerRun h = worker(3, "--model tiny --strategy fsdp_hybrid --hybrid-group 2 --steps 1");
    EXPECT_EQ(h.exitCode, 2);
    EXPECT_EQ(countLines(h.err,
                         "shardscope-worker: hybrid group size (--hybrid-group) 2 does not divide"),
              1)
        << h.err;
}

TEST_F(WorkerTest, OutOfMemoryIsOneLinePerRankAFailureRecordAndAFinishedRecording) {
    const WorkerRun r =
        worker(2, "--model tiny --strategy zero3 --steps 2 --capacity 700000 --trace " +
                      path("oom.sstrace"));
    EXPECT_NE(r.exitCode, 0);
    EXPECT_GE(countLines(r.err, "shardscope-worker: rank "), 1) << r.err;
    EXPECT_NE(r.err.find(", step 1: "), std::string::npos) << r.err;
    ASSERT_TRUE(fs::exists(path("oom.sstrace"))) << "finished (renamed), not left as .partial";
    const auto rec = shardscope::protocol::readRecording(path("oom.sstrace"));
    ASSERT_EQ(rec.failures.size(), 1u);
    EXPECT_EQ(rec.failures[0].rank, 0);
    EXPECT_EQ(rec.failures[0].step, 0);
    EXPECT_TRUE(rec.ended);
}

// A failing rank under mpirun: only the worker's own lines, not OpenMPI's 8-line MPI_ABORT notice.
TEST_F(WorkerTest, AFailingRankIsItsOwnLineWithoutOpenMpisAbortNotice) {
    const WorkerRun r = worker(2, "--model tiny --strategy zero3 --steps 2 --capacity 700000");
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("-----"), std::string::npos) << r.err;
    const auto lines = std::count(r.err.begin(), r.err.end(), '\n');
    EXPECT_GE(lines, 1);
    EXPECT_EQ(countLines(r.err, "shardscope-worker: rank "), lines)
        << "every line is a rank's one line:\n"
        << r.err;
}

TEST_F(WorkerTest, HelpIsUsageAndExitZero) {
    for (const char* flag : {"--help", "-h"}) {
        const std::string cmd =
            std::string(SHARDSCOPE_WORKER) + " " + flag + " >" + path("out") + " 2>" + path("err");
        const int status = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0) << flag;
        const std::string out = slurp(path("out"));
        EXPECT_EQ(out.rfind("usage: shardscope-worker", 0), 0u) << out;
        EXPECT_NE(out.find("--stream SOCKET"), std::string::npos)
            << "the internal flag is documented as such";
        EXPECT_EQ(slurp(path("err")), "");
    }
}

TEST_F(WorkerTest, OutputsNamingOneFileAreRefusedBeforeTraining) {
    const WorkerRun r = worker(2, "--model tiny --strategy ddp --steps 1 --json " + path("x") +
                                      " --trace " + path("x"));
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(countLines(r.err, "shardscope-worker: --trace and --json name the same file"), 1)
        << r.err;
    EXPECT_FALSE(fs::exists(path("x")));
}

// Host memory that runs out (here: an address-space limit below gpt100m's 1.8 GB of model
// states) is a sentence, not "std::bad_alloc"; a job of one process exits 1 without MPI's notice.
TEST_F(WorkerTest, HostMemoryThatRunsOutIsASentence) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer cannot start under an address-space limit";
#else
    const std::string cmd = "ulimit -v 1500000; " + std::string(SHARDSCOPE_WORKER) +
                            " --model gpt100m --strategy ddp --steps 1 >" + path("out") + " 2>" +
                            path("err");
    const int status = std::system(("bash -c '" + cmd + "'").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string err = slurp(path("err"));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err.rfind("shardscope-worker: rank 0, setup: ", 0), 0u) << err;
    EXPECT_EQ(err.find(": std::bad_alloc\n"), std::string::npos) << err;
    EXPECT_EQ(err.find("MPI_ABORT"), std::string::npos) << err;
#endif
}

} // namespace
