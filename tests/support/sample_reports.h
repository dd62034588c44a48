#pragma once
// Run reports as the worker writes them (report::toJson of the typed report), for the tests of
// the compare table (tests/unit/compare_data_test.cpp) and of the Compare page.
#include "core/categories.h"
#include "report/report.h"

#include <cstdint>
#include <optional>
#include <string>

namespace shardscope::testing {

// A report as the worker writes it (report::toJson of the typed report): four ranks.
inline report::RunReport typedReport(const std::string& strategy, std::uint64_t shard,
                                     std::uint64_t peak, const std::string& digest,
                                     std::optional<double> deltaVsDdp = std::nullopt) {
    report::RunReport r;
    r.strategy = strategy;
    r.model = "tiny";
    r.worldSize = 4;
    r.steps = 1;
    for (int rank = 0; rank < 4; ++rank) {
        report::RankReport rr;
        rr.rank = rank;
        rr.peakBytes[index(Category::ParamShard)] = shard;
        rr.peakBytes[index(Category::Activation)] = 1000;
        rr.peakTotal = peak + static_cast<std::uint64_t>(rank);
        rr.modelStateBytes[index(Category::ParamShard)] = shard;
        rr.modelStateBytes[index(Category::AdamM)] = 2 * shard;
        rr.commBytesPerStep = {{"all_gather", 3000}};
        r.ranks.push_back(rr);
    }
    r.commBytesPerStep = {{"all_gather", 3000}, {"reduce_scatter", 1500.5}};
    r.theory.modelStateBytes[index(Category::ParamShard)] = shard;
    r.theory.modelStateBytes[index(Category::AdamM)] = 2 * shard;
    r.theory.predictedPeakBytes = peak;
    r.theory.commBytesPerStep = {{"all_gather", 3000}, {"reduce_scatter", 1500}};
    r.paramDigest = digest;
    r.maxAbsDeltaVsDdp = deltaVsDdp;
    return r;
}

inline std::string reportJson(const std::string& strategy, std::uint64_t shard, std::uint64_t peak,
                              const std::string& digest,
                              std::optional<double> deltaVsDdp = std::nullopt) {
    return report::toJson(typedReport(strategy, shard, peak, digest, deltaVsDdp)).dump();
}

} // namespace shardscope::testing
