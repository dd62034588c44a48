#include "replay/compare_data.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace shardscope::replay {

std::vector<report::RunReport> parseCompareRuns(const std::string& text) {
    report::Parsed<report::CompareReport> parsed = report::parseCompareReport(text);
    if (!parsed) throw Error(ErrorKind::Format, parsed.error);
    return std::move(parsed.value->strategies);
}

int exposedRank(const report::RunReport& run) {
    const auto same = std::find_if(run.ranks.begin(), run.ranks.end(), [&run](const report::RankReport& r) {
        return std::abs(r.exposedComm.fractionMedian - run.exposedCommFraction) < 1e-12;
    });
    return same != run.ranks.end() ? same->rank : -1;
}

Parity parityOf(const report::RunReport& run, const std::vector<report::RunReport>& all) {
    if (run.strategy == "ddp") return {Parity::Kind::Reference, 0};
    if (run.maxAbsDeltaVsDdp)
        return {*run.maxAbsDeltaVsDdp == 0 ? Parity::Kind::BitwiseEqual : Parity::Kind::Delta, *run.maxAbsDeltaVsDdp};
    const auto ddp = std::find_if(all.begin(), all.end(), [](const report::RunReport& r) { return r.strategy == "ddp"; });
    if (ddp == all.end() || ddp->paramDigest.empty() || run.paramDigest.empty()) return {};
    // Equal digests of the fp32 master weights: bitwise equal (up to a 64-bit hash collision).
    return {ddp->paramDigest == run.paramDigest ? Parity::Kind::DigestEqual : Parity::Kind::DigestDiffers, 0};
}

} // namespace shardscope::replay
