#include "launch/mpirun.h"

#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>

namespace shardscope::launch {

std::vector<std::string> mpirunArgv(const MpirunOptions& o, const std::string& workerPath,
                                    const std::vector<std::string>& workerArgs) {
    std::vector<std::string> argv{o.mpirun};
    if (o.runningAsRoot) argv.push_back("--allow-run-as-root");
    if (o.ranks > o.localCores || !o.hostfile.empty()) argv.push_back("--oversubscribe");
    if (o.hostfile.empty()) {
        argv.insert(argv.end(), {"--mca", "btl", "self,vader", "--mca",
                                 "btl_vader_single_copy_mechanism", "none"});
    } else {
        argv.insert(argv.end(), {"--hostfile", o.hostfile});
    }
    // Ranks poll with short sleeps while waiting; binding N>cores ranks to cores only hurts.
    argv.insert(argv.end(), {"--bind-to", "none"});
    argv.insert(argv.end(), o.extraArgs.begin(), o.extraArgs.end());
    argv.insert(argv.end(), {"-np", std::to_string(o.ranks), workerPath});
    argv.insert(argv.end(), workerArgs.begin(), workerArgs.end());
    return argv;
}

std::optional<RankExit> parseMpirunFailure(std::string_view text) {
    const std::string s(text);
    std::smatch m;
    // "mpirun noticed that process rank 2 with PID 123 on node x exited on signal 9 (Killed)."
    static const std::regex signalled(R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+))");
    if (std::regex_search(s, m, signalled))
        return RankExit{std::stoi(m[1]), std::stoi(m[2]), 0};
    // "The first process to do so was:\n\n  Process name: [[6969,1],2]\n  Exit code:    3"
    static const std::regex exited(R"(Process name:\s*\[\[\d+,\d+\],(\d+)\]\s*\n\s*Exit code:\s*(\d+))");
    if (std::regex_search(s, m, exited)) return RankExit{std::stoi(m[1]), 0, std::stoi(m[2])};
    // "mpirun noticed that process rank 1 with PID 0 on node x exited on signal 6 (Aborted)."
    // already handled; MPI_Abort: "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
    // with errorcode 3."
    static const std::regex aborted(R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (\d+))");
    if (std::regex_search(s, m, aborted)) return RankExit{std::stoi(m[1]), 0, std::stoi(m[2])};
    return std::nullopt;
}

std::optional<std::string> findExecutable(const std::string& name) {
    if (name.empty()) return std::nullopt;
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) == 0) return name;
        return std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::nullopt;
}

} // namespace shardscope::launch
