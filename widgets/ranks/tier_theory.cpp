#include "ranks/tier_theory.h"

#include "predict/predict.h"
#include "runconfig/config_json.h"
#include "theory/estimate.h"

#include <nlohmann/json.hpp>

namespace shardscope::widgets {

std::optional<TierTheory> tierTheoryOf(const replay::RunInfo& info) {
    const nlohmann::json j = nlohmann::json::parse(info.configJson, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    try {
        const theory::Scenario sc = runconfig::scenarioOf(runconfig::configFromJson(j));
        if (!sc.shape) return std::nullopt;
        theory::validate(sc);
        TierTheory t;
        t.modelStates = theory::modelStates(sc).perRank;
        t.peak = predict::predictPeak(sc).tierPeaks;
        return t;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace shardscope::widgets
