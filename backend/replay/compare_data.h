#pragma once
// Several runs' reports side by side, as the compare view shows them: each run is the typed
// report (report/report.h), read by the one report reader; this adds what the view derives from
// them — which rank waits most, and the final weights' parity against DDP (the digest or, from
// `compare`, the largest |Δ|). Plain C++ so the numbers are testable and a front end other than
// the GUI's Compare page can show the same table.
#include <string>
#include <vector>

#include "report/report.h"

namespace shardscope::replay {

// A file's text: one run report, or shardscope-cli compare --json's report, each run as the
// typed report. Throws Error(Format) with the reader's one line (a report without a schema
// says so).
std::vector<report::RunReport> parseCompareRuns(const std::string& json);

// The rank whose median is the report's exposed_comm_fraction (the rank that waits most);
// -1 when no rank's matches.
int exposedRank(const report::RunReport& run);

struct Parity {
    enum class Kind { Reference, BitwiseEqual, Delta, DigestEqual, DigestDiffers, NoReference };
    Kind kind = Kind::NoReference;
    double delta = 0;
};
// Against the DDP run among `all` (or the report's own max_abs_delta_vs_ddp).
Parity parityOf(const report::RunReport& run, const std::vector<report::RunReport>& all);

} // namespace shardscope::replay
