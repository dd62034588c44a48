// The widgets' folders depend one way: no folder includes, directly or through others, a header of
// a folder that includes its own (docs/architecture.md, "Widgets by page"). A cycle found here is
// printed as the path of includes that closes it.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Graph = std::map<std::string, std::map<std::string, std::string>>; // folder → folder → file

Graph folderIncludes(const fs::path& root) {
    Graph g;
    const std::regex include(R"re(^\s*#\s*include\s*"([a-z_]+)/)re");
    for (const auto& dir : fs::directory_iterator(root)) {
        if (!dir.is_directory()) continue;
        const std::string from = dir.path().filename().string();
        g[from];
        for (const auto& file : fs::directory_iterator(dir.path())) {
            std::ifstream in(file.path());
            for (std::string line; std::getline(in, line);) {
                std::smatch m;
                if (!std::regex_search(line, m, include)) continue;
                const std::string to = m[1];
                if (to != from && fs::is_directory(root / to))
                    g[from].emplace(to, file.path().filename().string());
            }
        }
    }
    return g;
}

// A path of folders from `at` back to `target`, or empty.
bool pathTo(const Graph& g, const std::string& at, const std::string& target,
            std::set<std::string>& seen, std::vector<std::string>& path) {
    for (const auto& [next, file] : g.at(at)) {
        if (!seen.insert(next).second) continue;
        path.push_back(next + " (" + file + ")");
        if (next == target || pathTo(g, next, target, seen, path)) return true;
        path.pop_back();
    }
    return false;
}

TEST(sourceLayout, WidgetFoldersHaveNoIncludeCycle) {
    const Graph g = folderIncludes(fs::path(SHARDSCOPE_SOURCE_DIR) / "widgets");
    ASSERT_GT(g.size(), 5u);
    for (const auto& [from, edges] : g) {
        std::set<std::string> seen;
        std::vector<std::string> path;
        if (!pathTo(g, from, from, seen, path)) continue;
        std::string text = from;
        for (const std::string& p : path)
            text.append(" → ").append(p);
        ADD_FAILURE() << "include cycle: " << text;
    }
}

} // namespace
