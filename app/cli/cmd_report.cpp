// `shardscope-cli report FILE…`: a saved report (`run --json` or `compare --json`) printed as
// `run` or `compare` printed it, after checking it reads. A file that does not — including one
// written before reports carried a schema — is one line and exit code 2.
#include "commands.h"
#include "core/error.h"
#include "report_print.h"

#include <cstdio>
#include <string>

namespace shardscope::cli {
namespace {

constexpr const char* kReportHelp =
    "usage: shardscope-cli report FILE...\n"
    "  Prints saved reports (run --json: the per-rank summary; compare --json: the table).\n";

} // namespace

int cmdReport(std::span<const std::string> argv) {
    if (argv.empty())
        throwInvalid("report needs a FILE (a report written by run --json or compare --json)");
    for (const std::string& a : argv)
        if (a == "--help") {
            std::fputs(kReportHelp, stdout);
            return 0;
        }
    for (const std::string& path : argv) {
        if (path.starts_with("--")) throwInvalid("unknown flag '" + path + "'");
        const report::CompareReport c = readReportFile(path);
        std::printf("%s:\n", path.c_str());
        if (c.strategies.size() == 1 && !c.strategies.front().maxAbsDeltaVsDdp)
            printRunSummary(c.strategies.front());
        else
            printCompareTable(c);
    }
    return 0;
}

} // namespace shardscope::cli
