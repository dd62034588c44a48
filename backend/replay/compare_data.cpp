#include "replay/compare_data.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace shardscope::replay {

std::vector<report::RunReport> parseCompareRuns(const std::string& text) {
    report::Parsed<report::CompareReport> parsed = report::parseCompareReport(text);
    if (!parsed) throw Error(ErrorKind::Format, parsed.error);
    return std::move(parsed.value->strategies);
}

int exposedRank(const report::RunReport& run) {
    const auto same =
        std::find_if(run.ranks.begin(), run.ranks.end(), [&run](const report::RankReport& r) {
            return std::abs(r.exposedComm.fractionMedian - run.exposedCommFraction) < 1e-12;
        });
    return same != run.ranks.end() ? same->rank : -1;
}

bool comparable(const report::RunReport& a, const report::RunReport& b) {
    return a.model == b.model && a.paramCount == b.paramCount && a.steps == b.steps &&
           a.worldSize == b.worldSize && a.seed == b.seed && a.precision == b.precision &&
           a.data == b.data && a.microBatch == b.microBatch && a.gradAccum == b.gradAccum;
}

Mesh meshOf(const report::RunReport& r) {
    const auto degree = [&r](const char* key) {
        const auto it = r.config.find(key);
        if (it == r.config.end() || !it->is_number_integer()) return 1;
        const auto v = it->get<std::int64_t>();
        return v >= 1 && v <= r.worldSize && r.worldSize % v == 0 ? static_cast<int>(v) : 1;
    };
    Mesh m{degree("tp"), degree("pp")};
    if (r.worldSize % (m.tensorParallel * m.pipeParallel) != 0) m = {};
    return m;
}

std::vector<std::vector<std::size_t>>
configurationGroups(const std::vector<report::RunReport>& runs) {
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto same =
            std::find_if(groups.begin(), groups.end(), [&](const std::vector<std::size_t>& g) {
                return comparable(runs[g.front()], runs[i]);
            });
        if (same != groups.end())
            same->push_back(i);
        else
            groups.push_back({i});
    }
    return groups;
}

Parity parityOf(const report::RunReport& run, const std::vector<report::RunReport>& all) {
    if (run.strategy == "ddp") return {Parity::Kind::Reference, 0};
    if (run.maxAbsDeltaVsDdp)
        return {*run.maxAbsDeltaVsDdp == 0 ? Parity::Kind::BitwiseEqual : Parity::Kind::Delta,
                *run.maxAbsDeltaVsDdp};
    const auto isDdp = [](const report::RunReport& r) { return r.strategy == "ddp"; };
    const auto ddp = std::find_if(all.begin(), all.end(), [&](const report::RunReport& r) {
        return isDdp(r) && comparable(r, run);
    });
    if (ddp == all.end())
        return {std::any_of(all.begin(), all.end(), isDdp) ? Parity::Kind::NoComparableReference
                                                           : Parity::Kind::NoReference,
                0};
    if (ddp->paramDigest.empty() || run.paramDigest.empty()) return {};
    // Equal digests of the fp32 master weights: bitwise equal (up to a 64-bit hash collision).
    return {ddp->paramDigest == run.paramDigest ? Parity::Kind::DigestEqual
                                                : Parity::Kind::DigestDiffers,
            0};
}

} // namespace shardscope::replay
