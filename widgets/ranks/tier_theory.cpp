#include "ranks/tier_theory.h"

#include "predict/predict.h"
#include "runconfig/config_json.h"
#include "theory/estimate.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace shardscope::widgets {

std::vector<TierTheory> tierTheoriesOf(const replay::RunInfo& info) {
    const nlohmann::json j = nlohmann::json::parse(info.configJson, nullptr, false);
    if (!j.is_object()) return {};
    try {
        const runconfig::RunConfig c = runconfig::configFromJson(j);
        std::vector<TierTheory> out;
        for (int stage = 0; stage < std::max(c.pipeParallel, 1); ++stage) {
            const theory::Scenario sc = runconfig::scenarioOf(c, stage);
            if (!sc.shape) return {};
            theory::validate(sc);
            TierTheory t;
            t.modelStates = theory::modelStates(sc).perRank;
            t.peak = predict::predictPeak(sc).tierPeaks;
            out.push_back(t);
        }
        return out;
    } catch (const std::exception&) {
        return {};
    }
}

} // namespace shardscope::widgets
