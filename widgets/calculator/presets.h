#pragma once
// Calculator model presets, read from :/presets/calculator.json (compiled in).
#include <QMap>
#include <QString>
#include <optional>
#include <vector>

#include "plan/shape.h"

namespace shardscope::widgets {

struct ModelPreset {
    QString id;
    QString name;                  // English
    QMap<QString, QString> names;  // other UI languages ("zh_CN" → name), from the JSON
    // The name in `language` (e.g. QLocale().name()), falling back to English.
    QString displayName(const QString& language) const { return names.value(language, name); }
    std::optional<plan::GptShape> shape; // GPT shape: padding and largest unit derived
    std::uint64_t params = 0;              // bare count when shape is empty
};

struct PresetList {
    std::vector<ModelPreset> presets;
    QString defaultId;
};

// Loads the compiled-in presets; a malformed entry is skipped (the file is ours and tested).
PresetList loadCalculatorPresets();

} // namespace shardscope::widgets
