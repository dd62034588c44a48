#include "launch/process_tree.h"

#include <csignal>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

namespace shardscope::launch {
namespace {

struct Stat {
    char state = '?';
    pid_t parent = -1;
    unsigned long long startTime = 0;
};

// /proc/<pid>/stat is "pid (comm) state ppid … starttime(22nd field) …"; comm may hold spaces
// or parentheses, so fields are counted after the last ')'.
bool readStat(pid_t pid, Stat& out) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(in, text)) return false;
    const auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream fields(text.substr(close + 1));
    std::string state;
    fields >> state >> out.parent;
    out.state = state.empty() ? '?' : state[0];
    std::string skip;
    for (int i = 5; i < 22 && fields; ++i)
        fields >> skip; // fields 5 … 21
    fields >> out.startTime;
    return static_cast<bool>(fields);
}

} // namespace

std::vector<ProcessId> descendantPids(pid_t root) {
    std::multimap<pid_t, ProcessId> children;
    if (DIR* dir = ::opendir("/proc")) {
        while (const dirent* entry = ::readdir(dir)) {
            const std::string name = entry->d_name;
            if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
            const auto pid = static_cast<pid_t>(std::stol(name));
            Stat st;
            if (readStat(pid, st)) children.emplace(st.parent, ProcessId{pid, st.startTime});
        }
        ::closedir(dir);
    }
    std::vector<ProcessId> out;
    std::vector<pid_t> queue{root};
    while (!queue.empty()) {
        const pid_t p = queue.back();
        queue.pop_back();
        const auto [begin, end] = children.equal_range(p);
        for (auto it = begin; it != end; ++it) {
            out.push_back(it->second);
            queue.push_back(it->second.pid);
        }
    }
    return out;
}

unsigned long long startTimeOf(pid_t pid) {
    Stat st;
    return readStat(pid, st) ? st.startTime : 0;
}

bool isStopped(pid_t pid) {
    Stat st;
    return readStat(pid, st) && st.state == 'T';
}

bool hasEnded(pid_t pid) {
    Stat st;
    return !readStat(pid, st) || st.state == 'Z' || st.state == 'X';
}

int mpiRankOf(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
    for (std::string var; std::getline(in, var, '\0');) {
        for (const std::string_view name : {"OMPI_COMM_WORLD_RANK=", "PMIX_RANK="}) {
            if (!var.starts_with(name)) continue;
            const std::string value = var.substr(name.size());
            if (!value.empty() && value.size() < 8 &&
                value.find_first_not_of("0123456789") == std::string::npos)
                return std::stoi(value);
        }
    }
    return -1;
}

void signalAll(const std::vector<ProcessId>& processes, int signal) {
    for (const ProcessId& p : processes) {
        Stat st;
        if (p.pid > 1 && readStat(p.pid, st) && st.startTime == p.startTime) ::kill(p.pid, signal);
    }
}

} // namespace shardscope::launch
