#include "replay/compare_data.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace shardscope::replay {
namespace {

double sum(const std::vector<std::pair<std::string, double>>& v) {
    double s = 0;
    for (const auto& [k, b] : v) s += b;
    return s;
}

} // namespace

CompareRun compareRunOf(const report::RunReport& t) {
    CompareRun r;
    r.strategy = t.strategy;
    r.model = t.model;
    r.worldSize = t.worldSize;
    for (const report::RankReport& rr : t.ranks)
        r.ranks.push_back({rr.rank, rr.peakBytes, rr.peakTotal, rr.modelStateBytes, report::total(rr.commBytesPerStep),
                           rr.exposedComm.fractionMedian});
    r.comm = t.commBytesPerStep;
    r.theoryComm = t.theory.commBytesPerStep;
    r.theoryModelStates = t.theory.modelStateBytes;
    r.theoryPeak = t.theory.predictedPeakBytes;
    r.paramDigest = t.paramDigest;
    r.maxAbsDeltaVsDdp = t.maxAbsDeltaVsDdp;
    r.exposedComm = t.exposedCommFraction;
    const auto same = std::find_if(r.ranks.begin(), r.ranks.end(), [&t](const CompareRank& c) {
        return c.exposedComm && std::abs(*c.exposedComm - t.exposedCommFraction) < 1e-12;
    });
    r.exposedRank = same != r.ranks.end() ? same->rank : -1;
    return r;
}

double CompareRun::commTotal() const { return sum(comm); }
double CompareRun::theoryCommTotal() const { return sum(theoryComm); }
std::uint64_t CompareRun::peakMax() const {
    std::uint64_t m = 0;
    for (const auto& r : ranks) m = std::max(m, r.peakTotal);
    return m;
}

CompareRun parseCompareRun(const std::string& text) {
    const report::Parsed<report::RunReport> parsed = report::parseRunReport(text);
    if (!parsed) throw Error(ErrorKind::Format, parsed.error);
    return compareRunOf(*parsed.value);
}

std::vector<CompareRun> parseCompareRuns(const std::string& text) {
    const report::Parsed<report::CompareReport> parsed = report::parseCompareReport(text);
    if (!parsed) throw Error(ErrorKind::Format, parsed.error);
    std::vector<CompareRun> out;
    for (const report::RunReport& r : parsed.value->strategies) out.push_back(compareRunOf(r));
    return out;
}

Parity parityOf(const CompareRun& run, const std::vector<CompareRun>& all) {
    if (run.strategy == "ddp") return {Parity::Kind::Reference, 0};
    if (run.maxAbsDeltaVsDdp)
        return {*run.maxAbsDeltaVsDdp == 0 ? Parity::Kind::BitwiseEqual : Parity::Kind::Delta, *run.maxAbsDeltaVsDdp};
    const auto ddp = std::find_if(all.begin(), all.end(), [](const CompareRun& r) { return r.strategy == "ddp"; });
    if (ddp == all.end() || ddp->paramDigest.empty() || run.paramDigest.empty()) return {};
    // Equal digests of the fp32 master weights: bitwise equal (up to a 64-bit hash collision).
    return {ddp->paramDigest == run.paramDigest ? Parity::Kind::DigestEqual : Parity::Kind::DigestDiffers, 0};
}

} // namespace shardscope::replay
