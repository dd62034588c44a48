#include "report/run_info.h"

#include "plan/pipeline.h"

#include <algorithm>

namespace shardscope::report {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxUnits = 1 << 20;
constexpr int kMaxWorldSize = 1 << 20;
constexpr std::int64_t kMaxStepsBefore = std::int64_t{1} << 53; // exact in a JSON double

template <class T> T valueOr(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return fallback; // a key of another type is treated as missing
    }
}

std::optional<CategoryBytes> categoryBytes(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return std::nullopt;
    CategoryBytes out{};
    for (const auto& [name, value] : it->items()) {
        const auto c = parseCategory(name);
        if (c && value.is_number_unsigned()) out[index(*c)] = value.get<std::uint64_t>();
    }
    return out;
}

json statesJson(const CategoryBytes& b) {
    json j = json::object();
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other) j[std::string(categoryName(c))] = b[index(c)];
    return j;
}

} // namespace

std::string RunInfo::unitName(std::int32_t unit) const {
    if (unit >= 0 && static_cast<std::size_t>(unit) < units.size() &&
        !units[static_cast<std::size_t>(unit)].name.empty())
        return units[static_cast<std::size_t>(unit)].name;
    return "unit " + std::to_string(unit);
}

int RunInfo::stageOf(int rank) const {
    if (pipeParallel <= 1 || worldSize < pipeParallel) return 0;
    return std::clamp(rank / (worldSize / pipeParallel), 0, pipeParallel - 1);
}

std::vector<std::pair<int, int>> RunInfo::stageChunks(int stage) const {
    const int n = static_cast<int>(units.size());
    const int v = std::clamp(virtualStages, 1, plan::kMaxVirtualStages);
    if (pipeParallel <= 1 || n < pipeParallel * v + 2) return {{0, n}};
    std::vector<std::pair<int, int>> out;
    for (const plan::StageUnits& c :
         plan::stageChunks(n - 2, pipeParallel, v, std::clamp(stage, 0, pipeParallel - 1)))
        out.emplace_back(c.first, c.end);
    return out;
}

std::pair<int, int> RunInfo::stageUnitRange(int stage) const {
    const std::vector<std::pair<int, int>> chunks = stageChunks(stage);
    return {chunks.front().first, chunks.back().second};
}

bool RunInfo::stageHolds(int stage, int unit) const {
    for (const auto& [first, end] : stageChunks(stage))
        if (unit >= first && unit < end) return true;
    return false;
}

std::optional<CategoryBytes> RunInfo::theoryModelStatesOf(int rank) const {
    if (stageTheory.empty()) return theoryModelStates;
    return stageTheory[static_cast<std::size_t>(stageOf(rank))].modelStates;
}

std::optional<CategoryBytes> RunInfo::ddpTheoryModelStatesOf(int rank) const {
    if (stageTheory.empty()) return ddpTheoryModelStates;
    return stageTheory[static_cast<std::size_t>(stageOf(rank))].ddpModelStates;
}

std::uint64_t RunInfo::predictedPeakOf(int rank) const {
    if (stageTheory.empty()) return predictedPeakBytes;
    return stageTheory[static_cast<std::size_t>(stageOf(rank))].predictedPeakBytes;
}

json handshakeJson(json config, std::uint64_t paramCount, const std::vector<UnitInfo>& units,
                   const CategoryBytes& theoryModelStates,
                   const CategoryBytes& ddpTheoryModelStates, std::uint64_t predictedPeakBytes,
                   std::int64_t stepsBefore, const std::vector<StageTheory>& stages) {
    json list = json::array();
    for (const UnitInfo& u : units)
        list.push_back({{"name", u.name}, {"params", u.params}, {"padded", u.padded}});
    config["param_count"] = paramCount;
    config["steps_before"] = stepsBefore;
    config["units"] = std::move(list);
    config["theory"] = {{"model_state_bytes", statesJson(theoryModelStates)},
                        {"ddp_model_state_bytes", statesJson(ddpTheoryModelStates)},
                        {"predicted_peak_bytes", predictedPeakBytes}};
    if (!stages.empty()) {
        json perStage = json::array();
        for (const StageTheory& st : stages)
            perStage.push_back({{"model_state_bytes", statesJson(st.modelStates)},
                                {"ddp_model_state_bytes", statesJson(st.ddpModelStates)},
                                {"predicted_peak_bytes", st.predictedPeakBytes}});
        config["theory"]["stages"] = std::move(perStage);
    }
    return config;
}

Parsed<RunInfo> parseRunInfo(std::string_view configJson, int worldSize) {
    const json j = json::parse(configJson.begin(), configJson.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return {std::nullopt, "the handshake's configuration is not a JSON object"};
    RunInfo info;
    info.configJson = std::string(configJson);
    info.strategy = valueOr<std::string>(j, "strategy", "");
    info.worldSize = valueOr<int>(j, "world_size", worldSize);
    if (info.worldSize < 1 || info.worldSize > kMaxWorldSize)
        return {std::nullopt, "the handshake's world_size " + std::to_string(info.worldSize) +
                                  " is out of range"};
    info.model = valueOr<std::string>(j, "model", "");
    info.paramCount = valueOr<std::uint64_t>(j, "param_count", 0);
    info.precision = valueOr<std::string>(j, "precision", "");
    info.backend = valueOr<std::string>(j, "backend", "cpu");
    info.sharedDevice = valueOr<bool>(j, "shared_device", false);
    info.steps = valueOr<std::int64_t>(j, "steps", 0);
    // An integer (1e300 is no step count), as the launcher reads it (launch/job.cpp).
    if (const auto b = j.find("steps_before"); b != j.end() && !b->is_number_integer())
        return {std::nullopt, "the handshake's steps_before is not an integer"};
    info.stepsBefore = valueOr<std::int64_t>(j, "steps_before", 0);
    // Bounded: it is added to every step a label shows.
    if (info.stepsBefore < 0 || info.stepsBefore > kMaxStepsBefore)
        return {std::nullopt, "the handshake's steps_before " + std::to_string(info.stepsBefore) +
                                  " is out of range"};
    // A T that does not split the world into whole groups describes no mesh: refused, not drawn.
    info.tensorParallel = valueOr<int>(j, "tp", 1);
    if (info.tensorParallel < 1 || info.tensorParallel > info.worldSize ||
        info.worldSize % info.tensorParallel != 0)
        return {std::nullopt, "the handshake's tp " + std::to_string(info.tensorParallel) +
                                  " does not divide world_size " + std::to_string(info.worldSize)};
    if (const auto pp = j.find("pp"); pp != j.end() && !pp->is_number_integer())
        return {std::nullopt, "the handshake's pp is not an integer"};
    const auto pp = j.contains("pp") ? j["pp"].get<std::int64_t>() : 1;
    if (pp < 1 || pp > plan::kMaxPipeStages)
        return {std::nullopt, "the handshake's pp " + std::to_string(pp) + " is out of range"};
    info.pipeParallel = static_cast<int>(pp);
    info.pipeSchedule = valueOr<std::string>(j, "pp_schedule", "1f1b");
    if (const auto v = j.find("virtual_stages"); v != j.end()) {
        if (!v->is_number_integer() || v->get<std::int64_t>() < 1 ||
            v->get<std::int64_t>() > plan::kMaxVirtualStages)
            return {std::nullopt, "the handshake's virtual_stages is not 1 to " +
                                      std::to_string(plan::kMaxVirtualStages)};
        info.virtualStages = static_cast<int>(v->get<std::int64_t>());
    }
    if (const auto k = j.find("knobs"); k != j.end() && k->is_object()) {
        const auto m = valueOr<std::int64_t>(*k, "grad_accum", 1);
        if (m < 1 || m > plan::kMaxMicroBatches)
            return {std::nullopt,
                    "the handshake's grad_accum " + std::to_string(m) + " is out of range"};
        info.gradAccum = static_cast<int>(m);
    }
    if (info.pipeParallel > info.worldSize || info.worldSize % info.pipeParallel != 0 ||
        (info.worldSize / info.pipeParallel) % info.tensorParallel != 0)
        return {std::nullopt, "the handshake's pp " + std::to_string(info.pipeParallel) +
                                  " × tp does not divide world_size " +
                                  std::to_string(info.worldSize)};
    if (const auto units = j.find("units"); units != j.end() && units->is_array()) {
        if (units->size() > kMaxUnits)
            return {std::nullopt, "the handshake lists " + std::to_string(units->size()) +
                                      " units, more than " + std::to_string(kMaxUnits)};
        for (const json& u : *units) {
            if (!u.is_object()) continue;
            info.units.push_back({valueOr<std::string>(u, "name", ""),
                                  valueOr<std::uint64_t>(u, "params", 0),
                                  valueOr<std::uint64_t>(u, "padded", 0)});
        }
    }
    // Stages of layers: every stage needs one (units = embedding, L blocks, head).
    if (!info.units.empty() && info.pipeParallel > 1 &&
        static_cast<std::size_t>(info.pipeParallel) + 2 > info.units.size())
        return {std::nullopt, "the handshake's pp " + std::to_string(info.pipeParallel) +
                                  " exceeds its " + std::to_string(info.units.size() - 2) +
                                  " layers"};
    if (const auto theory = j.find("theory"); theory != j.end() && theory->is_object()) {
        info.theoryModelStates = categoryBytes(*theory, "model_state_bytes");
        info.ddpTheoryModelStates = categoryBytes(*theory, "ddp_model_state_bytes");
        info.predictedPeakBytes = valueOr<std::uint64_t>(*theory, "predicted_peak_bytes", 0);
        // One entry per stage or none: a list of another length describes another mesh.
        if (const auto st = theory->find("stages"); st != theory->end()) {
            if (!st->is_array() || info.pipeParallel <= 1 ||
                st->size() != static_cast<std::size_t>(info.pipeParallel))
                return {std::nullopt, "the handshake's theory lists " +
                                          std::to_string(st->is_array() ? st->size() : 0) +
                                          " stages for pp " + std::to_string(info.pipeParallel)};
            for (const json& e : *st) {
                if (!e.is_object()) return {std::nullopt, "a handshake stage is not an object"};
                info.stageTheory.push_back(
                    {categoryBytes(e, "model_state_bytes").value_or(CategoryBytes{}),
                     categoryBytes(e, "ddp_model_state_bytes").value_or(CategoryBytes{}),
                     valueOr<std::uint64_t>(e, "predicted_peak_bytes", 0)});
            }
        }
    }
    if (const auto cap = j.find("capacity_bytes");
        cap != j.end() && cap->is_number_integer() && cap->get<std::int64_t>() > 0)
        info.capacityBytes = cap->get<std::uint64_t>();
    return {std::move(info), {}};
}

} // namespace shardscope::report
