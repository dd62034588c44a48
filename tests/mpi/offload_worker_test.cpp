// ZeRO-Offload end to end: shardscope-worker at N = 1, 2, 3, as rank threads (--shared-device)
// and under a real mpirun. Every offloaded run's losses and param digest equal the same run on
// the device (--deterministic), and every rank's model states and peaks per tier equal the
// theory's (the report's model_state_bytes_by_tier / peak_bytes_by_tier beside the theory's).
// The NVMe tier's run-level faults: a rank file cut short mid-run, the files of a killed job.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

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
        std::string cmd = mpi ? std::string(SHARDSCOPE_MPIRUN) + " -np " + std::to_string(ranks) +
                                    " " + SHARDSCOPE_WORKER
                              : std::string(SHARDSCOPE_WORKER) + " --shared-device --ranks " +
                                    std::to_string(ranks);
        cmd += " --model tiny --strategy " + strategy +
               " --steps 2 --grad-accum 2 --deterministic --no-events --json " + report.string() +
               " " + offload + " >" + (dir / "out").string() + " 2>&1";
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
            EXPECT_EQ(rank["model_state_bytes_by_tier"], theory["model_state_bytes_by_tier"])
                << what;
            for (const char* tier : {"host", "nvme"})
                for (const auto& [category, bytes] :
                     rank["model_state_bytes_by_tier"][tier].items())
                    host += bytes.get<std::uint64_t>();
        }
        EXPECT_GT(host, 0u) << what;
        const json& rank0 = offloaded["ranks"][0]["peak_bytes_by_tier"];
        for (const char* tier : {"device", "host", "nvme"})
            EXPECT_EQ(rank0[tier]["total"], theory["peak_bytes_by_tier"][tier])
                << what << " " << tier;
        EXPECT_LT(rank0["device"]["total"].get<std::uint64_t>(),
                  device["ranks"][0]["peak_bytes_by_tier"]["device"]["total"].get<std::uint64_t>())
            << what;
    }

    fs::path dir;
};

TEST_F(OffloadWorker, RankThreadsAtOneTwoThreeRanksEqualTheDeviceRun) {
    for (int n : {1, 2, 3}) {
        const json zero1 = run(false, n, "zero1", "");
        const json zero3 =
            run(false, n, "zero3", ""); // zero2, zero3 and the FSDP flavours agree bitwise
        const std::string at = " at N=" + std::to_string(n) + " (threads)";
        expectParityAndTiers(zero1, run(false, n, "zero1", "--offload-optimizer host"),
                             "zero1 optimizer" + at);
        expectParityAndTiers(zero3, run(false, n, "zero2", "--offload-optimizer host"),
                             "zero2 optimizer" + at);
        expectParityAndTiers(
            zero3, run(false, n, "zero3", "--offload-optimizer host --offload-params host"),
            "zero3 both" + at);
        expectParityAndTiers(zero3, run(false, n, "fsdp", "--offload-params host"),
                             "fsdp params" + at);
        expectParityAndTiers(zero3, run(false, n, "fsdp_grad_op", "--offload-optimizer host"),
                             "fsdp_grad_op optimizer" + at);
        const std::string nvme = "--offload-optimizer nvme --nvme-dir " + dir.string();
        expectParityAndTiers(zero1, run(false, n, "zero1", nvme), "zero1 nvme" + at);
        expectParityAndTiers(
            zero3, run(false, n, "zero3", nvme + " --offload-params host --aio-block-bytes 8KiB"),
            "zero3 nvme" + at);
        const std::string params = "--offload-params nvme --nvme-dir " + dir.string();
        expectParityAndTiers(zero3, run(false, n, "zero3", params), "zero3 params nvme" + at);
        expectParityAndTiers(zero3, run(false, n, "fsdp", params + " --offload-optimizer host"),
                             "fsdp params nvme" + at);
        expectParityAndTiers(zero3,
                             run(false, n, "fsdp_grad_op",
                                 params + " --offload-optimizer nvme --aio-block-bytes 8KiB"),
                             "fsdp_grad_op both nvme" + at);
    }
}

TEST_F(OffloadWorker, MpiRanksWithParamsOnNvmeEqualTheDeviceRun) {
    for (int n : {1, 2, 3}) {
        const std::string at = " at N=" + std::to_string(n) + " (mpirun)";
        const std::string params = "--offload-params nvme --nvme-dir " + dir.string();
        const json zero3 = run(true, n, "zero3", "");
        expectParityAndTiers(zero3, run(true, n, "zero3", params + " --offload-optimizer nvme"),
                             "zero3 both nvme" + at);
        if (n == 3) // FSDP's own path over MPI once (rank threads cover it at every N)
            expectParityAndTiers(zero3, run(true, n, "fsdp", params + " --offload-optimizer host"),
                                 "fsdp params nvme" + at);
    }
}

TEST_F(OffloadWorker, MpiRanksEqualTheDeviceRun) {
    for (int n : {2, 3}) {
        const std::string at = " at N=" + std::to_string(n) + " (mpirun)";
        expectParityAndTiers(run(true, n, "zero1", ""),
                             run(true, n, "zero1", "--offload-optimizer host"),
                             "zero1 optimizer" + at);
        const json zero3 = run(true, n, "zero3", "");
        expectParityAndTiers(
            zero3, run(true, n, "zero3", "--offload-optimizer host --offload-params host"),
            "zero3 both" + at);
        expectParityAndTiers(
            zero3, run(true, n, "zero3", "--offload-optimizer nvme --nvme-dir " + dir.string()),
            "zero3 nvme" + at);
    }
}

TEST_F(OffloadWorker, NvmeFilesAreRemovedUnlessKept) {
    const std::string nvme = "--offload-optimizer nvme --nvme-dir " + dir.string();
    ASSERT_FALSE(run(false, 2, "zero2", nvme).is_null());
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir))
        files += e.path().extension() == ".nvme";
    EXPECT_EQ(files, 0u);
    const nlohmann::json kept = run(false, 2, "zero2", nvme + " --keep-nvme");
    ASSERT_FALSE(kept.is_null());
    for (const auto& e : fs::directory_iterator(dir))
        files += e.path().extension() == ".nvme";
    EXPECT_EQ(files, 2u) << "one file per rank";
    // The report (and so the CLI's notes) says where they are.
    EXPECT_NE(
        kept["notes"].dump().find("--keep-nvme: each rank's NVMe file stays in " + dir.string()),
        std::string::npos)
        << kept["notes"].dump();
}

// A long run whose rank files (in `disk`) a shell `action` changes once both exist (`$f`: the
// last file, `$pid`: the pid in its name): its exit code and stderr. MPI ranks run as a user runs
// them, through the CLI. The run is cut off after a minute at most (exit 124): nothing may hang.
// With `mount` the script runs in a private mount namespace, `mount` first.
std::pair<int, std::string> runAndInterfere(const fs::path& dir, bool mpi,
                                            const std::string& action, const fs::path& disk = {},
                                            const std::string& mount = {}) {
    const std::string launch = mpi ? std::string(SHARDSCOPE_CLI) + " run --ranks 2"
                                   : std::string(SHARDSCOPE_WORKER) + " --shared-device --ranks 2";
    const fs::path err = dir / "err", rc = dir / "rc";
    const std::string files = (disk.empty() ? dir : disk).string();
    const std::string script =
        (mount.empty() ? "" : mount + " && ") + "(timeout 60 " + launch +
        " --model tiny --strategy zero3 --steps 1000000 --no-events --offload-params nvme"
        " --offload-optimizer nvme --nvme-dir " +
        files + " >/dev/null 2>" + err.string() + "; echo $? >" + rc.string() +
        ") & job=$!; for i in $(seq 300); do [ $(ls " + files +
        "/*.nvme 2>/dev/null | wc -l) = 2 ] && break; sleep 0.1; done; sleep 0.5; f=$(ls " + files +
        "/*.nvme | tail -1); pid=${f##*-}; pid=${pid%.nvme}; " + action + "; wait $job";
    EXPECT_EQ(
        std::system(((mount.empty() ? "sh -c '" : "unshare -m sh -c '") + script + "'").c_str()), 0)
        << script;
    std::ifstream rcIn(rc), errIn(err);
    int code = -1;
    rcIn >> code;
    std::ostringstream text;
    text << errIn.rdbuf();
    return {code, text.str()};
}

std::vector<fs::path> rankFiles(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".nvme") out.push_back(e.path());
    return out;
}

// A rank file cut short under a running job: the rank that reads it names file and offset in
// one line, every rank ends (no hang), the job exits 1 and the files are removed.
TEST_F(OffloadWorker, AFileCutShortMidRunFailsTheRunCleanly) {
    for (bool mpi : {false, true}) {
        const std::string what = mpi ? "mpirun" : "threads";
        // Again and again until the job ends: a cut made before the rank's first writes would be
        // written over (-c: a file already removed is not made again).
        const auto [code, err] = runAndInterfere(
            dir, mpi, "while kill -0 $job 2>/dev/null; do truncate -c -s 4096 $f; sleep 0.2; done");
        EXPECT_EQ(code, 1) << what << ": " << err;
        EXPECT_NE(err.find("nvme: reading " + dir.string() + "/shardscope-rank"), std::string::npos)
            << what << ": " << err;
        EXPECT_NE(err.find(" at offset "), std::string::npos) << what << ": " << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << what << ": " << err;
        EXPECT_TRUE(rankFiles(dir).empty()) << what;
    }
}

// A disk that fills up under a running job (a 2 MiB tmpfs in a private mount namespace: the
// files' blocks punched out, the room taken by another file, again until the job ends): the
// rank that writes names file, offset and reason in one line; the job exits 1, nothing hangs.
TEST_F(OffloadWorker, ADiskThatFillsUpMidRunFailsTheRunCleanly) {
    if (std::system("unshare -m sh -c 'mkdir -p /tmp/.ss-probe && mount -t tmpfs -o size=64k none "
                    "/tmp/.ss-probe' 2>/dev/null") != 0)
        GTEST_SKIP() << "no tmpfs mount here (needs root and mount namespaces)";
    const fs::path disk = dir / "disk";
    fs::create_directories(disk);
    const std::string fill =
        "while kill -0 $job 2>/dev/null; do for g in " + disk.string() +
        "/*.nvme; do fallocate -p -o 0 -l 1048576 $g 2>/dev/null; done; dd if=/dev/zero of=" +
        disk.string() +
        "/filler bs=4k count=1000 oflag=append conv=notrunc 2>/dev/null; sleep 0.1; done";
    const auto [code, err] =
        runAndInterfere(dir, false, fill, disk, "mount -t tmpfs -o size=2m none " + disk.string());
    EXPECT_EQ(code, 1) << err;
    EXPECT_NE(err.find("nvme: writing " + disk.string() + "/shardscope-rank"), std::string::npos)
        << err;
    EXPECT_NE(err.find(" at offset "), std::string::npos) << err;
    EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

// An --nvme-dir nobody may write (root writes anywhere but on a read-only file system: a
// read-only tmpfs in a private mount namespace): one line naming it, exit 2, before training.
TEST_F(OffloadWorker, AnUnwritableNvmeDirIsOneLineAndExitTwo) {
    if (std::system("unshare -m sh -c 'mkdir -p /tmp/.ss-probe && mount -t tmpfs -o size=64k none "
                    "/tmp/.ss-probe' 2>/dev/null") != 0)
        GTEST_SKIP() << "no tmpfs mount here (needs root and mount namespaces)";
    const fs::path disk = dir / "ro";
    fs::create_directories(disk);
    const std::string cmd =
        "unshare -m sh -c 'mount -t tmpfs -o ro,size=64k none " + disk.string() + " && " +
        SHARDSCOPE_WORKER +
        " --model tiny --strategy zero3 --steps 1 --offload-params nvme --nvme-dir " +
        disk.string() + "' >" + (dir / "out").string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    std::ifstream in(dir / "out");
    std::string line, extra;
    std::getline(in, line);
    EXPECT_NE(line.find("--nvme-dir " + disk.string() + " is not writable: Read-only file system"),
              std::string::npos)
        << line;
    EXPECT_FALSE(std::getline(in, extra)) << "more than one line: " << extra;
}

// SIGKILL runs no cleanup: the killed job's files stay until the next job in the directory
// sweeps them (the pid no longer runs), naming each.
TEST_F(OffloadWorker, FilesOfAKilledJobAreSweptByTheNextOne) {
    const auto [code, err] = runAndInterfere(dir, false, "kill -9 $pid");
    EXPECT_EQ(code, 137) << err;
    const std::vector<fs::path> left = rankFiles(dir);
    ASSERT_EQ(left.size(), 2u) << "one file per rank, left by SIGKILL";
    // The sweep leaves files touched in the last seconds (their creator may not hold its lock
    // yet): the next job comes a minute later.
    for (const fs::path& f : left)
        fs::last_write_time(f, fs::file_time_type::clock::now() - std::chrono::minutes(1));
    ASSERT_FALSE(
        run(false, 1, "zero3", "--offload-params nvme --nvme-dir " + dir.string()).is_null());
    EXPECT_TRUE(rankFiles(dir).empty());
    std::ifstream in(dir / "out");
    std::ostringstream said;
    said << in.rdbuf();
    for (const fs::path& f : left)
        EXPECT_NE(said.str().find("note: removed " + f.string()), std::string::npos) << said.str();
}

TEST_F(OffloadWorker, BadOffloadFlagsAreOneLineAndExitTwo) {
    const std::pair<std::string, std::string> cases[] = {
        {"--strategy ddp --offload-optimizer host",
         "--offload-optimizer needs a strategy that shards the optimizer"},
        {"--strategy zero3 --offload-optimizer nvme --nvme-dir " + (dir / "missing").string(),
         "No such file or directory"},
        {"--strategy zero3 --offload-optimizer nvme --nvme-dir /etc/hostname",
         "is not a directory"},
        {"--strategy zero2 --offload-params nvme --nvme-dir " + dir.string(),
         "--offload-params needs a strategy that shards params"},
        {"--strategy zero3 --offload-params nvme", "--offload-params nvme needs --nvme-dir"},
    };
    for (const auto& [flags, expected] : cases) {
        const std::string cmd = std::string(SHARDSCOPE_WORKER) + " --model tiny --steps 1 " +
                                flags + " >" + (dir / "out").string() + " 2>&1";
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
