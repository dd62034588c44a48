// shardscope-worker --shared-device (N ranks as threads of one process, shared-host
// communicators on the CPU) against the same job under a real mpirun:
//  - with --deterministic, losses and final fp32 weights are bitwise the MPI run's, for 1–4
//    ranks and DDP, ZeRO-1/2/3, FSDP, and for HYBRID_SHARD over shared sub-groups;
//  - the report's exposed-communication figures are consistent (fraction in [0, 1],
//    exposed ≤ communication union ≤ step time), with and without --no-events;
//  - a failing rank ends the job within seconds with exit 1, ONE line naming the rank and the
//    step, and a finished recording ending in its Failure record;
//  - bad flags (and --backend cuda on a machine without a GPU) are one line and exit 2.
#include "protocol/protocol.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct WorkerRun {
    int exitCode = -1;
    std::string err;
    double seconds = 0;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int countLines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

int workerLines(const std::string& text) {
    int n = 0;
    for (std::size_t at = text.find("shardscope-worker:"); at != std::string::npos;
         at = text.find("shardscope-worker:", at + 1))
        ++n;
    return n;
}

class SharedDeviceTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("ss-shared-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    // `prefix` is empty (the worker alone) or "mpirun -np N".
    WorkerRun run(const std::string& prefix, const std::string& args) {
        const std::string cmd = prefix + (prefix.empty() ? "" : " ") + SHARDSCOPE_WORKER + " " +
                                args + " >" + (dir / "out").string() + " 2>" +
                                (dir / "err").string();
        const auto t0 = std::chrono::steady_clock::now();
        const int status = std::system(cmd.c_str());
        WorkerRun r;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.err = slurp(dir / "err");
        return r;
    }
    WorkerRun shared(int ranks, const std::string& args) {
        return run("", args + " --shared-device --ranks " + std::to_string(ranks));
    }
    WorkerRun mpi(int ranks, const std::string& args) {
        return run(std::string(SHARDSCOPE_MPIRUN) + " -np " + std::to_string(ranks), args);
    }
    std::string path(const std::string& name) const { return (dir / name).string(); }
    nlohmann::json report(const std::string& name) const {
        return nlohmann::json::parse(slurp(path(name)));
    }
    fs::path dir;
};

// What must hold for every rank's exposed-communication figures.
void expectConsistentOverlap(const nlohmann::json& report, const std::string& label) {
    const auto steps = report["steps"].get<std::size_t>();
    double worst = 0;
    for (const auto& rank : report["ranks"]) {
        ASSERT_TRUE(rank.contains("exposed_comm")) << label;
        const auto& e = rank["exposed_comm"];
        const auto exposed = e["exposed_ns"].get<std::uint64_t>(),
                   comm = e["comm_union_ns"].get<std::uint64_t>(),
                   step = e["step_ns"].get<std::uint64_t>();
        EXPECT_LE(exposed, comm) << label << " rank " << rank["rank"];
        EXPECT_LE(comm, step) << label << " rank " << rank["rank"];
        EXPECT_GT(step, 0u) << label;
        ASSERT_EQ(e["fraction_per_step"].size(), steps) << label;
        for (const auto& f : e["fraction_per_step"]) {
            EXPECT_GE(f.get<double>(), 0.0) << label;
            EXPECT_LE(f.get<double>(), 1.0) << label;
        }
        const double median = e["fraction_median"].get<double>();
        EXPECT_GE(median, 0.0) << label;
        EXPECT_LE(median, 1.0) << label;
        worst = std::max(worst, median);
        // With peers there is communication in every step; a single rank has none.
        if (report["world_size"].get<int>() > 1)
            EXPECT_GT(comm, 0u) << label;
        else
            EXPECT_EQ(comm, 0u) << label;
    }
    EXPECT_DOUBLE_EQ(report["exposed_comm_fraction"].get<double>(), worst) << label;
}

// The same allocations on both: every category's peak and the total. comm_buffer is the
// exception — MPI's deterministic reductions stage whole buffers for an alltoall, the shared
// communicators sum straight from the peers' buffers (only all-reduce has a chunk of scratch) —
// and it is not what makes the peak here.
void expectSameLedgerPeaks(const nlohmann::json& shared, const nlohmann::json& mpi,
                           const std::string& label) {
    for (const auto& [category, bytes] : mpi.items())
        if (category != "comm_buffer") {
            EXPECT_EQ(shared[category], bytes) << label << ": " << category << " peak";
        }
    EXPECT_LE(shared["comm_buffer"].get<std::uint64_t>(), mpi["comm_buffer"].get<std::uint64_t>())
        << label;
}

TEST_F(SharedDeviceTest, EveryStrategyIsBitwiseTheMpiRunForOneToFourRanks) {
    const std::string common = "--model tiny --steps 2 --deterministic --seed 3";
    for (int n = 1; n <= 4; ++n) {
        // The MPI reference: DDP, which every deterministic strategy equals bit for bit
        // (strategy_mpi_np*), and at 3 ranks every strategy's own MPI run as well.
        const std::string ref = "mpi" + std::to_string(n);
        const WorkerRun m = mpi(n, "--strategy ddp " + common + " --json " + path(ref + ".json") +
                                       " --weights-out " + path(ref + ".w"));
        ASSERT_EQ(m.exitCode, 0) << m.err;
        const nlohmann::json mpiReport = report(ref + ".json");
        for (const char* s : {"ddp", "zero1", "zero2", "zero3", "fsdp"}) {
            const std::string label = std::string(s) + " on " + std::to_string(n) + " shared ranks";
            const std::string name = std::string(s) + std::to_string(n);
            const WorkerRun r =
                shared(n, std::string("--strategy ") + s + " " + common + " --json " +
                              path(name + ".json") + " --weights-out " + path(name + ".w"));
            ASSERT_EQ(r.exitCode, 0) << label << "\n" << r.err;
            const nlohmann::json j = report(name + ".json");
            EXPECT_EQ(j["world_size"], n) << label;
            EXPECT_EQ(j["config"]["shared_device"], true) << label;
            EXPECT_EQ(j["losses"], mpiReport["losses"]) << label;
            EXPECT_EQ(j["param_digest"], mpiReport["param_digest"]) << label;
            EXPECT_TRUE(slurp(path(name + ".w")) == slurp(path(ref + ".w")))
                << label << ": final weights differ";
            EXPECT_TRUE(j["comparison"]["model_states_equal"].get<bool>()) << label;
            EXPECT_EQ(j["comm_bytes_per_step"], j["theory"]["comm_bytes_per_step"]) << label;
            expectConsistentOverlap(j, label);
            // The theory replays the shared collectives' scratch too: every category's peak.
            for (auto rank : j["ranks"]) {
                EXPECT_EQ(rank["peak_bytes"]["total"], j["theory"]["predicted_peak_bytes"])
                    << label;
                rank["peak_bytes"].erase("total");
                EXPECT_EQ(rank["peak_bytes"], j["theory"]["peak_by_category"])
                    << label << " rank " << rank["rank"];
            }
            if (n == 3 && std::string(s) != "ddp") {
                const WorkerRun own = mpi(3, std::string("--strategy ") + s + " " + common +
                                                 " --json " + path(name + "-mpi.json"));
                ASSERT_EQ(own.exitCode, 0) << own.err;
                const nlohmann::json o = report(name + "-mpi.json");
                EXPECT_EQ(j["losses"], o["losses"]) << label << " vs its MPI run";
                EXPECT_EQ(j["param_digest"], o["param_digest"]) << label << " vs its MPI run";
                expectSameLedgerPeaks(j["ranks"][2]["peak_bytes"], o["ranks"][2]["peak_bytes"],
                                      label);
            }
        }
    }
}

// HYBRID_SHARD reduces in two levels (shard group, then replicas): the shared sub-groups must
// form the same groups in the same order as MPI_Comm_split for the sums to match bit for bit.
TEST_F(SharedDeviceTest, HybridShardOverSharedSubGroupsIsBitwiseTheMpiRun) {
    const std::string args =
        "--model tiny --steps 2 --deterministic --strategy fsdp_hybrid --hybrid-group 2";
    const WorkerRun m = mpi(4, args + " --json " + path("mpi.json"));
    ASSERT_EQ(m.exitCode, 0) << m.err;
    const WorkerRun s = shared(4, args + " --json " + path("shared.json"));
    ASSERT_EQ(s.exitCode, 0) << s.err;
    const auto a = report("mpi.json"), b = report("shared.json");
    EXPECT_EQ(b["losses"], a["losses"]);
    EXPECT_EQ(b["param_digest"], a["param_digest"]);
    EXPECT_EQ(b["comm_bytes_per_step"], a["comm_bytes_per_step"]);
    for (int r = 0; r < 4; ++r)
        expectSameLedgerPeaks(b["ranks"][r]["peak_bytes"], a["ranks"][r]["peak_bytes"],
                              "rank " + std::to_string(r));
    expectConsistentOverlap(b, "fsdp_hybrid");
}

TEST_F(SharedDeviceTest, NoEventsKeepsTheOverlapFigures) {
    const WorkerRun r = shared(2, "--model tiny --strategy zero3 --steps 3 --no-events --json " +
                                      path("r.json") + " --trace " + path("t.sstrace"));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto rec = shardscope::protocol::readRecording(path("t.sstrace"));
    ASSERT_EQ(rec.handshakes.size(), 2u);
    EXPECT_EQ(rec.batches.size(), 2u * 4u) << "the states' batch and one per step, per rank";
    for (const auto& b : rec.batches)
        EXPECT_TRUE(b.events.empty());
    EXPECT_TRUE(rec.ended);
    expectConsistentOverlap(report("r.json"), "--no-events");
}

TEST_F(SharedDeviceTest, AFailingRankEndsTheJobWithOneLineAndAFailureRecord) {
    // A --capacity below the step's peak: a rank runs out of memory in step 1. Its peers are
    // either out of memory too or waiting for it in a collective — they must not print, wait
    // for the 30 s deadline, or hang.
    for (const std::string strategy : {"zero3", "fsdp_hybrid --hybrid-group 2", "ddp"}) {
        const WorkerRun r =
            shared(4, "--model tiny --strategy " + strategy +
                          " --steps 2 --capacity 1200000 --timeout-ms 30000 --trace " +
                          path("oom.sstrace"));
        EXPECT_EQ(r.exitCode, 1) << strategy << "\n" << r.err;
        EXPECT_LT(r.seconds, 5.0) << strategy;
        EXPECT_EQ(countLines(r.err), 1) << strategy << "\n" << r.err;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(
            r.err, m, std::regex(R"(^shardscope-worker: rank (\d), step 1: .*out of memory)")))
            << strategy << "\n"
            << r.err;
        ASSERT_TRUE(fs::exists(path("oom.sstrace"))) << "finished (renamed), not left as .partial";
        const auto rec = shardscope::protocol::readRecording(path("oom.sstrace"));
        ASSERT_EQ(rec.failures.size(), 1u) << strategy;
        EXPECT_EQ(rec.failures[0].rank, std::stoi(m[1])) << strategy;
        EXPECT_EQ(rec.failures[0].step, 0) << strategy;
        EXPECT_TRUE(rec.ended) << strategy;
        EXPECT_FALSE(rec.reportJson) << strategy;
    }
}

TEST_F(SharedDeviceTest, BadFlagsAreOneLineAndExitTwo) {
    const std::string base = "--model tiny --strategy ddp --steps 1";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {base + " --shared-device", "--shared-device needs --ranks"},
        {base + " --shared-device --ranks 0", "--ranks"},
        {base + " --ranks 2", "--ranks is for --shared-device"},
        {base + " --backend foo", "--backend must be cpu or cuda, got 'foo'"},
        {"--model tiny --steps 1 --shared-device --ranks 3 --strategy fsdp_hybrid --hybrid-group 2",
         "hybrid group size (--hybrid-group) 2 does not divide"},
        // No GPU on this machine (and no driver): the probe's reason, not a crash.
        {base + " --shared-device --ranks 2 --backend cuda", "--backend cuda: "},
    };
    for (const auto& [args, needle] : cases) {
        const WorkerRun r = run("", args);
        EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.err;
        EXPECT_EQ(countLines(r.err), 1) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("shardscope-worker: " + needle), std::string::npos) << args << "\n"
                                                                                 << r.err;
    }
    // Under mpirun: a shared-device worker is one process; --backend cuda agrees on the reason.
    // (mpirun adds its own summary of the exit codes; the workers print one line between them.)
    const WorkerRun twice = mpi(2, base + " --shared-device --ranks 2");
    EXPECT_EQ(twice.exitCode, 2) << twice.err;
    EXPECT_EQ(workerLines(twice.err), 1) << twice.err;
    EXPECT_NE(twice.err.find("start it without mpirun"), std::string::npos) << twice.err;
    const WorkerRun cuda = mpi(2, base + " --backend cuda");
    EXPECT_EQ(cuda.exitCode, 2) << cuda.err;
    EXPECT_EQ(workerLines(cuda.err), 1) << cuda.err;
    EXPECT_NE(cuda.err.find("shardscope-worker: --backend cuda: "), std::string::npos) << cuda.err;
}

} // namespace
