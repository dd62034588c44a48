// Outputs and inputs the user names (core/user_files.h): never replacing a device or FIFO,
// unique temporary files, no silent clobber of a file another process finished, errno in words,
// and --data inputs that are regular files of a sane size, opened without blocking.
#include "core/error.h"
#include "core/user_files.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace shardscope {
namespace {

namespace fs = std::filesystem;

class coreFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("ss-user-files-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
    std::string path(const std::string& name) const { return (dir / name).string(); }
    std::string slurp(const std::string& name) const {
        std::ifstream in(path(name), std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    int entries() const {
        int n = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
            ++n;
        return n;
    }
    fs::path dir;
};

// The message and kind of what `f` throws ("" when nothing).
template <class F> std::pair<std::string, ErrorKind> thrown(F f) {
    try {
        f();
    } catch (const Error& e) {
        return {e.what(), e.kind()};
    }
    return {"", ErrorKind::Internal};
}

TEST_F(coreFiles, WritesAtomicallyAndReplacesARegularFile) {
    std::ofstream(path("r.json")) << "old";
    {
        OutputFile out(path("r.json"), "--json");
        out.write("new");
        EXPECT_EQ(slurp("r.json"), "old") << "nothing under the name until commit";
        EXPECT_EQ(out.commit(), path("r.json"));
    }
    EXPECT_EQ(slurp("r.json"), "new");
    EXPECT_EQ(entries(), 1) << "no temporary file left";
    {
        OutputFile abandoned(path("gone.json"), "--json");
        abandoned.write("half");
    }
    EXPECT_FALSE(fs::exists(path("gone.json")));
    EXPECT_EQ(entries(), 1) << "an output never committed leaves nothing";
}

TEST_F(coreFiles, SpecialFilesAreRefusedNotReplaced) {
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    for (const std::string& target : {path("fifo"), std::string("/dev/null")}) {
        const auto [message, kind] = thrown([&] { OutputFile out(target, "--json"); });
        EXPECT_NE(message.find("--json: '" + target + "' is not a regular file"), std::string::npos)
            << message;
        EXPECT_EQ(kind, ErrorKind::Io);
        EXPECT_NE(thrown([&] { checkOutputPath(target, "--trace"); }).first.find("--trace"),
                  std::string::npos);
    }
    struct stat st {};
    ASSERT_EQ(::stat(path("fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO is still a FIFO";
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    // Behind a symbolic link too; a link to a regular file is followed and stays a link.
    fs::create_symlink(path("fifo"), path("to-fifo"));
    EXPECT_NE(thrown([&] {
                  checkOutputPath(path("to-fifo"), "--json");
              }).first.find("not a regular file"),
              std::string::npos);
    std::ofstream(path("real.json")) << "old";
    fs::create_symlink(path("real.json"), path("link.json"));
    {
        OutputFile out(path("link.json"), "--json");
        out.write("new");
        out.commit();
    }
    EXPECT_TRUE(fs::is_symlink(path("link.json")));
    EXPECT_EQ(slurp("real.json"), "new");
}

TEST_F(coreFiles, BadOutputPathsAreRefusedBeforeAnythingRuns) {
    EXPECT_NE(thrown([&] { checkOutputPath(dir.string(), "--json"); }).first.find("is a directory"),
              std::string::npos);
    const auto missing = thrown([&] { checkOutputPath(path("no/such/r.json"), "--json"); });
    EXPECT_NE(missing.first.find("--json: folder '" + path("no/such") + "' does not exist"),
              std::string::npos)
        << missing.first;
    EXPECT_EQ(missing.second, ErrorKind::Io);
    std::ofstream(path("file")) << "x";
    EXPECT_NE(thrown([&] {
                  checkOutputPath(path("file/r.json"), "--json");
              }).first.find("is not a folder"),
              std::string::npos);
    // A folder no file can be created in (for root too: /proc refuses new files).
    EXPECT_NE(thrown([&] {
                  checkOutputPath("/proc/r.json", "--json");
              }).first.find("--json: cannot create files in '/proc'"),
              std::string::npos);
    EXPECT_EQ(thrown([] { checkOutputPath("", "--json"); }).second, ErrorKind::InvalidArgument);
    checkOutputPath(path("fine.json"), "--json");
    EXPECT_EQ(entries(), 1) << "the probe file is removed";
}

TEST_F(coreFiles, TwoOutputsNamingTheSameFileAreRefused) {
    fs::create_directories(dir / "sub");
    const auto same = thrown([&] {
        checkDistinctFiles({{"--json", path("a")}, {"--trace", path("sub/../a")}});
    });
    EXPECT_NE(same.first.find("--json and --trace name the same file"), std::string::npos)
        << same.first;
    EXPECT_EQ(same.second, ErrorKind::InvalidArgument);
    std::ofstream(path("data.txt")) << "bytes";
    fs::create_symlink(path("data.txt"), path("alias"));
    EXPECT_NE(thrown([&] {
                  checkDistinctFiles({{"--data", path("data.txt")}, {"--json", path("alias")}});
              }).first.find("--data and --json"),
              std::string::npos);
    EXPECT_EQ(
        thrown([&] {
            checkDistinctFiles({{"--json", path("a")}, {"--trace", path("b")}, {"--ending", ""}});
        }).first,
        "");
}

TEST_F(coreFiles, TemporaryFilesAreUniqueAndAFinishedFileIsNotClobbered) {
    // Two writers of one missing target: each has its own temporary file.
    OutputFile first(path("t.sstrace"), "--trace");
    OutputFile second(path("t.sstrace"), "--trace");
    first.write("first");
    second.write("second");
    EXPECT_EQ(entries(), 2);
    EXPECT_EQ(first.commit(), path("t.sstrace"));
    const std::string kept = second.commit();
    EXPECT_NE(kept, path("t.sstrace")) << "the file the first writer finished is not replaced";
    EXPECT_EQ(slurp("t.sstrace"), "first");
    EXPECT_EQ(kept, path("t." + std::to_string(::getpid()) + ".sstrace"));
    EXPECT_EQ(slurp(fs::path(kept).filename().string()), "second");

    // A target that existed and was rewritten by someone else meanwhile.
    std::ofstream(path("r.json")) << "before";
    OutputFile late(path("r.json"), "--json");
    fs::remove(path("r.json"));
    std::ofstream(path("r.json")) << "someone else's";
    late.write("mine");
    EXPECT_NE(late.commit(), path("r.json"));
    EXPECT_EQ(slurp("r.json"), "someone else's");
}

TEST_F(coreFiles, WriteErrorsSayWhatTheSystemSaid) {
    EXPECT_EQ(ioErrorText(ENOSPC), "no space left on device");
    EXPECT_EQ(ioErrorText(EACCES), "permission denied");
    EXPECT_EQ(ioErrorText(EIO), "input/output error");
    // A write that fails (here: past RLIMIT_FSIZE, EFBIG) names the reason, not "Unknown error".
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto [message, kind] = thrown([&] {
        OutputFile out(path("big.bin"), "--weights-out");
        out.write(std::string(1 << 20, 'x'));
        out.commit();
    });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous);
    EXPECT_NE(message.find("--weights-out: cannot write '" + path("big.bin") + "': file too large"),
              std::string::npos)
        << message;
    EXPECT_EQ(kind, ErrorKind::Io);
    EXPECT_FALSE(fs::exists(path("big.bin")));
}

TEST_F(coreFiles, InputsAreRegularFilesOfASaneSizeAndNeverBlock) {
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    const auto fifo = thrown([&] { openInputFile(path("fifo"), "--data", 33, kMaxDataFileBytes); });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2))
        << "a FIFO without writer does not block";
    EXPECT_NE(fifo.first.find("is not a regular file"), std::string::npos) << fifo.first;
    EXPECT_NE(thrown([&] {
                  openInputFile("/dev/zero", "--data", 33, kMaxDataFileBytes);
              }).first.find("not a regular file"),
              std::string::npos);
    EXPECT_NE(thrown([&] {
                  openInputFile(dir.string(), "--data", 33, kMaxDataFileBytes);
              }).first.find("is a directory"),
              std::string::npos);
    std::ofstream(path("empty"));
    const auto empty =
        thrown([&] { openInputFile(path("empty"), "--data", 33, kMaxDataFileBytes); });
    EXPECT_NE(empty.first.find("has 0 bytes; at least 33"), std::string::npos) << empty.first;
    EXPECT_EQ(empty.second, ErrorKind::InvalidArgument);
    std::ofstream(path("big")) << std::string(100, 'x');
    EXPECT_NE(
        thrown([&] { openInputFile(path("big"), "--data", 33, 99); }).first.find("at most 99"),
        std::string::npos);
    const auto [fd, size] = openInputFile(path("big"), "--data", 33, 100);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(size, 100u);
    ::close(fd);
}

// The temporaries of writers that died before committing (the CLI SIGKILLed while recording)
// go when the output is written again — only provably dead ones: not one whose pid lives, one
// touched in the last 3 s, one a live writer holds locked, or a link.
TEST_F(coreFiles, DeadWritersTemporariesAreSweptAndNothingElse) {
    auto make = [&](const std::string& name, bool old) {
        std::ofstream(path(name)) << "x";
        if (old) {
            const timespec times[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
            EXPECT_EQ(::utimensat(AT_FDCWD, path(name).c_str(), times, 0), 0);
        }
    };
    const std::string dead = "out.json.99999999-0123abcd.partial"; // no such pid (pid_max < 2^22)
    make(dead, true);
    make("out.json.99999998-0123abcd.partial", false); // fresh: a writer may be starting
    const std::string live = "out.json." + std::to_string(::getpid()) + "-00000000.partial";
    make(live, true);
    make("out.json.99999997-0123abcd.partial", true);
    const int held = ::open(path("out.json.99999997-0123abcd.partial").c_str(), O_RDONLY);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0); // a live writer in another PID namespace
    make("elsewhere", true);
    fs::create_symlink(path("elsewhere"), path("out.json.99999996-0123abcd.partial"));
    make("other.json.99999999-0123abcd.partial", true); // another output's
    {
        OutputFile out(path("out.json"), "--json");
        out.write("{}");
        out.commit();
    }
    EXPECT_FALSE(fs::exists(path(dead)));
    for (const char* kept :
         {"out.json.99999998-0123abcd.partial", "out.json.99999997-0123abcd.partial",
          "other.json.99999999-0123abcd.partial", "elsewhere"})
        EXPECT_TRUE(fs::exists(path(kept))) << kept;
    EXPECT_TRUE(fs::exists(path(live)));
    EXPECT_TRUE(fs::is_symlink(path("out.json.99999996-0123abcd.partial")));
    ::close(held);
    EXPECT_EQ(slurp("out.json"), "{}");
}

} // namespace
} // namespace shardscope

namespace shardscope {
namespace {

// An error quoting a file's bytes stays one whole, printable line: a NUL no longer cuts it short
// (what() is a C string) and broken UTF-8 is escaped, never echoed raw to a terminal.
TEST(errorText, NulAndBrokenUtf8AreEscapedNotCut) {
    using namespace std::string_literals;
    const Error e(ErrorKind::InvalidArgument,
                  "value 'a\0b' and '\xff\xfe' in "s + "x.yaml → refused");
    const std::string what = e.what();
    EXPECT_EQ(what, "value 'a\\x00b' and '\\xff\\xfe' in x.yaml → refused");
}

TEST(errorText, CliRefusalQuotingBadBytesIsOnePrintableLine) {
    const std::string dir = ::testing::TempDir();
    const std::string file = dir + "/nul-value.yaml";
    std::ofstream(file) << "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                           "  fsdp_sharding_strategy: \"a\\0b\"\n";
    const std::string cmd = std::string(SHARDSCOPE_BIN_DIR) +
                            "/shardscope-cli run --model tiny --shared-device --ranks 2 "
                            "--strategy ddp --steps 1 --accelerate-config " +
                            file + " 2>" + dir + "/nul-value.err";
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
    std::ifstream in(dir + "/nul-value.err");
    const std::string err((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(err.find("'a\\x00b': must be"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
}

} // namespace
} // namespace shardscope
