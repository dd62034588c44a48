#pragma once
// shardscope-cli subcommands. Each returns the process exit code and throws
// shardscope::Error for bad input (main maps it to one line on stderr and exit 2).
#include <span>
#include <string>

namespace shardscope::cli {

int cmdEstimate(std::span<const std::string> args);   // cmd_estimate.cpp
int cmdRun(std::span<const std::string> args);        // cmd_run.cpp
int cmdCompare(std::span<const std::string> args);    // cmd_compare.cpp
int cmdReport(std::span<const std::string> args);     // cmd_report.cpp
int cmdCheckpoint(std::span<const std::string> args); // cmd_checkpoint.cpp
int cmdExport(std::span<const std::string> args);     // cmd_export.cpp

} // namespace shardscope::cli
