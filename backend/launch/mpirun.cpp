#include "launch/mpirun.h"

#include "core/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope::launch {

bool singleHost(const MpirunOptions& o) {
    if (!o.hostfile.empty()) return false;
    static const std::vector<std::string> kHostFlags = {"-H",
                                                        "-host",
                                                        "--host",
                                                        "-hostfile",
                                                        "--hostfile",
                                                        "-machinefile",
                                                        "--machinefile",
                                                        "--default-hostfile",
                                                        "-default-hostfile"};
    for (const std::string& a : o.extraArgs) {
        const std::string flag = a.substr(0, a.find('='));
        if (std::find(kHostFlags.begin(), kHostFlags.end(), flag) != kHostFlags.end()) return false;
    }
    return true;
}

std::vector<std::string> mpirunArgv(const MpirunOptions& o, const std::string& workerPath,
                                    const std::vector<std::string>& workerArgs) {
    std::vector<std::string> argv{o.mpirun};
    if (o.runningAsRoot) argv.push_back("--allow-run-as-root");
    if (o.ranks > o.localCores || !o.hostfile.empty()) argv.push_back("--oversubscribe");
    // mpirun refuses an MCA parameter given twice: the user's --mpirun-args win.
    const auto mca = [&](const std::string& name, const std::string& value) {
        for (std::size_t i = 0; i + 1 < o.extraArgs.size(); ++i)
            if ((o.extraArgs[i] == "--mca" || o.extraArgs[i] == "-mca") &&
                o.extraArgs[i + 1] == name)
                return;
        argv.insert(argv.end(), {"--mca", name, value});
    };
    if (o.hostfile.empty()) {
        mca("btl", "self,vader");
        mca("btl_vader_single_copy_mechanism", o.singleCopy ? "cma" : "none");
    } else {
        argv.insert(argv.end(), {"--hostfile", o.hostfile});
    }
    if (singleHost(o)) {
        mca("oob_tcp_if_include", "lo");
        mca("btl_tcp_if_include", "lo");
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
    static const std::regex signalled(
        R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+))");
    if (std::regex_search(s, m, signalled)) return RankExit{std::stoi(m[1]), std::stoi(m[2]), 0};
    // "The first process to do so was:\n\n  Process name: [[6969,1],2]\n  Exit code:    3"
    static const std::regex exited(
        R"(Process name:\s*\[\[\d+,\d+\],(\d+)\]\s*\n\s*Exit code:\s*(\d+))");
    if (std::regex_search(s, m, exited)) return RankExit{std::stoi(m[1]), 0, std::stoi(m[2])};
    // "mpirun noticed that process rank 1 with PID 0 on node x exited on signal 6 (Aborted)."
    // already handled; MPI_Abort: "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
    // with errorcode 3."
    static const std::regex aborted(
        R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (\d+))");
    if (std::regex_search(s, m, aborted)) return RankExit{std::stoi(m[1]), 0, std::stoi(m[2])};
    return std::nullopt;
}

std::string mpirunMessage(std::string_view text) {
    std::vector<std::string> lines;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    auto trim = [](std::string s) {
        const auto b = s.find_first_not_of(" \t\r");
        const auto e = s.find_last_not_of(" \t\r");
        return b == std::string::npos ? std::string() : s.substr(b, e + 1 - b);
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line = trim(lines[i]);
        if (line.empty() || line.find_first_not_of("-=*") == std::string::npos) continue;
        if (line.starts_with("[") && line.find("] ") != std::string::npos &&
            line.find("ORTE_ERROR_LOG") != std::string::npos)
            continue; // a log line with source locations, not a message
        // "/usr/bin/mpirun: Error: unknown option …": mpirun names itself by its path
        if (const auto at = line.find(": Error: ");
            at != std::string::npos && line.find(' ') > at &&
            (line.substr(0, at).ends_with("mpirun") || line.substr(0, at).ends_with("orterun")))
            line.erase(0, at + 9);
        // "…hostfile:" followed by the indented name it could not open
        while (line.ends_with(":") && i + 1 < lines.size() && !lines[i + 1].empty() &&
               (lines[i + 1][0] == ' ' || lines[i + 1][0] == '\t')) {
            line.push_back(' ');
            line.append(trim(lines[++i]));
        }
        if (line.size() > 300) {
            line.resize(297);
            line.append("...");
        }
        return line;
    }
    return {};
}

std::vector<std::string> splitMpirunArgs(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < text.size())
                word += text[++i];
            else
                word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            inWord = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            inWord = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord) words.push_back(word);
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (quote) throwInvalid(std::string("--mpirun-args: unclosed ") + quote + " quote");
    if (inWord) words.push_back(word);
    for (const std::string& w : words) {
        const std::string flag = w.substr(0, w.find('='));
        if (flag == "-np" || flag == "-n" || flag == "--np" || flag == "-c" || flag == "--n")
            throwInvalid("--mpirun-args: " + flag + " is set from --ranks");
    }
    return words;
}

void checkHostfile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throwInvalid("--hostfile: cannot read " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throwInvalid("--hostfile: " + path + " is not a regular file");
    std::ifstream in(path);
    if (!in) throwInvalid("--hostfile: cannot read " + path + ": " + std::strerror(errno));
    for (std::string line; std::getline(in, line);) {
        const auto b = line.find_first_not_of(" \t\r");
        if (b != std::string::npos && line[b] != '#') return;
    }
    throwInvalid("--hostfile: " + path + " names no host");
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
