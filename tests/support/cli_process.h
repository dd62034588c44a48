#pragma once
// Runs a real binary with an argument list (no shell) and collects its exit code, stdout and
// stderr through temporary files, so a chatty child never blocks on a full pipe.
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace shardscope::testing {

struct CliResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

inline std::string slurpFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline CliResult runProgram(const std::string& binary, std::vector<std::string> args,
                            char** env = environ) {
    char outPath[] = "/tmp/cli_process_out_XXXXXX";
    char errPath[] = "/tmp/cli_process_err_XXXXXX";
    const int outFd = mkstemp(outPath), errFd = mkstemp(errPath);
    CliResult r;
    if (outFd < 0 || errFd < 0) return r;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, outFd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, errFd, STDERR_FILENO);
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), env);
    posix_spawn_file_actions_destroy(&actions);
    close(outFd);
    close(errFd);
    if (rc == 0) {
        int status = 0;
        waitpid(pid, &status, 0);
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    r.out = slurpFile(outPath);
    r.err = slurpFile(errPath);
    unlink(outPath);
    unlink(errPath);
    return r;
}

} // namespace shardscope::testing
