#include "calculator/presets.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace shardscope::widgets {
namespace {

std::optional<ModelPreset> parsePreset(const QJsonObject& o) {
    ModelPreset p;
    p.id = o.value(QStringLiteral("id")).toString();
    p.name = o.value(QStringLiteral("name")).toString();
    if (p.id.isEmpty() || p.name.isEmpty()) return std::nullopt;
    const QJsonObject names = o.value(QStringLiteral("names")).toObject();
    for (auto it = names.begin(); it != names.end(); ++it) p.names.insert(it.key(), it.value().toString());
    if (o.contains(QStringLiteral("shape"))) {
        const QJsonObject s = o.value(QStringLiteral("shape")).toObject();
        plan::GptShape shape;
        shape.layers = s.value(QStringLiteral("layers")).toInteger();
        shape.dModel = s.value(QStringLiteral("d_model")).toInteger();
        shape.heads = s.value(QStringLiteral("heads")).toInteger();
        shape.vocab = s.value(QStringLiteral("vocab")).toInteger();
        shape.seqLen = s.value(QStringLiteral("seq_len")).toInteger();
        p.shape = shape;
        return p;
    }
    const double params = o.value(QStringLiteral("params")).toDouble();
    if (!(params >= 1)) return std::nullopt;
    p.params = static_cast<std::uint64_t>(params);
    return p;
}

} // namespace

PresetList loadCalculatorPresets() {
    PresetList list;
    QFile file(QStringLiteral(":/presets/calculator.json"));
    if (!file.open(QIODevice::ReadOnly)) return list;
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    list.defaultId = root.value(QStringLiteral("default")).toString();
    for (const QJsonValue& v : root.value(QStringLiteral("presets")).toArray()) {
        if (auto p = parsePreset(v.toObject())) list.presets.push_back(*p);
    }
    return list;
}

} // namespace shardscope::widgets
