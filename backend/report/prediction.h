#pragma once
// The worker's `--predict` exchange as types: the scenarios the CLI asks about and the predicted
// peaks the worker's dry run answers with (app/worker/predict_mode.cpp). The CLI links no
// engine, so `estimate` with a model shape asks the worker; both sides use these codecs.
//
// Note: every field travels — a field left out would silently take its default on the other
// side, so the readers refuse a missing or mistyped field.
#include "report/report.h"
#include "theory/estimate.h"

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace shardscope::report {

inline constexpr std::string_view kPredictSchema = "shardscope.predict/1";

nlohmann::json toJson(const theory::Scenario& s);
nlohmann::json toJson(const theory::PeakPrediction& p);

// {"schema", "scenarios": [...]}: what the CLI sends.
nlohmann::json predictRequestJson(const std::vector<theory::Scenario>& scenarios);
Parsed<std::vector<theory::Scenario>> parsePredictRequest(std::string_view text);

// {"schema", "predictions": [...]}: what the worker prints, one per scenario, in order.
nlohmann::json predictAnswerJson(const std::vector<theory::PeakPrediction>& predictions);
Parsed<std::vector<theory::PeakPrediction>> parsePredictAnswer(std::string_view text);

} // namespace shardscope::report
