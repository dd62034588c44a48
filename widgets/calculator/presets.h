#pragma once
// Calculator model presets, read from :/presets/calculator.json (compiled in).
#include "plan/shape.h"

#include <QMap>
#include <QString>
#include <optional>
#include <vector>

namespace shardscope::widgets {

struct ModelPreset {
    QString id;
    QString name;                 // English
    QMap<QString, QString> names; // other UI languages ("zh_CN" → name), from the JSON
    // The name in `language` (e.g. QLocale().name()), falling back to English.
    QString displayName(const QString& language) const { return names.value(language, name); }
    std::optional<plan::GptShape> shape; // GPT shape: padding and largest unit derived
    std::uint64_t params = 0;            // bare count when shape is empty
    // A Hugging Face config.json (config_import/hf_model.h): its own units (embedding, each
    // decoder layer, head; Σ = params) and DeepSpeed's largest layer.
    std::vector<plan::UnitParams> units;
    std::uint64_t largestLayerParams = 0;
    QString details; // "llama: 32 layers, hidden 4096, …" (language-neutral)
};

struct PresetList {
    std::vector<ModelPreset> presets;
    QString defaultId;
};

// Loads the compiled-in presets, then the Hugging Face configs of resources/presets/hf; a
// malformed entry is skipped (the files are ours and tested).
PresetList loadCalculatorPresets();
// A preset from a Hugging Face config.json the user opens; nullopt with the one-line reason.
std::optional<ModelPreset> modelConfigPreset(const QString& path, QString* error);

} // namespace shardscope::widgets
