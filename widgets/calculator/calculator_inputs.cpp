#include "calculator/calculator_inputs.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/theory_names.h"
#include "plan/policy.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <cmath>

namespace shardscope::widgets {

using plan::PrecisionKind;
using plan::Strategy;

namespace {

// Above 10^15 parameters 16 B/param no longer fits comfortably in 64-bit byte counts.
constexpr double kMaxParams = 1e15;

void setItemTexts(QComboBox* combo, const QStringList& texts) {
    for (int i = 0; i < texts.size() && i < combo->count(); ++i)
        combo->setItemText(i, texts[i]);
}

QStringList tierTexts() {
    return {tierLabel(Tier::Device), tierLabel(Tier::Host), tierLabel(Tier::Nvme)};
}

} // namespace

std::optional<std::uint64_t> parseParamCount(const QString& text, QString* error) {
    QString t = text.trimmed();
    t.remove(QRegularExpression(QStringLiteral("[\\s,_']")));
    double scale = 1;
    const QString suffixes = QStringLiteral("KMBT");
    if (!t.isEmpty() && suffixes.contains(t.back().toUpper())) {
        scale = std::pow(1000.0, suffixes.indexOf(t.back().toUpper()) + 1);
        t.chop(1);
    }
    bool ok = false;
    const double v = t.toDouble(&ok) * scale;
    if (!ok || !std::isfinite(v)) {
        *error = CalculatorInputs::tr("Parameter count \"%1\" is not a number (try 7.5e9 or 1.3B).")
                     .arg(text.trimmed());
        return std::nullopt;
    }
    if (v < 1) {
        *error = CalculatorInputs::tr("Parameter count must be at least 1.");
        return std::nullopt;
    }
    if (v > kMaxParams) {
        *error = CalculatorInputs::tr("Parameter count %1 is too large (at most 10^15).")
                     .arg(text.trimmed());
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(std::llround(v));
}

CalculatorInputs::CalculatorInputs(QWidget* parent)
    : QWidget(parent), presets_(loadCalculatorPresets()) {
    buildWidgets();
    retranslateUi();
    for (std::size_t i = 0; i < presets_.presets.size(); ++i)
        if (presets_.presets[i].id == presets_.defaultId)
            presetCombo_->setCurrentIndex(static_cast<int>(i));
    onPresetChanged();
    connectWidgets();
}

void CalculatorInputs::buildWidgets() {
    form_ = new QFormLayout(this);
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto make = [this](auto* w, const char* name) {
        w->setObjectName(QLatin1String(name));
        return w;
    };
    presetCombo_ = make(new QComboBox(this), "presetCombo");
    for (const auto& p : presets_.presets)
        presetCombo_->addItem(p.name, p.id);
    presetCombo_->addItem(QString(), QStringLiteral("custom")); // text set in retranslateUi
    paramsEdit_ = make(new QLineEdit(this), "paramsEdit");
    shapeLabel_ = make(new QLabel(this), "shapeLabel");
    shapeLabel_->setWordWrap(true);
    ranksSpin_ = make(new QSpinBox(this), "ranksSpin");
    ranksSpin_->setRange(1, 4096);
    ranksSpin_->setValue(64);
    strategyCombo_ = make(new QComboBox(this), "strategyCombo");
    for (Strategy s : plan::allStrategies())
        strategyCombo_->addItem(QString(), static_cast<int>(s));
    strategyCombo_->setCurrentIndex(strategyCombo_->findData(static_cast<int>(Strategy::Zero3)));
    hybridSpin_ = make(new QSpinBox(this), "hybridGroupSpin");
    hybridSpin_->setRange(1, 4096);
    hybridSpin_->setValue(8);
    precisionCombo_ = make(new QComboBox(this), "precisionCombo");
    for (auto k : {PrecisionKind::MixedBf16, PrecisionKind::MixedFp16, PrecisionKind::Fp32,
                   PrecisionKind::Custom})
        precisionCombo_->addItem(QString(), static_cast<int>(k));
    kSpin_ = make(new QSpinBox(this), "optimizerBytesSpin");
    kSpin_->setRange(1, 64);
    kSpin_->setValue(12);
    optimizerOffloadCombo_ = make(new QComboBox(this), "optimizerOffloadCombo");
    paramOffloadCombo_ = make(new QComboBox(this), "paramOffloadCombo");
    for (QComboBox* c : {optimizerOffloadCombo_, paramOffloadCombo_})
        for (Tier t : kAllTiers)
            c->addItem(QString(), static_cast<int>(t));
    // Long preset and strategy names must not widen the column; the full text is in the popup.
    for (QComboBox* c : {presetCombo_, strategyCombo_, precisionCombo_, optimizerOffloadCombo_,
                         paramOffloadCombo_}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(12);
    }
    openConfig_ = make(new QPushButton(this), "openModelConfigButton");
    for (QWidget* w : std::initializer_list<QWidget*>{
             presetCombo_, openConfig_, paramsEdit_, shapeLabel_, ranksSpin_, strategyCombo_,
             hybridSpin_, precisionCombo_, kSpin_, optimizerOffloadCombo_, paramOffloadCombo_})
        form_->addRow(new QLabel(this), w);
    tpSpin_ = make(new QSpinBox(this), "tensorParallelSpin");
    tpSpin_->setRange(1, 4096);
    tpSpin_->setValue(1);
    form_->addRow(new QLabel(this), tpSpin_);
}

bool CalculatorInputs::openModelConfig(const QString& path, QString* error) {
    std::optional<ModelPreset> p = modelConfigPreset(path, error);
    if (!p) return false;
    // Before "Custom parameter count", which stays last.
    const int at = static_cast<int>(presets_.presets.size());
    presets_.presets.push_back(*p);
    presetCombo_->insertItem(at, p->name, p->id);
    presetCombo_->setCurrentIndex(at);
    return true;
}

void CalculatorInputs::connectWidgets() {
    connect(openConfig_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open model config"), QString(),
                                                          tr("Hugging Face config (*.json)"));
        QString error;
        if (!path.isEmpty() && !openModelConfig(path, &error))
            QMessageBox::warning(this, tr("Open model config"), error);
    });
    connect(presetCombo_, &QComboBox::currentIndexChanged, this, [this] {
        onPresetChanged();
        Q_EMIT inputChanged();
    });
    connect(paramsEdit_, &QLineEdit::textEdited, this, &CalculatorInputs::inputChanged);
    connect(ranksSpin_, &QSpinBox::valueChanged, this, &CalculatorInputs::inputChanged);
    connect(hybridSpin_, &QSpinBox::valueChanged, this, &CalculatorInputs::inputChanged);
    connect(tpSpin_, &QSpinBox::valueChanged, this, &CalculatorInputs::inputChanged);
    connect(kSpin_, &QSpinBox::valueChanged, this, &CalculatorInputs::inputChanged);
    for (QComboBox* c :
         {strategyCombo_, precisionCombo_, optimizerOffloadCombo_, paramOffloadCombo_})
        connect(c, &QComboBox::currentIndexChanged, this, [this] {
            updateEnabled();
            Q_EMIT inputChanged();
        });
}

const ModelPreset* CalculatorInputs::currentPreset() const {
    const int i = presetCombo_->currentIndex();
    return i >= 0 && i < static_cast<int>(presets_.presets.size())
               ? &presets_.presets[static_cast<std::size_t>(i)]
               : nullptr;
}

void CalculatorInputs::onPresetChanged() {
    if (const ModelPreset* p = currentPreset()) {
        const std::uint64_t psi = p->shape ? plan::paramCount(*p->shape) : p->params;
        paramsEdit_->setText(QString::number(psi));
    }
    updateEnabled();
    retranslateUi(); // the shape line depends on the preset
}

void CalculatorInputs::updateEnabled() {
    paramsEdit_->setReadOnly(currentPreset() != nullptr);
    const auto s = static_cast<Strategy>(strategyCombo_->currentData().toInt());
    const plan::Policy policy = plan::policyFor(s);
    hybridSpin_->setEnabled(policy.usesHybridGroup());
    kSpin_->setEnabled(precisionCombo_->currentData().toInt() ==
                       static_cast<int>(PrecisionKind::Custom));
    // Only strategies that shard params can keep their param shards off the device.
    paramOffloadCombo_->setEnabled(policy.shardParams);
}

CalculatorInput CalculatorInputs::input() const {
    CalculatorInput in;
    const ModelPreset* p = currentPreset();
    if (p && p->shape) {
        in.shape = p->shape;
    } else if (p) {
        in.params = p->params;
        in.units = p->units;
        in.largestLayerParams = p->largestLayerParams;
    } else if (auto v = parseParamCount(paramsEdit_->text(), &in.paramsError)) {
        in.params = *v;
    }
    in.ranks = ranksSpin_->value();
    in.strategy = static_cast<Strategy>(strategyCombo_->currentData().toInt());
    in.hybridGroupSize = hybridSpin_->value();
    in.tensorParallel = tpSpin_->value();
    in.precision.kind = static_cast<PrecisionKind>(precisionCombo_->currentData().toInt());
    in.precision.customOptimizerBytes = static_cast<std::uint32_t>(kSpin_->value());
    in.offload.optimizer = static_cast<Tier>(optimizerOffloadCombo_->currentData().toInt());
    in.offload.param = paramOffloadCombo_->isEnabled()
                           ? static_cast<Tier>(paramOffloadCombo_->currentData().toInt())
                           : Tier::Device;
    return in;
}

void CalculatorInputs::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void CalculatorInputs::retranslateUi() {
    const QStringList labels = {tr("Model"),
                                QString(),
                                tr("Parameters (Ψ)"),
                                tr("Shape"),
                                tr("Ranks (N)"),
                                tr("Strategy"),
                                tr("Hybrid group size"),
                                tr("Precision"),
                                tr("Optimizer bytes (K)"),
                                tr("Optimizer state on"),
                                tr("Param shards on"),
                                tr("Tensor parallel (T)")};
    for (int row = 0; row < form_->rowCount() && row < labels.size(); ++row)
        if (auto* l = qobject_cast<QLabel*>(form_->itemAt(row, QFormLayout::LabelRole)->widget()))
            l->setText(labels[row]);
    // LanguageManager sets the default locale to the UI language, so QLocale() names it.
    for (std::size_t i = 0; i < presets_.presets.size(); ++i)
        presetCombo_->setItemText(static_cast<int>(i),
                                  presets_.presets[i].displayName(QLocale().name()));
    presetCombo_->setItemText(presetCombo_->count() - 1, tr("Custom parameter count"));
    presetCombo_->setToolTip(
        presetCombo_->currentText()); // long names are elided in the narrow column
    for (int i = 0; i < strategyCombo_->count(); ++i)
        strategyCombo_->setItemText(
            i, strategyLabel(static_cast<Strategy>(strategyCombo_->itemData(i).toInt())));
    for (int i = 0; i < precisionCombo_->count(); ++i)
        precisionCombo_->setItemText(
            i, precisionLabel(static_cast<PrecisionKind>(precisionCombo_->itemData(i).toInt())));
    setItemTexts(optimizerOffloadCombo_, tierTexts());
    setItemTexts(paramOffloadCombo_, tierTexts());
    paramsEdit_->setPlaceholderText(tr("e.g. 7.5e9 or 1.3B"));
    tpSpin_->setToolTip(
        tr("N = T × D: T ranks split each block's computation (tensor parallelism), the strategy "
           "shards each TP slice over D = N / T ranks. Per-rank states are one slice's; the "
           "communication adds the TP all-reduces of activations. Needs a preset whose heads T "
           "divides."));
    paramOffloadCombo_->setToolTip(
        tr("Only ZeRO-3 and FSDP shard parameters, so only they can offload them."));
    const ModelPreset* p = currentPreset();
    if (p && p->shape) {
        const auto& s = *p->shape;
        shapeLabel_->setText(tr("%1 layers · d_model %2 · %3 heads · vocab %4 · seq %5 (%6 params)")
                                 .arg(s.layers)
                                 .arg(s.dModel)
                                 .arg(s.heads)
                                 .arg(s.vocab)
                                 .arg(s.seqLen)
                                 .arg(formatCount(static_cast<double>(plan::paramCount(s)))));
    } else if (p && !p->units.empty()) {
        shapeLabel_->setText(tr("%1 — %2 units, largest layer %3 params")
                                 .arg(p->details)
                                 .arg(p->units.size())
                                 .arg(formatCount(static_cast<double>(p->largestLayerParams))));
    } else {
        shapeLabel_->setText(tr("Bare parameter count: one flat buffer, no per-unit padding"));
    }
    openConfig_->setText(tr("Open model config…"));
    openConfig_->setToolTip(
        tr("A Hugging Face config.json (gpt2, llama, mistral, qwen2): exact parameters and units"));
}

} // namespace shardscope::widgets
