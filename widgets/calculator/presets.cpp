#include "calculator/presets.h"

#include "config_import/hf_model.h"
#include "config_import/import.h"
#include "core/error.h"

#include <QFile>
#include <QFileInfo>
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
    for (auto it = names.begin(); it != names.end(); ++it)
        p.names.insert(it.key(), it.value().toString());
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

ModelPreset hfPreset(const config_import::HfModel& m, const QString& id, const QString& file) {
    ModelPreset p;
    p.id = id;
    p.name = QStringLiteral("%1 · %2").arg(file, QString::fromStdString(m.modelType));
    p.params = m.params;
    p.units = m.units;
    p.largestLayerParams = m.largestLayerParams;
    p.details = QStringLiteral("%1: %2 × %3, %4/%5 heads × %6, FFN %7, vocab %8%9")
                    .arg(QString::fromStdString(m.modelType))
                    .arg(m.layers)
                    .arg(m.hidden)
                    .arg(m.heads)
                    .arg(m.kvHeads)
                    .arg(m.headDim)
                    .arg(m.intermediate)
                    .arg(m.vocab)
                    .arg(m.tiedEmbeddings ? QStringLiteral(", tied") : QString());
    return p;
}

} // namespace

std::optional<ModelPreset> modelConfigPreset(const QString& path, QString* error) {
    try {
        const std::string file = path.toStdString();
        const config_import::HfModel m =
            config_import::parseHfConfig(config_import::readConfigFile(file, "config.json"), file);
        return hfPreset(m, QStringLiteral("file:") + path, QFileInfo(path).fileName());
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return std::nullopt;
    }
}

PresetList loadCalculatorPresets() {
    PresetList list;
    QFile file(QStringLiteral(":/presets/calculator.json"));
    if (!file.open(QIODevice::ReadOnly)) return list;
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    list.defaultId = root.value(QStringLiteral("default")).toString();
    for (const QJsonValue& v : root.value(QStringLiteral("presets")).toArray()) {
        if (auto p = parsePreset(v.toObject())) list.presets.push_back(*p);
    }
    for (const char* name : {"gpt2", "llama-2-7b", "mistral-7b", "qwen2-0.5b"}) {
        QFile hf(QStringLiteral(":/presets/hf/%1.json").arg(QLatin1String(name)));
        if (!hf.open(QIODevice::ReadOnly)) continue;
        try {
            const std::string source = "resources/presets/hf/" + std::string(name) + ".json";
            const config_import::HfModel m =
                config_import::parseHfConfig(hf.readAll().toStdString(), source);
            list.presets.push_back(hfPreset(m, QStringLiteral("hf-") + QLatin1String(name),
                                            QLatin1String(name) + QStringLiteral(".json")));
        } catch (const Error&) {
        }
    }
    return list;
}

} // namespace shardscope::widgets
