// `shardscope-cli run`, as a real process: the JSON report, exit code 2 on bad flags, and
// outputs and inputs checked before anything runs.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Result {
    int code = -1;
    std::string out;
    std::string err;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Result runCli(const std::string& args, const std::string& env = "") {
    // ctest runs test cases as parallel processes: every call gets its own capture files.
    static int calls = 0;
    const std::string stem =
        "shardscope_train_cli_" + std::to_string(::getpid()) + "_" + std::to_string(++calls);
    const fs::path dir = fs::temp_directory_path();
    const fs::path out = dir / (stem + ".out"), err = dir / (stem + ".err");
    const std::string cmd = env + (env.empty() ? "" : " ") + std::string(SHARDSCOPE_BIN_DIR) +
                            "/shardscope-cli " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

TEST(trainCli, RunTinyWritesACompleteJsonReport) {
    const fs::path json = fs::temp_directory_path() /
                          ("shardscope_train_cli_report_" + std::to_string(::getpid()) + ".json");
    fs::remove(json);
    const Result r =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 3 --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("step     3/3"), std::string::npos) << r.out;
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["param_count"], 71900);
    EXPECT_EQ(j["world_size"], 1);
    EXPECT_EQ(j["strategy"], "ddp");
    ASSERT_EQ(j["losses"].size(), 3u);
    for (const auto& l : j["losses"]) {
        EXPECT_TRUE(std::isfinite(l.get<double>()));
        EXPECT_GT(l.get<double>(), 0.0);
    }
    ASSERT_EQ(j["ranks"].size(), 1u);
    const auto& rank = j["ranks"][0];
    EXPECT_EQ(rank["rank"], 0);
    std::uint64_t states = 0;
    for (const auto& [category, bytes] : rank["model_state_bytes"].items())
        states += bytes.get<std::uint64_t>();
    EXPECT_EQ(states, 16u * 71900u);
    EXPECT_EQ(rank["model_state_bytes"], j["theory"]["model_state_bytes"]);
    EXPECT_EQ(rank["peak_bytes"]["activation"], j["theory"]["activation_peak_bytes"]);
    EXPECT_GT(rank["peak_bytes"]["workspace"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(j["comm_bytes_per_step"].is_object());
    EXPECT_TRUE(j["comm_bytes_per_step"].empty());
    const std::string digest = j["param_digest"];
    EXPECT_EQ(digest.size(), 16u);
    EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
    // Same seed → same digest; fp32 and checkpointing flags are accepted.
    const Result again =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 3 --checkpointing --json " +
               json.string());
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["param_digest"], digest);
    EXPECT_EQ(runCli("run --model tiny --ranks 1 --strategy ddp --steps 1 --precision fp32 --seed "
                     "4 --micro-batch 2 --lr 0.001")
                  .code,
              0);
    EXPECT_EQ(j["schema"], "shardscope.run/1");
    // The saved report reads back through the CLI's reader and prints as `run` printed it.
    const Result shown = runCli("report " + json.string());
    ASSERT_EQ(shown.code, 0) << shown.err;
    EXPECT_NE(shown.out.find("param digest"), std::string::npos) << shown.out;

    // A report from before reports carried a schema: one line naming the file, exit code 2.
    nlohmann::json old = nlohmann::json::parse(slurp(json));
    old.erase("schema");
    std::ofstream(json) << old.dump(2);
    const Result refused = runCli("report " + json.string());
    EXPECT_EQ(refused.code, 2);
    EXPECT_EQ(refused.err, "shardscope-cli report: " + json.string() +
                               ": report has no schema field (written by an older ShardScope); "
                               "re-run to regenerate\n");
    // A hostile one: a rank beyond world_size, also one line and exit code 2.
    old["schema"] = "shardscope.run/1";
    old["ranks"][0]["rank"] = 7;
    std::ofstream(json) << old.dump(2);
    const Result hostile = runCli("report " + json.string());
    EXPECT_EQ(hostile.code, 2);
    EXPECT_NE(hostile.err.find("ranks[0].rank"), std::string::npos) << hostile.err;
    EXPECT_EQ(std::count(hostile.err.begin(), hostile.err.end(), '\n'), 1) << hostile.err;
    EXPECT_EQ(runCli("report /nonexistent/r.json").code, 2);
    fs::remove(json);
}

TEST(trainCli, ByteLevelDataFile) {
    const fs::path text = fs::temp_directory_path() /
                          ("shardscope_train_cli_text_" + std::to_string(::getpid()) + ".txt");
    std::ofstream(text) << std::string(200, 'a') + "hello world, hello shardscope\n";
    const Result r =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 2 --data " + text.string());
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("vocab 256"), std::string::npos) << r.out;
    fs::remove(text);
}

// --shared-device: the CLI starts ONE worker process (no mpirun) that runs the ranks as
// threads; the report is the same report, with the exposed-communication figures.
TEST(trainCli, SharedDeviceRunsRanksAsThreadsAndReportsExposedCommunication) {
    const fs::path json = fs::temp_directory_path() /
                          ("shardscope_train_cli_shared_" + std::to_string(::getpid()) + ".json");
    fs::remove(json);
    const Result r = runCli("run --model tiny --ranks 3 --shared-device --strategy zero3 --steps 2 "
                            "--deterministic --json " +
                            json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("3 ranks (threads of one process) on cpu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("exposed comm"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("% of step"), std::string::npos) << r.out;
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["world_size"], 3);
    EXPECT_EQ(j["config"]["shared_device"], true);
    EXPECT_EQ(j["config"]["backend"], "cpu");
    ASSERT_EQ(j["ranks"].size(), 3u);
    EXPECT_EQ(j["ranks"][2]["model_state_bytes"], j["theory"]["model_state_bytes"]);
    for (const auto& rank : j["ranks"]) {
        const auto& e = rank["exposed_comm"];
        const double f = e["fraction_median"].get<double>();
        EXPECT_GE(f, 0.0);
        EXPECT_LE(f, 1.0);
        EXPECT_LE(e["exposed_ns"].get<std::uint64_t>(), e["comm_union_ns"].get<std::uint64_t>());
        EXPECT_LE(e["comm_union_ns"].get<std::uint64_t>(), e["step_ns"].get<std::uint64_t>());
        EXPECT_GT(e["comm_union_ns"].get<std::uint64_t>(), 0u) << "ZeRO-3 gathers every unit";
        EXPECT_EQ(e["fraction_per_step"].size(), 2u);
    }
    EXPECT_TRUE(j.contains("exposed_comm_fraction"));
    // A failing rank: exit 1 and one line naming it (the worker's, relayed).
    const Result oom = runCli(
        "run --model tiny --ranks 4 --shared-device --strategy zero3 --steps 2 --capacity 1200000");
    EXPECT_EQ(oom.code, 1) << oom.err;
    EXPECT_EQ(std::count(oom.err.begin(), oom.err.end(), '\n'), 1) << oom.err;
    EXPECT_NE(oom.err.find("out of memory"), std::string::npos) << oom.err;
    EXPECT_NE(oom.err.find("rank "), std::string::npos) << oom.err;
    fs::remove(json);
}

TEST(trainCli, BackendCudaWithoutADeviceSaysWhy) {
    // This machine has no GPU (or no driver): exit 2 and the probe's reason, for the MPI path and
    // the shared-device path alike. On a machine with a GPU the run goes to the worker instead.
    for (const char* shared : {"", " --shared-device"}) {
        const Result r = runCli(
            std::string("run --model tiny --ranks 2 --strategy ddp --steps 1 --backend cuda") +
            shared);
        if (r.code == 0) GTEST_SKIP() << "a CUDA device is present";
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find("--backend cuda: "), std::string::npos) << r.err;
    }
}

TEST(trainCli, BadFlagsExitTwoWithOneLine) {
    const fs::path json = fs::temp_directory_path() / "shardscope_no_such_dir" / "x.json";
    const char* cases[] = {
        "run --model tiny --ranks 1 --strategy ddp --steps 0",
        "run --model huge --ranks 1 --strategy ddp --steps 1",
        "run --model tiny --ranks 0 --strategy ddp --steps 1",
        "run --model tiny --ranks 4 --strategy fsdp_hybrid --hybrid-group 3 --steps 1",
        "run --model tiny --ranks 1 --strategy ddp --steps 1 --backend tpu",
        "run --model tiny --ranks 1 --strategy nope --steps 1",
        "run --model tiny --ranks 1 --strategy ddp --steps 1 --precision fp8",
        "run --model tiny --ranks 1 --strategy ddp --steps 1 --bogus",
        "run --model tiny --ranks 1 --strategy ddp --steps 1 --lr nan",
        "run --model tiny --ranks 1 --strategy ddp --steps 1 --data /no/such/file",
        "run --model tiny --ranks 1 --strategy ddp",
        // shared device / backend combinations
        "run --model tiny --ranks 0 --shared-device --strategy ddp --steps 1",
        "run --model tiny --ranks 2 --shared-device --strategy ddp --steps 1 --backend foo",
        "run --model tiny --ranks 2 --shared-device --strategy ddp --steps 1 --hostfile hosts",
        "run --model tiny --ranks 2 --shared-device --strategy ddp --steps 1 --mpirun-args \"-x "
        "A\"",
        "run --model tiny --ranks 2 --shared-device=yes --strategy ddp --steps 1",
        "run --model tiny --ranks 3 --shared-device --strategy fsdp_hybrid --hybrid-group 2 "
        "--steps 1",
    };
    for (const char* args : cases) {
        const Result r = runCli(args);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    }
    const Result r =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 1 --json " + json.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_FALSE(fs::exists(json));
    // Exceeding the capacity budget is a run-time failure (exit 1) that names the allocation.
    const Result oom =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 1 --capacity 1200000");
    EXPECT_EQ(oom.code, 1) << oom.err;
    EXPECT_NE(oom.err.find("out of memory"), std::string::npos) << oom.err;
}

// A folder of its own per test, removed afterwards.
struct Scratch {
    explicit Scratch(const std::string& name)
        : dir(fs::temp_directory_path() /
              ("shardscope_train_cli_" + name + "_" + std::to_string(::getpid()))) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
    fs::path dir;
};

bool noStepRan(const Result& r) {
    return r.out.find("step ") == std::string::npos;
}

TEST(trainCli, OutputsThatCannotBeWrittenAreRefusedBeforeRunning) {
    const Scratch s("outputs");
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    fs::create_directories(s.dir / "folder");
    const std::string run = "run --model tiny --ranks 1 --strategy ddp --steps 2 ";
    for (const std::string& flags : std::vector<std::string>{
             "--json " + (s / "fifo"), "--trace " + (s / "fifo"), "--ending " + (s / "fifo"),
             "--json " + (s / "folder"), "--trace " + (s / "folder"), "--ending " + (s / "folder"),
             "--weights-out " + (s / "folder"), "--json " + (s / "missing/r.json"),
             "--trace /proc/r.sstrace"}) {
        const Result r = runCli(run + flags);
        EXPECT_EQ(r.code, 2) << flags << "\n" << r.err;
        EXPECT_TRUE(noStepRan(r)) << flags << ": refused before the run\n" << r.out;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << flags << "\n" << r.err;
    }
    struct stat st {};
    ASSERT_EQ(::stat((s / "fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was not replaced by a regular file";
    EXPECT_TRUE(fs::is_directory(s.dir / "folder"));
}

TEST(trainCli, TwoOutputsNamingOneFileAreRefusedBeforeRunning) {
    const Scratch s("same");
    std::ofstream(s / "data.txt") << std::string(300, 'a');
    fs::create_directories(s.dir / "sub");
    const std::string run = "run --model tiny --ranks 1 --strategy ddp --steps 2 ";
    for (const std::string& flags :
         {"--json " + (s / "x") + " --trace " + (s / "x"),
          "--json " + (s / "x") + " --trace " + (s / "sub/../x"),
          "--json " + (s / "x") + " --ending " + (s / "x"),
          "--trace " + (s / "x") + " --weights-out " + (s / "x"),
          "--data " + (s / "data.txt") + " --json " + (s / "data.txt")}) {
        const Result r = runCli(run + flags);
        EXPECT_EQ(r.code, 2) << flags << "\n" << r.err;
        EXPECT_NE(r.err.find("name the same file"), std::string::npos) << flags << "\n" << r.err;
        EXPECT_TRUE(noStepRan(r)) << flags << "\n" << r.out;
    }
    EXPECT_FALSE(fs::exists(s.dir / "x"));
    EXPECT_EQ(slurp(s / "data.txt"), std::string(300, 'a')) << "the training data is untouched";
}

TEST(trainCli, ContradictoryOrRepeatedFlagsAreRefused) {
    const std::string run = "run --model tiny --ranks 1 --strategy ddp --steps 1 ";
    for (const std::string& args :
         {run + "--steps 2", run + "--json a.json --json b.json", run + "--ranks 1",
          run + "--shared-device --shared-device", run + "--deterministic --deterministic",
          run + "--seed 0x10", run + "--lr 0x1p-3",
          std::string("run --model tiny --ranks 2 --strategy zero3 --steps 1 --hybrid-group 2"),
          std::string("run --model tiny --ranks 2 --strategy ddp --steps 1 --hybrid-group 1"),
          std::string("compare --ranks 1 --steps 1 --nondeterministic --deterministic"),
          std::string("compare --ranks 1 --steps 1 --strategies ddp --strategies zero1"),
          std::string("compare --ranks 1 --steps 1 --weights-out w.bin"),
          std::string("compare --ranks 2 --steps 1 --strategies ddp,zero3 --hybrid-group 2")}) {
        const Result r = runCli(args);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
        EXPECT_TRUE(noStepRan(r)) << args;
    }
    EXPECT_NE(runCli(run + "--steps 2").err.find("--steps is given twice"), std::string::npos);
    // In compare the group goes to the rows that have shard groups (and twice is still twice).
    const Result hybrid = runCli("compare --ranks 2 --shared-device --steps 1 --strategies "
                                 "ddp,fsdp_hybrid --hybrid-group 2");
    EXPECT_EQ(hybrid.code, 0) << hybrid.err;
    EXPECT_EQ(runCli("compare --ranks 2 --steps 1 --strategies fsdp_hybrid --hybrid-group 2 "
                     "--hybrid-group 2")
                  .code,
              2);
}

TEST(trainCli, DataThatIsNotARegularFileOfEnoughBytesIsBadInputUpFront) {
    const Scratch s("data");
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    std::ofstream(s / "empty");
    std::ofstream(s / "short") << "tiny";
    // timeout: the old reader blocked on a FIFO and read /dev/zero until memory ran out.
    for (const std::string& data : std::vector<std::string>{
             s / "fifo", std::string("/dev/zero"), s / "empty", s / "short", s.dir.string()}) {
        const Result r =
            runCli("run --model tiny --ranks 1 --strategy ddp --steps 1 --data " + data);
        EXPECT_EQ(r.code, 2) << data << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << data << "\n" << r.err;
        EXPECT_NE(r.err.find("--data: "), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << data << ": refused before the run starts";
    }
}

TEST(trainCli, ReportOfAFifoOrDeviceIsRefusedWithoutBlocking) {
    const Scratch s("report");
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    for (const std::string& file :
         std::vector<std::string>{s / "fifo", "/dev/zero", s.dir.string()}) {
        const Result r = runCli("report " + file);
        EXPECT_EQ(r.code, 2) << file << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << file << "\n" << r.err;
        EXPECT_EQ(r.err.find("report: report:"), std::string::npos) << "the command is named once\n"
                                                                    << r.err;
        EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    }
}

// Two runs recording to one path at the same time: each writes its own temporary file, and the
// one that finishes second does not replace the first one's recording without saying so.
TEST(trainCli, TwoRunsWithOneTraceNeitherCorruptNorSilentlyReplace) {
    const Scratch s("two");
    const std::string cli = std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-cli";
    const std::string one =
        cli + " run --model tiny --ranks 1 --strategy ddp --steps 300 --trace " + (s / "t.sstrace");
    const std::string cmd = "(" + one + " >" + (s / "a.out") + " 2>" + (s / "a.err") +
                            "; echo $? >" + (s / "a.rc") + ") & (" + one + " >" + (s / "b.out") +
                            " 2>" + (s / "b.err") + "; echo $? >" + (s / "b.rc") + ") & wait";
    ASSERT_EQ(std::system(("bash -c '" + cmd + "'").c_str()), 0);
    const int a = std::stoi(slurp(s / "a.rc")), b = std::stoi(slurp(s / "b.rc"));
    const std::string errs = slurp(s / "a.err") + slurp(s / "b.err");
    EXPECT_EQ(a + b, 1) << "one run put its recording in place, the other says where its own went\n"
                        << errs;
    EXPECT_NE(errs.find("was written by another process while this job ran"), std::string::npos)
        << errs;
    EXPECT_TRUE(fs::exists(s.dir / "t.sstrace"));
    int recordings = 0, partial = 0;
    for (const auto& e : fs::directory_iterator(s.dir)) {
        const std::string name = e.path().filename().string();
        if (name.ends_with(".sstrace")) {
            ++recordings;
            EXPECT_GT(fs::file_size(e.path()), 1000u) << name;
        }
        if (name.find("partial") != std::string::npos) ++partial;
    }
    EXPECT_EQ(recordings, 2) << "both recordings kept";
    EXPECT_EQ(partial, 0) << "no temporary file left behind";
}

// bf16 runs on the CPU's bf16 units where it has them (kernels/cpu/gemm.h): the report says
// which engine ran the GEMMs, the linear layers' inputs kept in bf16 lower the activations, the
// prediction still equals the measurement byte for byte, and the numbers stay within bf16 of
// the OpenBLAS path (SHARDSCOPE_GEMM=blas, the path of a CPU without them).
TEST(trainCli, Bf16RunsOnTheCpusBf16UnitsWhereItHasThem) {
    const fs::path dir = fs::temp_directory_path();
    const std::string stem = "shardscope_train_cli_bf16_" + std::to_string(::getpid());
    const fs::path native = dir / (stem + "_native.json"), blas = dir / (stem + "_blas.json");
    const std::string args = "run --model tiny --ranks 1 --strategy ddp --steps 3 --json ";
    const Result a = runCli(args + native.string());
    ASSERT_EQ(a.code, 0) << a.err;
    const Result b = runCli(args + blas.string(), "SHARDSCOPE_GEMM=blas");
    ASSERT_EQ(b.code, 0) << b.err;
    const auto ra = nlohmann::json::parse(slurp(native)), rb = nlohmann::json::parse(slurp(blas));
    fs::remove(native);
    fs::remove(blas);
    ASSERT_TRUE(ra.contains("gemm") && rb.contains("gemm"));
    EXPECT_FALSE(rb["gemm"]["bf16_units"].get<bool>());
    EXPECT_EQ(rb["gemm"]["engine"].get<std::string>().rfind("OpenBLAS", 0), 0u) << rb["gemm"];
    for (const auto* r : {&ra, &rb})
        EXPECT_EQ((*r)["ranks"][0]["peak_bytes"]["total"], (*r)["theory"]["predicted_peak_bytes"]);
    const bool units = ra["gemm"]["bf16_units"].get<bool>();
    EXPECT_NE(a.out.find("gemm: "), std::string::npos) << a.out;
    if (!units) GTEST_SKIP() << "no bf16 units on this CPU: " << ra["gemm"]["engine"];
    EXPECT_NE(a.out.find("linear layers in bf16 on the CPU's bf16 units"), std::string::npos);
    EXPECT_LT(ra["ranks"][0]["peak_bytes"]["activation"].get<std::uint64_t>(),
              rb["ranks"][0]["peak_bytes"]["activation"].get<std::uint64_t>());
    for (std::size_t i = 0; i < 3; ++i) {
        const double x = ra["losses"][i].get<double>(), y = rb["losses"][i].get<double>();
        EXPECT_NEAR(x, y, 1e-2 * std::abs(y)) << "step " << i + 1;
    }
}

TEST(trainCli, ABadGemmEngineIsOneLineAndExitTwo) {
    const Result r =
        runCli("run --model tiny --ranks 1 --strategy ddp --steps 1", "SHARDSCOPE_GEMM=fastest");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("SHARDSCOPE_GEMM=fastest: expected blas or onednn"), std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

} // namespace

// ---- pipeline parallelism ----------------------------------------------------------------------

// A pipelined run's report compares every rank with its own stage's theory: its units' model
// states byte for byte, its DP collectives and its messages; stage 0's activation peak is the
// theory's (theory/pipeline.h).
TEST(trainCli, APipelineReportComparesEachStageWithItsOwnTheory) {
    const Scratch s("pipeline_report");
    const Result r = runCli("run --model small --strategy zero3 --shared-device --ranks 4 --pp 2 "
                            "--grad-accum 4 --steps 1 --precision fp32 --json " +
                            s / "r.json");
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(slurp(s / "r.json"));
    EXPECT_TRUE(j["comparison"]["model_states_equal"].get<bool>());
    EXPECT_EQ(j["comparison"]["comm_delta_fraction"].get<double>(), 0.0);
    EXPECT_EQ(j["config"]["pp"], 2);
    EXPECT_EQ(j["config"]["pp_schedule"], "1f1b");
    // The stages hold different units: different model states (stage 1 has the head).
    EXPECT_NE(j["ranks"][0]["model_state_bytes"], j["ranks"][2]["model_state_bytes"]);
    EXPECT_EQ(j["ranks"][0]["model_state_bytes"], j["ranks"][1]["model_state_bytes"]);
    EXPECT_EQ(j["ranks"][0]["peak_bytes"]["activation"], j["theory"]["activation_peak_bytes"]);
    // The report's theory per stage: each rank's measured model states are its stage's, byte for
    // byte, and the stages cover the units once, in order.
    const nlohmann::json& stages = j["theory"]["stages"];
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0]["first_unit"], 0);
    EXPECT_EQ(stages[1]["first_unit"], stages[0]["end_unit"]);
    for (int rank = 0; rank < 4; ++rank)
        EXPECT_EQ(j["ranks"][rank]["model_state_bytes"], stages[rank / 2]["model_state_bytes"])
            << rank;
    EXPECT_EQ(stages[0]["model_state_bytes"], j["theory"]["model_state_bytes"]);
    EXPECT_NE(stages[0]["predicted_peak_bytes"], stages[1]["predicted_peak_bytes"]);
    // Four activations sent forward per step, 4 × 128 × 250 fp32 each, counted by the sender.
    const std::uint64_t message = 4ull * 128 * 250 * 4;
    EXPECT_EQ(j["comm_bytes_per_step"]["pp_send"].get<double>(), 4.0 * message);
    EXPECT_EQ(j["theory"]["comm_bytes_per_step"]["pp_send"].get<double>(), 4.0 * message);
    const std::string notes = j["notes"].dump();
    EXPECT_NE(notes.find("stage 1 (ranks 2–3): block2 … head"), std::string::npos) << notes;
}

TEST(trainCli, APipelineUnderMpirunIsBitwiseTheRankThreadsAndGradientAccumulation) {
    const std::string common =
        "--model tiny --strategy zero2 --steps 2 --precision fp32 --deterministic --grad-accum 4 ";
    const auto digestOf = [](const Result& r) {
        const std::size_t at = r.out.find("param digest ");
        return at == std::string::npos ? std::string() : r.out.substr(at + 13, 16);
    };
    // --micro-batches (estimate's name) is --grad-accum.
    std::string threadArgs = common;
    threadArgs.replace(threadArgs.find("--grad-accum"), 12, "--micro-batches");
    const Result threads = runCli("run " + threadArgs + "--shared-device --ranks 4 --pp 2");
    const Result mpi = runCli("run " + common + "--ranks 4 --pp 2");
    // ZB-H1's split backward over MPI: B and W apart, the same bits.
    const Result zb1 = runCli("run " + common + "--ranks 4 --pp 2 --pp-schedule zb1");
    const Result flat = runCli("run " + common + "--shared-device --ranks 2");
    ASSERT_EQ(threads.code, 0) << threads.err;
    ASSERT_EQ(mpi.code, 0) << mpi.err;
    ASSERT_EQ(zb1.code, 0) << zb1.err;
    ASSERT_EQ(flat.code, 0) << flat.err;
    EXPECT_FALSE(digestOf(threads).empty()) << threads.out;
    EXPECT_EQ(digestOf(mpi), digestOf(threads));
    EXPECT_EQ(digestOf(zb1), digestOf(threads));
    EXPECT_EQ(digestOf(flat), digestOf(threads));
}

// Interleaved over MPI: rank 1 (the last stage) hands chunk 0's output to rank 0's chunk 1 and
// back; the weights are the unpipelined run's with the same micro-batches, bit for bit. Its
// checkpoints are refused before anything runs, and M must be a multiple of P.
TEST(trainCli, AnInterleavedPipelineUnderMpirunIsBitwiseGradientAccumulation) {
    const std::string common = "--model small --strategy zero1 --steps 2 --precision fp32 "
                               "--deterministic --grad-accum 4 ";
    const auto digestOf = [](const Result& r) {
        const std::size_t at = r.out.find("param digest ");
        return at == std::string::npos ? std::string() : r.out.substr(at + 13, 16);
    };
    const Result mpi =
        runCli("run " + common + "--ranks 4 --pp 2 --pp-schedule interleaved --virtual-stages 2");
    const Result flat = runCli("run " + common + "--shared-device --ranks 2");
    ASSERT_EQ(mpi.code, 0) << mpi.err;
    ASSERT_EQ(flat.code, 0) << flat.err;
    EXPECT_FALSE(digestOf(mpi).empty()) << mpi.out;
    EXPECT_EQ(digestOf(mpi), digestOf(flat));
    EXPECT_NE(mpi.out.find("embedding … block0 + block2"), std::string::npos) << mpi.out;
    for (const auto& [flags, says] :
         {std::pair{"--save /tmp/shardscope_never", "--virtual-stages 2"},
          std::pair{"--grad-accum 3", "multiple of --pp"}}) {
        const Result r = runCli("run --model small --strategy ddp --steps 1 --shared-device "
                                "--ranks 2 --pp 2 --pp-schedule interleaved --virtual-stages 2 " +
                                std::string(flags));
        EXPECT_EQ(r.code, 2) << flags << "\n" << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << flags << "\n" << r.err;
    }
    EXPECT_FALSE(fs::exists("/tmp/shardscope_never"));
    // SHARD_GRAD_OP holds every chunk's gathered parameters from its forward to its backward:
    // the model states are measured once the last chunk has run a forward, equal to theory;
    // compare holds each strategy's worst rank against its own stage's theory.
    const Result gradOp = runCli("compare --model small --strategies ddp,fsdp_grad_op --steps 1 "
                                 "--grad-accum 2 --shared-device --ranks 4 --pp 2 "
                                 "--pp-schedule interleaved --virtual-stages 2");
    ASSERT_EQ(gradOp.code, 0) << gradOp.err;
    EXPECT_NE(gradOp.out.find(" yes "), std::string::npos) << gradOp.out;
    EXPECT_EQ(gradOp.out.find(" NO "), std::string::npos) << gradOp.out;
}

TEST(trainCli, BadPipelinesAreOneLineNamingTheFlagBeforeAnythingRuns) {
    const std::pair<const char*, const char*> cases[] = {
        {"--ranks 3 --pp 2", "does not divide the 3 ranks"},
        {"--ranks 5 --pp 2 --tp 5", "--pp 2 × --tp 5 does not divide the 5 ranks"},
        {"--ranks 4 --pp 4", "--pp 4 = 4 stages for a model of 2 layers"},
        {"--ranks 2 --pp 2 --pp-schedule interleaved",
         "--pp-schedule interleaved needs --virtual-stages of at least 2"},
        {"--ranks 2 --pp 2 --virtual-stages 2", "the 1f1b schedule has no virtual stages"},
        {"--ranks 2 --pp 2 --pp-schedule interleaved --virtual-stages 2",
         "--pp 2 × --virtual-stages 2 = 4 stages for a model of 2 layers"},
        {"--ranks 2 --pp 2 --pp-schedule x",
         "--pp-schedule must be gpipe, 1f1b, interleaved or zb1"},
        {"--ranks 2 --virtual-stages 3", "--virtual-stages needs --pp P > 1"},
        {"--ranks 2 --pp 0", "--pp must be between 1 and 64"},
        {"--ranks 4 --pp 2 --tp 2 --save /tmp/shardscope_never",
         "checkpoints of a run with --tp 2"},
        {"--ranks 2 --pp 2 --backend cuda", "pipeline stages run on CPU ranks"},
        {"--ranks 2 --pp-schedule gpipe", "--pp-schedule needs --pp P > 1"},
        {"--ranks 2 --pp 2 --micro-batches 2 --grad-accum 2", "name the same count"},
        {"--ranks 2 --pp 2 --micro-batches 0", "--micro-batches must be between 1 and 4096"},
    };
    for (const auto& [flags, says] : cases) {
        const std::string args =
            std::string("run --model tiny --strategy ddp --steps 1 --shared-device ") + flags;
        const Result r = runCli(args);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
        EXPECT_TRUE(noStepRan(r)) << args;
    }
    EXPECT_FALSE(fs::exists("/tmp/shardscope_never"));
    // MPI counts a message's bytes in an int: 4096 × 256 × 770 × 4 B is 3.2 GB. Rank threads
    // have no such limit.
    const Result huge = runCli("run --model gpt100m --strategy ddp --steps 1 --ranks 2 --pp 2 "
                               "--micro-batch 4096");
    EXPECT_EQ(huge.code, 2) << huge.err;
    EXPECT_NE(huge.err.find("exceeds MPI's 2 GiB message"), std::string::npos) << huge.err;
    EXPECT_TRUE(noStepRan(huge));
}

// The recording of a pipelined run, exported for Perfetto: every message is one arrow from its
// sender to its receiver on the neighbouring stage, and every collective joins the ranks of one
// stage's group, not the stages' different sequences matched by position.
TEST(trainCli, APipelinesFlowsPairEachMessageAndKeepCollectivesInsideAStage) {
    const Scratch s("pipeline_flows");
    const Result r = runCli("run --model tiny --strategy zero2 --shared-device --ranks 4 --pp 2 "
                            "--grad-accum 2 --steps 1 --trace " +
                            s / "t.sstrace");
    ASSERT_EQ(r.code, 0) << r.err;
    const Result x = runCli("export " + s / "t.sstrace" + " --perfetto " + s / "t.json");
    ASSERT_EQ(x.code, 0) << x.err;
    const nlohmann::json j = nlohmann::json::parse(slurp(s / "t.json"));
    std::map<int, std::vector<std::pair<std::string, int>>> flows; // id → (phase, rank)
    std::map<int, std::string> names;
    for (const auto& e : j["traceEvents"]) {
        if (e.value("cat", "") != "collective") continue;
        const int id = e["id"].get<int>();
        flows[id].emplace_back(e["ph"].get<std::string>(), e["pid"].get<int>() - 1);
        names[id] = e["name"].get<std::string>();
    }
    int messages = 0, collectives = 0;
    for (const auto& [id, ends] : flows) {
        ASSERT_EQ(ends.size(), 2u) << names[id];
        const int from = ends[0].second, to = ends[1].second;
        EXPECT_EQ(ends[0].first, "s");
        if (names[id].starts_with("pp_send")) {
            ++messages;
            EXPECT_EQ(std::abs(from - to), 2) << "stage 0 is ranks 0, 1; stage 1 ranks 2, 3";
        } else {
            ++collectives;
            EXPECT_EQ(from / 2, to / 2) << names[id] << ": one stage's DP group";
        }
    }
    // Two micro-batches: an activation forward and its gradient back, per DP rank.
    EXPECT_EQ(messages, 2 * 2 * 2);
    // ZeRO-2 per stage: a reduce-scatter per micro-batch and the updated parameters' all-gather.
    EXPECT_EQ(collectives, 2 * (2 + 1));
}
