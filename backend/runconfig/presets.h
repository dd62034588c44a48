#pragma once
// Model presets (resources/presets/models.json, compiled into the library so a binary does not
// depend on its working directory).
#include "plan/shape.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::runconfig {

struct ModelPreset {
    std::string name;
    std::string description;
    plan::GptShape shape;
    std::int64_t microBatch = 1;
    double learningRate = 1e-3;
};

// Every preset the worker accepts, smallest first (parsed once from the embedded JSON).
const std::vector<ModelPreset>& modelPresets();
const ModelPreset* findPreset(std::string_view name); // nullptr when unknown
ModelPreset modelPreset(std::string_view name); // throws Error(InvalidArgument) naming the choices
std::string presetChoices();                    // "tiny, small, medium, gpt100m"
std::string_view embeddedPresetsJson();         // the JSON text as built in
std::vector<ModelPreset> parsePresets(std::string_view json); // throws Error(Format)

} // namespace shardscope::runconfig
