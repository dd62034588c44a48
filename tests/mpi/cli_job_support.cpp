// Helpers of the tests that run shardscope-cli jobs as a user does (cli_job_support.h).
#include "cli_job_support.h"

#include <algorithm>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>

extern char** environ;

namespace shardscope::testing {

const std::string kCli = std::string(SHARDSCOPE_BIN_DIR) + "/shardscope-cli";

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path scratch(const std::string& name) {
    return fs::temp_directory_path() /
           ("shardscope_cli_jobs_" + std::to_string(::getpid()) + "_" + name);
}

Proc start(const std::vector<std::string>& args, const std::string& tag,
           const std::string& program) {
    Proc p{-1, scratch(tag + ".out"), scratch(tag + ".err")};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> all = {program};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&p.pid, program.c_str(), &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return p;
}

int finish(const Proc& p) {
    int status = 0;
    waitpid(p.pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Processes whose argv[0] ends with one of `programs` and whose command line holds `marker`.
std::vector<Running> processes(const std::string& marker,
                               const std::vector<std::string>& programs) {
    std::vector<Running> found;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd = slurp(e.path() / "cmdline");
        std::replace(cmd.begin(), cmd.end(), '\0', ' ');
        const auto first = cmd.substr(0, cmd.find(' '));
        if (cmd.find(marker) == std::string::npos) continue;
        if (std::string state = slurp(e.path() / "stat"); state.find(") Z") != std::string::npos)
            continue; // a zombie
        for (const auto& program : programs)
            if (first.ends_with(program))
                found.push_back({static_cast<pid_t>(std::stoi(name)), cmd});
    }
    return found;
}

// Worker processes (argv[0] = …/shardscope-worker) whose command line holds `marker`.
std::vector<pid_t> workers(const std::string& marker) {
    std::vector<pid_t> pids;
    for (const Running& r : processes(marker, {"shardscope-worker"}))
        pids.push_back(r.pid);
    return pids;
}

// Waits until `p` has printed progress for `steps` steps.
void waitForSteps(const Proc& p, int steps) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const std::string line =
        "step " + std::string(steps < 10 ? "    " : "   ") + std::to_string(steps) + "/";
    while (slurp(p.out).find(line) == std::string::npos) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(p.err);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

int countOf(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The world rank of a worker under mpirun (OMPI_COMM_WORLD_RANK in its environment).
int rankOf(pid_t pid) {
    std::string env = slurp("/proc/" + std::to_string(pid) + "/environ");
    std::replace(env.begin(), env.end(), '\0', '\n');
    std::smatch m;
    if (std::regex_search(env, m, std::regex(R"((^|\n)OMPI_COMM_WORLD_RANK=(\d+))")))
        return std::stoi(m[2]);
    return -1;
}

pid_t workerOfRank(const std::string& marker, int rank) {
    for (pid_t p : workers(marker))
        if (rankOf(p) == rank) return p;
    return -1;
}

void expectNothingOfTheJobWithin(const std::string& marker,
                                 std::chrono::steady_clock::time_point t0,
                                 std::chrono::seconds limit) {
    const std::vector<std::string> programs = {"shardscope-worker", "mpirun", "orterun", "orted"};
    while (!processes(marker, programs).empty() && std::chrono::steady_clock::now() - t0 < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const Running& r : processes(marker, programs)) {
        ADD_FAILURE() << "left running: " << r.cmd;
        ::kill(r.pid, SIGCONT);
        ::kill(r.pid, SIGKILL);
    }
}

} // namespace shardscope::testing
