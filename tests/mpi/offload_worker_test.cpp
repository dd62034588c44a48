// ZeRO-Offload end to end: shardscope-worker at N = 1, 2, 3, as rank threads (--shared-device)
// and under a real mpirun. Every offloaded run's losses and param digest equal the same run on
// the device (--deterministic), and every rank's model states and peaks per tier equal the
// theory's (the report's model_state_bytes_by_tier / peak_bytes_by_tier beside the theory's).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class OffloadWorker : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("ss-offload-" + std::to_string(::getpid()));
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    // The report of one run, or null (with a failure naming the command) when it did not finish.
    json run(bool mpi, int ranks, const std::string& strategy, const std::string& offload) {
        const fs::path report = dir / "r.json";
        fs::remove(report);
        std::string cmd = mpi ? std::string(SHARDSCOPE_MPIRUN) + " -np " + std::to_string(ranks) + " " + SHARDSCOPE_WORKER
                              : std::string(SHARDSCOPE_WORKER) + " --shared-device --ranks " + std::to_string(ranks);
        cmd += " --model tiny --strategy " + strategy + " --steps 2 --grad-accum 2 --deterministic --no-events --json " +
               report.string() + " " + offload + " >" + (dir / "out").string() + " 2>&1";
        const int status = std::system(cmd.c_str());
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::ifstream in(dir / "out");
            std::ostringstream s;
            s << in.rdbuf();
            ADD_FAILURE() << cmd << "\n" << s.str();
            return nullptr;
        }
        std::ifstream in(report);
        return json::parse(in);
    }

    // Losses and digest equal the device run's; every rank's tiers equal the theory's.
    void expectParityAndTiers(const json& device, const json& offloaded, const std::string& what) {
        ASSERT_FALSE(device.is_null());
        ASSERT_FALSE(offloaded.is_null());
        EXPECT_EQ(offloaded["param_digest"], device["param_digest"]) << what;
        EXPECT_EQ(offloaded["losses"], device["losses"]) << what;
        EXPECT_TRUE(offloaded["comparison"]["model_states_equal"].get<bool>()) << what;
        EXPECT_EQ(offloaded["comparison"]["peak_delta_bytes"], 0) << what;
        const json& theory = offloaded["theory"];
        std::uint64_t host = 0;
        for (const json& rank : offloaded["ranks"]) {
            EXPECT_EQ(rank["model_state_bytes_by_tier"], theory["model_state_bytes_by_tier"]) << what;
            for (const char* tier : {"host", "nvme"})
                for (const auto& [category, bytes] : rank["model_state_bytes_by_tier"][tier].items())
                    host += bytes.get<std::uint64_t>();
        }
        EXPECT_GT(host, 0u) << what;
        const json& rank0 = offloaded["ranks"][0]["peak_bytes_by_tier"];
        for (const char* tier : {"device", "host", "nvme"})
            EXPECT_EQ(rank0[tier]["total"], theory["peak_bytes_by_tier"][tier]) << what << " " << tier;
        EXPECT_LT(rank0["device"]["total"].get<std::uint64_t>(),
                  device["ranks"][0]["peak_bytes_by_tier"]["device"]["total"].get<std::uint64_t>()) << what;
    }

    fs::path dir;
};

TEST_F(OffloadWorker, RankThreadsAtOneTwoThreeRanksEqualTheDeviceRun) {
    for (int n : {1, 2, 3}) {
        const json zero1 = run(false, n, "zero1", "");
        const json zero3 = run(false, n, "zero3", ""); // zero2, zero3 and the FSDP flavours agree bitwise
        const std::string at = " at N=" + std::to_string(n) + " (threads)";
        expectParityAndTiers(zero1, run(false, n, "zero1", "--offload-optimizer host"), "zero1 optimizer" + at);
        expectParityAndTiers(zero3, run(false, n, "zero2", "--offload-optimizer host"), "zero2 optimizer" + at);
        expectParityAndTiers(zero3, run(false, n, "zero3", "--offload-optimizer host --offload-params host"), "zero3 both" + at);
        expectParityAndTiers(zero3, run(false, n, "fsdp", "--offload-params host"), "fsdp params" + at);
        expectParityAndTiers(zero3, run(false, n, "fsdp_grad_op", "--offload-optimizer host"), "fsdp_grad_op optimizer" + at);
        const std::string nvme = "--offload-optimizer nvme --nvme-dir " + dir.string();
        expectParityAndTiers(zero1, run(false, n, "zero1", nvme), "zero1 nvme" + at);
        expectParityAndTiers(zero3, run(false, n, "zero3", nvme + " --offload-params host --aio-block-bytes 8KiB"), "zero3 nvme" + at);
    }
}

TEST_F(OffloadWorker, MpiRanksEqualTheDeviceRun) {
    for (int n : {2, 3}) {
        const std::string at = " at N=" + std::to_string(n) + " (mpirun)";
        expectParityAndTiers(run(true, n, "zero1", ""), run(true, n, "zero1", "--offload-optimizer host"), "zero1 optimizer" + at);
        const json zero3 = run(true, n, "zero3", "");
        expectParityAndTiers(zero3, run(true, n, "zero3", "--offload-optimizer host --offload-params host"), "zero3 both" + at);
        expectParityAndTiers(zero3, run(true, n, "zero3", "--offload-optimizer nvme --nvme-dir " + dir.string()), "zero3 nvme" + at);
    }
}

TEST_F(OffloadWorker, NvmeFilesAreRemovedUnlessKept) {
    const std::string nvme = "--offload-optimizer nvme --nvme-dir " + dir.string();
    ASSERT_FALSE(run(false, 2, "zero2", nvme).is_null());
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".nvme";
    EXPECT_EQ(files, 0u);
    ASSERT_FALSE(run(false, 2, "zero2", nvme + " --keep-nvme").is_null());
    for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".nvme";
    EXPECT_EQ(files, 2u) << "one file per rank";
}

TEST_F(OffloadWorker, BadOffloadFlagsAreOneLineAndExitTwo) {
    const std::pair<std::string, std::string> cases[] = {
        {"--strategy ddp --offload-optimizer host", "--offload-optimizer needs a strategy that shards the optimizer"},
        {"--strategy zero3 --offload-optimizer nvme --nvme-dir " + (dir / "missing").string(), "No such file or directory"},
        {"--strategy zero3 --offload-optimizer nvme --nvme-dir /etc/hostname", "is not a directory"},
    };
    for (const auto& [flags, expected] : cases) {
        const std::string cmd = std::string(SHARDSCOPE_WORKER) + " --model tiny --steps 1 " + flags + " >" +
                                (dir / "out").string() + " 2>&1";
        const int status = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 2) << flags;
        std::ifstream in(dir / "out");
        std::string line, extra;
        std::getline(in, line);
        EXPECT_NE(line.find(expected), std::string::npos) << line;
        EXPECT_FALSE(std::getline(in, extra)) << "more than one line: " << extra;
    }
}

} // namespace
