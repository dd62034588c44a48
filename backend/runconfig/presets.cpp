#include "runconfig/presets.h"

#include "core/error.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace shardscope::runconfig {

namespace detail {
extern const std::string_view kPresetsJson;
}

std::string_view embeddedPresetsJson() {
    return detail::kPresetsJson;
}

namespace {

std::int64_t positiveInt(const nlohmann::json& j, const std::string& preset, const char* key) {
    if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<std::int64_t>() < 1)
        throw Error(ErrorKind::Format,
                    "preset '" + preset + "': " + key + " must be a positive integer");
    return j[key].get<std::int64_t>();
}

} // namespace

std::vector<ModelPreset> parsePresets(std::string_view json) {
    const nlohmann::json root = nlohmann::json::parse(json, nullptr, false);
    if (root.is_discarded() || !root.is_object())
        throw Error(ErrorKind::Format, "model presets: not a JSON object");
    std::vector<ModelPreset> presets;
    for (const auto& [name, j] : root.items()) {
        if (name.starts_with("_")) continue; // comments
        ModelPreset p;
        p.name = name;
        p.description = j.value("description", "");
        p.shape.layers = positiveInt(j, name, "layers");
        p.shape.dModel = positiveInt(j, name, "d_model");
        p.shape.heads = positiveInt(j, name, "heads");
        p.shape.vocab = positiveInt(j, name, "vocab");
        p.shape.seqLen = positiveInt(j, name, "seq_len");
        p.microBatch = positiveInt(j, name, "micro_batch");
        p.learningRate = j.value("learning_rate", 1e-3);
        plan::validate(p.shape);
        presets.push_back(std::move(p));
    }
    return presets;
}

const std::vector<ModelPreset>& modelPresets() {
    // Parsed once. nlohmann's object keeps keys sorted; the order users see is tiny, small,
    // medium, gpt100m, which is also ascending size, so sort by parameter count.
    static const std::vector<ModelPreset> presets = [] {
        auto list = parsePresets(embeddedPresetsJson());
        std::stable_sort(list.begin(), list.end(), [](const ModelPreset& a, const ModelPreset& b) {
            return plan::paramCount(a.shape) < plan::paramCount(b.shape);
        });
        return list;
    }();
    return presets;
}

std::string presetChoices() {
    std::string choices;
    for (const ModelPreset& p : modelPresets())
        choices += (choices.empty() ? "" : ", ") + p.name;
    return choices;
}

const ModelPreset* findPreset(std::string_view name) {
    for (const ModelPreset& p : modelPresets())
        if (p.name == name) return &p;
    return nullptr;
}

ModelPreset modelPreset(std::string_view name) {
    if (const ModelPreset* p = findPreset(name)) return *p;
    throwInvalid("unknown model preset '" + std::string(name) + "' (choices: " + presetChoices() +
                 ")");
}

} // namespace shardscope::runconfig
