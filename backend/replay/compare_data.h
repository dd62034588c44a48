#pragma once
// Several runs' reports side by side, as the compare view shows them: per rank peak and
// model-state bytes by category and communication per step, the theory's values for the same,
// the final-weights digest and, from `compare`, the largest |Δ| of the final weights against
// DDP. Read by the one report reader (report/report.h); plain C++ so the numbers are testable
// and a front end other than the GUI's Compare page can show the same table.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace shardscope::replay {

struct CompareRank {
    int rank = 0;
    report::CategoryBytes peak{};        // each category's own maximum
    std::uint64_t peakTotal = 0; // the maximum of the total (peak_bytes.total)
    report::CategoryBytes modelStates{};
    double commBytes = 0;        // sent per step, all kinds
    std::optional<double> exposedComm; // median share of a step spent in exposed communication
};

struct CompareRun {
    std::string strategy; // CLI name
    std::string model;
    int worldSize = 1;
    std::vector<CompareRank> ranks;
    std::vector<std::pair<std::string, double>> comm;       // rank 0, sent bytes per step by kind
    std::vector<std::pair<std::string, double>> theoryComm; // the theory's, same kinds
    std::optional<report::CategoryBytes> theoryModelStates;
    std::uint64_t theoryPeak = 0;
    std::string paramDigest;
    std::optional<double> maxAbsDeltaVsDdp;
    // exposed_comm_fraction: the rank that waits most (its median over the steps).
    std::optional<double> exposedComm;
    int exposedRank = -1; // the rank with that value (-1: unknown)

    double commTotal() const;
    double theoryCommTotal() const;
    std::uint64_t peakMax() const; // over ranks
};

// The compare view's row of one typed report: the worst rank's exposed figure is the report's own
// exposed_comm_fraction.
CompareRun compareRunOf(const report::RunReport& report);
// One run report's text. Throws Error(Format) with the reader's one line (a report without a schema
// says so).
CompareRun parseCompareRun(const std::string& json);
// A file's text: one run report, or shardscope-cli compare --json's report.
std::vector<CompareRun> parseCompareRuns(const std::string& json);

struct Parity {
    enum class Kind { Reference, BitwiseEqual, Delta, DigestEqual, DigestDiffers, NoReference };
    Kind kind = Kind::NoReference;
    double delta = 0;
};
// Against the DDP run among `all` (or the report's own max_abs_delta_vs_ddp).
Parity parityOf(const CompareRun& run, const std::vector<CompareRun>& all);

} // namespace shardscope::replay
