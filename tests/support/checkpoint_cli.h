#pragma once
// The checkpoint tests' fixture: shardscope-cli as a real process (tiny model, rank threads)
// in a private temporary folder, and the consolidated state of a checkpoint (its export).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace shardscope_test {

namespace fs = std::filesystem;

struct Result {
    int code = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class checkpointRun : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/shardscope-ckpt-run-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    Result cli(const std::string& args, const std::string& prefix = "") {
        const fs::path out = dir_ / "cli.out", err = dir_ / "cli.err";
        const std::string cmd = prefix + std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-cli " +
                                args + " >" + out.string() + " 2>" + err.string();
        const int status = std::system(cmd.c_str());
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
    }
    // shardscope-worker started directly (not through the CLI, which checks a checkpoint first).
    Result worker(const std::string& args) {
        const fs::path out = dir_ / "worker.out", err = dir_ / "worker.err";
        const std::string cmd = std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-worker " + args +
                                " >" + out.string() + " 2>" + err.string();
        const int status = std::system(cmd.c_str());
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
    }
    // A tiny run on `ranks` rank threads; returns its report.
    nlohmann::json run(const std::string& strategy, int ranks, int steps,
                       const std::string& extra) {
        const std::string json = (dir_ / "report.json").string();
        fs::remove(json);
        const std::string hybrid = strategy == "fsdp_hybrid"
                                       ? " --hybrid-group " + std::to_string(ranks % 2 == 0 ? 2 : 1)
                                       : "";
        const Result r =
            cli("run --model tiny " + launch_ + " --ranks " + std::to_string(ranks) +
                " --strategy " + strategy + hybrid + " --steps " + std::to_string(steps) +
                " --deterministic --no-events --json " + json + " " + extra);
        EXPECT_EQ(r.code, 0) << r.err;
        if (r.code != 0) return nlohmann::json::object();
        return nlohmann::json::parse(slurp(json));
    }
    // The data section of an export with the optimizer: master, m and v of every parameter.
    std::string consolidated(const std::string& ckpt) {
        const std::string out = (dir_ / "export.safetensors").string();
        const Result r = cli("checkpoint export " + ckpt + " --out " + out + " --optimizer");
        EXPECT_EQ(r.code, 0) << r.err;
        const std::string all = slurp(out);
        std::uint64_t len = 0;
        for (int i = 7; i >= 0 && all.size() >= 8; --i)
            len = (len << 8) | static_cast<unsigned char>(all[static_cast<std::size_t>(i)]);
        return all.size() >= 8 + len ? all.substr(8 + len) : std::string();
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
    std::string launch_ = "--shared-device"; // rank threads; "" runs the ranks under mpirun
};

// (b) through the engine: a state saved at N under one strategy, loaded at M under another and
// saved again (--steps 0), consolidates to the same bytes.

struct Pair {
    const char* from;
    int n;
    const char* to;
    int m;
};
// The test's name in ctest: "zero3 3 -> fsdp 2", not the struct's bytes (pointers, which change
// from build to build and make ctest -R by name unreliable).
inline void PrintTo(const Pair& p, std::ostream* os) {
    *os << p.from << ' ' << p.n << " -> " << p.to << ' ' << p.m;
}

class checkpointReshard : public checkpointRun {
public:
    void check(const Pair& p) {
        const std::string src = path(std::string("b-") + p.from + std::to_string(p.n));
        if (!fs::exists(src)) run(p.from, p.n, 1, "--save " + src);
        const std::string dst = path(std::string("c-") + p.to + std::to_string(p.m));
        fs::remove_all(dst);
        const nlohmann::json conv = run(p.to, p.m, 0, "--resume " + src + " --save " + dst);
        EXPECT_EQ(conv["losses"].size(), 0u);
        const std::string a = consolidated(src), b = consolidated(dst);
        ASSERT_EQ(a.size(), 71900u * 12);
        EXPECT_TRUE(a == b) << p.from << " N=" << p.n << " → " << p.to << " M=" << p.m;
        const Result v = cli("checkpoint verify " + dst);
        EXPECT_EQ(v.code, 0) << v.err;
        EXPECT_NE(v.out.find("on " + std::to_string(p.m) + " ranks"), std::string::npos) << v.out;
    }
};

} // namespace shardscope_test
