// The NVMe tier's file engine (offload/nvme_store.h) against what goes wrong outside it: a disk
// that fills up under a write, and the files a rank killed with SIGKILL leaves behind.
#include "core/error.h"
#include "offload/nvme_store.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace shardscope {
namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("ss-nvme-faults-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

// A pid that ran and ended (reaped): no process has it until the kernel reuses it.
pid_t deadPid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

TEST(offloadNvmeFaults, StaleFilesOfDeadProcessesAreSweptAndNothingElse) {
    TempDir dir;
    offload::NvmeStore live({dir.path.string(), false, 4096, 2},
                            0); // a running rank: its file is locked
    // A rank file as a killed rank leaves it: 0600, not locked, last written a minute ago.
    const auto left = [&](const std::string& name) {
        std::ofstream(dir.path / name) << "x";
        fs::permissions(dir.path / name, fs::perms::owner_read | fs::perms::owner_write);
        fs::last_write_time(dir.path / name,
                            fs::file_time_type::clock::now() - std::chrono::minutes(1));
        return dir.path / name;
    };
    const fs::path stale = left("shardscope-rank1-" + std::to_string(deadPid()) + ".nvme");
    // Pids repeat (containers, hosts sharing the folder): a file naming a running pid but held
    // by no rank is stale too.
    const fs::path reused = left("shardscope-rank2-" + std::to_string(::getpid()) + ".nvme");
    const fs::path other = left("notes-rank1-" + std::to_string(deadPid()) + ".nvme");
    const fs::path odd = left("shardscope-rank1-12x4.nvme");
    const fs::path kept = left("shardscope-rank1-" + std::to_string(deadPid()) + ".kept.nvme");
    const fs::path young = dir.path / ("shardscope-rank4-" + std::to_string(deadPid()) + ".nvme");
    std::ofstream(young) << "x";
    fs::permissions(young, fs::perms::owner_read | fs::perms::owner_write);
    const fs::path shared = left("shardscope-rank5-" + std::to_string(deadPid()) + ".nvme");
    fs::permissions(shared, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    const fs::path fifo = dir.path / ("shardscope-rank6-" + std::to_string(deadPid()) + ".nvme");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const fs::path link = dir.path / ("shardscope-rank7-" + std::to_string(deadPid()) + ".nvme");
    fs::create_symlink(other, link);
    fs::last_write_time(live.path(), fs::file_time_type::clock::now() - std::chrono::minutes(1));
    const std::vector<std::string> removed = offload::sweepStaleFiles(dir.path.string());
    ASSERT_EQ(removed.size(), 2u);
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_FALSE(fs::exists(reused));
    for (const fs::path& stays : {other, odd, kept, young, shared, fifo, fs::path(live.path())})
        EXPECT_TRUE(fs::exists(fs::symlink_status(stays))) << stays;
    EXPECT_TRUE(fs::is_symlink(link));
    { // a store sweeps before it creates its own file
        const fs::path again = left("shardscope-rank3-" + std::to_string(deadPid()) + ".nvme");
        offload::NvmeStore store({dir.path.string(), false, 4096, 2}, 3);
        EXPECT_FALSE(fs::exists(again));
        EXPECT_TRUE(fs::exists(store.path()));
    }
    { // --keep-nvme: a name no sweep takes
        std::string path;
        {
            offload::NvmeStore keep({dir.path.string(), true, 4096, 2}, 8);
            path = keep.path();
        }
        EXPECT_NE(path.find(".kept.nvme"), std::string::npos) << path;
        fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::minutes(1));
        offload::sweepStaleFiles(dir.path.string());
        EXPECT_TRUE(fs::exists(path));
    }
}

// A write that meets a full disk: one line naming the file, the offset and the reason. The disk
// is a 64 KiB tmpfs mounted in a child's private mount namespace (needs root; skipped otherwise).
TEST(offloadNvmeFaults, AWriteOnAFullDiskNamesFileAndOffset) {
    TempDir dir;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(fds[0]);
        const auto say = [&](const std::string& text, int code) {
            if (::write(fds[1], text.data(), text.size()) < 0) code = 9;
            ::_exit(code);
        };
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("none", dir.path.c_str(), "tmpfs", 0, "size=64k") != 0)
            say(std::strerror(errno), 2);
        try {
            offload::NvmeStore store({dir.path.string(), false, 8192, 4}, 0);
            const std::uint64_t bytes = 256 * 1024;
            const std::uint64_t at = store.reserve(bytes);
            void* buffer = std::aligned_alloc(offload::kAlign, bytes);
            std::memset(buffer, 7, bytes);
            store.write(at, buffer, bytes);
            say("a 256 KiB write to a 64 KiB disk succeeded", 1);
        } catch (const Error& e) {
            say(e.what(), e.kind() == ErrorKind::Io ? 0 : 1);
        }
    }
    ::close(fds[1]);
    std::string said;
    char c = 0;
    while (::read(fds[0], &c, 1) == 1)
        said.push_back(c);
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << said;
    if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "no tmpfs mount here: " << said;
    EXPECT_EQ(WEXITSTATUS(status), 0) << said;
    EXPECT_NE(said.find(dir.path.string() + "/shardscope-rank0-"), std::string::npos) << said;
    EXPECT_NE(said.find("at offset "), std::string::npos) << said;
    EXPECT_NE(said.find(std::strerror(ENOSPC)), std::string::npos) << said;
    EXPECT_EQ(said.find('\n'), std::string::npos) << said;
    EXPECT_TRUE(fs::is_empty(dir.path)) << "the file lived on the child's tmpfs only";
}

} // namespace
} // namespace shardscope
