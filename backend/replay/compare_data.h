#pragma once
// Several runs' reports side by side, as the compare view shows them: each run is the typed
// report (report/report.h), read by the one report reader; this adds what the view derives from
// them — which rank waits most, and the final weights' parity against DDP (the digest or, from
// `compare`, the largest |Δ|). Plain C++ so the numbers are testable and a front end other than
// the GUI's Compare page can show the same table.
#include "report/report.h"

#include <string>
#include <vector>

namespace shardscope::replay {

// A file's text: one run report, or shardscope-cli compare --json's report, each run as the
// typed report. Throws Error(Format) with the reader's one line (a report without a schema
// says so).
std::vector<report::RunReport> parseCompareRuns(const std::string& json);

// The rank whose median is the report's exposed_comm_fraction (the rank that waits most);
// -1 when no rank's matches.
int exposedRank(const report::RunReport& run);

// Two runs whose final weights may be compared, and whose charts may share one header: the same
// model (preset and parameter count), steps, ranks, seed, precision, data and batch
// (micro-batch and gradient accumulation). Their strategies may differ.
bool comparable(const report::RunReport& a, const report::RunReport& b);

// A run's mesh beside its strategy: T (--tp) and P (--pp) as its configuration says (1 where it
// says nothing usable). One strategy on two meshes is two runs to compare, not one.
struct Mesh {
    int tensorParallel = 1;
    int pipeParallel = 1;
    bool operator==(const Mesh&) const = default;
};
Mesh meshOf(const report::RunReport& r);

// Runs split into configurations (comparable runs together), in order of first appearance;
// each group holds indices into `runs`.
std::vector<std::vector<std::size_t>>
configurationGroups(const std::vector<report::RunReport>& runs);

struct Parity {
    // NoReference: no DDP run at all; NoComparableReference: DDP runs exist, none of this
    // run's configuration.
    enum class Kind {
        Reference,
        BitwiseEqual,
        Delta,
        DigestEqual,
        DigestDiffers,
        NoReference,
        NoComparableReference
    };
    Kind kind = Kind::NoReference;
    double delta = 0;
};
// Against the comparable DDP run among `all` (or the report's own max_abs_delta_vs_ddp, which
// `compare` measured against its own DDP run).
Parity parityOf(const report::RunReport& run, const std::vector<report::RunReport>& all);

} // namespace shardscope::replay
