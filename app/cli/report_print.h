#pragma once
// How `run`, `compare` and `report` print typed reports (report/report.h) on stdout.
#include "report/report.h"

#include <string>

namespace shardscope::cli {

// Per rank: model states, peak, comm sent per step, exposed comm; then theory and the notes.
void printRunSummary(const report::RunReport& r);
// Strategies side by side (DDP first: savings are against it), then the per-rank peak by
// category of the rank with the largest peak.
void printCompareTable(const report::CompareReport& c);

// A report file, read and checked: one line naming `path` and the problem otherwise
// (Error(Format); a file from before reports had a schema says so). Error(Io) when unreadable.
report::CompareReport readReportFile(const std::string& path);

} // namespace shardscope::cli
